/**
 * The specification's single-object rules at admission, and why the others have none
 * (docs/admission.md lists the same).
 */
import { specRules } from "../../pack/policies";
import { admission as hpaReplicaRange } from "./hpa-replica-range";
import { admission as hpaScaleDownStabilization } from "./hpa-scale-down-stabilization";
import { admission as imagesPinnedByDigest } from "./images-pinned-by-digest";
import { admission as nodePortAllowlist } from "./node-port-allowlist";
import { admission as statefulGuaranteedQos } from "./stateful-guaranteed-qos";
import type { SpecAdmissionRule } from "./types";

export const specAdmissionRules: ReadonlyMap<string, SpecAdmissionRule> = new Map(
    [hpaReplicaRange, hpaScaleDownStabilization, imagesPinnedByDigest, nodePortAllowlist, statefulGuaranteedQos].map((r) => [r.name, r]),
);

const NOT_YET = "judged on one object, but no CEL is written for it yet";

const GITOPS = "judged per Argo CD Application (the pack also reads the child Applications from gitops/<stack>/; at admission each arrives as an object of its own), but no CEL is written for it yet";

const CANNOT: Record<string, string> = {
    "hpa-utilization-needs-requests": "referential: reads the containers of the autoscaler's scale target",
    "statefulset-headless-service": "referential: the StatefulSet's serviceName must name a headless Service of the stack",
    "service-selects-pods": "referential: the Service's selector must select pods of a workload of the stack",
    "namespace-guardrails": "multi-object: each Namespace needs its ResourceQuota, LimitRange and NetworkPolicies",
    "namespace-quota-fit": "multi-object: sums every workload of a namespace (at its autoscaler's maximum) against the namespace's ResourceQuota; at admission the quota itself refuses what does not fit",
    "gitops-single-owner": "multi-object: no object may be owned by two Argo CD Applications",
    "no-plaintext-secrets": "a high-entropy heuristic over every string of the object (policies/pack/secretPatterns.ts), with no CEL counterpart that gives the same verdicts",
    "gitops-pinned-revision": GITOPS,
    "gitops-sync-options": GITOPS,
    "gitops-project-default": GITOPS,
    "sqlite-single-writer": NOT_YET,
    "ingress-tls-issuer": NOT_YET,
    "gateway-max-recharge": NOT_YET,
    "agent-gateway-tools-denied": NOT_YET,
};

export const specNotAtAdmission: ReadonlyMap<string, string> = new Map(
    specRules.filter((r) => !specAdmissionRules.has(r.name)).map((r) => [r.name, CANNOT[r.name] ?? NOT_YET]),
);
