/**
 * Runs the real program (index.ts) under the Pulumi SDK's mock runtime and records every
 * resource it registers: type, name, parent and inputs (secret values keep their secret mark).
 */
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { renderMocks } from "./mocks";
import { installPlainStructs, isPlainStruct, PLAIN_STRUCTS_BYPASSED } from "./plainStructs";
import { skipResourceStackTraces, STACK_TRACES_BYPASSED } from "./resourceStackTraces";

// Internal SDK modules: the mock monitor and the RPC queue.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const settings = require("@pulumi/pulumi/runtime/settings");
// eslint-disable-next-line @typescript-eslint/no-var-requires
const runtimeConfig = require("@pulumi/pulumi/runtime/config");

export { SECRET_SIG, SECRET_VALUE } from "../../policies/pack/resources";

export interface RegisteredResource {
    urn: string;
    type: string;
    name: string;
    parent?: string;
    custom: boolean;
    /** Inputs as registered; secret values are { [SECRET_SIG]: SECRET_VALUE, value }. */
    inputs: Record<string, unknown>;
    /** URNs of the resources this one waits for (dependsOn and input dependencies). */
    dependencies: string[];
    /** The ignoreChanges option, when set (property paths the engine leaves as they are). */
    ignoreChanges?: string[];
}

export interface ProgramRun {
    resources: RegisteredResource[];
    outputs: Record<string, unknown>;
    /** Names of the stack outputs that are secret (their values above are unwrapped). */
    secretOutputs: string[];
    errors: string[];
}

export interface RunOptions {
    project: string;
    stack: string;
    /** Flat config values keyed `<project>:<key>`; strings, or JSON for arrays and objects. */
    config: Record<string, string>;
    secretKeys: string[];
    programPath?: string;
}

const REPO_ROOT = path.resolve(__dirname, "..", "..");

export async function runProgram(opts: RunOptions): Promise<ProgramRun> {
    const errors: string[] = [];
    const resources: RegisteredResource[] = [];
    const seen = new Set<string>();
    // Each registration's request and response object, plain values from end to end (./plainStructs.ts).
    const structs: unknown[] = [];

    await pulumi.runtime.setMocks(renderMocks, opts.project, opts.stack, false);
    // Replace, not merge: a previous run in this process must not leak its config.
    delete process.env.PULUMI_CONFIG;
    delete process.env.PULUMI_CONFIG_SECRET_KEYS;
    runtimeConfig.setAllConfig(opts.config, opts.secretKeys);

    const monitor = settings.getMonitor();
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: any, callback: any) => {
        const type: string = req.getType();
        const name: string = req.getName();
        const parent: string = req.getParent();
        const urn: string = monitor.newUrn(parent, type, name);
        // The engine refuses two resources with one URN; the mock monitor would silently overwrite.
        if (seen.has(urn)) errors.push(`duplicate resource URN ${urn}`);
        seen.add(urn);
        const ignoreChanges: string[] = req.getIgnorechangesList?.() ?? [];
        structs.push(req.getObject());
        resources.push({ urn, type, name, parent: parent || undefined, custom: req.getCustom(), inputs: req.getObject()?.toJavaScript() ?? {}, dependencies: req.getDependenciesList?.() ?? [], ...(ignoreChanges.length ? { ignoreChanges } : {}) });
        // The SDK writes each response into a debug line (`resp: ${innerResponse}`) that it drops
        // without an engine: printing a protobuf message walks and joins the whole object, a tenth
        // of a run's time. The response's data is untouched; only its text is a name.
        return register(req, (err: unknown, resp: any) => {
            if (resp) resp.toString = responseText;
            if (resp) structs.push(resp.getObject());
            callback(err, resp);
        });
    };

    const restoreStructs = installPlainStructs();
    const stackTraces = skipResourceStackTraces();
    const onRejection = (reason: unknown) => errors.push(`unhandled rejection: ${errorText(reason)}`);
    // The SDK takes a stack trace per resource for its source position, which mocks never use;
    // mapping each one back through the TypeScript source maps is most of a render's time.
    const sourceMaps = process.sourceMapsEnabled;
    process.setSourceMapsEnabled(false);
    // The SDK also takes a stack trace for every promise it makes (debuggablePromise's leak
    // report, never printed here): a sixth of a run's time. A run's errors are read by message.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    process.on("unhandledRejection", onRejection);
    let outputs: Record<string, unknown> = {};
    let secretOutputs: string[] = [];
    try {
        const programPath = require.resolve(opts.programPath ?? path.join(REPO_ROOT, "index.ts"));
        delete require.cache[programPath];
        // The program's export, or the promise of it (index.ts exports main()'s promise), as the Node.js runtime awaits it.
        const exported = await require(programPath);
        outputs = await resolveOutputs(exported, errors);
        secretOutputs = await secretOutputNames(exported, outputs);
        await settledRegistrations(resources);
        if (!structs.every(isPlainStruct)) errors.push(PLAIN_STRUCTS_BYPASSED);
        if (stackTraces.calls() < resources.length) errors.push(STACK_TRACES_BYPASSED);
    } catch (err) {
        errors.push(errorText(err));
    } finally {
        process.setSourceMapsEnabled(sourceMaps);
        Error.stackTraceLimit = stackTraceLimit;
        process.off("unhandledRejection", onRejection);
        restoreStructs();
        stackTraces.restore();
    }
    return { resources, outputs, secretOutputs, errors };
}

function responseText(): string {
    return "RegisterResourceResponse";
}

function errorText(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
}

/**
 * Each stack output's value; a failed output (the program refused something) is an error of the
 * run. A promise is awaited as it is: wrapped in an Output, its failure would also reject the
 * Output's own derived promises, unhandled.
 */
async function resolveOutputs(exported: Record<string, unknown>, errors: string[]): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(exported ?? {})) {
        try {
            const value = v instanceof Promise ? await v : v;
            out[k] = await new Promise((resolve) => pulumi.output(value).apply((x) => resolve(x)));
        } catch (err) {
            errors.push(`stack output ${k}: ${errorText(err)}`);
        }
    }
    return out;
}

async function secretOutputNames(exported: Record<string, unknown>, resolved: Record<string, unknown>): Promise<string[]> {
    const names: string[] = [];
    for (const [k, v] of Object.entries(exported ?? {})) if (k in resolved && (await pulumi.isSecret(pulumi.output((v instanceof Promise ? await v : v) as pulumi.Input<unknown>)))) names.push(k);
    return names;
}

/** Waits until the SDK's RPC queue is drained and no new registration arrives. */
async function settledRegistrations(resources: RegisteredResource[]): Promise<void> {
    let count = -1;
    while (count !== resources.length) {
        count = resources.length;
        await settings.waitForRPCs();
        await new Promise((r) => setImmediate(r));
    }
}
