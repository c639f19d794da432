/**
 * ValidatingAdmissionPolicy + ValidatingAdmissionPolicyBinding objects (admissionregistration.k8s.io/v1)
 * from the stack's Gatekeeper constraints: one policy and one binding per constraint whose template
 * has an admission rule (./templates), parameters inlined as CEL literals (docs/admission.md says why).
 *
 * Matching follows the engine (policies/gatekeeper/engine/match.ts, expansion.ts):
 * - kinds → resourceRules (CREATE, UPDATE); a constraint that matches Pod also judges the pod
 *   template of every workload kind the engine expands, as the Pod it describes;
 * - namespaces / excludedNamespaces (and the Config's excludedNamespaces) → namespaceSelector on
 *   kubernetes.io/metadata.name when exact, a matchCondition when a glob;
 * - namespaceSelector → namespaceSelector; labelSelector → objectSelector, or a matchCondition on
 *   the pod template's labels when pod templates are judged; scope → resourceRules scope;
 *   name → a matchCondition; source Original/Generated → direct kinds / pod templates only.
 * - enforcementAction deny/warn/dryrun → validationActions Deny/Warn/Audit.
 */
import type { Constraint, EnforcementAction } from "../gatekeeper/engine";
import type { LabelSelector, LabelSelectorRequirement } from "../gatekeeper/engine/label-selector";
import type { KindSelector } from "../gatekeeper/engine/match";
import { anyGlob, get, lit } from "./cel";
import { admissionRules, notAtAdmission } from "./rules";
import type { SpecAdmissionRule } from "./spec/types";
import type { AdmissionRule, CelCheck } from "./types";
import type { CelSource } from "../cel/source";

/** A stand-in admission rule for a team template with CEL: its validations are always there (teamCel builds them). */
const teamRule = (cel: CelSource): AdmissionRule => ({ kind: "", template: "", checks: () => cel.validations.map((v) => ({ expression: v.expression, message: v.message ?? "" })) });

export const VALIDATION_ACTIONS: Record<EnforcementAction, "Deny" | "Warn" | "Audit"> = { deny: "Deny", warn: "Warn", dryrun: "Audit" };

/** Workload kinds whose pod template the engine judges under a Pod constraint, by API group and resource (served ones). */
export const POD_TEMPLATE_RESOURCES: ReadonlyArray<{ group: string; kind: string; resource: string }> = [
    { group: "apps", kind: "Deployment", resource: "deployments" },
    { group: "apps", kind: "StatefulSet", resource: "statefulsets" },
    { group: "apps", kind: "DaemonSet", resource: "daemonsets" },
    { group: "apps", kind: "ReplicaSet", resource: "replicasets" },
    { group: "batch", kind: "Job", resource: "jobs" },
    { group: "batch", kind: "CronJob", resource: "cronjobs" },
    { group: "", kind: "ReplicationController", resource: "replicationcontrollers" },
];
const WORKLOAD_KINDS = POD_TEMPLATE_RESOURCES.map((w) => w.kind);

/** Resource names of kinds whose plural is not kind + "s". */
const IRREGULAR: Record<string, string> = { Endpoints: "endpoints", Ingress: "ingresses", IngressClass: "ingressclasses" };

export function resourceOf(kind: string): string {
    if (kind === "*") return "*";
    if (IRREGULAR[kind]) return IRREGULAR[kind];
    const lower = kind.toLowerCase();
    if (lower.endsWith("y")) return `${lower.slice(0, -1)}ies`;
    if (lower.endsWith("s")) return `${lower}es`;
    return `${lower}s`;
}

export interface GenerateOptions {
    /** Namespaces the Gatekeeper Config excludes from the webhook (config.gatekeeper.sh Config). */
    excludedNamespaces?: readonly string[];
    /** Labels set on every generated object. */
    labels?: Record<string, string>;
}

export interface Skipped {
    constraint: string;
    reason: string;
}

export interface AdmissionObjects {
    policies: Record<string, any>[];
    bindings: Record<string, any>[];
    /** Constraints without an admission policy, with the reason. */
    skipped: Skipped[];
}

export function policyName(c: Pick<Constraint, "kind" | "name">): string {
    return `gatekeeper-${c.kind.toLowerCase()}-${c.name}`;
}

type TeamTemplate = { name: string; cel?: CelSource };
const teamTemplateOf = (c: Constraint) => (c.rule as { parsed?: TeamTemplate }).parsed;

/** Why a constraint of a team's own Rego-only ConstraintTemplate (policies/templates, compiled to Wasm) has no admission policy. */
function teamTemplateReason(c: Constraint): string | undefined {
    const parsed = teamTemplateOf(c);
    if (!parsed || parsed.cel) return undefined;
    return `ConstraintTemplate ${parsed.name} (policies/templates) has Rego only, and a ValidatingAdmissionPolicy needs CEL; at admission only Gatekeeper itself judges it`;
}

/**
 * A team template's own CEL (K8sNativeValidation) as the policy's variables and validations: the
 * variables Gatekeeper's policies give it, in its order (gatekeeper v3.23.1
 * pkg/drivers/k8scel/transform/cel_snippets.go), `anyObject` (here the reviewed subject: the
 * object, or the Pod of a workload's template as the engine expands it) and `params` (the
 * constraint's parameters, inlined like the library's), then the template's variables; messages
 * prefixed with the constraint's name like the library's.
 */
function teamCel(c: Constraint, cel: CelSource): { variables: Array<{ name: string; expression: string }>; validations: Record<string, string>[] } {
    return {
        // Gatekeeper binds params to null when the constraint has no spec.parameters; the engine holds
        // {} then, so an empty parameters object is taken as absent (an explicit `parameters: {}` too).
        variables: [
            { name: "anyObject", expression: "variables.subject" },
            { name: "params", expression: Object.keys(c.parameters ?? {}).length === 0 ? "null" : lit(c.parameters) },
            ...cel.variables,
        ],
        validations: cel.validations.map((v) => ({
            expression: v.expression,
            ...(v.message !== undefined || v.messageExpression === undefined ? { message: `[${c.name}] ${v.message ?? `failed expression: ${v.expression}`}` } : {}),
            ...(v.messageExpression !== undefined ? { messageExpression: `${lit(`[${c.name}] `)} + (${v.messageExpression})` } : {}),
        })),
    };
}

export function generateAdmissionPolicies(constraints: readonly Constraint[], opts: GenerateOptions = {}): AdmissionObjects {
    const out: AdmissionObjects = { policies: [], bindings: [], skipped: [] };
    for (const c of constraints) {
        const id = `${c.kind}/${c.name}`;
        const team = teamTemplateOf(c);
        const rule = admissionRules.get(c.kind) ?? (team?.cel ? teamRule(team.cel) : undefined);
        if (!rule) {
            out.skipped.push({ constraint: id, reason: notAtAdmission.get(c.kind) ?? teamTemplateReason(c) ?? "no admission rule for this template" });
            continue;
        }
        const plan = planMatch(c);
        if ("reason" in plan) {
            out.skipped.push({ constraint: id, reason: plan.reason });
            continue;
        }
        const checks = rule.checks(c.parameters as any, { o: "variables.subject", kind: "variables.kind", group: "variables.group" });
        if (checks.length === 0) {
            out.skipped.push({ constraint: id, reason: "with these parameters the template never reports a violation" });
            continue;
        }
        const name = policyName(c);
        const metadata = (n: string) => ({ name: n, ...(opts.labels ? { labels: { ...opts.labels } } : {}) });
        out.policies.push({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingAdmissionPolicy",
            metadata: metadata(name),
            spec: {
                failurePolicy: "Fail",
                matchConstraints: matchResources(c, plan, opts.excludedNamespaces ?? []),
                ...(plan.matchConditions.length > 0 ? { matchConditions: plan.matchConditions } : {}),
                ...(team?.cel
                    ? (({ variables, validations }) => ({ variables: [...subjectVariables(plan.expanded), ...variables], validations }))(teamCel(c, team.cel))
                    : {
                          variables: subjectVariables(plan.expanded),
                          validations: checks.map((check: CelCheck) => ({ expression: check.expression, message: `[${c.name}] ${check.message}` })),
                      }),
            },
        });
        out.bindings.push({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingAdmissionPolicyBinding",
            metadata: metadata(name),
            spec: { policyName: name, validationActions: [VALIDATION_ACTIONS[c.enforcementAction]] },
        });
    }
    return out;
}

interface MatchPlan {
    /** resourceRules entries for the kinds judged as themselves. */
    direct: Array<{ apiGroups: string[]; kinds: string[] }>;
    /** True when workloads' pod templates are judged as Pods. */
    expanded: boolean;
    matchConditions: Array<{ name: string; expression: string }>;
    /** labelSelector as objectSelector (no pod templates judged). */
    objectSelector?: LabelSelector;
}

const isAll = (list: readonly string[] | undefined) => !list || list.length === 0 || list.includes("*");

function planMatch(c: Constraint): MatchPlan | { reason: string } {
    const m = c.match ?? {};
    const kinds: KindSelector[] = m.kinds && m.kinds.length > 0 ? m.kinds : [{ apiGroups: ["*"], kinds: ["*"] }];
    const source = m.source ?? "All";
    const matchesPod = kinds.some((k) => (isAll(k.kinds) || k.kinds!.includes("Pod")) && (isAll(k.apiGroups) || k.apiGroups!.includes("")));
    const expanded = matchesPod && source !== "Original";
    const directKinds = source === "Generated" ? [] : kinds.map((k) => ({ apiGroups: isAll(k.apiGroups) ? ["*"] : [...k.apiGroups!], kinds: isAll(k.kinds) ? ["*"] : [...k.kinds!] }));
    if (expanded) {
        const overlap = directKinds.some((k) => k.kinds.includes("*") || k.kinds.some((kind) => WORKLOAD_KINDS.includes(kind) && (k.apiGroups.includes("*") || k.apiGroups.includes(POD_TEMPLATE_RESOURCES.find((w) => w.kind === kind)!.group))));
        if (overlap) return { reason: "the constraint matches Pod and a workload kind itself: a workload would be judged twice (as itself and as its pod template), which one policy's subject cannot express" };
    }
    const conditions: MatchPlan["matchConditions"] = [];
    const plan: MatchPlan = { direct: directKinds, expanded, matchConditions: conditions };
    if (m.labelSelector) {
        if (expanded) conditions.push({ name: "label-selector", expression: selectorCel(m.labelSelector, podLabels()) });
        else plan.objectSelector = m.labelSelector;
    }
    const globs = (list: readonly string[] | undefined) => (list ?? []).filter((n) => n.includes("*"));
    const nsName = `(object.kind == "Namespace" && request.namespace == "" ? object.metadata.name : request.namespace)`;
    const nsGlobs = globs(m.namespaces);
    if (nsGlobs.length > 0) {
        const exact = (m.namespaces ?? []).filter((n) => !n.includes("*"));
        conditions.push({ name: "namespaces", expression: `${nsName} == "" || ${anyGlob(nsName, nsGlobs)}${exact.length ? ` || ${nsName} in ${lit(exact)}` : ""}` });
    }
    const exGlobs = globs(m.excludedNamespaces);
    if (exGlobs.length > 0) conditions.push({ name: "excluded-namespaces", expression: `${nsName} == "" || !${anyGlob(nsName, exGlobs)}` });
    if (m.name) {
        const own = expanded ? `(object.kind in ${lit(WORKLOAD_KINDS)} ? object.metadata.name + "-pod" : object.metadata.name)` : "object.metadata.name";
        conditions.push({ name: "name", expression: anyGlob(`${own}.lowerAscii()`, [m.name]) });
    }
    return plan;
}

function matchResources(c: Constraint, plan: MatchPlan, configExcluded: readonly string[]): Record<string, unknown> {
    const m = c.match ?? {};
    const scope = m.scope === "Cluster" || m.scope === "Namespaced" ? m.scope : "*";
    const operations = ["CREATE", "UPDATE"];
    const resourceRules: Record<string, unknown>[] = plan.direct.map((k) => ({
        apiGroups: k.apiGroups,
        apiVersions: ["*"],
        operations,
        resources: [...new Set(k.kinds.map(resourceOf))],
        scope,
    }));
    if (plan.expanded) {
        for (const group of [...new Set(POD_TEMPLATE_RESOURCES.map((w) => w.group))]) {
            resourceRules.push({
                apiGroups: [group],
                apiVersions: ["*"],
                operations,
                resources: POD_TEMPLATE_RESOURCES.filter((w) => w.group === group).map((w) => w.resource),
                scope: scope === "Cluster" ? "Cluster" : "Namespaced",
            });
        }
    }
    const nsSelector: LabelSelector = { ...(m.namespaceSelector ?? {}) };
    const expressions: LabelSelectorRequirement[] = [...(m.namespaceSelector?.matchExpressions ?? [])];
    const only = (m.namespaces ?? []).filter((n) => !n.includes("*"));
    if (only.length > 0 && !(m.namespaces ?? []).some((n) => n.includes("*"))) expressions.push({ key: NAME_LABEL, operator: "In", values: only });
    const excluded = [...new Set([...(m.excludedNamespaces ?? []), ...configExcluded].filter((n) => !n.includes("*")))];
    if (excluded.length > 0) expressions.push({ key: NAME_LABEL, operator: "NotIn", values: excluded });
    if (expressions.length > 0) nsSelector.matchExpressions = expressions;
    return {
        resourceRules,
        matchPolicy: "Equivalent",
        ...(Object.keys(nsSelector).length > 0 ? { namespaceSelector: nsSelector } : {}),
        ...(plan.objectSelector ? { objectSelector: plan.objectSelector } : {}),
    };
}

/** The label every namespace carries with its own name (set by the API server since 1.21). */
export const NAME_LABEL = "kubernetes.io/metadata.name";

/** The pod template of a workload `object` (CronJob's is one level deeper). */
function templateOf(o = "object"): string {
    return `(${o}.kind == "CronJob" ? ${o}.spec.jobTemplate.spec.template : ${o}.spec.template)`;
}

function podLabels(): string {
    const others = WORKLOAD_KINDS.filter((k) => k !== "CronJob");
    return `(object.kind == "CronJob" ? ${get("object", "spec.jobTemplate.spec.template.metadata.labels", "{}")} : ` +
        `object.kind in ${lit(others)} ? ${get("object", "spec.template.metadata.labels", "{}")} : ${get("object", "metadata.labels", "{}")})`;
}

function subjectVariables(expanded: boolean): Array<{ name: string; expression: string }> {
    if (!expanded) {
        return [
            { name: "subject", expression: "object" },
            { name: "kind", expression: "request.kind.kind" },
            { name: "group", expression: "request.kind.group" },
        ];
    }
    const isWorkload = `object.kind in ${lit(WORKLOAD_KINDS)}`;
    return [
        { name: "subject", expression: `${isWorkload} ? ${templateOf()} : object` },
        { name: "kind", expression: `${isWorkload} ? "Pod" : request.kind.kind` },
        { name: "group", expression: `${isWorkload} ? "" : request.kind.group` },
    ];
}

/** A metav1.LabelSelector as a CEL condition on the label map `labels`. */
export function selectorCel(selector: LabelSelector, labels: string): string {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(selector.matchLabels ?? {})) parts.push(`(${lit(k)} in ${labels} && ${labels}[${lit(k)}] == ${lit(String(v))})`);
    for (const r of selector.matchExpressions ?? []) {
        const k = lit(r.key);
        if (r.operator === "In") parts.push(`(${k} in ${labels} && ${labels}[${k}] in ${lit(r.values ?? [])})`);
        else if (r.operator === "NotIn") parts.push(`(!(${k} in ${labels}) || !(${labels}[${k}] in ${lit(r.values ?? [])}))`);
        else if (r.operator === "Exists") parts.push(`(${k} in ${labels})`);
        else if (r.operator === "DoesNotExist") parts.push(`!(${k} in ${labels})`);
        else throw new Error(`label selector: unknown operator ${JSON.stringify(r.operator)}`);
    }
    return parts.length === 0 ? "true" : parts.join(" && ");
}

/** The enforcement level of a spec rule at admission: mandatory → Deny, advisory → Warn; disabled → no policy. */
export const LEVEL_ACTIONS: Record<string, "Deny" | "Warn" | undefined> = { mandatory: "Deny", remediate: "Deny", advisory: "Warn", disabled: undefined };

export interface SpecRuleSetting {
    rule: SpecAdmissionRule;
    enforcementLevel: string;
    /** The rule's config: the pack config over the rule's defaults. */
    config: Record<string, unknown>;
}

/** One policy and binding per single-object spec rule (named spec-<rule>), every namespace but `excludedNamespaces`. */
export function generateSpecAdmissionPolicies(settings: readonly SpecRuleSetting[], opts: GenerateOptions = {}): AdmissionObjects {
    const out: AdmissionObjects = { policies: [], bindings: [], skipped: [] };
    for (const { rule, enforcementLevel, config } of settings) {
        const action = LEVEL_ACTIONS[enforcementLevel];
        const checks = rule.checks(config);
        if (!action || checks.length === 0) {
            out.skipped.push({ constraint: rule.name, reason: !action ? `enforcement level ${enforcementLevel}` : "the rule's config turns it off for this stack (e.g. a prod-only rule in dev)" });
            continue;
        }
        const name = `spec-${rule.name}`;
        const metadata = { name, ...(opts.labels ? { labels: { ...opts.labels } } : {}) };
        const excluded = [...(opts.excludedNamespaces ?? [])].filter((n) => !n.includes("*"));
        out.policies.push({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingAdmissionPolicy",
            metadata,
            spec: {
                failurePolicy: "Fail",
                matchConstraints: {
                    resourceRules: rule.resources.map((r) => ({ apiGroups: r.apiGroups, apiVersions: ["*"], operations: ["CREATE", "UPDATE"], resources: r.resources, scope: "*" })),
                    matchPolicy: "Equivalent",
                    ...(excluded.length > 0 ? { namespaceSelector: { matchExpressions: [{ key: NAME_LABEL, operator: "NotIn", values: excluded }] } } : {}),
                },
                validations: checks.map((c) => ({ expression: c.expression, message: `[${rule.name}] ${c.message}` })),
            },
        });
        out.bindings.push({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingAdmissionPolicyBinding",
            metadata: { ...metadata },
            spec: { policyName: name, validationActions: [action] },
        });
    }
    return out;
}
