/**
 * Just enough ASN.1 DER for the e2e's stand-in tls provider: X.509 certificates and PKCS#10
 * requests are built here (node:crypto parses certificates but cannot make them) and read back.
 */

function length(n: number): Buffer {
    if (n < 0x80) return Buffer.from([n]);
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
    const body = Buffer.concat(content);
    return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const seq = (...c: Buffer[]) => tlv(0x30, ...c);
export const set = (...c: Buffer[]) => tlv(0x31, ...c);
export const explicit = (n: number, ...c: Buffer[]) => tlv(0xa0 | n, ...c);
export const octets = (b: Buffer) => tlv(0x04, b);
export const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
export const nul = () => Buffer.from([0x05, 0x00]);
export const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"));
export const printable = (s: string) => tlv(0x13, Buffer.from(s, "ascii"));
export const ia5 = (tag: number, s: string) => tlv(tag, Buffer.from(s, "ascii"));

/** A non-negative INTEGER from big-endian bytes (leading zeros dropped, a 0x00 added when the high bit is set). */
export function uint(bytes: Buffer | number): Buffer {
    let b = typeof bytes === "number" ? Buffer.from([bytes]) : bytes;
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    b = b.subarray(i);
    if (b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
    return tlv(0x02, b);
}

/** A BIT STRING of whole bytes (no unused bits). */
export const bits = (b: Buffer) => tlv(0x03, Buffer.from([0]), b);

/** A named-bit BIT STRING (KeyUsage): bit 0 is the high bit of the first byte; trailing zero bits dropped (DER). */
export function namedBits(set: number[]): Buffer {
    if (set.length === 0) return tlv(0x03, Buffer.from([0]));
    const last = Math.max(...set);
    const bytes = Buffer.alloc(Math.floor(last / 8) + 1);
    for (const n of set) bytes[Math.floor(n / 8)] |= 0x80 >> (n % 8);
    const unused = 7 - (last % 8);
    return tlv(0x03, Buffer.from([unused]), bytes);
}

export function oid(dotted: string): Buffer {
    const parts = dotted.split(".").map(Number);
    const out: number[] = [parts[0] * 40 + parts[1]];
    for (const p of parts.slice(2)) {
        const chunk: number[] = [p & 0x7f];
        for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
        out.push(...chunk);
    }
    return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5), whole seconds, UTC. */
export function time(d: Date): Buffer {
    const iso = d.toISOString().replace(/\.\d+Z$/, "Z").replace(/[-:T]/g, "");
    return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), "ascii")) : tlv(0x18, Buffer.from(iso, "ascii"));
}

/** One decoded element: its tag, its whole encoding and its content. */
export interface Element {
    tag: number;
    raw: Buffer;
    content: Buffer;
}

export function read(buf: Buffer, at = 0): Element {
    const tag = buf[at];
    let len = buf[at + 1];
    let head = 2;
    if (len & 0x80) {
        const n = len & 0x7f;
        len = 0;
        for (let i = 0; i < n; i++) len = len * 256 + buf[at + 2 + i];
        head += n;
    }
    if (at + head + len > buf.length) throw new Error("DER: element runs past the end of its buffer");
    return { tag, raw: buf.subarray(at, at + head + len), content: buf.subarray(at + head, at + head + len) };
}

/** The elements of a constructed element's content. */
export function children(content: Buffer): Element[] {
    const out: Element[] = [];
    for (let at = 0; at < content.length; ) {
        const e = read(content, at);
        out.push(e);
        at += e.raw.length;
    }
    return out;
}

export function pem(label: string, der: Buffer): string {
    const b64 = der.toString("base64").replace(/(.{64})/g, "$1\n").replace(/\n$/, "");
    return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export function unpem(label: string, text: string): Buffer {
    const m = new RegExp(`-----BEGIN ${label}-----([^-]+)-----END ${label}-----`).exec(text);
    if (!m) throw new Error(`expected a PEM block "${label}"`);
    return Buffer.from(m[1].replace(/\s+/g, ""), "base64");
}
