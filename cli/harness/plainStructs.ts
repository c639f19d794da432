/**
 * The registration round trip of the SDK's mock runtime without protobuf, for runProgram only.
 *
 * For each registration the SDK builds the request's `object` with google-protobuf's
 * Struct.fromJavaScript, the mock monitor reads it back with toJavaScript(), builds the response's
 * Struct again, and the SDK reads that one with toJavaScript(): a fifth of a render's CPU, for
 * values that never leave the process. While installed, Struct.fromJavaScript keeps the plain
 * values instead (a PlainStruct), converted exactly as fromJavaScript followed by toJavaScript
 * converts them (plainStructs.test.ts holds the two together), and toJavaScript() hands out a fresh
 * copy. Anything else that reads a PlainStruct (getFieldsMap, serializeBinary, toObject, toArray
 * outside the two setters below) first builds the real fields in place, so it gets what it would
 * have got. The registration request's and response's setObject keep the struct plain; every other
 * message's setter builds it.
 *
 * The patch is found by what it replaces: installing it throws if the SDK's modules no longer have
 * that shape, and runProgram reports a run whose registrations did not go through it.
 */
import * as path from "path";

const SDK_RUNTIME = path.dirname(require.resolve("@pulumi/pulumi/runtime/resource"));
// The modules the SDK itself loads (resolved from its runtime folder, not from here).
const STRUCT_PB = require.resolve("google-protobuf/google/protobuf/struct_pb", { paths: [SDK_RUNTIME] });
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { Struct, Value } = require(STRUCT_PB);
// eslint-disable-next-line @typescript-eslint/no-var-requires
const jspb = require(require.resolve("google-protobuf", { paths: [path.dirname(STRUCT_PB)] }));
// eslint-disable-next-line @typescript-eslint/no-var-requires
const resproto = require(path.join(SDK_RUNTIME, "..", "proto", "resource_pb"));

/** google-protobuf's Value.fromJavaScript sorts values by its own typeOf (closure's goog.typeOf). */
const typeOf: (value: unknown) => string = jspb.typeOf;

/** What Value.fromJavaScript(value).toJavaScript() gives (or throws). */
export function plainValue(value: unknown): unknown {
    switch (typeOf(value)) {
        case "string":
        case "number":
        case "boolean":
            return value;
        case "null":
            return null;
        case "array": {
            const array = value as unknown[];
            const out: unknown[] = [];
            for (let i = 0; i < array.length; i++) out.push(plainValue(array[i]));
            return out;
        }
        case "object":
            return plainStructValue(value);
        default:
            throw new Error("Unexpected struct type.");
    }
}

const byKey = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * What Struct.fromJavaScript(obj).toJavaScript() gives (or throws): fromJavaScript takes every
 * enumerable property (for...in, inherited ones too) in that order; its field map drops "__proto__"
 * (it is kept in a plain object) and toJavaScript writes the fields in sorted key order.
 */
export function plainStructValue(obj: unknown): Record<string, unknown> {
    const fields: Array<[string, unknown]> = [];
    for (const key in obj as object) {
        const value = plainValue((obj as Record<string, unknown>)[key]);
        if (key !== "__proto__") fields.push([key, value]);
    }
    fields.sort(byKey);
    const out: Record<string, unknown> = {};
    for (const [key, value] of fields) out[key] = value;
    return out;
}

/** A copy of a value made by plainValue (no other kinds of value in it, keys already in order). */
function copyPlain(value: unknown): unknown {
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.map(copyPlain);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = copyPlain((value as Record<string, unknown>)[key]);
    return out;
}

/** Set while a PlainStruct builds its real fields: Value.fromJavaScript's nested structs are then real ones. */
let building = false;

class PlainStruct extends Struct {
    /** The values, until the real fields are built. */
    #plain: Record<string, unknown> | undefined;
    /** Set while one of the two setters below stores the struct (jspb calls toArray() to keep its array). */
    #storing = false;

    static of(plain: Record<string, unknown>): PlainStruct {
        const s = new PlainStruct();
        s.#plain = plain;
        return s;
    }

    /** Still plain: nothing has needed its real fields. */
    get isPlain(): boolean {
        return this.#plain !== undefined;
    }

    /** Stores the struct in a message through `set` without building its fields. */
    storeIn<T>(set: () => T): T {
        this.#storing = true;
        try {
            return set();
        } finally {
            this.#storing = false;
        }
    }

    /** Builds the real fields into this message's own array (the one a message holding it refers to). */
    #build(): void {
        const plain = this.#plain;
        if (plain === undefined) return;
        this.#plain = undefined;
        building = true;
        try {
            const fields = super.getFieldsMap();
            for (const key of Object.keys(plain)) fields.set(key, Value.fromJavaScript(plain[key]));
        } finally {
            building = false;
        }
    }

    toJavaScript(): Record<string, unknown> {
        return this.#plain !== undefined ? (copyPlain(this.#plain) as Record<string, unknown>) : super.toJavaScript();
    }
    getFieldsMap(noLazyCreate?: boolean): unknown {
        this.#build();
        return super.getFieldsMap(noLazyCreate);
    }
    clearFieldsMap(): unknown {
        this.#build();
        return super.clearFieldsMap();
    }
    toArray(): unknown[] {
        if (!this.#storing) this.#build();
        return super.toArray();
    }
    toString(): string {
        this.#build();
        return super.toString();
    }
    serializeBinary(): Uint8Array {
        this.#build();
        return super.serializeBinary();
    }
    toObject(includeInstance?: boolean): unknown {
        this.#build();
        return super.toObject(includeInstance);
    }
}

// jspb's own code calls toArray by its compiled name (setWrapperField, a message's toArray of its
// fields): the override answers to every name of it.
for (const name of Object.getOwnPropertyNames(jspb.Message.prototype))
    if (name !== "toArray" && jspb.Message.prototype[name] === jspb.Message.prototype.toArray)
        Object.defineProperty(PlainStruct.prototype, name, { value: PlainStruct.prototype.toArray, writable: true, configurable: true });

/** A Struct made by the installed Struct.fromJavaScript and still plain. */
export function isPlainStruct(value: unknown): boolean {
    return value instanceof PlainStruct && value.isPlain;
}

export const PLAIN_STRUCTS_BYPASSED =
    "a registration's object was not a plain struct from end to end, as cli/harness/plainStructs.ts expects (did the Pulumi SDK change how it builds or reads RegisterResourceRequest/Response's object?)";

let installed = false;

/** Installs the patch; returns what removes it. Throws if the SDK's modules are not as expected. */
export function installPlainStructs(): () => void {
    if (installed) throw new Error("plainStructs: already installed (runProgram runs one program at a time)");
    const setters = [resproto.RegisterResourceRequest?.prototype, resproto.RegisterResourceResponse?.prototype];
    const expected = [Struct.fromJavaScript, Struct.prototype.toJavaScript, Struct.prototype.getFieldsMap, Value.fromJavaScript, typeOf, ...setters.map((p) => p?.setObject), ...setters.map((p) => p?.getObject)];
    if (!expected.every((f) => typeof f === "function"))
        throw new Error("plainStructs: google-protobuf's Struct or the SDK's RegisterResourceRequest/Response no longer have fromJavaScript/toJavaScript/getFieldsMap/setObject/getObject; cli/harness/plainStructs.ts must follow the SDK");
    const fromJavaScript = Struct.fromJavaScript;
    Struct.fromJavaScript = function (obj: unknown) {
        return building ? fromJavaScript.call(this, obj) : PlainStruct.of(plainStructValue(obj));
    };
    const setObjects = setters.map((p) => p.setObject);
    for (const p of setters) {
        const setObject = p.setObject;
        p.setObject = function (value: unknown) {
            return value instanceof PlainStruct ? value.storeIn(() => setObject.call(this, value)) : setObject.call(this, value);
        };
    }
    installed = true;
    return () => {
        Struct.fromJavaScript = fromJavaScript;
        setters.forEach((p, i) => (p.setObject = setObjects[i]));
        installed = false;
    };
}
