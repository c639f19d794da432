/**
 * cli/harness/plainStructs.ts against the real google-protobuf the Pulumi SDK loads: the plain
 * values give what Struct.fromJavaScript(x).toJavaScript() gives (value, kind of number, key
 * order, prototype, or the error thrown) for a spread of values, and a plain struct read any other
 * way gives the real struct's bytes.
 */
import assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vm from "vm";
import { after, afterEach, describe, it } from "node:test";
import { installPlainStructs, isPlainStruct, plainStructValue, plainValue, PLAIN_STRUCTS_BYPASSED } from "./plainStructs";
import { runProgram } from "./program";

const SDK_RUNTIME = path.dirname(require.resolve("@pulumi/pulumi/runtime/resource"));
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { Struct, Value } = require(require.resolve("google-protobuf/google/protobuf/struct_pb", { paths: [SDK_RUNTIME] }));
// eslint-disable-next-line @typescript-eslint/no-var-requires
const resproto = require(path.join(SDK_RUNTIME, "..", "proto", "resource_pb"));
const realFromJavaScript = Struct.fromJavaScript;

/** A value written out with everything the comparison must see: key order, -0, NaN, prototypes, holes. */
function shape(v: unknown): string {
    if (v === null) return "null";
    if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v !== "object") return `${typeof v}:${String(v)}`;
    const proto = Object.getPrototypeOf(v);
    if (Array.isArray(v)) {
        const holes = Object.keys(v).length !== v.length ? "<holes>" : "";
        return `${proto === Array.prototype ? "" : "<proto>"}[${v.map(shape).join(",")}]${holes}`;
    }
    const own = Object.getOwnPropertyNames(v).length + Object.getOwnPropertySymbols(v).length !== Object.keys(v).length ? "<hidden>" : "";
    return `${proto === Object.prototype ? "" : "<proto>"}${own}{${Object.keys(v)
        .map((k) => `${JSON.stringify(k)}:${shape((v as Record<string, unknown>)[k])}`)
        .join(",")}}`;
}

function outcome(f: () => unknown): string {
    try {
        return shape(f());
    } catch (err) {
        return `throws ${(err as Error).constructor.name}: ${(err as Error).message}`;
    }
}

/** The values compared; each is tried both as a Struct (Struct.fromJavaScript) and as a Value. */
function samples(): Array<[string, unknown]> {
    const inherited = Object.create({ fromProto: 1, z: "p" });
    inherited.own = 2;
    const nullProto = Object.create(null);
    nullProto.b = 1;
    nullProto.a = [null];
    const hidden = { shown: 1 };
    Object.defineProperty(hidden, "hidden", { value: 2, enumerable: false });
    const withSymbol = { a: 1, [Symbol("s")]: 2 };
    const getter = { get computed() { return { n: 3 }; }, plain: true };
    const throwingGetter = { get boom(): number { throw new TypeError("getter threw"); } };
    class Point {
        constructor(public x: number, public y: number) {}
        norm() { return Math.hypot(this.x, this.y); }
    }
    function OldStyle(this: Record<string, unknown>) { this.v = 1; }
    OldStyle.prototype.method = function () { return 1; };
    const oldStyle = new (OldStyle as any)();
    const arrayExtra: unknown[] & { extra?: string } = [1, 2];
    arrayExtra.extra = "dropped";
    class MyArray extends Array {}
    const subArray = MyArray.from([1, "x"]);
    const holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const deep: Record<string, unknown> = {};
    let cursor = deep;
    for (let i = 0; i < 60; i++) cursor = (cursor[`l${i % 7}`] = { i }) as Record<string, unknown>;
    const longArray = Array.from({ length: 500 }, (_, i) => (i % 3 ? i * 1.5 : `s${i}`));
    const manyKeys = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${(i * 7919) % 300}`, i]));
    const protoKey = JSON.parse('{"__proto__": {"x": 1}, "a": 1}');
    const protoKeyUndefined = { a: 1 };
    Object.defineProperty(protoKeyUndefined, "__proto__", { value: undefined, enumerable: true });
    const protoKeyOnly = JSON.parse('{"__proto__": 5}');
    const proxy = new Proxy({ b: 2, a: 1 }, {});
    const args = (function (..._xs: unknown[]) { return arguments; })(1, "two"); // eslint-disable-line prefer-rest-params
    const secret = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: "s3cr3t" };
    const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const k8s = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "apps", labels: { "app.kubernetes.io/name": "web", app: "web" }, annotations: {} },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: {
                metadata: { labels: { app: "web" } },
                spec: {
                    containers: [{ name: "web", image: "nginx@sha256:" + "0".repeat(64), ports: [{ containerPort: 80, protocol: "TCP" }], env: [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }, { name: "X", value: "" }], resources: { limits: { cpu: "500m", memory: "1Gi" } } }],
                    securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
                    tolerations: [],
                },
            },
        },
    };
    // Values of another realm (instanceof Array and Object fail there) and closure's other tests of kind.
    const otherRealm = vm.runInNewContext(`({ list: [1, { b: 2, a: 1 }], object: { y: 1, x: [] }, listLike: (() => { class L { splice() {} } const l = new L(); l.length = 2; l[0] = "a"; l[1] = "b"; return l; })(), fn: () => 1 })`);
    const callHidden = Object.assign(() => 1, { x: 1 });
    Object.defineProperty(callHidden, "call", { value: undefined, enumerable: false });
    const values: Array<[string, unknown]> = [
        ["another realm's list and object", { list: otherRealm.list, object: otherRealm.object }],
        ["another realm's object with a length and a splice method (closure: a list)", { l: otherRealm.listLike }],
        ["another realm's function", { f: otherRealm.fn }],
        ["a function without call (closure: an object)", { f: callHidden }],
        // what Struct.fromJavaScript is given (for...in over anything)
        ["empty object", {}],
        ["null", null],
        ["undefined", undefined],
        ["zero", 0],
        ["string", "ab"],
        ["empty string", ""],
        ["true", true],
        ["false", false],
        ["empty array", []],
        ["array", [1, "a", null]],
        ["array of objects", [{ b: 1, a: 2 }, []]],
        // numbers
        ["numbers", { zero: 0, neg: -1, frac: 1.5, big: 1e21, tiny: 5e-324, max: Number.MAX_VALUE, min: -Number.MAX_VALUE, unsafe: 2 ** 53 + 2 }],
        ["negative zero", { z: -0 }],
        ["negative zero in a list", [-0, 0]],
        ["NaN", { n: NaN }],
        ["Infinity", { i: Infinity, m: -Infinity }],
        ["number alone", 3.25],
        ["negative zero alone", -0],
        ["NaN alone", NaN],
        // strings
        ["strings", { e: "", sp: " ", nl: "a\nb", nul: "\u0000", uni: "é漢", emoji: "😀", lone: "\ud800", json: '{"a":1}' }],
        ["long string", { s: "x".repeat(100000) }],
        // booleans and null
        ["booleans", { t: true, f: false }],
        ["null field", { n: null }],
        ["null in a list", [null, null]],
        // nesting
        ["nested", { a: { b: { c: { d: [1, [2, [3, { e: null }]]] } } } }],
        ["empty nested", { a: {}, b: [], c: [[]], d: [{}] }],
        ["list of lists", [[1, 2], ["a"], [[null]]]],
        ["deep", deep],
        ["long array", { xs: longArray }],
        ["many keys", manyKeys],
        // key order
        ["unsorted keys", { b: 1, a: 2, c: 3 }],
        ["integer keys", { "10": 1, "9": 2, a: 3, "1": 4 }],
        ["integer-like keys", { "01": 1, "-1": 2, "1.5": 3, "4294967294": 4, "4294967295": 5, "1e3": 6, "0": 7 }],
        ["case and symbols in keys", { z: 1, Z: 2, _: 3, "-": 4, "~": 5, " ": 6, "": 7, "a.b": 8, "a/b": 9 }],
        ["non-ASCII keys", { é: 1, e: 2, "😀": 3, ü: 4, "\uffff": 5, "\ud83d": 6 }],
        ["keys that are Object.prototype's", { constructor: 1, toString: 2, hasOwnProperty: 3, valueOf: 4 }],
        ["keys of a list's shape", { length: 2, 0: "a", 1: "b", splice: 1 }],
        ["__proto__ as a key", protoKey],
        ["__proto__ alone", protoKeyOnly],
        ["__proto__ with an unsupported value", protoKeyUndefined],
        ["nested __proto__", { a: JSON.parse('{"__proto__": [1], "b": 2}') }],
        // unsupported values
        ["undefined field", { a: undefined }],
        ["undefined after a good field", { a: 1, b: undefined, c: 2 }],
        ["undefined in a list", [1, undefined]],
        ["hole in a list", { xs: holes }],
        ["function field", { f: () => 1 }],
        ["function alone", () => 1],
        ["symbol field", { s: Symbol("x") }],
        ["bigint field", { b: BigInt(1) }],
        ["bigint in a list", [BigInt(2)]],
        ["throwing getter", throwingGetter],
        ["cycle", cyclic],
        // objects that are not plain
        ["inherited properties", inherited],
        ["null prototype", nullProto],
        ["non-enumerable property", hidden],
        ["symbol key", withSymbol],
        ["getter", getter],
        ["class instance", new Point(3, 4)],
        ["function-constructor instance (enumerable method)", oldStyle],
        ["list with an extra property", { xs: arrayExtra }],
        ["Array subclass", { xs: subArray }],
        ["Date", { d: new Date(0) }],
        ["Map", { m: new Map([["a", 1]]) }],
        ["Set", { s: new Set([1]) }],
        ["RegExp", { r: /x/g }],
        ["Error", { e: new Error("no") }],
        ["String object", { s: new String("ab") }],
        ["Number object", { n: new Number(3) }],
        ["Boolean object", { b: new Boolean(false) }],
        ["Uint8Array", { u: new Uint8Array([1, 2]) }],
        ["Buffer", { b: Buffer.from("ab") }],
        ["Promise", { p: Promise.resolve(1) }],
        ["Proxy", proxy],
        ["arguments", { a: args }],
        ["Math", { m: Math }],
        // what the SDK sends
        ["secret", secret],
        ["unknown", { u: unknownValue, list: [unknownValue] }],
        ["resource reference", { r: { "4dabf18193072939515e22adb298388d": "5cf8f73096256a8f31e491e813e4eb8e", urn: "urn:pulumi:ci::p::t::n", id: "n-id", packageVersion: "" } }],
        ["asset", { a: { "4dabf18193072939515e22adb298388d": "c44067f5952c0a294b673a41bacd8c17", text: "hello" } }],
        ["Kubernetes object", k8s],
        ["Kubernetes objects", { items: [k8s, { ...k8s, metadata: { ...k8s.metadata, name: "two" } }] }],
    ];
    const scalars: unknown[] = [0, -0, 1, -1, 0.1, 1 / 3, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), 1e-7, 1e300, NaN, Infinity, -Infinity, "", "0", "-0", "null", "true", "undefined", " ", "\t", "a\u0000b", true, false, null];
    for (const x of scalars) values.push([`the scalar ${shape(x)} in a field`, { v: x }]);
    return values;
}

describe("plain values: what google-protobuf's fromJavaScript and toJavaScript give", () => {
    const all = samples();
    it("has a spread of values to compare", () => assert.ok(all.length >= 100, `${all.length} samples`));
    for (const [name, value] of all) {
        it(`${name} (as a Struct, as a Value)`, () => {
            assert.equal(outcome(() => plainStructValue(value)), outcome(() => realFromJavaScript(value).toJavaScript()), "as a Struct");
            assert.equal(outcome(() => plainValue(value)), outcome(() => Value.fromJavaScript(value).toJavaScript()), "as a Value");
        });
    }
    it("a getter is read once, in the order fromJavaScript reads", () => {
        const reads = (f: (o: object) => unknown) => {
            const log: string[] = [];
            const o = { get b() { log.push("b"); return { get y() { log.push("b.y"); return 1; } }; }, get a() { log.push("a"); return 2; } };
            f(o);
            return log.join(" ");
        };
        assert.equal(reads(plainStructValue), reads((o) => realFromJavaScript(o).toJavaScript()));
    });
});

describe("the installed patch", () => {
    let restore: (() => void) | undefined;
    const install = () => (restore = installPlainStructs());
    afterEach(() => {
        restore?.();
        restore = undefined;
    });
    const bytes = (m: { serializeBinary(): Uint8Array }) => Buffer.from(m.serializeBinary()).toString("hex");

    it("gives plain structs whose toJavaScript is the real one's, a fresh copy each time, taken when made", () => {
        install();
        for (const [name, value] of samples()) {
            const expected = outcome(() => realFromJavaScript(value).toJavaScript());
            if (expected.startsWith("throws")) {
                assert.equal(outcome(() => Struct.fromJavaScript(value)), expected, name);
                continue;
            }
            const s = Struct.fromJavaScript(value);
            assert.ok(isPlainStruct(s), name);
            const first = s.toJavaScript();
            assert.equal(shape(first), expected, name);
            for (const k of Object.keys(first)) first[k] = "changed";
            assert.equal(outcome(() => s.toJavaScript()), expected, `${name}: a caller's change to the copy it got`);
        }
        const source: Record<string, unknown> = { a: { b: 1 } };
        const s = Struct.fromJavaScript(source);
        (source.a as Record<string, unknown>).b = 2;
        assert.deepEqual(s.toJavaScript(), { a: { b: 1 } }, "a change to the source after fromJavaScript");
    });

    it("builds the real fields for any other reader: the same bytes, objects and map as the real struct", () => {
        install();
        for (const [name, value] of samples()) {
            if (outcome(() => realFromJavaScript(value)).startsWith("throws")) continue;
            const real = realFromJavaScript(value);
            const viaBytes = Struct.fromJavaScript(value);
            assert.equal(bytes(viaBytes), bytes(real), name);
            assert.ok(!isPlainStruct(viaBytes), `${name}: built`);
            assert.equal(outcome(() => viaBytes.toJavaScript()), outcome(() => real.toJavaScript()), `${name}: toJavaScript once built`);
            assert.deepEqual(Struct.fromJavaScript(value).toObject(), real.toObject(), name);
            assert.deepEqual([...Struct.fromJavaScript(value).getFieldsMap().keys()], [...real.getFieldsMap().keys()], name);
            assert.deepEqual(Struct.fromJavaScript(value).toArray(), real.toArray(), name);
        }
        const s = Struct.fromJavaScript({ a: 1 });
        s.getFieldsMap().set("b", Value.fromJavaScript("x"));
        assert.deepEqual(s.toJavaScript(), { a: 1, b: "x" }, "a change through the field map is read back");
    });

    it("keeps a registration's request and response objects plain; the messages still serialize as with real structs", () => {
        install();
        const value = samples().find(([n]) => n === "Kubernetes object")![1];
        for (const Message of [resproto.RegisterResourceRequest, resproto.RegisterResourceResponse]) {
            const plain = new Message();
            plain.setObject(Struct.fromJavaScript(value));
            assert.ok(isPlainStruct(plain.getObject()), `${Message.name}: plain after setObject`);
            const real = new Message();
            real.setObject(realFromJavaScript(value));
            assert.equal(bytes(plain), bytes(real), Message.name);
            assert.deepEqual(plain.getObject().toJavaScript(), real.getObject().toJavaScript(), Message.name);
            const listed = new Message();
            listed.setObject(Struct.fromJavaScript(value));
            assert.deepEqual(listed.toArray(), real.toArray(), `${Message.name}: the message's array`);
        }
        const invoke = new resproto.ResourceInvokeRequest();
        invoke.setArgs(Struct.fromJavaScript(value));
        assert.ok(!isPlainStruct(invoke.getArgs()), "another message's setter builds the fields");
        const realInvoke = new resproto.ResourceInvokeRequest();
        realInvoke.setArgs(realFromJavaScript(value));
        assert.equal(bytes(invoke), bytes(realInvoke));
    });

    it("is removed by what installing returned, and refuses a second install", () => {
        const setObject = resproto.RegisterResourceRequest.prototype.setObject;
        install();
        assert.throws(() => installPlainStructs(), /already installed/);
        assert.notEqual(Struct.fromJavaScript, realFromJavaScript);
        restore!();
        restore = undefined;
        assert.equal(Struct.fromJavaScript, realFromJavaScript);
        assert.equal(resproto.RegisterResourceRequest.prototype.setObject, setObject);
        assert.ok(!isPlainStruct(Struct.fromJavaScript({ a: 1 })));
    });
});

describe("runProgram with the patch", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plain-structs-"));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const program = path.join(dir, "program.js");
    fs.writeFileSync(
        program,
        `const pulumi = require(${JSON.stringify(require.resolve("@pulumi/pulumi"))});\n` +
            `const a = new pulumi.CustomResource("test:index:Thing", "a", { b: 2, a: [1, { z: null, y: -0 }] });\n` +
            `new pulumi.CustomResource("test:index:Thing", "b", { from: a.id });\n` +
            `exports.out = a.id;\n`,
    );
    const options = { project: "p", stack: "s", config: {}, secretKeys: [], programPath: program };

    it("registers the inputs as the real round trip would, without a bypass", async () => {
        const run = await runProgram(options);
        assert.deepEqual(run.errors, []);
        assert.equal(shape(run.resources.map((r) => r.inputs)), shape([{ a: [1, { y: -0, z: null }], b: 2 }, { from: "a-id" }]));
        assert.equal(Struct.fromJavaScript, realFromJavaScript, "removed after the run");
    });

    /** runProgram's errors while `method` of `Message` is replaced by what `replace` makes of it. */
    const errorsWith = async (Message: any, method: string, replace: (original: (...args: any[]) => any) => (...args: any[]) => any) => {
        const original = Message.prototype[method];
        Message.prototype[method] = replace(original);
        try {
            return (await runProgram(options)).errors;
        } finally {
            Message.prototype[method] = original;
        }
    };

    it("reports a run whose registrations bypass it: an SDK that builds the request's object otherwise", async () => {
        const errors = await errorsWith(resproto.RegisterResourceRequest, "setObject", (setObject) =>
            function (this: unknown, value: { serializeBinary(): Uint8Array }) {
                return setObject.call(this, value && Struct.deserializeBinary(value.serializeBinary()));
            },
        );
        assert.deepEqual(errors, [PLAIN_STRUCTS_BYPASSED]);
    });

    it("reports a run whose registrations bypass it: an SDK that reads the response's object field by field", async () => {
        const errors = await errorsWith(resproto.RegisterResourceResponse, "getObject", (getObject) =>
            function (this: unknown) {
                const object = getObject.call(this);
                object?.getFieldsMap();
                return object;
            },
        );
        assert.deepEqual(errors, [PLAIN_STRUCTS_BYPASSED]);
    });
});
