/**
 * Backups and restores on the real node (issue 40), run as docs/backups.md tells an operator: each
 * backup CronJob once as a Job (`kubectl create job --from=cronjob/…`), the data changed, the store
 * stopped where the runbook says so, the restore CronJob run as a Job with its options ConfigMap,
 * and the data compared with what it was at the backup. And the object store's provisioning Job's
 * work: its bucket, its policy, the snapshot user writing into the bucket.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import type { Context, StepIO } from "../harness/context";
import { since } from "../harness/context";
import { DATA_NS, mc, psql, redisCli } from "./realnodeData";
import { deleteAllWorkflows } from "./realnodeWorkflow";

const SUFFIX = () => `e2e-${crypto.randomBytes(3).toString("hex")}`;

/** Runs a CronJob once as a Job (with an options ConfigMap for restores), waits for it; its log's last line. */
async function runJob(ctx: Context, ns: string, cronJob: string, options: Record<string, string> = {}): Promise<{ ok: boolean; seconds: number; last: string; log: string }> {
    const job = `${cronJob}-${SUFFIX()}`;
    const cm = `${cronJob}-options`;
    if (Object.keys(options).length) {
        await ctx.kubectl(["-n", ns, "delete", "configmap", cm, "--ignore-not-found"], { quiet: true });
        await ctx.kubectl(["-n", ns, "create", "configmap", cm, ...Object.entries(options).map(([k, v]) => `--from-literal=${k}=${v}`)], { quiet: true });
    }
    const t0 = process.hrtime.bigint();
    try {
        await ctx.kubectl(["-n", ns, "create", "job", `--from=cronjob/${cronJob}`, job], { quiet: true });
        let state = "";
        await ctx.waitFor(600, `job ${ns}/${job}`, async () => {
            const j = await ctx.kubectlJson(["-n", ns, "get", "job", job]);
            state = (j.status.conditions ?? []).find((c: any) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")?.type ?? "";
            return state !== "";
        });
        const seconds = since(t0);
        const log = (await ctx.kubectl(["-n", ns, "logs", `job/${job}`, "--tail", "-1"], { allowFail: true, quiet: true })).stdout;
        fs.writeFileSync(ctx.path("logs", `${job}.log`), log);
        ctx.io.log(`${ns}/${job}: ${state} in ${seconds} s; log ${ctx.path("logs", `${job}.log`)}`);
        if (state !== "Complete") ctx.io.log(log.split("\n").slice(-15).join("\n"));
        return { ok: state === "Complete", seconds, last: log.trim().split("\n").filter(Boolean).slice(-1)[0] ?? "", log };
    } finally {
        if (Object.keys(options).length) await ctx.kubectl(["-n", ns, "delete", "configmap", cm, "--ignore-not-found"], { quiet: true, allowFail: true });
    }
}

async function scale(ctx: Context, ns: string, what: string, replicas: number): Promise<void> {
    await ctx.kubectl(["-n", ns, "scale", what, `--replicas=${replicas}`]);
    if (replicas === 0) await ctx.waitFor(180, `${ns}/${what} scaled to 0`, async () => (await ctx.kubectlJson(["-n", ns, "get", what])).status.replicas === 0 || !(await ctx.kubectlJson(["-n", ns, "get", what])).status.replicas);
    else await ctx.kubectl(["-n", ns, "rollout", "status", what, "--timeout=240s"]);
}

interface Case {
    store: string;
    ns: string;
    cronJob: string;
    /** Writes the marker the backup must hold; returns it. */
    before: (ctx: Context) => Promise<string>;
    /** Changes the data after the backup (the restore must undo it). */
    change: (ctx: Context) => Promise<void>;
    /** Reads the data as the comparison sees it. */
    read: (ctx: Context) => Promise<string>;
    options?: Record<string, string>;
    /** The runbook's steps around the restore Job (stop the store, start it). */
    stop?: (ctx: Context) => Promise<void>;
    start?: (ctx: Context) => Promise<void>;
    /** The restore's refusal while the store still runs (tried before stop), as its log says it. */
    refusedWhileRunning?: RegExp;
}

/** booking's data volume: the stand-in's folder of claim booking-data (the booking stand-in writes no database: the harness writes one). */
function bookingDb(ctx: Context): string {
    const pvs = JSON.parse(fs.readFileSync(ctx.path("volumes.json"), "utf8")).items as Array<{ spec: { claimRef?: { name: string; namespace: string }; hostPath: { path: string } } }>;
    const pv = pvs.find((p) => p.spec.claimRef?.namespace === "booking" && p.spec.claimRef.name === "booking-data");
    if (!pv) throw new Error("no stand-in volume for booking/booking-data");
    return `${pv.spec.hostPath.path}/booking.db`;
}

const sqlite = async (ctx: Context, file: string, sql: string) => (await ctx.run("sqlite3", [file, sql], { quiet: true })).stdout.trim();
const marker = (what: string) => `${what}-${crypto.randomBytes(4).toString("hex")}`;

function cases(): Case[] {
    const pgMarker = marker("pg");
    const redisMarker = marker("redis");
    const objMarker = marker("object");
    const sqliteMarker = marker("booking");
    let workflowName = "";
    return [
        {
            store: "PostgreSQL (one database, e2e_marker)", ns: DATA_NS, cronJob: "postgres-backup",
            before: async (ctx) => {
                await psql(ctx, "postgres", "DROP DATABASE IF EXISTS e2e_marker; CREATE DATABASE e2e_marker;");
                await psql(ctx, "e2e_marker", `CREATE TABLE marker (v text); INSERT INTO marker VALUES ('${pgMarker}');`);
                return pgMarker;
            },
            change: async (ctx) => void (await psql(ctx, "e2e_marker", "UPDATE marker SET v = 'changed after the backup'; INSERT INTO marker VALUES ('added after the backup');")),
            read: (ctx) => psql(ctx, "e2e_marker", "SELECT string_agg(v, ',' ORDER BY v) FROM marker;"),
            options: { RESTORE_DATABASE: "e2e_marker", RESTORE_DROP_EXISTING: "true" },
        },
        {
            store: "Redis", ns: DATA_NS, cronJob: "redis-backup",
            before: async (ctx) => (await redisCli(ctx, ["SET", "e2e:marker", redisMarker]), redisMarker),
            change: async (ctx) => void (await redisCli(ctx, ["SET", "e2e:marker", "changed after the backup"])),
            read: (ctx) => redisCli(ctx, ["GET", "e2e:marker"]),
            stop: (ctx) => scale(ctx, DATA_NS, "statefulset/redis", 0),
            start: (ctx) => scale(ctx, DATA_NS, "statefulset/redis", 1),
            // The server's lock, seen from the restore's own pod on the same volume.
            refusedWhileRunning: /Redis is still running: its server holds \/data\/\.redis-server\.lock/,
        },
        {
            store: "object store (bucket search-snapshots)", ns: DATA_NS, cronJob: "object-store-backup",
            before: async (ctx) => {
                fs.writeFileSync(ctx.path("marker.txt"), objMarker);
                const r = await mc(ctx, ["cp", ctx.path("marker.txt"), "e2e/search-snapshots/e2e/marker.txt"]);
                if (r.code) throw new Error(`mc cp of the marker failed: ${r.out.slice(-300)}`);
                return objMarker;
            },
            change: async (ctx) => {
                fs.writeFileSync(ctx.path("marker.txt"), "changed after the backup");
                const r = await mc(ctx, ["cp", ctx.path("marker.txt"), "e2e/search-snapshots/e2e/marker.txt"]);
                if (r.code) throw new Error(`mc cp failed: ${r.out.slice(-300)}`);
            },
            read: async (ctx) => (await mc(ctx, ["cat", "e2e/search-snapshots/e2e/marker.txt"])).out.trim(),
            options: { RESTORE_BUCKETS: "search-snapshots" },
        },
        {
            store: "workflow tool (cli mode: workflows, credentials)", ns: "workflow", cronJob: "workflow-backup",
            before: async (ctx) => {
                workflowName = (await psql(ctx, "workflow", "SELECT string_agg(name, ',' ORDER BY name) FROM workflow_entity;")) || "";
                if (!workflowName) throw new Error("no workflow in the workflow tool's database to back up (the workflow path runs first)");
                return workflowName;
            },
            change: async (ctx) => void (await deleteAllWorkflows(ctx)),
            read: (ctx) => psql(ctx, "workflow", "SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM workflow_entity;"),
        },
        {
            store: "booking (SQLite, booking.db)", ns: "booking", cronJob: "booking-backup",
            before: async (ctx) => {
                const db = bookingDb(ctx);
                fs.rmSync(db, { force: true });
                await sqlite(ctx, db, `CREATE TABLE bookings (v text); INSERT INTO bookings VALUES ('${sqliteMarker}');`);
                fs.chmodSync(db, 0o666);
                return sqliteMarker;
            },
            change: async (ctx) => void (await sqlite(ctx, bookingDb(ctx), "UPDATE bookings SET v = 'changed after the backup';")),
            read: (ctx) => sqlite(ctx, bookingDb(ctx), "SELECT group_concat(v) FROM bookings;"),
            stop: (ctx) => scale(ctx, "booking", "deployment/booking", 0),
            start: (ctx) => scale(ctx, "booking", "deployment/booking", 1),
        },
    ];
}

/** The backup CronJobs this cluster cannot run, and why. */
export const NOT_RUN: Array<[string, string]> = [
    ["chat/chat-ui-backup", "its data volume (claim open-webui) belongs to the chat UI, a GitOps child the e2e does not deploy"],
    ["uptime/uptime-monitor-backup", "its data volume (claim uptime-kuma-pvc) belongs to the uptime monitor, a GitOps child the e2e does not deploy"],
    ["argocd/source-mirror", "it mirrors git@github.com over ssh: no git host is reachable from this machine"],
    ["search/search-snapshot", "the search engine stays on kwok (no registry serves Elasticsearch here)"],
];

/** How often the script tried its first connection again (CONNECT_WAIT_SECONDS: the policy engine's sync of a new pod). */
function retried(log: string): string {
    const n = (log.match(/connection refused or unreachable \(try \d+\)/g) ?? []).length;
    return n ? `; its first connection tried again ${n} time(s) by the script` : "";
}

/** Each backup CronJob once as a Job, restored by its restore Job, the data compared. */
export async function backupsRestored(ctx: Context, io: StepIO): Promise<void> {
    const t00 = process.hrtime.bigint();
    const failed: string[] = [];
    for (const c of cases()) {
        try {
            const want = await c.before(ctx);
            const b = await runJob(ctx, c.ns, c.cronJob);
            io.result(`backup ${c.ns}/${c.cronJob} (${c.store}): ${b.ok ? "complete" : "FAILED"} in ${b.seconds} s${retried(b.log)}: ${b.last.slice(0, 160)}`);
            if (!b.ok) throw new Error(`backup job failed: ${b.last}`);
            await c.change(ctx);
            const changed = await c.read(ctx);
            if (c.refusedWhileRunning) {
                const early = await runJob(ctx, c.ns, `${c.cronJob}-restore`, c.options);
                const kept = await c.read(ctx);
                const refused = !early.ok && c.refusedWhileRunning.test(early.log) && kept === changed;
                io.result(`restore ${c.ns}/${c.cronJob}-restore while the store runs: ${early.ok ? "COMPLETED (should have refused)" : "refused"} in ${early.seconds} s: ${early.last.slice(0, 200)}; data ${kept === changed ? "unchanged" : `CHANGED to ${JSON.stringify(kept)}`}`);
                if (!refused) throw new Error("the restore did not refuse while the store runs, as expected");
            }
            await c.stop?.(ctx);
            const r = await runJob(ctx, c.ns, `${c.cronJob}-restore`, c.options);
            await c.start?.(ctx);
            const got = await c.read(ctx);
            const same = got === want;
            io.result(`restore ${c.ns}/${c.cronJob}-restore${c.options ? ` (${Object.entries(c.options).map(([k, v]) => `${k}=${v}`).join(" ")})` : ""}: ${r.ok ? "complete" : "FAILED"} in ${r.seconds} s${retried(r.log)}: ${r.last.slice(0, 160)}; data at the backup ${JSON.stringify(want)}, changed to ${JSON.stringify(changed)}, after the restore ${JSON.stringify(got)}: ${same ? "the same as at the backup" : "DIFFERENT"}`);
            if (!r.ok || !same) throw new Error(r.ok ? "the data after the restore is not the backup's" : `restore job failed: ${r.last}`);
        } catch (e) {
            failed.push(`${c.ns}/${c.cronJob}: ${e instanceof Error ? e.message : String(e)}`);
            io.result(`backup/restore ${c.ns}/${c.cronJob}: FAILED: ${e instanceof Error ? e.message : String(e)}`);
        }
    }
    for (const [name, why] of NOT_RUN) io.result(`backup ${name}: not run here: ${why}`);
    ctx.time("realnode-paths", since(t00));
    if (failed.length) throw new Error(`${failed.length} backup/restore case(s) failed: ${failed.join(" | ")}`);
}

/**
 * The object store's provisioning Job's work: the Job complete, its bucket there, its policy
 * there, and the snapshot user (the Job's SNAPSHOT_ACCESS_KEY) able to write into the bucket.
 */
export async function bucketJob(ctx: Context, io: StepIO): Promise<void> {
    const job = await ctx.kubectlJson(["-n", DATA_NS, "get", "job", "object-store-provision"]);
    const env = job.spec.template.spec.containers[0].env as Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
    const v = (n: string) => env.find((e) => e.name === n);
    const buckets = (v("BUCKETS")?.value ?? "").split(",").filter(Boolean);
    const policy = v("SNAPSHOT_POLICY")?.value ?? "";
    const complete = (job.status.conditions ?? []).some((c: any) => c.type === "Complete" && c.status === "True");
    const ls = await mc(ctx, ["ls", "e2e"]);
    const there = buckets.filter((b) => new RegExp(`\\s${b}/\\s*$`, "m").test(ls.out));
    const info = await mc(ctx, ["admin", "policy", "info", "e2e", policy]);
    const ak = v("SNAPSHOT_ACCESS_KEY")?.valueFrom?.secretKeyRef;
    const sk = v("SNAPSHOT_SECRET_KEY")?.valueFrom?.secretKeyRef;
    let write = "not tried (no snapshot credentials)";
    if (ak && sk && buckets[0]) {
        fs.writeFileSync(ctx.path("snapshot-probe.txt"), "probe");
        const w = await mc(ctx, ["cp", ctx.path("snapshot-probe.txt"), `e2e/${buckets[0]}/e2e-probe.txt`], { access: ak, secret: sk });
        write = w.code === 0 ? `the snapshot user wrote ${buckets[0]}/e2e-probe.txt` : `the snapshot user could NOT write into ${buckets[0]}: ${w.out.trim().slice(-200)}`;
        if (w.code === 0) await mc(ctx, ["rm", `e2e/${buckets[0]}/e2e-probe.txt`]);
    }
    io.result(`path bucket: job data/object-store-provision ${complete ? "complete" : "NOT complete"}; buckets ${buckets.join(", ")}: ${there.length === buckets.length ? "there" : `MISSING ${buckets.filter((b) => !there.includes(b)).join(", ")}`}; policy ${policy}: ${info.code === 0 ? "there" : "MISSING"}; ${write}`);
    if (!complete || there.length !== buckets.length || info.code !== 0 || !write.startsWith("the snapshot user wrote")) throw new Error("the provisioning Job's work is not all there (above)");
}
