/**
 * A ConstraintTemplate's CEL code (its K8sNativeValidation source, Gatekeeper's CEL engine): the
 * variables and validations a team writes, read from the template's `spec.targets[0].code`. The
 * Gatekeeper side judges it (./judge.ts), the admission side turns it into a
 * ValidatingAdmissionPolicy (policies/admission/generate.ts).
 */

/** A K8sNativeValidation source: variables and validations, as Gatekeeper's ValidatingAdmissionPolicy uses them. */
export interface CelSource {
    variables: { name: string; expression: string }[];
    validations: { expression: string; message?: string; messageExpression?: string }[];
}

/** The K8sNativeValidation source among a template's `code` entries, or undefined; errors name `source` and the key. */
export function parseCel(code: any[], source: string): CelSource | undefined {
    const i = code.findIndex((c) => c?.engine === "K8sNativeValidation");
    if (i < 0) return undefined;
    const where = `${source}: spec.targets[0].code[${i}].source`;
    const src = code[i].source ?? {};
    const variables = src.variables ?? [];
    const validations = src.validations ?? [];
    if (!Array.isArray(variables) || variables.some((v: any) => typeof v?.name !== "string" || typeof v?.expression !== "string")) {
        throw new Error(`${where}.variables must be a list of {name, expression} strings`);
    }
    if (!Array.isArray(validations) || validations.length === 0 || validations.some((v: any) => typeof v?.expression !== "string")) {
        throw new Error(`${where}.validations must be a non-empty list of {expression, message or messageExpression}`);
    }
    return {
        variables: variables.map((v: any) => ({ name: v.name, expression: v.expression })),
        validations: validations.map((v: any) => ({
            expression: v.expression,
            ...(typeof v.message === "string" ? { message: v.message } : {}),
            ...(typeof v.messageExpression === "string" ? { messageExpression: v.messageExpression } : {}),
        })),
    };
}
