/** The agent server (opencode from npm) started as its pod runs it: opencode.products.ts and fetched.products.ts. */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { install, opencodeBinary } from "../../tools/products/install";
import { PRODUCTS } from "../../tools/products/pins";
import { find } from "../render";
import { freePort } from "../backups/servers";
import { collect, listening, NOBODY, podEnv, podRoot, runnableCopy, stop, type PodRoot } from "./pod";
import type { RenderResult } from "../../cli/harness/render";

export interface Opencode {
    proc: ChildProcess;
    port: number;
    /** The rendered container and its environment (container paths mapped under the pod root). */
    container: any;
    env: Record<string, string>;
    root: PodRoot;
    /** The Authorization header of the rendered basic-authentication credentials. */
    auth: string;
    out: () => string;
}

export interface OpencodeOptions {
    /** Replaces the rendered configuration file by what this returns for the parsed file. */
    config?: (file: any) => unknown;
    /** Starts it without OPENCODE_SERVER_PASSWORD (basic authentication off). */
    withoutPassword?: boolean;
    /** Changes the rendered environment (container paths already mapped) before the start. */
    env?: (env: Record<string, string>) => void;
}

/**
 * The agent server Deployment `instance` of the render, run as its pod runs it: the rendered
 * configuration file and environment, the volume mounts as folders under a temporary root, as
 * nobody when this runs as root (so the read-only mounts are read-only to it); --port becomes a
 * free port and --hostname 127.0.0.1. The caller stops `proc` and removes `root`.
 */
export async function startOpencode(r: RenderResult, instance: string, namespace: string, opts: OpencodeOptions = {}): Promise<Opencode> {
    install(PRODUCTS.opencode);
    const spec = find(r, "Deployment", instance, namespace).spec.template.spec;
    const c = spec.containers.find((x: any) => x.name === "server");
    const root = podRoot(r, spec, c, namespace);
    if (opts.config) {
        const file = root.at("/etc/agent-server/config.json");
        fs.chmodSync(path.dirname(file), 0o755);
        fs.writeFileSync(file, JSON.stringify(opts.config(JSON.parse(fs.readFileSync(file, "utf8")))), { mode: 0o444 });
        fs.chmodSync(path.dirname(file), 0o555);
    }
    const mounts: string[] = c.volumeMounts.map((m: any) => m.mountPath);
    const env = podEnv(r, c, namespace, (_n, v) => (mounts.some((m) => v === m || v.startsWith(`${m}/`)) ? root.at(v) : v));
    if (opts.withoutPassword) delete env.OPENCODE_SERVER_PASSWORD;
    opts.env?.(env);
    const port = await freePort();
    const args = [...c.args];
    args[args.indexOf("--port") + 1] = String(port);
    args[args.indexOf("--hostname") + 1] = "127.0.0.1";
    const proc = spawn(runnableCopy(opencodeBinary(), root.root), args, {
        cwd: root.at(c.workingDir),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
        ...(process.getuid?.() === 0 ? { uid: NOBODY.uid, gid: NOBODY.gid } : {}),
        stdio: ["ignore", "pipe", "pipe"],
    });
    const out = collect(proc);
    try {
        await listening(proc, port, "opencode serve", out);
    } catch (e) {
        await stop(proc);
        root.remove();
        throw e;
    }
    const auth = `Basic ${Buffer.from(`${env.OPENCODE_SERVER_USERNAME}:${env.OPENCODE_SERVER_PASSWORD}`).toString("base64")}`;
    return { proc, port, container: c, env, root, auth, out };
}
