/**
 * The child applications of the parent application (sections 2.7, 8.3): the uptime monitor, the
 * chat UI and the dashboard, each a packaged chart at a pinned version. These objects are not
 * created by Pulumi: `npm run gen:gitops` writes them to gitops/<stack>/, the parent application
 * reads that folder from the main branch, and test/gitops.test.ts fails when the committed files
 * differ from what this module generates. The values name Secrets that Pulumi creates on the
 * cluster (components/platform/gitops.ts); no secret value is ever part of them.
 */
import { portableYaml } from "../lib/yaml";
import type { StackConfig } from "../../config";
import { hostOf, ingressAnnotations, tlsSecretName } from "../lib/ingress";
import { prometheusUrl } from "./addonValues";
import { imageParts } from "./imageParts";

export { imageParts };

export type ChildKey = "uptime-monitor" | "chat-ui" | "dashboard";

/** The pod label every child chart puts on its pods (podLabels), for NetworkPolicies and backup co-location. */
export const CHILD_POD_LABEL = "ops.environment/child-app";

/** Secrets created by Pulumi and referenced by name in the charts' values. */
export const CHILD_SECRETS = {
    chatUi: { name: "open-webui-secret", key: "webui-secret-key" },
    dashboard: { name: "grafana-admin", userKey: "admin-user", passwordKey: "admin-password" },
} as const;

/** The capabilities the uptime monitor's entrypoint needs as root (and the constraint sets allow it, in its namespace only). */
export const UPTIME_MONITOR_CAPABILITIES = ["CHOWN", "SETUID", "SETGID"] as const;

export const SYNC_OPTIONS = ["CreateNamespace=true", "ServerSideApply=true", "ApplyOutOfSyncOnly=false", "RespectIgnoreDifferences=true"] as const;

export interface ChildApp {
    key: ChildKey;
    namespace: string;
    releaseName: string;
    repo: string;
    chart: string;
    version: string;
    values: Record<string, unknown>;
    /** Fields Argo CD leaves as they are on the cluster (with RespectIgnoreDifferences, also when syncing). */
    ignoreDifferences?: Array<{ group: string; kind: string; name: string; jsonPointers: string[] }>;
}

const podLabels = (key: ChildKey) => ({ [CHILD_POD_LABEL]: key });
/** The selector labels every pod carries (pod-app-labels): the charts set name and instance, these add the component. */
const withComponent = (key: ChildKey) => ({ ...podLabels(key), "app.kubernetes.io/component": key });


/** A writable /tmp for containers whose root filesystem is read-only. */
const TMP = { name: "tmp", mountPath: "/tmp" };
const resources = (r: { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } }) => ({ requests: { ...r.requests }, limits: { ...r.limits } });

function uptimeMonitor(cfg: StackConfig): ChildApp {
    const u = cfg.gitops.uptimeMonitor;
    const host = hostOf(cfg, u.hostLabel);
    return {
        key: "uptime-monitor",
        namespace: u.namespace,
        releaseName: u.releaseName,
        repo: u.repo,
        chart: u.chart,
        version: u.version,
        values: {
            fullnameOverride: u.releaseName,
            useDeploy: true,
            // SQLite: one writer; the chart's Deployment has a fixed replicas: 1 (no value for it),
            // and the old pod stops before the new one starts.
            strategy: { type: "Recreate" },
            image: { repository: `${imageParts(u.image).registry}/${imageParts(u.image).repository}`, tag: imageParts(u.image).tagWithDigest },
            podLabels: withComponent("uptime-monitor"),
            // The image (1.23.13, extra/entrypoint.sh) starts as root, runs `chown -hRc $PUID:$PGID /app/data`
            // and then `setpriv --reuid $PUID --regid $PGID --clear-groups node server/server.js`: as a
            // non-root user the chown of the volume's root-owned folder fails and --clear-groups needs
            // CAP_SETGID, so the pod crash-loops, and the chart has no value to replace the entrypoint. So
            // the entrypoint runs as root with only the three capabilities it uses (chown, setuid, setgid),
            // and the server itself runs as u.uid (PUID/PGID, the image's documented variables); setpriv's
            // change of user drops every capability. The constraint sets allow exactly this in the
            // uptime namespace only (policies/constraints/*.yaml, docs/admission.md "Exceptions").
            podSecurityContext: { runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, fsGroup: u.uid, seccompProfile: { type: "RuntimeDefault" } },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"], add: [...UPTIME_MONITOR_CAPABILITIES] } },
            podEnv: [
                { name: "PUID", value: String(u.uid) },
                { name: "PGID", value: String(u.uid) },
            ],
            additionalVolumes: [{ name: TMP.name, emptyDir: {} }],
            additionalVolumeMounts: [TMP],
            resources: resources(u),
            volume: { enabled: true, accessMode: "ReadWriteOnce", size: u.volumeSize },
            service: { port: u.port },
            ingress: {
                enabled: true,
                className: cfg.ingress.className,
                // null removes the chart's default server-snippets annotation (snippets are off in the controller).
                annotations: { ...ingressAnnotations(cfg), "nginx.ingress.kubernetes.io/server-snippets": null },
                hosts: [{ host, paths: [{ path: "/", pathType: "Prefix" }] }],
                tls: [{ secretName: tlsSecretName(host), hosts: [host] }],
            },
        },
        // Chart 2.21.2 copies podLabels into the Deployment's selector, which is immutable: a
        // cluster that runs the uptime monitor with other podLabels (this program's before the
        // component label, for one) would refuse the sync ("field is immutable"). Argo CD keeps the
        // live selector instead (RespectIgnoreDifferences is among the sync options): the pods get
        // the new labels, the old selector still matches them (labels are only ever added). A
        // fresh cluster gets the chart's selector.
        ignoreDifferences: [{ group: "apps", kind: "Deployment", name: u.releaseName, jsonPointers: ["/spec/selector"] }],
    };
}

function chatUi(cfg: StackConfig): ChildApp {
    const c = cfg.gitops.chatUi;
    const host = hostOf(cfg, c.hostLabel);
    return {
        key: "chat-ui",
        namespace: c.namespace,
        releaseName: c.releaseName,
        repo: c.repo,
        chart: c.chart,
        version: c.version,
        values: {
            workload: { kind: "Deployment" },
            replicaCount: 1,
            strategy: { type: "Recreate" },
            ollama: { enabled: false },
            pipelines: { enabled: false },
            tika: { enabled: false },
            websocket: { enabled: false, redis: { enabled: false } },
            openaiBaseApiUrl: c.modelBaseUrl,
            // The chart's default key is a literal; users add their own connections in the UI.
            openaiApiKey: "",
            extraEnvVars: [{ name: "WEBUI_SECRET_KEY", valueFrom: { secretKeyRef: { name: CHILD_SECRETS.chatUi.name, key: CHILD_SECRETS.chatUi.key } } }],
            persistence: { enabled: true, provider: "local", size: c.volumeSize, accessModes: ["ReadWriteOnce"] },
            image: { repository: `${imageParts(c.image).registry}/${imageParts(c.image).repository}`, tag: imageParts(c.image).tagWithDigest, pullPolicy: "IfNotPresent" },
            podLabels: podLabels("chat-ui"),
            // Non-root from the start: the data volume is the pod's fsGroup; the image's own files are
            // only read (open_webui/config.py copies its static files under try/except).
            podSecurityContext: { runAsNonRoot: true, runAsUser: c.uid, runAsGroup: c.uid, fsGroup: c.uid, fsGroupChangePolicy: "OnRootMismatch", seccompProfile: { type: "RuntimeDefault" } },
            containerSecurityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
            copyAppData: { resources: resources(c) },
            volumes: [{ name: TMP.name, emptyDir: {} }],
            volumeMounts: { container: [TMP] },
            // The application's /health (no database call), on the chart's named port.
            livenessProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 3 },
            readinessProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
            startupProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 60 },
            resources: resources(c),
            service: { containerPort: c.port },
            serviceAccount: { enable: true, create: true, name: c.releaseName, automountServiceAccountToken: false },
            ingress: { enabled: true, class: cfg.ingress.className, annotations: ingressAnnotations(cfg), host, tls: true, existingSecret: tlsSecretName(host) },
        },
    };
}

function dashboard(cfg: StackConfig): ChildApp {
    const d = cfg.gitops.dashboard;
    const host = hostOf(cfg, d.hostLabel);
    const s = CHILD_SECRETS.dashboard;
    return {
        key: "dashboard",
        namespace: d.namespace,
        releaseName: d.releaseName,
        repo: d.repo,
        chart: d.chart,
        version: d.version,
        values: {
            replicas: 1,
            image: { registry: imageParts(d.image).registry, repository: imageParts(d.image).repository, tag: imageParts(d.image).tag, sha: imageParts(d.image).sha },
            // The chart's helm test pod (bats) is never run by Argo CD: not rendered at all.
            testFramework: { enabled: false },
            admin: { existingSecret: s.name, userKey: s.userKey, passwordKey: s.passwordKey },
            podLabels: withComponent("dashboard"),
            securityContext: { runAsNonRoot: true, runAsUser: d.uid, runAsGroup: d.uid, fsGroup: d.uid, seccompProfile: { type: "RuntimeDefault" } },
            containerSecurityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] }, seccompProfile: { type: "RuntimeDefault" } },
            extraEmptyDirMounts: [TMP],
            resources: resources(d),
            persistence: { enabled: false },
            datasources: {
                "datasources.yaml": { apiVersion: 1, datasources: [{ name: "Prometheus", type: "prometheus", access: "proxy", url: prometheusUrl(cfg), isDefault: true }] },
            },
            ingress: {
                enabled: true,
                ingressClassName: cfg.ingress.className,
                annotations: ingressAnnotations(cfg),
                hosts: [host],
                path: "/",
                tls: [{ secretName: tlsSecretName(host), hosts: [host] }],
            },
        },
    };
}

export function childApps(cfg: StackConfig): ChildApp[] {
    return [uptimeMonitor(cfg), chatUi(cfg), dashboard(cfg)];
}

/** The Application object of one child (argoproj.io/v1alpha1), values as a YAML string. */
export function childApplication(cfg: StackConfig, app: ChildApp) {
    const g = cfg.gitops;
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: {
            name: app.key,
            namespace: cfg.addons.argoCd.namespace,
            labels: { "app.kubernetes.io/part-of": cfg.environment.partOf, "app.kubernetes.io/managed-by": g.parentName },
        },
        spec: {
            project: g.project,
            source: {
                repoURL: app.repo,
                chart: app.chart,
                targetRevision: app.version,
                helm: { releaseName: app.releaseName, values: portableYaml(app.values) },
            },
            destination: { server: g.destinationServer, namespace: app.namespace },
            // Never the charts' checksum/config and checksum/secret annotations: they are what restarts
            // a pod when its config changes (e.g. the dashboard's datasources); ignoring them under
            // RespectIgnoreDifferences would keep the old checksum and the old pods.
            ...(app.ignoreDifferences ? { ignoreDifferences: app.ignoreDifferences.map((d) => ({ ...d, namespace: app.namespace })) } : {}),
            syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: [...SYNC_OPTIONS] },
        },
    };
}

/** The generated files of one stack: gitops/<stack>/<child>.yaml -> content. */
export function childManifestFiles(cfg: StackConfig): Record<string, string> {
    const header = "# Generated by `npm run gen:gitops` from the Pulumi program's configuration; do not edit.\n";
    return Object.fromEntries(
        childApps(cfg).map((app) => [`${app.key}.yaml`, header + portableYaml(childApplication(cfg, app))]),
    );
}
