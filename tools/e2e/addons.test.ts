import assert from "node:assert/strict";
import { test } from "node:test";
import { flatten } from "../../config/schema";
import { schema } from "../../config/stack";
import { offlineStackConfig } from "../genGitops";
import { PREVIOUS, VERSION_KEY } from "./steps/addons";
import { answer, METRICS_GV } from "./webhookAnswer";

const minor = (v: string) => v.replace(/^v/, "").split(".").map(Number);

test("each add-on chart of every stack has a previous version one minor below its pin, and a version key the configuration reads", () => {
    const keys = new Set(flatten(schema).map((f) => `ops:${f.key}`));
    for (const stack of ["ci", "dev", "prod"]) {
        const a = offlineStackConfig(stack).addons as unknown as Record<string, { chart?: string; version?: string }>;
        const pins = Object.entries(a).filter(([, p]) => p && typeof p === "object" && p.chart && p.version);
        assert.equal(pins.length, 7, `${stack}: the seven add-on charts`);
        for (const [name, p] of pins) {
            const prev = PREVIOUS[p.chart!];
            assert.ok(prev, `${stack} ${p.chart}: a previous version`);
            const [M, m] = minor(p.version!);
            const [pM, pm] = minor(prev);
            assert.deepEqual([pM, pm], [M, m - 1], `${p.chart}: ${prev} is the minor before ${p.version}`);
            assert.ok(keys.has(VERSION_KEY[p.chart!]), `${p.chart}: ${VERSION_KEY[p.chart!]} is a configuration key`);
            assert.equal(VERSION_KEY[p.chart!], `ops:addons${name[0].toUpperCase()}${name.slice(1)}Version`);
        }
    }
});

test("the webhook stand-in allows an AdmissionReview unchanged, with the request's uid and apiVersion", () => {
    const r = answer("POST", "/networking/v1/ingresses?timeout=10s", JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "abc-1", kind: { kind: "Ingress" } } }));
    assert.equal(r.code, 200);
    assert.deepEqual(r.json, { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: "abc-1", allowed: true } });
    assert.equal(answer("POST", "/mutate", "{}").code, 400, "no request: refused as malformed");
});

test("the webhook stand-in serves metrics.k8s.io discovery and empty lists, and nothing else", () => {
    const d = answer("GET", `/apis/${METRICS_GV}`, "").json as { resources: Array<{ name: string; namespaced: boolean; verbs: string[] }> };
    assert.deepEqual(d.resources.map((x) => [x.name, x.namespaced, x.verbs.join(",")]), [["nodes", false, "get,list"], ["pods", true, "get,list"]]);
    assert.deepEqual((answer("GET", `/apis/${METRICS_GV}/namespaces/booking/pods`, "").json as { kind: string; items: unknown[] }), { kind: "PodMetricsList", apiVersion: METRICS_GV, metadata: {}, items: [] });
    assert.equal((answer("GET", `/apis/${METRICS_GV}/nodes`, "").json as { kind: string }).kind, "NodeMetricsList");
    assert.equal(answer("GET", "/apis/other.example/v1", "").code, 404);
});
