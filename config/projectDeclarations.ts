/**
 * The keys Pulumi.yaml declares, from the schema: what `pulumi preview` checks stack values
 * against (type, list item type, secret). tools/projectFile.ts writes them into Pulumi.yaml; the
 * offline render applies the same checks (cli/harness/stackConfig.ts).
 */
import { flatten, schema } from "./schemaIndex";

export interface ProjectDeclaration {
    type: "string" | "integer" | "boolean" | "array";
    items?: "string" | "integer";
    description: string;
    default?: unknown;
    secret: boolean;
}

export function projectDeclarations(): Map<string, ProjectDeclaration> {
    const out = new Map<string, ProjectDeclaration>();
    for (const { key, field } of flatten(schema)) {
        // The pulumi CLI requires every project key declared without a default ("Stack 'ci' is
        // missing configuration values ..." before anything runs, pulumi/pulumi#21797) and does
        // not check stack keys the project leaves undeclared: optional keys without a default are
        // left out, documented by the schema (config/areas/*.ts) only.
        if (field.optional && field.default === undefined) continue;
        out.set(key, {
            type: field.type,
            ...(field.type === "array" ? { items: Array.isArray(field.default) && typeof field.default[0] === "number" ? ("integer" as const) : ("string" as const) } : {}),
            description: field.description + (field.secret ? " (secret: pulumi config set --secret)" : field.optional ? " (optional)" : ""),
            ...(field.default !== undefined ? { default: field.default } : {}),
            secret: field.secret,
        });
    }
    return out;
}
