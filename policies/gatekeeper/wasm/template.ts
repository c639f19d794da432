/**
 * A Gatekeeper ConstraintTemplate (the YAML a team applies to Gatekeeper) as the Rego modules
 * `opa build -t wasm` compiles for it, the way Gatekeeper's constraint framework (frameworks
 * `drivers/rego`, the version Gatekeeper v3.23.1 vendors) runs a template:
 *   - the template's package becomes `template` (rewriteModulePackage);
 *   - its libs (packages under `lib`) move under `data.libs` (regorewriter's PackagePrefixer);
 *   - a hook module runs `data.template.violation[r]` with input {review, parameters} and keeps
 *     {msg, details} with details defaulting to {} (hookModule; a result without msg is dropped);
 *   - Rego is v0 unless the template's source says version: v1.
 */
import { createHash } from "node:crypto";
import { parseAllDocuments } from "yaml";

export const ENTRYPOINT = "hooks/violation";

/** Gatekeeper's hook, for one constraint at a time (the host sets input to {review, parameters}). */
export const HOOK_REGO = `package hooks

import rego.v1

violation contains response if {
	data.template.violation[r]
	response := {"details": object.get(r, "details", {}), "msg": r.msg}
}
`;

export interface ParsedTemplate {
    /** The ConstraintTemplate's metadata.name. */
    name: string;
    /** The constraint kind (spec.crd.spec.names.kind). */
    kind: string;
    /** spec.crd.spec.validation.openAPIV3Schema, or null. */
    parameterSchema: Record<string, unknown> | null;
    /** The template's Rego; "" for a CEL-only template (then `cel` holds its code, and nothing is compiled). */
    rego: string;
    libs: string[];
    version: "v0" | "v1";
    /** Whether the template also carries CEL code (K8sNativeValidation), which Gatekeeper runs by default. */
    hasCel: boolean;
    /** That CEL code (its source), when present. */
    cel?: CelSource;
}

/** A K8sNativeValidation source: variables and validations, as Gatekeeper's ValidatingAdmissionPolicy uses them. */
export interface CelSource {
    variables: { name: string; expression: string }[];
    validations: { expression: string; message?: string; messageExpression?: string }[];
}

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

const TARGET = "admission.k8s.gatekeeper.sh";

/** Reads one ConstraintTemplate from YAML; errors name `source` and the key. */
export function parseTemplate(yamlText: string, source: string): ParsedTemplate {
    return parseTemplateDocument(templateDocument(yamlText, source), source);
}

/** The one document of a template file, as data. */
export function templateDocument(yamlText: string, source: string): unknown {
    const docs = parseAllDocuments(yamlText).filter((d) => d.contents !== null);
    if (docs.length !== 1) throw new Error(`${source}: expected exactly one ConstraintTemplate document, found ${docs.length}`);
    if (docs[0].errors.length > 0) throw new Error(`${source}: ${docs[0].errors[0].message}`);
    return docs[0].toJS();
}

/** Reads one ConstraintTemplate from its document (templateDocument); errors name `source` and the key. */
export function parseTemplateDocument(document: unknown, source: string): ParsedTemplate {
    const t = document as any;
    if (t?.kind !== "ConstraintTemplate" || !String(t?.apiVersion ?? "").startsWith("templates.gatekeeper.sh/")) {
        throw new Error(`${source}: expected apiVersion templates.gatekeeper.sh/* and kind ConstraintTemplate, got ${t?.apiVersion}/${t?.kind}`);
    }
    const name = t.metadata?.name;
    const kind = t.spec?.crd?.spec?.names?.kind;
    if (typeof name !== "string" || !name) throw new Error(`${source}: metadata.name is required`);
    if (typeof kind !== "string" || !kind) throw new Error(`${source}: spec.crd.spec.names.kind is required`);
    if (name !== kind.toLowerCase()) throw new Error(`${source}: metadata.name must be the lowercase of the kind (${kind.toLowerCase()}), as Gatekeeper requires; got ${name}`);
    const targets = t.spec?.targets;
    if (!Array.isArray(targets) || targets.length !== 1 || targets[0]?.target !== TARGET) {
        throw new Error(`${source}: spec.targets must hold exactly one target, ${TARGET}`);
    }
    const target = targets[0];
    const code: any[] = Array.isArray(target.code) ? target.code : [];
    const regoCode = code.find((c) => c?.engine === "Rego");
    let rego: unknown = target.rego;
    let libs: unknown = target.libs ?? [];
    let version: unknown = "v0";
    let where = "spec.targets[0].rego";
    if (regoCode) {
        rego = regoCode.source?.rego;
        libs = regoCode.source?.libs ?? [];
        version = regoCode.source?.version ?? "v0";
        where = `spec.targets[0].code[${code.indexOf(regoCode)}].source.rego`;
    }
    const cel = parseCel(code, source);
    // A CEL-only template (code with engine K8sNativeValidation and no Rego) is judged by its CEL, as Gatekeeper does.
    const celOnly = cel !== undefined && regoCode === undefined && target.rego === undefined;
    if (celOnly) rego = "";
    else if (typeof rego !== "string" || !rego.trim()) throw new Error(`${source}: ${where} must hold the template's Rego (a Rego-only or Rego-and-CEL template), or spec.targets[0].code must hold a K8sNativeValidation source (a CEL-only template)`);
    if (!Array.isArray(libs) || libs.some((l) => typeof l !== "string")) throw new Error(`${source}: libs must be a list of Rego modules (strings)`);
    // Gatekeeper reads any version other than v1 as v0.
    const v = version === "v1" ? "v1" : "v0";
    const schema = t.spec?.crd?.spec?.validation?.openAPIV3Schema ?? null;
    if (schema !== null) {
        const problem = schemaProblem(schema, "spec.crd.spec.validation.openAPIV3Schema");
        if (problem) throw new Error(`${source}: ${problem}; the API server would refuse the constraint CRD Gatekeeper makes of it`);
    }
    return {
        name,
        kind,
        parameterSchema: schema && typeof schema === "object" ? schema : null,
        rego: rego as string,
        libs: libs as string[],
        version: v,
        hasCel: cel !== undefined,
        cel,
    };
}

/** The types a structural schema's `type` may name (apiextensions' validation of a CRD). */
const SCHEMA_TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);

/**
 * What the API server would refuse in a parameter schema (the constraint CRD's
 * openAPIV3Schema, apiextensions-apiserver's ValidateCustomResourceDefinitionOpenAPISchema, the
 * parts a template can get wrong): a `type` that is not one of the six, `properties` or
 * `additionalProperties` that are not schemas, `items` that is not one schema, `required` that
 * is not a list of strings, `enum` that is not a list. Undefined when none.
 */
export function schemaProblem(schema: unknown, at: string): string | undefined {
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return `${at} must be a schema (an object), got ${JSON.stringify(schema)}`;
    const s = schema as Record<string, unknown>;
    if (s.type !== undefined && (typeof s.type !== "string" || !SCHEMA_TYPES.has(s.type))) {
        return `${at}.type: Unsupported value: ${JSON.stringify(s.type)}: supported values: ${[...SCHEMA_TYPES].map((t) => JSON.stringify(t)).join(", ")}`;
    }
    if (s.properties !== undefined) {
        if (s.properties === null || typeof s.properties !== "object" || Array.isArray(s.properties)) return `${at}.properties must be a map of schemas`;
        for (const [k, v] of Object.entries(s.properties)) {
            const p = schemaProblem(v, `${at}.properties[${k}]`);
            if (p) return p;
        }
    }
    if (s.items !== undefined) {
        const p = schemaProblem(s.items, `${at}.items`);
        if (p) return p;
    }
    if (s.additionalProperties !== undefined && typeof s.additionalProperties !== "boolean") {
        const p = schemaProblem(s.additionalProperties, `${at}.additionalProperties`);
        if (p) return p;
    }
    if (s.required !== undefined && (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string"))) return `${at}.required must be a list of property names`;
    if (s.enum !== undefined && !Array.isArray(s.enum)) return `${at}.enum must be a list`;
    return undefined;
}

const PACKAGE = /^(\s*)package\s+([A-Za-z_][\w.]*|data\.[\w.]+)/m;

/** The modules `opa build` compiles for a template, by file name. */
export function modulesOf(t: ParsedTemplate, source: string): Record<string, string> {
    const toLibs = (rego: string) => rego.replace(/\bdata\.lib\b/g, "data.libs.lib");
    if (!PACKAGE.test(t.rego)) throw new Error(`${source}: the template's Rego has no package statement`);
    const modules: Record<string, string> = {
        "hooks.rego": HOOK_REGO,
        "template.rego": toLibs(t.rego.replace(PACKAGE, "$1package template")),
    };
    t.libs.forEach((lib, i) => {
        const m = PACKAGE.exec(lib);
        if (!m || !(m[2] === "lib" || m[2].startsWith("lib."))) {
            throw new Error(`${source}: libs[${i}]: a library's package must be lib or under lib. (as Gatekeeper requires), got ${m ? m[2] : "none"}`);
        }
        modules[`lib_${i}.rego`] = toLibs(lib.replace(PACKAGE, `$1package libs.${m[2]}`));
    });
    return modules;
}

/**
 * The digest that ties a generated module to its template: the modules compiled, the Rego
 * version and the opa version. A module whose manifest holds another digest is stale.
 */
export function templateDigest(t: ParsedTemplate, source: string, opaVersion: string): string {
    const h = createHash("sha256");
    h.update(JSON.stringify({ opa: opaVersion, version: t.version, entrypoint: ENTRYPOINT, modules: modulesOf(t, source) }));
    return `sha256:${h.digest("hex")}`;
}

/** What the generator writes beside each module (<template>.wasm.json). */
export interface ModuleManifest {
    template: string;
    kind: string;
    opa: string;
    /** templateDigest of the template the module was compiled from. */
    digest: string;
    /** sha256 of the .wasm file. */
    wasm: string;
    /** Built-in functions the module asks of its host. */
    builtins: string[];
    /** sha256 of the plan (<template>.plan.json: `opa build -t plan` of the same modules), which is compiled to JavaScript. */
    plan: string;
    /** sha256 of the plan compiled to JavaScript (<template>.plan.js), which the pack runs; absent when the plan compiler refuses the plan. */
    planJs?: string;
    /** Why the plan compiler refuses the plan (a statement or built-in it lacks): the pack then runs the Wasm module. */
    planRefused?: string;
    /**
     * sha256 of the template file and its document as JSON: a file of these bytes is read from
     * here when it loads (reading the YAML costs more than the rest of the load).
     */
    templateFile?: { sha256: string; document: unknown };
    /**
     * sha256 of the template's digest, kind and every generated file's digest together
     * (manifestBinding): a plan, module or JavaScript swapped for another, with its digest
     * edited in the manifest, no longer matches it.
     */
    binding?: string;
}

/** What binds a manifest's generated files to its template (ModuleManifest.binding). */
export function manifestBinding(m: ModuleManifest): string {
    const bound = { template: m.digest, kind: m.kind, opa: m.opa, wasm: m.wasm, plan: m.plan, planJs: m.planJs ?? null, planRefused: m.planRefused ?? null, builtins: m.builtins };
    return `sha256:${createHash("sha256").update(JSON.stringify(bound)).digest("hex")}`;
}

export const GENERATE_COMMAND = "npm run gatekeeper:wasm";
