/**
 * The idle sweep: the bridge's sessions in the agent server (titled bridge-...) idle longer than
 * BRIDGE_SESSION_IDLE_MS are deleted, except a working one, a lock within its lease and a
 * conversation whose lock is held (conversation.ts). Every replica sweeps, every half of that time
 * (1 s to 1 min), one sweep at a time; none with the setting at 0.
 */
import type { AgentServer } from "./agentServer";
import { CONVERSATION, LOCK, TITLE_PREFIX } from "./conversation";
import type { Settings } from "./settings";

/** Deletes the bridge's sessions idle longer than BRIDGE_SESSION_IDLE_MS; how many. `leaseMs`: a lock's (conversation.ts). */
export async function sweepIdleSessions(agent: AgentServer, s: Settings, leaseMs: number, log: (line: string) => void): Promise<number> {
    if (s.sessionIdleMs === 0) return 0;
    const now = Date.now();
    const signal = AbortSignal.timeout(30_000);
    const idle = (await agent.idleSessions(TITLE_PREFIX, now - s.sessionIdleMs, 500, signal)).filter((x) => x.title.startsWith(TITLE_PREFIX));
    if (idle.length === 0) return 0;
    const working = await agent.workingSessions(signal);
    const locks = (await agent.searchSessions(LOCK, signal)).filter((x) => x.title.startsWith(LOCK) && x.time.created > now - leaseMs);
    const locked = new Set(locks.map((x) => x.title.slice(LOCK.length, LOCK.length + 40)));
    let n = 0;
    for (const x of idle) {
        if (working[x.id] && working[x.id].type !== "idle") continue;
        if (x.title.startsWith(LOCK) && x.time.created > now - leaseMs) continue;
        if (x.title.startsWith(CONVERSATION) && locked.has(x.title.slice(CONVERSATION.length))) continue;
        await agent.deleteSession(x.id, signal).then(() => n++, (e) => log(`session ${x.id}: idle, but not deleted: ${(e as Error).message}`));
    }
    if (n > 0) log(`model bridge: ${n} session(s) idle longer than ${s.sessionIdleMs} ms deleted`);
    return n;
}

/** Runs `sweep` on its schedule (not while `paused`) without keeping the process alive; the timer, to be cleared. */
export function startSweeper(s: Settings, sweep: () => Promise<number>, paused: () => boolean, log: (line: string) => void): NodeJS.Timeout | undefined {
    let sweeping = false;
    const sweeper = s.sessionIdleMs > 0
        ? setInterval(() => {
            if (sweeping || paused()) return;
            sweeping = true;
            sweep().catch((e) => log(`model bridge: the idle-session sweep failed: ${(e as Error).message}`)).finally(() => (sweeping = false));
        }, Math.max(1000, Math.min(60_000, Math.floor(s.sessionIdleMs / 2))))
        : undefined;
    sweeper?.unref();
    return sweeper;
}
