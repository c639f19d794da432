import type { K8sObject, Review, TemplateRule } from "../types";

export interface Params {
    allowedGroups?: string[];
    allowedUsers?: string[];
}

/** Only updates can change a service account, so on CREATE (every preview) this never fires. */
export const rule: TemplateRule<Params> = {
    kind: "NoUpdateServiceAccount",
    template: "noupdateserviceaccount",
    category: "general",
    description: "Blocks updating the service account on resources that abstract over Pods. This policy is ignored in audit mode.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "allowedGroups": {
                "description": "Groups that should be allowed to bypass the policy.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "allowedUsers": {
                "description": "Users that should be allowed to bypass the policy.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        if (review.operation !== "UPDATE") return [];
        const messages: string[] = [];
        const newAccount = serviceAccountOf(review.object);
        const oldAccount = review.oldObject ? serviceAccountOf(review.oldObject) : undefined;
        if (newAccount === undefined) messages.push("missing serviceAccountName field in object under review");
        if (oldAccount === undefined) messages.push("missing serviceAccountName field in oldObject under review");
        if (
            newAccount !== undefined &&
            oldAccount !== undefined &&
            newAccount !== oldAccount &&
            !isPrivileged(review.userInfo, parameters)
        ) {
            messages.push("user does not have permission to modify serviceAccountName");
        }
        return messages.map((msg) => ({ msg }));
    },
};

const POD_SPEC_PATHS: Record<string, readonly string[]> = {
    Pod: ["spec"],
    ReplicationController: ["spec", "template", "spec"],
    ReplicaSet: ["spec", "template", "spec"],
    Deployment: ["spec", "template", "spec"],
    StatefulSet: ["spec", "template", "spec"],
    DaemonSet: ["spec", "template", "spec"],
    Job: ["spec", "template", "spec"],
    CronJob: ["spec", "jobTemplate", "spec", "template", "spec"],
};

function serviceAccountOf(obj: K8sObject): string | undefined {
    const path = POD_SPEC_PATHS[obj.kind ?? ""];
    if (!path) return undefined;
    let spec: any = obj;
    for (const key of path) spec = spec?.[key];
    const account = spec?.serviceAccountName;
    return typeof account === "string" && account !== "" ? account : undefined;
}

function isPrivileged(userInfo: Review["userInfo"], parameters: Params): boolean {
    const username = userInfo?.username ?? "";
    if ((parameters.allowedUsers ?? []).includes(username)) return true;
    const groups = new Set(userInfo?.groups ?? []);
    return (parameters.allowedGroups ?? []).some((g) => groups.has(g));
}
