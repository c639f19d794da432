import { bool, hostname, oneOf, str } from "../schema";

/** What the whole stack shares: its tier, its DNS domain, and labelling conventions. */
export const environment = {
    tier: oneOf("the environment tier: prod is strict (digest-pinned images, spread across nodes), dev is lenient", ["dev", "prod"] as const, "dev"),
    domain: hostname("the DNS domain under which every public host of the stack is created", "ops.example.com"),
    partOf: str("the value of the app.kubernetes.io/part-of label on every object", "ops-environment"),
    managedBy: str("the value of the app.kubernetes.io/managed-by label on every object", "pulumi"),
    reloaderDomain: hostname("the annotation domain of the reloader add-on: configmap.<domain>/reload and secret.<domain>/reload", "stakater.com"),
    spreadAcrossNodes: bool("spread the replicas of every workload across nodes with topology spread constraints", false),
};
