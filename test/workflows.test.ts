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
import { listStacks } from "../cli/harness/stackConfig";
import { spawn } from "node:child_process";
import { containersOf, find, renderStack } from "./render";

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

/**
 * Every action the workflows use, at the commit its tag points to and the runtime its action.yml
 * declares at that commit. Checked on 2026-11-23 in a clone of each action's repository:
 * `git rev-parse <tag>^{commit}` and `git show <tag>:action.yml` (runs.using). Each is the newest
 * release of the action's current major on that day. Re-check both when a pin changes.
 */
const VERIFIED_ACTIONS: Record<string, { tag: string; sha: string; runtime: string }> = {
    "actions/checkout": { tag: "v7.0.1", sha: "3d3c42e5aac5ba805825da76410c181273ba90b1", runtime: "node24" },
    "actions/setup-node": { tag: "v7.0.0", sha: "820762786026740c76f36085b0efc47a31fe5020", runtime: "node24" },
    "actions/github-script": { tag: "v8.0.0", sha: "ed597411d8f924073f98dfc5c65a23a2325f34cd", runtime: "node24" },
    "helm/kind-action": { tag: "v1.14.0", sha: "ef37e7f390d99f746eb8b610417061a60e82a6cc", runtime: "node24" },
    "pulumi/actions": { tag: "v7.0.0", sha: "8e5e406f4007fca908480587cb9893c07090f58d", runtime: "node24" },
    "pulumi/auth-actions": { tag: "v2.1.0", sha: "141415910c3beb54e03b48e9057c204c97b956f2", runtime: "node24" },
};

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
                        if (level !== "write" || scope === "id-token") continue; // id-token: checked below
                        assert.equal(scope, "pull-requests", `job ${name} writes ${scope}`);
                        const comments = steps(job).some((s) => /^actions\/github-script@/.test(s.uses ?? "") || s.with?.["comment-on-pr"] === true);
                        assert.ok(comments, `job ${name} may write pull requests but posts no comment`);
                    }
                    const oidc = stepUsing(job, "pulumi/auth-actions").length > 0;
                    if ("id-token" in job.permissions) assert.ok(oidc && job.permissions["id-token"] === "write", `job ${name} asks for id-token without exchanging it`);
                    else assert.ok(!oidc, `job ${name} exchanges an OpenID Connect token without id-token: write`);
                }
            });

            it("only runs npm scripts that exist in package.json", () => {
                const used = [...text(f).matchAll(/npm run(?:\s+-{1,2}[\w-]+)*\s+([\w:.-]+)/g)].map((m) => m[1]);
                for (const s of used) assert.ok(s in SCRIPTS, `npm run ${s} is not a script of package.json`);
            });

            it("never uses pull_request_target, and keeps secrets out of steps a fork's pull request runs", () => {
                assert.ok(!triggers(f).includes("pull_request_target"), "pull_request_target runs fork code with secrets");
                if (!triggers(f).includes("pull_request")) return;
                for (const [name, job] of jobs(f)) {
                    for (const step of steps(job)) {
                        if (!SECRET_REF.test(JSON.stringify(step))) continue;
                        const guarded = String(job.if ?? "").includes(FORK_GUARD) || String(step.if ?? "").includes(FORK_GUARD);
                        assert.ok(guarded, `job ${name}, step ${step.name ?? step.uses}: references secrets but also runs for forks`);
                    }
                }
            });

            it("passes secrets only to the steps that need them: never in workflow or job env", () => {
                assert.ok(!SECRET_REF.test(JSON.stringify(workflow(f).env ?? {})), "workflow-level env references secrets");
                for (const [name, job] of jobs(f)) {
                    assert.ok(!SECRET_REF.test(JSON.stringify(job.env ?? {})), `job ${name}: job-level env references secrets, so every step (npm ci's install scripts too) sees them`);
                }
            });

            it("holds no long-lived Pulumi token: credentials come from OpenID Connect right before the one step that uses them", () => {
                assert.doesNotMatch(text(f), /secrets\.PULUMI_ACCESS_TOKEN/, "a repository-wide PULUMI_ACCESS_TOKEN deploys prod and reads its state");
                for (const [name, job] of jobs(f)) {
                    const all = steps(job);
                    const auth = all.findIndex((s) => /^pulumi\/auth-actions@/.test(s.uses ?? ""));
                    const cli = all.findIndex((s) => /^pulumi\/actions@/.test(s.uses ?? "") && s.with?.command);
                    if (cli < 0) continue;
                    assert.ok(auth >= 0, `job ${name} runs pulumi without an OpenID Connect token`);
                    assert.equal(cli, auth + 1, `job ${name}: the token is exchanged right before the pulumi step, not earlier`);
                    assert.equal(cli, all.length - 1, `job ${name}: no step runs after the pulumi step with the token in its environment`);
                    const install = all.findIndex((s) => /npm ci/.test(s.run ?? ""));
                    assert.ok(install >= 0 && install < auth, `job ${name}: npm ci runs before any credential exists`);
                    const token = all[auth].with;
                    assert.equal(token["requested-token-type"], "urn:pulumi:token-type:access_token:team");
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

describe("pull-request workflow", () => {
    const all = Object.fromEntries(jobs("pull-request.yml"));

    it("installs with npm ci, runs the tests and the type check", () => {
        const run = runText(all.test);
        assert.match(run, /npm ci/);
        assert.match(run, /npm test/);
        assert.match(run, /npm run typecheck/);
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

    it("previews each stack with the policy pack and that stack's policy configuration, with a read-only credential", () => {
        const job = all.preview;
        assert.ok(String(job.if).includes(FORK_GUARD));
        assert.deepEqual(job.strategy.matrix.include.map((m: { stack: string }) => m.stack), ["dev", "prod"]);
        assert.equal(job.environment, undefined, "the preview runs the pull request's code: no deployment environment, no deploy secret");
        const token = stepUsing(job, "pulumi/auth-actions")[0];
        assert.equal(token.with.scope, "team:${{ vars.PULUMI_PREVIEW_TEAM }}", "the preview team (Stack Read) cannot update a stack");
        assert.deepEqual(job.strategy.matrix.include.map((m: { kubeconfig: string }) => m.kubeconfig), ["KUBECONFIG_PREVIEW_DEV", "KUBECONFIG_PREVIEW_PROD"]);
        const preview = stepUsing(job, "pulumi/actions")[0];
        assert.equal(preview.with.command, "preview");
        assert.equal(preview.with.policyPacks, "policies");
        assert.equal(preview.with.policyPackConfigs, "policies/config/${{ matrix.stack }}.json");
        assert.equal(preview.with["comment-on-pr"], true);
        assert.match(String(all["preview-skipped"].if), /vars\.PULUMI_PREVIEW_TEAM == ''/, "an unconfigured repository gets a notice, not a failure");
    });

    it("checks out the private conformance data with an explicit read-only token, never for forks", () => {
        const job = all.conformance;
        const shared = steps(job).find((s) => s.with?.path === "shared");
        assert.ok(shared, "no checkout of the shared data");
        assert.equal(shared.with.token, "${{ secrets.CONFORMANCE_READ_TOKEN }}");
        assert.ok(String(shared.if).includes(FORK_GUARD));
        assert.match(runText(job), /npm run conformance -- "\$CASES"/);
        assert.match(runText(job), /::notice title=conformance skipped::/);
    });
});

describe("deploy workflow", () => {
    const all = Object.fromEntries(jobs("deploy.yml"));

    it("runs on pushes to main: pulumi up for dev, then prod behind the production environment", () => {
        assert.deepEqual(workflow("deploy.yml").on.push.branches, ["main"]);
        assert.equal(all["up-prod"].needs, "up-dev");
        assert.equal(all["up-dev"].environment, "dev");
        assert.equal(all["up-prod"].environment, "production");
        assert.equal(workflow("deploy.yml").concurrency["cancel-in-progress"], false, "a deployment in progress is never cancelled");
    });

    it("deploys from main only: a dispatch of another branch fails before any credential exists", () => {
        const guard = all["main-only"];
        assert.equal(guard.needs, undefined);
        assert.match(runText(guard), /\[ "\$REF" != "refs\/heads\/main" \]/);
        assert.equal(steps(guard)[0].env.REF, "${{ github.ref }}");
        assert.equal(all["up-dev"].needs, "main-only");
        for (const job of ["up-dev", "up-prod"]) assert.equal(all[job].if, "github.ref == 'refs/heads/main'", `${job} runs for another ref`);
        const usage = fs.readFileSync(path.join(ROOT, "docs", "usage.md"), "utf8");
        assert.match(usage, /Deployment\s+branches/, "docs/usage.md tells how to restrict the environments to main");
    });

    it("takes each stack's credentials from its own environment: no repository-level deploy secret", () => {
        for (const [job, env] of [["up-dev", "dev"], ["up-prod", "production"]]) {
            const refs = [...JSON.stringify(all[job]).matchAll(/secrets\.(\w+)/g)].map((m) => m[1]);
            assert.deepEqual([...new Set(refs)], ["KUBECONFIG"], `${job}: only the ${env} environment's KUBECONFIG`);
            assert.equal(stepUsing(all[job], "pulumi/auth-actions")[0].with.scope, "team:${{ vars.PULUMI_TEAM }}", `${job}: the deploy team is the ${env} environment's variable`);
        }
        for (const f of FILES.filter((x) => x !== "deploy.yml")) {
            assert.doesNotMatch(text(f), /secrets\.KUBECONFIG\b(?!_)/, `${f} uses the deploy kubeconfig`);
            assert.doesNotMatch(text(f), /vars\.PULUMI_TEAM\b/, `${f} uses a deploy team`);
        }
    });

    for (const [job, stack] of [["up-dev", "dev"], ["up-prod", "prod"]]) {
        it(`${job}: pulumi up of ${stack} with the policy pack and ${stack}'s policy configuration`, () => {
            const up = stepUsing(all[job], "pulumi/actions")[0];
            assert.equal(up.with.command, "up");
            assert.equal(up.with["stack-name"], `\${{ format('{0}/${stack}', vars.PULUMI_ORG) }}`);
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
        assert.equal(stepUsing(job, "pulumi/auth-actions")[0].with.scope, "team:${{ vars.PULUMI_PREVIEW_TEAM }}", "drift only reads: the preview team");
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
    // arguments under busybox, as the pod does, as a non-root user with the pod's PORT.
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
            const port = 20000 + Math.floor(Math.random() * 20000);
            const child = spawn(busybox, ["sh", "-c", c.args[2]], { env: { PATH: "/usr/bin:/bin", PORT: String(port) }, stdio: "ignore" });
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
