import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeAnalyzeStack } from "./grpc";
import { decodeAnalyzeStackRequest, structToJavaScript } from "./wire";

/* eslint-disable @typescript-eslint/no-var-requires */
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");
/* eslint-enable @typescript-eslint/no-var-requires */

const SECRET = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: "s3cr3t" };
const UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const samples: Record<string, unknown>[] = [
    {},
    { z: 1, a: { y: 2, b: [1, "x", null, true, false, [], {}] }, m: -0.5, big: 2 ** 53, neg: -123456789 },
    { "ünïcödé ✓": "日本語 🎉", "": "", emptyList: [], nested: [[[{ k: [null] }]]] },
    { metadata: { name: "app", labels: { "app.kubernetes.io/name": "app" } }, spec: { replicas: 3, template: { spec: { containers: [{ image: "x@sha256:" + "a".repeat(64) }] } } } },
    { password: SECRET, later: UNKNOWN_STRING },
];

test("the direct Struct decoder gives what google-protobuf's Struct decoding and toJavaScript give", () => {
    for (const sample of samples) {
        const bytes = Struct.fromJavaScript(sample).serializeBinary();
        const expected = Struct.deserializeBinary(bytes).toJavaScript();
        const actual = structToJavaScript(bytes);
        assert.deepEqual(actual, expected);
        // Same key order as jspb's sorted map iteration.
        assert.equal(JSON.stringify(actual), JSON.stringify(expected));
    }
});

test("the decoder reports secrets (Pulumi's signature key) and unknown values, and nothing for plain JSON", () => {
    const flagsOf = (v: Record<string, unknown>) => {
        const flags = { special: false, unknown: false };
        structToJavaScript(Struct.fromJavaScript(v).serializeBinary(), flags);
        return flags;
    };
    assert.deepEqual(flagsOf(samples[3]), { special: false, unknown: false });
    assert.deepEqual(flagsOf({ a: [{ b: SECRET }] }), { special: true, unknown: false });
    assert.deepEqual(flagsOf({ a: [UNKNOWN_STRING] }), { special: false, unknown: true });
});

test("an AnalyzeStackRequest decodes to the generated messages' fields, with the properties as plain data", () => {
    const resources = samples.map((props, i) => ({ type: `kubernetes:core/v1:ConfigMap`, urn: `urn:pulumi:s::p::t::r${i}`, name: `r${i}`, props }));
    const parents = new Map([[resources[1].urn, resources[0].urn]]);
    const bytes = encodeAnalyzeStack(resources, parents);
    const reference = analyzerProto.AnalyzeStackRequest.deserializeBinary(bytes).getResourcesList();
    const decoded = decodeAnalyzeStackRequest(bytes).resources;
    assert.equal(decoded.length, reference.length);
    decoded.forEach((d, i) => {
        const ref = reference[i];
        assert.equal(d.message.getType(), ref.getType());
        assert.equal(d.message.getUrn(), ref.getUrn());
        assert.equal(d.message.getName(), ref.getName());
        assert.equal(d.message.getParent(), ref.getParent());
        assert.equal(d.message.getOptions().getParent(), ref.getOptions().getParent());
        assert.deepEqual(d.properties, ref.getProperties().toJavaScript());
    });
    assert.equal(decoded[1].message.getParent(), resources[0].urn);
});

test("entries that arrive out of key order (a Go encoder need not sort) come out in jspb's sorted order", () => {
    const b = Struct.fromJavaScript({ b: 1, c: { z: 1 } }).serializeBinary();
    const a = Struct.fromJavaScript({ a: 2 }).serializeBinary();
    const bytes = new Uint8Array([...b, ...a]); // concatenated messages merge: entries b, c, a
    const expected = Struct.deserializeBinary(bytes).toJavaScript();
    const actual = structToJavaScript(bytes);
    assert.equal(JSON.stringify(actual), JSON.stringify(expected));
    assert.deepEqual(Object.keys(actual), ["a", "b", "c"]);
});
