/**
 * cli/harness/resourceStackTraces.ts: runProgram's resources are made without a stack trace, the
 * SDK's Resource.stackTrace is back after the run, and a run that does not go through the
 * replacement is reported.
 */
import assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { after, describe, it } from "node:test";
import * as pulumi from "@pulumi/pulumi";
import { runProgram } from "./program";
import { skipResourceStackTraces, STACK_TRACES_BYPASSED } from "./resourceStackTraces";

const Resource = pulumi.Resource as unknown as { stackTrace: (skip: number) => unknown[] };
const realStackTrace = Resource.stackTrace;

describe("skipResourceStackTraces", () => {
    it("gives no frames and counts the calls while installed, and restores the SDK's own", () => {
        assert.ok(realStackTrace(0).length > 0, "the SDK's own gives this test's frames");
        const traces = skipResourceStackTraces();
        try {
            assert.deepEqual(Resource.stackTrace(0), []);
            assert.equal(traces.calls(), 1);
            assert.throws(() => skipResourceStackTraces(), /already installed/);
        } finally {
            traces.restore();
        }
        assert.equal(Resource.stackTrace, realStackTrace);
    });

    it("refuses an SDK whose Resource has no stackTrace(skip)", () => {
        (Resource as any).stackTrace = undefined;
        try {
            assert.throws(() => skipResourceStackTraces(), /Resource\.stackTrace is not the static stackTrace\(skip\)/);
        } finally {
            Resource.stackTrace = realStackTrace;
        }
    });
});

describe("runProgram without resource stack traces", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "resource-stack-traces-"));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const program = (name: string, body: string) => {
        const file = path.join(dir, `${name}.js`);
        fs.writeFileSync(file, `const pulumi = require(${JSON.stringify(require.resolve("@pulumi/pulumi"))});\n${body}`);
        return { project: "p", stack: "s", config: {}, secretKeys: [], programPath: file };
    };
    const twoThings = `new pulumi.CustomResource("test:index:Thing", "a", { n: 1 });\nnew pulumi.CustomResource("test:index:Thing", "b", {});\n`;

    it("registers every resource, and the SDK's stackTrace is back after the run", async () => {
        const run = await runProgram(program("plain", `${twoThings}exports.frames = pulumi.Resource.stackTrace(0).length;\n`));
        assert.deepEqual(run.errors, []);
        assert.deepEqual(run.resources.filter((r) => r.custom).map((r) => [r.name, r.inputs]).sort(), [["a", { n: 1 }], ["b", {}]]);
        assert.equal(run.outputs.frames, 0, "no frames during the run");
        assert.equal(Resource.stackTrace, realStackTrace);
    });

    it("reports a run whose resources do not go through it (an SDK that takes its stack trace otherwise)", async () => {
        const run = await runProgram(program("bypass", `pulumi.Resource.stackTrace = () => [];\n${twoThings}`));
        assert.deepEqual(run.errors, [STACK_TRACES_BYPASSED]);
        assert.equal(Resource.stackTrace, realStackTrace, "restored even when the program replaced it");
    });
});
