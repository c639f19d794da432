/**
 * Compiles each ConstraintTemplate of the template folders to the plan and the Wasm module the
 * pack evaluates at preview (policies/gatekeeper/plan, policies/gatekeeper/wasm):
 *
 *   npm run gatekeeper:wasm [-- --check] [--opa BIN]
 *
 * For every <dir>/<name>.yaml it writes <dir>/wasm/<name>.plan.json (opa build -t plan),
 * <dir>/wasm/<name>.plan.js (that plan compiled to JavaScript by policies/gatekeeper/plan: what
 * the pack runs), <dir>/wasm/<name>.wasm (opa build -t wasm: the fallback for a plan the plan
 * compiler cannot take; both with entrypoint hooks/violation, behind Gatekeeper's hook;
 * --v0-compatible unless the template says version: v1) and <dir>/wasm/<name>.wasm.json (the
 * template's digest, the files' sha256 or why the plan is refused, the built-ins the module
 * needs), all committed. An up-to-date module is left as it is (no opa needed); a plan compiled
 * by another version of the plan compiler is compiled again (no opa needed either). opa is the
 * version Gatekeeper vendors, built from the Go module proxy by `npm run gatekeeper:build -- opa`.
 * --check: compile nothing, exit 1 naming each missing or stale module.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { HOST_BUILTINS, type HostBuiltin } from "../../policies/gatekeeper/wasm/builtins";
import { missingBuiltins, WasmPolicy } from "../../policies/gatekeeper/wasm/host";
import { planToJavaScript, UnsupportedPlan, type Plan } from "../../policies/gatekeeper/plan/compile";
import { opaBinary } from "../../policies/gatekeeper/wasm/opa";
import { isCelOnly, modulePaths, OPA_VERSION, readManifest } from "../../policies/gatekeeper/wasm/rule";
import { ENTRYPOINT, manifestBinding, modulesOf, parseTemplate, parseTemplateDocument, templateDigest, templateDocument, type ModuleManifest } from "../../policies/gatekeeper/wasm/template";

const REPO = path.resolve(__dirname, "..", "..");

/** The folders holding ConstraintTemplate files: the pack's, and the Wasm host's test templates. */
export const TEMPLATE_DIRS = ["policies/templates", "policies/gatekeeper/wasm/testdata"];

/** Accepts every built-in, to list what a module needs without refusing it. */
class AnyBuiltin extends Map<string, HostBuiltin> {
    override has(): boolean {
        return true;
    }
    override get(): HostBuiltin {
        return () => undefined;
    }
}

/** The opa command: --opa, else where tools/gatekeeper/build.sh puts it. */
export function opaPath(explicit?: string): string {
    return explicit ?? opaBinary();
}

function sha256(bytes: Uint8Array): string {
    return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * "plan.js or manifest stale": opa's outputs are current, but the plan compiled to JavaScript is not what the plan
 * compiler makes of the plan now, or the manifest's copy of the template file is not of its bytes (both made again without opa).
 */
export type Status = "up to date" | "missing" | "stale" | "plan.js or manifest stale" | "CEL only";
const REFRESH: Status = "plan.js or manifest stale";

export function statusOf(file: string, rel: string): Status {
    const text = readFileSync(file, "utf8");
    const document = templateDocument(text, rel);
    const parsed = parseTemplateDocument(document, rel);
    const paths = modulePaths(file);
    // Nothing to compile: Gatekeeper and the pack judge it by its CEL.
    if (isCelOnly(parsed)) return "CEL only";
    if (!existsSync(paths.wasm) || !existsSync(paths.manifest)) return "missing";
    let manifest: ModuleManifest;
    try {
        manifest = readManifest(paths.manifest, rel);
    } catch {
        return "stale";
    }
    const fresh =
        manifest.binding === manifestBinding(manifest) &&
        manifest.digest === templateDigest(parsed, rel, OPA_VERSION) &&
        manifest.wasm === sha256(readFileSync(paths.wasm)) &&
        existsSync(paths.plan) &&
        manifest.plan === sha256(readFileSync(paths.plan)) &&
        manifest.kind === parsed.kind;
    if (!fresh) return "stale";
    const now = compiledPlan(readFileSync(paths.plan));
    const same = "refused" in now ? manifest.planRefused === now.refused && manifest.planJs === undefined : manifest.planRefused === undefined && manifest.planJs === now.digest && existsSync(paths.js) && readFileSync(paths.js, "utf8") === now.js;
    const copy = manifest.templateFile;
    const copied = copy?.sha256 === sha256(Buffer.from(text)) && JSON.stringify(copy.document) === JSON.stringify(document);
    return same && copied ? "up to date" : REFRESH;
}

/** The plan compiled to JavaScript (and its digest), or why the plan compiler refuses it (a statement or built-in it lacks). */
function compiledPlan(planBytes: Uint8Array): { js: string; digest: string } | { refused: string } {
    try {
        const js = planToJavaScript(JSON.parse(Buffer.from(planBytes).toString("utf8")) as Plan);
        return { js, digest: sha256(Buffer.from(js)) };
    } catch (err) {
        if (err instanceof UnsupportedPlan) return { refused: err.message };
        throw err;
    }
}

/**
 * Writes the plan compiled to JavaScript beside the plan (or removes it when the compiler refuses the plan) and
 * the manifest saying which, with its copy of the template file: each through a temporary file renamed in, the manifest last.
 */
function writeCompiledPlan(file: string, rel: string, manifest: ModuleManifest, planBytes: Uint8Array): ModuleManifest {
    const paths = modulePaths(file);
    const now = compiledPlan(planBytes);
    const text = readFileSync(file, "utf8");
    const { planJs: _js, planRefused: _refused, templateFile: _copy, ...rest } = manifest;
    const templateFile = { sha256: sha256(Buffer.from(text)), document: templateDocument(text, rel) };
    const { binding: _binding, ...unbound } = rest;
    const out: ModuleManifest = { ...unbound, ...("refused" in now ? { planRefused: now.refused } : { planJs: now.digest }), templateFile };
    out.binding = manifestBinding(out);
    if ("js" in now) {
        writeFileSync(`${paths.js}.tmp`, now.js);
        renameSync(`${paths.js}.tmp`, paths.js);
    } else rmSync(paths.js, { force: true });
    writeFileSync(`${paths.manifest}.tmp`, JSON.stringify(out, null, 2) + "\n");
    renameSync(`${paths.manifest}.tmp`, paths.manifest);
    return out;
}

/** Compiles the committed plan of a template to JavaScript again and rewrites its manifest (status "plan.js or manifest stale"): no opa needed. */
export function refreshCompiledPlan(file: string, rel: string): ModuleManifest {
    const paths = modulePaths(file);
    const manifest = readManifest(paths.manifest, rel);
    const plan = readFileSync(paths.plan);
    // Only a plan the manifest binds to this template is compiled again without opa.
    if (manifest.binding !== manifestBinding(manifest) || manifest.plan !== sha256(plan)) throw new Error(`${rel}: the plan is not the one its manifest binds to the template; compile it with opa`);
    return writeCompiledPlan(file, rel, manifest, plan);
}

/** The plan opa makes of the template now, compared with the committed one: whether they are the same bytes. */
export function planMatchesOpa(file: string, rel: string, opa: string): boolean {
    const paths = modulePaths(file);
    const { plan } = buildWithOpa(file, rel, opa);
    return existsSync(paths.plan) && Buffer.compare(plan, readFileSync(paths.plan)) === 0;
}

/** Compiles one template file with opa; writes the module and its manifest (temp files renamed in). */
export function compileTemplate(file: string, rel: string, opa: string): ModuleManifest {
    const { parsed, bytes, plan: planBytes } = buildWithOpa(file, rel, opa);
    const needed = new WasmPolicy(new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer), rel, new AnyBuiltin()).neededBuiltins;
    const manifest: ModuleManifest = {
        template: path.basename(file),
        kind: parsed.kind,
        opa: OPA_VERSION,
        digest: templateDigest(parsed, rel, OPA_VERSION),
        wasm: sha256(bytes),
        builtins: needed,
        plan: sha256(planBytes),
    };
    const paths = modulePaths(file);
    mkdirSync(path.dirname(paths.wasm), { recursive: true });
    writeFileSync(`${paths.wasm}.tmp`, bytes);
    writeFileSync(`${paths.plan}.tmp`, planBytes);
    renameSync(`${paths.wasm}.tmp`, paths.wasm);
    renameSync(`${paths.plan}.tmp`, paths.plan);
    return writeCompiledPlan(file, rel, manifest, planBytes);
}

/** The Wasm module and the plan opa builds of a template (in a temporary folder, removed after). */
function buildWithOpa(file: string, rel: string, opa: string): { parsed: ReturnType<typeof parseTemplate>; bytes: Buffer; plan: Buffer } {
    const parsed = parseTemplate(readFileSync(file, "utf8"), rel);
    const work = mkdtempSync(path.join(tmpdir(), "gk-wasm-"));
    try {
        const src = path.join(work, "src");
        mkdirSync(src);
        for (const [name, text] of Object.entries(modulesOf(parsed, rel))) writeFileSync(path.join(src, name), text);
        // Relative paths: the module records src/<file>.rego in its error locations (rule.ts reads them).
        const build = (target: "wasm" | "plan", member: string): Buffer => {
            const args = ["build", "-t", target, "-e", ENTRYPOINT, "-o", `${target}.tar.gz`, ...(parsed.version === "v1" ? [] : ["--v0-compatible"]), "src"];
            const built = spawnSync(opa, args, { encoding: "utf8", cwd: work });
            if (built.status !== 0) throw new Error(`${rel}: opa build -t ${target} failed for template ${parsed.kind}:\n${built.stderr || built.stdout}`);
            const untar = spawnSync("tar", ["-xzf", `${target}.tar.gz`, "-C", work, `/${member}`], { encoding: "utf8", cwd: work });
            if (untar.status !== 0) throw new Error(`${rel}: the bundle opa built has no /${member}: ${untar.stderr}`);
            return readFileSync(path.join(work, member));
        };
        const bytes = build("wasm", "policy.wasm");
        // The same modules as a plan (OPA's IR), which the pack compiles to JavaScript.
        const plan = build("plan", "plan.json");
        return { parsed, bytes, plan: Buffer.from(JSON.stringify(JSON.parse(plan.toString("utf8"))) + "\n") };
    } finally {
        rmSync(work, { recursive: true, force: true });
    }
}

function templateFiles(dirs: readonly string[]): { file: string; rel: string }[] {
    return dirs.flatMap((dir) => {
        const abs = path.resolve(REPO, dir);
        if (!existsSync(abs)) return [];
        return readdirSync(abs)
            .filter((f) => /\.ya?ml$/.test(f))
            .sort()
            .map((f) => ({ file: path.join(abs, f), rel: path.join(dir, f) }));
    });
}

export function main(argv: string[], dirs: readonly string[] = TEMPLATE_DIRS): number {
    const check = argv.includes("--check");
    const opaAt = argv.indexOf("--opa");
    const files = templateFiles(dirs);
    // Each template on its own: one that cannot be read or compiled is named, and the others go on.
    const failures: string[] = [];
    const attempt = <T>(rel: string, what: () => T): T | undefined => {
        try {
            return what();
        } catch (err) {
            const message = (err as Error).message;
            failures.push(message.startsWith(`${rel}: `) ? message : `${rel}: ${message}`);
            return undefined;
        }
    };
    const known = files.flatMap((f) => {
        const status = attempt(f.rel, () => statusOf(f.file, f.rel));
        return status === undefined ? [] : [{ ...f, status }];
    });
    const todo = known.filter((f) => f.status !== "up to date" && f.status !== "CEL only");
    for (const f of known) {
        if (f.status === "up to date") console.log(`${f.rel}: up to date`);
        if (f.status === "CEL only") console.log(`${f.rel}: CEL only: nothing to compile (judged by its CEL)`);
    }
    const opa = opaPath(opaAt >= 0 ? argv[opaAt + 1] : undefined);
    const done = (): number => {
        for (const f of failures) console.error(`${f.split("\n").join("\n  ")}`);
        if (failures.length > 0) console.error(`gatekeeper:wasm: ${failures.length} template(s) failed (above); the others were handled`);
        return failures.length > 0 ? 1 : 0;
    };
    if (check) {
        for (const f of todo) console.log(`${f.rel}: module ${f.status}; run npm run gatekeeper:wasm`);
        // With opa at hand, each committed plan is compared with the plan opa makes of the template now.
        if (existsSync(opa)) {
            for (const f of known.filter((k) => k.status === "up to date")) {
                if (attempt(f.rel, () => planMatchesOpa(f.file, f.rel, opa)) === false) failures.push(`${f.rel}: the committed plan is not the plan opa makes of this template (swapped or edited); run npm run gatekeeper:wasm`);
            }
        } else console.log(`gatekeeper:wasm --check: opa is not at ${opa}: plans checked against their manifests' digests only, not recompiled`);
        return todo.length > 0 ? Math.max(1, done()) : done();
    }
    if (todo.length === 0) return done();
    // Only the JavaScript or the manifest is behind (the plan compiler or the file's layout changed): made again from the committed plan, without opa.
    for (const f of todo.filter((t) => t.status === REFRESH)) {
        const m = attempt(f.rel, () => refreshCompiledPlan(f.file, f.rel));
        if (m) report(f, m, "compiled plan and manifest made again");
    }
    const withOpa = todo.filter((t) => t.status !== REFRESH);
    if (withOpa.length > 0 && !existsSync(opa)) {
        console.error(`gatekeeper:wasm: opa ${OPA_VERSION} is not at ${opa}; build it with: npm run gatekeeper:build -- opa`);
        done();
        return 2;
    }
    for (const f of withOpa) {
        const m = attempt(f.rel, () => compileTemplate(f.file, f.rel, opa));
        if (m) report(f, m, "compiled");
    }
    return done();
}

function report(f: { file: string; rel: string; status: Status }, m: ModuleManifest, what: string): void {
    const missing = missingBuiltins(m.builtins, HOST_BUILTINS);
    console.log(`${f.rel}: ${what} (${m.kind}, was ${f.status})`);
    if (missing.length > 0) console.log(`${f.rel}: warning: calls ${missing.join(", ")}, which the pack's Wasm host does not provide: the pack will refuse this template`);
    else if (m.planRefused) console.log(`${f.rel}: note: its plan ${m.planRefused}: the pack runs its Wasm module instead (slower)`);
    if (parseTemplate(readFileSync(f.file, "utf8"), f.rel).hasCel) {
        console.log(`${f.rel}: note: the template also carries CEL code (K8sNativeValidation): Gatekeeper and the pack judge it by its CEL, not by this module`);
    }
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
