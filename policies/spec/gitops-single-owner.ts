/**
 * Section 2.7: a parent application owns the manifest of each child; the child is never applied
 * directly as a second owner. So the stack creates only parents (git sources reading a manifests
 * path), and each child manifest in the repository sits under exactly one parent's path, once.
 */
import { appName, gitopsSchema, isParent, reviewedApplications, type GitopsConfig } from "../pack/gitops";
import { specRule, type Finding } from "../pack/rule";
import type { StackView } from "../pack/stack";

const key = (o: { metadata?: { namespace?: string; name?: string } }) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

export const rule = specRule<GitopsConfig>({
    name: "gitops-single-owner",
    description: "Each child Application is owned by exactly one parent: the stack creates only parent Applications, and each child manifest sits under exactly one parent's source path, once (section 2.7)",
    configSchema: { properties: { ...gitopsSchema } },
    check(stack: StackView, config): Finding[] {
        const apps = reviewedApplications(stack, config);
        const findings: Finding[] = [];
        for (const app of apps.stack.filter((a) => !isParent(a.object))) {
            findings.push({ urn: app.urn, message: `${appName(app.object)} is created directly by the stack; a child Application belongs in the repository (gitops/) under its parent` });
        }
        const stackKeys = new Set(apps.stack.map((a) => key(a.object)));
        const seen = new Map<string, string>();
        for (const child of apps.children) {
            const where = `${appName(child.object)} (${child.file})`;
            const urn = child.parents?.[0];
            if (stackKeys.has(key(child.object))) findings.push({ urn, message: `${where} is also created directly by the stack: two owners` });
            if ((child.parents?.length ?? 0) > 1) findings.push({ urn, message: `${where} is read by ${child.parents!.length} parents (overlapping source paths): two owners` });
            const first = seen.get(key(child.object));
            if (first !== undefined && first !== child.file) findings.push({ urn, message: `${where} is declared again, first in ${first}` });
            else seen.set(key(child.object), child.file!);
        }
        return findings;
    },
});
