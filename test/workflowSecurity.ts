/**
 * A model of who can reach which credential in the GitHub workflows, in which job, after which
 * untrusted step, and the policy the pipeline promises (docs/usage.md, "What the pipeline's
 * safety rests on"). `securityViolations` returns every breach as a sentence; the workflow tests
 * require none for the real files and at least one for each insecure change the mutation test
 * applies to copies of them.
 *
 * Untrusted code: dependency install scripts (`npm ci` or `npm install` without
 * --ignore-scripts) anywhere, and in a pull-request workflow every step that runs the checked-out
 * code (npm run/test, npx, tsx, node, repository scripts, the Pulumi program). Main's own code is
 * reviewed (branch protection, CODEOWNERS). Credentials: repository or environment secrets, the
 * OpenID Connect token (id-token: write, for every step of the job), a GITHUB_TOKEN with a write
 * scope (every step: a process left behind by an earlier step can read a later step's
 * environment), the job's token handed to a step, and the Pulumi token exported by
 * pulumi/auth-actions. A credential is exposed to an untrusted step that runs before it or in the
 * same step (lingering processes), or after it when it persists (exported, written to a file).
 *
 * Across jobs the model follows data: what untrusted code can write (the artifacts it uploads, the
 * caches it saves, its job outputs, and what a dispatcher or a branch name chooses: checkout refs,
 * dispatch inputs, concurrency groups) and which later step, holding which credential, reads it.
 * The findings of these classes start with their class in brackets, e.g. `[artifact]`, so a
 * mutation test can require that a change is caught for the reason its class names:
 * [artifact] [cache] [env-file] [job-output] [checkout-ref] [dispatch-input] [approval] [status]
 * [install] [fail-open] [concurrency] [checksum].
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { Context, runs } from "./workflowExpr";

type Any = Record<string, any>;

/** The environments the workflows may use, with the settings docs/usage.md tells to set. */
export interface EnvironmentPolicy {
    /** Required reviewers (prevent self-review, no administrator bypass). */
    reviewers: boolean;
    /** Deployment branches: main only, or any (pull requests' merge refs). */
    branches: "main" | "any";
    /** The environment's secrets; no other secret is referenced in its jobs. */
    secrets: string[];
    /** Stacks its Pulumi team may touch, and whether it may write (Stack Write) or only read. */
    stacks: string[];
    write: boolean;
    workflows: string[];
    /** A job in this environment starts only after a job of that environment (the approval). */
    after?: string;
    /** Pulumi's OIDC policy also requires the token's workflow_ref to be this file on main. */
    workflowRef?: string;
}

export const ENVIRONMENTS: Record<string, EnvironmentPolicy> = {
    conformance: { reviewers: true, branches: "any", secrets: ["CONFORMANCE_READ_TOKEN"], stacks: [], write: false, workflows: ["pull-request.yml"] },
    "preview-dev": { reviewers: false, branches: "any", secrets: ["KUBECONFIG"], stacks: ["dev"], write: false, workflows: ["pull-request.yml"] },
    "preview-prod": { reviewers: true, branches: "any", secrets: ["KUBECONFIG"], stacks: ["prod"], write: false, workflows: ["preview-prod.yml"], workflowRef: "preview-prod.yml" },
    dev: { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["dev"], write: true, workflows: ["deploy.yml"] },
    "production-approval": { reviewers: true, branches: "main", secrets: [], stacks: [], write: false, workflows: ["deploy.yml"] },
    production: { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["prod"], write: true, workflows: ["deploy.yml"], after: "production-approval" },
    "drift-dev": { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["dev"], write: false, workflows: ["drift.yml"] },
    "drift-prod": { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["prod"], write: false, workflows: ["drift.yml"] },
};

/**
 * `npm run` scripts a credentialed job of the deploy workflow may run before its credential
 * (main's reviewed code that resolves an input of the deployment, e.g. image digests with
 * registry read access). Every other code in a job with id-token: write could mint the token.
 */
export const PRE_CREDENTIAL_SCRIPTS: string[] = ["images:lock", "images:artifact"];

/**
 * Artifacts an untrusted job writes that a credentialed job may read, and the `npm run` script
 * that must accept them first (downloaded under ${{ runner.temp }}, never into the workspace).
 * The script's behaviour on hostile artifacts is tested in test/workflowScripts.test.ts.
 */
export const ARTIFACT_CHECKS: Record<string, string> = { "images-lock": "images:artifact" };

/**
 * Downloads the workflows make without a committed checksum, each with why it stands.
 * pulumi/actions v7.0.0 has no checksum input (its action.yml at the pinned commit) and fetches
 * the CLI from get.pulumi.com with tc.downloadTool, unchecked (src/libs/pulumi-cli.ts); it skips
 * that download when `pulumi version` on PATH satisfies the requested version. So a step before
 * it installs the CLI checked against the release's own checksums file (PULUMI_CLI_STEP): that
 * catches a corrupt or swapped tarball, not a compromised release, since both files come from
 * one host. No sha256 of the tarball could be read from a source this project reaches, so none
 * is committed. docs/usage.md says so.
 */
export const UNVERIFIED_DOWNLOADS: Record<string, string> = {
    "pulumi/actions": "the Pulumi CLI of .pulumi.version from get.pulumi.com, checked only against the release's own checksums file (same host), without a committed checksum",
};

/**
 * Versions pulumi/actions v7.0.0 downloads over even when `pulumi version` on PATH matches
 * (isKnownBadVersion in src/libs/pulumi-cli.ts at the pinned commit): the step refuses them.
 */
export const ACTION_REDOWNLOADS = ["3.66.0", "3.67.0", "3.67.1", "3.120.0"];

/** The one release host the Pulumi CLI step may name (its `RELEASES` env), and where it installs. */
export const PULUMI_RELEASES = "https://get.pulumi.com/releases/sdk";

export const FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository";
/** The comment the pull-request workflow owns is written by the job's token: this app's login. */
export const COMMENT_AUTHOR = "github-actions[bot]";

const steps = (job: Any): Any[] => job.steps ?? [];
const isAction = (s: Any, name: string) => typeof s.uses === "string" && s.uses.startsWith(`${name}@`);
const triggersOf = (doc: Any): string[] => {
    const on = doc.on ?? doc[true as unknown as string];
    return typeof on === "string" ? [on] : Array.isArray(on) ? on : Object.keys(on ?? {});
};

/** The `${{ }}` expressions in a value (secrets can only be referenced inside one). */
const expressions = (value: unknown): string[] => [...JSON.stringify(value ?? "").matchAll(/\$\{\{([\s\S]*?)\}\}/g)].map((m) => m[1]);

/** Every secret a value references: secrets.X, secrets['X'], secrets["X"]; `null` for a dynamic lookup. */
export function secretRefs(value: unknown): Array<string | null> {
    const out: Array<string | null> = [];
    for (const e of expressions(value)) {
        for (const m of e.matchAll(/\bsecrets\s*(?:\.\s*([\w-]+)|\[\s*(?:\\?["']([\w-]+)\\?["'])?([^\]]*)\])/g)) {
            if (m[1]) out.push(m[1]);
            else if (m[2] && !m[3].trim()) out.push(m[2]);
            else out.push(null);
        }
    }
    return out;
}
const githubTokenRef = (value: unknown) => expressions(value).some((e) => /\bgithub\.token\b|\bsecrets\s*(\.\s*|\[\s*\\?["'])GITHUB_TOKEN/.test(e));

type CodeKind = "install-scripts" | "pr-code" | "main-code";

/**
 * npm's commands that install packages and run their lifecycle scripts, with every alias npm
 * accepts (npm help ci / install / update / rebuild / install-test / install-ci-test).
 */
const NPM_INSTALLS = new Set([
    "ci", "clean-install", "ic", "install-clean", "isntall-clean",
    "install", "add", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall",
    "update", "up", "upgrade", "udpate", "rebuild", "rb",
    "install-test", "it", "install-ci-test", "cit", "clean-install-test", "sit",
]);
/** npm's commands that run the package's own scripts. */
const NPM_RUNS = new Set(["run", "run-script", "rum", "urn", "test", "tst", "t", "start", "stop", "restart"]);
/** Commands that run a package's binary, fetching the package when it is not installed. */
const PACKAGE_RUNNERS = /^(npx|pnpx|bunx)$/;

/** The simple commands of a shell script, with their leading VAR=value assignments split off. */
function commands(script: string): Array<{ assigns: string[]; words: string[] }> {
    return script
        .replace(/\\\n/g, " ")
        .split(/\n|;|&&|\|\||\||\$\(|`|\bthen\b|\bdo\b|\belse\b/)
        .map((c) => c.trim().split(/\s+/).filter(Boolean))
        .map((w) => {
            const assigns: string[] = [];
            while (w.length && /^[A-Za-z_]\w*=/.test(w[0])) assigns.push(w.shift()!);
            while (w.length && /^(sudo|env|time|exec|command|nice|if|!)$/.test(w[0])) w.shift();
            return { assigns, words: w.map((x) => x.replace(/^["']|["']$/g, "")) };
        })
        .filter((c) => c.words.length > 0);
}

/** Whether an npm install command runs lifecycle scripts: the last --ignore-scripts flag decides. */
function npmRunsScripts(words: string[], assigns: string[], env: Record<string, unknown>): boolean {
    let ignore = [...assigns, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].some((a) => /^npm_config_ignore_scripts=(true|1)$/i.test(a));
    for (const w of words) {
        if (w === "--ignore-scripts" || w === "--ignore-scripts=true") ignore = true;
        if (w === "--ignore-scripts=false" || w === "--no-ignore-scripts") ignore = false;
    }
    return !ignore;
}

/** What code a step runs, given whether the job checked out the pull request's code. */
export function codeOf(step: Any, prCode: boolean, env: Record<string, unknown> = {}): { kind: CodeKind; why: string } | null {
    const of = (why: string) => ({ kind: (prCode ? "pr-code" : "main-code") as CodeKind, why });
    if (typeof step.run === "string") {
        const stepEnv = { ...env, ...(step.env ?? {}) };
        let code: { kind: CodeKind; why: string } | null = null;
        for (const { assigns, words } of commands(step.run)) {
            const [cmd, ...args] = words;
            const sub = args.find((a) => !a.startsWith("-"));
            const said = words.join(" ");
            if (cmd === "npm" && sub && NPM_INSTALLS.has(sub) && npmRunsScripts(args, assigns, stepEnv)) return { kind: "install-scripts", why: `\`${said}\` (dependency install scripts)` };
            if (cmd === "npm" && sub && (sub === "exec" || sub === "x")) return { kind: "install-scripts", why: `\`${said}\` (a package's code, fetched when missing)` };
            if (PACKAGE_RUNNERS.test(cmd) || (/^(yarn|pnpm)$/.test(cmd) && sub === "dlx")) return { kind: "install-scripts", why: `\`${said}\` (a package's code, fetched when missing)` };
            if (/^(yarn|pnpm|bun)$/.test(cmd) && (!sub || /^(install|i|add)$/.test(sub)) && !args.includes("--ignore-scripts")) return { kind: "install-scripts", why: `\`${said}\` (dependency install scripts)` };
            if (cmd === "npm" && sub && NPM_RUNS.has(sub)) code ??= of(`\`npm ${sub}\` (the repository's code)`);
        }
        if (code) return code;
        const other = /\b(tsx|node|pulumi\s+(up|preview|destroy|refresh|import))\b|\.github\/scripts\/|(^|[\s;&|(])(bash|sh|source|\.)\s+[\w./$"{}-]+|(^|[\s;&|(])\.\/[\w./-]+|node_modules\/\.bin\//m.exec(step.run);
        if (other) return of(`\`${other[0].trim()}\` (the repository's code)`);
        return null;
    }
    if (typeof step.uses === "string") {
        if (step.uses.startsWith("./")) return of(`${step.uses} (a local action)`);
        if (isAction(step, "pulumi/actions") && step.with?.command) return of(`pulumi ${step.with.command} (the Pulumi program)`);
    }
    return null;
}

/**
 * Whose code a checkout brings into the workspace: the pull request's (or a ref someone names),
 * main's reviewed code, or another repository's files (data; nothing runs them).
 */
function checkoutOf(step: Any, triggers: string[]): { code: "pr" | "main" | "data"; ref?: string } | null {
    if (!isAction(step, "actions/checkout")) return null;
    if (step.with?.repository) return { code: "data" };
    const ref = step.with?.ref === undefined ? undefined : String(step.with.ref);
    if (ref === undefined || ref === "${{ github.sha }}") return { code: triggers.includes("pull_request") ? "pr" : "main", ref };
    if (/^\$\{\{\s*github\.event\.pull_request\.base\.sha\s*\}\}$/.test(ref)) return { code: "main", ref };
    return { code: "pr", ref };
}

/** The exact commits a credentialed job may check out besides its event's own (github.sha). */
const APPROVED_SHAS = [/^\$\{\{\s*github\.event\.workflow_run\.head_sha\s*\}\}$/, /^\$\{\{\s*github\.event\.pull_request\.head\.sha\s*\}\}$/];
/** Contexts whoever opens a pull request, names a branch or dispatches a run chooses. */
const OUTSIDER_NAMED = /\bgithub\.(head_ref|ref_name|actor|triggering_actor)\b|\bgithub\.event\.(pull_request\.(head\.(ref|label)|title|body)|workflow_run\.(head_branch|display_title)|inputs)\b|\binputs\./;
const DISPATCH_INPUT = /\binputs\.|\bgithub\.event\.inputs\b/;

interface Credential { what: string; at: number; persists: boolean }

function credentialsOf(job: Any): Credential[] {
    const out: Credential[] = [];
    const all = steps(job);
    if (job.permissions?.["id-token"] === "write") out.push({ what: "the OpenID Connect token (id-token: write)", at: all.length, persists: true });
    for (const [scope, level] of Object.entries(job.permissions ?? {})) {
        if (level === "write" && scope !== "id-token") out.push({ what: `a GITHUB_TOKEN with ${scope}: write`, at: all.length, persists: true });
    }
    // The job's token handed to a step matters when it can write; a read-only one reads what
    // the job's code can read anyway.
    const writes = Object.entries(job.permissions ?? {}).some(([scope, level]) => level === "write" && scope !== "id-token");
    // Job-level env reaches every step.
    for (const name of secretRefs(job.env)) out.push({ what: `the secret ${name ?? "(dynamic lookup)"} (job env: every step)`, at: all.length, persists: true });
    all.forEach((s, i) => {
        for (const name of secretRefs({ env: s.env, with: s.with, run: s.run })) out.push({ what: `the secret ${name ?? "(dynamic lookup)"}`, at: i, persists: typeof s.run === "string" });
        if (writes && githubTokenRef({ env: s.env, with: s.with, run: s.run })) out.push({ what: "the job's write-scoped GITHUB_TOKEN", at: i, persists: false });
        if (isAction(s, "pulumi/auth-actions")) out.push({ what: "a Pulumi Cloud token", at: i, persists: true });
    });
    return out;
}

/** The stack a Pulumi step works on, from its stack-name. */
const stackOf = (s: Any): string | undefined => /(?:\/|'\{0\}\/)([\w-]+)'?\s*,?\s*vars\.PULUMI_ORG|\{0\}\/([\w-]+)'|\/([\w-]+)$/.exec(String(s.with?.["stack-name"] ?? ""))?.slice(1).find(Boolean);

type Opener = "member" | "fork" | "dependabot" | "renovate";
/** Contexts a pull-request job's `if:` is evaluated in (pull_request, or the workflow_run after it): who opened it from where. */
function prContext(kind: Opener, needsResult = "success"): Context {
    const login = kind === "dependabot" ? "dependabot[bot]" : kind === "renovate" ? "renovate[bot]" : kind === "fork" ? "mallory" : "alice";
    const user = { login, type: kind === "dependabot" || kind === "renovate" ? "Bot" : "User" };
    const repo = { full_name: kind === "fork" ? "mallory/ops" : "acme/ops" };
    const sha = "c".repeat(40);
    return {
        github: {
            repository: "acme/ops",
            actor: login,
            triggering_actor: login,
            event_name: "pull_request",
            ref: "refs/pull/7/merge",
            event: {
                pull_request: { number: 7, head: { repo, sha }, user },
                workflow_run: { id: 99, event: "pull_request", conclusion: "success", head_sha: sha, head_branch: "feature", head_repository: repo, actor: user, triggering_actor: user, pull_requests: kind === "fork" ? [] : [{ number: 7 }] },
            },
        },
        vars: { PULUMI_ORG: "acme", CONFORMANCE_REPOSITORY: "acme/conformance" },
        needs: new Proxy({}, { get: () => ({ result: needsResult, outputs: new Proxy({}, { get: () => "ready" }) }) }) as Any,
    };
}

const mainContext = (ref: string, needsResult = "success"): Context => ({
    github: { repository: "acme/ops", actor: "alice", event_name: "workflow_dispatch", ref, sha: "a".repeat(40) },
    vars: { PULUMI_ORG: "acme" },
    needs: new Proxy({}, { get: () => ({ result: needsResult, outputs: {} }) }) as Any,
});

/** Runs a `run:` script with bash, the given environment and a PATH with stub commands (memoized: the mutation test asks for the same script many times). */
const ran = new Map<string, number>();
function runScript(script: string, env: Record<string, string>, stubs: Record<string, string> = {}): number {
    const key = JSON.stringify([script, env, stubs]);
    if (!ran.has(key)) ran.set(key, runScriptOnce(script, env, stubs));
    return ran.get(key)!;
}
function runScriptOnce(script: string, env: Record<string, string>, stubs: Record<string, string>): number {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wf-step-"));
    try {
        for (const [name, body] of Object.entries(stubs)) fs.writeFileSync(path.join(dir, name), `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });
        const r = spawnSync("bash", ["-e", "-c", script], { env: { PATH: `${dir}:/usr/bin:/bin`, GITHUB_ENV: path.join(dir, "env"), GITHUB_OUTPUT: path.join(dir, "out"), RUNNER_TEMP: dir, ...env }, encoding: "utf8", timeout: 10_000 });
        return r.status ?? 1;
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** The jobs a job needs, transitively. */
function ancestors(jobs: Record<string, Any>, name: string, seen = new Set<string>()): Set<string> {
    const needs = jobs[name]?.needs;
    for (const n of (Array.isArray(needs) ? needs : needs ? [needs] : []) as string[]) {
        if (seen.has(n)) continue;
        seen.add(n);
        ancestors(jobs, n, seen);
    }
    return seen;
}

/** Lines of a run script that may print a variable holding a secret to the log. */
function secretPrints(step: Any): string[] {
    if (typeof step.run !== "string") return [];
    const vars = Object.entries(step.env ?? {}).filter(([, v]) => secretRefs(v).length > 0 || githubTokenRef(v)).map(([k]) => k);
    const out: string[] = [];
    if (vars.length > 0 && /(^|\s)set\s+-[a-z]*x/m.test(step.run)) out.push("set -x traces every command with its arguments");
    for (const line of step.run.split("\n")) {
        for (const v of vars) {
            if (!new RegExp(`\\$\\{?${v}\\b`).test(line)) continue;
            const safe = new RegExp(`^\\s*if \\[ -z "\\$${v}" \\]`).test(line) || new RegExp(`^\\s*printf '%s' "\\$${v}" > "[^"]+"\\s*$`).test(line) || /\bgh api\b/.test(line);
            if (!safe) out.push(line.trim());
        }
    }
    return out;
}

/** Runs the pull-request comment script against a fake API: which comment does it edit? */
async function commentFinderEdits(script: string): Promise<{ updated: number[]; created: number; error?: string }> {
    const marker = /const marker = "([^"]+)"/.exec(script)?.[1] ?? "<!-- none -->";
    const calls = { updated: [] as number[], created: 0 };
    const comments = [
        { id: 1, user: { login: "mallory", type: "User" }, body: `${marker}\nfrom a person` },
        { id: 2, user: { login: "other-app[bot]", type: "Bot" }, body: `${marker}\nfrom another bot` },
        { id: 3, user: { login: COMMENT_AUTHOR, type: "Bot" }, body: `a quote of ${marker}` },
        { id: 4, user: { login: COMMENT_AUTHOR, type: "Bot" }, body: `${marker}\nthe previous report` },
    ];
    const github = {
        paginate: async (_fn: unknown, _args: unknown) => comments,
        rest: { issues: { listComments: () => undefined, updateComment: async (a: Any) => { calls.updated.push(a.comment_id); }, createComment: async () => { calls.created++; } } },
    };
    const context = { repo: { owner: "acme", repo: "ops" }, issue: { number: 7 } };
    const fakeFs = { readFileSync: () => `${marker}\n## report` };
    const req = (m: string) => (m === "fs" ? fakeFs : m === "path" ? path : (() => { throw new Error(`require(${m})`); })());
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor;
    try {
        await new AsyncFunction("require", "github", "context", "process", script)(req, github, context, { env: { RUNNER_TEMP: "/tmp/runner" } });
        return calls;
    } catch (e) {
        return { ...calls, error: (e as Error).message };
    }
}

/** The shell text a step's `run:` writes to $GITHUB_ENV or $GITHUB_PATH, line by line. */
function envFileWrites(run: string): Array<{ file: "GITHUB_ENV" | "GITHUB_PATH"; line: string }> {
    const out: Array<{ file: "GITHUB_ENV" | "GITHUB_PATH"; line: string }> = [];
    for (const line of run.split("\n")) {
        const m = /(>>?|tee\s+(?:-a\s+)?)\s*"?\$\{?(GITHUB_ENV|GITHUB_PATH)\b/.exec(line);
        if (m) out.push({ file: m[2] as "GITHUB_ENV" | "GITHUB_PATH", line: line.trim() });
    }
    return out;
}
/** Variables that change what a later step loads or runs. */
const LOADER_VARS = /^(PATH|NODE_OPTIONS|NODE_PATH|LD_PRELOAD|LD_LIBRARY_PATH|BASH_ENV|ENV|PYTHONPATH|PYTHONSTARTUP|PERL5OPT|RUBYOPT|GIT_\w+|NPM_CONFIG_\w+|npm_config_\w+|PULUMI_HOME|PULUMI_\w*PLUGIN\w*|HOME)$/;
/** The one safe shape of a $GITHUB_ENV write in a credentialed job: NAME=$RUNNER_TEMP/<constant path>. */
const SAFE_ENV_WRITE = /^echo\s+"([A-Z][A-Z0-9_]*)=\$RUNNER_TEMP\/[\w./-]+"\s*>>\s*"\$GITHUB_ENV"$/;

/** Whether `verified` in a script refuses a download whose sha256 differs (run against a file:// base). */
const verifiedRuns = new Map<string, { status: number; stdout: string }>();
function verifiedRefusesBadChecksum(text: string): boolean {
    if (!verifiedRuns.has(text)) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wf-verified-"));
        try {
            const commit = "a".repeat(40);
            fs.mkdirSync(path.join(dir, "raw", "o", "r", commit), { recursive: true });
            fs.writeFileSync(path.join(dir, "raw", "o", "r", commit, "x.yaml"), "kind: X\n");
            fs.writeFileSync(path.join(dir, "script.sh"), text);
            const r = spawnSync("bash", [path.join(dir, "script.sh"), "verified", "o/r", commit, "x.yaml", "f".repeat(64)], { env: { PATH: "/usr/bin:/bin", E2E_RAW_BASE: `file://${path.join(dir, "raw")}` }, encoding: "utf8", timeout: 10_000 });
            verifiedRuns.set(text, { status: r.status ?? 1, stdout: r.stdout });
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    }
    const r = verifiedRuns.get(text)!;
    return r.status !== 0 && r.stdout.trim() === "";
}

/** What the Pulumi CLI step did, run against a file:// release folder of a fake CLI 3.1.4. */
export interface CliStepRun { status: number | null; output: string; installed: boolean; summary: string; sha256: string }

/**
 * Runs a Pulumi CLI step's script against a file:// release folder holding a fake CLI 3.1.4
 * (a tarball whose `pulumi` prints `reports`, v3.1.4 unless told) and the checksums file that
 * `checksums(sha256 of that tarball)` writes; `sudo` is a pass-through and $BIN a temporary folder on PATH (after another
 * folder, which holds a pulumi of the same version when `shadow`).
 */
export function runCliStep(run: string, checksums: (sha256: string) => string, { version = "3.1.4", shadow = false, reports = "v3.1.4" }: { version?: string; shadow?: boolean; reports?: string } = {}): CliStepRun {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "wf-pulumi-cli-"));
    try {
        const [rel, bin, fake, src] = ["rel", "bin", "fake", "src"].map((d) => path.join(root, d));
        for (const d of [rel, bin, fake, path.join(src, "pulumi")]) fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(path.join(root, ".pulumi.version"), `${version}\n`);
        fs.writeFileSync(path.join(src, "pulumi", "pulumi"), `#!/bin/sh\necho ${reports}\n`, { mode: 0o755 });
        fs.writeFileSync(path.join(src, "pulumi", "pulumi-language-nodejs"), "#!/bin/sh\n", { mode: 0o755 });
        fs.writeFileSync(path.join(fake, "sudo"), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
        if (shadow) fs.writeFileSync(path.join(fake, "pulumi"), "#!/bin/sh\necho v3.1.4\n", { mode: 0o755 });
        const tarball = path.join(rel, "pulumi-v3.1.4-linux-x64.tar.gz");
        spawnSync("tar", ["-czf", tarball, "-C", src, "pulumi"]);
        const sha256 = spawnSync("sha256sum", [tarball], { encoding: "utf8" }).stdout.split(" ")[0];
        fs.writeFileSync(path.join(rel, "pulumi-3.1.4-checksums.txt"), checksums(sha256));
        const summary = path.join(root, "summary");
        const r = spawnSync("bash", ["-e", "-c", run], { cwd: root, encoding: "utf8", timeout: 10_000, env: { PATH: `${fake}:${bin}:/usr/bin:/bin`, RELEASES: `file://${rel}`, BIN: bin, GITHUB_STEP_SUMMARY: summary } });
        return { status: r.status, output: r.stdout + r.stderr, installed: fs.existsSync(path.join(bin, "pulumi")), summary: fs.existsSync(summary) ? fs.readFileSync(summary, "utf8") : "", sha256 };
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
}

/**
 * Whether a step is the Pulumi CLI install that pulumi/actions relies on: it names the release
 * host, installs the tarball whose sha256 the checksums file lists (recording it in the job
 * summary), and refuses, with an error and nothing installed, a tarball whose sha256 differs or
 * that the checksums file does not list (nor lists twice), and a version pulumi/actions would
 * download over; and it fails when `pulumi` on PATH is not the binary it checked, or that binary
 * reports another version (pulumi/actions would then run another one or download its own).
 */
const cliRuns = new Map<string, boolean>();
export function pulumiCliStepChecks(step: Any): boolean {
    if (typeof step.run !== "string" || step.env?.RELEASES !== PULUMI_RELEASES) return false;
    const run: string = step.run;
    if (!cliRuns.has(run)) {
        const failed = (r: CliStepRun) => r.status !== 0 && /::error::/.test(r.output) && r.summary === "";
        const refused = (r: CliStepRun) => failed(r) && !r.installed;
        const listed = (sum: string) => `${sum}  pulumi-v3.1.4-linux-x64.tar.gz\n`;
        const good = runCliStep(run, (sum) => `${"0".repeat(64)}  pulumi-v3.1.4-darwin-x64.tar.gz\n${sum}  pulumi-v3.1.4-linux-x64.tar.gz\n`);
        cliRuns.set(run, good.status === 0 && good.installed && good.summary.includes(good.sha256)
            && refused(runCliStep(run, () => `${"f".repeat(64)}  pulumi-v3.1.4-linux-x64.tar.gz\n`))
            && refused(runCliStep(run, (sum) => `${sum}  pulumi-v3.1.4-darwin-x64.tar.gz\n`))
            && refused(runCliStep(run, (sum) => `${"f".repeat(64)}  pulumi-v3.1.4-linux-x64.tar.gz\n${sum}  pulumi-v3.1.4-linux-x64.tar.gz\n`))
            && ACTION_REDOWNLOADS.every((version) => refused(runCliStep(run, () => "", { version })))
            && [{ shadow: true }, { reports: "v3.1.3" }].every((o) => failed(runCliStep(run, listed, o))));
    }
    return cliRuns.get(run)!;
}

/**
 * A shell line that downloads something to use it: curl/wget into a file or into a program
 * (sh, tar, kubectl, ...), wget by default, gh release/run download. A curl whose body goes to
 * /dev/null (an HTTP check) downloads nothing.
 */
function downloads(line: string): boolean {
    if (/\bgh\s+(release|run)\s+download\b/.test(line)) return true;
    if (/\bwget\b/.test(line)) return !/\s(-O|--output-document)[= ]?\s*\/dev\/null\b|\s--spider\b/.test(line);
    if (!/\bcurl\b/.test(line)) return false;
    return /\s-[a-zA-Z]*o\s*(?!\/dev\/null)\S|\s--output[= ]\s*(?!\/dev\/null)\S|\s-[a-zA-Z]*O\b|\s--remote-name\b|\|\s*(sudo\s+)?(ba|z)?sh\b|\|\s*(tar|kubectl|python3?|node|gunzip|unzip|xz|install|tee)\b|>\s*\S/.test(line);
}

const envNameOf = (job: Any): string | undefined => (typeof job?.environment === "string" ? job.environment : job?.environment?.name);
const hasStatusFunction = (cond: unknown) => /\b(success|failure|always|cancelled)\s*\(/.test(String(cond ?? ""));

/** An artifact upload: which job wrote it, and what untrusted content it may hold. */
interface Producer { file: string; job: string; tainted?: string }

export interface Workflows { [file: string]: string }
/** Parsed workflow texts (read only below): a mutation changes one file, the others parse once. */
const parsed = new Map<string, unknown>();

/** Every breach of the policy in a set of workflow files (and the scripts they run). */
export async function securityViolations(files: Workflows, scripts: Workflows = {}): Promise<string[]> {
    const out: string[] = [];
    const docs: Record<string, Any> = {};
    for (const [file, text] of Object.entries(files)) {
        if (!parsed.has(text)) parsed.set(text, YAML.parse(text));
        docs[file] = parsed.get(text) as Any;
    }

    // What untrusted code writes, in every workflow: artifacts (by run and name) and caches.
    const producers = new Map<string, Producer>();
    const jobTaint = new Map<string, string>();
    const cacheWriters: string[] = [];
    for (const [file, doc] of Object.entries(docs)) {
        const triggers = triggersOf(doc);
        for (const [name, job] of Object.entries<Any>(doc.jobs ?? {})) {
            let tainted: string | undefined;
            for (const s of steps(job)) {
                const co = checkoutOf(s, triggers);
                if (co?.code === "pr") tainted ??= `checked out ${co.ref ?? "the pull request's code"}`;
                const c = codeOf(s, co?.code === "pr" || !!tainted, { ...doc.env, ...job.env });
                if (c && c.kind !== "main-code") tainted ??= c.why;
                if (isAction(s, "actions/upload-artifact")) producers.set(`${file}:${s.with?.name ?? "artifact"}`, { file, job: name, tainted });
            }
            if (tainted) jobTaint.set(`${file}:${name}`, tainted);
            const saves = steps(job).filter((s) => (isAction(s, "actions/setup-node") && (s.with?.cache || String(s.with?.["package-manager-cache"]) !== "false")) || isAction(s, "actions/cache") || isAction(s, "actions/cache/save"));
            if (tainted && saves.length > 0) cacheWriters.push(`${file} job ${name} (after ${tainted})`);
        }
    }

    for (const [file, doc] of Object.entries(docs)) {
        const triggers = triggersOf(doc);
        const jobs: Record<string, Any> = doc.jobs ?? {};
        const isPr = triggers.includes("pull_request");
        const isRun = triggers.includes("workflow_run");
        const v = (where: string, what: string) => out.push(`${file}${where ? ` ${where}` : ""}: ${what}`);

        for (const t of ["pull_request_target", "issue_comment"]) if (triggers.includes(t)) v("", `${t} runs with the base repository's secrets for code it did not review`);
        if (JSON.stringify(doc.permissions) !== "{}") v("", "the workflow default permissions must be {}");
        if (secretRefs(doc.env).length > 0) v("", "workflow-level env references secrets: every step of every job sees them");
        const groups = [doc.concurrency, ...Object.values(jobs).map((j) => j.concurrency)].filter(Boolean).map((c) => (typeof c === "string" ? c : String(c.group)));
        for (const g of groups) if (/github\.(run_id|run_number|run_attempt|sha)\b/.test(g)) v("", `the concurrency group ${g} is new for every run: it serializes nothing`);
        for (const g of groups) {
            const named = expressions(g).find((e) => OUTSIDER_NAMED.test(e));
            if (named) v("", `[concurrency] the concurrency group ${g} uses ${named.trim()}, which whoever opens a pull request, names a branch or dispatches a run chooses: it can join (and cancel) another group`);
        }
        if (triggers.includes("schedule") && !doc.concurrency && !Object.values(jobs).every((j) => j.concurrency)) v("", "a scheduled workflow without a concurrency group overlaps itself (and a manual run)");
        // workflow_run: the definition is main's, but what it checks out and downloads is the pull request's.
        if (isRun) {
            for (const [name, job] of Object.entries(jobs)) {
                const env = ENVIRONMENTS[envNameOf(job) ?? ""];
                if ((job.permissions?.["id-token"] === "write" || secretRefs(job).length > 0 || Object.values(job.permissions ?? {}).includes("write")) && !env?.reviewers) v(`job ${name}`, "workflow_run runs with the base repository's credentials for a pull request's commit: only behind a reviewer's approval");
            }
        }

        for (const [name, job] of Object.entries(jobs)) {
            const where = `job ${name}`;
            const all = steps(job);
            if (!job.permissions || typeof job.permissions !== "object") v(where, "no permissions block: the job gets the repository's default token");
            if (job.uses) v(where, "calls a reusable workflow, which this model does not follow: model it before using one");
            const envName = envNameOf(job);
            const env = envName ? ENVIRONMENTS[envName] : undefined;
            if (envName && !env) v(where, `environment ${envName} is not one of the documented environments`);
            if (env && !env.workflows.includes(file)) v(where, `environment ${envName} belongs to ${env.workflows.join(", ")}, not this workflow`);

            // Which steps run which code.
            let prCode = false;
            const checkouts: Array<{ i: number; ref?: string; code: string }> = [];
            const code = all.map((s, i) => {
                const co = checkoutOf(s, triggers);
                if (co) checkouts.push({ i, ...co });
                if (co?.code === "pr") prCode = true;
                return codeOf(s, prCode, { ...doc.env, ...job.env });
            });
            const creds = credentialsOf(job);
            const credentialed = creds.length > 0 || !!env;

            // Each credential against each untrusted step.
            code.forEach((c, i) => {
                if (!c || c.kind === "main-code") return;
                for (const cred of creds) {
                    if (!(i <= cred.at || cred.persists)) continue;
                    const script = /^\s*npm run(?:\s+-\S+)*\s+([\w:.-]+)/.exec(all[i].run ?? "")?.[1];
                    const readOnlyPreview = c.kind === "pr-code" && env && !env.write && env.stacks.length > 0 && !/GITHUB_TOKEN/.test(cred.what);
                    if (readOnlyPreview && ((isAction(all[i], "pulumi/actions") && all[i].with?.command === "preview") || (script && PRE_CREDENTIAL_SCRIPTS.includes(script)))) continue;
                    v(where, `${c.kind === "install-scripts" ? "[install] " : ""}${c.why} in step ${i + 1} can reach ${cred.what}`);
                }
            });

            // Secrets come from the job's environment, by name.
            for (const ref of secretRefs(job.env)) {
                if (ref === null || !env || !env.secrets.includes(ref)) v(where, `job-level env uses the secret ${ref ?? "(dynamic lookup)"}, not a documented secret of its environment`);
            }
            for (const [i, s] of all.entries()) {
                for (const ref of secretRefs({ env: s.env, with: s.with, run: s.run, if: s.if })) {
                    if (ref === null) v(where, `step ${i + 1} looks a secret up by an expression: every repository secret is sent to the runner`);
                    else if (!env) v(where, `step ${i + 1} uses the secret ${ref} outside an environment (a repository secret: any branch's workflow can read it)`);
                    else if (!env.secrets.includes(ref)) v(where, `step ${i + 1} uses the secret ${ref}, which is not a documented secret of the environment ${envName}`);
                }
                for (const line of secretPrints(s)) v(where, `step ${i + 1} may print a secret to the log: ${line}`);
                if (typeof s.run === "string" && s.run.includes("${{")) v(where, `step ${i + 1} expands an expression inside its script (template injection): pass it through env`);
                if (typeof s.with?.script === "string" && s.with.script.includes("${{")) v(where, `step ${i + 1} expands an expression inside its github-script (template injection)`);
                if (isAction(s, "actions/checkout") && s.with?.["persist-credentials"] !== false && s.with?.["persist-credentials"] !== "false") v(where, `step ${i + 1}: actions/checkout leaves the token in .git/config (persist-credentials: false is missing)`);
                const cliStep = s.env?.RELEASES === PULUMI_RELEASES && pulumiCliStepChecks(s);
                const fetched = JSON.stringify({ run: s.run ?? "", env: cliStep ? { ...s.env, RELEASES: "" } : s.env ?? {} }).replace(/\\"https:\/\/\$[\w]+[^"\\]*\\"/g, "");
                if (/https?:\/\//.test(fetched)) v(where, `step ${i + 1} fetches a URL: remote files come through .github/scripts with a commit and a sha256`);
                if (typeof s.run === "string" && !/sha256sum\s+(-c|--check)\b/.test(s.run)) {
                    for (const line of s.run.split("\n").filter(downloads)) v(where, `[checksum] step ${i + 1} downloads a file and uses it without checking a sha256: ${line.trim()}`);
                }
                if (isAction(s, "pulumi/actions")) {
                    const why = s.with?.["pulumi-version-file"] !== ".pulumi.version" || s.with?.["pulumi-version"] !== undefined ? "it is not given pulumi-version-file: .pulumi.version (the version the checked step installs)" : !all.slice(0, i).some(pulumiCliStepChecks) ? `no earlier step installs the CLI checked against its release's sha256 (RELEASES: ${PULUMI_RELEASES}, refusing a tarball whose sha256 differs)` : "";
                    if (why) v(where, `[checksum] step ${i + 1}: pulumi/actions downloads the Pulumi CLI without a checksum: ${why}`);
                }
                if (s["continue-on-error"] && code[i] === null && !isAction(s, "pulumi/actions")) v(where, `[status] step ${i + 1} has continue-on-error: its failure (a refused check) no longer stops the job`);
            }
            if (creds.some((c) => /GITHUB_TOKEN with/.test(c.what)) && (prCode || code.some(Boolean))) v(where, "a job with a write-scoped GITHUB_TOKEN runs code");

            // The OpenID Connect token: only in an environment (its subject names it), and the only
            // code in its job is the Pulumi program (and the listed pre-credential scripts).
            if (job.permissions?.["id-token"] === "write") {
                if (!env) v(where, "id-token: write outside an environment: its subject (ref or pull_request) is not bound to reviewed settings");
                code.forEach((c, i) => {
                    if (!c || isAction(all[i], "pulumi/actions")) return;
                    const script = /^\s*npm run(?:\s+-\S+)*\s+([\w:.-]+)/.exec(all[i].run ?? "")?.[1];
                    if (c.kind !== "install-scripts" && script && PRE_CREDENTIAL_SCRIPTS.includes(script)) return;
                    v(where, `${c.kind === "install-scripts" ? "[install] " : ""}${c.why} in step ${i + 1} runs in a job whose every step can mint the OpenID Connect token`);
                });
            }

            // Pulumi steps: the stack is one the environment's team may touch, as it may touch it.
            for (const s of all.filter((x) => isAction(x, "pulumi/actions") && x.with?.command)) {
                const stack = stackOf(s);
                const writes = s.with.command !== "preview";
                if (!env) { v(where, "runs pulumi outside an environment"); continue; }
                if (!stack || !env.stacks.includes(stack)) v(where, `pulumi ${s.with.command} of ${stack ?? "an unknown stack"} with the team of ${envName} (stacks ${env.stacks.join(", ") || "none"})`);
                if (writes !== env.write) v(where, `pulumi ${s.with.command} with the ${env.write ? "write" : "read-only"} team of ${envName}`);
                if (stack === "prod" && prCode && !env.reviewers) v(where, "the pull request's program gets a credential that can decrypt prod without a reviewer's approval");
                if (s.with["github-token"] !== "") v(where, "pulumi/actions gets the job's GITHUB_TOKEN (set github-token: \"\")");
                if (githubTokenRef(s.env)) v(where, "the program gets the job's GITHUB_TOKEN in its environment");
            }

            // Pull requests (and the workflow_run after one): forks and bots get no credential, members do.
            if ((isPr || isRun) && credentialed) {
                for (const kind of ["fork", "dependabot", "renovate"] as const) {
                    let r: boolean;
                    try { r = runs(job.if, prContext(kind), {}); } catch (e) { r = true; v(where, `if: cannot be evaluated: ${(e as Error).message}`); }
                    if (r) v(where, `runs with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`} for a pull request from ${kind === "fork" ? "a fork" : `the bot ${kind}`}`);
                }
                try { if (!runs(job.if, prContext("member"), {})) v(where, "never runs for a member's pull request: the guard is not the fork guard"); } catch { /* reported above */ }
            }

            if (credentialed) {
                // [checkout-ref] / [approval]: a credentialed job runs the commit it was started (or approved) for.
                for (const c of checkouts) {
                    if (c.code === "data" || c.ref === undefined || c.ref === "${{ github.sha }}" || c.code === "main") continue;
                    if (DISPATCH_INPUT.test(c.ref)) v(where, `[dispatch-input] step ${c.i + 1} checks out ${c.ref}, a ref whoever dispatches the run chooses, with the job's credential`);
                    else if (!APPROVED_SHAS.some((re) => re.test(c.ref!))) v(where, `[checkout-ref] step ${c.i + 1} checks out ${c.ref}: a name that can move between the approval and the checkout, or that someone else picks; check out the approved commit's SHA`);
                    // In a pull_request job the head commit is the code the default checkout brings anyway.
                    else if (!isPr) {
                        if (!env?.reviewers) v(where, `[approval] step ${c.i + 1} checks out a pull request's commit (${c.ref}) with a credential and no reviewer's approval`);
                        else if (!String(job.name ?? "").includes(c.ref)) v(where, `[approval] the job's name does not show the commit it checks out (${c.ref}): the approval prompt does not say what gets the credential`);
                    }
                }
                // [approval]: "Prevent self-review" stops whoever triggered the run, not the pull request's author.
                if (env?.reviewers && prCode && isRun) {
                    const check = all.findIndex((s) => typeof s.run === "string" && /actions\/runs\/\S*\/approvals/.test(s.run));
                    const auth = all.findIndex((s) => isAction(s, "pulumi/auth-actions"));
                    if (check < 0 || (auth >= 0 && check > auth)) v(where, "[approval] no check, before the credential, that the approver is not the pull request's author (Prevent self-review only stops whoever triggered the run)");
                    else {
                        const base = { GH_TOKEN: "t", REPO: "acme/ops", RUN_ID: "99", PR: "7" };
                        const gh = (approvers: string) => `case "$*" in *pulls/*) echo alice ;; *approvals*) echo "${approvers}" ;; *) exit 3 ;; esac`;
                        if (runScript(all[check].run, base, { gh: gh("bob") }) !== 0) v(where, "[approval] the approval check refuses another reviewer's approval");
                        if (runScript(all[check].run, base, { gh: gh("bob alice") }) === 0) v(where, "[approval] the approval check lets the pull request's author approve its prod preview");
                        if (runScript(all[check].run, base, { gh: 'echo "gh: HTTP 502" >&2; exit 1' }) === 0) v(where, "[fail-open] the approval check passes when the API call fails: it must fail closed");
                        if (runScript(all[check].run, base, { gh: gh("") }) === 0) v(where, "[fail-open] the approval check passes when the API names no approver");
                        if (runScript(all[check].run, { ...base, PR: "" }, { gh: gh("bob") }) === 0) v(where, "[fail-open] the approval check passes for a run that names no pull request");
                        if (all[check]["continue-on-error"]) v(where, "[fail-open] the approval check has continue-on-error");
                    }
                }
                if (isPr && env?.reviewers && prCode) v(where, "[approval] the approved job's definition comes from the pull request's own workflow file: run it on workflow_run (main's definition) for the approved commit");

                // [dispatch-input]: nothing a dispatcher types reaches a credentialed job.
                const inputs = [job.if, job.environment, job.concurrency, job.env, ...all.map((s) => ({ if: s.if, with: s.with, env: s.env }))].flatMap((x) => (typeof x === "string" ? [x] : expressions(x)));
                for (const e of inputs) if (DISPATCH_INPUT.test(e)) v(where, `[dispatch-input] ${e.trim()} (chosen by whoever dispatches the run) reaches a job with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`}`);

                // [job-output]: outputs of a job that ran untrusted code decide nothing here.
                for (const e of [job.if, job.environment, job.env, ...all.map((s) => ({ if: s.if, with: s.with, env: s.env }))].flatMap((x) => (typeof x === "string" ? [x] : expressions(x)))) {
                    for (const m of e.matchAll(/\bneeds\.([\w-]+)\.outputs\b/g)) {
                        const tainted = jobTaint.get(`${file}:${m[1]}`);
                        if (tainted) v(where, `[job-output] needs.${m[1]}.outputs is written by job ${m[1]} after ${tainted}, and read by a job with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`}`);
                    }
                }

                // [cache]: no cache restored where a credential is, since untrusted jobs save them.
                for (const [i, s] of all.entries()) {
                    const what = isAction(s, "actions/setup-node") ? (s.with?.cache ? `the ${s.with.cache} cache (setup-node cache: ${s.with.cache})` : String(s.with?.["package-manager-cache"]) !== "false" ? "the npm cache (setup-node turns caching on by itself when package.json names npm as its package manager; package-manager-cache: false is missing)" : "") : isAction(s, "actions/cache") || isAction(s, "actions/cache/restore") ? `the cache ${s.with?.key ?? ""}` : "";
                    if (what) v(where, `[cache] step ${i + 1} restores ${what}, which untrusted code can write (${cacheWriters.join("; ") || "any job that installs with scripts"}), into a job with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`}`);
                }

                // [env-file]: $GITHUB_ENV / $GITHUB_PATH decide what every later step loads.
                for (const [i, s] of all.entries()) {
                    if (typeof s.run !== "string") continue;
                    for (const w of envFileWrites(s.run)) {
                        const m = SAFE_ENV_WRITE.exec(w.line);
                        if (w.file === "GITHUB_PATH") v(where, `[env-file] step ${i + 1} adds to $GITHUB_PATH (${w.line}): every later step, the credentialed ones too, runs commands from a folder it did not install`);
                        else if (!m || LOADER_VARS.test(m[1])) v(where, `[env-file] step ${i + 1} writes $GITHUB_ENV from something other than a constant path of its own (${w.line}): every later step with the credential reads it`);
                    }
                }

                // [artifact]: an artifact untrusted code wrote is data: outside the workspace, checked, then copied in.
                for (const [i, s] of all.entries()) {
                    if (!isAction(s, "actions/download-artifact")) continue;
                    const name = s.with?.name;
                    if (!name) { v(where, `[artifact] step ${i + 1} downloads every artifact of the run (no name)`); continue; }
                    const otherRun = s.with?.["run-id"] !== undefined && s.with["run-id"] !== "${{ github.run_id }}";
                    const p = producers.get(`${file}:${name}`);
                    const tainted = otherRun ? `another run (${s.with["run-id"]}), whose workflow file the pull request controls` : !p ? "no job of this workflow (unknown writer)" : p.tainted ? `job ${p.job} after ${p.tainted}` : undefined;
                    if (!tainted) continue;
                    const dest = String(s.with?.path ?? "");
                    const sub = /^\$\{\{\s*runner\.temp\s*\}\}\/([\w.-]+)$/.exec(dest)?.[1];
                    if (!sub) { v(where, `[artifact] step ${i + 1} downloads ${name} (written by ${tainted}) into the workspace (path: ${dest || "the default"}), where the next step's code reads whatever it holds`); continue; }
                    const readers = all.map((x, j) => ({ x, j })).filter(({ x, j }) => j > i && JSON.stringify({ run: x.run, with: x.with, env: x.env }).includes(sub));
                    const check = ARTIFACT_CHECKS[name];
                    const first = readers[0];
                    const checked = first && check && new RegExp(`^\\s*npm run(?:\\s+-\\S+)*\\s+${check.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s+--\\s+"\\$RUNNER_TEMP/${sub}"\\s+\\S+\\s*$`).test(first.x.run ?? "");
                    if (!checked) v(where, `[artifact] ${name} (written by ${tainted}) is used ${first ? `by step ${first.j + 1}` : "nowhere"} without its check (${check ? `npm run ${check}` : "no check is defined"}) first`);
                    for (const r of readers.slice(checked ? 1 : 0)) v(where, `[artifact] step ${r.j + 1} reads the downloaded ${name} itself instead of the checked copy`);
                    const auth = all.findIndex((x) => isAction(x, "pulumi/auth-actions"));
                    if (checked && auth >= 0 && first.j > auth) v(where, `[artifact] ${name} is checked after the credential is exchanged`);
                }

                // [status]: a job past a guard, an approval or a check runs only when they succeeded.
                const anc = [...ancestors(jobs, name)];
                if (anc.length > 0) {
                    const failed = isPr || isRun ? prContext("member", "failure") : mainContext("refs/heads/main", "failure");
                    let r = false;
                    try { r = hasStatusFunction(job.if) && runs(job.if, failed, { success: false, failure: true }); } catch { /* reported elsewhere */ }
                    if (r) v(where, `[status] runs when a job it needs (${anc.join(", ")}) failed or was rejected: if: ${job.if}`);
                    for (const n of anc) {
                        if (jobs[n]?.["continue-on-error"]) v(where, `[status] needs ${n}, whose continue-on-error turns a failure (a rejected approval, a refused ref) into success`);
                        steps(jobs[n] ?? {}).forEach((s, i) => { if (s["continue-on-error"]) v(`job ${n}`, `[status] step ${i + 1} has continue-on-error, and job ${name} (credentialed) depends on its result`); });
                    }
                }
                if (job["continue-on-error"]) v(where, "[status] continue-on-error on a credentialed job");
            }

            // Environments restricted to main: the job refuses other refs, and deploys only main's head.
            if (env?.branches === "main") {
                if (runs(job.if, mainContext("refs/heads/feature"))) v(where, `runs in ${envName} for another ref than main (if: ${job.if ?? "absent"})`);
            }
            if (env?.write) {
                const check = all.findIndex((s) => typeof s.run === "string" && /gh api/.test(s.run));
                const auth = all.findIndex((s) => isAction(s, "pulumi/auth-actions"));
                if (check < 0 || check > auth) v(where, "no check that the commit is still the head of main before the credential");
                else {
                    const sha = "a".repeat(40);
                    const base = { SHA: sha, REPO: "acme/ops", GH_TOKEN: "t" };
                    const stale = runScript(all[check].run, base, { gh: `echo ${"b".repeat(40)}` });
                    const fresh = runScript(all[check].run, base, { gh: `echo ${sha}` });
                    const down = runScript(all[check].run, base, { gh: 'echo "gh: HTTP 502" >&2; exit 1' });
                    const empty = runScript(all[check].run, base, { gh: "exit 0" });
                    if (stale === 0) v(where, "the head-of-main check lets an old commit deploy (re-running an old run redeploys it)");
                    if (fresh !== 0) v(where, "the head-of-main check refuses the head of main");
                    if (down === 0) v(where, "[fail-open] the head-of-main check passes when the API call fails: it must fail closed");
                    if (empty === 0) v(where, "[fail-open] the head-of-main check passes when the API answers nothing");
                    if (all[check]["continue-on-error"]) v(where, "[fail-open] the head-of-main check has continue-on-error");
                }
                const c = job.concurrency;
                if (!c || typeof c !== "object" || /\$\{\{/.test(String(c.group)) || c["cancel-in-progress"] !== false) v(where, "changes a stack without its own constant, never-cancelled concurrency group");
                if (doc.concurrency) v("", "a workflow-level concurrency group is held while a deployment waits for approval");
                if (env.after && ![...ancestors(jobs, name)].some((n) => envNameOf(jobs[n]) === env.after)) v(where, `starts without the approval job (environment ${env.after})`);
            }
            if (env?.reviewers && job.concurrency) v(where, `waits for a reviewer while holding the concurrency group ${JSON.stringify(job.concurrency)}`);
        }

        // Deploy and drift accept manual dispatches: a guard job refuses other refs before any credential.
        if (triggers.includes("workflow_dispatch") && Object.values(jobs).some((j) => ENVIRONMENTS[envNameOf(j) ?? ""]?.write)) {
            const guard = jobs["main-only"];
            if (!guard) v("", "no main-only guard job");
            else {
                const script = steps(guard).map((s) => s.run ?? "").join("\n");
                if (runScript(script, { REF: "refs/heads/feature" }) === 0) v("job main-only", "lets another ref than main through");
                if (runScript(script, { REF: "refs/heads/main" }) !== 0) v("job main-only", "refuses main");
                if (guard["continue-on-error"] || steps(guard).some((s) => s["continue-on-error"])) v("job main-only", "[status] continue-on-error turns the guard into a warning");
                if (steps(guard)[0]?.env?.REF !== "${{ github.ref }}") v("job main-only", "does not check github.ref");
                for (const [name, job] of Object.entries(jobs)) {
                    if (ENVIRONMENTS[envNameOf(job) ?? ""] && !ancestors(jobs, name).has("main-only")) v(`job ${name}`, "does not need main-only");
                }
            }
        }

        // The job that writes to pull requests edits only its own comment.
        for (const [name, job] of Object.entries(jobs)) {
            if (job.permissions?.["pull-requests"] !== "write") continue;
            for (const s of steps(job).filter((x) => isAction(x, "actions/github-script"))) {
                const r = await commentFinderEdits(String(s.with?.script ?? ""));
                if (r.error) v(`job ${name}`, `the comment script fails: ${r.error}`);
                else if (JSON.stringify(r.updated) !== "[4]" || r.created !== 0) v(`job ${name}`, `the comment finder edits comments ${JSON.stringify(r.updated)} (created ${r.created}); only ${COMMENT_AUTHOR}'s comment starting with the marker is its own`);
            }
        }
    }

    // Scripts the workflows run: remote files only at a commit, checked against a sha256.
    for (const [file, text] of Object.entries(scripts)) {
        for (const line of text.split("\n")) {
            if (/^\s*#/.test(line)) continue;
            if (/https?:\/\//.test(line) && !/^RAW_BASE=\$\{E2E_RAW_BASE:-https:\/\/raw\.githubusercontent\.com\}$/.test(line.trim())) out.push(`${file}: fetches a URL outside the verified download: ${line.trim()}`);
            if (/\bverified\s/.test(line) && !/^\s*(verified\)|verified\(\))/.test(line) && !/verified [\w/.-]+ "\$\w+" \S+ (\S+|"\$sum")\)?$/.test(line.trim().replace(/\)"?$/, ")"))) out.push(`${file}: a download without a commit and sha256: ${line.trim()}`);
            for (const { words } of commands(line)) if (/^(curl|wget)$/.test(words[0]) && !/^\s*curl -fsSL --retry 3 -o "\$out" "\$RAW_BASE\/\$repo\/\$commit\/\$file"$/.test(line)) out.push(`${file}: [checksum] ${words[0]} outside the verified download: ${line.trim()}`);
        }
        for (const m of text.matchAll(/^(\w+)=(\S+)\s*#/gm)) if (/^[A-Z_]+$/.test(m[1]) && m[1] !== "RAW_BASE" && !/^[0-9a-f]{40}$/.test(m[2])) out.push(`${file}: ${m[1]} is not a commit (40 hex digits): ${m[2]}`);
        for (const m of text.matchAll(/^([\w./-]+\.yaml) (\S+)$/gm)) if (!/^[0-9a-f]{64}$/.test(m[2])) out.push(`${file}: ${m[1]} has no sha256`);
        for (const m of text.matchAll(/verified [\w/.-]+ "\$\w+" [\w/.-]+ (\S+?)\)?$/gm)) if (!/^([0-9a-f]{64}|"\$sum")$/.test(m[1])) out.push(`${file}: a download with the checksum ${m[1]}`);
        if (/^verified\(\)/m.test(text) && !verifiedRefusesBadChecksum(text)) out.push(`${file}: [checksum] verified hands on a download whose sha256 does not match (run against a file:// copy)`);
    }
    return out;
}
