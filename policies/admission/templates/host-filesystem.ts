import type { Params } from "../../gatekeeper/templates/host-filesystem";
import { allContainers, get, lit } from "../cel";
import type { AdmissionRule } from "../types";

function segments(path: string): string[] {
    if (path === "/") return [];
    return path.replace(/^\/+|\/+$/g, "").split("/");
}

/**
 * hostPath volumes only under an allowed pathPrefix (whole path segments); a readOnly prefix also
 * needs every mount of the volume to be readOnly. No allowedHostPaths blocks every hostPath.
 */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPHostFilesystem",
    template: "host-filesystem",
    checks: (p, s) => {
        const allowed = Array.isArray(p.allowedHostPaths) ? p.allowedHostPaths : [];
        const segs = `${get("v", "hostPath.path", '""')}.split("/").filter(x, x != "")`;
        const mountedWritable = `${allContainers(s.o)}.exists(c, ${get("c", "volumeMounts", "[]")}.exists(m, has(m.name) && m.name == v.name && !(has(m.readOnly) && m.readOnly)))`;
        const alternatives = allowed
            .filter((a) => typeof a?.pathPrefix === "string")
            .map((a) => {
                const want = segments(a.pathPrefix as string);
                const prefix = want.length === 0 ? "true" : `size(${segs}) >= ${want.length} && ${want.map((w, i) => `${segs}[${i}] == ${lit(w)}`).join(" && ")}`;
                return a.readOnly === true ? `(${prefix} && !${mountedWritable})` : `(${prefix})`;
            });
        const ok = alternatives.length === 0 ? "false" : alternatives.join(" || ");
        return [{
            expression: `${get(s.o, "spec.volumes", "[]")}.all(v, !has(v.hostPath) || ${ok})`,
            message: `hostPath volumes are only allowed under ${JSON.stringify(allowed)}`,
        }];
    },
};
