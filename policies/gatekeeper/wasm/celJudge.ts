/**
 * A team template's CEL code (engine K8sNativeValidation) judged the way Gatekeeper's k8scel
 * driver judges it (gatekeeper v3.23.1 pkg/drivers/k8scel/driver.go, which runs the API server's
 * ValidatingAdmissionPolicy validator, k8s.io/apiserver .../policy/validating/validator.go):
 *   - CEL variables `object` (the reviewed object), `oldObject` (null on CREATE), `request`, and
 *     `params`, the constraint object itself (the validator's versionedParams);
 *   - Gatekeeper's variables first (transform/cel_snippets.go AllVariablesV1Beta1):
 *     `anyObject` (object, or oldObject on a DELETE without object) and `params`
 *     (`params.spec.parameters`, or null), then the template's own variables;
 *   - each validation that is not true gives a message: messageExpression's value when it is a
 *     non-blank string without line breaks (trimmed), else `message` (trimmed), else
 *     `failed expression: <expression>`; an evaluation error is a violation too (failurePolicy
 *     Fail, Gatekeeper's default), with the error as its message.
 * The CEL is evaluated offline by the admission policies' environment (policies/admission/k8sCel.ts).
 */
import { celCheckError, evaluateCel } from "../../admission/k8sCel";
import { ABSENT_PARAMETERS } from "../engine/parameter-schema";
import type { Review } from "../types";
import type { CelSource } from "./template";


/**
 * Why the offline evaluator cannot judge this CEL (an expression that does not parse, or calls a
 * function it does not provide, such as the Kubernetes `ip()`, `cidr()` or `url()` libraries),
 * naming the expression; undefined when every expression type-checks with the variables dynamic.
 */
export function celSourceError(cel: CelSource): string | undefined {
    const expressions = [
        ...cel.variables.map((v, i) => ({ where: `variables[${i}] (${v.name})`, expression: v.expression })),
        ...cel.validations.flatMap((v, i) => [
            { where: `validations[${i}].expression`, expression: v.expression },
            ...(v.messageExpression !== undefined ? [{ where: `validations[${i}].messageExpression`, expression: v.messageExpression }] : []),
        ]),
    ];
    for (const { where, expression } of expressions) {
        const error = celCheckError(expression);
        if (error !== undefined) {
            const reason = error.split("\n")[0];
            return `its CEL ${where} cannot be judged by the pack's offline CEL evaluator (${reason}); the pack judges a template with CEL by its CEL, as Gatekeeper does`;
        }
    }
    return undefined;
}

export interface CelVerdict {
    /** Messages of the validations that failed or raised an error, in the template's order. */
    messages: string[];
    /** Which of those came from an evaluation error (the message is then the offline evaluator's). */
    errors: boolean[];
}

/**
 * Judges the object of `review` with the template's CEL; `parameters` is the constraint's
 * spec.parameters (ABSENT_PARAMETERS, or undefined, when the constraint has none).
 */
export function judgeCel(cel: CelSource, parameters: Record<string, unknown> | undefined, review: Pick<Review, "object" | "kind" | "namespace" | "name"> & Partial<Pick<Review, "operation" | "oldObject">>): CelVerdict {
    const { object, namespace } = review;
    // The object as the Gatekeeper webhook hands it to CEL (unstructured JSON): integers are CEL ints,
    // nulls stay (gator and the pack's Rego see them too).
    const decoded = asCelValue(object.metadata === null || object.metadata === undefined || !namespace ? object : { ...object, metadata: { ...object.metadata, namespace: object.metadata.namespace ?? namespace } });
    const request = { kind: review.kind, operation: review.operation ?? "CREATE", namespace: namespace ?? "", name: review.name ?? object.metadata?.name ?? "" };
    // The validator's params: the constraint object (only spec.parameters is read by Gatekeeper's variables).
    const params = asCelValue({ spec: parameters === undefined || parameters === ABSENT_PARAMETERS ? {} : { parameters } }) as Record<string, unknown>;
    const variables: Record<string, unknown> = {};
    const ctx: Record<string, unknown> = { object: decoded, oldObject: review.oldObject === undefined ? null : asCelValue(review.oldObject), request, params, variables };
    const declared = [
        { name: "anyObject", expression: `has(request.operation) && request.operation == "DELETE" && object == null ? oldObject : object` },
        { name: "params", expression: "!has(params.spec) ? null : !has(params.spec.parameters) ? null: params.spec.parameters" },
        ...cel.variables,
    ];
    // Variables are evaluated lazily, on first use, as the API server's composited activation does:
    // a variable no validation reaches never raises its error.
    for (const v of declared) {
        let done: { value: unknown } | { error: Error } | undefined;
        Object.defineProperty(variables, v.name, {
            enumerable: true,
            get() {
                if (!done) {
                    try {
                        done = { value: evaluateCel(v.expression, ctx) };
                    } catch (err) {
                        // The API server's composition (k8s.io/apiserver admission/plugin/cel composition.go) words it so.
                        done = { error: new CompositedVariableError(`composited variable ${JSON.stringify(v.name)} fails to evaluate: ${celErrorText(err)}`) };
                    }
                }
                if ("error" in done) throw done.error;
                return done.value;
            },
        });
    }
    const messages: string[] = [];
    const errors: boolean[] = [];
    for (const v of cel.validations) {
        let result: unknown;
        try {
            result = evaluateCel(v.expression, ctx);
        } catch (err) {
            messages.push(`expression '${v.expression}' resulted in error: ${celErrorText(err)}`);
            errors.push(true);
            continue;
        }
        if (result === true) continue;
        messages.push(messageOf(v, ctx));
        errors.push(false);
    }
    return { messages, errors };
}

/** A template variable whose expression failed, in the API server's words (the error of every expression that reads it). */
class CompositedVariableError extends Error {}

/** An evaluation error's text as cel-go gives it: a variable's own (found among the causes), else the evaluator's in cel-go's words. */
function celErrorText(err: unknown): string {
    for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as Error & { cause?: unknown }).cause, depth++) {
        if (e instanceof CompositedVariableError) return e.message;
        const inMessage = /composited variable "[^"]*" fails to evaluate: .*/.exec(e.message.split("\n")[0]);
        if (inMessage) return inMessage[0];
    }
    return celGoErrorText(((err as Error)?.message ?? String(err)).split("\n")[0]);
}

/**
 * An evaluation error of the offline evaluator in cel-go's words, for the errors whose cel-go text
 * is known (cel-go common/types: a missing map key is `no such key: <key>`, NoSuchOverloadErr is
 * `no such overload`); any other keeps the offline evaluator's text, which may differ from the cluster's.
 */
export function celGoErrorText(message: string): string {
    const key = /^No such key: (.*)$/.exec(message);
    if (key) return `no such key: ${key[1]}`;
    // A binary operator on operands it has no overload for: cel-go names the operator's function (_<=_).
    const operator = /^no such overload: \S.* (<=|>=|<|>|\+|-|\*|\/|%|==|!=) \S.*$/.exec(message);
    if (operator) return `no such overload: _${operator[1]}_`;
    if (/^no such overload\b/.test(message)) return "no such overload";
    // A global function (a conversion such as string()) without an overload for its arguments: cel-go lists their types.
    const call = /^found no matching overload for '([A-Za-z_]\w*)\((.*)\)'$/.exec(message);
    if (call) return `no such overload: ${call[1]}(${call[2].split(/,\s*/).filter((t) => t !== "").map((t) => (t === "null" ? "null_type" : t)).join(", ")})`;
    return message;
}

/** A JSON value as CEL sees unstructured JSON: whole numbers are ints (BigInt here), the rest as is. */
function asCelValue(value: unknown): unknown {
    if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
    if (Array.isArray(value)) return value.map(asCelValue);
    if (value !== null && typeof value === "object") {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = asCelValue(v);
        return out;
    }
    return value;
}

function messageOf(v: CelSource["validations"][number], ctx: Record<string, unknown>): string {
    if (v.messageExpression !== undefined) {
        try {
            const m = evaluateCel(v.messageExpression, ctx);
            if (typeof m === "string" && m.trim() !== "" && !m.trim().includes("\n")) return m.trim();
        } catch {
            // An error in messageExpression falls back to message, as the validator does.
        }
    }
    const message = (v.message ?? "").trim();
    return message !== "" ? message : `failed expression: ${v.expression.trim()}`;
}
