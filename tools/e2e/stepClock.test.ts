import { test } from "node:test";
import * as assert from "node:assert/strict";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { StepClock } from "./stepClock";
import { stepTimeLines } from "./steps/speed";

const SVC = "urn:pulumi:ci::ops::ops:apps:Booking$kubernetes:core/v1:Service::booking";
const DEP = "urn:pulumi:ci::ops::ops:apps:Booking$kubernetes:apps/v1:Deployment::booking";
const DEP2 = "urn:pulumi:ci::ops::ops:apps:Bridge$kubernetes:apps/v1:Deployment::bridge";
const meta = (urn: string, type: string) => ({ op: "create", urn, type, provider: "", new: { custom: true } }) as any;
const ev = (e: Partial<EngineEvent>) => ({ sequence: 0, timestamp: 0, ...e }) as EngineEvent;

test("stepClock: a step runs from its pre-event to its outputs or failure; times summed per type, the longest named", () => {
    const c = new StepClock();
    c.observe(ev({ preludeEvent: { config: {} } }), 100);
    c.observe(ev({ resourcePreEvent: { metadata: meta(SVC, "kubernetes:core/v1:Service") } }), 101);
    c.observe(ev({ resourcePreEvent: { metadata: meta(DEP, "kubernetes:apps/v1:Deployment") } }), 102);
    c.observe(ev({ resourcePreEvent: { metadata: meta(DEP2, "kubernetes:apps/v1:Deployment") } }), 102.5);
    c.observe(ev({ resOutputsEvent: { metadata: meta(SVC, "kubernetes:core/v1:Service") } }), 111);
    c.observe(ev({ resOutputsEvent: { metadata: meta(DEP, "kubernetes:apps/v1:Deployment") } }), 105);
    c.observe(ev({ resOpFailedEvent: { metadata: meta(DEP2, "kubernetes:apps/v1:Deployment"), status: 0, steps: 1 } }), 120.5);
    // A component (here the stack) spans the others: not counted.
    c.observe(ev({ resourcePreEvent: { metadata: { ...meta("urn:pulumi:ci::ops::pulumi:pulumi:Stack::ops-ci", "pulumi:pulumi:Stack"), new: {} } } }), 100.5);
    c.observe(ev({ resOutputsEvent: { metadata: { ...meta("urn:pulumi:ci::ops::pulumi:pulumi:Stack::ops-ci", "pulumi:pulumi:Stack"), new: {} } } }), 120.8);
    c.observe(ev({ summaryEvent: { maybeCorrupt: false, durationSeconds: 21, resourceChanges: {}, policyPacks: {} } }), 121);
    assert.equal(c.first, 100);
    assert.equal(c.summary, 121);
    assert.deepEqual(c.byType(), [
        { type: "kubernetes:apps/v1:Deployment", count: 2, total: 21, max: 18, longest: DEP2 },
        { type: "kubernetes:core/v1:Service", count: 1, total: 10, max: 10, longest: SVC },
    ]);
    const lines = stepTimeLines({ operation: "up", stack: "ci", ok: true, seconds: 30, engineSeconds: 21, stepTimes: c.byType(), summary: {}, steps: [], policyViolations: [] });
    assert.deepEqual(lines, [
        "speed: pulumi up of ci: 30.0 s, engine 21.0 s from its first event to its summary",
        "speed: step apps/v1:Deployment: 2 steps, 21.0 s in all, longest 18.0 s (bridge)",
        "speed: step core/v1:Service: 1 steps, 10.0 s in all, longest 10.0 s (booking)",
    ]);
});
