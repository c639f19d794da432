/**
 * The model bridge (bridge/) started as its pod runs it: compiled as bridge/Containerfile compiles
 * it and started with the Deployment's command, with the rendered environment (the agent server's
 * credentials and the client keys file from the rendered Secrets); BRIDGE_PORT becomes a free port
 * on 127.0.0.1 and OPENCODE_BASE the local agent server. bridge.products.ts and tools/bench.ts.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { find } from "../render";
import { freePort } from "../backups/servers";
import { collect, listening, podEnv, podRoot, type PodRoot } from "./pod";
import type { RenderResult } from "../../cli/harness/render";

const ROOT = path.resolve(__dirname, "..", "..");
const LOOPBACK = path.join(__dirname, "loopback.cjs");

export interface RunningBridge {
    proc: ChildProcess;
    port: number;
    env: Record<string, string>;
    /** The client key of the rendered Secret. */
    key: string;
    root: PodRoot;
    out: () => string;
}

let compiled: string | undefined;

/**
 * bridge/src compiled with bridge/tsconfig.json (the image's build step) into a temporary folder;
 * its main.js. OPS_BRIDGE_DIR names another bridge folder (its tsconfig.json and src/), to run the
 * same tests against an earlier bridge for before-and-after figures.
 */
export function compileBridge(): string {
    if (compiled) return compiled;
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "ops-bridge-dist-"));
    const dir = process.env.OPS_BRIDGE_DIR ? path.resolve(process.env.OPS_BRIDGE_DIR) : path.join(ROOT, "bridge");
    execFileSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(dir, "tsconfig.json"), "--outDir", out], { stdio: "inherit" });
    fs.chmodSync(out, 0o755);
    compiled = path.join(out, "main.js");
    return compiled;
}

/** The rendered bridge, started; `env` replaces rendered values (a shorter time-out for a test, say). */
export async function startBridge(r: RenderResult, agentPort: number, namespace = "agent", overrides: Record<string, string> = {}): Promise<RunningBridge> {
    const main = compileBridge();
    const spec = find(r, "Deployment", "model-bridge", namespace).spec.template.spec;
    const c = spec.containers[0];
    const root = podRoot(r, spec, c, namespace);
    const mounts: string[] = c.volumeMounts.map((m: any) => m.mountPath);
    const env = podEnv(r, c, namespace, (_n, v) => (mounts.some((m) => v.startsWith(`${m}/`)) ? root.at(v) : v));
    const port = await freePort();
    env.BRIDGE_PORT = String(port);
    env.OPENCODE_BASE = `http://127.0.0.1:${agentPort}`;
    Object.assign(env, overrides);
    if (path.basename(c.command?.[0] ?? "") !== "node" || c.command.length !== 2) throw new Error(`the bridge's command is ${JSON.stringify(c.command)}, expected <path>/node <main.js>`);
    const proc = spawn(process.execPath, ["--require", LOOPBACK, main], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const out = collect(proc);
    await listening(proc, port, "model bridge", out);
    const key = fs.readFileSync(env.BRIDGE_CLIENT_KEYS_FILE, "utf8").trim();
    return { proc, port, env, key, root, out };
}
