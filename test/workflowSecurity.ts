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
}

export const ENVIRONMENTS: Record<string, EnvironmentPolicy> = {
    conformance: { reviewers: false, branches: "any", secrets: ["CONFORMANCE_READ_TOKEN"], stacks: [], write: false, workflows: ["pull-request.yml"] },
    "preview-dev": { reviewers: false, branches: "any", secrets: ["KUBECONFIG"], stacks: ["dev"], write: false, workflows: ["pull-request.yml"] },
    "preview-prod": { reviewers: true, branches: "any", secrets: ["KUBECONFIG"], stacks: ["prod"], write: false, workflows: ["pull-request.yml"] },
    dev: { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["dev"], write: true, workflows: ["deploy.yml"] },
    "production-approval": { reviewers: true, branches: "main", secrets: [], stacks: [], write: false, workflows: ["deploy.yml"] },
    production: { reviewers: false, branches: "main", secrets: ["KUBECONFIG"], stacks: ["prod"], write: true, workflows: ["deploy.yml"], after: "production-approval" },
    drift: { reviewers: false, branches: "main", secrets: ["KUBECONFIG_DEV", "KUBECONFIG_PROD"], stacks: ["dev", "prod"], write: false, workflows: ["drift.yml"] },
};

/**
 * `npm run` scripts a credentialed job of the deploy workflow may run before its credential
 * (main's reviewed code that resolves an input of the deployment, e.g. image digests with
 * registry read access). Every other code in a job with id-token: write could mint the token.
 */
export const PRE_CREDENTIAL_SCRIPTS: string[] = ["images:lock"];

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

/** What code a step runs, given whether the job checked out the pull request's code. */
export function codeOf(step: Any, prCode: boolean): { kind: CodeKind; why: string } | null {
    const of = (why: string) => ({ kind: (prCode ? "pr-code" : "main-code") as CodeKind, why });
    if (typeof step.run === "string") {
        const run = step.run.replace(/\bnpm ci --ignore-scripts\b/g, "");
        const install = /\bnpm\s+(ci|install|i|update|rebuild)\b/.exec(run);
        if (install) return { kind: "install-scripts", why: `${install[0]} (dependency install scripts)` };
        const code = /\b(npm\s+(run|test|start|exec)|npx|tsx|node|pulumi\s+(up|preview|destroy|refresh|import))\b|\.github\/scripts\/|(^|[\s;&|(])(bash|sh|source|\.)\s+[\w./$"{}-]+|(^|[\s;&|(])\.\/[\w./-]+/m.exec(run);
        if (code) return of(`\`${code[0].trim()}\` (the repository's code)`);
        return null;
    }
    if (typeof step.uses === "string") {
        if (step.uses.startsWith("./")) return of(`${step.uses} (a local action)`);
        if (isAction(step, "pulumi/actions") && step.with?.command) return of(`pulumi ${step.with.command} (the Pulumi program)`);
    }
    return null;
}

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

/** Contexts a pull-request job's `if:` is evaluated in: who opened it from where. */
function prContext(kind: "member" | "fork" | "dependabot" | "renovate"): Context {
    const login = kind === "dependabot" ? "dependabot[bot]" : kind === "renovate" ? "renovate[bot]" : kind === "fork" ? "mallory" : "alice";
    return {
        github: {
            repository: "acme/ops",
            actor: login,
            triggering_actor: login,
            event_name: "pull_request",
            ref: "refs/pull/7/merge",
            event: { pull_request: { number: 7, head: { repo: { full_name: kind === "fork" ? "mallory/ops" : "acme/ops" } }, user: { login, type: kind === "dependabot" || kind === "renovate" ? "Bot" : "User" } } },
        },
        vars: { PULUMI_ORG: "acme", CONFORMANCE_REPOSITORY: "acme/conformance" },
        needs: new Proxy({}, { get: () => ({ result: "success", outputs: new Proxy({}, { get: () => "ready" }) }) }) as Any,
    };
}

const mainContext = (ref: string): Context => ({
    github: { repository: "acme/ops", actor: "alice", event_name: "workflow_dispatch", ref, sha: "a".repeat(40) },
    vars: { PULUMI_ORG: "acme" },
    needs: new Proxy({}, { get: () => ({ result: "success", outputs: {} }) }) as Any,
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

export interface Workflows { [file: string]: string }
/** Parsed workflow texts (read only below): a mutation changes one file, the others parse once. */
const parsed = new Map<string, unknown>();

/** Every breach of the policy in a set of workflow files (and the scripts they run). */
export async function securityViolations(files: Workflows, scripts: Workflows = {}): Promise<string[]> {
    const out: string[] = [];
    for (const [file, text] of Object.entries(files)) {
        if (!parsed.has(text)) parsed.set(text, YAML.parse(text));
        const doc = parsed.get(text) as Any;
        const triggers = triggersOf(doc);
        const jobs: Record<string, Any> = doc.jobs ?? {};
        const isPr = triggers.includes("pull_request");
        const v = (where: string, what: string) => out.push(`${file}${where ? ` ${where}` : ""}: ${what}`);

        for (const t of ["pull_request_target", "workflow_run", "issue_comment"]) if (triggers.includes(t)) v("", `${t} runs with the base repository's secrets for code it did not review`);
        if (JSON.stringify(doc.permissions) !== "{}") v("", "the workflow default permissions must be {}");
        if (secretRefs(doc.env).length > 0) v("", "workflow-level env references secrets: every step of every job sees them");
        const groups = [doc.concurrency, ...Object.values(jobs).map((j) => j.concurrency)].filter(Boolean).map((c) => (typeof c === "string" ? c : String(c.group)));
        for (const g of groups) if (/github\.(run_id|run_number|run_attempt|sha)\b/.test(g)) v("", `the concurrency group ${g} is new for every run: it serializes nothing`);
        if (triggers.includes("schedule") && !doc.concurrency && !Object.values(jobs).every((j) => j.concurrency)) v("", "a scheduled workflow without a concurrency group overlaps itself (and a manual run)");

        for (const [name, job] of Object.entries(jobs)) {
            const where = `job ${name}`;
            const all = steps(job);
            if (!job.permissions || typeof job.permissions !== "object") v(where, "no permissions block: the job gets the repository's default token");
            if (job.uses) v(where, "calls a reusable workflow, which this model does not follow: model it before using one");
            const envName: string | undefined = typeof job.environment === "string" ? job.environment : job.environment?.name;
            const env = envName ? ENVIRONMENTS[envName] : undefined;
            if (envName && !env) v(where, `environment ${envName} is not one of the documented environments`);
            if (env && !env.workflows.includes(file)) v(where, `environment ${envName} belongs to ${env.workflows.join(", ")}, not this workflow`);

            // Which steps run which code.
            let prCode = false;
            const code = all.map((s) => {
                if (isPr && isAction(s, "actions/checkout") && !s.with?.repository) prCode = true;
                return codeOf(s, isPr && prCode);
            });
            const creds = credentialsOf(job);

            // Each credential against each untrusted step.
            code.forEach((c, i) => {
                if (!c || c.kind === "main-code") return;
                for (const cred of creds) {
                    if (!(i <= cred.at || cred.persists)) continue;
                    const previewProgram = c.kind === "pr-code" && env && !env.write && env.stacks.length > 0 && isAction(all[i], "pulumi/actions") && all[i].with?.command === "preview" && !/GITHUB_TOKEN/.test(cred.what);
                    if (previewProgram) continue;
                    v(where, `${c.why} in step ${i + 1} can reach ${cred.what}`);
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
                if (typeof s.run === "string" && /https?:\/\//.test(s.run.replace(/"https:\/\/\$[\w]+[^"]*"/g, ""))) v(where, `step ${i + 1} fetches a URL: remote files come through .github/scripts with a commit and a sha256`);
                if (s["continue-on-error"] && code[i] === null && !isAction(s, "pulumi/actions")) v(where, `step ${i + 1} has continue-on-error`);
            }
            if (creds.some((c) => /GITHUB_TOKEN with/.test(c.what)) && (prCode || code.some(Boolean))) v(where, "a job with a write-scoped GITHUB_TOKEN runs code");

            // The OpenID Connect token: only in an environment (its subject names it), and the only
            // code in its job is the Pulumi program (and the listed pre-credential scripts).
            if (job.permissions?.["id-token"] === "write") {
                if (!env) v(where, "id-token: write outside an environment: its subject (ref or pull_request) is not bound to reviewed settings");
                code.forEach((c, i) => {
                    if (!c || isAction(all[i], "pulumi/actions")) return;
                    const script = /^\s*npm run ([\w:.-]+)/.exec(all[i].run ?? "")?.[1];
                    if (c.kind === "main-code" && script && PRE_CREDENTIAL_SCRIPTS.includes(script)) return;
                    v(where, `${c.why} in step ${i + 1} runs in a job whose every step can mint the OpenID Connect token`);
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

            // Pull requests: forks and bots get no credential, members do.
            if (isPr && (env || creds.length > 0)) {
                for (const kind of ["fork", "dependabot", "renovate"] as const) {
                    let r: boolean;
                    try { r = runs(job.if, prContext(kind), {}); } catch (e) { r = true; v(where, `if: cannot be evaluated: ${(e as Error).message}`); }
                    if (r) v(where, `runs with ${creds.map((c) => c.what).join(", ") || `the environment ${envName}`} for a pull request from ${kind === "fork" ? "a fork" : `the bot ${kind}`}`);
                }
                try { if (!runs(job.if, prContext("member"), {})) v(where, "never runs for a member's pull request: the guard is not the fork guard"); } catch { /* reported above */ }
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
                    const stale = runScript(all[check].run, { SHA: sha, REPO: "acme/ops", GH_TOKEN: "t" }, { gh: `echo ${"b".repeat(40)}` });
                    const fresh = runScript(all[check].run, { SHA: sha, REPO: "acme/ops", GH_TOKEN: "t" }, { gh: `echo ${sha}` });
                    if (stale === 0) v(where, "the head-of-main check lets an old commit deploy (re-running an old run redeploys it)");
                    if (fresh !== 0) v(where, "the head-of-main check refuses the head of main");
                }
                const c = job.concurrency;
                if (!c || typeof c !== "object" || /\$\{\{/.test(String(c.group)) || c["cancel-in-progress"] !== false) v(where, "changes a stack without its own constant, never-cancelled concurrency group");
                if (doc.concurrency) v("", "a workflow-level concurrency group is held while a deployment waits for approval");
                if (env.after && ![...ancestors(jobs, name)].some((n) => (typeof jobs[n]?.environment === "string" ? jobs[n].environment : jobs[n]?.environment?.name) === env.after)) v(where, `starts without the approval job (environment ${env.after})`);
            }
            if (env?.reviewers && job.concurrency) v(where, `waits for a reviewer while holding the concurrency group ${JSON.stringify(job.concurrency)}`);
        }

        // Deploy and drift accept manual dispatches: a guard job refuses other refs before any credential.
        if (triggers.includes("workflow_dispatch") && Object.values(jobs).some((j) => ENVIRONMENTS[j.environment]?.write)) {
            const guard = jobs["main-only"];
            if (!guard) v("", "no main-only guard job");
            else {
                const script = steps(guard).map((s) => s.run ?? "").join("\n");
                if (runScript(script, { REF: "refs/heads/feature" }) === 0) v("job main-only", "lets another ref than main through");
                if (runScript(script, { REF: "refs/heads/main" }) !== 0) v("job main-only", "refuses main");
                if (guard["continue-on-error"] || steps(guard).some((s) => s["continue-on-error"])) v("job main-only", "continue-on-error turns the guard into a warning");
                if (steps(guard)[0]?.env?.REF !== "${{ github.ref }}") v("job main-only", "does not check github.ref");
                for (const [name, job] of Object.entries(jobs)) {
                    if (ENVIRONMENTS[job.environment] && !ancestors(jobs, name).has("main-only")) v(`job ${name}`, "does not need main-only");
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
        }
        for (const m of text.matchAll(/^(\w+)=(\S+)\s*#/gm)) if (/^[A-Z_]+$/.test(m[1]) && m[1] !== "RAW_BASE" && !/^[0-9a-f]{40}$/.test(m[2])) out.push(`${file}: ${m[1]} is not a commit (40 hex digits): ${m[2]}`);
        for (const m of text.matchAll(/^([\w./-]+\.yaml) (\S+)$/gm)) if (!/^[0-9a-f]{64}$/.test(m[2])) out.push(`${file}: ${m[1]} has no sha256`);
        for (const m of text.matchAll(/verified [\w/.-]+ "\$\w+" [\w/.-]+ (\S+?)\)?$/gm)) if (!/^([0-9a-f]{64}|"\$sum")$/.test(m[1])) out.push(`${file}: a download with the checksum ${m[1]}`);
    }
    return out;
}
