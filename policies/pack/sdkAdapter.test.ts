/**
 * Holds ./sdkAdapter.ts to the SDK it restates: the same stack policies (testdata/sdkAdapter/policies.ts)
 * served by @pulumi/policy's own server and through the adapter, each started as the engine starts
 * a pack, get the same calls; every answer must be the same, bytes or decoded diagnostics, but the
 * one policy that says whether it was handed the list another policy was handed. An upgrade of
 * the SDK that changes what the adapter restates makes this test fail.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { startPack, type RunningPack } from "./grpc";
import { SECRET_SIG, SECRET_VALUE, UNKNOWN_SENTINELS } from "./resources";

/* eslint-disable @typescript-eslint/no-var-requires */
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
/* eslint-enable @typescript-eslint/no-var-requires */

const TESTDATA = path.join(__dirname, "testdata", "sdkAdapter");
let sdk: RunningPack;
let adapter: RunningPack;
before(async () => {
    [sdk, adapter] = await Promise.all([startPack(path.join(TESTDATA, "sdk")), startPack(path.join(TESTDATA, "adapter"))]);
});
after(() => {
    sdk?.stop();
    adapter?.stop();
});

/** A server's answer to one call: the response's bytes, or the error's code and details. */
type Answer = { bytes?: Buffer; error?: { code?: number; details?: string } };

/** Both servers' answers to one call. */
async function both(method: string, request: Uint8Array): Promise<[Answer, Answer]> {
    // An error's details end in the stack of the server that caught it: compared up to the stack.
    const answer = (pack: RunningPack) =>
        pack.raw(method, request).then(
            (bytes): Answer => ({ bytes }),
            (e: { code?: number; details?: string }): Answer => ({ error: { code: e.code, details: e.details?.split("\n    at ")[0] } }),
        );
    return Promise.all([answer(sdk), answer(adapter)]);
}

interface Resource {
    type: string;
    name: string;
    props?: Record<string, unknown>;
    parent?: string;
    dependencies?: string[];
    propertyDependencies?: Record<string, string[]>;
    options?: boolean;
    provider?: boolean;
}
const urn = (type: string, name: string) => `urn:pulumi:test::proj::${type}::${name}`;

function analyzeStackRequest(resources: Resource[]): Uint8Array {
    const req = new analyzerProto.AnalyzeStackRequest();
    for (const r of resources) {
        const res = new analyzerProto.AnalyzerResource();
        res.setType(r.type);
        res.setUrn(urn(r.type, r.name));
        res.setName(r.name);
        res.setProperties(Struct.fromJavaScript(r.props ?? {}));
        const options = new analyzerProto.AnalyzerResourceOptions();
        if (r.options) {
            options.setProtect(true);
            options.setIgnorechangesList(["spec.replicas"]);
            options.setDeletebeforereplace(true);
            options.setDeletebeforereplacedefined(true);
            options.setAdditionalsecretoutputsList(["token"]);
            options.setAliasesList([urn(r.type, `${r.name}-old`)]);
            const timeouts = new analyzerProto.AnalyzerResourceOptions.CustomTimeouts();
            timeouts.setCreate(60);
            timeouts.setDelete(5.5);
            options.setCustomtimeouts(timeouts);
        }
        if (r.parent) {
            options.setParent(r.parent);
            res.setParent(r.parent);
        }
        res.setOptions(options);
        if (r.provider) {
            const provider = new analyzerProto.AnalyzerProviderResource();
            provider.setType("pulumi:providers:test");
            provider.setUrn(urn("pulumi:providers:test", "default"));
            provider.setName("default");
            provider.setProperties(Struct.fromJavaScript({ region: "here", token: { [SECRET_SIG]: SECRET_VALUE, value: "t0ken" } }));
            res.setProvider(provider);
        }
        for (const d of r.dependencies ?? []) res.addDependencies(d);
        for (const [k, urns] of Object.entries(r.propertyDependencies ?? {})) {
            const deps = new analyzerProto.AnalyzerPropertyDependencies();
            deps.setUrnsList(urns);
            res.getPropertydependenciesMap().set(k, deps);
        }
        req.addResources(res);
    }
    return req.serializeBinary();
}

const THING = "test:index:Thing";
const OTHER = "test:index:Other";
const thing: Resource = { type: THING, name: "one", props: { z: 1, a: { list: [1, "x", null, true] }, password: { [SECRET_SIG]: SECRET_VALUE, value: "s3cr3t" } }, options: true, provider: true };
const other: Resource = {
    type: OTHER,
    name: "wanted",
    props: { ref: "one" },
    parent: urn(THING, "one"),
    dependencies: [urn(THING, "one"), urn(THING, "missing")],
    propertyDependencies: { ref: [urn(THING, "one")], gone: [urn(THING, "missing")] },
};
const plain: Resource = { type: "test:index:Plain", name: "plain", props: { n: 2 } };

/** An AnalyzeStack call's diagnostics from both servers, with the shared-list policy's answers taken out. */
async function analyzeBoth(resources: Resource[]) {
    const [fromSdk, fromAdapter] = await both("AnalyzeStack", analyzeStackRequest(resources));
    const decode = (a: Answer) => {
        if (!a.bytes) return { error: a.error };
        const response = analyzerProto.AnalyzeResponse.deserializeBinary(a.bytes).toObject();
        const shared = response.diagnosticsList.filter((d: { policyname: string }) => d.policyname === "shared-list").map((d: { message: string }) => d.message);
        response.diagnosticsList = response.diagnosticsList.filter((d: { policyname: string }) => d.policyname !== "shared-list");
        return { response, shared };
    };
    return { sdk: decode(fromSdk), adapter: decode(fromAdapter) };
}

test("the adapter's pack and the SDK's describe the same pack (GetAnalyzerInfo)", async () => {
    const [a, b] = await both("GetAnalyzerInfo", new Empty().serializeBinary());
    assert.ok(a.bytes, JSON.stringify(a));
    assert.deepEqual(b, a);
});

test("configured (Configure, ConfigureStack), both answer every AnalyzeStack as the SDK does, but the shared list", async () => {
    const config = new analyzerProto.ConfigureAnalyzerRequest();
    const levels = ["advisory", "mandatory", "disabled", "remediate"];
    const entry = (level: string, properties: Record<string, unknown> = {}) => {
        const pc = new analyzerProto.PolicyConfig();
        pc.setEnforcementlevel(levels.indexOf(level));
        pc.setProperties(Struct.fromJavaScript(properties));
        return pc;
    };
    config.getPolicyconfigMap().set("configured", entry("mandatory", { limit: 7 }));
    config.getPolicyconfigMap().set("disabled-by-config", entry("disabled"));
    config.getPolicyconfigMap().set("remediate-by-config", entry("remediate"));
    const [configuredSdk, configuredAdapter] = await both("Configure", config.serializeBinary());
    assert.ok(configuredSdk.bytes, JSON.stringify(configuredSdk));
    assert.deepEqual(configuredAdapter, configuredSdk);

    const stack = new analyzerProto.AnalyzerStackConfigureRequest();
    stack.setStack("test");
    stack.getTagsMap().set("team", "ops");
    stack.getTagsMap().set("env", "test");
    const [stackSdk, stackAdapter] = await both("ConfigureStack", stack.serializeBinary());
    assert.ok(stackSdk.bytes, JSON.stringify(stackSdk));
    assert.deepEqual(stackAdapter, stackSdk);

    const cases: Array<[string, Resource[], number]> = [
        // Everything a resource carries; every policy reports or is not applicable.
        ["a full stack", [thing, other, plain], 11],
        // No Thing (typed's fast "not applicable"), nobody wanted (notApplicable()).
        ["a stack of others", [{ ...other, name: "other", parent: undefined, dependencies: [], propertyDependencies: {} }, plain], 11],
        ["an empty stack", [], 11],
        // An unknown value during preview: sees-all becomes an advisory "can't run ... during preview".
        ["a preview", [{ ...thing, props: { later: [...UNKNOWN_SENTINELS][2] } }, other], 11],
    ];
    for (const [name, resources, count] of cases) {
        const { sdk: s, adapter: a } = await analyzeBoth(resources);
        assert.ok(s.response, `${name}: ${JSON.stringify(s)}`);
        assert.equal(s.response.diagnosticsList.length + s.response.notApplicableList.length, count, `${name}: ${JSON.stringify(s.response)}`);
        assert.deepEqual(a.response, s.response, name);
        // The one difference, and the reason for the adapter: one resource list for all policies.
        assert.deepEqual([s.shared, a.shared], [["says whether it was handed the list sees-all was handed\nshared: false"], ["says whether it was handed the list sees-all was handed\nshared: true"]], name);
    }
    const seen = (await analyzeBoth([thing, other, plain])).sdk.response.diagnosticsList.find((d: { policyname: string }) => d.policyname === "sees-all");
    // The fixture does reach what the adapter restates: options, provider, parent, dependencies, config, tags.
    for (const part of ['"deleteBeforeReplace":true', '"createSeconds":60', '"provider":{"type":"pulumi:providers:test"', `"parent":"${urn(THING, "one")}"`, '"config":{}', '"tags":[["env","test"],["team","ops"]]', '"isThing":true', '"asOther":true', '"password":"s3cr3t"'])
        assert.ok(seen.message.includes(part), `sees-all saw ${part}: ${seen.message}`);
    assert.equal(seen.enforcementlevel, levels.indexOf("mandatory"));
});

test("a policy that throws fails the call the same way through both", async () => {
    const { sdk: s, adapter: a } = await analyzeBoth([thing, { ...plain, name: "boom" }]);
    assert.ok(s.error, JSON.stringify(s));
    assert.deepEqual(s.error, { code: 2, details: "Error validating resource with policy 'throws' from policy pack 'sdk-adapter-test@v1.2.3':\nError: boom" });
    assert.deepEqual(a, s);
});
