import type { Params } from "../../gatekeeper/templates/seccompv2";
import { allContainers, everyContainer, lit, present } from "../cel";
import type { AdmissionRule } from "../types";

/** The securityContext profile type in force (container, else pod; annotations are not read) is allowed; Localhost also needs an allowed file. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPSeccompV2",
    template: "seccompv2",
    checks: (p, s) => {
        const allowed = Array.isArray(p.allowedProfiles) ? p.allowedProfiles : [];
        if (allowed.includes("*")) return [];
        const files = Array.isArray(p.allowedLocalhostFiles) ? p.allowedLocalhostFiles : [];
        const fileOk = (sp: string) => (files.includes("*") ? "true" : `(has(${sp}.localhostProfile) ? ${sp}.localhostProfile : "") in ${lit(files)}`);
        const judge = (sp: string) => `(!has(${sp}.type) || (${sp}.type in ${lit(allowed)} && (${sp}.type != "Localhost" || ${fileOk(sp)})))`;
        return [{
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                `${present(c, "securityContext.seccompProfile")} ? ${judge(`${c}.securityContext.seccompProfile`)} : ` +
                `${present(s.o, "spec.securityContext.seccompProfile")} ? ${judge(`${s.o}.spec.securityContext.seccompProfile`)} : ${allowed.includes("not configured")}`),
            message: `every container must run with an allowed seccomp profile ${JSON.stringify(allowed)}`,
        }];
    },
};
