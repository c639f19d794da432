/**
 * Running a rendered container's process on this machine: its environment with Secret references
 * resolved from the rendered Secrets (placeholder-shaped values of the render, never printed), its
 * volume mounts as folders under a temporary root (read-only mounts owned by root, writable ones
 * by the user the process runs as, so a write outside them fails like under readOnlyRootFilesystem),
 * and container paths in environment values rewritten to those folders; its output collected, waiting
 * for its port, stopping it.
 */
import type { ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { find } from "../render";
import type { RenderResult } from "../../cli/harness/render";

export const NOBODY = { uid: 65534, gid: 65534 };

export interface PodRoot {
    root: string;
    /** A container path mapped into the root. */
    at: (containerPath: string) => string;
    remove: () => void;
}

/** Folders for the container's volume mounts; ConfigMap and Secret volumes get their files. */
export function podRoot(r: RenderResult, pod: any, container: any, namespace: string): PodRoot {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ops-pod-"));
    fs.chmodSync(root, 0o755);
    const mounts: { mountPath: string; readOnly?: boolean; name: string }[] = container.volumeMounts ?? [];
    // Parents first, so a nested mount (home/.cache) is created inside its parent.
    for (const m of [...mounts].sort((a, b) => a.mountPath.length - b.mountPath.length)) {
        const dir = path.join(root, m.mountPath);
        fs.mkdirSync(dir, { recursive: true });
        const volume = (pod.volumes ?? []).find((v: any) => v.name === m.name);
        if (volume?.configMap) {
            const cm = find(r, "ConfigMap", volume.configMap.name, namespace);
            const data: Record<string, string> = cm.data ?? {};
            // items: only the keys named, each at its path (folders as the kubelet makes them); else every key at its name.
            const items: { key: string; path: string }[] = volume.configMap.items ?? Object.keys(data).map((key) => ({ key, path: key }));
            for (const item of items) {
                if (data[item.key] === undefined) throw new Error(`ConfigMap ${namespace}/${volume.configMap.name} has no key ${item.key}`);
                fs.mkdirSync(path.dirname(path.join(dir, item.path)), { recursive: true });
                fs.writeFileSync(path.join(dir, item.path), data[item.key], { mode: 0o444 });
            }
        }
        if (volume?.secret) {
            const secret = find(r, "Secret", volume.secret.secretName, namespace);
            const values: Record<string, string> = { ...Object.fromEntries(Object.entries<string>(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()])), ...secret.stringData };
            for (const [key, value] of Object.entries(values)) fs.writeFileSync(path.join(dir, key), value, { mode: 0o444 });
        }
        if (m.readOnly) for (const d of foldersUnder(dir)) fs.chmodSync(d, 0o555);
        else if (process.getuid?.() === 0) fs.chownSync(dir, NOBODY.uid, NOBODY.gid);
    }
    const at = (p: string) => path.join(root, p);
    return { root, at, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A folder and every folder below it, deepest first. */
function foldersUnder(dir: string): string[] {
    const below = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => foldersUnder(path.join(dir, e.name)));
    return [...below, dir];
}

/** The container's environment: literals (container paths mapped by `mapValue`) and Secret references resolved. */
export function podEnv(r: RenderResult, container: any, namespace: string, mapValue: (name: string, value: string) => string = (_n, v) => v): Record<string, string> {
    const env: Record<string, string> = {};
    for (const e of container.env ?? []) {
        if (e.valueFrom?.secretKeyRef) {
            const ref = e.valueFrom.secretKeyRef;
            const secret = find(r, "Secret", ref.name, namespace);
            const value = secret?.stringData?.[ref.key] ?? (secret?.data?.[ref.key] !== undefined ? Buffer.from(secret.data[ref.key], "base64").toString() : undefined);
            if (value === undefined) throw new Error(`${e.name}: Secret ${namespace}/${ref.name} has no key ${ref.key} in the render`);
            env[e.name] = value;
        } else if (e.value !== undefined) {
            env[e.name] = mapValue(e.name, e.value);
        } else {
            throw new Error(`${e.name}: neither value nor secretKeyRef`);
        }
    }
    return env;
}

/** A copy of an executable the unprivileged user can run (the cache under /root is not readable to it). */
export function runnableCopy(bin: string, dir: string): string {
    const target = path.join(dir, path.basename(bin));
    fs.copyFileSync(bin, target);
    fs.chmodSync(target, 0o755);
    return target;
}

/** Everything the process writes to stdout and stderr, so far. */
export function collect(proc: ChildProcess): () => string {
    let out = "";
    proc.stdout?.on("data", (b) => (out += b));
    proc.stderr?.on("data", (b) => (out += b));
    return () => out;
}

export function tcpConnects(port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const s = net.connect({ host: "127.0.0.1", port, timeout: 1000 }, () => { s.destroy(); resolve(true); });
        s.on("error", () => resolve(false));
        s.on("timeout", () => { s.destroy(); resolve(false); });
    });
}

/** Waits (60 s at most) until the process listens on 127.0.0.1:port; fails with its output when it exits first. */
export async function listening(proc: ChildProcess, port: number, what: string, out: () => string): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!(await tcpConnects(port))) {
        if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`${what} did not listen on 127.0.0.1:${port} (exit ${proc.exitCode}): ${out().slice(-2000)}`);
        await new Promise((res) => setTimeout(res, 250));
    }
}

/** SIGTERM, then SIGKILL after `killAfterMs`; resolves when the process has exited. */
export function stop(c: ChildProcess | undefined, killAfterMs = 10_000): Promise<void> {
    return new Promise((resolve) => {
        if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once("exit", () => resolve());
        c.kill("SIGTERM");
        setTimeout(() => c.kill("SIGKILL"), killAfterMs).unref();
    });
}
