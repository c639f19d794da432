/**
 * The workloads of the GitOps children as their pinned charts build them from the values the program
 * writes (components/platform/gitopsChildren.ts): the pod template fields the constraints read
 * (images, pod and container security contexts, labels, volumes, probes, resources), each taken from
 * the value the chart's template puts there (the template lines are named). test/childAdmission.test.ts
 * judges them on every stack; when helm and the chart sources are given, the same test renders the
 * charts with `helm template` and checks this model against the real output.
 */
import type { StackConfig } from "../../config";
import { ChildApp, childApps } from "../../components/platform/gitopsChildren";
import type { K8sObject } from "../../policies/gatekeeper/types";

type V = Record<string, any>;

function deployment(app: ChildApp, name: string, labels: V, podLabels: V, spec: V): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name, namespace: app.namespace, labels },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels: podLabels }, spec } },
    } as K8sObject;
}

/** uptime-kuma 2.21.2 templates/deployment.yaml (useDeploy). */
function uptimeMonitor(app: ChildApp): K8sObject {
    const v = app.values as V;
    const selector = { "app.kubernetes.io/name": app.chart, "app.kubernetes.io/instance": app.releaseName };
    return deployment(app, v.fullnameOverride, selector, { ...selector, ...v.podLabels }, {
        automountServiceAccountToken: false,
        securityContext: v.podSecurityContext,
        containers: [{
            name: app.chart,
            securityContext: v.securityContext,
            image: `${v.image.repository}:${v.image.tag}`,
            env: v.podEnv,
            ports: [{ name: "http", containerPort: v.service.port, protocol: "TCP" }],
            volumeMounts: [{ mountPath: "/app/data", name: "storage" }, ...(v.additionalVolumeMounts ?? [])],
            // values.yaml defaults: livenessProbe exec extra/healthcheck, readinessProbe httpGet / on 3001
            livenessProbe: { exec: { command: ["extra/healthcheck"] } },
            readinessProbe: { httpGet: { path: "/", port: 3001, scheme: "HTTP" } },
            resources: v.resources,
        }],
        volumes: [{ name: "storage", persistentVolumeClaim: { claimName: `${v.fullnameOverride}-pvc` } }, ...(v.additionalVolumes ?? [])],
    });
}

/** open-webui 10.2.1 templates/workload-manager.yaml (workload.kind Deployment). */
function chatUi(app: ChildApp): K8sObject {
    const v = app.values as V;
    const selector = { "app.kubernetes.io/instance": app.releaseName, "app.kubernetes.io/component": app.chart };
    const labels = { "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": app.chart, ...selector };
    const image = `${v.image.repository}:${v.image.tag}`;
    return deployment(app, app.chart, labels, { ...labels, ...v.podLabels }, {
        initContainers: [{
            name: "copy-app-data",
            image,
            command: ["sh", "-c", "cp -R -n /app/backend/data/* /tmp/app-data/"],
            securityContext: v.containerSecurityContext,
            resources: v.copyAppData?.resources,
            volumeMounts: [{ name: "data", mountPath: "/tmp/app-data" }],
        }],
        enableServiceLinks: false,
        automountServiceAccountToken: v.serviceAccount.automountServiceAccountToken,
        serviceAccountName: v.serviceAccount.name,
        securityContext: v.podSecurityContext,
        containers: [{
            name: app.chart,
            image,
            ports: [{ name: "http", containerPort: v.service.containerPort }],
            livenessProbe: v.livenessProbe,
            readinessProbe: v.readinessProbe,
            startupProbe: v.startupProbe,
            resources: v.resources,
            securityContext: v.containerSecurityContext,
            volumeMounts: [{ name: "data", mountPath: "/app/backend/data" }, ...(v.volumeMounts?.container ?? [])],
        }],
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: app.chart } }, ...(v.volumes ?? [])],
    });
}

/** grafana 8.6.4 templates/deployment.yaml and _pod.tpl (persistence off: storage is an emptyDir). */
function dashboard(app: ChildApp): K8sObject {
    const v = app.values as V;
    const selector = { "app.kubernetes.io/name": app.chart, "app.kubernetes.io/instance": app.releaseName };
    const i = v.image;
    return deployment(app, app.releaseName, selector, { ...selector, ...v.podLabels }, {
        automountServiceAccountToken: true,
        serviceAccountName: app.releaseName,
        securityContext: v.securityContext,
        containers: [{
            name: app.chart,
            image: `${i.registry}/${i.repository}:${i.tag}${i.sha ? `@sha256:${i.sha}` : ""}`,
            securityContext: v.containerSecurityContext,
            volumeMounts: [
                { name: "config", mountPath: "/etc/grafana/grafana.ini", subPath: "grafana.ini" },
                { name: "storage", mountPath: "/var/lib/grafana" },
                ...(v.extraEmptyDirMounts ?? []).map((m: V) => ({ name: m.name, mountPath: m.mountPath })),
            ],
            ports: [{ name: "grafana", containerPort: 3000, protocol: "TCP" }],
            // values.yaml defaults: livenessProbe and readinessProbe httpGet /api/health on 3000
            livenessProbe: { httpGet: { path: "/api/health", port: 3000 } },
            readinessProbe: { httpGet: { path: "/api/health", port: 3000 } },
            resources: v.resources,
        }],
        volumes: [
            { name: "config", configMap: { name: app.releaseName } },
            { name: "storage", emptyDir: {} },
            ...(v.extraEmptyDirMounts ?? []).map((m: V) => ({ name: m.name, emptyDir: {} })),
        ],
    });
}

/** Each child's workloads as its chart builds them from the program's values. */
export function childWorkloads(cfg: StackConfig): { app: ChildApp; objects: K8sObject[] }[] {
    const build = { "uptime-monitor": uptimeMonitor, "chat-ui": chatUi, dashboard } as const;
    return childApps(cfg).map((app) => ({ app, objects: [build[app.key](app)] }));
}
