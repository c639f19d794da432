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
 * Every finding starts with its class in brackets, e.g. `[artifact]`, so a mutation test can
 * require that a change is caught for the reason its class names (FINDING_CLASSES). Where a check
 * depends on what a step does (a guard, an approval check, the GitHub API's answers), the model
 * runs the step's script with the environment its `env:` gives it, against a `gh` that answers
 * each API query from fixtures shaped like GitHub's answers and evaluates the query's `--jq` with
 * a real jq (ghApiStub), never by matching its text.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { Context, interpolate, runs } from "./workflowExpr";

type Any = Record<string, any>;

/** The classes a finding can start with. */
export const FINDING_CLASSES = [
    "action", "approval", "artifact", "cache", "checkout-ref", "checksum", "code", "comment", "concurrency", "dispatch-input",
    "env-file", "environment", "fail-open", "fetch", "fork", "injection", "install", "job-output", "log", "oidc", "permissions",
    "plugins", "ref", "secret", "stack", "status", "token", "trigger",
] as const;

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

export type Environments = Record<string, EnvironmentPolicy>;

export const ENVIRONMENTS: Record<string, EnvironmentPolicy> = {
    conformance: { reviewers: true, branches: "any", secrets: ["CONFORMANCE_READ_TOKEN"], stacks: [], write: false, workflows: ["pull-request.yml"] },
    "preview-dev": { reviewers: false, branches: "any", secrets: ["KUBECONFIG"], stacks: ["dev"], write: false, workflows: ["pull-request.yml"] },
    "preview-prod": { reviewers: true, branches: "main", secrets: ["KUBECONFIG"], stacks: ["prod"], write: false, workflows: ["preview-prod.yml"], workflowRef: "preview-prod.yml" },
    dev: { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["dev"], write: true, workflows: ["deploy.yml"], workflowRef: "deploy.yml" },
    "production-approval": { reviewers: true, branches: "main", secrets: [], stacks: [], write: false, workflows: ["deploy.yml"] },
    production: { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["prod"], write: true, workflows: ["deploy.yml"], after: "production-approval", workflowRef: "deploy.yml" },
    "drift-dev": { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["dev"], write: false, workflows: ["drift.yml"], workflowRef: "drift.yml" },
    "drift-prod": { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["prod"], write: false, workflows: ["drift.yml"], workflowRef: "drift.yml" },
};

/**
 * The actions a job holding a credential may run: GitHub's own and Pulumi's, each pinned by commit
 * (test/workflows.test.ts checks the pins; against the projects' repositories with
 * OPS_PIN_MIRRORS). Any other action near a credential runs its author's code with it, whatever
 * its pin: add it here only after reading it.
 */
export const CREDENTIAL_ACTIONS = ["actions/checkout", "actions/setup-node", "actions/download-artifact", "actions/upload-artifact", "actions/github-script", "pulumi/auth-actions", "pulumi/actions"];

/** The step that installs the provider plugins from checked sources (.github/scripts/provider-plugins.ts). */
export const PLUGINS_SCRIPT = "provider-plugins";
/** Set on every pulumi step: a plugin the checked step did not install fails it instead of being downloaded. */
export const NO_PLUGIN_DOWNLOADS = "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION";

/**
 * `npm run` scripts a credentialed job of the deploy workflow may run before its credential
 * (main's reviewed code that resolves an input of the deployment, e.g. image digests with
 * registry read access). Every other code in a job with id-token: write could mint the token.
 */
export const PRE_CREDENTIAL_SCRIPTS: string[] = ["images:lock", "images:artifact", PLUGINS_SCRIPT];

/**
 * Artifacts an untrusted job writes that a credentialed job may read, and the `npm run` script
 * that must accept them first (downloaded under ${{ runner.temp }}, never into the workspace).
 * The script's behaviour on hostile artifacts is tested in test/workflowScripts.test.ts.
 */
export const ARTIFACT_CHECKS: Record<string, string> = { "images-lock": "images:artifact" };

/**
 * Everything the workflows download that no checksum recorded in this repository checks, each with
 * what checks it instead. The rest is checked: actions by their pinned commit, npm packages by the
 * lock file's integrity hashes (no install script runs: `npm ci --ignore-scripts` everywhere), Go
 * modules and toolchains by the Go checksum database, the e2e manifests by the sha256 in
 * .github/scripts/e2e-manifests.sh, artifacts by the scripts of ARTIFACT_CHECKS. docs/usage.md
 * lists the same. ACTION_DOWNLOADS says what each action downloads.
 */
export const UNVERIFIED_DOWNLOADS: Record<string, string> = {
    "pulumi/actions": "the Pulumi CLI of .pulumi.version from get.pulumi.com (the step before pulumi/actions installs it, so pulumi/actions downloads nothing), checked only against the release's own checksums file (same host), without a committed checksum",
    "provider plugins random and tls": "the release tarballs of pulumi-resource-random and pulumi-resource-tls from get.pulumi.com (npm run provider-plugins), checked against the checksums file of the same tag's GitHub release (another host; SHA-1, as Pulumi's publish workflow writes it), without a committed checksum: the tags are newer than any copy of those repositories reachable here, and their provider modules cannot be built from the Go module proxy (a shim module replaced by a folder of the repository)",
    "actions/setup-node": "Node.js 24, from the runner image's tool cache; when the cache has no 24.x, setup-node v7.0.0 downloads it without a checksum (src/distributions/base-distribution.ts at the pinned commit has no checksum check)",
    "helm/kind-action": "kind and kubectl (e2e only, no credential), each checked against a sha256 file from the same host (kind.sh at the pinned commit)",
    "ci stack images": "the container images of Pulumi.ci.yaml, pulled by tag inside the e2e kind cluster (no credential); prod's are pinned by digest (images.lock.json)",
};

/** What each action the workflows use downloads besides its own pinned code, and what checks it. */
export const ACTION_DOWNLOADS: Record<string, string> = {
    "actions/checkout": "this repository's commits (git object ids)",
    "actions/setup-node": "see UNVERIFIED_DOWNLOADS",
    "actions/download-artifact": "this repository's artifacts: data, checked by ARTIFACT_CHECKS",
    "actions/upload-artifact": "nothing",
    "actions/github-script": "nothing",
    "helm/kind-action": "see UNVERIFIED_DOWNLOADS",
    "pulumi/auth-actions": "nothing (a token exchange)",
    "pulumi/actions": "the Pulumi CLI unless a pulumi of the version is on PATH: see UNVERIFIED_DOWNLOADS",
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
export function prContext(kind: Opener, needsResult = "success", pullRequests?: Array<{ number: number }>, needsOutputs: Record<string, string> = {}): Context {
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
            token: "t",
            run_id: 99,
            server_url: "https://github.com",
            event: {
                pull_request: { number: 7, head: { repo, sha }, user },
                workflow: { name: "pull request", path: ".github/workflows/pull-request.yml" },
                workflow_run: { id: 99, event: "pull_request", conclusion: "success", head_sha: sha, head_branch: "feature", head_repository: repo, actor: user, triggering_actor: user, pull_requests: pullRequests ?? (kind === "fork" ? [] : [{ number: 7 }]) },
            },
        },
        vars: { PULUMI_ORG: "acme", CONFORMANCE_REPOSITORY: "acme/conformance" },
        needs: new Proxy({}, { get: () => ({ result: needsResult, outputs: new Proxy({}, { get: (_, k) => needsOutputs[String(k)] ?? "ready" }) }) }) as Any,
    };
}

const mainContext = (ref: string, needsResult = "success"): Context => ({
    github: { repository: "acme/ops", actor: "alice", event_name: "workflow_dispatch", ref, sha: "a".repeat(40), token: "t", run_id: 98 },
    vars: { PULUMI_ORG: "acme" },
    needs: new Proxy({}, { get: () => ({ result: needsResult, outputs: {} }) }) as Any,
});

/** Runs a `run:` script with bash, the given environment and a PATH with stub commands (memoized: the mutation test asks for the same script many times). */
const ran = new Map<string, ScriptRun>();
interface ScriptRun { status: number; outputs: Record<string, string>; log: string }
function runScript(script: string, env: Record<string, string>, stubs: Record<string, string> = {}): number {
    return runScriptFull(script, env, stubs).status;
}
export function runScriptFull(script: string, env: Record<string, string>, stubs: Record<string, string> = {}): ScriptRun {
    const key = JSON.stringify([script, env, stubs]);
    if (!ran.has(key)) ran.set(key, runScriptOnce(script, env, stubs));
    return ran.get(key)!;
}
function runScriptOnce(script: string, env: Record<string, string>, stubs: Record<string, string>): ScriptRun {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wf-step-"));
    try {
        for (const [name, body] of Object.entries(stubs)) fs.writeFileSync(path.join(dir, name), `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });
        // The runner's default shell for `run:` on Linux: bash --noprofile --norc -eo pipefail {0}.
        const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], { env: { PATH: `${dir}:/usr/bin:/bin`, GITHUB_ENV: path.join(dir, "env"), GITHUB_OUTPUT: path.join(dir, "out"), RUNNER_TEMP: dir, ...env }, encoding: "utf8", timeout: 10_000 });
        const outputs: Record<string, string> = {};
        try {
            for (const line of fs.readFileSync(path.join(dir, "out"), "utf8").split("\n")) { const m = /^([\w-]+)=(.*)$/.exec(line); if (m) outputs[m[1]] = m[2]; }
        } catch { /* no outputs */ }
        return { status: r.status ?? 1, outputs, log: r.stdout + r.stderr };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** A step's `env:` as the runner gives it to the script: each value's expressions evaluated in `ctx`. */
export function stepEnv(step: Any, job: Any, doc: Any, ctx: Context): Record<string, string> {
    const out: Record<string, string> = {};
    for (const scope of [doc.env, job.env, step.env]) for (const [k, v] of Object.entries(scope ?? {})) out[k] = interpolate(v, ctx);
    return out;
}

/** An API answer of a fixture: a JSON body, or an HTTP error as `gh` reports it. */
export type GhAnswer = unknown | { httpStatus: number; message: string };
const isError = (a: GhAnswer): a is { httpStatus: number; message: string } => !!a && typeof a === "object" && "httpStatus" in (a as object);

/**
 * A `gh` for `gh api <endpoint> [--jq <query>]` that answers each endpoint from `fixtures` (JSON
 * bodies shaped like GitHub's REST answers) and evaluates the query with jq, printing what gh
 * prints (go-gh's jq.Evaluate: a string raw, null as an empty line, a boolean or an integer as
 * text, an array or object as compact JSON). An endpoint without a fixture answers 404 as gh does
 * (exit 1), an error fixture its status; an invalid query fails. Any other gh command fails.
 */
export function ghApiStub(fixtures: Record<string, GhAnswer>): string {
    const cases = Object.entries(fixtures).map(([endpoint, answer]) => isError(answer)
        ? `  ${JSON.stringify(endpoint)}) echo ${JSON.stringify(`gh: ${answer.message} (HTTP ${answer.httpStatus})`)} >&2; exit 1 ;;`
        : `  ${JSON.stringify(endpoint)}) body=${shellQuote(JSON.stringify(answer))} ;;`);
    return [
        "set -o pipefail",
        '[ "${1:-}" = api ] || { echo "gh stub: only gh api is answered, not: $*" >&2; exit 2; }',
        "shift",
        'endpoint=""; query=""',
        'while [ "$#" -gt 0 ]; do',
        '  case "$1" in',
        '    --jq|-q) query=$2; shift 2 ;;',
        '    --paginate|--silent) shift ;;',
        '    -H|--header|-X|--method) shift 2 ;;',
        '    -*) echo "gh stub: flag $1 is not modelled" >&2; exit 2 ;;',
        '    *) endpoint=${1#/}; shift ;;',
        '  esac',
        'done',
        'case "$endpoint" in',
        ...cases,
        '  *) echo "gh: Not Found (HTTP 404)" >&2; exit 1 ;;',
        "esac",
        'if [ -z "$query" ]; then printf \'%s\\n\' "$body"; exit 0; fi',
        'printf \'%s\' "$body" | jq -c "[($query)]" | jq -r \'.[] | if type == "string" then . elif type == "null" then "" elif type == "boolean" or type == "number" then tostring else tojson end\'',
    ].join("\n");
}
const shellQuote = (t: string) => `'${t.replace(/'/g, `'\\''`)}'`;

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
        const [rel, bin, fake] = ["rel", "bin", "fake"].map((d) => path.join(root, d));
        for (const d of [rel, bin, fake]) fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(path.join(root, ".pulumi.version"), `${version}\n`);
        fs.writeFileSync(path.join(fake, "sudo"), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
        if (shadow) fs.writeFileSync(path.join(fake, "pulumi"), "#!/bin/sh\necho v3.1.4\n", { mode: 0o755 });
        const { tarball, sha256 } = fakeCliTarball(reports);
        fs.writeFileSync(path.join(rel, "pulumi-v3.1.4-linux-x64.tar.gz"), tarball);
        fs.writeFileSync(path.join(rel, "pulumi-3.1.4-checksums.txt"), checksums(sha256));
        const summary = path.join(root, "summary");
        const r = spawnSync("bash", ["-e", "-c", run], { cwd: root, encoding: "utf8", timeout: 10_000, env: { PATH: `${fake}:${bin}:/usr/bin:/bin`, RELEASES: `file://${rel}`, BIN: bin, GITHUB_STEP_SUMMARY: summary } });
        return { status: r.status, output: r.stdout + r.stderr, installed: fs.existsSync(path.join(bin, "pulumi")), summary: fs.existsSync(summary) ? fs.readFileSync(summary, "utf8") : "", sha256 };
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
}

/** The fake CLI's release tarball (pulumi/pulumi printing `reports`, pulumi/pulumi-language-nodejs) and its sha256: made once per `reports` in a process (the mutation test runs the step 8 times per script). */
const cliTarballs = new Map<string, { tarball: Buffer; sha256: string }>();
function fakeCliTarball(reports: string): { tarball: Buffer; sha256: string } {
    if (!cliTarballs.has(reports)) {
        const src = fs.mkdtempSync(path.join(os.tmpdir(), "wf-pulumi-tarball-"));
        try {
            fs.mkdirSync(path.join(src, "pulumi"));
            fs.writeFileSync(path.join(src, "pulumi", "pulumi"), `#!/bin/sh\necho ${reports}\n`, { mode: 0o755 });
            fs.writeFileSync(path.join(src, "pulumi", "pulumi-language-nodejs"), "#!/bin/sh\n", { mode: 0o755 });
            const r = spawnSync("tar", ["-czf", "-", "-C", src, "pulumi"], { maxBuffer: 1 << 20 });
            if (r.status !== 0) throw new Error(`tar of the fake Pulumi CLI failed: ${r.stderr}`);
            cliTarballs.set(reports, { tarball: r.stdout, sha256: createHash("sha256").update(r.stdout).digest("hex") });
        } finally {
            fs.rmSync(src, { recursive: true, force: true });
        }
    }
    return cliTarballs.get(reports)!;
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
/**
 * Remote files a script fetches without curl, wget or a URL literal: kubectl applying a file or a
 * kustomization that is not a local path (a variable other than `local` names can hold a URL,
 * `-k github.com/...` fetches a repository), helm charts from repositories, git clones, pip, go
 * install/get, docker pull.
 */
export function remoteFetches(script: string, local: string[]): string[] {
    const out: string[] = [];
    const localPath = (a: string) => {
        const x = a.replace(/^["']|["']$/g, "");
        if (x === "-" || /:\/\//.test(x) || /(^|[/.])github\.com\b|\?ref=/.test(x)) return x === "-";
        const vars = [...x.matchAll(/\$\{?(\w+)/g)].map((m) => m[1]);
        return vars.every((n) => local.includes(n));
    };
    for (const { words } of commands(script)) {
        const [cmd, ...args] = words;
        const said = words.join(" ");
        if (cmd === "kubectl" && /^(apply|create|replace|diff|delete)$/.test(args[0] ?? "")) {
            for (let j = 0; j < args.length; j++) {
                const m = /^(-f|--filename|-k|--kustomize)(?:=(.*))?$/.exec(args[j]);
                if (!m) continue;
                const value = m[2] ?? args[j + 1] ?? "";
                if (!localPath(value)) out.push(`\`${said}\` (${value} is not a local file)`);
            }
        }
        if (cmd === "kustomize" && args[0] === "build" && args[1] && !localPath(args[1])) out.push(`\`${said}\``);
        if (cmd === "helm" && (/^(pull|fetch|repo)$/.test(args[0] ?? "") || args.some((a) => /^oci:\/\//.test(a) || a === "--repo"))) out.push(`\`${said}\``);
        if ((cmd === "git" && args.includes("clone")) || (/^pipx?$/.test(cmd) && args[0] === "install") || (/^pip3?$/.test(cmd) && args[0] === "download") || (cmd === "go" && /^(install|get)$/.test(args[0] ?? "")) || (/^(docker|podman)$/.test(cmd) && /^(pull|run)$/.test(args[0] ?? ""))) out.push(`\`${said}\``);
    }
    return out;
}

/** What cache a step restores (setup-node's caches, actions/cache), or "" when none. */
function cacheRestore(s: Any): string {
    if (isAction(s, "actions/setup-node")) {
        if (s.with?.cache) return `the ${s.with.cache} cache (setup-node cache: ${s.with.cache})`;
        if (String(s.with?.["package-manager-cache"]) !== "false") return "the npm cache (setup-node turns caching on by itself when package.json names npm as its package manager; package-manager-cache: false is missing)";
        return "";
    }
    return isAction(s, "actions/cache") || isAction(s, "actions/cache/restore") ? `the cache ${s.with?.key ?? ""}` : "";
}

/** Whether a job holds a credential: the OIDC token, a secret, a write scope, or an environment. */
function credentialedJob(job: Any, envs: Environments): boolean {
    return job.permissions?.["id-token"] === "write" || secretRefs(job).length > 0 || Object.values(job.permissions ?? {}).includes("write") || !!envs[envNameOf(job) ?? ""];
}

/** The file of the workflow a workflow_run workflow follows, by the name it names. */
function triggerWorkflowPath(doc: Any, files: Workflows): string | undefined {
    const names: string[] = doc.on?.workflow_run?.workflows ?? [];
    for (const [file, text] of Object.entries(files)) {
        if (!parsed.has(text)) parsed.set(text, YAML.parse(text));
        if (names.includes((parsed.get(text) as Any)?.name)) return `.github/workflows/${file}`;
    }
    return undefined;
}

/**
 * Whether a job runs in `ctx`: its `if:` holds and, unless that `if:` calls a status function, every
 * job it needs ran (a job whose need was skipped or failed is skipped).
 */
function effectivelyRuns(jobs: Record<string, Any>, name: string, ctx: Context, seen = new Set<string>()): boolean {
    const job = jobs[name];
    if (!job || seen.has(name)) return false;
    seen.add(name);
    if (!runs(job.if, ctx, {})) return false;
    if (hasStatusFunction(job.if)) return true;
    const needs: string[] = Array.isArray(job.needs) ? job.needs : job.needs ? [job.needs] : [];
    return needs.every((n) => effectivelyRuns(jobs, n, ctx, new Set(seen)));
}

/** A pull request as GET /repos/{owner}/{repo}/pulls/{n} answers (the fields the checks read, and a few more). */
export function pullAnswer(n: number, o: { state?: string; base?: string; head?: string; repo?: string | null; author?: string } = {}): Any {
    const repo = o.repo === undefined ? "acme/ops" : o.repo;
    return {
        number: n, state: o.state ?? "open", locked: false, draft: false, merged: false, title: "a change",
        user: { login: o.author ?? "alice", type: "User" },
        head: { label: "acme:feature", ref: "feature", sha: o.head ?? "c".repeat(40), repo: repo === null ? null : { full_name: repo, fork: repo !== "acme/ops" } },
        base: { label: "acme:main", ref: o.base ?? "main", sha: "b".repeat(40), repo: { full_name: "acme/ops" } },
    };
}
/** The review history of a run, as GET /repos/{owner}/{repo}/actions/runs/{run_id}/approvals answers. */
export const approvalsAnswer = (entries: Array<[string, string, string?]>) => entries.map(([login, state, env]) => ({ state, comment: "", environments: [{ id: 1, node_id: "EN_1", name: env ?? "preview-prod" }], user: { login, type: "User" } }));

/**
 * The approval of a workflow_run job that runs a pull request's code: before the prompt, a job
 * without credentials confirms from GitHub's API that the run's commit is still the head of exactly
 * one open pull request of this repository into main (its number is what the approval job uses);
 * after the approval, before the checkout, the job checks that again and that no approver is the
 * pull request's author. Each is run against the API's answers for a re-run of a stale run, a
 * force-push, a closed pull request, two pull requests of one branch, and an API that fails.
 */
function approvalBinding(doc: Any, jobs: Record<string, Any>, name: string, v: (what: string) => void): void {
    const job = jobs[name];
    const all = steps(job);
    const C = "c".repeat(40), D = "d".repeat(40);
    // The pull request number the approval job uses must come from a job it needs, which set it.
    const refs = [...JSON.stringify({ name: job.name, c: job.concurrency, s: all.map((s) => ({ env: s.env, with: s.with })) }).matchAll(/needs\.([\w-]+)\.outputs\.([\w-]+)/g)];
    const ref = refs.find((m) => ancestors(jobs, name).has(m[1]));
    const source = ref && /steps\.([\w-]+)\.outputs\.([\w-]+)/.exec(String(jobs[ref[1]]?.outputs?.[ref[2]] ?? ""));
    const binder = source && steps(jobs[ref![1]]).find((s) => s.id === source[1] && typeof s.run === "string");
    if (!ref || !binder) {
        v("[approval] nothing before the approval prompt confirms that the run's commit is still the head of an open pull request into main: a re-run of an old run, or one left behind by a force-push or a close, asks reviewers to approve code the pull request no longer holds");
    } else {
        const binderJob = jobs[ref[1]];
        if (credentialedJob(binderJob, {})) v(`[approval] job ${ref[1]}, which confirms the pull request, holds a credential`);
        const confirmed = (prs: Array<{ number: number }>, fixtures: Record<string, GhAnswer>) => {
            const r = runScriptFull(binder.run, stepEnv(binder, binderJob, doc, prContext("member", "success", prs)), { gh: ghApiStub(fixtures) });
            return r.status === 0 ? (r.outputs[source[2]] ?? "") : "";
        };
        const p = (n: number, o: Parameters<typeof pullAnswer>[1] = {}) => ({ [`repos/acme/ops/pulls/${n}`]: pullAnswer(n, o) });
        if (confirmed([{ number: 7 }], p(7)) !== "7") v("[approval] the pull-request check refuses the current head of an open pull request into main");
        if (confirmed([{ number: 6 }, { number: 7 }], { ...p(6, { base: "release" }), ...p(7) }) !== "7") v("[approval] the pull-request check does not take the pull request whose head the commit is (#7 into main) when GitHub matched two to the run (#6 into release first)");
        if (confirmed([{ number: 7 }], p(7, { head: D }))) v("[approval] the pull-request check confirms a stale run: #7's head has moved on since (a re-run of an old run, or one left pending by a push or a force-push)");
        if (confirmed([], {})) v("[approval] the pull-request check confirms a run that names no pull request (a force-push leaves the old commit with none)");
        if (confirmed([{ number: 7 }], p(7, { state: "closed" }))) v("[approval] the pull-request check confirms the head of a closed pull request");
        if (confirmed([{ number: 7 }], p(7, { base: "release" }))) v("[approval] the pull-request check confirms a pull request into another branch than main");
        if (confirmed([{ number: 7 }], p(7, { repo: "mallory/ops" }))) v("[approval] the pull-request check confirms a pull request from another repository");
        if (confirmed([{ number: 7 }], { "repos/acme/ops/pulls/7": { httpStatus: 502, message: "Bad Gateway" } })) v("[fail-open] the pull-request check passes when the API call fails: it must fail closed");
        if (binder["continue-on-error"] || binderJob["continue-on-error"]) v("[fail-open] the pull-request check has continue-on-error");
    }
    // After the approval, before the pull request's code: the steps before the first checkout.
    const checkout = all.findIndex((s) => isAction(s, "actions/checkout"));
    const pre = all.slice(0, checkout < 0 ? all.length : checkout).filter((s) => typeof s.run === "string");
    if (pre.length === 0) { v("[approval] no check, before the credential, that the approver is not the pull request's author (Prevent self-review only stops whoever triggered the run)"); return; }
    const outputs = ref ? { [ref[2]]: "7" } : {};
    const passes = (pull: GhAnswer, approvals: GhAnswer, number = "7") => {
        const ctx = prContext("member", "success", [{ number: 7 }], ref ? { [ref[2]]: number } : outputs);
        const gh = ghApiStub({ "repos/acme/ops/pulls/7": pull, "repos/acme/ops/actions/runs/99/approvals": approvals });
        return pre.every((s) => runScript(s.run, stepEnv(s, job, doc, ctx), { gh }) === 0);
    };
    const fresh = pullAnswer(7);
    if (!passes(fresh, approvalsAnswer([["bob", "approved"]]))) v("[approval] the approval check refuses another reviewer's approval");
    if (passes(fresh, approvalsAnswer([["bob", "approved"], ["alice", "approved"]]))) v("[approval] the approval check lets the pull request's author approve its prod preview");
    if (passes(pullAnswer(7, { head: D }), approvalsAnswer([["bob", "approved"]]))) v("[approval] the approval check lets a commit run that is no longer the pull request's head (a push or force-push while the approval waited)");
    if (passes(pullAnswer(7, { state: "closed" }), approvalsAnswer([["bob", "approved"]]))) v("[approval] the approval check lets the head of a pull request closed while the approval waited run");
    if (passes(fresh, approvalsAnswer([["bob", "rejected"], ["carol", "approved", "preview-dev"]]))) v("[approval] the approval check counts a rejection, or another environment's approval, as this approval");
    if (passes(fresh, { httpStatus: 502, message: "Bad Gateway" })) v("[fail-open] the approval check passes when the API call fails: it must fail closed");
    if (passes(fresh, [])) v("[fail-open] the approval check passes when the API names no approver");
    if (passes(fresh, approvalsAnswer([["bob", "approved"]]), "")) v("[fail-open] the approval check passes for a run that names no pull request");
    if (pre.some((s) => s["continue-on-error"]) || job["continue-on-error"]) v("[fail-open] the approval check has continue-on-error");
    void C;
}

/** Findings of the settings themselves (docs/usage.md's table, modelled by ENVIRONMENTS). */
function settingsViolations(files: Workflows, envs: Environments, out: string[]): void {
    const triggersByFile = new Map(Object.entries(files).map(([f, t]) => { if (!parsed.has(t)) parsed.set(t, YAML.parse(t)); return [f, triggersOf(parsed.get(t) as Any)]; }));
    for (const [name, env] of Object.entries(envs)) {
        const onMain = env.workflows.every((f) => !(triggersByFile.get(f) ?? []).includes("pull_request"));
        // [environment]: a pull request's jobs run on refs/pull/<n>/merge; only a main-only rule keeps them out.
        if (env.branches === "any" && onMain && (env.secrets.length > 0 || env.stacks.length > 0)) {
            out.push(`settings: [environment] ${name} allows any branch, though its jobs (${env.workflows.join(", ")}) run on main's ref: a job a pull request adds to its own workflow with environment ${name} gets ${[...env.secrets.map((x) => `the secret ${x}`), ...(env.stacks.length ? [`its OIDC subject (the Pulumi team of ${env.stacks.join(", ")}${env.workflowRef ? ", unless the workflow_ref rule stops it" : ""})`] : [])].join(" and ")} once approved; set its deployment branches to main`);
        }
        // [oidc]: on main's ref a workflow_run job of any reviewed file presents the same subject.
        if (env.stacks.length > 0 && env.branches === "main" && !(env.workflowRef && env.workflows.includes(env.workflowRef))) {
            out.push(`settings: [oidc] the Pulumi OIDC policy of ${name} matches its subject only: a workflow_run job, which runs on main's ref but can check out a pull request's code, of another workflow in ${name} would get its Pulumi token; require workflow_ref = ${env.workflows[0]} on main too`);
        }
    }
}

/** Parsed workflow texts (read only below): a mutation changes one file, the others parse once. */
const parsed = new Map<string, unknown>();

/** Every breach of the policy in a set of workflow files (and the scripts they run). */
export async function securityViolations(files: Workflows, scripts: Workflows = {}, envs: Environments = ENVIRONMENTS): Promise<string[]> {
    const out: string[] = [];
    settingsViolations(files, envs, out);
    const docs: Record<string, Any> = {};
    for (const [file, text] of Object.entries(files)) {
        if (!parsed.has(text)) parsed.set(text, YAML.parse(text));
        docs[file] = parsed.get(text) as Any;
    }

    // What untrusted code writes, in every workflow: artifacts (by run and name) and caches.
    const producers = new Map<string, Producer>();
    const jobTaint = new Map<string, string>();
    const cacheWriters: string[] = [];
    const mainScopeWriters: string[] = [];
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
            // A workflow_run job runs on the default branch: any code in it can write caches of main's
            // scope (the runner's cache token, with or without a cache action), which every branch restores.
            if (tainted && triggersOf(doc).includes("workflow_run")) mainScopeWriters.push(`${file} job ${name}, which runs ${tainted} in main's cache scope`);
        }
    }

    for (const [file, doc] of Object.entries(docs)) {
        const triggers = triggersOf(doc);
        const jobs: Record<string, Any> = doc.jobs ?? {};
        const isPr = triggers.includes("pull_request");
        const isRun = triggers.includes("workflow_run");
        const v = (where: string, what: string) => out.push(`${file}${where ? ` ${where}` : ""}: ${what}`);

        for (const t of ["pull_request_target", "issue_comment"]) if (triggers.includes(t)) v("", `[trigger] ${t} runs with the base repository's secrets for code it did not review`);
        if (JSON.stringify(doc.permissions) !== "{}") v("", "[permissions] the workflow default permissions must be {}");
        if (secretRefs(doc.env).length > 0) v("", "[secret] workflow-level env references secrets: every step of every job sees them");
        const groups = [doc.concurrency, ...Object.values(jobs).map((j) => j.concurrency)].filter(Boolean).map((c) => (typeof c === "string" ? c : String(c.group)));
        for (const g of groups) if (/github\.(run_id|run_number|run_attempt|sha)\b/.test(g)) v("", `[concurrency] the concurrency group ${g} is new for every run: it serializes nothing`);
        for (const g of groups) {
            const named = expressions(g).find((e) => OUTSIDER_NAMED.test(e));
            if (named) v("", `[concurrency] the concurrency group ${g} uses ${named.trim()}, which whoever opens a pull request, names a branch or dispatches a run chooses: it can join (and cancel) another group`);
        }
        if (triggers.includes("schedule") && !doc.concurrency && !Object.values(jobs).every((j) => j.concurrency)) v("", "[concurrency] a scheduled workflow without a concurrency group overlaps itself (and a manual run)");
        // [cache]: once anything writes main's cache scope with a pull request's code, no job restores a cache.
        if (mainScopeWriters.length > 0) {
            for (const [name, job] of Object.entries(jobs)) {
                for (const [i, s] of steps(job).entries()) {
                    const what = cacheRestore(s);
                    if (what) v(`job ${name}`, `[cache] step ${i + 1} restores ${what}, which ${mainScopeWriters.join("; ")} can write: every branch restores main's caches`);
                }
            }
        }
        // workflow_run: the definition is main's, but what it checks out and downloads is the pull request's.
        if (isRun) {
            const gated = Object.entries(jobs).filter(([, j]) => envs[envNameOf(j) ?? ""]?.reviewers);
            if (gated.length > 0 && doc.concurrency) v("", `[concurrency] a workflow-level concurrency group (${JSON.stringify(doc.concurrency)}) is taken when the run is created, before any if: a run the guards skip, or a stale one, cancels the one waiting for its approval`);
            // What the approval prompt shows comes from the commit and the run, never from what the pull request's author writes.
            const shown = [["run-name", doc["run-name"]], ...gated.flatMap(([n, j]) => [[`job ${n}'s name`, j.name], [`job ${n}'s environment URL`, j.environment?.url]])];
            for (const [what, value] of shown) {
                const named = expressions(value ?? "").find((e) => OUTSIDER_NAMED.test(e) || /\bgithub\.event\.workflow_run\.(display_title|head_commit\.message|name)\b/.test(e));
                if (named) v("", `[approval] the ${what} shows ${named.trim()}, which the pull request's author writes: the approval prompt can be made to name another commit`);
            }
            // [trigger]: GitHub matches `workflows:` by name; any workflow file can take that name.
            const source = triggerWorkflowPath(doc, files);
            for (const [name, job] of Object.entries(jobs)) {
                if (!credentialedJob(job, envs)) continue;
                const other = prContext("member");
                (other.github as Any).event.workflow = { name: "pull request", path: ".github/workflows/not-the-pull-request-workflow.yml" };
                if (effectivelyRuns(jobs, name, other)) v(`job ${name}`, `[trigger] runs after any workflow named ${JSON.stringify(doc.on?.workflow_run?.workflows ?? [])}, not only ${source ?? "its file"} (check github.event.workflow.path)`);
            }
            for (const [name, job] of Object.entries(jobs)) {
                const env = envs[envNameOf(job) ?? ""];
                if (credentialedJob(job, envs) && !env?.reviewers) v(`job ${name}`, "[approval] workflow_run runs with the base repository's credentials for a pull request's commit: only behind a reviewer's approval");
            }
        }

        for (const [name, job] of Object.entries(jobs)) {
            const where = `job ${name}`;
            const all = steps(job);
            if (!job.permissions || typeof job.permissions !== "object") v(where, "[permissions] no permissions block: the job gets the repository's default token");
            if (job.uses) v(where, "[action] calls a reusable workflow, which this model does not follow: model it before using one");
            const envName = envNameOf(job);
            const env = envName ? envs[envName] : undefined;
            if (envName && !env) v(where, `[environment] environment ${envName} is not one of the documented environments`);
            if (env && !env.workflows.includes(file)) v(where, `[environment] environment ${envName} belongs to ${env.workflows.join(", ")}, not this workflow`);

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
                    v(where, `${c.kind === "install-scripts" ? "[install]" : "[code]"} ${c.why} in step ${i + 1} can reach ${cred.what}`);
                }
            });

            // Secrets come from the job's environment, by name.
            for (const ref of secretRefs(job.env)) {
                if (ref === null || !env || !env.secrets.includes(ref)) v(where, `[secret] job-level env uses the secret ${ref ?? "(dynamic lookup)"}, not a documented secret of its environment`);
            }
            for (const [i, s] of all.entries()) {
                for (const ref of secretRefs({ env: s.env, with: s.with, run: s.run, if: s.if })) {
                    if (ref === null) v(where, `[secret] step ${i + 1} looks a secret up by an expression: every repository secret is sent to the runner`);
                    else if (!env) v(where, `[secret] step ${i + 1} uses the secret ${ref} outside an environment (a repository secret: any branch's workflow can read it)`);
                    else if (!env.secrets.includes(ref)) v(where, `[secret] step ${i + 1} uses the secret ${ref}, which is not a documented secret of the environment ${envName}`);
                }
                for (const line of secretPrints(s)) v(where, `[log] step ${i + 1} may print a secret to the log: ${line}`);
                if (typeof s.run === "string" && s.run.includes("${{")) v(where, `[injection] step ${i + 1} expands an expression inside its script (template injection): pass it through env`);
                if (typeof s.with?.script === "string" && s.with.script.includes("${{")) v(where, `[injection] step ${i + 1} expands an expression inside its github-script (template injection)`);
                if (isAction(s, "actions/checkout") && s.with?.["persist-credentials"] !== false && s.with?.["persist-credentials"] !== "false") v(where, `[token] step ${i + 1}: actions/checkout leaves the token in .git/config (persist-credentials: false is missing)`);
                const cliStep = s.env?.RELEASES === PULUMI_RELEASES && pulumiCliStepChecks(s);
                const fetched = JSON.stringify({ run: s.run ?? "", env: cliStep ? { ...s.env, RELEASES: "" } : s.env ?? {} }).replace(/\\"https:\/\/\$[\w]+[^"\\]*\\"/g, "");
                if (/https?:\/\//.test(fetched)) v(where, `[fetch] step ${i + 1} fetches a URL: remote files come through .github/scripts with a commit and a sha256`);
                if (typeof s.run === "string" && !/sha256sum\s+(-c|--check)\b/.test(s.run)) {
                    for (const line of s.run.split("\n").filter(downloads)) v(where, `[checksum] step ${i + 1} downloads a file and uses it without checking a sha256: ${line.trim()}`);
                }
                if (isAction(s, "pulumi/actions")) {
                    const why = s.with?.["pulumi-version-file"] !== ".pulumi.version" || s.with?.["pulumi-version"] !== undefined ? "it is not given pulumi-version-file: .pulumi.version (the version the checked step installs)" : !all.slice(0, i).some(pulumiCliStepChecks) ? `no earlier step installs the CLI checked against its release's sha256 (RELEASES: ${PULUMI_RELEASES}, refusing a tarball whose sha256 differs)` : "";
                    if (why) v(where, `[checksum] step ${i + 1}: pulumi/actions downloads the Pulumi CLI without a checksum: ${why}`);
                }
                if (s["continue-on-error"] && code[i] === null && !isAction(s, "pulumi/actions")) v(where, `[status] step ${i + 1} has continue-on-error: its failure (a refused check) no longer stops the job`);
                // [checksum]: what every action downloads is known (ACTION_DOWNLOADS), and listed when nothing here checks it.
                const action = typeof s.uses === "string" && !s.uses.startsWith("./") ? s.uses.replace(/@.*/, "") : undefined;
                if (action && !(action in ACTION_DOWNLOADS)) v(where, `[checksum] step ${i + 1} uses ${action}, whose downloads are not in ACTION_DOWNLOADS: what it fetches, and whether anything checks it, is unknown`);
                // [fetch]: remote files without curl, wget or a URL literal.
                if (typeof s.run === "string") for (const f of remoteFetches(s.run, ["RUNNER_TEMP", "GITHUB_WORKSPACE"])) v(where, `[fetch] step ${i + 1} fetches ${f}: remote files come through .github/scripts with a commit and a sha256`);
                // [plugins]: pulumi downloads a provider plugin it lacks, unchecked, unless told not to.
                const pulumiRuns = isAction(s, "pulumi/actions") ? (s.with?.command ? `pulumi ${s.with.command}` : "") : typeof s.run === "string" ? (commands(s.run).find((c) => c.words[0] === "pulumi" && /^(up|preview|destroy|refresh|import|update)$/.test(c.words[1] ?? ""))?.words.slice(0, 2).join(" ") ?? "") : "";
                if (pulumiRuns) {
                    const noDownloads = [doc.env, job.env, s.env].some((e) => String(e?.[NO_PLUGIN_DOWNLOADS]) === "true");
                    const plugins = all.findIndex((x) => new RegExp(`^\\s*npm run(?:\\s+-\\S+)*\\s+${PLUGINS_SCRIPT}\\s*$`).test(x.run ?? ""));
                    if (!noDownloads) v(where, `[plugins] step ${i + 1} (${pulumiRuns}) downloads any provider plugin it lacks, without a checksum: set ${NO_PLUGIN_DOWNLOADS}: "true"`);
                    if (plugins < 0 || plugins > i) v(where, `[plugins] step ${i + 1} (${pulumiRuns}): no earlier step installs the provider plugins from checked sources (npm run -s ${PLUGINS_SCRIPT})`);
                    const firstCredential = creds.filter((c) => c.at < all.length).reduce((m, c) => Math.min(m, c.at), all.length);
                    if (plugins >= 0 && plugins > firstCredential) v(where, `[plugins] the provider plugins are installed (step ${plugins + 1}) after the credential of step ${firstCredential + 1}: a download gone wrong would run beside it`);
                }
            }
            if (creds.some((c) => /GITHUB_TOKEN with/.test(c.what)) && (prCode || code.some(Boolean))) v(where, "[token] a job with a write-scoped GITHUB_TOKEN runs code");

            // The OpenID Connect token: only in an environment (its subject names it), and the only
            // code in its job is the Pulumi program (and the listed pre-credential scripts).
            if (job.permissions?.["id-token"] === "write") {
                if (!env) v(where, "[oidc] id-token: write outside an environment: its subject (ref or pull_request) is not bound to reviewed settings");
                code.forEach((c, i) => {
                    if (!c || isAction(all[i], "pulumi/actions")) return;
                    const script = /^\s*npm run(?:\s+-\S+)*\s+([\w:.-]+)/.exec(all[i].run ?? "")?.[1];
                    if (c.kind !== "install-scripts" && script && PRE_CREDENTIAL_SCRIPTS.includes(script)) return;
                    v(where, `${c.kind === "install-scripts" ? "[install]" : "[code]"} ${c.why} in step ${i + 1} runs in a job whose every step can mint the OpenID Connect token`);
                });
            }

            // Pulumi steps: the stack is one the environment's team may touch, as it may touch it.
            for (const s of all.filter((x) => isAction(x, "pulumi/actions") && x.with?.command)) {
                const stack = stackOf(s);
                const writes = s.with.command !== "preview";
                if (!env) { v(where, "[stack] runs pulumi outside an environment"); continue; }
                if (!stack || !env.stacks.includes(stack)) v(where, `[stack] pulumi ${s.with.command} of ${stack ?? "an unknown stack"} with the team of ${envName} (stacks ${env.stacks.join(", ") || "none"})`);
                if (writes !== env.write) v(where, `[stack] pulumi ${s.with.command} with the ${env.write ? "write" : "read-only"} team of ${envName}`);
                if (stack === "prod" && prCode && !env.reviewers) v(where, "[stack] the pull request's program gets a credential that can decrypt prod without a reviewer's approval");
                if (s.with["github-token"] !== "") v(where, "[token] pulumi/actions gets the job's GITHUB_TOKEN (set github-token: \"\")");
                if (githubTokenRef(s.env)) v(where, "[token] the program gets the job's GITHUB_TOKEN in its environment");
            }

            // Pull requests (and the workflow_run after one): forks and bots get no credential, members do.
            if ((isPr || isRun) && credentialed) {
                for (const kind of ["fork", "dependabot", "renovate"] as const) {
                    let r: boolean;
                    try { r = effectivelyRuns(jobs, name, prContext(kind)); } catch (e) { r = true; v(where, `[fork] if: cannot be evaluated: ${(e as Error).message}`); }
                    if (r) v(where, `[fork] runs with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`} for a pull request from ${kind === "fork" ? "a fork" : `the bot ${kind}`}`);
                }
                try { if (!effectivelyRuns(jobs, name, prContext("member"))) v(where, "[fork] never runs for a member's pull request: the guard is not the fork guard"); } catch { /* reported above */ }
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
                // [approval]: the approval binds to the pull request's current head, and not to its author.
                if (env?.reviewers && prCode && isRun) approvalBinding(doc, jobs, name, (what) => v(where, what));
                if (isPr && env?.reviewers && prCode) v(where, "[approval] the approved job's definition comes from the pull request's own workflow file: run it on workflow_run (main's definition) for the approved commit");

                // [action]: near a credential only the actions trusted with one run.
                for (const [i, s] of all.entries()) {
                    const action = typeof s.uses === "string" ? s.uses.replace(/@.*/, "") : undefined;
                    if (action && !CREDENTIAL_ACTIONS.includes(action)) v(where, `[action] step ${i + 1} runs ${action} in a job with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`}: an action not in CREDENTIAL_ACTIONS runs its author's code with the credential, whatever its pin`);
                }
                // [checkout-ref]: no step changes the checked-out code after the checkout the model follows.
                for (const [i, s] of all.entries()) {
                    if (typeof s.run !== "string") continue;
                    for (const c of commands(s.run)) {
                        const [cmd, ...rest] = c.words;
                        const args = cmd === "git" ? rest.filter((w, j) => !w.startsWith("-") && !(j > 0 && /^-(C|c)$/.test(rest[j - 1]))) : rest;
                        const moves = (cmd === "git" && /^(checkout|switch|reset|pull|merge|rebase|restore|worktree|fetch|clone|am|apply|cherry-pick|stash|read-tree|checkout-index|update-ref|symbolic-ref|submodule)$/.test(args[0] ?? ""))
                            || (cmd === "gh" && /^(pr|repo)$/.test(args[0] ?? "") && /^(checkout|clone)$/.test(args[1] ?? ""));
                        if (moves) v(where, `[checkout-ref] step ${i + 1} changes the checked-out code after the checkout (\`${c.words.join(" ")}\`): what runs with the credential is no longer the commit the job checked out`);
                    }
                }
                // [log]: nothing raises what pulumi and its plugins write to the job's log.
                for (const [i, s] of all.entries()) {
                    const loud: string[] = [];
                    if (isAction(s, "pulumi/actions")) {
                        for (const input of ["log-verbosity", "log-flow", "debug"]) {
                            const value = s.with?.[input];
                            if (value !== undefined && value !== "" && String(value) !== "false" && String(value) !== "0") loud.push(`${input}: ${value}`);
                        }
                    }
                    for (const [k, val] of Object.entries({ ...doc.env, ...job.env, ...s.env })) if (/^(TF_LOG\w*|PULUMI_DEBUG_\w+|PULUMI_ENABLE_TRACE\w*|GRPC_\w*TRACE\w*)$/.test(k) && val !== "" && val !== undefined) loud.push(`${k}=${val}`);
                    if (typeof s.run === "string") for (const c of commands(s.run)) if (c.words[0] === "pulumi") for (const w of c.words) if (/^(-v\S*|--verbose\S*|--logflow\S*|--logtostderr\S*|--debug\S*|--show-secrets\S*|--tracing\S*)$/.test(w)) loud.push(w);
                    if (loud.length > 0) v(where, `[log] step ${i + 1} raises pulumi's logging (${loud.join(", ")}): the engine and the provider plugins write resource inputs and outputs, prod's decrypted secrets among them, to a log every reader of the repository sees`);
                }

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
                if (mainScopeWriters.length === 0) {
                    for (const [i, s] of all.entries()) {
                        const what = cacheRestore(s);
                        if (what) v(where, `[cache] step ${i + 1} restores ${what}, which untrusted code can write (${cacheWriters.join("; ") || "any job that installs with scripts"}), into a job with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`}`);
                    }
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
            // (A workflow_run job always runs on the default branch's ref: nothing to refuse there.)
            if (env?.branches === "main" && !isRun) {
                if (effectivelyRuns(jobs, name, mainContext("refs/heads/feature"))) v(where, `[ref] runs in ${envName} for another ref than main (if: ${job.if ?? "absent"})`);
            }
            if (env?.write) {
                // The steps that ask GitHub's API (gh) before the credential, run against its answers.
                const auth = all.findIndex((s) => isAction(s, "pulumi/auth-actions"));
                const checks = all.slice(0, auth < 0 ? all.length : auth).filter((s) => typeof s.run === "string" && commands(s.run).some((c) => c.words[0] === "gh"));
                if (checks.length === 0) v(where, "[ref] no check that the commit is still the head of main before the credential");
                else {
                    const sha = "a".repeat(40);
                    const ctx = mainContext("refs/heads/main");
                    const passes = (main: GhAnswer) => checks.every((s) => runScript(s.run, stepEnv(s, job, doc, ctx), { gh: ghApiStub({ "repos/acme/ops/commits/main": main }) }) === 0);
                    const commit = (x: string) => ({ sha: x, node_id: "C_x", commit: { message: "m" }, parents: [] });
                    if (passes(commit("b".repeat(40)))) v(where, "[ref] the head-of-main check lets an old commit deploy (re-running an old run redeploys it)");
                    if (!passes(commit(sha))) v(where, "[ref] the head-of-main check refuses the head of main");
                    if (passes({ httpStatus: 502, message: "Bad Gateway" })) v(where, "[fail-open] the head-of-main check passes when the API call fails: it must fail closed");
                    if (passes({})) v(where, "[fail-open] the head-of-main check passes when the API answers nothing");
                    if (checks.some((s) => s["continue-on-error"])) v(where, "[fail-open] the head-of-main check has continue-on-error");
                }
                const c = job.concurrency;
                if (!c || typeof c !== "object" || /\$\{\{/.test(String(c.group)) || c["cancel-in-progress"] !== false) v(where, "[concurrency] changes a stack without its own constant, never-cancelled concurrency group");
                if (doc.concurrency) v("", "[concurrency] a workflow-level concurrency group is held while a deployment waits for approval");
                if (env.after && ![...ancestors(jobs, name)].some((n) => envNameOf(jobs[n]) === env.after)) v(where, `[approval] starts without the approval job (environment ${env.after})`);
            }
            // A group a newer run cancels is the point (one pending approval per pull request); one that
            // never cancels blocks every later run while a reviewer has not answered.
            const held = job.concurrency && (typeof job.concurrency !== "object" || String(job.concurrency["cancel-in-progress"]) !== "true");
            if (env?.reviewers && held) v(where, `[concurrency] waits for a reviewer while holding the concurrency group ${JSON.stringify(job.concurrency)}`);
        }

        // Deploy and drift accept manual dispatches: a guard job refuses other refs before any credential.
        if (triggers.includes("workflow_dispatch") && Object.values(jobs).some((j) => envs[envNameOf(j) ?? ""]?.write)) {
            const guard = jobs["main-only"];
            if (!guard) v("", "[ref] no main-only guard job");
            else {
                // Its run steps, with the environment the ref of the run gives them: every one must pass on main, one must fail elsewhere.
                const passes = (ref: string) => steps(guard).filter((s) => typeof s.run === "string").every((s) => runScript(s.run, stepEnv(s, guard, doc, mainContext(ref))) === 0);
                if (passes("refs/heads/feature")) v("job main-only", "[ref] lets another ref than main through");
                if (!passes("refs/heads/main")) v("job main-only", "[ref] refuses main");
                if (guard["continue-on-error"] || steps(guard).some((s) => s["continue-on-error"])) v("job main-only", "[status] continue-on-error turns the guard into a warning");
                for (const [name, job] of Object.entries(jobs)) {
                    if (envs[envNameOf(job) ?? ""] && !ancestors(jobs, name).has("main-only")) v(`job ${name}`, "[ref] does not need main-only");
                }
            }
        }

        // The job that writes to pull requests edits only its own comment.
        for (const [name, job] of Object.entries(jobs)) {
            if (job.permissions?.["pull-requests"] !== "write") continue;
            for (const s of steps(job).filter((x) => isAction(x, "actions/github-script"))) {
                const r = await commentFinderEdits(String(s.with?.script ?? ""));
                if (r.error) v(`job ${name}`, `[comment] the comment script fails: ${r.error}`);
                else if (JSON.stringify(r.updated) !== "[4]" || r.created !== 0) v(`job ${name}`, `[comment] the comment finder edits comments ${JSON.stringify(r.updated)} (created ${r.created}); only ${COMMENT_AUTHOR}'s comment starting with the marker is its own`);
            }
        }
    }

    // Scripts the workflows run: remote files only at a commit, checked against a sha256.
    for (const [file, text] of Object.entries(scripts)) {
        for (const line of text.split("\n")) {
            if (/^\s*#/.test(line)) continue;
            if (/https?:\/\//.test(line) && !/^RAW_BASE=\$\{E2E_RAW_BASE:-https:\/\/raw\.githubusercontent\.com\}$/.test(line.trim())) out.push(`${file}: [fetch] fetches a URL outside the verified download: ${line.trim()}`);
            if (/\bverified\s/.test(line) && !/^\s*(verified\)|verified\(\))/.test(line) && !/verified [\w/.-]+ "\$\w+" \S+ (\S+|"\$sum")\)?$/.test(line.trim().replace(/\)"?$/, ")"))) out.push(`${file}: [checksum] a download without a commit and sha256: ${line.trim()}`);
            for (const { words } of commands(line)) if (/^(curl|wget)$/.test(words[0]) && !/^\s*curl -fsSL --retry 3 -o "\$out" "\$RAW_BASE\/\$repo\/\$commit\/\$file"$/.test(line)) out.push(`${file}: [checksum] ${words[0]} outside the verified download: ${line.trim()}`);
        }
        for (const m of text.matchAll(/^(\w+)=(\S+)\s*#/gm)) if (/^[A-Z_]+$/.test(m[1]) && m[1] !== "RAW_BASE" && !/^[0-9a-f]{40}$/.test(m[2])) out.push(`${file}: [checksum] ${m[1]} is not a commit (40 hex digits): ${m[2]}`);
        for (const m of text.matchAll(/^([\w./-]+\.yaml) (\S+)$/gm)) if (!/^[0-9a-f]{64}$/.test(m[2])) out.push(`${file}: [checksum] ${m[1]} has no sha256`);
        for (const m of text.matchAll(/verified [\w/.-]+ "\$\w+" [\w/.-]+ (\S+?)\)?$/gm)) if (!/^([0-9a-f]{64}|"\$sum")$/.test(m[1])) out.push(`${file}: [checksum] a download with the checksum ${m[1]}`);
        const checked = [...text.matchAll(/\b(\w+)=\$\(verified\s/g)].map((m) => m[1]);
        for (const f of remoteFetches(text.split("\n").filter((l) => !/^\s*#/.test(l)).join("\n"), checked)) out.push(`${file}: [fetch] fetches ${f} outside the verified download`);
        if (/^verified\(\)/m.test(text) && !verifiedRefusesBadChecksum(text)) out.push(`${file}: [checksum] verified hands on a download whose sha256 does not match (run against a file:// copy)`);
    }
    return out;
}
