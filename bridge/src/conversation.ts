/**
 * How a chat finds its agent-server session without state in the bridge (so any replica can take
 * any turn), and how two replicas never work in one session at once.
 *
 * Identity: a conversation is keyed by a digest of the caller's key, the end user it names (the
 * request's `user` or `safety_identifier`, when given) and every message so far, system messages
 * included; that key is the title of its session in the agent server (`bridge-c-<key>`). A request
 * with messages [m1 .. mN-1, mN] looks for the session titled key(m1 .. mN-1); after the answer A
 * the title becomes key(m1 .. mN, A), the prefix the client sends next time. Two callers with
 * different keys, or two end users named differently, never share a session; a history the agent
 * server has no session for (edited, or from elsewhere) starts a new session that gets the earlier
 * turns as a transcript. End users behind one key who send no `user` are told apart by their
 * histories only: a session holds exactly the history that finds it.
 *
 * Serialisation: a continuation first takes the conversation's lock, kept in the agent server (the
 * only place the replicas share): it creates a session titled `bridge-l-<key>-<random>`, then lists
 * the lock sessions of that key; the oldest (opencode's creation time, then its session ID, both
 * from the one agent-server process) holds the lock. The others wait in that order until the
 * holder's lock session is deleted, and then look the conversation up again (the holder's turn has
 * moved the title, so a waiter whose history no longer matches starts a new session with its
 * transcript). A lock older than the upstream time-out plus a minute belongs to a replica that
 * died and is ignored (the idle sweep deletes it).
 */
import * as crypto from "node:crypto";
import type { ChatMessage } from "./openai";
import type { AgentServer, Session } from "./agentServer";

export const TITLE_PREFIX = "bridge-";
export const CONVERSATION = `${TITLE_PREFIX}c-`;
export const LOCK = `${TITLE_PREFIX}l-`;
export const FRESH = `${TITLE_PREFIX}n-`;

/** The running digest of a conversation: key() of the messages fed so far. */
export class ConversationKey {
    private readonly h: crypto.Hash;

    constructor(clientKey: string, endUser: string | undefined) {
        this.h = crypto.createHash("sha256");
        this.h.update(crypto.createHash("sha256").update(clientKey).digest());
        this.h.update(endUser === undefined ? "\u0000-" : `\u0000u${endUser.length}:${endUser}`);
    }

    add(m: ChatMessage): this {
        const role = m.role === "developer" ? "system" : m.role;
        this.h.update(`\u0000${role}\u0000${m.content.length}:`);
        this.h.update(m.content);
        return this;
    }

    /** The key of the messages fed so far (the digest goes on). */
    key(): string {
        return this.h.copy().digest("hex").slice(0, 40);
    }

    copy(): ConversationKey {
        const c = Object.create(ConversationKey.prototype) as ConversationKey;
        (c as unknown as { h: crypto.Hash }).h = this.h.copy();
        return c;
    }
}

export const systemText = (messages: ChatMessage[]) =>
    messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => m.content).join("\n\n") || undefined;

/** The earlier turns written out for a session that has not seen them, followed by the new message. */
export function transcript(history: ChatMessage[], last: ChatMessage): string {
    const turns = history.filter((m) => m.role !== "system" && m.role !== "developer");
    if (turns.length === 0) return last.content;
    const lines = turns.map((m) => `[${m.role}]\n${m.content}`);
    return `The conversation so far:\n\n${lines.join("\n\n")}\n\n[user]\n${last.content}`;
}

const byAge = (a: Session, b: Session) => a.time.created - b.time.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export interface Held {
    /** The session titled with the conversation key, if the agent server has one. */
    session?: Session;
    /** Whether this request waited for another one of the same conversation. */
    waited: boolean;
    release(): Promise<void>;
}

/**
 * Takes the lock of conversation `key` (waiting for earlier holders) and finds its session.
 * `leaseMs`: a lock older than this is a dead replica's. Deleting the lock is the caller's (release).
 */
export async function lockConversation(agent: AgentServer, key: string, leaseMs: number, signal: AbortSignal): Promise<Held> {
    const mine = await agent.createSession(`${LOCK}${key}-${crypto.randomBytes(6).toString("hex")}`, signal);
    const release = () => agent.deleteSession(mine.id).catch(() => {});
    let waited = false;
    try {
        for (;;) {
            // Watch before listing, so a holder's release between the list and the wait is not missed.
            let wake!: () => void;
            const released = new Promise<void>((r) => (wake = r));
            const stop = agent.watchAll((e) => {
                if (e.type === "session.deleted" && typeof e.properties?.info?.title === "string" && e.properties.info.title.startsWith(`${LOCK}${key}-`)) wake();
                if (e.type === "bridge.events-lost") wake();
            });
            try {
                const found = await agent.searchSessions(key, signal);
                const locks = found.filter((s) => s.title.startsWith(`${LOCK}${key}-`) && s.time.created >= mine.time.created - leaseMs).sort(byAge);
                if (locks.length === 0 || locks[0].id === mine.id) {
                    const sessions = found.filter((s) => s.title === `${CONVERSATION}${key}`).sort((a, b) => b.time.updated - a.time.updated);
                    return { session: sessions[0], waited, release };
                }
                waited = true;
                // The holder's release wakes us; a poll covers an event stream that is down.
                await Promise.race([released, sleep(1000, signal)]);
            } finally {
                stop();
            }
        }
    } catch (e) {
        await release();
        throw e;
    }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const t = setTimeout(() => {
            signal.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        const onAbort = () => {
            clearTimeout(t);
            reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
    });
}
