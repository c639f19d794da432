import { bool, hostname, oneOf, str, labelValue } from "../schema";

/** What the whole stack shares: its tier, its DNS domain, and labelling conventions. */
export const environment = {
    tier: oneOf("the environment tier: prod is strict (digest-pinned images, spread across nodes), dev is lenient", ["dev", "prod"] as const, "dev"),
    domain: hostname("the DNS domain under which every public host of the stack is created", "ops.example.com"),
    partOf: labelValue("the value of the app.kubernetes.io/part-of label on every object", "ops-environment"),
    managedBy: labelValue("the value of the app.kubernetes.io/managed-by label on every object", "pulumi"),
    reloaderDomain: hostname("the annotation domain of the reloader add-on: configmap.<domain>/reload and secret.<domain>/reload", "stakater.com"),
    kubernetesMinVersion: str(
        "the oldest Kubernetes release (major.minor) the stack must run on: manifests may use no API field newer than it (lifecycle.preStop.sleep needs 1.30), and the deprecated-API constraints name it",
        "1.30",
        { pattern: /^1\.\d{1,2}$/, expected: 'a Kubernetes release "1.<minor>" such as "1.30"' },
    ),
    spreadAcrossNodes: bool("spread the replicas of every workload across nodes with topology spread constraints", false),
};
