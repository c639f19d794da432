import type { Params } from "../../gatekeeper/templates/disallowanonymous";
import { get, lit } from "../cel";
import type { AdmissionRule } from "../types";

/** Role bindings do not name the anonymous (and, when asked, the authenticated) groups/users, unless the role is allowed. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sDisallowAnonymous",
    template: "disallowanonymous",
    checks: (p, s) => {
        const disallowed = ["system:unauthenticated", "system:anonymous", ...(p.disallowAuthenticated ? ["system:authenticated"] : [])];
        return [{
            expression: `(${get(s.o, "roleRef.name", '""')} in ${lit(p.allowedRoles ?? [])}) || ` +
                `${get(s.o, "subjects", "[]")}.all(x, !has(x.name) || !(x.name in ${lit(disallowed)}))`,
            message: `bindings may not name ${JSON.stringify(disallowed)}`,
        }];
    },
};
