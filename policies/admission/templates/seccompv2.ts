import type { Params } from "../../gatekeeper/templates/seccompv2";
import { allContainers, everyContainer, lit, present, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** The securityContext profile type in force (container, else pod; annotations are not read) is allowed; Localhost also needs an allowed file. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPSeccompV2",
    template: "seccompv2",
    checks: (p, s) => {
        const allowed = Array.isArray(p.allowedProfiles) ? p.allowedProfiles : [];
        if (allowed.includes("*")) return [];
        // The library's default allowedLocalhostFiles is [""]: Localhost without localhostProfile.
        const files = Array.isArray(p.allowedLocalhostFiles) ? p.allowedLocalhostFiles : [""];
        // Localhost: any file under "*" alone, else "Localhost" allowed and its file listed.
        const localhostOk = (sp: string) => files.includes("*") ? "true"
            : allowed.includes("Localhost") ? `(has(${sp}.localhostProfile) ? ${sp}.localhostProfile : "") in ${lit(files)}` : "false";
        const judge = (sp: string) => `(!has(${sp}.type) || (${sp}.type == "Localhost" ? ${localhostOk(sp)} : ${sp}.type in ${lit(allowed)}))`;
        return [{
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) => unlessAbsent(c, ["name"],
                `${present(c, "securityContext.seccompProfile")} ? ${judge(`${c}.securityContext.seccompProfile`)} : ` +
                `${present(s.o, "spec.securityContext.seccompProfile")} ? ${judge(`${s.o}.spec.securityContext.seccompProfile`)} : ${allowed.includes("not configured")}`)),
            message: `every container must run with an allowed seccomp profile ${JSON.stringify(allowed)}`,
        }];
    },
};
