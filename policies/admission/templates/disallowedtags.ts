import type { Params } from "../../gatekeeper/templates/disallowedtags";
import { allContainers, everyContainer, get, lit, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** No container image ends in a disallowed tag, and every image names a tag (a ":" in its last path component). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sDisallowedTags",
    template: "disallowedtags",
    checks: (p, s) => {
        const image = get("c", "image", '""');
        return [
            {
                expression: everyContainer(allContainers(s.o), p.exemptImages, () => unlessAbsent("c", ["name", "image"], `!${lit(p.tags ?? [])}.exists(t, ${image}.endsWith(":" + t))`)),
                message: `no container image may use a disallowed tag ${JSON.stringify(p.tags ?? [])}`,
            },
            {
                expression: everyContainer(allContainers(s.o), p.exemptImages, () => unlessAbsent("c", ["name", "image"], `${image}.substring(${image}.lastIndexOf("/") + 1).contains(":")`)),
                message: "every container image must specify a tag",
            },
        ];
    },
};
