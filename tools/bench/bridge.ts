/**
 * The time the model bridge adds over calling the agent server directly: opencode (npm, the dev
 * stack's rendered settings, its provider a local fake model API) and bridge/ started as in
 * test/products/bridge.products.ts. Each round makes one chat both ways, in alternating order:
 * directly (POST /session with a title, POST /session/:id/message, as the bridge does) and through
 * the bridge (POST /v1/chat/completions, not streamed). The overhead is the per-round difference.
 */
import { performance } from "perf_hooks";
import { renderStack } from "../../test/render";
import { stop } from "../../test/products/pod";
import { startOpencode } from "../../test/products/opencodeServer";
import { startBridge } from "../../test/products/bridgeServer";
import { startFakeModelApi } from "../../test/products/fakeModelApi";
import { median } from "./program";
import { PRODUCTS } from "../products/pins";

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)];

export async function benchBridge(rounds: number): Promise<void> {
    const upstream = await startFakeModelApi();
    const r = await renderStack("dev", { agentServerProviderBaseUrl: upstream.baseUrl });
    if (r.errors.length) throw new Error(`dev does not render: ${r.errors.join("; ")}`);
    const agent = await startOpencode(r, "agent-server-4000", "agent");
    const bridge = await startBridge(r, agent.port);
    try {
        const [providerID, modelID] = bridge.env.DEFAULT_MODEL.split("/");
        const direct = async (i: number) => {
            const post = (p: string, body: unknown) =>
                fetch(`http://127.0.0.1:${agent.port}${p}`, { method: "POST", headers: { Authorization: agent.auth, "Content-Type": "application/json" }, body: JSON.stringify(body) }).then(async (res) => {
                    if (!res.ok) throw new Error(`direct ${p}: ${res.status}`);
                    return res.json();
                });
            const s = await post("/session", { title: `bench-direct-${i}` });
            await post(`/session/${s.id}/message`, { model: { providerID, modelID }, parts: [{ type: "text", text: `bench ${i}` }] });
        };
        const viaBridge = async (i: number) => {
            const res = await fetch(`http://127.0.0.1:${bridge.port}/v1/chat/completions`, {
                method: "POST",
                headers: { Authorization: `Bearer ${bridge.key}`, "Content-Type": "application/json" },
                body: JSON.stringify({ messages: [{ role: "user", content: `bench ${i}` }] }),
            });
            if (res.status !== 200) throw new Error(`bridge: ${res.status} ${await res.text()}`);
            await res.json();
        };
        const time = async (fn: (i: number) => Promise<void>, i: number) => {
            const t = performance.now();
            await fn(i);
            return performance.now() - t;
        };
        for (let i = 0; i < 3; i++) {
            await direct(-i - 1);
            await viaBridge(-i - 1);
        }
        const d: number[] = [];
        const b: number[] = [];
        for (let i = 0; i < rounds; i++) {
            if (i % 2 === 0) {
                d.push(await time(direct, i));
                b.push(await time(viaBridge, i));
            } else {
                b.push(await time(viaBridge, i));
                d.push(await time(direct, i));
            }
        }
        const over = b.map((x, i) => x - d[i]);
        const f = (x: number) => `${x.toFixed(1)} ms`;
        console.log(`model bridge overhead over the agent server (opencode ${PRODUCTS.opencode.version}, fake model API, ${rounds} rounds, non-streamed chat):`);
        console.log(`  direct (POST /session + POST /session/:id/message): median ${f(median(d))}, p95 ${f(p95(d))}`);
        console.log(`  through the bridge (POST /v1/chat/completions):     median ${f(median(b))}, p95 ${f(p95(b))}`);
        console.log(`  added by the bridge (per round):                    median ${f(median(over))}, p95 ${f(p95(over))}`);
    } finally {
        await stop(bridge.proc);
        bridge.root.remove();
        await stop(agent.proc);
        agent.root.remove();
        await upstream.close();
    }
}
