/**
 * Program tests render through the same harness as `npm run render`. Each (stack, overrides) is
 * rendered once per test run, not once per test file: renders are kept in memory per process and
 * on disk for the other test processes (./renderCache.ts, keyed by a hash of the inputs).
 */
import type { RenderResult } from "../cli/harness/render";
import type { K8sObject } from "../policies/gatekeeper/types";
import { cachedRender } from "./renderCache";

const cache = new Map<string, Promise<RenderResult>>();

/** Renders a stack (optionally with config overrides, keys without the project prefix). Renders run one at a time. */
export function renderStack(stack: string, overrides: Record<string, unknown> = {}): Promise<RenderResult> {
    const key = `${stack}:${JSON.stringify(overrides)}`;
    if (!cache.has(key)) {
        const previous = [...cache.values()].pop() ?? Promise.resolve(undefined);
        cache.set(key, previous.catch(() => undefined).then(() => cachedRender({ stack, overrides, render: async () => (await import("../cli/harness/render")).render(stack, overrides) })));
    }
    return cache.get(key)!;
}

// Tests read deep into objects; `any` keeps them readable, the assertions do the checking.
export function find(r: RenderResult, kind: string, name: string, namespace?: string): any {
    const o = r.objects.find((x) => x.kind === kind && x.metadata?.name === name && (namespace === undefined || x.metadata?.namespace === namespace));
    if (!o) throw new Error(`no ${kind} ${namespace ? namespace + "/" : ""}${name} in the ${r.stack} render; have: ${r.objects.filter((x) => x.kind === kind).map((x) => x.metadata?.name).join(", ")}`);
    return o;
}

export const all = (r: RenderResult, kind: string) => r.objects.filter((o) => o.kind === kind);

/** Every container of a workload's pod template (Deployment, StatefulSet, DaemonSet, Job, CronJob). */
export function podSpecOf(o: K8sObject): any {
    return o.kind === "CronJob" ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec;
}

export function containersOf(o: K8sObject): any[] {
    const spec = podSpecOf(o);
    return [...(spec.initContainers ?? []), ...spec.containers];
}

/** What decides a container's QoS class: its cpu and memory (ephemeral-storage does not). */
export function qosPart(r: { cpu?: unknown; memory?: unknown } | undefined): { cpu: unknown; memory: unknown } {
    return { cpu: r?.cpu, memory: r?.memory };
}
