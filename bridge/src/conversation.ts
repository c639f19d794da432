/**
 * How a chat finds its agent-server session without state in the bridge (so any replica can take
 * any turn): a conversation is keyed by a digest of the caller's key and of the messages so far,
 * and that key is the title of its session in the agent server. A request with messages
 * [m1 .. mN-1, mN] looks for the session titled key(m1 .. mN-1); after the answer A the title
 * becomes key(m1 .. mN, A), which is the prefix the client sends next time. The lookup is opencode's
 * own title search (GET /session?search=), so the state lives in the agent server's database only.
 * Two callers with different keys never share a session; a history the agent server has no session
 * for (edited, or from elsewhere) starts a new session that gets the earlier turns as a transcript.
 */
import * as crypto from "node:crypto";
import type { ChatMessage } from "./openai";

export const TITLE_PREFIX = "bridge-conversation-";

export function conversationTitle(clientKey: string, messages: ChatMessage[]): string {
    const h = crypto.createHash("sha256");
    h.update(crypto.createHash("sha256").update(clientKey).digest());
    for (const m of messages) {
        if (m.role === "system" || m.role === "developer") continue;
        h.update(`\u0000${m.role}\u0000${String(m.content)}`);
    }
    return TITLE_PREFIX + h.digest("hex").slice(0, 40);
}

export const systemText = (messages: ChatMessage[]) =>
    messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => String(m.content)).join("\n\n") || undefined;

/** The earlier turns written out for a session that has not seen them, followed by the new message. */
export function transcript(history: ChatMessage[], last: ChatMessage): string {
    const turns = history.filter((m) => m.role !== "system" && m.role !== "developer");
    if (turns.length === 0) return String(last.content);
    const lines = turns.map((m) => `[${m.role}]\n${String(m.content)}`);
    return `The conversation so far:\n\n${lines.join("\n\n")}\n\n[user]\n${String(last.content)}`;
}
