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
import { modulePaths, OPA_VERSION } from "../../policies/gatekeeper/wasm/rule";
import { ENTRYPOINT, modulesOf, parseTemplate, parseTemplateDocument, templateDigest, templateDocument, type ModuleManifest } from "../../policies/gatekeeper/wasm/template";

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
export type Status = "up to date" | "missing" | "stale" | "plan.js or manifest stale";
const REFRESH: Status = "plan.js or manifest stale";

export function statusOf(file: string, rel: string): Status {
    const text = readFileSync(file, "utf8");
    const document = templateDocument(text, rel);
    const parsed = parseTemplateDocument(document, rel);
    const paths = modulePaths(file);
    if (!existsSync(paths.wasm) || !existsSync(paths.manifest)) return "missing";
    const manifest = JSON.parse(readFileSync(paths.manifest, "utf8")) as ModuleManifest;
    const fresh =
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
    const out: ModuleManifest = { ...rest, ...("refused" in now ? { planRefused: now.refused } : { planJs: now.digest }), templateFile };
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
    return writeCompiledPlan(file, rel, JSON.parse(readFileSync(paths.manifest, "utf8")) as ModuleManifest, readFileSync(paths.plan));
}

/** Compiles one template file with opa; writes the module and its manifest (temp files renamed in). */
export function compileTemplate(file: string, rel: string, opa: string): ModuleManifest {
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
        const planBytes = Buffer.from(JSON.stringify(JSON.parse(plan.toString("utf8"))) + "\n");
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
    } finally {
        rmSync(work, { recursive: true, force: true });
    }
}

function templateFiles(): { file: string; rel: string }[] {
    return TEMPLATE_DIRS.flatMap((dir) => {
        const abs = path.join(REPO, dir);
        if (!existsSync(abs)) return [];
        return readdirSync(abs)
            .filter((f) => /\.ya?ml$/.test(f))
            .sort()
            .map((f) => ({ file: path.join(abs, f), rel: path.join(dir, f) }));
    });
}

function main(argv: string[]): number {
    const check = argv.includes("--check");
    const opaAt = argv.indexOf("--opa");
    const files = templateFiles();
    const todo = files.map((f) => ({ ...f, status: statusOf(f.file, f.rel) })).filter((f) => f.status !== "up to date");
    for (const f of files) if (!todo.some((t) => t.file === f.file)) console.log(`${f.rel}: up to date`);
    if (check) {
        for (const f of todo) console.log(`${f.rel}: module ${f.status}; run npm run gatekeeper:wasm`);
        return todo.length > 0 ? 1 : 0;
    }
    if (todo.length === 0) return 0;
    // Only the JavaScript or the manifest is behind (the plan compiler or the file's layout changed): made again from the committed plan, without opa.
    for (const f of todo.filter((t) => t.status === REFRESH)) report(f, refreshCompiledPlan(f.file, f.rel), "compiled plan and manifest made again");
    const withOpa = todo.filter((t) => t.status !== REFRESH);
    if (withOpa.length === 0) return 0;
    const opa = opaPath(opaAt >= 0 ? argv[opaAt + 1] : undefined);
    if (!existsSync(opa)) {
        console.error(`gatekeeper:wasm: opa ${OPA_VERSION} is not at ${opa}; build it with: npm run gatekeeper:build -- opa`);
        return 2;
    }
    for (const f of withOpa) report(f, compileTemplate(f.file, f.rel, opa), "compiled");
    return 0;
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
