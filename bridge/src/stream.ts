/**
 * A streamed answer's pace: the text is sent as it grows, in pieces of at most
 * OPENAI_STREAM_CHUNK_SIZE characters at least OPENAI_STREAM_CHUNK_DELAY_MS apart (a maximum
 * rate, not a replay: the first piece leaves as soon as there is text, and a slow model is followed
 * as it writes). `offer` gives the answer so far (each a prefix of the next); `finish` the whole.
 */
import { pieces } from "./openai";

export class Pacer {
    private sent = 0;
    private text = "";
    private done = false;
    private wake?: () => void;
    private last = -Infinity;
    readonly finished: Promise<void>;

    constructor(private readonly size: number, private readonly delayMs: number, private readonly write: (piece: string) => boolean, private readonly log: (line: string) => void) {
        this.finished = this.run();
    }

    /** The answer so far; a text that does not extend what was sent is logged and only its new end is used. */
    offer(text: string) {
        if (text.length <= this.text.length) return;
        this.text = text;
        this.wake?.();
    }

    finish(text: string) {
        if (!text.startsWith(this.text.slice(0, this.sent))) this.log(`model bridge: the final answer differs from what was streamed after ${this.sent} characters; its rest is sent`);
        if (text.length >= this.sent) this.text = text;
        this.done = true;
        this.wake?.();
    }

    /** Stops sending (the client went away or the turn failed). */
    cancel() {
        this.done = true;
        this.text = this.text.slice(0, this.sent);
        this.wake?.();
    }

    private async run() {
        for (;;) {
            if (this.sent >= this.text.length) {
                if (this.done) return;
                await new Promise<void>((r) => (this.wake = r));
                this.wake = undefined;
                continue;
            }
            const wait = this.last + this.delayMs - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            const rest = this.text.slice(this.sent);
            // Without a delay there is no rate to keep: what is there goes out at once, in pieces of the size.
            const out = this.delayMs === 0 ? pieces(rest, this.size) : [firstPiece(rest, this.size)];
            for (const p of out) {
                if (!this.write(p)) return;
                this.sent += p.length;
            }
            this.last = performance.now();
        }
    }
}

/** The first `size` characters (code points) of `s`, without reading the rest. */
function firstPiece(s: string, size: number): string {
    let n = 0;
    let i = 0;
    for (const ch of s) {
        if (n === size) break;
        i += ch.length;
        n++;
    }
    return s.slice(0, i);
}
