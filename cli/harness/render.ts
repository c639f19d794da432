/**
 * The offline render: the real program under mocks with a stack's configuration, its objects
 * checked against the Kubernetes schemas, written as reviewable files.
 */
import * as path from "path";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { OutputIo, writeOutputAtomically } from "./output";
import { kubernetesObjects, manifestsYaml, plainTextSecrets, resourceRecords, ResourceRecord } from "./manifests";
import { RegisteredResource, runProgram } from "./program";
import { quotaProblems } from "../../policies/spec/quotaFit";
import { readStackValues } from "./stackConfig";
import { validateObject } from "./validate";
import { PLACEHOLDER_DIGEST, withoutDigest } from "../../config/imageLock";

export interface RenderResult {
    stack: string;
    resources: RegisteredResource[];
    /** Kubernetes objects with secret values in place: for checks only, never written. */
    objects: K8sObject[];
    redactedObjects: K8sObject[];
    records: ResourceRecord[];
    manifests: string;
    resourcesJson: string;
    outputs: Record<string, unknown>;
    /** The program's stack output `renderedFiles` (relative path -> text), written beside the manifests. */
    files: Record<string, string>;
    placeholders: string[];
    /** Images that run as the placeholder digest: prod tags images.lock.json does not record. */
    imagePlaceholders: string[];
    errors: string[];
}

/** programPath: another program than index.ts (tests use fixtures). */
export async function render(stack: string, overrides: Record<string, unknown> = {}, programPath?: string): Promise<RenderResult> {
    const values = readStackValues(stack, overrides);
    const run = await runProgram({ project: values.project, stack, config: values.config, secretKeys: values.secretKeys, programPath });
    const { objects, redacted, duplicates } = kubernetesObjects(run.resources);
    const schemaErrors = objects.flatMap(validateObject).map((p) => `schema: ${p.object}: ${p.problem}`);
    const quotaErrors = quotaProblems(objects);
    const records = resourceRecords(run.resources);
    const files = renderedFiles(run.outputs, run.secretOutputs);
    return {
        stack,
        resources: run.resources,
        objects,
        redactedObjects: redacted,
        records,
        manifests: manifestsYaml(redacted),
        resourcesJson: JSON.stringify(records, null, 2) + "\n",
        outputs: run.outputs,
        files: files.files,
        placeholders: values.placeholders,
        imagePlaceholders: placeholderImages(JSON.stringify(objects)),
        errors: [...run.errors, ...duplicates, ...schemaErrors, ...quotaErrors, ...files.errors, ...plainTextSecrets(run.resources)],
    };
}

/**
 * The images rendered with the placeholder digest: each "<image>@<placeholder>" found from its
 * "@sha256:" and read backwards (a regular expression matching the image first would try every
 * position of a long value: its time grew with the square of the value's length, issue 42).
 */
export function placeholderImages(text: string): string[] {
    const marker = `@${PLACEHOLDER_DIGEST}`;
    const out = new Set<string>();
    for (let i = text.indexOf(marker); i >= 0; i = text.indexOf(marker, i + marker.length)) {
        let start = i;
        while (start > 0 && /[\w./:-]/.test(text[start - 1])) start--;
        if (start < i) out.add(withoutDigest(text.slice(start, i + marker.length)));
    }
    return [...out].sort();
}

/**
 * The extension point for files that are not Kubernetes objects (e.g. node configuration): the
 * program exports `renderedFiles`, a map of relative paths to text. Paths must stay inside the
 * output folder, values must be text, and a secret output is refused (files are written as is).
 */
export function renderedFiles(outputs: Record<string, unknown>, secretOutputs: string[] = []): { files: Record<string, string>; errors: string[] } {
    const value = outputs.renderedFiles;
    if (value === undefined) return { files: {}, errors: [] };
    if (secretOutputs.includes("renderedFiles")) return { files: {}, errors: ["renderedFiles: the output is secret; rendered files are written in plain text"] };
    if (!value || typeof value !== "object" || Array.isArray(value)) return { files: {}, errors: ["renderedFiles: expected a map of relative paths to text"] };
    const files: Record<string, string> = {};
    const errors: string[] = [];
    for (const [file, text] of Object.entries(value)) {
        const normal = path.posix.normalize(file);
        if (path.isAbsolute(file) || normal.startsWith("../") || normal === ".." || normal !== file || ["manifests.yaml", "resources.json"].includes(normal))
            errors.push(`renderedFiles: "${file}" is not a relative path inside the render folder (or names a file the render writes itself)`);
        else if (typeof text !== "string") errors.push(`renderedFiles: "${file}" is not text`);
        else files[file] = text;
    }
    return { files, errors };
}

/** Writes the render folder atomically (./output.ts): all files, or the previous output untouched. */
export function writeRender(result: RenderResult, outDir: string, io?: OutputIo): void {
    writeOutputAtomically(outDir, { "manifests.yaml": result.manifests, "resources.json": result.resourcesJson, ...result.files }, io);
}

/** The top-level component a resource belongs to (the resource itself when it has no parent). */
function componentOf(r: RegisteredResource, byUrn: Map<string, RegisteredResource>): string {
    let cur = r;
    while (cur.parent && byUrn.get(cur.parent)) cur = byUrn.get(cur.parent)!;
    return cur === r && r.custom ? "(no component)" : `${cur.type} ${cur.name}`;
}

/** `sections` (e.g. the policy pack's verdict) are printed before the final "problems:" line. */
export function summary(result: RenderResult, sections: string[] = []): string {
    const byUrn = new Map(result.resources.map((r) => [r.urn, r]));
    const perComponent = new Map<string, number>();
    for (const r of result.resources) perComponent.set(componentOf(r, byUrn), (perComponent.get(componentOf(r, byUrn)) ?? 0) + 1);
    const perKind = new Map<string, number>();
    for (const o of result.objects) perKind.set(`${o.kind}`, (perKind.get(`${o.kind}`) ?? 0) + 1);
    const table = (m: Map<string, number>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `  ${String(n).padStart(4)}  ${k}`).join("\n");
    const lines = [
        `stack ${result.stack}: ${result.resources.length} resources, ${result.objects.length} Kubernetes objects`,
        "resources per component:",
        table(perComponent),
        "objects per kind:",
        table(perKind),
    ];
    if (result.placeholders.length > 0)
        lines.push(`secret config replaced by render placeholders (not decryptable offline): ${result.placeholders.join(", ")}`);
    if (result.imagePlaceholders.length > 0)
        lines.push(`prod images not in images.lock.json, rendered with the placeholder digest ${PLACEHOLDER_DIGEST.slice(0, 14)}… (a deploy resolves them: npm run images:lock): ${result.imagePlaceholders.join(", ")}`);
    lines.push(...sections);
    lines.push(result.errors.length === 0 ? "render problems: none" : `render problems: ${result.errors.length}\n${result.errors.map((e) => `  - ${e}`).join("\n")}`);
    return lines.join("\n");
}
