/**
 * The GitHub workflows (.github/workflows): they parse, pin every action by commit, grant least
 * permissions, only call npm scripts that exist, keep secrets away from fork pull requests, and
 * do what the delivery pipeline promises (preview with the policy pack, gated prod deployment,
 * drift detection, and an e2e run that checks the HTTP interfaces of section 4).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import * as YAML from "yaml";
import { flatten, schema } from "../config/schemaIndex";
import { generatedValue } from "../.github/scripts/ci-secrets";
import { listStacks } from "../tools/harness/stackConfig";
import { renderStack } from "./render";

const ROOT = path.resolve(__dirname, "..");
const DIR = path.join(ROOT, ".github", "workflows");
const FILES = fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
const text = (f: string) => fs.readFileSync(path.join(DIR, f), "utf8");
const workflow = (f: string) => YAML.parse(text(f));
const SCRIPTS: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;

type Job = Record<string, any>;
const jobs = (f: string): Array<[string, Job]> => Object.entries(workflow(f).jobs ?? {});
const steps = (job: Job): Job[] => job.steps ?? [];
const runText = (job: Job) => steps(job).map((s) => s.run ?? "").join("\n");
/** on: may be a string, a list or a map. */
const triggers = (f: string): string[] => {
    const on = workflow(f).on ?? workflow(f)[true as unknown as string];
    return typeof on === "string" ? [on] : Array.isArray(on) ? on : Object.keys(on ?? {});
};
/** A reference to the secrets context inside an expression: ${{ secrets.X }}, ${{ secrets[matrix.y] }}. */
const SECRET_REF = /\$\{\{[^}]*\bsecrets\s*[.[]/;
const FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository";
const usesOf = (f: string) => jobs(f).flatMap(([, j]) => [...(j.uses ? [j.uses] : []), ...steps(j).map((s) => s.uses).filter(Boolean)]) as string[];
const stepUsing = (job: Job, action: string) => steps(job).filter((s) => typeof s.uses === "string" && s.uses.startsWith(`${action}@`));

describe("workflow files", () => {
    it("exist for pull requests, deployment, drift and e2e", () => {
        assert.deepEqual(FILES, ["deploy.yml", "drift.yml", "e2e.yml", "pull-request.yml"]);
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

            it("grants least permissions: a restrictive default and permissions on every job", () => {
                const top = workflow(f).permissions;
                assert.deepEqual(top, {}, "the workflow default must be no permissions");
                for (const [name, job] of jobs(f)) {
                    assert.ok(job.permissions && typeof job.permissions === "object", `job ${name} has no permissions block`);
                    assert.equal(job.permissions.contents, "read", `job ${name}: contents must be read`);
                    for (const [scope, level] of Object.entries(job.permissions)) {
                        if (level !== "write") continue;
                        assert.equal(scope, "pull-requests", `job ${name} writes ${scope}`);
                        const comments = steps(job).some((s) => /^actions\/github-script@/.test(s.uses ?? "") || s.with?.["comment-on-pr"] === true);
                        assert.ok(comments, `job ${name} may write pull requests but posts no comment`);
                    }
                    assert.ok(!("id-token" in job.permissions), `job ${name} asks for id-token without needing it`);
                }
            });

            it("only runs npm scripts that exist in package.json", () => {
                const used = [...text(f).matchAll(/npm run(?:\s+-{1,2}[\w-]+)*\s+([\w:.-]+)/g)].map((m) => m[1]);
                for (const s of used) assert.ok(s in SCRIPTS, `npm run ${s} is not a script of package.json`);
            });

            it("never uses pull_request_target, and keeps secrets out of jobs a fork's pull request runs", () => {
                assert.ok(!triggers(f).includes("pull_request_target"), "pull_request_target runs fork code with secrets");
                if (!triggers(f).includes("pull_request")) return;
                for (const [name, job] of jobs(f)) {
                    if (!SECRET_REF.test(JSON.stringify(job))) continue;
                    assert.ok(String(job.if ?? "").includes(FORK_GUARD), `job ${name} references secrets but also runs for forks`);
                }
            });
        });
    }
});

describe("pull-request workflow", () => {
    const all = Object.fromEntries(jobs("pull-request.yml"));

    it("installs with npm ci, runs the tests and the conformance cases, skipping them with a notice when the data is absent", () => {
        const run = runText(all.test);
        assert.match(run, /npm ci/);
        assert.match(run, /npm test/);
        assert.match(run, /npm run conformance -- "\$CASES"/);
        assert.match(run, /::notice title=conformance skipped::/);
    });

    it("renders every stack and posts the diff of dev and prod as one comment found by a hidden marker", () => {
        const job = all.diff;
        assert.equal(steps(job)[0].with["fetch-depth"], 0, "the base commit must be in the clone");
        assert.match(runText(job), /npm run render -- --stack "\$stack"/);
        assert.match(runText(job), /npm run -s diff -- --stack dev --stack prod --base "\$BASE_SHA"/);
        const script: string = stepUsing(job, "actions/github-script")[0].with.script;
        const marker = /const marker = "(<!--[^"]+-->)"/.exec(script)?.[1];
        assert.ok(marker && runText(job).includes(`echo "${marker}"`), "the comment body carries the marker the script looks for");
        assert.match(script, /updateComment/);
        assert.match(script, /createComment/);
    });

    it("previews each stack with the policy pack and that stack's policy configuration, only with credentials", () => {
        const job = all.preview;
        assert.ok(String(job.if).includes(FORK_GUARD));
        assert.deepEqual(job.strategy.matrix.include.map((m: { stack: string }) => m.stack), ["dev", "prod"]);
        assert.equal(job.env.PULUMI_ACCESS_TOKEN, "${{ secrets.PULUMI_ACCESS_TOKEN }}");
        const preview = stepUsing(job, "pulumi/actions")[0];
        assert.equal(preview.with.command, "preview");
        assert.equal(preview.with.policyPacks, "policies");
        assert.equal(preview.with.policyPackConfigs, "policies/config/${{ matrix.stack }}.json");
        assert.equal(preview.with["comment-on-pr"], true);
        for (const s of steps(job).slice(1)) assert.equal(s.if, "env.PULUMI_ACCESS_TOKEN != ''", `step ${s.name ?? s.uses ?? s.run} runs without credentials`);
    });
});

describe("deploy workflow", () => {
    const all = Object.fromEntries(jobs("deploy.yml"));

    it("runs on pushes to main: pulumi up for dev, then prod behind the production environment", () => {
        assert.deepEqual(workflow("deploy.yml").on.push.branches, ["main"]);
        assert.equal(all["up-prod"].needs, "up-dev");
        assert.equal(all["up-prod"].environment, "production");
        assert.equal(workflow("deploy.yml").concurrency["cancel-in-progress"], false, "a deployment in progress is never cancelled");
    });

    for (const [job, stack] of [["up-dev", "dev"], ["up-prod", "prod"]]) {
        it(`${job}: pulumi up of ${stack} with the policy pack and ${stack}'s policy configuration`, () => {
            const up = stepUsing(all[job], "pulumi/actions")[0];
            assert.equal(up.with.command, "up");
            assert.match(up.with["stack-name"], new RegExp(`'${stack}'|/${stack}'`));
            assert.equal(up.with.policyPacks, "policies");
            assert.equal(up.with.policyPackConfigs, `policies/config/${stack}.json`);
        });
    }
});

describe("drift workflow", () => {
    it("runs on a schedule: pulumi preview --refresh --expect-no-changes for every stack", () => {
        const wf = workflow("drift.yml");
        assert.ok(wf.on.schedule[0].cron);
        const [[, job]] = jobs("drift.yml");
        assert.deepEqual(job.strategy.matrix.include.map((m: { stack: string }) => m.stack), ["dev", "prod"]);
        const preview = stepUsing(job, "pulumi/actions")[0];
        assert.equal(preview.with.command, "preview");
        assert.equal(preview.with.refresh, true);
        assert.equal(preview.with["expect-no-changes"], true);
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
        assert.ok(!SECRET_REF.test(text("e2e.yml")), "the e2e job needs no repository secret");
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
