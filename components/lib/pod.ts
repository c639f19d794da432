/**
 * Hardened pods and containers: non-root, no privilege escalation, all capabilities dropped,
 * seccomp RuntimeDefault, read-only root file system (writable paths as emptyDir), no
 * service-account token unless asked, a preStop hook so the address leaves the endpoints first.
 */
import * as k8s from "@pulumi/kubernetes";
import type { StackConfig } from "../../config";
import { quantityBytes } from "../../config/schema";

type Container = k8s.types.input.core.v1.Container;
type PodSpec = k8s.types.input.core.v1.PodSpec;
type Probe = k8s.types.input.core.v1.Probe;

export interface Resources {
    requests: { cpu: string; memory: string };
    limits: { cpu: string; memory: string };
}

export const toResources = (r: Resources) => ({
    requests: { cpu: r.requests.cpu, memory: r.requests.memory },
    limits: { cpu: r.limits.cpu, memory: r.limits.memory },
});

export interface ProbeTiming {
    initialDelay?: number;
    period?: number;
    failureThreshold?: number;
    timeout?: number;
}

export function httpProbe(path: string, port: number | string, t: ProbeTiming = {}): Probe {
    return {
        httpGet: { path, port },
        initialDelaySeconds: t.initialDelay,
        periodSeconds: t.period,
        failureThreshold: t.failureThreshold,
        timeoutSeconds: t.timeout,
    };
}

export function tcpProbe(port: number | string, t: ProbeTiming = {}): Probe {
    return { tcpSocket: { port }, initialDelaySeconds: t.initialDelay, periodSeconds: t.period, failureThreshold: t.failureThreshold, timeoutSeconds: t.timeout };
}

export function execProbe(command: string[], t: ProbeTiming = {}): Probe {
    return { exec: { command }, initialDelaySeconds: t.initialDelay, periodSeconds: t.period, failureThreshold: t.failureThreshold, timeoutSeconds: t.timeout };
}

/** The non-root user every container runs as unless the image needs another one. */
export const DEFAULT_UID = 10001;

export interface ContainerArgs extends Omit<Container, "securityContext" | "resources"> {
    resources: Resources;
    /** Defaults to true; set false only for images that must write outside their volumes. */
    readOnlyRootFilesystem?: boolean;
    runAsUser?: number;
    /** The container's group when it must differ from the pod's (an image whose files belong to its own user's group). */
    runAsGroup?: number;
    /** Seconds the preStop hook sleeps before the termination signal; 0 for no hook (jobs). */
    preStopDelay?: number;
}

export function hardenedContainer(args: ContainerArgs): Container {
    const { resources, readOnlyRootFilesystem, runAsUser, runAsGroup, preStopDelay, ...rest } = args;
    return {
        ...rest,
        imagePullPolicy: rest.imagePullPolicy ?? "IfNotPresent",
        resources: toResources(resources),
        lifecycle: preStopDelay ? { preStop: { sleep: { seconds: preStopDelay } } } : rest.lifecycle,
        securityContext: {
            runAsNonRoot: true,
            runAsUser: runAsUser ?? DEFAULT_UID,
            ...(runAsGroup !== undefined ? { runAsGroup } : {}),
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: readOnlyRootFilesystem ?? true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
        },
    };
}

export interface PodArgs extends Omit<PodSpec, "securityContext"> {
    /** Mount a service-account token (withApiToken) only for pods that call the Kubernetes API. */
    callsKubernetesApi?: boolean;
    fsGroup?: number;
    /** Spread replicas across nodes with these pod labels (prod). */
    spreadSelector?: Record<string, string>;
}

export function hardenedPodSpec(cfg: StackConfig, args: PodArgs): PodSpec {
    const { callsKubernetesApi, fsGroup, spreadSelector, ...rest } = args;
    const spread = spreadSelector && cfg.environment.spreadAcrossNodes;
    const sized = withEphemeralStorage(callsKubernetesApi ? withApiToken(rest, cfg.guardrails.apiTokenExpiration) : rest, cfg.guardrails.containerLogStorage);
    return {
        ...sized,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: {
            runAsNonRoot: true,
            runAsUser: DEFAULT_UID,
            runAsGroup: DEFAULT_UID,
            fsGroup: fsGroup ?? DEFAULT_UID,
            seccompProfile: { type: "RuntimeDefault" },
        },
        topologySpreadConstraints: spread
            ? [{ maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: spreadSelector } }]
            : rest.topologySpreadConstraints,
    };
}

/** An emptyDir volume and its mount, for paths a read-only root file system still needs to write. */
export function scratch(name: string, mountPath: string, sizeLimit = "256Mi") {
    return {
        volume: { name, emptyDir: { sizeLimit } },
        mount: { name, mountPath },
    };
}

/** Where a Kubernetes client looks for the in-cluster token, CA and namespace. */
export const SERVICE_ACCOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
const API_ACCESS_VOLUME = "kube-api-access";

/**
 * A pod that calls the Kubernetes API gets its service account's token as an explicit projected
 * volume mounted (read-only) into its app containers only, not by automountServiceAccountToken:
 * the same files the API server's automount injects (token, ca.crt, namespace) at the same path,
 * so clients find them, but declared, with a set lifetime, and never in its init containers.
 */
export function withApiToken<T extends Omit<PodSpec, "securityContext">>(spec: T, expirationSeconds: number): T {
    const volume = {
        name: API_ACCESS_VOLUME,
        projected: {
            sources: [
                { serviceAccountToken: { path: "token", expirationSeconds } },
                { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
            ],
        },
    };
    const mount = { name: API_ACCESS_VOLUME, mountPath: SERVICE_ACCOUNT_PATH, readOnly: true };
    const containers = plain<Container[]>(spec.containers, "containers").map((c) => ({ ...c, volumeMounts: [...plain<object[]>(c.volumeMounts ?? [], `container ${c.name} volumeMounts`), mount] }));
    return { ...spec, containers, volumes: [...plain<object[]>(spec.volumes ?? [], "volumes"), volume] };
}

const MI = 2 ** 20;

/**
 * Every container and init container gets an ephemeral-storage request and limit sized from what
 * it writes to the node's disk. The limit is the most it may write: `perContainer` (its logs) plus
 * the size limits of the disk-backed emptyDir volumes it mounts (a memory-backed one counts against
 * memory); above it the kubelet evicts the pod. The request is what it always writes, its logs:
 * the scratch volumes are mostly empty, and reserving their full size would not fit the ci node's
 * 14 GB disk (npm run explain counts both). A container that sets its own keeps it. An emptyDir
 * mounted without a size limit cannot be sized: the render stops, naming it.
 */
export function withEphemeralStorage<T extends Omit<PodSpec, "securityContext">>(spec: T, perContainer: string): T {
    const volumes = plain<k8s.types.input.core.v1.Volume[]>(spec.volumes ?? [], "volumes");
    const emptyDirBytes = new Map<string, number>();
    for (const v of volumes) {
        const dir = v.emptyDir === undefined ? undefined : plain<{ medium?: string; sizeLimit?: string }>(v.emptyDir, `volume ${v.name}`);
        if (!dir || dir.medium === "Memory") continue;
        if (typeof dir.sizeLimit !== "string") throw new Error(`emptyDir volume ${String(v.name)} has no sizeLimit: a container mounting it cannot be given an ephemeral-storage limit`);
        emptyDirBytes.set(String(v.name), quantityBytes(dir.sizeLimit));
    }
    const size = (c: Container): Container => {
        const r = plain<{ requests?: Record<string, unknown>; limits?: Record<string, unknown> }>(c.resources ?? {}, `container ${c.name} resources`);
        if (r.limits?.["ephemeral-storage"] !== undefined) return c;
        const mounts = plain<{ name: string }[]>(c.volumeMounts ?? [], `container ${c.name} volumeMounts`);
        const mounted = [...new Set(mounts.map((m) => m.name))].reduce((n, name) => n + (emptyDirBytes.get(name) ?? 0), 0);
        const limit = `${Math.ceil((quantityBytes(perContainer) + mounted) / MI)}Mi`;
        return { ...c, resources: { ...r, requests: { ...r.requests, "ephemeral-storage": perContainer }, limits: { ...r.limits, "ephemeral-storage": limit } } };
    };
    const list = (xs: PodSpec["containers"] | undefined, what: string) => (xs === undefined ? undefined : plain<Container[]>(xs, what).map((c) => size(plain<Container>(c, what))));
    return { ...spec, containers: list(spec.containers, "containers"), ...(spec.initContainers !== undefined ? { initContainers: list(spec.initContainers, "initContainers") } : {}) };
}

/** The program builds pod specs from plain values; an Output here would hide the sizes. */
function plain<T>(x: unknown, what: string): T {
    if (x !== null && typeof x === "object" && "apply" in x && typeof (x as { apply: unknown }).apply === "function") {
        throw new Error(`pod spec ${what}: an Output where a plain value is needed to size ephemeral storage`);
    }
    return x as T;
}
