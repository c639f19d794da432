/**
 * A direct decoder of google.protobuf.Struct from its wire bytes into plain JavaScript, giving
 * what google-protobuf's Struct.deserializeBinary(bytes).toJavaScript() gives (keys in sorted
 * order, as jspb's Map iterates them) at a fraction of its cost, and the AnalyzeStack request with
 * it: each resource's properties decoded directly, the rest of the resource by the generated jspb
 * classes (decodeAnalyzeStackRequest, for the pack's AnalyzeStack handler, ./sdkAdapter.ts).
 *
 * Wire format (struct.proto): Struct { map<string, Value> fields = 1 } (entries: key = 1, value = 2);
 * Value oneof { null_value = 1 (enum), number_value = 2 (double), string_value = 3,
 * bool_value = 4, struct_value = 5, list_value = 6 }; ListValue { repeated Value values = 1 }.
 */
import { UNKNOWN_SENTINELS } from "./resources";

// eslint-disable-next-line @typescript-eslint/no-var-requires
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");

/** What a decoded Struct holds besides plain JSON. */
export interface StructFlags {
    /** An object with Pulumi's signature key (a secret, asset, archive or resource reference). */
    special: boolean;
    /** A string that is one of @pulumi/policy's unknown-value sentinels. */
    unknown: boolean;
}

// @pulumi/pulumi runtime/rpc.js specialSigKey; the unknown sentinels are resources.ts's.
const SIG_KEY = "4dabf18193072939515e22adb298388d";

const VARINT = 0;
const FIXED64 = 1;
const DELIMITED = 2;
const FIXED32 = 5;

export class WireReader {
    constructor(
        readonly buf: Buffer,
        public pos = 0,
    ) {}

    varint(): number {
        const buf = this.buf;
        let b = buf[this.pos++];
        if (b < 0x80) return b;
        let result = b & 0x7f;
        let shift = 7;
        // Lengths and tags fit in 32 bits; larger varints (enum/bool values never are) keep the low bits.
        do {
            if (this.pos >= buf.length) throw new Error("truncated varint");
            b = buf[this.pos++];
            if (shift < 28) result |= (b & 0x7f) << shift;
            else if (shift < 53) result += (b & 0x7f) * 2 ** shift;
            shift += 7;
        } while (b >= 0x80);
        return result;
    }

    /** The end offset of a length-delimited field whose tag was just read. */
    delimitedEnd(): number {
        const len = this.varint();
        const end = this.pos + len;
        if (end > this.buf.length) throw new Error(`a length-delimited field of ${len} bytes runs past the end of the message`);
        return end;
    }

    skip(wireType: number): void {
        switch (wireType) {
            case VARINT:
                this.varint();
                return;
            case FIXED64:
                this.pos += 8;
                return;
            case DELIMITED:
                this.pos = this.delimitedEnd();
                return;
            case FIXED32:
                this.pos += 4;
                return;
            default:
                throw new Error(`unsupported wire type ${wireType}`);
        }
    }
}

export function decodeStruct(r: WireReader, end: number, flags: StructFlags): Record<string, unknown> {
    // Entries usually arrive with sorted keys (jspb and deterministic Go encoders sort map keys):
    // fill the object directly and re-sort only when an entry arrives out of order.
    let out: Record<string, unknown> = {};
    let last: string | undefined;
    let sorted = true;
    while (r.pos < end) {
        const tag = r.varint();
        if (tag !== ((1 << 3) | DELIMITED)) {
            r.skip(tag & 7);
            continue;
        }
        const entryEnd = r.delimitedEnd();
        let key = "";
        let value: unknown = NO_VALUE;
        while (r.pos < entryEnd) {
            const t = r.varint();
            if (t === ((1 << 3) | DELIMITED)) {
                const e = r.delimitedEnd();
                key = r.buf.toString("utf8", r.pos, e);
                r.pos = e;
            } else if (t === ((2 << 3) | DELIMITED)) {
                value = decodeValue(r, r.delimitedEnd(), flags);
            } else r.skip(t & 7);
        }
        if (key === SIG_KEY) flags.special = true;
        // A map entry without a value holds the default Value, which has no kind.
        if (value === NO_VALUE) throw new Error("Unexpected struct type");
        if (sorted && last !== undefined && last > key) sorted = false;
        last = key;
        out[key] = value;
    }
    if (!sorted) {
        const unsorted = out;
        out = {};
        for (const k of Object.keys(unsorted).sort()) out[k] = unsorted[k];
    }
    return out;
}

const NO_VALUE = Symbol("no value");

function decodeValue(r: WireReader, end: number, flags: StructFlags): unknown {
    let value: unknown = NO_VALUE;
    while (r.pos < end) {
        const tag = r.varint();
        switch (tag) {
            case (1 << 3) | VARINT:
                r.varint();
                value = null;
                break;
            case (2 << 3) | FIXED64:
                value = r.buf.readDoubleLE(r.pos);
                r.pos += 8;
                break;
            case (3 << 3) | DELIMITED: {
                const e = r.delimitedEnd();
                if (e - r.pos === 36 && UNKNOWN_SENTINELS.has((value = r.buf.toString("latin1", r.pos, e)) as string)) flags.unknown = true;
                value = r.buf.toString("utf8", r.pos, e);
                r.pos = e;
                break;
            }
            case (4 << 3) | VARINT:
                value = r.varint() !== 0;
                break;
            case (5 << 3) | DELIMITED:
                value = decodeStruct(r, r.delimitedEnd(), flags);
                break;
            case (6 << 3) | DELIMITED: {
                const e = r.delimitedEnd();
                const list: unknown[] = [];
                while (r.pos < e) {
                    const t = r.varint();
                    if (t === ((1 << 3) | DELIMITED)) list.push(decodeValue(r, r.delimitedEnd(), flags));
                    else r.skip(t & 7);
                }
                value = list;
                break;
            }
            default:
                r.skip(tag & 7);
        }
    }
    if (value === NO_VALUE) throw new Error("Unexpected struct type");
    return value;
}

/** Struct bytes to plain JavaScript; `flags` tells what else than plain JSON was met. */
export function structToJavaScript(bytes: Uint8Array, flags: StructFlags = { special: false, unknown: false }): Record<string, unknown> {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return decodeStruct(new WireReader(buf), buf.length, flags);
}

/** One resource of an AnalyzeStack request: the generated message without its properties, and the properties as plain data. */
export interface DecodedResource {
    message: any;
    properties: Record<string, unknown>;
    flags: StructFlags;
}

/** Decodes an AnalyzeStackRequest (field 1: repeated AnalyzerResource) with the properties Structs decoded directly. */
export function decodeAnalyzeStackRequest(bytes: Uint8Array): { resources: DecodedResource[] } {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const r = new WireReader(buf);
    const resources: DecodedResource[] = [];
    while (r.pos < buf.length) {
        const tag = r.varint();
        if (tag !== ((1 << 3) | 2)) {
            r.skip(tag & 7);
            continue;
        }
        resources.push(decodeResource(r, r.delimitedEnd()));
    }
    return { resources };
}

function decodeResource(r: WireReader, end: number): DecodedResource {
    const msg = new analyzerProto.AnalyzerResource();
    let properties: Record<string, unknown> = {};
    const flags: StructFlags = { special: false, unknown: false };
    const str = (e: number) => {
        const s = r.buf.toString("utf8", r.pos, e);
        r.pos = e;
        return s;
    };
    const sub = (e: number) => {
        const b = r.buf.subarray(r.pos, e);
        r.pos = e;
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    };
    while (r.pos < end) {
        const tag = r.varint();
        const field = tag >>> 3;
        if ((tag & 7) !== 2) {
            r.skip(tag & 7);
            continue;
        }
        const e = r.delimitedEnd();
        switch (field) {
            case 1:
                msg.setType(str(e));
                break;
            case 2:
                properties = structToJavaScript(sub(e), flags);
                break;
            case 3:
                msg.setUrn(str(e));
                break;
            case 4:
                msg.setName(str(e));
                break;
            case 5:
                msg.setOptions(analyzerProto.AnalyzerResourceOptions.deserializeBinary(sub(e)));
                break;
            case 6:
                msg.setProvider(analyzerProto.AnalyzerProviderResource.deserializeBinary(sub(e)));
                break;
            case 7:
                msg.setParent(str(e));
                break;
            case 8:
                msg.addDependencies(str(e));
                break;
            case 9: {
                // map<string, AnalyzerPropertyDependencies> entry: key = 1, value = 2.
                let key = "";
                let value = new analyzerProto.AnalyzerPropertyDependencies();
                while (r.pos < e) {
                    const t = r.varint();
                    if (t === ((1 << 3) | 2)) key = str(r.delimitedEnd());
                    else if (t === ((2 << 3) | 2)) value = analyzerProto.AnalyzerPropertyDependencies.deserializeBinary(sub(r.delimitedEnd()));
                    else r.skip(t & 7);
                }
                msg.getPropertydependenciesMap().set(key, value);
                break;
            }
            default:
                r.pos = e;
        }
    }
    return { message: msg, properties, flags };
}
