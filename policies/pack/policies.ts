/** Every policy of the pack, in evaluation order: the Gatekeeper constraints, then the specification's rules. */
import type { StackValidationPolicy } from "@pulumi/policy";
import { gatekeeperPolicies } from "./gatekeeper";
import type { SpecRule } from "./rule";
import { rule as agentGatewayToolsDenied } from "../spec/agent-gateway-tools-denied";
import { rule as gatewayMaxRecharge } from "../spec/gateway-max-recharge";
import { rule as gitopsPinnedRevision } from "../spec/gitops-pinned-revision";
import { rule as gitopsProjectDefault } from "../spec/gitops-project-default";
import { rule as gitopsSingleOwner } from "../spec/gitops-single-owner";
import { rule as gitopsSyncOptions } from "../spec/gitops-sync-options";
import { rule as hpaReplicaRange } from "../spec/hpa-replica-range";
import { rule as hpaScaleDownStabilization } from "../spec/hpa-scale-down-stabilization";
import { rule as hpaUtilizationNeedsRequests } from "../spec/hpa-utilization-needs-requests";
import { rule as imagesPinnedByDigest } from "../spec/images-pinned-by-digest";
import { rule as ingressTlsIssuer } from "../spec/ingress-tls-issuer";
import { rule as namespaceGuardrails } from "../spec/namespace-guardrails";
import { rule as namespaceQuotaFit } from "../spec/namespace-quota-fit";
import { rule as nodePortAllowlist } from "../spec/node-port-allowlist";
import { rule as noPlaintextSecrets } from "../spec/no-plaintext-secrets";
import { rule as serviceSelectsPods } from "../spec/service-selects-pods";
import { rule as sqliteSingleWriter } from "../spec/sqlite-single-writer";
import { rule as statefulGuaranteedQos } from "../spec/stateful-guaranteed-qos";
import { rule as statefulsetHeadlessService } from "../spec/statefulset-headless-service";

export const specRules: readonly SpecRule[] = [
    hpaUtilizationNeedsRequests,
    hpaReplicaRange,
    hpaScaleDownStabilization,
    statefulsetHeadlessService,
    serviceSelectsPods,
    nodePortAllowlist,
    ingressTlsIssuer,
    namespaceGuardrails,
    namespaceQuotaFit,
    noPlaintextSecrets,
    gitopsPinnedRevision,
    gitopsProjectDefault,
    gitopsSyncOptions,
    gitopsSingleOwner,
    sqliteSingleWriter,
    imagesPinnedByDigest,
    gatewayMaxRecharge,
    agentGatewayToolsDenied,
    statefulGuaranteedQos,
];

export const packPolicies: StackValidationPolicy[] = [...gatekeeperPolicies, ...specRules];
