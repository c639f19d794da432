/**
 * GitOps (sections 1.2, 2.7, 5.8, 8.3): the parent application that reads gitops/<stack>/ from the
 * main branch and creates the child applications (Pulumi never creates a child itself); the
 * repository access (a deploy key generated here plus the configured known hosts); the Secrets
 * the child charts reference by name; the children's network policies; and the SQLite backups
 * of the uptime monitor and the chat UI.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import * as tls from "@pulumi/tls";
import type { StackConfig } from "../../config";
import { backupCronJob, clientImage, scriptFile } from "../lib/backupCronJob";
import { allowOnly, Flow, ingressController, internet, namespace as inNamespace } from "../lib/network";
import { PROMETHEUS_PORT } from "./addonValues";
import { CHILD_POD_LABEL, CHILD_SECRETS, ChildKey, SYNC_OPTIONS } from "./gitopsChildren";
import { environmentLabels } from "../lib/labels";

export interface GitOpsArgs {
    config: StackConfig;
    /** The Argo CD Chart: the Application CRD and the controller that reads the repository Secret. */
    argoCd: pulumi.Resource;
    namespace: (name: string) => pulumi.Resource;
}

/** The label that makes a Secret an Argo CD repository. */
export const REPOSITORY_SECRET_LABEL = { "argocd.argoproj.io/secret-type": "repository" } as const;

export const parentPath = (cfg: StackConfig) => `${cfg.gitops.pathPrefix}/${cfg.stack}`;

export class GitOps extends pulumi.ComponentResource {
    /** Register it as a read-only deploy key of the repository. */
    public readonly deployPublicKey: pulumi.Output<string>;
    public readonly parentName: string;

    constructor(name: string, args: GitOpsArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:GitOps", name, {}, opts);
        const cfg = args.config;
        const g = cfg.gitops;
        const argoNs = cfg.addons.argoCd.namespace;
        const labels = environmentLabels(cfg);
        const child = { parent: this };

        const deployKey = new tls.PrivateKey(`${name}-deploy-key`, { algorithm: "ED25519" }, child);
        const repository = new k8s.core.v1.Secret(`${name}-repository`, {
            metadata: { name: g.repositorySecretName, namespace: argoNs, labels: { ...labels, ...REPOSITORY_SECRET_LABEL } },
            type: "Opaque",
            stringData: { type: "git", url: g.repoUrl, sshPrivateKey: pulumi.secret(deployKey.privateKeyOpenssh) },
        }, { ...child, dependsOn: [args.namespace(argoNs)] });

        const childSecrets = this.childSecrets(name, cfg, labels, args.namespace);
        this.childPolicies(cfg, labels, args.namespace);
        this.sqliteBackups(cfg, args.namespace);

        const parent = new k8s.apiextensions.CustomResource(`${name}-parent`, {
            apiVersion: "argoproj.io/v1alpha1",
            kind: "Application",
            metadata: { name: g.parentName, namespace: argoNs, labels },
            spec: {
                project: g.project,
                source: { repoURL: g.repoUrl, targetRevision: g.branch, path: parentPath(cfg), directory: { recurse: false, include: "*.yaml" } },
                destination: { server: g.destinationServer, namespace: argoNs },
                syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: [...SYNC_OPTIONS] },
            },
        }, { ...child, dependsOn: [args.argoCd, repository, ...childSecrets] });

        this.deployPublicKey = deployKey.publicKeyOpenssh;
        this.parentName = g.parentName;
        this.registerOutputs({ deployPublicKey: this.deployPublicKey, parentName: this.parentName, parentUid: parent.id });
    }

    /** Generated on the cluster, referenced by name in the child charts' values (existingSecret-style). */
    private childSecrets(name: string, cfg: StackConfig, labels: Record<string, string>, namespace: GitOpsArgs["namespace"]): k8s.core.v1.Secret[] {
        const g = cfg.gitops;
        const child = { parent: this };
        const chatKey = new random.RandomPassword(`${name}-chat-ui-secret-key`, { length: g.chatUi.secretKeyLength, special: false }, child);
        const chat = new k8s.core.v1.Secret(`${name}-chat-ui-secret`, {
            metadata: { name: CHILD_SECRETS.chatUi.name, namespace: g.chatUi.namespace, labels },
            type: "Opaque",
            stringData: { [CHILD_SECRETS.chatUi.key]: chatKey.result },
        }, { ...child, dependsOn: [namespace(g.chatUi.namespace)] });
        const dashboardPassword = new random.RandomPassword(`${name}-dashboard-admin-password`, { length: g.dashboard.passwordLength, special: false }, child);
        const dashboard = new k8s.core.v1.Secret(`${name}-dashboard-admin`, {
            metadata: { name: CHILD_SECRETS.dashboard.name, namespace: g.dashboard.namespace, labels },
            type: "Opaque",
            stringData: { [CHILD_SECRETS.dashboard.userKey]: g.dashboard.adminUser, [CHILD_SECRETS.dashboard.passwordKey]: dashboardPassword.result },
        }, { ...child, dependsOn: [namespace(g.dashboard.namespace)] });
        return [chat, dashboard];
    }

    /** Each child's pods: reached through the ingress controller only, talking only to what they need. */
    private childPolicies(cfg: StackConfig, labels: Record<string, string>, namespace: GitOpsArgs["namespace"]) {
        const g = cfg.gitops;
        const fromIngress = (port: number): Flow[] => [{ peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port }] }];
        const httpsPort = (u: string) => Number(new URL(u).port) || 443;
        const policies: { key: ChildKey; ns: string; port: number; egress: Flow[] }[] = [
            // The uptime monitor probes the public hosts of the environment and outside services.
            { key: "uptime-monitor", ns: g.uptimeMonitor.namespace, port: g.uptimeMonitor.port, egress: [{ peer: internet(false), ports: g.uptimeMonitor.probePorts.map((port) => ({ port })) }] },
            { key: "chat-ui", ns: g.chatUi.namespace, port: g.chatUi.port, egress: [{ peer: internet(), ports: [{ port: httpsPort(g.chatUi.modelBaseUrl) }] }] },
            { key: "dashboard", ns: g.dashboard.namespace, port: g.dashboard.port, egress: [{ peer: inNamespace(cfg.addons.monitoring.namespace), ports: [{ port: PROMETHEUS_PORT }] }] },
        ];
        for (const p of policies)
            allowOnly(p.key, { namespace: p.ns, podSelector: { [CHILD_POD_LABEL]: p.key }, labels, ingress: fromIngress(p.port), egress: p.egress }, { parent: this, dependsOn: [namespace(p.ns)] });
    }

    /**
     * The SQLite files of the uptime monitor and the chat UI (section 8.3): a CronJob in the app's
     * namespace mounts the chart's volume (by its claim name) and copies the database with
     * backups/scripts/sqlite-backup.sh. The volume is ReadWriteOnce, so the job runs on the node of
     * the app's pod (pod affinity on the child label).
     */
    private sqliteBackups(cfg: StackConfig, namespace: GitOpsArgs["namespace"]) {
        const g = cfg.gitops;
        const apps = [
            { key: "uptime-monitor" as const, app: g.uptimeMonitor, uploads: undefined },
            { key: "chat-ui" as const, app: g.chatUi, uploads: g.chatUi.uploads },
        ];
        for (const { key, app, uploads } of apps) {
            const mount = "/data";
            const env: Record<string, string> = { SQLITE_DB: `${mount}/${app.database}`, ...(uploads ? { UPLOADS_DIR: `${mount}/${uploads}` } : {}) };
            const data = { volume: { name: "data", persistentVolumeClaim: { claimName: app.pvcName } }, mount: { name: "data", mountPath: mount } };
            backupCronJob(`${key}-backup`, cfg, {
                namespace: app.namespace,
                app: key,
                schedule: app.backup.schedule,
                image: clientImage(cfg, "sqlite"),
                volumeSize: app.backup.volumeSize,
                fsGroup: app.uid,
                backup: { script: scriptFile("sqlite-backup.sh"), env, volumes: [data], egress: [], runAsUser: app.uid, runAsGroup: app.uid },
                restore: { script: scriptFile("sqlite-restore.sh"), env, volumes: [data], egress: [], runAsUser: app.uid, runAsGroup: app.uid },
            }, { parent: this, dependsOn: [namespace(app.namespace)], transformations: [besidePodsOf(key, `${key}-backup`)] });
        }
    }
}

/**
 * Puts the backup CronJob's pods on the node of the child's pod (a ReadWriteOnce volume is
 * mounted on one node at a time). The restore runs while the app is stopped, so it has none.
 */
function besidePodsOf(key: ChildKey, cronJobName: string): pulumi.ResourceTransformation {
    return ({ type, props, opts }) => {
        if (type !== "kubernetes:batch/v1:CronJob" || props.metadata?.name !== cronJobName) return undefined;
        const affinity = {
            podAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { [CHILD_POD_LABEL]: key } }, topologyKey: "kubernetes.io/hostname" }],
            },
        };
        const job = props.spec.jobTemplate;
        const pod = job.spec.template;
        return {
            props: { ...props, spec: { ...props.spec, jobTemplate: { ...job, spec: { ...job.spec, template: { ...pod, spec: { ...pod.spec, affinity } } } } } },
            opts,
        };
    };
}
