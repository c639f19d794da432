/**
 * The policy pack's part of `npm run bench`: the whole pack (Gatekeeper constraints and spec
 * rules, prod config) over the rendered prod stack in process and through the analyzer gRPC
 * protocol after start-up, and the same over 10,000 synthetic resources, side by side. Reports resources
 * per second (median of several runs) and the ratio to one JSON round trip (stringify + parse)
 * of the same resources.
 */
import { performance } from "perf_hooks";
import { encodeAnalyzeStack, startPack } from "../../policies/pack/grpc";
import { stackResourcesOf } from "../../policies/pack/render";
import type { PackResource } from "../../policies/pack/resources";
import { loadPackConfig, runPack } from "../../policies/pack/run";
import { render } from "../../cli/harness/render";

export interface PackFigure {
    label: string;
    resources: number;
    medianMs: number;
    resourcesPerSecond: number;
    /** Pack time divided by the time of one JSON round trip of the same resources. */
    jsonRoundTrips: number;
}

export interface PolicyPackBench {
    figures: PackFigure[];
    grpcStartupMs: number;
    /** The in-process target: the whole pack over 10,000 resources at >= 10,000 resources/s. */
    meetsTarget: boolean;
    /** gRPC AnalyzeStack time over in-process time, prod stack (target <= 3). */
    grpcRatio?: number;
    /** gRPC resources per second over the synthetic resources (target > 5,000). */
    grpcSyntheticPerSecond?: number;
    meetsGrpcTarget?: boolean;
}

export const TARGET_RESOURCES_PER_SECOND = 10_000;
export const GRPC_TARGET_RATIO = 3;
export const GRPC_TARGET_RESOURCES_PER_SECOND = 5_000;

export function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function timeRuns(runs: number, fn: () => unknown | Promise<unknown>): Promise<number> {
    await fn(); // warm-up: constraint loading, JIT
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
        const t = performance.now();
        await fn();
        times.push(performance.now() - t);
    }
    return median(times);
}

async function figure(label: string, resources: PackResource[], runs: number, evaluate: (rs: PackResource[]) => unknown): Promise<PackFigure> {
    // A fresh list per run: nothing derived from a previous run is reused.
    const medianMs = await timeRuns(runs, () => evaluate([...resources]));
    const jsonMs = await timeRuns(runs, () => JSON.parse(JSON.stringify(resources)));
    return { label, resources: resources.length, medianMs, resourcesPerSecond: (resources.length / medianMs) * 1000, jsonRoundTrips: medianMs / jsonMs };
}

/**
 * `count` resources made of copies of the stack: namespaced objects in per-copy namespaces,
 * cluster-scoped objects and Ingress hosts renamed, so copies do not collide.
 */
export function syntheticResources(base: readonly PackResource[], count: number): PackResource[] {
    const out: PackResource[] = [];
    for (let copy = 0; out.length < count; copy++) {
        for (const r of base) {
            if (out.length >= count) break;
            const props = structuredClone(r.props);
            const meta = props.metadata;
            if (meta && typeof meta === "object") {
                if (meta.namespace) meta.namespace = `${meta.namespace}-b${copy}`;
                else if (meta.name) meta.name = `${meta.name}-b${copy}`;
            }
            for (const rule of props.kind === "Ingress" ? props.spec?.rules ?? [] : []) if (rule.host) rule.host = `b${copy}-${rule.host}`;
            for (const tls of props.kind === "Ingress" ? props.spec?.tls ?? [] : []) tls.hosts = (tls.hosts ?? []).map((h: string) => `b${copy}-${h}`);
            out.push({ type: r.type, urn: `${r.urn}-b${copy}`, name: `${r.name}-b${copy}`, props });
        }
    }
    return out;
}

export async function benchPolicyPack(opts: { runs?: number; synthetic?: number; grpc?: boolean; log?: (line: string) => void } = {}): Promise<PolicyPackBench> {
    const runs = opts.runs ?? 7;
    const log = opts.log ?? console.log;
    const rendered = await render("prod");
    if (rendered.errors.length > 0) throw new Error(`the prod render failed: ${rendered.errors.join("; ")}`);
    const config = loadPackConfig("prod");
    const prod = stackResourcesOf(rendered);
    const inProcess = (rs: PackResource[]) => runPack(rs, config);

    const figures = [await figure("prod stack, in process", prod, runs, inProcess)];
    const synthetic = syntheticResources(prod, opts.synthetic ?? 10_000);
    figures.push(await figure(`${synthetic.length} synthetic resources, in process`, synthetic, Math.max(3, Math.ceil(runs / 2)), inProcess));

    let grpcStartupMs = NaN;
    let encodeMs = NaN;
    const grpcFigures: PackFigure[] = [];
    if (opts.grpc !== false) {
        const pack = await startPack();
        try {
            grpcStartupMs = pack.startupMs;
            await pack.configure(config);
            // The engine (Go) encodes the request; the JavaScript encoding of this client is not the pack's
            // time, so each request is encoded once, before the timed calls, and reported on its own.
            const t = performance.now();
            const prodRequest = encodeAnalyzeStack(prod);
            encodeMs = performance.now() - t;
            grpcFigures.push(await figure("prod stack, gRPC AnalyzeStack (after start-up)", prod, runs, () => pack.analyzeStackEncoded(prodRequest)));
            const syntheticRequest = encodeAnalyzeStack(synthetic);
            grpcFigures.push(await figure(`${synthetic.length} synthetic resources, gRPC AnalyzeStack`, synthetic, Math.max(3, Math.ceil(runs / 2)), () => pack.analyzeStackEncoded(syntheticRequest)));
        } finally {
            pack.stop();
        }
    }
    figures.push(...grpcFigures);

    for (const f of figures) {
        log(`policy pack: ${f.label}: ${f.resources} resources, median ${f.medianMs.toFixed(1)} ms, ${Math.round(f.resourcesPerSecond)} resources/s, ${f.jsonRoundTrips.toFixed(1)}x a JSON round trip`);
    }
    if (!Number.isNaN(grpcStartupMs)) {
        log(`policy pack: gRPC start-up (ts-node compile + server) ${(grpcStartupMs / 1000).toFixed(1)} s; client-side request encoding (not timed above) ${encodeMs.toFixed(1)} ms for the prod stack`);
    }
    const meetsTarget = figures[1].resourcesPerSecond >= TARGET_RESOURCES_PER_SECOND;
    log(`policy pack: in-process target ${TARGET_RESOURCES_PER_SECOND} resources/s on ${figures[1].resources} resources: ${meetsTarget ? "met" : "NOT met"}`);
    let grpcRatio: number | undefined;
    let grpcSyntheticPerSecond: number | undefined;
    let meetsGrpcTarget: boolean | undefined;
    if (grpcFigures.length === 2) {
        grpcRatio = grpcFigures[0].medianMs / figures[0].medianMs;
        grpcSyntheticPerSecond = grpcFigures[1].resourcesPerSecond;
        meetsGrpcTarget = grpcRatio <= GRPC_TARGET_RATIO && grpcSyntheticPerSecond > GRPC_TARGET_RESOURCES_PER_SECOND;
        log(
            `policy pack: gRPC vs in process: prod ${grpcFigures[0].medianMs.toFixed(1)} ms vs ${figures[0].medianMs.toFixed(1)} ms = ${grpcRatio.toFixed(2)}x (target <= ${GRPC_TARGET_RATIO}x); ` +
                `${grpcFigures[1].resources} synthetic ${Math.round(grpcSyntheticPerSecond)} vs ${Math.round(figures[1].resourcesPerSecond)} resources/s (target > ${GRPC_TARGET_RESOURCES_PER_SECOND}): ${meetsGrpcTarget ? "met" : "NOT met"}`,
        );
    }
    return { figures, grpcStartupMs, meetsTarget, grpcRatio, grpcSyntheticPerSecond, meetsGrpcTarget };
}

if (require.main === module) {
    benchPolicyPack().catch((err) => {
        console.error(err);
        process.exitCode = 1;
    });
}
