/** startPack's failure path: a pack that prints no port in time is stopped, not left running. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { startPack } from "../policies/pack/grpc";

const children = () =>
    execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" })
        .split("\n")
        .filter((l) => l.includes("run-policy-pack"));

test("a pack that prints no port within the time-out is killed, and the error says so", async () => {
    await assert.rejects(startPack(undefined, 1), /the pack printed no port within 1 ms/);
    const deadline = Date.now() + 10_000;
    while (children().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(children(), []);
});
