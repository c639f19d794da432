import type { Params } from "../../gatekeeper/templates/apparmor";
import { allContainers, everyContainer, get, lit, present } from "../cel";
import type { AdmissionRule } from "../types";

const ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";

/**
 * The profile in force (container appArmorProfile, else the container's annotation, else the
 * pod's appArmorProfile, unset meaning runtime/default) must be allowed; an unknown type never is.
 */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPAppArmor",
    template: "apparmor",
    checks: (p, s) => {
        if (!Array.isArray(p.allowedProfiles)) return [];
        const allowed = lit(p.allowedProfiles);
        const fromField = (f: string) =>
            `(${f}.type == "RuntimeDefault" ? "runtime/default" in ${allowed} : ` +
            `${f}.type == "Unconfined" ? "unconfined" in ${allowed} : ` +
            `${f}.type == "Localhost" && has(${f}.localhostProfile) ? ("localhost/" + ${f}.localhostProfile) in ${allowed} : false)`;
        const annotations = get(s.o, "metadata.annotations", "{}");
        const key = `(${lit(ANNOTATION_PREFIX)} + ${get("c", "name", '""')})`;
        return [{
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                `${present(c, "securityContext.appArmorProfile")} ? ${fromField(`${c}.securityContext.appArmorProfile`)} : ` +
                `${key} in ${annotations} ? ${annotations}[${key}] in ${allowed} : ` +
                `${present(s.o, "spec.securityContext.appArmorProfile")} ? ${fromField(`${s.o}.spec.securityContext.appArmorProfile`)} : "runtime/default" in ${allowed}`),
            message: `every container must run with an allowed AppArmor profile ${JSON.stringify(p.allowedProfiles)}`,
        }];
    },
};
