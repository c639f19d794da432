/**
 * How long the engine's steps took, per resource type, from the engine's events (tools/e2e/engine.ts
 * collects them for every pulumi operation of the e2e; the speed step prints them).
 */
import type { EngineEvent } from "@pulumi/pulumi/automation";

/** Engine steps of one resource type: how many, their summed and longest time (seconds). */
export interface StepTimes {
    type: string;
    count: number;
    total: number;
    max: number;
    /** The resource (URN) of the longest step. */
    longest: string;
}

/**
 * Step times from the engine's events, taken when each event arrives here (the events carry whole
 * seconds only): a step runs from its resourcePreEvent to its resOutputsEvent or resOpFailedEvent.
 * Only custom resources' steps are counted.
 */
export class StepClock {
    private readonly started = new Map<string, { type: string; at: number }>();
    private readonly done: { urn: string; type: string; seconds: number }[] = [];
    first?: number;
    summary?: number;

    observe(e: EngineEvent, now = Number(process.hrtime.bigint()) / 1e9): void {
        this.first ??= now;
        if (e.summaryEvent) this.summary = now;
        const pre = e.resourcePreEvent?.metadata;
        // Component resources (the stack, the program's components) span their children's steps: not steps of their own.
        // `custom` is left out of the event when false (sdk/go/common/apitype/events.go, `json:"custom,omitempty"`).
        if (pre && (pre.new ?? pre.old)?.custom === true) this.started.set(pre.urn, { type: pre.type, at: now });
        const end = e.resOutputsEvent?.metadata ?? e.resOpFailedEvent?.metadata;
        const begun = end && this.started.get(end.urn);
        if (end && begun) {
            this.done.push({ urn: end.urn, type: begun.type, seconds: now - begun.at });
            this.started.delete(end.urn);
        }
    }

    byType(): StepTimes[] {
        const m = new Map<string, StepTimes>();
        for (const d of this.done) {
            const t = m.get(d.type) ?? { type: d.type, count: 0, total: 0, max: -1, longest: "" };
            t.count++;
            t.total += d.seconds;
            if (d.seconds > t.max) Object.assign(t, { max: d.seconds, longest: d.urn });
            m.set(d.type, t);
        }
        return [...m.values()].sort((x, y) => y.total - x.total);
    }
}

