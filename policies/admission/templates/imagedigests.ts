import type { Params } from "../../gatekeeper/templates/imagedigests";
import { allContainers, everyContainer, lit, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** The template's digest pattern (imagedigests.ts DIGEST), searched anywhere in the image (RE2, unanchored). */
export const DIGEST_PATTERN = "@[a-z0-9]+([+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+";

export const admission: AdmissionRule<Params> = {
    kind: "K8sImageDigests",
    template: "imagedigests",
    checks: (p, s) => [{
        expression: everyContainer(allContainers(s.o), p.exemptImages, (c) => unlessAbsent(c, ["name", "image"], `${c}.image.matches(${lit(DIGEST_PATTERN)})`)),
        message: "every container image must be pinned by digest",
    }],
};
