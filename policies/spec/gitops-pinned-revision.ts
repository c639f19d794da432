/**
 * Section 9.3: charts are pinned by version in the application resource (targetRevision); a
 * release changes only through a reviewed change to the repository. So chart sources name an
 * exact version, and git sources a tag or commit; only a parent may follow a tracked branch
 * (section 1.2: the parent reads its manifests path from the main branch).
 */
import { appName, gitopsSchema, isParent, reportTarget, reviewedApplications, sourcesOf, type GitopsConfig } from "../pack/gitops";
import { specRule, type Finding } from "../pack/rule";
import type { StackView } from "../pack/stack";

const EXACT_VERSION = /^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const COMMIT = /^[0-9a-f]{40}$/;

export interface PinnedRevisionConfig extends GitopsConfig {
    trackedBranches: string[];
}

export function chartRevisionProblem(revision: unknown): string | undefined {
    if (typeof revision !== "string" || revision.trim() === "") return "has no targetRevision (the latest chart version would be installed)";
    if (!EXACT_VERSION.test(revision)) return `targetRevision ${JSON.stringify(revision)} is not an exact chart version (no latest, *, ranges like ^1.2, ~1, 1.x)`;
    return undefined;
}

export function gitRevisionProblem(revision: unknown, trackedBranches: readonly string[] | undefined): string | undefined {
    if (typeof revision !== "string" || revision.trim() === "" || revision === "HEAD") return `targetRevision ${JSON.stringify(revision ?? "")} follows HEAD; pin a tag or commit`;
    if (EXACT_VERSION.test(revision) || COMMIT.test(revision)) return undefined;
    if (trackedBranches?.includes(revision)) return undefined;
    return `targetRevision ${JSON.stringify(revision)} is a branch or range, not a tag or commit${trackedBranches ? ` (a parent may track only ${trackedBranches.join(", ")})` : ""}`;
}

export const rule = specRule<PinnedRevisionConfig>({
    name: "gitops-pinned-revision",
    description: "GitOps Applications pin targetRevision: an exact chart version, a git tag or commit; never HEAD, latest, * or a range; only a parent may track a configured branch (sections 1.2, 2.7, 9.3)",
    configSchema: {
        properties: {
            ...gitopsSchema,
            trackedBranches: { type: "array", items: { type: "string" }, default: ["main"], description: "branches a parent Application may follow (section 1.2: main)" },
        },
    },
    check(stack: StackView, config): Finding[] {
        const apps = reviewedApplications(stack, config);
        const findings: Finding[] = [];
        for (const app of [...apps.stack, ...apps.children]) {
            const { urn, where } = reportTarget(app);
            const parent = app.urn !== undefined && isParent(app.object);
            for (const source of sourcesOf(app.object)) {
                const problem = source.chart ? chartRevisionProblem(source.targetRevision) : gitRevisionProblem(source.targetRevision, parent ? config.trackedBranches : undefined);
                if (problem) findings.push({ urn, message: `${where}: source ${source.chart ?? source.path ?? source.repoURL} ${problem}` });
            }
            if (sourcesOf(app.object).length === 0) findings.push({ urn, message: `${appName(app.object)} has no source` });
        }
        return findings;
    },
});
