/** Section 9.4: a digest pins the built content; prod runs every container image by digest. */
import { specRule, type Finding } from "../pack/rule";
import { containersOf, describe, podTemplateOf, type StackView } from "../pack/stack";
import { tierSchema, type TierConfig } from "../pack/tier";

const DIGEST = /@sha256:[0-9a-f]{64}$/;

export const rule = specRule<TierConfig>({
    name: "images-pinned-by-digest",
    description: "In prod every container and init container image is pinned by digest (<image>@sha256:<64 hex>) (section 9.4)",
    configSchema: { properties: { ...tierSchema } },
    check(stack: StackView, config): Finding[] {
        if (config.tier !== "prod") return [];
        const findings: Finding[] = [];
        for (const { urn, object } of stack.objects) {
            for (const { container, init } of containersOf(podTemplateOf(object))) {
                if (typeof container.image !== "string" || !DIGEST.test(container.image)) {
                    findings.push({ urn, message: `${describe(object)}: ${init ? "init container" : "container"} ${container.name} image ${JSON.stringify(container.image)} is not pinned by digest (@sha256:<64 hex>)` });
                }
            }
        }
        return findings;
    },
});
