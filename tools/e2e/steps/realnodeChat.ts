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
import { clientPod, containerPids, httpFrom, inPod, secretValue } from "./realnodePod";
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

/** The bridge's pod (one replica in ci), its container's id and restart count. */
async function bridgePod(ctx: Context): Promise<{ name: string; uid: string; containerId: string; restarts: number }> {
    const pods = (await ctx.kubectlJson<{ items: any[] }>(["-n", "agent", "get", "pods", "-l", "app.kubernetes.io/name=model-bridge"])).items.filter((p) => p.status?.phase === "Running");
    if (pods.length !== 1) throw new Error(`expected one running bridge pod, found ${pods.length}`);
    const c = pods[0].status.containerStatuses.find((s: any) => s.name === pods[0].spec.containers[0].name);
    return { name: pods[0].metadata.name, uid: pods[0].metadata.uid, containerId: c.containerID, restarts: c.restartCount };
}

/**
 * The bridge killed (SIGKILL of its container's processes) while it streams an answer: the client's
 * stream must end with an error within seconds (no [DONE], nothing hangs), the bridge's container
 * restarts and the next chat is answered in one upstream call.
 */
export async function bridgeKilled(ctx: Context, io: StepIO): Promise<void> {
    const up = await startUpstream();
    const { url, key } = await bridge(ctx);
    const client = await clientPod(ctx);
    const pod = await bridgePod(ctx);
    const before = up.calls.length;
    const out = ctx.path("stream.out");
    fs.writeFileSync(ctx.path("stream.headers"), `Authorization: Bearer ${key}\nContent-Type: application/json\n`, { mode: 0o600 });
    const body = JSON.stringify({ messages: [{ role: "user", content: `${SLOW_MARKER}: count slowly` }], stream: true });
    // The stream in the background; killed by `timeout` only if it hangs.
    const curl = inPod(ctx, client.uid, ["curl", "-sS", "-N", "-o", out, "-H", `@${ctx.path("stream.headers")}`, "--data-binary", body, url], { timeoutSeconds: 150 });
    await ctx.waitFor(120, "the streamed answer's first pieces at the client", async () => up.calls.length > before && fs.existsSync(out) && (fs.readFileSync(out, "utf8").match(/word\d+/g) ?? []).length >= 3);
    const pids = containerPids(pod.uid, pod.containerId);
    if (!pids.length) throw new Error(`no process of the bridge's container ${pod.containerId} in pod ${pod.name}`);
    const t0 = process.hrtime.bigint();
    for (const pid of pids) process.kill(pid, "SIGKILL");
    const r = await curl;
    const ended = since(t0);
    const got = fs.readFileSync(out, "utf8");
    const pieces = (got.match(/word\d+/g) ?? []).length;
    io.result(`fault bridge killed during a stream: SIGKILL of ${pods(pids)} in agent/${pod.name} after ${pieces} piece(s); the client's stream ended ${r.code === 0 ? "WITHOUT an error" : `with curl exit ${r.code} (${r.out.trim().split("\n").pop()})`} ${ended} s after the kill, ${got.includes("[DONE]") ? "WITH" : "without"} [DONE]`);
    if (r.code === 0 || r.code === 124 || r.code === 137 || got.includes("[DONE]")) throw new Error(`the client did not get an error when the bridge was killed (curl exit ${r.code}${r.code === 124 || r.code === 137 ? ": it hung until the timeout" : ""})`);
    if (ended > 30) throw new Error(`the client's stream ended ${ended} s after the bridge was killed (expected within seconds)`);
    // The agent server's stream to the upstream: closed when the bridge died, or left to run out.
    const call = up.calls[before];
    await ctx.waitFor(90, "the bridge's container restarted and Ready", async () => {
        const p = await bridgePod(ctx);
        const ready = await ctx.kubectl(["-n", "agent", "get", "pod", p.name, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"], { quiet: true });
        return p.restarts > pod.restarts && ready.stdout.trim() === "True";
    });
    io.result(`fault bridge killed: its container restarted (${(await bridgePod(ctx)).restarts - pod.restarts} restart) and Ready ${since(t0)} s after the kill; the agent server's upstream stream ${call.closedEarly ? "was closed early" : call.ended ? "ran to its end" : "is still running (the session was not aborted: nobody was left to abort it)"}`);
    await oneChat(ctx, io, "chat after the bridge's restart");
}

const pods = (pids: number[]) => `pid${pids.length > 1 ? "s" : ""} ${pids.join(", ")}`;
