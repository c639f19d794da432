/**
 * Source repositories (section 8.3): mirror clones on a schedule, restored by cloning the mirror.
 * The job runs in the GitOps controller's namespace, where the repository deploy key lives, and
 * reads the repositories over SSH with that key and the pinned known hosts.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { backupScript } from "../backups/scripts";
import type { StackConfig } from "../config";
import { backupCronJob } from "./lib/backupCronJob";
import { appLabels } from "./lib/labels";
import { internet } from "./lib/network";

export interface SourceMirrorArgs {
    config: StackConfig;
}

const APP = "source-mirror";
const KEY_DIR = "/ssh";
const KNOWN_HOSTS_DIR = "/ssh-known-hosts";

/** The repositories mirrored: the GitOps repository and those the config adds. */
export const mirroredRepositories = (cfg: StackConfig) => [...new Set([cfg.gitops.repoUrl, ...cfg.backups.gitMirror.repositories])];

export class SourceMirror extends pulumi.ComponentResource {
    public readonly restoreCommand: string;

    constructor(name: string, args: SourceMirrorArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:backups:SourceMirror", name, {}, opts);
        const cfg = args.config;
        const ns = cfg.addons.argoCd.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "known-hosts", instance: APP });

        const knownHosts = new k8s.core.v1.ConfigMap(`${name}-known-hosts`, {
            metadata: { name: `${APP}-known-hosts`, namespace: ns, labels: l.labels },
            data: { known_hosts: cfg.gitops.knownHosts.join("\n") + "\n" },
        }, child);

        // The deploy key stays in the Argo CD repository Secret; only its private key is mounted.
        const key = {
            volume: { name: "deploy-key", secret: { secretName: cfg.gitops.repositorySecretName, defaultMode: 0o440, items: [{ key: "sshPrivateKey", path: "id" }] } },
            mount: { name: "deploy-key", mountPath: KEY_DIR, readOnly: true },
        };
        const hosts = {
            volume: { name: "known-hosts", configMap: { name: knownHosts.metadata.name } },
            mount: { name: "known-hosts", mountPath: KNOWN_HOSTS_DIR, readOnly: true },
        };
        const ssh = { GIT_SSH_COMMAND: `ssh -i ${KEY_DIR}/id -o IdentitiesOnly=yes -o UserKnownHostsFile=${KNOWN_HOSTS_DIR}/known_hosts -o StrictHostKeyChecking=yes` };
        const egress = [{ peer: internet(), ports: cfg.gitops.gitPorts.map((port) => ({ port })) }];

        const jobs = backupCronJob(APP, cfg, {
            namespace: ns,
            app: APP,
            schedule: cfg.backups.gitMirror.schedule,
            image: cfg.backups.gitImage,
            volumeSize: cfg.backups.gitMirror.volumeSize,
            backup: {
                script: backupScript("git-mirror.sh"),
                env: { ...ssh, REPOSITORIES: mirroredRepositories(cfg).join(" ") },
                volumes: [key, hosts],
                egress,
            },
            restore: {
                script: backupScript("git-restore.sh"),
                env: { ...ssh, RESTORE_REPOSITORY: cfg.gitops.repoUrl, RESTORE_TARGET: "/tmp/restore" },
                volumes: [key, hosts],
                egress,
            },
        }, child);

        this.restoreCommand = jobs.restoreCommand;
        this.registerOutputs({ restoreCommand: this.restoreCommand });
    }
}
