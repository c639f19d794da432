/** Section 2.7: every Application carries the sync options CreateNamespace, ServerSideApply, ApplyOutOfSyncOnly=false, RespectIgnoreDifferences. */
import { gitopsSchema, reportTarget, reviewedApplications, type GitopsConfig } from "../pack/gitops";
import { specRule, type Finding } from "../pack/rule";
import type { StackView } from "../pack/stack";

export const SECTION_2_7_SYNC_OPTIONS = ["CreateNamespace=true", "ServerSideApply=true", "ApplyOutOfSyncOnly=false", "RespectIgnoreDifferences=true"];

export const rule = specRule<GitopsConfig & { requiredSyncOptions: string[] }>({
    name: "gitops-sync-options",
    description: "GitOps Applications carry the sync options of section 2.7: CreateNamespace=true, ServerSideApply=true, ApplyOutOfSyncOnly=false, RespectIgnoreDifferences=true",
    configSchema: {
        properties: {
            ...gitopsSchema,
            requiredSyncOptions: { type: "array", items: { type: "string" }, default: SECTION_2_7_SYNC_OPTIONS, description: "sync options every Application must list" },
        },
    },
    check(stack: StackView, config): Finding[] {
        const apps = reviewedApplications(stack, config);
        const findings: Finding[] = [];
        for (const app of [...apps.stack, ...apps.children]) {
            const options: unknown[] = Array.isArray(app.object.spec?.syncPolicy?.syncOptions) ? app.object.spec.syncPolicy.syncOptions : [];
            const missing = config.requiredSyncOptions.filter((o) => !options.includes(o));
            if (missing.length > 0) {
                const { urn, where } = reportTarget(app);
                findings.push({ urn, message: `${where} lacks sync options ${missing.join(", ")} (has ${options.join(", ") || "none"})` });
            }
        }
        return findings;
    },
});
