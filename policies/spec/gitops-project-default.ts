/** Section 2.7: an Application's spec.project is default. */
import { gitopsSchema, reportTarget, reviewedApplications, type GitopsConfig } from "../pack/gitops";
import { specRule, type Finding } from "../pack/rule";
import type { StackView } from "../pack/stack";

export const rule = specRule<GitopsConfig>({
    name: "gitops-project-default",
    description: "GitOps Applications (the stack's and the children in the repository) use project default (section 2.7)",
    configSchema: { properties: { ...gitopsSchema } },
    check(stack: StackView, config): Finding[] {
        const apps = reviewedApplications(stack, config);
        return [...apps.stack, ...apps.children]
            .filter((app) => app.object.spec?.project !== "default")
            .map((app) => {
                const { urn, where } = reportTarget(app);
                return { urn, message: `${where} uses project ${JSON.stringify(app.object.spec?.project ?? "")}; expected default` };
            });
    },
});
