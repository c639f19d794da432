/**
 * The memory the request bodies in hand may take together (BRIDGE_REQUEST_MEMORY_BYTES, sized to
 * the bridge's memory limit): a body larger than all of it is 413; one that does not fit beside the
 * bodies in hand is 503 with Retry-After. A body holds its share (its declared length at once, then
 * what arrives) until the caller releases it or reading it fails.
 */
import type * as http from "node:http";
import { StringDecoder } from "node:string_decoder";
import { RequestError } from "./openai";

export interface HeldBody {
    value: unknown;
    /** Gives the body's share back (again: nothing more). */
    release: () => void;
}

export class BodyBudget {
    private inHand = 0;

    constructor(private readonly limit: number) {}

    /** The body as JSON, held within the budget with every other body in hand. */
    async read(req: http.IncomingMessage): Promise<HeldBody> {
        const budget = this.limit;
        const declared = req.headers["content-length"] !== undefined ? Number(req.headers["content-length"]) : undefined;
        const tooLarge = () => new RequestError(413, `the request body is larger than ${budget} bytes (BRIDGE_REQUEST_MEMORY_BYTES, sized to the bridge's memory limit)`, "invalid_request_error", "request_too_large");
        if (declared !== undefined && declared > budget) throw tooLarge();
        let held = 0;
        const take = (n: number) => {
            if (this.inHand + n > budget) throw new RequestError(503, "the model bridge holds as many request bodies as its memory allows; send the request again", "server_error", "bridge_busy", null, { "Retry-After": "1" });
            this.inHand += n;
            held += n;
        };
        const release = () => {
            this.inHand -= held;
            held = 0;
        };
        try {
            take(declared ?? 0);
            // Decoded as it arrives: the body is held once as text, not also as bytes.
            const decoder = new StringDecoder("utf8");
            const parts: string[] = [];
            let size = 0;
            for await (const c of req as AsyncIterable<Buffer>) {
                size += c.length;
                if (size > budget) throw tooLarge();
                if (size > held) take(size - held);
                parts.push(decoder.write(c));
            }
            parts.push(decoder.end());
            let text = parts.join("");
            parts.length = 0;
            try {
                return { value: JSON.parse(text), release };
            } catch {
                throw new RequestError(400, "the request body is not JSON");
            } finally {
                text = "";
            }
        } catch (e) {
            release();
            if (e instanceof RequestError && e.status >= 413) req.resume();
            throw e;
        }
    }
}
