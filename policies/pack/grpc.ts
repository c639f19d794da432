/**
 * Drives the pack the way the Pulumi engine does, without the CLI: the engine starts a nodejs
 * policy pack as `node <@pulumi/pulumi>/cmd/run-policy-pack <engine address> .` with the pack
 * directory as working directory (ts-node compiles the TypeScript pack; @pulumi/policy's server
 * prints its gRPC port on stdout), then calls the Analyzer service: GetAnalyzerInfo, Configure
 * (the pack config, each policy's level defaulting to the level the pack declares) and
 * AnalyzeStack (every resource of the stack).
 */
import { spawn, type ChildProcess } from "child_process";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import type { PolicyPackConfig } from "@pulumi/policy";
import { PACK_DIR } from "./paths";
import type { PackResource } from "./resources";

/* eslint-disable @typescript-eslint/no-var-requires */
const analyzerRpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
/* eslint-enable @typescript-eslint/no-var-requires */

const LEVELS = ["advisory", "mandatory", "disabled", "remediate"] as const;
type Level = (typeof LEVELS)[number];

export interface AnalyzerPolicy {
    name: string;
    enforcementLevel: Level;
}

export interface Diagnostic {
    policyName: string;
    policyPackName: string;
    enforcementLevel: Level;
    /** As the engine shows it: the policy's description, a newline, the violation. */
    message: string;
    /** The violation as the policy reported it. */
    violation: string;
    urn: string;
}

export interface RunningPack {
    port: number;
    /** Milliseconds from spawn to the printed port (TypeScript compilation included). */
    startupMs: number;
    info(): Promise<{ name: string; version: string; policies: AnalyzerPolicy[] }>;
    configure(config: PolicyPackConfig): Promise<void>;
    analyzeStack(resources: readonly PackResource[], parents?: Map<string, string>): Promise<Diagnostic[]>;
    /** AnalyzeStack with a request already encoded (encodeAnalyzeStack): the bytes the engine sends. */
    analyzeStackEncoded(request: Uint8Array): Promise<Diagnostic[]>;
    stop(): void;
}

const call = <T>(fn: (cb: (err: Error | null, res: T) => void) => void) =>
    new Promise<T>((resolve, reject) => fn((err, res) => (err ? reject(err) : resolve(res))));

/** The AnalyzeStackRequest for a stack, encoded as the engine sends it. */
export function encodeAnalyzeStack(resources: readonly PackResource[], parents?: Map<string, string>): Uint8Array {
    const req = new analyzerProto.AnalyzeStackRequest();
    for (const r of resources) {
        const res = new analyzerProto.AnalyzerResource();
        res.setType(r.type);
        res.setUrn(r.urn);
        res.setName(r.name);
        res.setProperties(Struct.fromJavaScript(r.props));
        const options = new analyzerProto.AnalyzerResourceOptions();
        const parent = parents?.get(r.urn);
        if (parent) {
            options.setParent(parent);
            res.setParent(parent);
        }
        res.setOptions(options);
        req.addResources(res);
    }
    return req.serializeBinary();
}

/** Starts the pack in `packDir` as the engine's nodejs plugin host does and connects an Analyzer client. */
export async function startPack(packDir = PACK_DIR, timeoutMs = 120_000): Promise<RunningPack> {
    const runPolicyPack = path.join(path.dirname(require.resolve("@pulumi/pulumi/package.json")), "cmd", "run-policy-pack");
    const started = Date.now();
    // The engine address is the first argument; a policy pack does not call back into the engine.
    const child: ChildProcess = spawn(process.execPath, [runPolicyPack, "127.0.0.1:0", "."], { cwd: packDir, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const port = await new Promise<number>((resolve, reject) => {
        let stdout = "";
        // A pack that never prints its port is killed: the caller has no handle to stop it, and a live
        // child would keep the test process (and npm test) running after the failure.
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(new Error(`the pack printed no port within ${timeoutMs} ms; stderr:\n${stderr}`));
        }, timeoutMs);
        child.stdout!.on("data", (d) => {
            stdout += d;
            const m = /^(\d+)\s*$/m.exec(stdout);
            if (m) {
                clearTimeout(timer);
                resolve(Number(m[1]));
            }
        });
        child.on("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`the pack exited with ${code} before printing its port; stdout:\n${stdout}\nstderr:\n${stderr}`));
        });
    });
    const startupMs = Date.now() - started;
    const client = new analyzerRpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
        "grpc.max_receive_message_length": 400 * 1024 * 1024,
        "grpc.max_send_message_length": 400 * 1024 * 1024,
    });
    let declared: AnalyzerPolicy[] | undefined;

    const analyzeEncoded = async (request: Uint8Array): Promise<Diagnostic[]> => {
        const res: any = await call((cb) =>
            client.makeUnaryRequest("/pulumirpc.Analyzer/AnalyzeStack", (b: Uint8Array) => Buffer.from(b), analyzerProto.AnalyzeResponse.deserializeBinary, request, cb),
        );
        return res.getDiagnosticsList().map((d: any) => ({
            policyName: d.getPolicyname(),
            policyPackName: d.getPolicypackname(),
            enforcementLevel: LEVELS[d.getEnforcementlevel()],
            message: d.getMessage(),
            violation: d.getMessage().split("\n").slice(1).join("\n") || d.getMessage(),
            urn: d.getUrn(),
        }));
    };

    const info = async () => {
        const res: any = await call((cb) => client.getAnalyzerInfo(new Empty(), cb));
        declared = res.getPoliciesList().map((p: any) => ({ name: p.getName(), enforcementLevel: LEVELS[p.getEnforcementlevel()] }));
        return { name: res.getName(), version: res.getVersion(), policies: declared! };
    };

    return {
        port,
        startupMs,
        info,
        async configure(config) {
            const policies = declared ?? (await info()).policies;
            const req = new analyzerProto.ConfigureAnalyzerRequest();
            const map = req.getPolicyconfigMap();
            for (const policy of policies) {
                const entry = config[policy.name];
                if (entry === undefined) continue;
                const { enforcementLevel, ...properties } = (typeof entry === "string" ? { enforcementLevel: entry } : entry) as Record<string, any>;
                const pc = new analyzerProto.PolicyConfig();
                pc.setEnforcementlevel(LEVELS.indexOf((enforcementLevel ?? policy.enforcementLevel) as Level));
                pc.setProperties(Struct.fromJavaScript(properties));
                map.set(policy.name, pc);
            }
            await call((cb) => client.configure(req, cb));
        },
        analyzeStack(resources, parents) {
            return analyzeEncoded(encodeAnalyzeStack(resources, parents));
        },
        analyzeStackEncoded: (request) => analyzeEncoded(request),
        stop() {
            client.close();
            child.kill();
        },
    };
}
