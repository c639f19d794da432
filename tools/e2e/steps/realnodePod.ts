/**
 * The real node's name, and how the e2e acts on its pods: a process of a pod or of one container
 * (from the cgroups in the namespace's view), requests from inside a pod's network namespace (the
 * host's curl, the pod's packets: NetworkPolicy judges them as the pod's), a client pod, a Secret's
 * value. Shared by the real node's step modules.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Context } from "../harness/context";
import { sleep } from "../harness/context";
import { IMAGE_RECIPES } from "../images/recipes";

export const NODE_NAME = "e2e-node";

const PIDS_ROOT = "/sys/fs/cgroup/pids";
const procs = (dir: string) => fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);

/** The pod's cgroup folder (kubepods/<qos>/pod<uid>), or undefined. */
function podCgroup(uid: string): string | undefined {
    const want = `pod${uid}`;
    const walk = (dir: string, depth: number): string | undefined => {
        if (depth > 4) return undefined;
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            if (!e.isDirectory()) continue;
            const p = path.join(dir, e.name);
            if (e.name === want || e.name.replace(/_/g, "-") === want) return p;
            const r = walk(p, depth + 1);
            if (r) return r;
        }
        return undefined;
    };
    return walk(PIDS_ROOT, 0);
}

/** A process of the pod (any: they share its network namespace). */
export function podPid(uid: string): number | undefined {
    const dir = podCgroup(uid);
    if (!dir) return undefined;
    const sub = fs.readdirSync(dir, { withFileTypes: true }).filter((x) => x.isDirectory()).flatMap((x) => procs(path.join(dir, x.name)));
    return [...procs(dir), ...sub][0];
}

/** The processes of one container of a pod (containerID from its status: containerd://<id>), oldest first. */
export function containerPids(uid: string, containerId: string): number[] {
    const dir = podCgroup(uid);
    const id = containerId.replace(/^[a-z]+:\/\//, "");
    if (!dir || !fs.existsSync(path.join(dir, id))) return [];
    return procs(path.join(dir, id)).sort((a, b) => a - b);
}

/** A command run in the pod's network namespace (the host's binary). */
export async function inPod(ctx: Context, podUid: string, cmd: string[], opts: { timeoutSeconds?: number; env?: Record<string, string> } = {}): Promise<{ code: number; out: string }> {
    const pid = podPid(podUid);
    if (!pid) throw new Error(`no process of pod uid ${podUid} on ${NODE_NAME}`);
    const t = opts.timeoutSeconds ? ["timeout", "-k", "5", String(opts.timeoutSeconds)] : [];
    const r = await ctx.run("nsenter", [`--net=/proc/${pid}/ns/net`, ...t, ...cmd], { allowFail: true, quiet: true, env: opts.env });
    return { code: r.code, out: r.stdout + r.stderr };
}

export interface HttpAnswer {
    /** curl's exit status (0: a whole answer came back). */
    code: number;
    status?: number;
    headers: Record<string, string[]>;
    body: string;
    seconds: number;
}

/** An HTTP request from inside a pod's network namespace (curl); the answer's status, headers and body. */
export async function httpFrom(ctx: Context, podUid: string, url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; maxSeconds?: number } = {}): Promise<HttpAnswer> {
    const args = ["curl", "-sS", "-D", "-", "-m", String(opts.maxSeconds ?? 120), "-X", opts.method ?? (opts.body === undefined ? "GET" : "POST")];
    // Headers and body through files of the work folder (0600): keys and passwords stay out of the command line and the step's log.
    const dir = fs.mkdtempSync(ctx.path("http-"));
    try {
        fs.writeFileSync(path.join(dir, "headers"), Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}\n`).join(""), { mode: 0o600 });
        args.push("-H", `@${path.join(dir, "headers")}`);
        if (opts.body !== undefined) {
            fs.writeFileSync(path.join(dir, "body"), opts.body, { mode: 0o600 });
            args.push("--data-binary", `@${path.join(dir, "body")}`);
        }
        return await request(ctx, podUid, [...args, url]);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/**
 * Connection refused (curl exit 7) in the first seconds of a pod: kube-router admits a new pod's
 * address only when its next policy sync has run (seen here: the chat from a client pod created
 * moments before was refused, the same call a minute later answered). Tried again for that long,
 * and said so; a refusal that outlasts it is the answer.
 */
const POLICY_SYNC_SECONDS = 30;

async function request(ctx: Context, podUid: string, args: string[]): Promise<HttpAnswer> {
    const t0 = Date.now();
    let r = await inPod(ctx, podUid, args);
    for (let tries = 1; r.code === 7 && Date.now() - t0 < POLICY_SYNC_SECONDS * 1000; tries++) {
        ctx.io.log(`connection refused (try ${tries}): tried again in 2 s, for up to ${POLICY_SYNC_SECONDS} s (the policy engine's sync of a new pod)`);
        await sleep(2000);
        r = await inPod(ctx, podUid, args);
    }
    return { code: r.code, ...parseDump(r.out), seconds: Math.round((Date.now() - t0) / 100) / 10 };
}

/**
 * The text of an OpenAI-style event stream as its client assembles it: every `data:` event's
 * choices[0].delta.content joined (a cut-off last event and [DONE] are passed over). The pieces do not
 * keep the upstream's cuts: the fake upstream sends "word0 ", the client got "word", "0", " wor", "d1".
 */
export function streamedText(sse: string): string {
    let text = "";
    for (const line of sse.split("\n")) {
        const m = /^data: ?(.*)$/.exec(line.replace(/\r$/, ""));
        if (!m || m[1] === "[DONE]") continue;
        try {
            text += JSON.parse(m[1]).choices?.[0]?.delta?.content ?? "";
        } catch {
            // the last event, cut off mid-line
        }
    }
    return text;
}

/** curl -D - output: the last status line's code (after any 1xx blocks), its headers (names lower-cased), the body. */
export function parseDump(out: string): { status?: number; headers: Record<string, string[]>; body: string } {
    let rest = out;
    let status: number | undefined;
    let headers: Record<string, string[]> = {};
    for (;;) {
        const m = /^HTTP\/[\d.]+ (\d+)[^\n]*\r?\n/.exec(rest);
        if (!m) break;
        const end = rest.search(/\r?\n\r?\n/);
        const block = end < 0 ? rest : rest.slice(0, end);
        status = Number(m[1]);
        headers = {};
        for (const line of block.split(/\r?\n/).slice(1)) {
            const i = line.indexOf(":");
            if (i > 0) (headers[line.slice(0, i).toLowerCase()] ??= []).push(line.slice(i + 1).trim());
        }
        rest = end < 0 ? "" : rest.slice(end).replace(/^\r?\n\r?\n/, "");
        if (status >= 200) break;
    }
    return { status, headers, body: rest };
}

/** A client pod (busybox, compliant with the stack's admission policies) in a namespace whose pods a policy admits; its uid and IP. */
export async function clientPod(ctx: Context, namespace = "ingress-nginx", name = "e2e-client", labels: Record<string, string> = { "app.kubernetes.io/name": "e2e-client" }): Promise<{ uid: string; ip: string }> {
    const existing = await ctx.kubectl(["-n", namespace, "get", "pod", name, "-o", "json"], { allowFail: true, quiet: true });
    if (existing.code === 0) {
        const p = JSON.parse(existing.stdout);
        if (p.status?.phase === "Running") return { uid: p.metadata.uid, ip: p.status.podIP };
    }
    const image = IMAGE_RECIPES.find((r) => r.name === "busybox")!.ref;
    const pod = {
        apiVersion: "v1", kind: "Pod", metadata: { name, namespace, labels },
        spec: {
            automountServiceAccountToken: false, terminationGracePeriodSeconds: 1,
            securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: "RuntimeDefault" } },
            containers: [{
                name: "client", image, imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"],
                resources: { requests: { cpu: "10m", memory: "16Mi", "ephemeral-storage": "16Mi" }, limits: { cpu: "100m", memory: "32Mi", "ephemeral-storage": "32Mi" } },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
            }],
        },
    };
    fs.writeFileSync(ctx.path(`${name}.json`), JSON.stringify(pod));
    await ctx.kubectl(["apply", "-f", ctx.path(`${name}.json`)]);
    await ctx.kubectl(["-n", namespace, "wait", "--for=condition=Ready", `pod/${name}`, "--timeout=120s"]);
    const p = await ctx.kubectlJson(["-n", namespace, "get", "pod", name]);
    return { uid: p.metadata.uid, ip: p.status.podIP };
}

/** A key of a Secret, decoded (never printed). */
export async function secretValue(ctx: Context, ns: string, name: string, key: string): Promise<string> {
    const s = await ctx.kubectlJson(["-n", ns, "get", "secret", name]);
    const v = s.data?.[key];
    if (!v) throw new Error(`secret ${ns}/${name} has no key ${key}`);
    return Buffer.from(v, "base64").toString("utf8");
}
