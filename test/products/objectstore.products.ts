/**
 * The object store for real: the MinIO server and the MinIO client (mc), built from the Go module
 * proxy at the images' releases (tools/products/pins.ts), run with the dev stack's rendered
 * arguments, environment and scripts:
 *   - the object-store StatefulSet's server (its probe paths answer 200);
 *   - the provisioning Job's script and policy (ConfigMap object-store-provision): buckets, the
 *     snapshot policy and user; the user can write to the snapshot bucket and nothing else; a
 *     second run succeeds too;
 *   - the backup and restore CronJobs' scripts (ConfigMap object-store-backup-scripts) with their
 *     rendered environment: a dated folder with every object and SHA256SUMS; a restore of lost
 *     buckets; a corrupted backup refused before anything is touched; wrong keys and an
 *     unreachable server named in the error, the backup volume unchanged.
 * Every script runs with a PATH holding only what the mc image (ubi-micro + mc) has: sh, coreutils
 * and mc (no sed, awk, grep, find); mc is wrapped by a two-line sh script that records its
 * arguments, to show that no credential is ever on its command line.
 * Rewritten for this machine: the server listens on 127.0.0.1 and a free port (--address) with its
 * volumes (/data, /tmp) in temporary folders; OBJECTSTORE_URL points there; container paths of the
 * scripts (/provision, /tmp/mc, BACKUP_DIR, HOME) map to temporary folders.
 */
import * as assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { GO_PRODUCTS, goBinary } from "../../tools/products/pins";
import { backupEntries, describeRun, freePort, mcImagePath, tempDir, treeHashes, type RunResult } from "../backups/servers";
import { find, podSpecOf, renderStack } from "../render";
import { suiteNeeding } from "../skip";
import { podEnv } from "./pod";

const NS = "data";
const MINIO = GO_PRODUCTS.minio;
const MC = GO_PRODUCTS.mc;
const absent = [MINIO, MC].filter((p) => !fs.existsSync(goBinary(p)));
const missing = absent.length ? `${absent.map((p) => `${p.binary} ${p.release}`).join(" and ")} not in ${path.dirname(path.dirname(goBinary(MINIO)))} (build with: npx tsx tools/products/install.ts minio mc)` : undefined;

function runSh(file: string, env: Record<string, string>, timeoutMs = 120_000): Promise<RunResult> {
    return new Promise((resolve, reject) => {
        const child = spawn("/bin/sh", [file], { env, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout!.on("data", (d) => (stdout += d));
        child.stderr!.on("data", (d) => (stderr += d));
        const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
        child.on("error", reject);
        child.on("close", (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    });
}

suiteNeeding(`MinIO ${MINIO.release} and mc ${MC.release}: provisioning, backup and restore jobs`, () => {
    let r: any;
    let server: ChildProcess | undefined;
    let serverOut = "";
    let url = "";
    let rootEnv: Record<string, string>;
    let PATH = "";
    let callLog = "";
    /** Secret keys: never on a command line nor in a log. Access keys name users: never in a log. */
    const secrets: string[] = [];
    const accessKeys: string[] = [];

    /** mc as an operator, with the root key (through MC_HOST_root, never argv). */
    const mcRoot = (args: string[], env: Record<string, string> = {}) => new Promise<{ code: number; out: string }>((resolve) => {
        const u = new URL(url);
        execFile(goBinary(MC), ["--config-dir", tempDir("mc-operator").dir, "--no-color", "--quiet", ...args], {
            env: { PATH: "/usr/bin:/bin", MC_HOST_root: `${u.protocol}//${encodeURIComponent(rootEnv.OBJECTSTORE_ACCESS_KEY)}:${encodeURIComponent(rootEnv.OBJECTSTORE_SECRET_KEY)}@${u.host}`, ...env },
            maxBuffer: 64 * 1024 * 1024, encoding: "buffer",
        }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: Buffer.concat([stdout, stderr]).toString() }));
    });
    const cat = async (obj: string) => {
        const res = await mcRoot(["cat", `root/${obj}`]);
        assert.equal(res.code, 0, res.out);
        return res.out;
    };
    const mcCalls = () => (fs.existsSync(callLog) ? fs.readFileSync(callLog, "utf8") : "");

    /** A rendered container's environment with the loopback URL, the PATH of the mc image and temporary folders. */
    const jobEnv = (c: any, extra: Record<string, string> = {}): Record<string, string> => {
        const env = podEnv(r, c, NS);
        for (const k of ["OBJECTSTORE_SECRET_KEY", "SNAPSHOT_SECRET_KEY"]) if (env[k]) secrets.push(env[k]);
        for (const k of ["OBJECTSTORE_ACCESS_KEY", "SNAPSHOT_ACCESS_KEY"]) if (env[k]) accessKeys.push(env[k]);
        assert.equal(new URL(env.OBJECTSTORE_URL).port, String(find(r, "StatefulSet", "object-store", NS).spec.template.spec.containers[0].ports[0].containerPort));
        return { ...env, OBJECTSTORE_URL: url, HOME: tempDir("job-home").dir, PATH, LANG: "C.UTF-8", ...extra };
    };
    const scriptOf = (configMap: string, key: string) => {
        const file = path.join(tempDir("rendered-script").dir, key);
        fs.writeFileSync(file, find(r, "ConfigMap", configMap, NS).data[key], { mode: 0o555 });
        return file;
    };
    const backupContainer = () => podSpecOf(find(r, "CronJob", "object-store-backup", NS)).containers[0];
    const restoreContainer = () => podSpecOf(find(r, "CronJob", "object-store-backup-restore", NS)).containers[0];
    const noSecretIn = (what: string, text: string, keys = [...secrets, ...accessKeys]) => {
        for (const s of keys) assert.ok(!text.includes(s), `a credential appears in ${what}`);
    };
    const noSecretOnCommandLines = () => noSecretIn("the mc command lines", mcCalls(), secrets);

    before(async () => {
        r = await renderStack("dev");
        const c = find(r, "StatefulSet", "object-store", NS).spec.template.spec.containers[0];
        const data = tempDir("minio-data").dir;
        const tmp = tempDir("minio-tmp").dir;
        const port = await freePort();
        // The rendered arguments, with the container's paths and address mapped for loopback.
        const args = c.args.map((a: string, i: number) => {
            if (c.args[i - 1] === "--address") return `127.0.0.1:${port}`;
            if (a === c.volumeMounts.find((m: any) => m.name === "data").mountPath) return data;
            if (a.startsWith("/tmp/")) return path.join(tmp, a.slice("/tmp/".length));
            return a;
        });
        assert.ok(args.includes(`127.0.0.1:${port}`), `no --address in ${c.args.join(" ")}`);
        const env = podEnv(r, c, NS, (name, value) => (name === "HOME" && value === "/tmp" ? tmp : value));
        // With the web console on, MinIO would also listen on a port of every address: the rendered value must keep it off.
        assert.equal(env.MINIO_BROWSER, "off");
        server = spawn(goBinary(MINIO), args, { env: { PATH: "/usr/bin:/bin", ...env }, stdio: ["ignore", "pipe", "pipe"] });
        server.stdout!.on("data", (b) => (serverOut += b));
        server.stderr!.on("data", (b) => (serverOut += b));
        url = `http://127.0.0.1:${port}`;
        rootEnv = { OBJECTSTORE_ACCESS_KEY: env.MINIO_ROOT_USER, OBJECTSTORE_SECRET_KEY: env.MINIO_ROOT_PASSWORD };
        secrets.push(env.MINIO_ROOT_PASSWORD);
        const ready = c.readinessProbe.httpGet.path;
        const deadline = Date.now() + 120_000;
        for (;;) {
            try {
                if ((await fetch(`${url}${ready}`)).status === 200) break;
            } catch { /* not up yet */ }
            if (server.exitCode !== null) throw new Error(`minio exited with ${server.exitCode}: ${serverOut.slice(-3000)}`);
            if (Date.now() > deadline) throw new Error(`minio did not answer ${ready} within 120 s: ${serverOut.slice(-3000)}`);
            await new Promise((res) => setTimeout(res, 500));
        }
        // The mc image's PATH, its mc recording its arguments.
        const wrapDir = tempDir("mc-wrapper").dir;
        callLog = path.join(wrapDir, "calls.log");
        fs.writeFileSync(path.join(wrapDir, "mc"), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${callLog}'\nexec '${goBinary(MC)}' "$@"\n`, { mode: 0o755 });
        PATH = mcImagePath(path.join(wrapDir, "mc"));
    });

    after(async () => {
        if (server && server.exitCode === null) {
            const exited = new Promise((res) => server!.once("exit", res));
            server.kill("SIGTERM");
            await exited;
        }
    });

    test("the binaries are the pinned releases; the server answers its rendered probe paths", async () => {
        const version = (bin: string) => new Promise<string>((resolve) => execFile(bin, ["--version"], (_e, out) => resolve(String(out))));
        assert.match(await version(goBinary(MINIO)), new RegExp(`version ${MINIO.release.replace(/\./g, "\\.")}`));
        assert.match(await version(goBinary(MC)), new RegExp(`version ${MC.release.replace(/\./g, "\\.")}`));
        const c = find(r, "StatefulSet", "object-store", NS).spec.template.spec.containers[0];
        for (const probe of [c.livenessProbe, c.readinessProbe]) assert.equal((await fetch(`${url}${probe.httpGet.path}`)).status, 200, probe.httpGet.path);
    });

    test("the provisioning job creates the buckets, the snapshot policy and user (write to the snapshot bucket only), and runs again", async () => {
        const job = find(r, "Job", "object-store-provision", NS);
        const c = podSpecOf(job).containers[0];
        assert.deepEqual(c.command, ["sh", "/provision/provision.sh"]);
        const dir = tempDir("provision").dir;
        const tmp = tempDir("provision-tmp").dir;
        for (const [file, text] of Object.entries<string>(find(r, "ConfigMap", "object-store-provision", NS).data)) fs.writeFileSync(path.join(dir, file), text);
        // The script's container paths: its ConfigMap mount and /tmp.
        const script = path.join(dir, "provision.sh");
        fs.writeFileSync(script, fs.readFileSync(script, "utf8").replaceAll("/provision/", `${dir}/`).replaceAll("/tmp/mc", `${tmp}/mc`));
        const env = jobEnv(c);
        const first = await runSh(script, env);
        assert.equal(first.code, 0, describeRun(first));
        const again = await runSh(script, env);
        assert.equal(again.code, 0, describeRun(again));
        for (const x of [first, again]) noSecretIn("the provisioning output", x.stdout + x.stderr);
        noSecretOnCommandLines();
        // (mc admin user add re-creates the user, so the second attach applies again and succeeds)

        const ls = await mcRoot(["ls", "root"]);
        const buckets = ls.out.trim().split("\n").map((l) => l.split(/\s+/).at(-1)!.replace(/\/$/, ""));
        assert.deepEqual(buckets.sort(), env.BUCKETS.split(" ").sort());

        const u = new URL(url);
        const snap = { MC_HOST_snap: `${u.protocol}//${encodeURIComponent(env.SNAPSHOT_ACCESS_KEY)}:${encodeURIComponent(env.SNAPSHOT_SECRET_KEY)}@${u.host}` };
        const probe = path.join(tempDir("probe").dir, "probe.txt");
        fs.writeFileSync(probe, "snapshot probe\n");
        const bucket = find(r, "ConfigMap", "object-store-provision", NS).data["snapshot-policy.json"].match(/arn:aws:s3:::([^"/]+)"/)[1];
        const put = await mcRoot(["cp", probe, `snap/${bucket}/probe.txt`], snap);
        assert.equal(put.code, 0, put.out);
        assert.equal(await cat(`${bucket}/probe.txt`), "snapshot probe\n");
        assert.equal((await mcRoot(["mb", "root/uploads"])).code, 0);
        const denied = await mcRoot(["cp", probe, "snap/uploads/probe.txt"], snap);
        assert.notEqual(denied.code, 0);
        assert.match(denied.out, /Insufficient permissions to access this path/);
        const noBucket = await mcRoot(["mb", "snap/another"], snap);
        assert.notEqual(noBucket.code, 0);
    });

    test("backup and restore jobs: every bucket into a dated folder with SHA256SUMS, restored after loss; no credential on a command line or in a log", async () => {
        const objects: Record<string, string> = {
            "uploads/a.txt": "first object\n",
            "uploads/dir/nested/b.bin": "x".repeat(70_000),
            "uploads/with space.txt": "a key with a space\n",
            "documents/c.json": "{\"c\":1}\n",
        };
        const seed = tempDir("seed").dir;
        for (const [key, body] of Object.entries(objects)) {
            fs.mkdirSync(path.dirname(path.join(seed, key)), { recursive: true });
            fs.writeFileSync(path.join(seed, key), body);
        }
        assert.equal((await mcRoot(["mb", "--ignore-existing", "root/documents", "root/uploads"])).code, 0);
        for (const b of ["uploads", "documents"]) {
            const cp = await mcRoot(["cp", "--recursive", `${seed}/${b}/`, `root/${b}/`]);
            assert.equal(cp.code, 0, cp.out);
        }
        const backupDir = tempDir("objstore-backup").dir;
        const env = jobEnv(backupContainer(), { BACKUP_DIR: backupDir });
        const backup = await runSh(scriptOf("object-store-backup-scripts", "backup.sh"), env);
        assert.equal(backup.code, 0, describeRun(backup));
        const [folder] = backupEntries(backupDir);
        assert.match(folder, /^\d{4}-\d{2}-\d{2}T\d{6}Z$/);
        for (const [key, body] of Object.entries(objects)) assert.equal(fs.readFileSync(path.join(backupDir, folder, key), "utf8"), body, key);
        assert.ok(fs.existsSync(path.join(backupDir, folder, "search-snapshots", "probe.txt")), "the snapshot bucket is backed up too");
        const sums = fs.readFileSync(path.join(backupDir, folder, "SHA256SUMS"), "utf8");
        for (const key of Object.keys(objects)) assert.ok(sums.includes(`  ./${key}\n`), `${key} not in SHA256SUMS`);
        noSecretIn("the backup output", backup.stdout + backup.stderr);

        // Lose a bucket and an object, then restore with the restore CronJob's environment.
        assert.equal((await mcRoot(["rb", "--force", "root/uploads"])).code, 0);
        assert.equal((await mcRoot(["rm", "root/documents/c.json"])).code, 0);
        const restoreEnv = jobEnv(restoreContainer(), { BACKUP_DIR: backupDir });
        const restore = await runSh(scriptOf("object-store-backup-scripts", "restore.sh"), restoreEnv);
        assert.equal(restore.code, 0, describeRun(restore));
        assert.match(restore.stdout, /checksums of .* verified/);
        for (const [key, body] of Object.entries(objects)) assert.equal(await cat(key), body, key);
        noSecretIn("the restore output", restore.stdout + restore.stderr);
        noSecretOnCommandLines();
        noSecretIn("the mc command lines of the backup and restore", mcCalls().split("\n").filter((l) => !/ admin /.test(l)).join("\n"));
        assert.match(mcCalls(), /^--config-dir \S+ --no-color --quiet mirror --preserve objstore\/uploads /m);
        assert.match(mcCalls(), /^--config-dir \S+ --no-color --quiet mirror --overwrite \S+\/uploads objstore\/uploads$/m);
    });

    test("a corrupted backup is refused before anything is restored: live objects and buckets stay as they are", async () => {
        const backupDir = tempDir("objstore-backup-rot").dir;
        const backup = await runSh(scriptOf("object-store-backup-scripts", "backup.sh"), jobEnv(backupContainer(), { BACKUP_DIR: backupDir }));
        assert.equal(backup.code, 0, describeRun(backup));
        const [folder] = backupEntries(backupDir);
        // Live data moves on: one object is newer, one bucket is gone.
        const newer = path.join(tempDir("newer").dir, "a.txt");
        fs.writeFileSync(newer, "newer live object\n");
        assert.equal((await mcRoot(["cp", newer, "root/uploads/a.txt"])).code, 0);
        assert.equal((await mcRoot(["rb", "--force", "root/documents"])).code, 0);
        const before = (await mcRoot(["ls", "--recursive", "root"])).out;
        // One byte of the backup rots.
        const rotten = path.join(backupDir, folder, "uploads", "dir", "nested", "b.bin");
        const bytes = fs.readFileSync(rotten);
        bytes[100] ^= 1;
        fs.writeFileSync(rotten, bytes);
        const backupHashes = treeHashes(backupDir);
        const calls = mcCalls().length;

        const restore = await runSh(scriptOf("object-store-backup-scripts", "restore.sh"), jobEnv(restoreContainer(), { BACKUP_DIR: backupDir }));
        assert.notEqual(restore.code, 0);
        assert.match(restore.stderr, /checksum verification of \S+ failed: .*uploads\/dir\/nested\/b\.bin: FAILED.*; nothing was changed/);
        assert.equal(mcCalls().length, calls, "mc was run");
        assert.equal(await cat("uploads/a.txt"), "newer live object\n");
        assert.equal((await mcRoot(["ls", "--recursive", "root"])).out, before, "the live buckets changed");
        assert.deepEqual(treeHashes(backupDir), backupHashes, "the backup volume changed");
    });

    test("wrong keys and an unreachable server: the real mc's errors are named, the backup volume is unchanged", async () => {
        const backupDir = tempDir("objstore-backup-fail").dir;
        fs.mkdirSync(path.join(backupDir, "2020-01-01T040000Z"));
        const hashes = treeHashes(backupDir);
        const badKey = await runSh(scriptOf("object-store-backup-scripts", "backup.sh"), jobEnv(backupContainer(), { BACKUP_DIR: backupDir, OBJECTSTORE_SECRET_KEY: "not-the-secret-key" }));
        assert.notEqual(badKey.code, 0);
        assert.match(badKey.stderr, new RegExp(`listing buckets: authentication failed at ${url.replace(/\./g, "\\.")} \\(check the OBJECTSTORE_ACCESS_KEY / OBJECTSTORE_SECRET_KEY secret\\)`));
        const closed = await freePort();
        const down = await runSh(scriptOf("object-store-backup-scripts", "backup.sh"), { ...jobEnv(backupContainer(), { BACKUP_DIR: backupDir }), OBJECTSTORE_URL: `http://127.0.0.1:${closed}` });
        assert.notEqual(down.code, 0);
        assert.match(down.stderr, new RegExp(`listing buckets: object store unreachable at http://127\\.0\\.0\\.1:${closed}`));
        assert.deepEqual(treeHashes(backupDir), hashes);
        assert.deepEqual(fs.readdirSync(backupDir), ["2020-01-01T040000Z"], "a partial folder was left");
    });
}, missing);
