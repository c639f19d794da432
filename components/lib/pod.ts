/**
 * Hardened pods and containers: non-root, no privilege escalation, all capabilities dropped,
 * seccomp RuntimeDefault, read-only root file system (writable paths as emptyDir), no
 * service-account token unless asked, a preStop hook so the address leaves the endpoints first.
 */
import * as k8s from "@pulumi/kubernetes";
import type { StackConfig } from "../../config";

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
    /** Seconds the preStop hook sleeps before the termination signal; 0 for no hook (jobs). */
    preStopDelay?: number;
}

export function hardenedContainer(args: ContainerArgs): Container {
    const { resources, readOnlyRootFilesystem, runAsUser, preStopDelay, ...rest } = args;
    return {
        ...rest,
        imagePullPolicy: rest.imagePullPolicy ?? "IfNotPresent",
        resources: toResources(resources),
        lifecycle: preStopDelay ? { preStop: { sleep: { seconds: preStopDelay } } } : rest.lifecycle,
        securityContext: {
            runAsNonRoot: true,
            runAsUser: runAsUser ?? DEFAULT_UID,
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: readOnlyRootFilesystem ?? true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
        },
    };
}

export interface PodArgs extends Omit<PodSpec, "securityContext"> {
    /** Mount a service-account token only for pods that call the Kubernetes API. */
    callsKubernetesApi?: boolean;
    fsGroup?: number;
    /** Spread replicas across nodes with these pod labels (prod). */
    spreadSelector?: Record<string, string>;
}

export function hardenedPodSpec(cfg: StackConfig, args: PodArgs): PodSpec {
    const { callsKubernetesApi, fsGroup, spreadSelector, ...rest } = args;
    const spread = spreadSelector && cfg.environment.spreadAcrossNodes;
    return {
        ...rest,
        automountServiceAccountToken: callsKubernetesApi ?? false,
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
