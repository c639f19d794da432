/**
 * n8n 1.68.0 from npm in queue mode, with the dev stack's rendered environment, against real
 * PostgreSQL and Redis on loopback (test/backups/servers.ts; the role, database and passwords are
 * the rendered Secrets' placeholder-shaped values, never printed): main and one worker.
 *   - main: /healthz and /healthz/readiness answer 200, an unregistered webhook path answers 404;
 *   - worker: its health server (QUEUE_HEALTH_CHECK_ACTIVE) answers /healthz and /healthz/readiness
 *     (readiness checks its database and Redis connections) and it logs that it is ready;
 *   - backups/scripts/workflow-backup.sh and workflow-restore.sh, with the backup CronJob's rendered
 *     environment, export a workflow and a credential through the real n8n CLI and import them again.
 * Rewritten for this machine: DB_POSTGRESDB_HOST/PORT and QUEUE_BULL_REDIS_HOST/PORT point at the
 * loopback servers; N8N_PORT and QUEUE_HEALTH_CHECK_PORT get free ports (main and worker share a
 * host here); N8N_USER_FOLDER/HOME (each pod's /data volume, the job's /tmp) become temporary
 * folders; N8N_LISTEN_ADDRESS=127.0.0.1 is added so nothing listens beyond loopback.
 */
import { test, before, after } from "node:test";
import * as assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { extractN8n, loadDefinition } from "../../tools/products/definitions";
import { install, n8nBinary } from "../../tools/products/install";
import { PRODUCTS } from "../../tools/products/pins";
import { find, podSpecOf, renderStack } from "../render";
import { assertBinaries, describeRun, freePort, isCI, PG_NEEDS, REDIS_NEEDS, runScript, skipUnless, startPostgres, startRedis, tempDir, type PgServer, type RedisServer } from "../backups/servers";
import { podEnv, stop } from "./pod";

const NS = "workflow";
const needs = [...PG_NEEDS(), ...REDIS_NEEDS];
const skip = skipUnless(needs);
if (isCI()) assertBinaries(needs);

interface Proc { child: ChildProcess; out: () => string; port: number }
let pg: PgServer;
let redis: RedisServer;
let main: Proc;
let worker: Proc;
let r: any;
let databaseEnv: Record<string, string>;
const procs: ChildProcess[] = [];

const container = (kind: string, name: string) => podSpecOf(find(r, kind, name, NS)).containers[0];

/** The rendered environment of a container, rewritten for loopback (see the header). */
function localEnv(c: any, extra: Record<string, string>): Record<string, string> {
    const env = podEnv(r, c, NS);
    const local: Record<string, string> = {
        ...env,
        ...(env.DB_POSTGRESDB_HOST ? { DB_POSTGRESDB_HOST: "127.0.0.1", DB_POSTGRESDB_PORT: String(pg.port) } : {}),
        ...(env.QUEUE_BULL_REDIS_HOST ? { QUEUE_BULL_REDIS_HOST: "127.0.0.1", QUEUE_BULL_REDIS_PORT: String(redis.port) } : {}),
        N8N_LISTEN_ADDRESS: "127.0.0.1",
        ...extra,
    };
    return local;
}

async function waitFor(url: string, proc: ChildProcess, out: () => string, seconds: number): Promise<void> {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
        try {
            if ((await fetch(url)).status === 200) return;
        } catch { /* not up yet */ }
        if (proc.exitCode !== null) throw new Error(`n8n exited with ${proc.exitCode}: ${out().slice(-3000)}`);
        if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${seconds} s: ${out().slice(-3000)}`);
        await new Promise((res) => setTimeout(res, 500));
    }
}

function startN8n(args: string[], env: Record<string, string>): { child: ChildProcess; out: () => string } {
    let out = "";
    const child = spawn(process.execPath, [n8nBinary(), ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (b) => (out += b));
    child.stderr!.on("data", (b) => (out += b));
    procs.push(child);
    return { child, out: () => out };
}


before(async () => {
    if (skip) return;
    install(PRODUCTS.n8n);
    r = await renderStack("dev");
    const m = container("StatefulSet", "workflow-main");
    const pgUser = podEnv(r, m, NS);
    pg = await startPostgres();
    redis = await startRedis(pgUser.QUEUE_BULL_REDIS_PASSWORD);
    // What the PostgreSQL provisioning Job creates: the tool's role and database.
    await pg.psql(`CREATE ROLE "${pgUser.DB_POSTGRESDB_USER}" LOGIN PASSWORD '${pgUser.DB_POSTGRESDB_PASSWORD.replace(/'/g, "''")}'`);
    await pg.psql(`CREATE DATABASE "${pgUser.DB_POSTGRESDB_DATABASE}" OWNER "${pgUser.DB_POSTGRESDB_USER}"`);
    databaseEnv = { PGHOST: "127.0.0.1", PGPORT: String(pg.port), PGUSER: pgUser.DB_POSTGRESDB_USER, PGPASSWORD: pgUser.DB_POSTGRESDB_PASSWORD, PGDATABASE: pgUser.DB_POSTGRESDB_DATABASE };

    const mainData = tempDir("n8n-main-data").dir;
    const mainPort = await freePort();
    const mainEnv = localEnv(m, { N8N_PORT: String(mainPort), QUEUE_HEALTH_CHECK_PORT: String(mainPort), N8N_USER_FOLDER: mainData, HOME: mainData });
    const ms = startN8n(m.args, mainEnv);
    main = { ...ms, port: mainPort };
    await waitFor(`http://127.0.0.1:${mainPort}/healthz/readiness`, ms.child, ms.out, 240);

    const w = container("StatefulSet", "workflow-worker");
    const workerData = tempDir("n8n-worker-data").dir;
    const workerPort = await freePort();
    const workerEnv = localEnv(w, { N8N_PORT: String(workerPort), QUEUE_HEALTH_CHECK_PORT: String(workerPort), N8N_USER_FOLDER: workerData, HOME: workerData });
    const ws = startN8n(w.args, workerEnv);
    worker = { ...ws, port: workerPort };
    await waitFor(`http://127.0.0.1:${workerPort}/healthz/readiness`, ws.child, ws.out, 180);
});

after(async () => {
    for (const c of procs) await stop(c, 20_000);
    await redis?.stop();
    pg?.stop();
});

test(`n8n ${PRODUCTS.n8n.version} main (queue mode): /healthz and /healthz/readiness answer 200`, { skip }, async () => {
    for (const p of ["/healthz", "/healthz/readiness"]) {
        const res = await fetch(`http://127.0.0.1:${main.port}${p}`);
        assert.equal(res.status, 200, p);
    }
    assert.doesNotMatch(main.out(), /encryption key|Mismatching/i);
});

test("main: an unregistered webhook path answers 404", { skip }, async () => {
    const res = await fetch(`http://127.0.0.1:${main.port}/webhook/no-such-webhook-${Date.now()}`);
    assert.equal(res.status, 404);
});

test("main: the editor base URL, OAuth callback URLs (and so invite links) are on the editor host; webhooks on the webhook host", { skip }, async () => {
    const m = podEnv(r, container("StatefulSet", "workflow-main"), NS);
    const res = await fetch(`http://127.0.0.1:${main.port}/rest/settings`);
    assert.equal(res.status, 200);
    const { data } = await res.json() as { data: any };
    const editor = m.N8N_EDITOR_BASE_URL.replace(/\/$/, "");
    assert.equal(new URL(editor).host, m.N8N_HOST);
    assert.equal(data.urlBaseEditor, editor);
    assert.equal(data.oauthCallbackUrls.oauth2, `${editor}/rest/oauth2-credential/callback`);
    assert.equal(data.oauthCallbackUrls.oauth1, `${editor}/rest/oauth1-credential/callback`);
    assert.equal(data.urlBaseWebhook, m.WEBHOOK_URL);
    assert.notEqual(new URL(data.urlBaseWebhook).host, new URL(editor).host);
});

test("worker: connected (its health server answers /healthz and /healthz/readiness, which checks database and Redis) and ready", { skip }, async () => {
    for (const p of ["/healthz", "/healthz/readiness"]) {
        const res = await fetch(`http://127.0.0.1:${worker.port}${p}`);
        assert.equal(res.status, 200, p);
    }
    assert.match(worker.out(), /n8n worker is now ready/i);
    assert.match(worker.out(), /Concurrency: 5/);
    // Both processes hold Redis connections (the Bull queue).
    const client = await redis.client();
    const list = String(await client.call("CLIENT", "LIST"));
    client.close();
    assert.ok(list.split("\n").filter((l) => l.trim()).length >= 3, "fewer Redis connections than main and worker need");
});

test("the workflow backup and restore scripts export and import a workflow and a credential with the real n8n CLI", { skip }, async () => {
    const job = container("CronJob", "workflow-backup");
    const backupDir = tempDir("n8n-backup").dir;
    const jobHome = tempDir("n8n-job-home").dir;
    const cli = path.dirname(n8nBinary());
    const env: Record<string, string> = { ...localEnv(job, { N8N_USER_FOLDER: jobHome, HOME: jobHome }), BACKUP_DIR: backupDir, RETENTION_DAYS: "7" };
    assert.equal(env.WF_CLI, "n8n");
    // Something to back up: a workflow and a credential, imported through the CLI like a user's.
    const seed = tempDir("n8n-seed").dir;
    const workflow = {
        id: "OpsBackupWf0001", name: "ops backup probe", active: false, settings: {}, connections: {}, pinData: {},
        nodes: [{ id: "a0e1b2c3-0000-4000-8000-000000000001", name: "Start", type: "n8n-nodes-base.manualTrigger", typeVersion: 1, position: [0, 0], parameters: {} }],
    };
    fs.writeFileSync(path.join(seed, "wf.json"), JSON.stringify([workflow]));
    const credential = { id: "OpsBackupCred001", name: "ops backup credential", type: "httpHeaderAuth", data: { name: "X-Probe", value: "placeholder-value" } };
    fs.writeFileSync(path.join(seed, "cred.json"), JSON.stringify([credential]));
    const importEnv = { ...env, PATH: `${cli}:${process.env.PATH}` };
    for (const [cmd, file] of [["import:workflow", "wf.json"], ["import:credentials", "cred.json"]]) {
        const res = await runN8n([cmd, `--input=${path.join(seed, file)}`], importEnv);
        assert.equal(res.code, 0, `${cmd}: ${res.out.slice(-2000)}`);
    }

    const backup = await runScript("workflow-backup", env, { pathPrepend: [cli], timeoutMs: 300_000 });
    assert.equal(backup.code, 0, describeRun(backup));
    const folders = fs.readdirSync(backupDir).filter((f) => /^\d{4}-/.test(f));
    assert.equal(folders.length, 1);
    const exported = JSON.parse(fs.readFileSync(path.join(backupDir, folders[0], "workflows.json"), "utf8"));
    assert.ok(exported.some((x: any) => x.id === workflow.id), "the workflow is not in the export");
    const creds = fs.readFileSync(path.join(backupDir, folders[0], "credentials.json"), "utf8");
    assert.ok(creds.includes(credential.id));
    assert.ok(!creds.includes("placeholder-value"), "the credential was exported decrypted");

    // Lose them, then restore.
    await pg.psql(`DELETE FROM workflow_entity WHERE id = '${workflow.id}'; DELETE FROM credentials_entity WHERE id = '${credential.id}'`, databaseEnv.PGDATABASE);
    assert.equal(await pg.psql(`SELECT count(*) FROM workflow_entity WHERE id = '${workflow.id}'`, databaseEnv.PGDATABASE), "0");
    const restore = await runScript("workflow-restore", { ...env, RESTORE_FROM: folders[0] }, { pathPrepend: [cli], timeoutMs: 300_000 });
    assert.equal(restore.code, 0, describeRun(restore));
    assert.equal(await pg.psql(`SELECT name FROM workflow_entity WHERE id = '${workflow.id}'`, databaseEnv.PGDATABASE), workflow.name);
    assert.equal(await pg.psql(`SELECT name FROM credentials_entity WHERE id = '${credential.id}'`, databaseEnv.PGDATABASE), credential.name);
});

test("the committed n8n definition (tools/products/definitions/n8n.json) is what the packages say", () => {
    install(PRODUCTS.n8n);
    assert.deepEqual(JSON.parse(JSON.stringify(extractN8n())), loadDefinition("n8n"), "run: npx tsx tools/products/genDefinitions.ts");
});

function runN8n(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
    return new Promise((resolve) => {
        const { child, out } = startN8n(args, env);
        child.on("close", (code) => resolve({ code, out: out() }));
    });
}
