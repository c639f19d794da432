/**
 * The rendered redis.conf is read by a real redis-server (Debian's redis-server; the pinned image is
 * 7.2.6, every directive used exists since 7.0): only the data folder, the included auth file and the
 * port are moved to temporary ones. The server must start, apply each setting, and ask for the password.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { redisConf } from "../components/redis";
import { quantityBytes } from "../config/schema";
import { offlineStackConfig } from "../tools/genGitops";
import { assertBinaries, freePort, isCI, REDIS_NEEDS, Resp, skipUnless, sleep, tempDir } from "./backups/servers";

const skip = skipUnless(REDIS_NEEDS);
const PASSWORD = "redis-conf-test-pw";

for (const stack of ["dev", "prod"]) {
    const cfg = offlineStackConfig(stack);
    let port = 0;
    let stop = async () => undefined as void;
    let log = "";

    before(async () => {
        if (skip) return;
        if (isCI()) assertBinaries(REDIS_NEEDS);
        const { dir } = tempDir(`redis-conf-${stack}`);
        port = await freePort();
        fs.writeFileSync(path.join(dir, "auth.conf"), `requirepass ${PASSWORD}\n`);
        const conf = redisConf(cfg)
            .replace(/^port \d+$/m, `port ${port}`)
            .replace(/^dir \/data$/m, `dir ${dir}`)
            .replace(/^include \/etc\/redis-auth\/auth\.conf$/m, `include ${path.join(dir, "auth.conf")}`);
        assert.match(conf, new RegExp(`^port ${port}$`, "m"), "the port line was moved");
        fs.writeFileSync(path.join(dir, "redis.conf"), conf);
        const child = spawn("redis-server", [path.join(dir, "redis.conf")], { stdio: ["ignore", "pipe", "pipe"] });
        child.stdout.on("data", (d) => (log += d));
        child.stderr.on("data", (d) => (log += d));
        stop = async () => {
            if (child.exitCode === null) {
                child.kill("SIGTERM");
                await new Promise((r) => child.once("exit", r));
            }
        };
        const deadline = Date.now() + 10_000;
        for (;;) {
            if (child.exitCode !== null) throw new Error(`redis-server refused the ${stack} redis.conf:\n${log}`);
            try {
                (await Resp.connect(port, PASSWORD)).close();
                return;
            } catch {
                if (Date.now() > deadline) throw new Error(`redis-server did not start:\n${log}`);
                await sleep(50);
            }
        }
    });
    after(() => stop());

    test(`${stack}: redis-server starts with the rendered redis.conf and applies every setting`, { skip }, async () => {
        const c = await Resp.connect(port, PASSWORD);
        const get = async (key: string) => ((await c.send(["CONFIG", "GET", key])) as string[])[1];
        assert.equal(await get("maxmemory"), String(quantityBytes(cfg.redis.maxMemory)));
        assert.equal(await get("maxmemory-policy"), "noeviction");
        assert.equal(await get("appendonly"), cfg.redis.appendOnly ? "yes" : "no");
        assert.equal(await get("appendfsync"), cfg.redis.appendFsync);
        assert.equal(await get("save"), cfg.redis.rdbSavePoints);
        assert.equal(await get("protected-mode"), "no");
        c.close();
        // The included auth file is read: without the password every command is refused.
        const anonymous = await Resp.connect(port);
        const reply = await anonymous.send(["PING"]);
        anonymous.close();
        assert.ok(reply instanceof Error && /NOAUTH/.test(reply.message), `PING without a password: ${String(reply)}`);
    });
}
