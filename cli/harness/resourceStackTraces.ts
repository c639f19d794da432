/**
 * The SDK's Resource constructor takes the stack trace of every resource (Resource.stackTrace, which
 * lifts Error.stackTraceLimit to Infinity itself, then parses each frame) to send the engine the
 * resource's source position. The mock monitor never reads it, and it is a twentieth of a run's CPU.
 * While installed, for runProgram only, Resource.stackTrace gives no frames: the SDK's own answer
 * when the stack is too short (no source position, an empty trace).
 *
 * Found by what it replaces: installing throws if Resource.stackTrace is no longer a function, and
 * runProgram reports a run whose resources did not go through it (calls() below).
 */
import * as pulumi from "@pulumi/pulumi";

export const STACK_TRACES_BYPASSED =
    "cli/harness/resourceStackTraces.ts: the SDK's Resource constructor no longer calls Resource.stackTrace once per resource; the harness's replacement needs updating to the SDK's new shape";

interface WithStackTrace {
    stackTrace: (skip: number) => unknown[];
}

let installed = false;

/** Replaces Resource.stackTrace until restore(); calls() counts the resources that went through it. */
export function skipResourceStackTraces(): { restore: () => void; calls: () => number } {
    const Resource = pulumi.Resource as unknown as WithStackTrace;
    if (installed) throw new Error("cli/harness/resourceStackTraces.ts: already installed (runProgram runs one program at a time)");
    const original = Resource.stackTrace;
    if (typeof original !== "function" || original.length !== 1)
        throw new Error(`cli/harness/resourceStackTraces.ts: @pulumi/pulumi's Resource.stackTrace is not the static stackTrace(skip) this replaces (got ${typeof original})`);
    installed = true;
    let calls = 0;
    Resource.stackTrace = () => {
        calls++;
        return [];
    };
    return {
        restore: () => {
            Resource.stackTrace = original;
            installed = false;
        },
        calls: () => calls,
    };
}
