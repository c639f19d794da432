/**
 * The GitHub workflows (.github/workflows): they parse, pin every action by a verified commit,
 * only call npm scripts that exist, and do what the delivery pipeline promises (preview with the
 * policy pack, gated prod deployment, drift detection, and an e2e run that checks the HTTP
 * interfaces of section 4). Who can reach which credential is checked by the security model
 * (test/workflowSecurity.ts) and proven by mutation in test/workflowMutations.test.ts; this file
 * checks that model's settings against docs/usage.md and the behaviour of the scripts it relies on.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import * as YAML from "yaml";
import { flatten, schema } from "../config/schemaIndex";
import { generatedValue } from "../.github/scripts/ci-secrets";
import { listStacks } from "../cli/harness/stackConfig";
import { spawn, spawnSync } from "node:child_process";
import { containersOf, find, renderStack } from "./render";
import { ARTIFACT_CHECKS, ENVIRONMENTS, PRE_CREDENTIAL_SCRIPTS, UNVERIFIED_DOWNLOADS, secretRefs } from "./workflowSecurity";
import { MARKER } from "../.github/scripts/comment-body";

const ROOT = path.resolve(__dirname, "..");
const DIR = path.join(ROOT, ".github", "workflows");
const FILES = fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
const text = (f: string) => fs.readFileSync(path.join(DIR, f), "utf8");
const workflow = (f: string) => YAML.parse(text(f));
const SCRIPTS: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;
const USAGE = fs.readFileSync(path.join(ROOT, "docs", "usage.md"), "utf8");

type Job = Record<string, any>;
const jobs = (f: string): Array<[string, Job]> => Object.entries(workflow(f).jobs ?? {});
const steps = (job: Job): Job[] => job.steps ?? [];
const runText = (job: Job) => steps(job).map((s) => s.run ?? "").join("\n");
const usesOf = (f: string) => jobs(f).flatMap(([, j]) => [...(j.uses ? [j.uses] : []), ...steps(j).map((s) => s.uses).filter(Boolean)]) as string[];
const stepUsing = (job: Job, action: string) => steps(job).filter((s) => typeof s.uses === "string" && s.uses.startsWith(`${action}@`));

/**
 * Every action the workflows use, at the commit its tag points to and the runtime its action.yml
 * declares at that commit. Checked in a clone of each action's repository:
 * `git rev-parse <tag>^{commit}` and `git show <tag>:action.yml` (runs.using); the first six on
 * 2026-11-23, upload-artifact and download-artifact on 2026-11-25. Each is the newest release of
 * the action's current major on that day. Re-check both when a pin changes.
 */
const VERIFIED_ACTIONS: Record<string, { tag: string; sha: string; runtime: string }> = {
    "actions/checkout": { tag: "v7.0.1", sha: "3d3c42e5aac5ba805825da76410c181273ba90b1", runtime: "node24" },
    "actions/setup-node": { tag: "v7.0.0", sha: "820762786026740c76f36085b0efc47a31fe5020", runtime: "node24" },
    "actions/github-script": { tag: "v8.0.0", sha: "ed597411d8f924073f98dfc5c65a23a2325f34cd", runtime: "node24" },
    "actions/upload-artifact": { tag: "v7.0.0", sha: "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", runtime: "node24" },
    "actions/download-artifact": { tag: "v8.0.1", sha: "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", runtime: "node24" },
    "helm/kind-action": { tag: "v1.14.0", sha: "ef37e7f390d99f746eb8b610417061a60e82a6cc", runtime: "node24" },
    "pulumi/actions": { tag: "v7.0.0", sha: "8e5e406f4007fca908480587cb9893c07090f58d", runtime: "node24" },
    "pulumi/auth-actions": { tag: "v2.1.0", sha: "141415910c3beb54e03b48e9057c204c97b956f2", runtime: "node24" },
};

describe("workflow files", () => {
    it("exist for pull requests, the prod preview, deployment, drift and e2e", () => {
        assert.deepEqual(FILES, ["deploy.yml", "drift.yml", "e2e.yml", "preview-prod.yml", "pull-request.yml"]);
    });

    for (const f of FILES) {
        describe(f, () => {
            it("parses as YAML without errors or warnings", () => {
                const doc = YAML.parseDocument(text(f));
                assert.deepEqual([...doc.errors, ...doc.warnings].map((e) => e.message), []);
                assert.ok(Object.keys(workflow(f).jobs ?? {}).length > 0, "no jobs");
            });

            it("pins every action by a full commit SHA with a version comment", () => {
                for (const uses of usesOf(f)) {
                    if (uses.startsWith("./")) continue;
                    assert.match(uses, /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/, `${uses} is not pinned by commit`);
                }
                for (const line of text(f).split("\n").filter((l) => /^\s*(-\s+)?uses:/.test(l) && !/uses:\s*\.\//.test(l))) {
                    assert.match(line, /@[0-9a-f]{40} # v\d[\w.]*\s*$/, `no version comment: ${line.trim()}`);
                }
            });

            it("only runs npm scripts that exist in package.json", () => {
                const used = [...text(f).matchAll(/npm run(?:\s+-{1,2}[\w-]+)*\s+([\w:.-]+)/g)].map((m) => m[1]);
                for (const s of used) assert.ok(s in SCRIPTS, `npm run ${s} is not a script of package.json`);
                assert.doesNotMatch(text(f), /\btsx tools\//, "workflows call npm scripts, not the tools' file paths");
            });

            it("exchanges the OpenID Connect token right before the one pulumi step, for a team, for at most an hour", () => {
                assert.doesNotMatch(text(f), /PULUMI_ACCESS_TOKEN/, "a long-lived Pulumi token deploys prod and reads its state");
                for (const [name, job] of jobs(f)) {
                    const all = steps(job);
                    const auth = all.findIndex((s) => /^pulumi\/auth-actions@/.test(s.uses ?? ""));
                    const cli = all.findIndex((s) => /^pulumi\/actions@/.test(s.uses ?? "") && s.with?.command);
                    assert.equal(auth >= 0, job.permissions?.["id-token"] === "write", `job ${name}: id-token: write exactly when the job exchanges it`);
                    if (cli < 0) continue;
                    assert.ok(auth >= 0, `job ${name} runs pulumi without an OpenID Connect token`);
                    assert.equal(cli, auth + 1, `job ${name}: the token is exchanged right before the pulumi step, not earlier`);
                    assert.equal(cli, all.length - 1, `job ${name}: no step runs after the pulumi step with the token in its environment`);
                    const token = all[auth].with;
                    assert.equal(token["requested-token-type"], "urn:pulumi:token-type:access_token:team");
                    assert.equal(token.scope, "team:${{ vars.PULUMI_TEAM }}", `job ${name}: the team is its environment's variable`);
                    assert.ok(Number(token["token-expiration"]) > 0 && Number(token["token-expiration"]) <= 3600, `job ${name}: the token lives at most an hour`);
                }
            });

            it("runs every action on a supported runtime (node24), at the commit of its verified tag", () => {
                for (const line of text(f).split("\n").filter((l) => /^\s*(-\s+)?uses:/.test(l) && !/uses:\s*\.\//.test(l))) {
                    const m = /uses:\s*([\w.-]+\/[\w.-]+)@([0-9a-f]{40}) # (v[\w.]+)\s*$/.exec(line);
                    assert.ok(m, line.trim());
                    const known = VERIFIED_ACTIONS[m[1]];
                    assert.ok(known, `${m[1]} is not in the table of verified actions`);
                    assert.deepEqual([m[2], m[3]], [known.sha, known.tag], `${m[1]}: pinned commit and tag differ from the verified pair`);
                    assert.equal(known.runtime, "node24", `${m[1]} ${known.tag} runs on ${known.runtime}`);
                }
                for (const [, job] of jobs(f)) {
                    for (const s of stepUsing(job, "actions/setup-node")) assert.equal(s.with["node-version"], 24, "jobs run on Node 24");
                }
            });

            it("installs the pinned pulumi CLI (.pulumi.version) wherever it runs pulumi", () => {
                for (const [name, job] of jobs(f)) {
                    for (const s of stepUsing(job, "pulumi/actions")) {
                        assert.equal(s.with?.["pulumi-version-file"], ".pulumi.version", `job ${name}: pulumi/actions installs whatever CLI is newest`);
                    }
                }
            });
        });
    }
});

describe("the settings the pipeline's safety rests on (docs/usage.md)", () => {
    it("every credential that can decrypt prod sits behind required reviewers or main only", () => {
        for (const [name, env] of Object.entries(ENVIRONMENTS)) {
            if (env.stacks.includes("prod")) assert.ok(env.reviewers || env.branches === "main", `${name} can decrypt prod for any branch without a reviewer`);
            if (env.write) assert.equal(env.branches, "main", `${name} writes a stack from any branch`);
            if (env.write && env.stacks.includes("prod")) assert.ok(env.after && ENVIRONMENTS[env.after].reviewers, `${name} deploys prod without an approval`);
        }
    });

    it("documents each environment with its secrets, reviewers and deployment branches", () => {
        const section = USAGE.slice(USAGE.indexOf("## What the pipeline's safety rests on"));
        assert.ok(section.length > 100, "docs/usage.md has no section \"What the pipeline's safety rests on\"");
        for (const [name, env] of Object.entries(ENVIRONMENTS)) {
            const row = section.split("\n").find((l) => l.startsWith(`| \`${name}\` |`));
            assert.ok(row, `no row for the environment ${name}`);
            for (const s of env.secrets) assert.ok(row.includes(`\`${s}\``), `${name}: secret ${s} is not documented`);
            assert.match(row, env.reviewers ? /required reviewers/ : /no reviewers/, `${name}: reviewers`);
            assert.match(row, env.branches === "main" ? /`main` only/ : /any branch/, `${name}: deployment branches`);
            if (env.stacks.length) assert.match(row, env.write ? /Stack Write/ : /Stack Read/, `${name}: the team's permission`);
            assert.ok(section.includes(`repo:<owner>/<repo>:environment:${name}`) || env.stacks.length === 0, `${name}: its OIDC subject binding is not documented`);
            if (env.workflowRef) assert.ok(row.includes(`\`workflow_ref\` = \`<owner>/<repo>/.github/workflows/${env.workflowRef}@refs/heads/main\``), `${name}: the OIDC policy's workflow_ref rule is not documented`);
        }
        for (const setting of [/branch protection/i, /CODEOWNERS/, /prevent self-review/i, /administrators? (to )?bypass/i, /create and approve pull requests/i, /fork pull request/i, /audience/i]) {
            assert.match(section, setting, `docs/usage.md does not state ${setting}`);
        }
        assert.doesNotMatch(section, /repo:<owner>\/<repo>:(pull_request|ref:)[^\n]*\bgets?\b/, "no Pulumi team is bound to the pull_request or branch subjects");
    });

    it("names the model's exceptions where they are decided: artifact checks and pre-credential steps are npm scripts, unchecked downloads are in docs/usage.md", () => {
        for (const script of [...Object.values(ARTIFACT_CHECKS), ...PRE_CREDENTIAL_SCRIPTS]) assert.ok(script in SCRIPTS, `npm run ${script} is not a script of package.json`);
        const section = USAGE.slice(USAGE.indexOf("## What the pipeline's safety rests on"));
        const items = section.slice(section.indexOf("What no checksum recorded here checks"));
        for (const what of Object.keys(UNVERIFIED_DOWNLOADS)) assert.match(items, new RegExp(`^  - \`?${what.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\`?[ :]`, "mi"), `docs/usage.md's list of unchecked downloads has no item for ${what}`);
        assert.match(items, /without a committed checksum/);
        for (const what of [/What the prod-preview approval guarantees/, /What it does not guarantee/, /gh api "?repos\/OWNER\/REPO\/environments/]) assert.match(section, what);
    });

    it("has a CODEOWNERS file that covers the workflows, their scripts and the policy", () => {
        const owners = fs.readFileSync(path.join(ROOT, ".github", "CODEOWNERS"), "utf8");
        for (const p of ["/.github/", "/policies/", "/Pulumi.prod.yaml", "/tools/lint/"]) assert.match(owners, new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s+@\\S+`, "m"), `CODEOWNERS does not cover ${p}`);
    });

    it("has a runbook for a deployment cancelled or failed midway", () => {
        const runbook = fs.readFileSync(path.join(ROOT, "docs", "deploy-runbook.md"), "utf8");
        for (const term of [/pending operations/i, /pulumi cancel/, /pulumi refresh/, /pulumi stack export/, /who holds the write identity/i]) assert.match(runbook, term);
    });
});

/**
 * The pins against the projects' own repositories, when bare clones are at hand:
 * OPS_PIN_MIRRORS=<folder> with one <owner>+<name>/repo git directory per project (the layout
 * the team's source fetcher leaves). Without it these checks are skipped, and say so.
 */
describe("pins checked against the projects' repositories (OPS_PIN_MIRRORS)", () => {
    const mirrors = process.env.OPS_PIN_MIRRORS;
    const git = (repo: string, ...args: string[]) => spawnSync("git", [`--git-dir=${path.join(mirrors!, repo.replace("/", "+"), "repo")}`, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
    const has = (repo: string) => !!mirrors && fs.existsSync(path.join(mirrors, repo.replace("/", "+"), "repo"));
    const skip = (t: { skip: (m: string) => void }, repo: string) => t.skip(mirrors ? `no clone of ${repo} in ${mirrors}` : "set OPS_PIN_MIRRORS to a folder of bare clones (<owner>+<name>/repo) to check the pins");

    /** Why a pin does not hold in the action's own repository, or undefined. */
    const pinProblem = (action: string, pin: { tag: string; sha: string; runtime: string }): string | undefined => {
        const tagged = git(action, "rev-parse", `${pin.tag}^{commit}`).stdout.trim();
        if (tagged !== pin.sha) return `${action} ${pin.tag} is ${tagged || "no tag"} in its repository, not ${pin.sha}`;
        const manifest = git(action, "show", `${pin.sha}:action.yml`).stdout || git(action, "show", `${pin.sha}:action.yaml`).stdout;
        const runtime = manifest ? YAML.parse(manifest)?.runs?.using : undefined;
        if (runtime !== pin.runtime) return `${action} at ${pin.sha} runs on ${runtime}, not ${pin.runtime}`;
        return undefined;
    };
    for (const [action, pin] of Object.entries(VERIFIED_ACTIONS)) {
        it(`${action} ${pin.tag} is ${pin.sha}, on ${pin.runtime}`, (t) => {
            if (!has(action)) return skip(t, action);
            assert.equal(pinProblem(action, pin), undefined);
        });
    }
    // The insecure edit the local table cannot see: a pin moved to another commit of the action,
    // with the table updated to match (here the commit of another of its tags).
    it("refuses a pin moved to another commit together with the table", (t) => {
        const action = Object.keys(VERIFIED_ACTIONS).find(has);
        if (!action) return skip(t, "any pinned action");
        const pin = VERIFIED_ACTIONS[action];
        const other = git(action, "tag", "--list", "v*").stdout.split("\n").map((x) => x.trim()).filter(Boolean).map((tag) => git(action, "rev-parse", `${tag}^{commit}`).stdout.trim()).find((c) => /^[0-9a-f]{40}$/.test(c) && c !== pin.sha);
        assert.ok(other, `${action} has no other tagged commit`);
        assert.match(pinProblem(action, { ...pin, sha: other }) ?? "", new RegExp(`${pin.tag} is ${pin.sha} in its repository, not ${other}`));
    });

    // e2e-manifests.sh: VAR=<commit> # <owner/name> <tag>, and each verified download's file and sha256.
    const script = fs.readFileSync(path.join(ROOT, ".github", "scripts", "e2e-manifests.sh"), "utf8");
    const commits = new Map([...script.matchAll(/^(\w+)=([0-9a-f]{40})\s+# ([\w.-]+\/[\w.-]+) (\S+)$/gm)].map((m) => [m[1], { commit: m[2], repo: m[3], tag: m[4] }]));
    const downloads: Array<{ repo: string; v: string; file: string; sum: string }> = [];
    let template: { repo: string; v: string; file: string } | undefined;
    let inPins = false;
    for (const line of script.split("\n")) {
        if (line.trim() === "PINS") { inPins = false; continue; }
        if (inPins && template) { const [file, sum] = line.trim().split(/\s+/); downloads.push({ ...template, file: template.file.replace("$file", file), sum }); continue; }
        if (/<<'PINS'/.test(line)) { inPins = true; continue; }
        const m = /\bverified ([\w/.-]+) "\$(\w+)" "?([^" ]+)"? "?(\$sum|[0-9a-f]{64})"?/.exec(line);
        if (!m) continue;
        if (m[4] === "$sum") template = { repo: m[1], v: m[2], file: m[3] };
        else downloads.push({ repo: m[1], v: m[2], file: m[3], sum: m[4] });
    }

    it("reads every pin of e2e-manifests.sh", () => {
        assert.ok(commits.size >= 4 && downloads.length >= 8, `${commits.size} commits, ${downloads.length} downloads`);
        for (const d of downloads) assert.ok(commits.get(d.v)?.repo === d.repo, `${d.repo} ${d.file}: $${d.v} is not that repository's commit`);
    });

    for (const [v, c] of commits) {
        it(`${c.repo} ${c.tag} is ${c.commit}, and the files taken from it have their recorded sha256`, (t) => {
            if (!has(c.repo)) return skip(t, c.repo);
            assert.equal(git(c.repo, "rev-parse", `${c.tag}^{commit}`).stdout.trim(), c.commit, `$${v}`);
            for (const d of downloads.filter((x) => x.v === v)) {
                const blob = spawnSync("bash", ["-c", 'git --git-dir="$1" show "$2" | sha256sum', "_", path.join(mirrors!, c.repo.replace("/", "+"), "repo"), `${c.commit}:${d.file}`], { encoding: "utf8" });
                assert.equal(blob.stdout.slice(0, 64), d.sum, `${d.file}`);
            }
        });
    }
});

describe("pull-request workflow", () => {
    const all = Object.fromEntries(jobs("pull-request.yml"));

    it("installs with npm ci, runs the tests and the type check", () => {
        const run = runText(all.test);
        assert.match(run, /npm ci/);
        assert.match(run, /npm test/);
        assert.match(run, /npm run typecheck/);
    });

    it("renders every stack, diffs dev and prod, and hands the report to the comment job as an artifact", () => {
        const job = all.diff;
        assert.equal(steps(job)[0].with["fetch-depth"], 0, "the base commit must be in the clone");
        assert.match(runText(job), /npm run render -- --stack "\$stack"/);
        assert.match(runText(job), /npm run -s diff -- --stack dev --stack prod --base "\$BASE_SHA"/);
        const upload = stepUsing(job, "actions/upload-artifact")[0];
        assert.equal(upload.with.path, "report/report.md");
        // comment-body: main's script (the base commit's checkout) turns the report into the body.
        const body = all["comment-body"];
        assert.equal(steps(body)[0].with.ref, "${{ github.event.pull_request.base.sha }}");
        assert.equal(stepUsing(body, "actions/download-artifact")[0].with.name, upload.with.name);
        assert.match(runText(body), /npm run -s comment:body -- --base "\$BASE_SHA" "\$RUNNER_TEMP\/offline-diff\/report\.md" "\$RUNNER_TEMP\/comment\.md"/);
        assert.equal(stepUsing(all.comment, "actions/download-artifact")[0].with.name, stepUsing(body, "actions/upload-artifact")[0].with.name);
        const script: string = stepUsing(all.comment, "actions/github-script")[0].with.script;
        const marker = /const marker = "(<!--[^"]+-->)"/.exec(script)?.[1];
        assert.equal(marker, MARKER, "the body starts with the marker the comment job looks for");
        assert.ok(USAGE.includes(marker), "docs/usage.md names the marker");
    });

    it("previews dev and prod with the policy pack and each stack's policy configuration", () => {
        for (const stack of ["dev", "prod"]) {
            const job = stack === "dev" ? all["preview-dev"] : workflow("preview-prod.yml").jobs["preview-prod"];
            assert.equal(job.environment?.name ?? job.environment, `preview-${stack}`);
            const preview = stepUsing(job, "pulumi/actions")[0];
            assert.equal(preview.with.command, "preview");
            assert.equal(preview.with.policyPacks, "policies");
            assert.equal(preview.with.policyPackConfigs, `policies/config/${stack}.json`);
            assert.equal(preview.with["comment-on-summary"], true);
        }
        assert.equal(all["preview-skipped"].if, "vars.PULUMI_ORG == ''", "an unconfigured repository gets a notice, not a failure");
    });

    it("checks out the private conformance data in a job without the pull request's code", () => {
        const data = all["conformance-data"];
        assert.deepEqual(steps(data).map((s) => s.uses?.replace(/@.*/, "")), ["actions/checkout", "actions/upload-artifact"]);
        assert.equal(steps(data)[0].with.token, "${{ secrets.CONFORMANCE_READ_TOKEN }}");
        assert.match(runText(all.conformance), /npm run conformance -- "\$CASES"/);
        assert.match(runText(all.conformance), /::notice title=conformance skipped::/);
    });
});

describe("deploy workflow", () => {
    const all = Object.fromEntries(jobs("deploy.yml"));

    it("runs on pushes to main: render, pulumi up for dev, approval, then pulumi up for prod", () => {
        assert.deepEqual(workflow("deploy.yml").on.push.branches, ["main"]);
        assert.deepEqual(all["up-dev"].needs, ["main-only", "render"]);
        assert.equal(all["approve-prod"].needs, "up-dev");
        assert.equal(all["up-prod"].needs, "approve-prod");
        assert.equal(all["up-dev"].environment, "dev");
        assert.equal(all["approve-prod"].environment, "production-approval");
        assert.equal(all["up-prod"].environment, "production");
        assert.deepEqual(steps(all["approve-prod"]).map((s) => s.uses ?? "run"), ["run"], "the approval job runs nothing but an echo");
        assert.match(runText(all.render), /npm run render -- --stack dev\n\s*npm run render -- --stack prod/);
    });

    for (const [job, stack] of [["up-dev", "dev"], ["up-prod", "prod"]]) {
        it(`${job}: pulumi up of ${stack} with the policy pack and ${stack}'s policy configuration`, () => {
            const up = stepUsing(all[job], "pulumi/actions")[0];
            assert.equal(up.with.command, "up");
            assert.equal(up.with["stack-name"], `\${{ format('{0}/${stack}', vars.PULUMI_ORG) }}`);
            assert.equal(up.with.policyPacks, "policies");
            assert.equal(up.with.policyPackConfigs, `policies/config/${stack}.json`);
            assert.deepEqual(all[job].concurrency, { group: `deploy-${stack}`, "cancel-in-progress": false });
        });
    }
});

describe("image lock in the pipelines (docs/images.md)", () => {
    const lockStep = (job: Job) => steps(job).findIndex((s) => /npm run (-s )?images:lock -- --stack prod/.test(s.run ?? ""));
    const before = (job: Job, what: (s: any) => boolean) => steps(job).findIndex(what);
    for (const [file, job] of [["deploy.yml", "up-prod"], ["drift.yml", "drift-prod"]]) {
        it(`${file} ${job}: resolves prod's tags to digests before the kubeconfig and the Pulumi token, and shows the lock`, () => {
            const j = Object.fromEntries(jobs(file))[job];
            const i = lockStep(j);
            assert.ok(i >= 0, "no images:lock step");
            assert.ok(i < before(j, (s) => /KUBECONFIG/.test(JSON.stringify(s.env ?? {}))), "images:lock after the kubeconfig");
            assert.ok(i < before(j, (s) => String(s.uses ?? "").startsWith("pulumi/auth-actions@")), "images:lock after the Pulumi token");
            assert.match(steps(j)[i].run, /--markdown .*\n.*GITHUB_STEP_SUMMARY/);
        });
    }
    it("deploy.yml up-prod stops when the registries serve a digest the committed lock does not record", () => {
        const j = Object.fromEntries(jobs("deploy.yml"))["up-prod"];
        assert.ok(steps(j).slice(lockStep(j) + 1).some((s) => /git diff --quiet -- images\.lock\.json[\s\S]*exit 1/.test(s.run ?? "")));
    });
    it("pull-request.yml: the credential-free diff job resolves the lock into the report; preview-prod.yml takes it in as data", () => {
        const all = Object.fromEntries(jobs("pull-request.yml"));
        const i = lockStep(all.diff);
        assert.ok(i >= 0);
        assert.match(steps(all.diff)[i].run, />> report\/report\.md/);
        assert.ok(steps(all.diff).findIndex((s) => s.with?.name === "offline-diff") > i, "the report is uploaded after the lock is added");
        const prod = workflow("preview-prod.yml").jobs["preview-prod"];
        const dl = steps(prod).findIndex((s) => s.with?.name === "images-lock");
        assert.ok(dl >= 0);
        assert.deepEqual(steps(prod)[dl].with, { name: "images-lock", path: "${{ runner.temp }}/images-lock", "run-id": "${{ github.event.workflow_run.id }}", "github-token": "${{ github.token }}" });
        assert.equal(steps(prod)[dl + 1].run, 'npm run -s images:artifact -- "$RUNNER_TEMP/images-lock" images.lock.json');
        assert.ok(dl + 1 < steps(prod).findIndex((s) => String(s.uses ?? "").startsWith("pulumi/auth-actions@")));
    });
});

describe("drift workflow", () => {
    it("runs on a schedule: pulumi preview --refresh --expect-no-changes for every stack, one run at a time", () => {
        const wf = workflow("drift.yml");
        assert.ok(wf.on.schedule[0].cron);
        assert.deepEqual(wf.concurrency, { group: "drift", "cancel-in-progress": false });
        for (const stack of ["dev", "prod"]) {
            const job = wf.jobs[`drift-${stack}`];
            assert.equal(job.environment, `drift-${stack}`, "each drift job reads one stack only");
            const preview = stepUsing(job, "pulumi/actions")[0];
            assert.equal(preview.with.command, "preview");
            assert.equal(preview.with["stack-name"], `\${{ format('{0}/${stack}', vars.PULUMI_ORG) }}`);
            assert.equal(preview.with.refresh, true);
            assert.equal(preview.with["expect-no-changes"], true);
        }
    });
});

describe("e2e manifests (.github/scripts/e2e-manifests.sh)", () => {
    const script = path.join(ROOT, ".github", "scripts", "e2e-manifests.sh");
    it("applies a downloaded file only when its sha256 matches", () => {
        const base = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-raw-"));
        try {
            const commit = "a".repeat(40);
            fs.mkdirSync(path.join(base, "o", "r", commit), { recursive: true });
            fs.writeFileSync(path.join(base, "o", "r", commit, "x.yaml"), "kind: X\n");
            const sum = "3e0f0e0a8b1b6b4e1c7ca7b0b6fbb1e0b0c3f2bbd1d0a1b4e5f8c9d6e7f8a9b0"; // not the file's
            const good = spawnSync("sha256sum", [path.join(base, "o", "r", commit, "x.yaml")], { encoding: "utf8" }).stdout.slice(0, 64);
            const run = (s: string) => spawnSync("bash", [script, "verified", "o/r", commit, "x.yaml", s], { env: { ...process.env, E2E_RAW_BASE: `file://${base}` }, encoding: "utf8" });
            assert.equal(run(good).status, 0, run(good).stderr);
            const bad = run(sum);
            assert.notEqual(bad.status, 0);
            // The callers capture stdout (f=$(verified ...)): the reason goes to stderr, or it is lost.
            assert.match(bad.stderr, /::error::o\/r\/x\.yaml at a{40} does not have the sha256/);
            assert.equal(bad.stdout, "");
            const captured = spawnSync("bash", ["-c", 'f=$(bash "$0" verified o/r "$1" x.yaml "$2")', script, commit, sum], { env: { ...process.env, E2E_RAW_BASE: `file://${base}` }, encoding: "utf8" });
            assert.notEqual(captured.status, 0);
            assert.match(captured.stderr, /does not have the sha256/, "the message survives a command substitution");
        } finally {
            fs.rmSync(base, { recursive: true, force: true });
        }
    });
});

describe("e2e workflow", () => {
    const [[, job]] = jobs("e2e.yml");
    const run = runText(job);
    const names = steps(job).map((s) => s.name ?? s.uses ?? s.run);

    it("creates a kind cluster, deploys the ci stack with the local backend, checks, and always destroys", () => {
        assert.equal(stepUsing(job, "helm/kind-action").length, 1);
        assert.match(run, /pulumi login --local/);
        assert.match(run, /PULUMI_BACKEND_URL=file:\/\//);
        assert.match(run, /pulumi up --stack ci/);
        const destroy = steps(job).find((s) => /pulumi destroy --stack ci/.test(s.run ?? ""));
        assert.equal(destroy?.if, "always()");
        const order = (re: RegExp) => steps(job).findIndex((s) => re.test(s.run ?? ""));
        assert.ok(order(/pulumi up --stack ci/) < order(/\/global\/health/) && order(/\/global\/health/) < order(/pulumi destroy/), names.join(" | "));
        assert.deepEqual(secretRefs(workflow("e2e.yml")), [], "the e2e job needs no repository secret");
    });

    // Section 4 and 5.1/7: each interface with the status it must answer.
    const checks: Array<[string, RegExp]> = [
        ["agent server 401 without credentials on /global/health", /expect "agent GET \/global\/health without credentials" 401 "\$\(call "\$agent" [^)]*"https:\/\/\$agent\/global\/health"\)"/],
        ["agent server 200 with credentials on /global/health", /expect "agent GET \/global\/health with credentials" 200 "\$\(call "\$agent" [^)]*-u "\$user:\$password" "https:\/\/\$agent\/global\/health"\)"/],
        ["workflow tool 200 on /healthz", /expect "[^"]*" 200 "\$\(call "\$workflow" [^)]*"https:\/\/\$workflow\/healthz"\)"/],
        ["workflow tool 200 on /healthz/readiness", /expect "[^"]*" 200 "\$\(call "\$workflow" [^)]*"https:\/\/\$workflow\/healthz\/readiness"\)"/],
        ["workflow tool 404 on an unregistered webhook path", /expect "[^"]*" 404 "\$\(call "\$webhook" [^)]*"https:\/\/\$webhook\/webhook\/[^"]+"\)"/],
        ["booking application on /health", /expect "[^"]*" 2\[0-9\]\[0-9\] "\$\(call "\$booking" [^)]*"https:\/\/\$booking\/health"\)"/],
        ["booking application on /readyz", /expect "[^"]*" 2\[0-9\]\[0-9\] "\$\(call "\$booking" [^)]*"https:\/\/\$booking\/readyz"\)"/],
        ["booking application serves text/html on /", /expect "[^"]*" "200 text\/html\.\*" "\$\(call "\$booking" [^)]*%\{content_type\}' "https:\/\/\$booking\/"\)"/],
        ["bridge lists models on /v1/models", /expect "[^"]*" 200 "\$\(call "\$bridge" [^)]*"https:\/\/\$bridge\/v1\/models"\)"/],
    ];
    for (const [what, re] of checks) it(`checks ${what}`, () => assert.match(run, re));

    it("goes through the ingress controller, fails the step on any mismatch", () => {
        assert.match(run, /curl -sk --max-time 30 --resolve "\$h:443:127\.0\.0\.1"/);
        assert.match(run, /exit "\$failed"/);
    });
});

describe("the ci stack of the e2e job", () => {
    it("pins the pulumi CLI in one file, an exact version", () => {
        assert.match(fs.readFileSync(path.join(ROOT, ".pulumi.version"), "utf8"), /^\d+\.\d+\.\d+\n$/);
    });

    it("pulls only published images: none on a placeholder registry", async () => {
        const r = await renderStack("ci");
        const images = r.objects.flatMap((o) => (["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"].includes(String(o.kind)) ? containersOf(o) : [])).map((c) => String(c.image));
        assert.ok(images.length > 10);
        for (const image of images) assert.doesNotMatch(image, /(^|\.)example\.(com|org|net)\//, `${image} cannot be pulled by a runner`);
    });

    // The stand-ins of the two applications this repository does not build run their rendered
    // arguments under busybox, as the pod does, as a non-root user with the pod's port variable
    // (the rendered env entry holding the container port: PORT for booking, BRIDGE_PORT for the bridge).
    for (const app of ["booking", "model-bridge"]) {
        it(`the ${app} stand-in answers the paths the e2e job checks`, async (t) => {
            const busybox = ["/usr/bin/busybox", "/bin/busybox"].find((p) => fs.existsSync(p));
            if (!busybox) {
                if (process.env.CI === "true") assert.fail("busybox is not installed (apt-get install busybox)");
                t.skip("busybox is not installed (apt-get install busybox)");
                return;
            }
            const r = await renderStack("ci");
            const [c] = containersOf(find(r, "Deployment", app));
            assert.equal(c.image, "docker.io/library/busybox:1.37.0");
            assert.deepEqual(c.args.slice(0, 2), ["sh", "-c"]);
            const portVar = c.env.find((e: any) => e.value === String(c.ports[0].containerPort))?.name;
            assert.ok(portVar && c.args[2].includes(`$${portVar}`), `${app}: the stand-in must listen on the port its env names`);
            const port = 20000 + Math.floor(Math.random() * 20000);
            const child = spawn(busybox, ["sh", "-c", c.args[2]], { env: { PATH: "/usr/bin:/bin", [portVar]: String(port) }, stdio: "ignore" });
            try {
                const get = async (p: string) => {
                    for (let i = 0; ; i++) {
                        try {
                            const res = await fetch(`http://127.0.0.1:${port}${p}`);
                            return [res.status, res.headers.get("content-type") ?? ""] as const;
                        } catch (e) {
                            if (i > 50) throw e;
                            await new Promise((ok) => setTimeout(ok, 100));
                        }
                    }
                };
                for (const p of ["/health", "/readyz", "/v1/models"]) assert.equal((await get(p))[0], 200, p);
                const [status, type] = await get("/");
                assert.equal(status, 200);
                assert.match(type, /^text\/html/);
                assert.equal((await get("/not-there"))[0], 404);
            } finally {
                child.kill();
            }
        });
    }

    it("is a stack of the render, and renders without problems", async () => {
        assert.ok(listStacks().includes("ci"));
        const r = await renderStack("ci");
        assert.deepEqual(r.errors, []);
        assert.ok(r.objects.some((o) => o.kind === "Ingress"), "the e2e checks go through Ingresses");
    });

    it("commits no secret: every secret key of the schema is absent or secure in Pulumi.ci.yaml", () => {
        const config = YAML.parse(fs.readFileSync(path.join(ROOT, "Pulumi.ci.yaml"), "utf8")).config ?? {};
        for (const { key, field } of flatten(schema)) {
            if (!field.secret) continue;
            const v = config[`ops:${key}`];
            assert.ok(v === undefined || (typeof v === "object" && "secure" in v), `ops:${key} is committed in plain text`);
        }
    });

    it("gets every required secret from a generated value of the shape the schema checks", () => {
        const required = flatten(schema).filter(({ field }) => field.secret && !field.optional);
        assert.ok(required.length > 0);
        for (const { key, field } of required) {
            const a = generatedValue(field.placeholder!);
            const b = generatedValue(field.placeholder!);
            assert.equal(field.check(a).ok, true, `generated ${key} has the wrong shape`);
            if (/0/.test(field.placeholder!)) assert.notEqual(a, b, `${key} is not random`);
        }
    });
});
