/**
 * A data store's provisioning Job: what the store needs before its clients use it (databases and
 * roles, buckets and users), made by a script that is idempotent, so it is safe on a fresh volume,
 * on a running store and after a restore. `provisioningJob(name, cfg, args, opts)` creates, in the
 * store's namespace:
 *   - ConfigMap <app>-provision       provision.sh and the files it reads, mounted at /provision
 *   - Job <app>-provision             runs `sh /provision/provision.sh`, restarted on failure up to
 *                                     its backoff limit; a replacement keeps the name, so the old
 *                                     Job is deleted first (deleteBeforeReplace)
 *   - NetworkPolicy <app>-provision   no ingress; egress only to args.egress (and DNS)
 * The pod is hardened like the backup jobs' (client-tool image, cfg.backups.job resources, an
 * emptyDir /tmp); credentials reach the script as env from Secrets (secretKeyRef) in args.env.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import { appLabels } from "./labels";
import { allowOnly, Flow } from "./network";
import { hardenedContainer, hardenedPodSpec, scratch } from "./pod";
import type { StoreClient } from "./statefulService";

export interface ProvisioningJobArgs {
    namespace: string;
    /** The store's application name (the app.kubernetes.io/name label); the objects are <app>-provision. */
    app: string;
    /** The client-tool image that runs provision.sh. */
    image: string;
    /** provision.sh and the files it reads (file name -> text). */
    files: { "provision.sh": string } & Record<string, string>;
    env: k8s.types.input.core.v1.EnvVar[];
    /** Whom the job talks to (the store); DNS is always allowed. */
    egress: Flow[];
    /** What the store's NetworkPolicy calls the job. */
    description: string;
}

export interface ProvisioningJob {
    job: k8s.batch.v1.Job;
    /** The job as a client of the store (storeIngress). */
    client: StoreClient;
}

const DIR = "/provision";

/** opts: the parent; the Job waits for its ConfigMap. */
export function provisioningJob(name: string, cfg: StackConfig, args: ProvisioningJobArgs, opts: pulumi.CustomResourceOptions): ProvisioningJob {
    const ns = args.namespace;
    const k8sName = `${args.app}-provision`;
    const l = appLabels(cfg, { name: args.app, component: "provision", instance: k8sName });
    const files = new k8s.core.v1.ConfigMap(name, { metadata: { name: k8sName, namespace: ns, labels: l.labels }, data: args.files }, opts);
    const tmp = scratch("tmp", "/tmp");
    const job = new k8s.batch.v1.Job(name, {
        metadata: { name: k8sName, namespace: ns, labels: l.labels },
        spec: {
            backoffLimit: cfg.backups.job.backoffLimit + 4,
            activeDeadlineSeconds: cfg.backups.job.activeDeadline,
            template: {
                metadata: { labels: l.labels },
                spec: hardenedPodSpec(cfg, {
                    restartPolicy: "OnFailure",
                    containers: [hardenedContainer({
                        name: "provision",
                        image: args.image,
                        command: ["sh", `${DIR}/provision.sh`],
                        env: args.env,
                        resources: cfg.backups.job,
                        volumeMounts: [{ name: "provision", mountPath: DIR, readOnly: true }, tmp.mount],
                    })],
                    volumes: [{ name: "provision", configMap: { name: files.metadata.name, defaultMode: 0o555 } }, tmp.volume],
                }),
            },
        },
    }, { ...opts, deleteBeforeReplace: true, dependsOn: [files] });
    allowOnly(k8sName, { namespace: ns, podSelector: l.selector, labels: l.labels, ingress: [], egress: args.egress }, opts);
    return { job, client: { namespace: ns, selector: l.selector, description: args.description } };
}
