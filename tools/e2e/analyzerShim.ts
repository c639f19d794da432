/**
 * Starts the policy pack the way the pulumi CLI does when it has no Node.js language plugin:
 * tools/e2e/bin/pulumi-analyzer-policy-nodejs in the pack's folder with the engine address and
 * "."; the pack prints its port and serves the Analyzer gRPC service. Used by the shim's test and
 * by `npm run bench` (the pack's start time).
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";

const REPO = path.resolve(__dirname, "../..");
export const SHIM = path.join(REPO, "tools", "e2e", "bin", "pulumi-analyzer-policy-nodejs");

export interface StartedPack {
    child: ChildProcess;
    port: number;
    /** Wall seconds from spawn to the printed port. */
    seconds: number;
    policies(): Promise<string[]>;
    stop(): void;
}

export function startPack(env: NodeJS.ProcessEnv = process.env, timeoutMs = 120_000): Promise<StartedPack> {
    const t0 = process.hrtime.bigint();
    const child = spawn(SHIM, ["127.0.0.1:1", "."], { cwd: path.join(REPO, "policies"), env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            child.kill();
            reject(new Error(`the pack printed no port within ${timeoutMs / 1000}s: ${stderr}`));
        }, timeoutMs);
        child.on("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`the shim exited (${code}) before printing a port: ${stderr}`));
        });
        child.stdout!.once("data", (d: Buffer) => {
            clearTimeout(timer);
            const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
            const port = Number(d.toString().trim().split("\n")[0]);
            if (!Number.isInteger(port) || port <= 0) return reject(new Error(`expected a port on stdout, got ${JSON.stringify(d.toString())}`));
            child.removeAllListeners("exit");
            resolve({
                child, port, seconds,
                policies: () => analyzerPolicies(port),
                stop: () => child.kill(),
            });
        });
    });
}

/** GetAnalyzerInfo over the analyzer protocol, as the engine calls it: the pack's policy names. */
function analyzerPolicies(port: number): Promise<string[]> {
    /* eslint-disable @typescript-eslint/no-var-requires */
    const rpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
    const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
    /* eslint-enable @typescript-eslint/no-var-requires */
    const client = new rpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new Promise((resolve, reject) => {
        client.getAnalyzerInfo(new Empty(), (err: Error | null, info: any) => {
            client.close();
            if (err) reject(err);
            else resolve(info.getPoliciesList().map((p: any) => p.getName()));
        });
    });
}
