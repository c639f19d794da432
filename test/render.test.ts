import { test } from "node:test";
import * as assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { render } from "../cli/harness/render";
import { REDACTED } from "../cli/harness/manifests";
import { SECRET_SIG } from "../cli/harness/program";
import { renderStack } from "./render";
import { readStackValues } from "../cli/harness/stackConfig";
import { projectFile } from "../tools/projectFile";

const ROOT = path.resolve(__dirname, "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");

function renderCli(args: string[]) {
    return spawnSync(TSX, ["cli/render.ts", ...args], { cwd: ROOT, encoding: "utf8" });
}

/** The render tool as a child process, without blocking this one (two can run at once). */
function renderCliAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
        execFile(TSX, ["cli/render.ts", ...args], { cwd: ROOT, encoding: "utf8" }, (err, stdout, stderr) => {
            if (err && typeof err.code !== "number") return reject(err);
            resolve({ status: err ? (err.code as number) : 0, stdout, stderr });
        });
    });
}

// The render tool's own run (a separate process), shared by the next test.
let firstDevRun: { stdout: string; dir: string } | undefined;

test("two renders of the same commit are byte-identical (separate processes)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "render-a-"));
    const r = renderCli(["--stack", "dev", "--out", dir]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /render problems: none\n(.|\n)*\nrender ok\n$/);
    firstDevRun = { stdout: r.stdout, dir };
    // The other render: the test processes' shared one (./render.ts), made in this process or another, never in the CLI's.
    const other = await renderStack("dev");
    for (const [file, text] of [["manifests.yaml", other.manifests], ["resources.json", other.resourcesJson]]) {
        assert.ok(fs.readFileSync(path.join(dir, file)).equals(Buffer.from(text)), `${file} differs between two renders`);
    }
});

test("render prints a summary per component and per kind and exits 0 for dev", () => {
    assert.ok(firstDevRun, "the previous test renders dev");
    const { stdout, dir } = firstDevRun;
    assert.match(stdout, /resources per component:\n.*ops:apps:AgentServer agent-server/s);
    assert.match(stdout, /objects per kind:\n(.|\n)*\d+ {2}Deployment/);
    assert.match(stdout, /render problems: none/);
    const manifests = fs.readFileSync(path.join(dir, "manifests.yaml"), "utf8");
    const kinds = [...manifests.matchAll(/^kind: (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(kinds, [...kinds].sort(), "manifests are sorted by kind");
});

test("render refuses an unknown stack and bad arguments with a clear message", async () => {
    const [r, r2] = await Promise.all([renderCliAsync(["--stack", "staging"]), renderCliAsync(["--bogus"])]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /no stack "staging" \(no Pulumi\.staging\.yaml\); stacks are .*dev.*prod/);
    assert.notEqual(r2.status, 0);
    assert.match(r2.stderr, /unknown argument --bogus; usage: npm run render -- --stack/);
});

test("render fails on a schema error, an unknown field and duplicate objects", async () => {
    const result = await render("dev", {}, path.join(__dirname, "fixtures", "brokenProgram.ts"));
    const errors = result.errors.join("\n");
    assert.match(errors, /schema: apps\/v1\/Deployment apps\/web: spec\/replicas must be integer/);
    assert.match(errors, /schema: apps\/v1\/Deployment apps\/web: spec\.template\.spec\.containers\[0\]\.bogusField: unknown field/);
    assert.match(errors, /ConfigMap apps\/settings is declared twice/);
    assert.match(errors, /duplicate resource URN urn:pulumi:dev::ops::kubernetes:core\/v1:Service::same-urn/);
});

test("a bad configuration stops the program before any resource is registered", async () => {
    const result = await render("dev", { agentServerRequestsCpu: "lots", gatewayToolMaxRecharge: 50000 });
    assert.equal(result.resources.length, 0);
    assert.match(result.errors.join("\n"), /2 problems; nothing was created(.|\n)*ops:agentServerRequestsCpu(.|\n)*ops:gatewayToolMaxRecharge: 50000 is above 10000/);
});

test("secret inputs stay marked secret and never reach the rendered files", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, []);
        const secrets = r.resources.filter((x) => x.type === "kubernetes:core/v1:Secret");
        assert.ok(secrets.length > 0);
        for (const s of secrets) {
            const payload = (s.inputs.stringData ?? s.inputs.data) as Record<string, unknown>;
            assert.ok(payload && SECRET_SIG in payload, `${s.name}: Secret payload is not marked secret`);
        }
        const passwords = r.resources.filter((x) => x.type === "random:index/randomPassword:RandomPassword");
        assert.ok(passwords.length > 0);
        // Every secret value the stack knows: the Secrets' credential-named keys (generated
        // passwords, keys, tokens) and the placeholders of secret config. Usernames and URLs
        // kept in Secrets for convenience are not secret and may appear elsewhere.
        const secretValues = new Set<string>();
        for (const s of secrets) {
            const payload = (s.inputs.stringData as any)?.value ?? (s.inputs.data as any)?.value ?? {};
            for (const [k, v] of Object.entries(payload))
                if (typeof v === "string" && v.length >= 8 && /pass|secret|key|token|cookie/i.test(k)) secretValues.add(v);
        }
        const values = readStackValues(stack);
        for (const key of values.placeholders) secretValues.add(values.config[`${values.project}:${key}`]);
        assert.ok(secretValues.size >= 3);
        for (const v of secretValues) {
            assert.ok(!r.manifests.includes(v), `a secret value appears in ${stack} manifests.yaml`);
            assert.ok(!r.resourcesJson.includes(v), `a secret value appears in ${stack} resources.json`);
            for (const o of r.objects.filter((x) => x.kind !== "Secret")) {
                assert.ok(!JSON.stringify(o).includes(v), `a secret value appears in ${o.kind} ${o.metadata?.name}`);
            }
        }
        assert.ok(r.manifests.includes(REDACTED));
    }
});

test("no env literal, annotation or ConfigMap carries a secret-shaped value", async () => {
    const r = await renderStack("prod");
    const secretShaped = /admin-[0-9a-f]{64}|sk-[A-Za-z0-9-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----/;
    for (const o of r.objects) {
        if (o.kind === "Secret") continue;
        for (const [k, v] of Object.entries(o.metadata?.annotations ?? {})) assert.doesNotMatch(String(v), secretShaped, `${o.kind} ${o.metadata?.name} annotation ${k}`);
        if (o.kind === "ConfigMap") for (const [k, v] of Object.entries(o.data ?? {})) assert.doesNotMatch(String(v), secretShaped, `ConfigMap ${o.metadata?.name} key ${k}`);
        const json = JSON.stringify(o);
        for (const m of json.matchAll(/"name":"([A-Z_]+)","value":"([^"]*)"/g)) {
            assert.doesNotMatch(m[2], secretShaped, `${o.kind} ${o.metadata?.name} env ${m[1]}`);
            assert.doesNotMatch(m[1], /PASSWORD|SECRET|API_KEY|TOKEN/, `${o.kind} ${o.metadata?.name}: ${m[1]} is set as a literal instead of from a Secret`);
        }
    }
});

test("the committed Pulumi.yaml is what the schema generates", () => {
    const generated = projectFile();
    const committed = fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8").split("\n");
    const expected = generated.split("\n");
    const at = expected.findIndex((line, i) => committed[i] !== line);
    assert.ok(at === -1 && committed.length === expected.length, `Pulumi.yaml is stale from line ${at + 1} (${JSON.stringify(committed[at])} instead of ${JSON.stringify(expected[at])}): run npm run gen:project`);
});
