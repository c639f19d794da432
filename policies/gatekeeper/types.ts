/**
 * The contract between the Gatekeeper engine (matching, expansion, inventory, enforcement)
 * and the templates (one file per Gatekeeper library template under ./templates).
 *
 * A template sees what a Rego template sees: `input.review` (here `ctx.review`),
 * `input.parameters` (`ctx.parameters`) and `data.inventory` (`ctx.inventory`).
 * When a constraint matches Pod, the engine hands pod templates of workloads to the
 * template as Pods (Gatekeeper's expansion), so Pod templates only ever look at Pods.
 */

/** A Kubernetes object as plain JSON. */
export interface K8sObject {
    apiVersion?: string;
    kind?: string;
    metadata?: {
        name?: string;
        namespace?: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
        [key: string]: unknown;
    };
    [key: string]: any;
}

/** The admission request a template reviews (Gatekeeper's input.review). */
export interface Review {
    object: K8sObject;
    oldObject?: K8sObject;
    kind: { group: string; version: string; kind: string };
    /**
     * CREATE for an object the stack adds, UPDATE (with oldObject) for one it changes, and ""
     * for one it leaves as it is: what Gatekeeper's audit (and gator) present, judging what is
     * already on the cluster (evaluate.ts says how the engine knows which).
     */
    operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT" | "";
    name?: string;
    namespace?: string;
    userInfo?: { username?: string; groups?: string[] };
}

/** The other objects of the stack (Gatekeeper's data.inventory, synced through Config). */
export interface Inventory {
    /** Every object of the given kind (and API group, when given); namespace narrows to one namespace. */
    list(kind: string, opts?: { group?: string; namespace?: string }): K8sObject[];
    /**
     * data.inventory in Gatekeeper's layout ({cluster: {<apiVersion>: {<kind>: {<name>: obj}}},
     * namespace: {<ns>: {<apiVersion>: {<kind>: {<name>: obj}}}}}), of the synced kinds only;
     * the same object for the same inventory. For templates that run Rego (policies/gatekeeper/wasm).
     */
    gatekeeperData?(): Record<string, unknown>;
}

export interface Violation {
    msg: string;
    details?: Record<string, unknown>;
}

export interface RuleContext<P = Record<string, unknown>> {
    review: Review;
    parameters: P;
    inventory: Inventory;
}

/** One Gatekeeper library template, re-implemented from its description and parameter schema. */
export interface TemplateRule<P = any> {
    /** The constraint kind, e.g. "K8sAllowedRepos". */
    kind: string;
    /** The library folder name, e.g. "allowedrepos". */
    template: string;
    category: "general" | "pod-security-policy";
    description: string;
    /** The template's parameter schema (OpenAPI v3), as in templates.json. */
    parameterSchema: Record<string, unknown> | null;
    validate(ctx: RuleContext<P>): Violation[];
}

/**
 * Thrown by a template where the library's Rego fails to evaluate (for example OPA's
 * eval_conflict_error: a function with two different outputs for the same input). Gatekeeper
 * (constraint framework, drivers/rego Query) then reports the error text as the message of one
 * violation of every constraint of that template that matched the object, with each constraint's
 * enforcement action; the engine does the same (evaluate.ts). `message` is OPA's error text,
 * e.g. "template:50: eval_conflict_error: functions must not produce multiple outputs for same inputs".
 */
export class RegoEvalError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "RegoEvalError";
    }
}
