/**
 * Validation of constraint parameters against a template's OpenAPI v3 schema, the subset
 * the Gatekeeper library uses: type, properties, items, enum, required, additionalProperties,
 * default and x-kubernetes-preserve-unknown-fields.
 *
 * Like the API server with a structural schema, null values are dropped and defaults are
 * applied; unlike it, unknown keys are an error instead of being pruned silently, so a typo in
 * a parameter name does not quietly disable a check.
 */
export type Schema = Record<string, unknown>;

export class ParameterError extends Error {
    override name = "ParameterError";
}

/** Returns a copy of `value` with defaults applied; throws ParameterError naming `where` and the key. */
/**
 * The parameters of a constraint without spec.parameters (one shared, frozen object): a template
 * judged by its CEL must tell it from an explicit `parameters: {}` (Gatekeeper binds
 * variables.params to null for the one, to {} for the other).
 */
export const ABSENT_PARAMETERS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export function validateParameters(schema: Schema | null | undefined, value: unknown, where: string): Record<string, unknown> {
    // A constraint without parameters: Rego sees input.parameters undefined, and no default applies
    // (the API server defaults fields inside an object that is there).
    if (value === undefined || value === null) return ABSENT_PARAMETERS;
    if (!schema) {
        if (!isPlainObject(value)) throw new ParameterError(`${where}: parameters must be an object`);
        return value;
    }
    const result = check(schema, value, where, "parameters");
    return (result ?? {}) as Record<string, unknown>;
}

function check(schema: Schema, value: unknown, where: string, path: string): unknown {
    if (value === null || value === undefined) return undefined;
    const type = schema.type;
    if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
        throw new ParameterError(
            `${where}: ${path} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}, got ${JSON.stringify(value)}`,
        );
    }
    switch (type) {
        case "object":
            return checkObject(schema, value, where, path);
        case "array": {
            if (!Array.isArray(value)) throw typeError(where, path, "a list", value);
            const items = isSchema(schema.items) ? schema.items : undefined;
            return items ? value.map((v, i) => check(items, v, where, `${path}[${i}]`)) : value;
        }
        case "string":
            if (typeof value !== "string") throw typeError(where, path, "a string", value);
            return value;
        case "boolean":
            if (typeof value !== "boolean") throw typeError(where, path, "a boolean", value);
            return value;
        case "integer":
            if (typeof value !== "number" || !Number.isInteger(value)) throw typeError(where, path, "an integer", value);
            return value;
        case "number":
            if (typeof value !== "number" || !Number.isFinite(value)) throw typeError(where, path, "a number", value);
            return value;
        default:
            // No type (or x-kubernetes-int-or-string and friends): accept as is, still walk known properties.
            return isPlainObject(value) && isPlainObject(schema.properties) ? checkObject(schema, value, where, path) : value;
    }
}

function checkObject(schema: Schema, value: unknown, where: string, path: string): Record<string, unknown> {
    if (!isPlainObject(value)) throw typeError(where, path, "an object", value);
    const properties = isPlainObject(schema.properties) ? (schema.properties as Record<string, unknown>) : {};
    const additional = schema.additionalProperties;
    const preserveUnknown = schema["x-kubernetes-preserve-unknown-fields"] === true;
    const declaresFields = Object.keys(properties).length > 0;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
        const sub = properties[key];
        const keyPath = `${path}.${key}`;
        if (isSchema(sub)) {
            const checked = check(sub, v, where, keyPath);
            if (checked !== undefined) out[key] = checked;
        } else if (isSchema(additional)) {
            const checked = check(additional, v, where, keyPath);
            if (checked !== undefined) out[key] = checked;
        } else if (preserveUnknown || additional === true || (!declaresFields && additional === undefined)) {
            if (v !== null && v !== undefined) out[key] = v;
        } else {
            const known = Object.keys(properties).filter((k) => isSchema(properties[k]));
            throw new ParameterError(
                `${where}: unknown parameter ${keyPath}` + (known.length ? ` (known: ${known.join(", ")})` : ""),
            );
        }
    }
    for (const [key, sub] of Object.entries(properties)) {
        if (isSchema(sub) && out[key] === undefined && sub.default !== undefined) out[key] = structuredClone(sub.default);
    }
    if (Array.isArray(schema.required)) {
        for (const key of schema.required) {
            if (out[key as string] === undefined) throw new ParameterError(`${where}: ${path}.${key} is required`);
        }
    }
    return out;
}

function typeError(where: string, path: string, expected: string, value: unknown): ParameterError {
    const got = Array.isArray(value) ? "a list" : value === null ? "null" : typeof value;
    return new ParameterError(`${where}: ${path} must be ${expected}, got ${got} ${truncate(JSON.stringify(value))}`);
}

function truncate(s: string | undefined): string {
    if (s === undefined) return "";
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function isSchema(v: unknown): v is Schema {
    return isPlainObject(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
