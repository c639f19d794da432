import { RegoEvalError, type K8sObject, type Review, type RuleContext, type Violation } from "../types";
import { EMPTY_CONFIG, type Constraint, type EnforcementAction, type GatekeeperConfig } from "./constraints";
import { EXPANDABLE_KINDS, expandPodTemplate } from "./expansion";
import { parseApiVersion } from "./gvk";
import { buildInventory, type StackInventory } from "./inventory";
import { MatchError, type MatchTarget } from "./match";
import { defaultIsClusterScoped, effectiveNamespace, isNamespaceObject, withDeclaredScopes, type ScopePredicate } from "./scope";

export interface ObjectIdentity {
    apiVersion?: string;
    kind: string;
    namespace?: string;
    name?: string;
}

export interface EvaluationResult {
    constraintKind: string;
    constraintName: string;
    enforcementAction: EnforcementAction;
    /** deny blocks; warn is advisory; dryrun is only recorded. */
    blocking: boolean;
    /** The object of the stack the violation belongs to (the workload when the violation is on its pod template). */
    object: ObjectIdentity;
    /** Index of that object in the list given to evaluate(). */
    objectIndex: number;
    /** Set when the template reviewed the Pod synthesized from the object's pod template. */
    impliedPod?: ObjectIdentity;
    message: string;
    details?: Record<string, unknown>;
    /** True when the template threw instead of returning violations; message then explains the failure. */
    error?: boolean;
}

export interface EvaluateOptions {
    /** Objects the templates see as data.inventory; defaults to the evaluated objects themselves. */
    inventory?: readonly K8sObject[];
    /**
     * The operation model. With `previous` (the objects as they were before this change, e.g. the
     * last render's): an object not there before is a CREATE, one that differs an UPDATE with
     * its old object, one unchanged is what Gatekeeper's audit sees (operation ""). Without it,
     * every object is `operation` (default CREATE: what admission sees when the stack is applied;
     * "" judges every object as the audit, and gator, do).
     */
    operation?: Review["operation"];
    previous?: readonly K8sObject[];
}

/** The key that identifies an object across two states of a stack: group, kind, namespace, name. */
function identityKey(obj: K8sObject, namespace: string | undefined): string {
    return `${parseApiVersion(obj.apiVersion).group}\u0000${obj.kind}\u0000${namespace ?? ""}\u0000${obj.metadata?.name ?? ""}`;
}

function sameJSON(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => sameJSON((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export interface EvaluatorOptions {
    /** Decides scope for kinds without metadata.namespace; defaults to the built-in list of cluster-scoped kinds. */
    isClusterScoped?: ScopePredicate;
}

export interface Evaluator {
    evaluate(objects: readonly K8sObject[], options?: EvaluateOptions): EvaluationResult[];
}

export function evaluate(
    objects: readonly K8sObject[],
    constraints: readonly Constraint[],
    config: GatekeeperConfig = EMPTY_CONFIG,
    options: EvaluateOptions & EvaluatorOptions = {},
): EvaluationResult[] {
    return createEvaluator(constraints, config, options).evaluate(objects, options);
}

/** Indexes constraints by the kinds they match once, for evaluating many objects (or many stacks). */
export function createEvaluator(
    constraints: readonly Constraint[],
    config: GatekeeperConfig = EMPTY_CONFIG,
    options: EvaluatorOptions = {},
): Evaluator {
    const baseScope = options.isClusterScoped ?? defaultIsClusterScoped;
    const candidates = constraintsByKind(constraints);
    const podConstraints = candidates("Pod");

    return {
        evaluate(objects, evalOptions = {}) {
            // The stack's own CRDs say the scope of their kinds.
            const isClusterScoped = withDeclaredScopes(evalOptions.inventory ?? objects, baseScope);
            const inventory = buildInventory(evalOptions.inventory ?? objects, isClusterScoped, config.syncOnly);
            const given = evalOptions.operation ?? "CREATE";
            let before: Map<string, K8sObject> | undefined;
            if (evalOptions.previous !== undefined) {
                before = new Map();
                for (const o of evalOptions.previous) if (o && typeof o === "object" && o.kind) before.set(identityKey(o, effectiveNamespace(o, isClusterScoped)), o);
            }
            const results: EvaluationResult[] = [];
            objects.forEach((obj, objectIndex) => {
                if (!obj || typeof obj !== "object" || !obj.kind) return;
                const reviewed = describe(obj, false, inventory, isClusterScoped);
                let operation = given;
                let oldObject: K8sObject | undefined;
                if (before !== undefined) {
                    const old = before.get(identityKey(obj, reviewed.target.namespace));
                    operation = old === undefined ? "CREATE" : sameJSON(old, obj) ? "" : "UPDATE";
                    if (operation === "UPDATE") oldObject = old;
                }
                const excludedNs = reviewed.target.isNamespace ? reviewed.target.name : reviewed.target.namespace;
                if (excludedNs !== undefined && config.isNamespaceExcluded(excludedNs)) return;
                const identity = identityOf(obj, reviewed.target.namespace);
                const forKind = candidates(obj.kind);
                if (forKind.length > 0) {
                    runConstraints(forKind, reviewed, operation, oldObject, inventory, (constraint, violation, error) =>
                        results.push(toResult(constraint, violation, identity, objectIndex, undefined, error)),
                    );
                }
                if (podConstraints.length > 0 && EXPANDABLE_KINDS.has(obj.kind)) {
                    const pod = expandPodTemplate(obj);
                    if (!pod) return;
                    const implied = describe(pod, true, inventory, isClusterScoped);
                    const podIdentity = identityOf(pod, implied.target.namespace);
                    const prefix = `[Implied by ${obj.kind}/${obj.metadata?.name ?? ""}] `;
                    const oldPod = oldObject === undefined ? undefined : (expandPodTemplate(oldObject) ?? undefined);
                    runConstraints(podConstraints, implied, operation, oldPod, inventory, (constraint, violation, error) => {
                        const result = toResult(constraint, violation, identity, objectIndex, podIdentity, error);
                        result.message = prefix + result.message;
                        results.push(result);
                    });
                }
            });
            return results;
        },
    };
}

interface Described {
    obj: K8sObject;
    group: string;
    version: string;
    target: MatchTarget;
}

function describe(obj: K8sObject, generated: boolean, inventory: StackInventory, isClusterScoped: ScopePredicate): Described {
    const { group, version } = parseApiVersion(obj.apiVersion);
    const kind = obj.kind ?? "";
    const target: MatchTarget = {
        group,
        kind,
        name: obj.metadata?.name ?? "",
        labels: obj.metadata?.labels,
        // A Pod expanded from a template whose metadata is null has no namespace (expansion.ts).
        namespace: generated && obj.metadata === null ? undefined : effectiveNamespace(obj, isClusterScoped),
        isNamespace: isNamespaceObject(group, kind),
        generated,
        namespaceLabels: inventory.namespaceLabels,
        namespaceDeclared: inventory.namespaceDeclared,
    };
    return { obj, group, version, target };
}

function runConstraints(
    constraints: readonly Constraint[],
    d: Described,
    operation: Review["operation"],
    oldObject: K8sObject | undefined,
    inventory: StackInventory,
    report: (constraint: Constraint, violation: Violation, error: boolean) => void,
): void {
    let review: Review | undefined;
    const outcomes: { constraint: Constraint; violations: Violation[] }[] = [];
    // Gatekeeper evaluates the constraints of one template that match an object in one Rego query:
    // when it fails, every one of them gets one violation whose message is the error.
    let evalErrors: Map<string, string> | undefined;
    for (const constraint of constraints) {
        let matches: boolean;
        try {
            matches = constraint.compiledMatch.matches(d.target);
        } catch (err) {
            if (!(err instanceof MatchError)) throw err;
            // Gatekeeper rejects the object under this constraint, the match's error as the message.
            report(constraint, { msg: err.message }, false);
            continue;
        }
        if (!matches) continue;
        review ??= {
            object: d.obj,
            ...(oldObject !== undefined ? { oldObject } : {}),
            kind: { group: d.group, version: d.version, kind: d.target.kind },
            operation,
            name: d.target.name || undefined,
            namespace: d.target.namespace,
        };
        const ctx: RuleContext = { review, parameters: constraint.parameters, inventory };
        try {
            outcomes.push({ constraint, violations: constraint.rule.validate(ctx) });
        } catch (err) {
            if (err instanceof RegoEvalError) {
                evalErrors ??= new Map();
                if (!evalErrors.has(constraint.kind)) evalErrors.set(constraint.kind, err.message);
                outcomes.push({ constraint, violations: [] });
                continue;
            }
            report(constraint, { msg: `template ${constraint.rule.template} failed: ${(err as Error).message ?? err}` }, true);
        }
    }
    for (const { constraint, violations } of outcomes) {
        const evalError = evalErrors?.get(constraint.kind);
        if (evalError !== undefined) report(constraint, { msg: evalError }, false);
        else for (const violation of distinct(violations)) report(constraint, violation, false);
    }
}

/** Rego's violation rule is a set: the same violation produced twice counts once. */
function distinct(violations: Violation[]): Violation[] {
    if (violations.length < 2) return violations;
    const seen = new Set<string>();
    return violations.filter((v) => {
        const key = v.details === undefined ? v.msg : `${v.msg}\u0000${JSON.stringify(v.details)}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
    });
}

function toResult(
    constraint: Constraint,
    violation: Violation,
    object: ObjectIdentity,
    objectIndex: number,
    impliedPod: ObjectIdentity | undefined,
    error: boolean,
): EvaluationResult {
    const result: EvaluationResult = {
        constraintKind: constraint.kind,
        constraintName: constraint.name,
        enforcementAction: constraint.enforcementAction,
        blocking: constraint.enforcementAction === "deny",
        object,
        objectIndex,
        message: violation.msg,
    };
    if (impliedPod) result.impliedPod = impliedPod;
    if (violation.details !== undefined) result.details = violation.details;
    if (error) result.error = true;
    return result;
}

function identityOf(obj: K8sObject, namespace: string | undefined): ObjectIdentity {
    const id: ObjectIdentity = { kind: obj.kind ?? "" };
    if (obj.apiVersion) id.apiVersion = obj.apiVersion;
    if (namespace !== undefined) id.namespace = namespace;
    if (obj.metadata?.name !== undefined) id.name = obj.metadata.name;
    return id;
}

/** Constraints that may match a kind, in declaration order, cached per kind. */
function constraintsByKind(constraints: readonly Constraint[]): (kind: string) => readonly Constraint[] {
    const cache = new Map<string, readonly Constraint[]>();
    return (kind) => {
        let list = cache.get(kind);
        if (!list) {
            list = constraints.filter((c) => c.compiledMatch.kindNames === undefined || c.compiledMatch.kindNames.has(kind));
            cache.set(kind, list);
        }
        return list;
    };
}
