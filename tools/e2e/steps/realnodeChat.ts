/**
 * The chat on the real node (issue 40): a client pod in ingress-nginx (the namespace the bridge's
 * policy admits) calls the bridge's Service, the bridge calls the agent server's Service, the agent
 * server calls the fake model API at the pods' "internet" address (steps/realnode.ts). And its
 * fault: the bridge killed during a stream (the client gets an error, nothing hangs, the bridge
 * comes back and answers).
 */
import * as fs from "node:fs";
import type { Context, StepIO } from "../harness/context";
import { since, sleep } from "../harness/context";
import { startUpstream } from "./realnode";
import { clientPod, containerPids, httpFrom, inPod, secretValue, streamedText } from "./realnodePod";
import { replyText, SLOW_MARKER } from "../../../test/products/fakeModelApi";

async function bridge(ctx: Context): Promise<{ url: string; key: string }> {
    const key = (await secretValue(ctx, "agent", "model-bridge-api-keys", "api-keys")).split("\n").filter(Boolean)[0];
    const svc = await ctx.kubectlJson(["-n", "agent", "get", "service", "model-bridge"]);
    return { url: `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}/v1/chat/completions`, key };
}

/** One non-streamed chat: the upstream's text must come back, in exactly one upstream call. */
async function oneChat(ctx: Context, io: StepIO, what: string): Promise<void> {
    const up = await startUpstream();
    const { url, key } = await bridge(ctx);
    const client = await clientPod(ctx);
    const before = up.calls.length;
    const sent = { messages: [{ role: "user", content: "say hello" }] };
    const r = await httpFrom(ctx, client.uid, url, { body: JSON.stringify(sent), headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, maxSeconds: 180 });
    // A late second call would show here too.
    await sleep(2000);
    const calls = up.calls.length - before;
    let text = "";
    try {
        text = JSON.parse(r.body).choices?.[0]?.message?.content ?? "";
    } catch {
        text = "";
    }
    io.result(`path ${what}: POST ${url} (from ingress-nginx/e2e-client) ${JSON.stringify(sent)} -> HTTP ${r.status ?? `none (curl exit ${r.code})`}, ${JSON.stringify(text.slice(0, 60))}, ${calls} upstream call(s), ${r.seconds} s`);
    const want = calls ? replyText(up.calls[before].n) : "";
    if (r.status !== 200 || !want || text !== want || calls !== 1) throw new Error(`${what}: the upstream's answer did not come back in one call: HTTP ${r.status ?? "none"} (curl exit ${r.code}), ${calls} upstream call(s): ${r.body.slice(0, 400)}`);
}

/** The chat path: a chat through the bridge to the agent server, one model call. */
export async function chatPath(ctx: Context, io: StepIO): Promise<void> {
    const t0 = process.hrtime.bigint();
    await oneChat(ctx, io, "chat");
    ctx.time("realnode-paths", since(t0));
}

interface BridgePod { name: string; uid: string; containerId: string; restarts: number }

/** The bridge's running pods (ci runs two replicas), each with its container's id and restart count. */
async function bridgePods(ctx: Context): Promise<BridgePod[]> {
    const pods = (await ctx.kubectlJson<{ items: any[] }>(["-n", "agent", "get", "pods", "-l", "app.kubernetes.io/name=model-bridge"])).items.filter((p) => p.status?.phase === "Running");
    if (!pods.length) throw new Error("no running bridge pod");
    return pods.map((p) => {
        const c = p.status.containerStatuses.find((s: any) => s.name === p.spec.containers[0].name);
        return { name: p.metadata.name, uid: p.metadata.uid, containerId: c.containerID, restarts: c.restartCount };
    });
}

/**
 * The bridge killed (SIGKILL of its containers' processes, in every replica: the Service picked one
 * for the stream) while it streams an answer: the client's stream must end with an error within
 * seconds (no [DONE], nothing hangs), the bridge's containers restart and the next chat is
 * answered in one upstream call.
 */
export async function bridgeKilled(ctx: Context, io: StepIO): Promise<void> {
    const up = await startUpstream();
    const { url, key } = await bridge(ctx);
    const client = await clientPod(ctx);
    const before = up.calls.length;
    const out = ctx.path("stream.out");
    fs.writeFileSync(ctx.path("stream.headers"), `Authorization: Bearer ${key}\nContent-Type: application/json\n`, { mode: 0o600 });
    const body = JSON.stringify({ messages: [{ role: "user", content: `${SLOW_MARKER}: count slowly` }], stream: true });
    // The stream in the background; killed by `timeout` only if it hangs.
    const curl = inPod(ctx, client.uid, ["curl", "-sS", "-N", "-o", out, "-H", `@${ctx.path("stream.headers")}`, "--data-binary", body, url], { timeoutSeconds: 150 });
    await ctx.waitFor(120, "the streamed answer's first pieces at the client", async () => up.calls.length > before && fs.existsSync(out) && words(fs.readFileSync(out, "utf8")) >= 3);
    const victims = await bridgePods(ctx);
    const pids = victims.flatMap((p) => containerPids(p.uid, p.containerId));
    if (!pids.length) throw new Error(`no process of the bridge's containers in ${victims.map((p) => p.name).join(", ")}`);
    const t0 = process.hrtime.bigint();
    for (const pid of pids) process.kill(pid, "SIGKILL");
    const r = await curl;
    const ended = since(t0);
    const got = fs.readFileSync(out, "utf8");
    const pieces = words(got);
    io.result(`fault bridge killed during a stream: SIGKILL of ${pods(pids)} in ${victims.map((p) => `agent/${p.name}`).join(", ")} after ${pieces} word(s); the client's stream ended ${r.code === 0 ? "WITHOUT an error" : `with curl exit ${r.code} (${r.out.trim().split("\n").pop()})`} ${ended} s after the kill, ${got.includes("[DONE]") ? "WITH" : "without"} [DONE]`);
    if (r.code === 0 || r.code === 124 || r.code === 137 || got.includes("[DONE]")) throw new Error(`the client did not get an error when the bridge was killed (curl exit ${r.code}${r.code === 124 || r.code === 137 ? ": it hung until the timeout" : ""})`);
    if (ended > 30) throw new Error(`the client's stream ended ${ended} s after the bridge was killed (expected within seconds)`);
    // The agent server's stream to the upstream: closed when the bridge died, or left to run out.
    const call = up.calls[before];
    await ctx.waitFor(90, "the bridge's containers restarted and Ready", async () => {
        const now = await bridgePods(ctx);
        const ready = await ctx.kubectl(["-n", "agent", "get", "pods", "-l", "app.kubernetes.io/name=model-bridge", "-o", "jsonpath={.items[*].status.conditions[?(@.type==\"Ready\")].status}"], { quiet: true });
        return victims.every((v) => (now.find((p) => p.name === v.name)?.restarts ?? 0) > v.restarts) && ready.stdout.trim().split(/\s+/).every((s) => s === "True");
    });
    const restarted = (await bridgePods(ctx)).reduce((n, p) => n + p.restarts, 0) - victims.reduce((n, p) => n + p.restarts, 0);
    io.result(`fault bridge killed: its containers restarted (${restarted} restart(s)) and Ready ${since(t0)} s after the kill; the agent server's upstream stream ${call.closedEarly ? "was closed early" : call.ended ? "ran to its end" : "is still running (the session was not aborted: nobody was left to abort it)"}`);
    await oneChat(ctx, io, "chat after the bridge's restart");
}

/** Whole words ("word<n> ") of the fake upstream's slow stream the client has assembled. */
const words = (sse: string) => (streamedText(sse).match(/word\d+ /g) ?? []).length;
const pods = (pids: number[]) => `pid${pids.length > 1 ? "s" : ""} ${pids.join(", ")}`;
