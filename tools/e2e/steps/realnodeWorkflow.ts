/**
 * The workflow tool on the real node (issue 40), driven the way its users drive it: from a client
 * pod in ingress-nginx (the namespace workflow-main's policy admits) through workflow-main's
 * Service, the owner is set up and a workflow created and activated through n8n's REST API (what
 * its editor calls); its production webhook is called; main puts the execution on the queue
 * (Redis), the worker runs it and writes it to PostgreSQL.
 *   - path: the webhook's answer carries the worker's result; the execution's row in PostgreSQL
 *     (status success, mode webhook, its data holding the marker); the worker's log names it.
 *   - fault: PostgreSQL's pod deleted while the worker waits inside an execution: the execution
 *     still ends in success with its data, and what was in the database before is all there.
 */
import * as crypto from "node:crypto";
import type { Context, StepIO } from "../harness/context";
import { since } from "../harness/context";
import { deleteAndWait, psql } from "./realnodeData";
import { clientPod, httpFrom, type HttpAnswer } from "./realnodePod";

const NS = "workflow";
const DB = "workflow";
/** The editor's browser id: n8n binds its session cookie to it. */
const BROWSER_ID = "ops-e2e";

interface Session { client: string; base: string; cookie: string }
let session: Session | undefined;

/** n8n's REST answer's `data`, or an error naming the call. */
function data(what: string, r: HttpAnswer): any {
    if (r.status !== 200) throw new Error(`${what}: HTTP ${r.status ?? `none (curl exit ${r.code})`}: ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body).data;
}

/** The owner set up (first run) and its session cookie; the client pod and workflow-main's Service URL. */
async function login(ctx: Context): Promise<Session> {
    if (session) return session;
    const client = (await clientPod(ctx)).uid;
    const svc = await ctx.kubectlJson(["-n", NS, "get", "service", "workflow-main"]);
    const base = `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`;
    // n8n's rule: 8 to 64 characters, a number and a capital letter.
    const owner = { email: "e2e-owner@ci.ops.example.com", firstName: "E2E", lastName: "Owner", password: `E2e-${crypto.randomBytes(12).toString("hex")}` };
    const r = await httpFrom(ctx, client, `${base}/rest/owner/setup`, { body: JSON.stringify(owner), headers: { "Content-Type": "application/json", "browser-id": BROWSER_ID } });
    data("POST /rest/owner/setup", r);
    const cookie = (r.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]).find((c) => c.startsWith("n8n-auth="));
    if (!cookie) throw new Error("POST /rest/owner/setup set no n8n-auth cookie");
    session = { client, base, cookie };
    return session;
}

async function rest(ctx: Context, method: string, p: string, body?: unknown): Promise<any> {
    const s = await login(ctx);
    const r = await httpFrom(ctx, s.client, `${s.base}/rest${p}`, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { Cookie: s.cookie, "browser-id": BROWSER_ID, "Content-Type": "application/json" } });
    return data(`${method} /rest${p}`, r);
}

const node = (name: string, type: string, typeVersion: number, x: number, parameters: object, extra: object = {}) => ({ id: crypto.randomUUID(), name, type, typeVersion, position: [x, 0], parameters, ...extra });

/**
 * A workflow: a production webhook (POST /webhook/<path>), optionally a Wait of `waitSeconds`, and
 * a Set node computing `answer` from the posted marker; created and activated. Its id.
 */
async function createWorkflow(ctx: Context, name: string, webhookPath: string, opts: { waitSeconds?: number; respond: "lastNode" | "onReceived" }): Promise<string> {
    const hook = node("Webhook", "n8n-nodes-base.webhook", 2, 0, { httpMethod: "POST", path: webhookPath, responseMode: opts.respond, options: {} }, { webhookId: crypto.randomUUID() });
    const wait = opts.waitSeconds ? [node("Wait", "n8n-nodes-base.wait", 1.1, 200, { resume: "timeInterval", amount: opts.waitSeconds, unit: "seconds" }, { webhookId: crypto.randomUUID() })] : [];
    const set = node("Answer", "n8n-nodes-base.set", 3.4, 400, { mode: "manual", assignments: { assignments: [{ id: crypto.randomUUID(), name: "answer", value: "={{ $json.body.marker }}-done", type: "string" }] }, includeOtherFields: false, options: {} });
    const chain = [hook, ...wait, set];
    const connections = Object.fromEntries(chain.slice(0, -1).map((n, i) => [n.name, { main: [[{ node: chain[i + 1].name, type: "main", index: 0 }]] }]));
    const created = await rest(ctx, "POST", "/workflows", { name, nodes: chain, connections, settings: { executionOrder: "v1", saveDataSuccessExecution: "all", saveDataErrorExecution: "all" }, active: false });
    const active = await rest(ctx, "PATCH", `/workflows/${created.id}`, { active: true, versionId: created.versionId });
    if (active.active !== true) throw new Error(`workflow ${name} (${created.id}) was not activated`);
    return created.id;
}

async function callWebhook(ctx: Context, webhookPath: string, marker: string): Promise<HttpAnswer> {
    const s = await login(ctx);
    return httpFrom(ctx, s.client, `${s.base}/webhook/${webhookPath}`, { body: JSON.stringify({ marker }), headers: { "Content-Type": "application/json" }, maxSeconds: 180 });
}

interface Execution { id: string; status: string; mode: string; finished: string; hasMarker: boolean }

async function executions(ctx: Context, workflowId: string, marker: string): Promise<Execution[]> {
    const id = workflowId.replace(/[^A-Za-z0-9]/g, "");
    const m = marker.replace(/[^A-Za-z0-9-]/g, "");
    const rows = await psql(ctx, DB, `SELECT e.id, e.status, e.mode, e.finished, coalesce(position('${m}-done' in d.data) > 0, false) FROM execution_entity e LEFT JOIN execution_data d ON d."executionId" = e.id WHERE e."workflowId" = '${id}' ORDER BY e.id;`);
    return rows.split("\n").filter(Boolean).map((l) => {
        const [eid, status, mode, finished, has] = l.split("\t");
        return { id: eid, status, mode, finished, hasMarker: has === "t" };
    });
}

const workerLog = async (ctx: Context) => (await ctx.kubectl(["-n", NS, "logs", "workflow-worker-0", "--tail", "-1"], { allowFail: true, quiet: true })).stdout;

/** A workflow run by the worker from the queue, its result in PostgreSQL. */
export async function workflowPath(ctx: Context, io: StepIO): Promise<void> {
    const t0 = process.hrtime.bigint();
    const id = await createWorkflow(ctx, "e2e real node", "e2e-realnode", { respond: "lastNode" });
    const marker = `m-${crypto.randomBytes(6).toString("hex")}`;
    const r = await callWebhook(ctx, "e2e-realnode", marker);
    let answer = "";
    try {
        answer = JSON.parse(r.body).answer ?? "";
    } catch {
        answer = "";
    }
    io.result(`path workflow: POST /webhook/e2e-realnode {"marker":"${marker}"} (from ingress-nginx/e2e-client to workflow-main's Service) -> HTTP ${r.status ?? `none (curl exit ${r.code})`}, ${JSON.stringify(r.body.slice(0, 80))}, ${r.seconds} s`);
    if (r.status !== 200 || answer !== `${marker}-done`) throw new Error(`the workflow's webhook did not answer with the result: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
    const rows = await executions(ctx, id, marker);
    const e = rows.at(-1);
    const byWorker = e ? new RegExp(`Worker (started|finished) execution ${e.id}\\b`).test(await workerLog(ctx)) : false;
    io.result(`path workflow: PostgreSQL ${DB}.execution_entity: ${rows.length} execution(s) of workflow ${id}; the last: id ${e?.id}, status ${e?.status}, mode ${e?.mode}, its data ${e?.hasMarker ? "holds" : "LACKS"} "${marker}-done"; the worker's log ${byWorker ? "names it (run from the queue)" : "does NOT name it"}`);
    if (rows.length !== 1 || !e || e.status !== "success" || e.mode !== "webhook" || !e.hasMarker || !byWorker) throw new Error("the execution is not in PostgreSQL as run by the worker (above)");
    ctx.time("realnode-paths", since(t0));
}

/**
 * PostgreSQL's pod deleted while the worker waits inside an execution (a Wait node): the
 * execution ends in success with its data once the database is back, and every row counted
 * before (workflows, executions, users) is still there.
 */
export async function dataStoreDeleted(ctx: Context, io: StepIO): Promise<void> {
    const id = await createWorkflow(ctx, "e2e real node, waiting", "e2e-realnode-wait", { respond: "onReceived", waitSeconds: 45 });
    const marker = `w-${crypto.randomBytes(6).toString("hex")}`;
    const counts = () => psql(ctx, DB, `SELECT (SELECT count(*) FROM workflow_entity) || ' workflows, ' || (SELECT count(*) FROM execution_entity) || ' executions, ' || (SELECT count(*) FROM "user") || ' users';`);
    const r = await callWebhook(ctx, "e2e-realnode-wait", marker);
    if (r.status !== 200) throw new Error(`the waiting workflow's webhook answered HTTP ${r.status ?? `none (curl exit ${r.code})`}: ${r.body.slice(0, 300)}`);
    let running: Execution | undefined;
    await ctx.waitFor(60, "the worker running the waiting execution", async () => {
        running = (await executions(ctx, id, marker)).at(-1);
        return !!running && new RegExp(`Worker started execution ${running.id}\\b`).test(await workerLog(ctx));
    });
    const before = await counts();
    const restartsBefore = await restarts(ctx);
    const back = await deleteAndWait(ctx, "data", "postgres-0");
    io.result(`fault PostgreSQL deleted mid-workflow: execution ${running!.id} waiting in the worker; data/postgres-0 deleted, back and Ready in ${back} s; before: ${before}`);
    let last: Execution | undefined;
    const t0 = process.hrtime.bigint();
    const ok = await ctx.waitFor(240, `execution ${running!.id} to end`, async () => {
        last = (await executions(ctx, id, marker)).find((e) => e.id === running!.id);
        return !!last && last.status !== "running" && last.status !== "new" && last.status !== "waiting";
    }).then(() => true, () => false);
    const after = await counts().catch((e) => `unreadable (${e instanceof Error ? e.message : e})`);
    const restartsAfter = await restarts(ctx);
    io.result(`fault PostgreSQL deleted mid-workflow: execution ${running!.id} ${ok ? `ended ${since(t0)} s after the database was back` : "did NOT end within 240 s"}: status ${last?.status}, its data ${last?.hasMarker ? "holds" : "LACKS"} "${marker}-done"; after: ${after}; restarts meanwhile: ${Object.entries(restartsAfter).map(([k, v]) => `${k} ${v - (restartsBefore[k] ?? 0)}`).join(", ")}`);
    if (!ok || last?.status !== "success" || !last.hasMarker) throw new Error(`the execution did not resume to success after PostgreSQL came back (status ${last?.status})`);
    const n = (s: string) => s.match(/\d+/g)!.map(Number);
    const [wb, eb, ub] = n(before);
    const [wa, ea, ua] = n(after);
    if (wa < wb || ea < eb || ua < ub) throw new Error(`rows lost while PostgreSQL was replaced: before ${before}; after ${after}`);
}

async function restarts(ctx: Context): Promise<Record<string, number>> {
    const pods = (await ctx.kubectlJson<{ items: any[] }>(["-n", NS, "get", "pods"])).items;
    return Object.fromEntries(pods.map((p) => [p.metadata.name, (p.status.containerStatuses ?? []).reduce((a: number, c: any) => a + c.restartCount, 0)]));
}

/** A pod's container restarts and the reason of its last end, per pod of the real node. */
async function nodePods(ctx: Context): Promise<Map<string, { restarts: number; lastReason?: string; ready: boolean }>> {
    const pods = (await ctx.kubectlJson<{ items: any[] }>(["get", "pods", "-A", "--field-selector", "spec.nodeName=e2e-node,status.phase=Running"])).items;
    return new Map(pods.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, {
        restarts: (p.status.containerStatuses ?? []).reduce((a: number, c: any) => a + c.restartCount, 0),
        lastReason: (p.status.containerStatuses ?? []).map((c: any) => c.lastState?.terminated?.reason).find(Boolean),
        ready: (p.status.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True"),
    }]));
}

/**
 * An OOM'd container: a user's manual run of a workflow whose Code node holds more memory than
 * workflow-main's limit (manual runs execute in main, not on the queue). main's container must be
 * OOM-killed and restarted, every other pod of the node keep running without a restart, and the
 * workflow tool answer its webhook again afterwards.
 */
export async function oomKilled(ctx: Context, io: StepIO): Promise<void> {
    const trigger = node("Start", "n8n-nodes-base.manualTrigger", 1, 0, {});
    // Typed arrays: their bytes are outside V8's heap, so the kernel's OOM killer ends the container.
    // Plain arrays (the first run here) met V8's own heap limit first: n8n aborted with exit 134
    // ("Reached heap limit"), not OOMKilled. Checked: 4 GiB of filled Uint8Arrays from `node -e` in
    // an agent-server container (limit 2Gi) ended with exit 137, the kernel's kill.
    const code = node("Hold memory", "n8n-nodes-base.code", 2, 200, { jsCode: "const keep = [];\nfor (let i = 0; i < 512; i++) keep.push(new Uint8Array(4 * 1024 * 1024).fill(1));\nreturn [{ json: { held: keep.length } }];" });
    const created = await rest(ctx, "POST", "/workflows", { name: "e2e real node, memory", nodes: [trigger, code], connections: { Start: { main: [[{ node: "Hold memory", type: "main", index: 0 }]] } }, settings: { executionOrder: "v1" }, active: false });
    const before = await nodePods(ctx);
    const main = "workflow/workflow-main-0";
    const limit = (await ctx.kubectlJson(["-n", NS, "get", "pod", "workflow-main-0"])).spec.containers[0].resources.limits.memory;
    const s = await login(ctx);
    const t0 = process.hrtime.bigint();
    // The answer may or may not come back before main dies: only what happens to main counts.
    await httpFrom(ctx, s.client, `${s.base}/rest/workflows/${created.id}/run`, { body: JSON.stringify({ workflowData: created }), headers: { Cookie: s.cookie, "browser-id": BROWSER_ID, "Content-Type": "application/json" }, maxSeconds: 60 });
    let now = before;
    await ctx.waitFor(180, `${main} restarted after its OOM`, async () => {
        now = await nodePods(ctx);
        const m = now.get(main);
        return !!m && m.restarts > (before.get(main)?.restarts ?? 0) && m.ready;
    });
    const took = since(t0);
    const m = now.get(main)!;
    const others = [...now].filter(([k]) => k !== main && before.has(k) && now.get(k)!.restarts !== before.get(k)!.restarts).map(([k, v]) => `${k} (${v.restarts - before.get(k)!.restarts})`);
    const notReady = [...now].filter(([k, v]) => k !== main && before.get(k)?.ready && !v.ready).map(([k]) => k);
    io.result(`fault OOM: a manual run of a Code node holding about 2 GiB of typed arrays in ${main} (memory limit ${limit}): its container ended ${m.lastReason ?? "for no recorded reason"}, restarted and Ready again in ${took} s; other pods of the node restarted: ${others.join(", ") || "none"}; not Ready: ${notReady.join(", ") || "none"}`);
    if (m.lastReason !== "OOMKilled") throw new Error(`${main}'s last end was ${m.lastReason ?? "unknown"}, not OOMKilled`);
    if (others.length || notReady.length) throw new Error(`other pods were affected by the OOM: restarted ${others.join(", ") || "none"}, not Ready ${notReady.join(", ") || "none"}`);
    // The tool serves again: its production webhook answers from the queue.
    const marker = `o-${crypto.randomBytes(4).toString("hex")}`;
    const r = await callWebhook(ctx, "e2e-realnode", marker);
    const ok = r.status === 200 && r.body.includes(`${marker}-done`);
    io.result(`fault OOM: after main's restart, POST /webhook/e2e-realnode -> HTTP ${r.status ?? `none (curl exit ${r.code})`} ${ok ? "with the result" : `WITHOUT the result: ${r.body.slice(0, 200)}`}`);
    if (!ok) throw new Error("the workflow tool did not answer its webhook after main's OOM restart");
    await rest(ctx, "DELETE", `/workflows/${created.id}`);
}

/** Deletes every workflow through the REST API, as a user does in the editor (the workflow backup's restore case). */
export async function deleteAllWorkflows(ctx: Context): Promise<number> {
    const all = (await rest(ctx, "GET", "/workflows")) as Array<{ id: string }>;
    for (const w of all) await rest(ctx, "DELETE", `/workflows/${w.id}`);
    return all.length;
}
