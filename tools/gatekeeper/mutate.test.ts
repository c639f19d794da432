import assert from "node:assert/strict";
import { test } from "node:test";
import { mutate, pathsOf, seededRng, ValuePool } from "./mutate";
import { parseArgs } from "./differential";
import { normalizeMessage } from "./judge";

const pod = () => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", labels: { app: "web" } },
    spec: { containers: [{ name: "app", image: "nginx:1", resources: { limits: { cpu: "1" } } }] },
});

test("the same seed gives the same mutants, another seed others", () => {
    const pool = new ValuePool();
    pool.add({ image: "busybox", cpu: "2" });
    const run = (seed: number) => {
        const rng = seededRng(seed);
        return Array.from({ length: 20 }, () => mutate(pod(), rng, pool)?.operations.join("; "));
    };
    assert.deepEqual(run(1), run(1));
    assert.notDeepEqual(run(1), run(2));
});

test("mutants leave the original alone and never touch protected paths", () => {
    const original = pod();
    const rng = seededRng(7);
    const pool = new ValuePool();
    pool.add(original);
    for (let i = 0; i < 200; i++) {
        const m = mutate(original, rng, pool, { protect: (p) => p[0] === "kind" || p[0] === "apiVersion" || (p[0] === "metadata" && (p.length === 1 || p[1] === "name")) });
        assert.ok(m);
        assert.equal(m.value.kind, "Pod");
        assert.equal(m.value.metadata.name, "web");
        assert.ok(m.operations.every((o) => /^(remove|null|replace|empty|grow) \./.test(o)), m.operations.join("; "));
    }
    assert.deepEqual(original, pod());
});

test("replace takes a value seen under the same key elsewhere", () => {
    const pool = new ValuePool();
    pool.add({ spec: { containers: [{ image: "busybox" }] } });
    const rng = seededRng(3);
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
        const m = mutate({ image: "nginx" }, rng, pool, { operations: ["replace"], maxOperations: 1 });
        if (m) seen.add(m.value.image as string);
    }
    assert.deepEqual([...seen], ["busybox"]);
});

test("pathsOf lists every nested path", () => {
    assert.deepEqual(pathsOf({ a: [1, { b: 2 }] }).map((p) => p.join(".")), ["a", "a.0", "a.1", "a.1.b"]);
});

test("messages on pod templates are compared without the expansion's name", () => {
    assert.equal(normalizeMessage("[Implied by expand-workloads] container <a> has no resource limits"), normalizeMessage("[Implied by Deployment/web] container <a> has no resource limits"));
    assert.notEqual(normalizeMessage("container <a>"), normalizeMessage("container <b>"));
});

test("without a library path the command skips; bad seeds are an error", () => {
    assert.equal((parseArgs([], {}) as { library: string }).library, "");
    assert.equal((parseArgs([], { GATEKEEPER_LIBRARY: "/x" }) as { library: string }).library, "/x");
    assert.match(parseArgs(["--seeds", "1,x"], {}) as string, /--seeds must be integers/);
    assert.equal((parseArgs(["--library", "/x"], {}) as { gatorTimeout: number }).gatorTimeout, 1800);
    assert.equal((parseArgs(["--library", "/x", "--gator-timeout", "3600"], {}) as { gatorTimeout: number }).gatorTimeout, 3600);
    assert.match(parseArgs(["--gator-timeout", "0"], {}) as string, /--gator-timeout must be a positive number/);
});
