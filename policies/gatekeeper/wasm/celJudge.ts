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
import { asDecoded, kubernetesCelEnvironment } from "../../admission/k8sCel";
import { parseApiVersion } from "../engine/gvk";
import type { K8sObject } from "../types";
import type { CelSource } from "./template";

const env = kubernetesCelEnvironment();
const compiled = new Map<string, ReturnType<typeof env.parse>>();
function run(expression: string, ctx: Record<string, unknown>): unknown {
    let fn = compiled.get(expression);
    if (!fn) compiled.set(expression, (fn = env.parse(expression)));
    return fn(ctx);
}

export interface CelVerdict {
    /** Messages of the validations that failed or raised an error, in the template's order. */
    messages: string[];
    /** Which of those came from an evaluation error (the message is then the offline evaluator's). */
    errors: boolean[];
}

export function judgeCel(cel: CelSource, constraint: K8sObject, object: K8sObject, namespace: string | undefined): CelVerdict {
    const { group, version } = parseApiVersion(object.apiVersion);
    const decoded = asDecoded({ ...object, metadata: { ...(object.metadata ?? {}), ...(namespace ? { namespace } : {}) } });
    const request = {
        kind: { group, version, kind: object.kind ?? "" },
        operation: "CREATE",
        namespace: namespace ?? "",
        name: object.metadata?.name ?? "",
    };
    const params = asDecoded(constraint) as Record<string, any>;
    const variables: Record<string, unknown> = {};
    const ctx: Record<string, unknown> = { object: decoded, oldObject: null, request, params, variables };
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
                        done = { value: run(v.expression, ctx) };
                    } catch (err) {
                        done = { error: err as Error };
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
            result = run(v.expression, ctx);
        } catch (err) {
            messages.push(`expression '${v.expression}' resulted in error: ${(err as Error).message.split("\n")[0]}`);
            errors.push(true);
            continue;
        }
        if (result === true) continue;
        messages.push(messageOf(v, ctx));
        errors.push(false);
    }
    return { messages, errors };
}

function messageOf(v: CelSource["validations"][number], ctx: Record<string, unknown>): string {
    if (v.messageExpression !== undefined) {
        try {
            const m = run(v.messageExpression, ctx);
            if (typeof m === "string" && m.trim() !== "" && !m.trim().includes("\n")) return m.trim();
        } catch {
            // An error in messageExpression falls back to message, as the validator does.
        }
    }
    const message = (v.message ?? "").trim();
    return message !== "" ? message : `failed expression: ${v.expression.trim()}`;
}
