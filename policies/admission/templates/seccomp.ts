import type { Params } from "../../gatekeeper/templates/seccomp";
import { allContainers, everyContainer, get, lit, present, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

const CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/";
const POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";

/**
 * The allowed profiles in annotation syntax, as the library's get_allowed_profiles: the entries
 * as given, plus, for each entry without "/" (a securityContext type) and each
 * allowedLocalhostFiles entry, the type in annotation syntax; without files no type is translated.
 */
function allowedProfiles(p: Params): string[] {
    const allowed = new Set<string>();
    const files = Array.isArray(p.allowedLocalhostFiles) ? p.allowedLocalhostFiles : [];
    for (const profile of p.allowedProfiles ?? []) {
        allowed.add(profile);
        if (profile.includes("/")) continue;
        for (const f of files) {
            if (profile === "RuntimeDefault") ["runtime/default", "docker/default"].forEach((x) => allowed.add(x));
            if (profile === "Unconfined") allowed.add("unconfined");
            if (profile === "Localhost") allowed.add(`localhost/${f}`);
        }
    }
    return [...allowed];
}

/** RuntimeDefault in annotation syntax: runtime/default, or docker/default when only that one is allowed (the library's canonicalize_runtime_default_profile). */
function runtimeDefaultName(p: Params): string {
    const list = p.allowedProfiles ?? [];
    return list.includes("runtime/default") ? "runtime/default" : list.includes("docker/default") ? "docker/default" : "runtime/default";
}

/**
 * The profile that wins (container securityContext, pod securityContext, container annotation,
 * pod annotation, else "not configured") must be allowed; an unknown securityContext type is skipped.
 */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPSeccomp",
    template: "seccomp",
    checks: (p, s) => {
        if (p.allowedProfiles?.includes("*")) return [];
        const allowed = allowedProfiles(p);
        const localhostAny = allowed.includes("localhost/*");
        const isAllowed = (x: string) => `(${x} in ${lit(allowed)}${localhostAny ? ` || ${x}.startsWith("localhost/")` : ""})`;
        const fromContext = (sp: string) =>
            `(${sp}.type == "RuntimeDefault" ? ${isAllowed(lit(runtimeDefaultName(p)))} : ` +
            `${sp}.type == "Unconfined" ? ${isAllowed('"unconfined"')} : ` +
            `${sp}.type == "Localhost" && has(${sp}.localhostProfile) ? ${isAllowed(`("localhost/" + ${sp}.localhostProfile)`)} : true)`;
        const annotations = get(s.o, "metadata.annotations", "{}");
        const containerKey = `(${lit(CONTAINER_ANNOTATION_PREFIX)} + c.name)`;
        return [{
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) => unlessAbsent(c, ["name"],
                `${present(c, "securityContext.seccompProfile")} ? ${fromContext(`${c}.securityContext.seccompProfile`)} : ` +
                `${present(s.o, "spec.securityContext.seccompProfile")} ? ${fromContext(`${s.o}.spec.securityContext.seccompProfile`)} : ` +
                `${containerKey} in ${annotations} ? ${isAllowed(`${annotations}[${containerKey}]`)} : ` +
                `${lit(POD_ANNOTATION)} in ${annotations} ? ${isAllowed(`${annotations}[${lit(POD_ANNOTATION)}]`)} : ` +
                `${isAllowed('"not configured"')}`)),
            message: `every container must run with an allowed seccomp profile ${JSON.stringify(p.allowedProfiles ?? [])}`,
        }];
    },
};
