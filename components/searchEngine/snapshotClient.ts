/**
 * The jobs that talk to the search engine's snapshot API (sections 2.10, 4.5): the bootstrap Job
 * (repository, verify, backup role, lifecycle policy; searchBootstrap.sh), the on-demand snapshot and the
 * restore (backups/scripts/search-snapshot.sh and search-restore.sh), each a suspended CronJob.
 *
 * The bootstrap Job's name carries a hash of everything it sends (script, bodies, image, target): a
 * change of any input is a new Job that runs once, an unchanged stack leaves the finished Job
 * alone, and every call it makes is idempotent, so a re-run (delete the Job and `pulumi up`) is
 * harmless.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import { NEVER, scriptFile } from "../lib/backupCronJob";
import type { AppLabels } from "../lib/labels";
import { allowOnly, podsIn } from "../lib/network";
import { hardenedContainer, hardenedPodSpec, scratch } from "../lib/pod";
import { s3Endpoint } from "./nodeConfig";

type EnvVar = k8s.types.input.core.v1.EnvVar;
type PodSpec = k8s.types.input.core.v1.PodSpec;

/** The bootstrap script (repository, verify, role, lifecycle policy); tested in test/searchEngine.test.ts. */
export const SEARCH_SCRIPT = fs.readFileSync(path.join(__dirname, "searchBootstrap.sh"), "utf8");

/** The repository body of PUT /_snapshot/<repo> (section 2.10). */
export function repositoryBody(cfg: StackConfig): object {
    const snap = cfg.searchEngine.snapshot;
    if (snap.type === "fs") return { type: "fs", settings: { location: snap.fsLocation } };
    return { type: "s3", settings: { bucket: snap.s3.bucket, client: snap.s3.client, endpoint: s3Endpoint(cfg).hostPort, path_style_access: snap.s3.pathStyle } };
}

/** The backup role of POST /_security/role/<role> (section 2.10). */
export function roleBody(cfg: StackConfig): object {
    const r = cfg.searchEngine.snapshot.role;
    return { cluster: [...r.cluster], indices: [{ names: [...r.indexNames], privileges: [...r.indexPrivileges] }] };
}

/** The lifecycle policy of PUT /_slm/policy/<id> (sections 2.10, 8.1). */
export function policyBody(cfg: StackConfig): object {
    const s = cfg.searchEngine.snapshot;
    const p = s.policy;
    return {
        schedule: p.schedule,
        name: p.name,
        repository: s.repository,
        config: { indices: [...p.indices], include_global_state: p.includeGlobalState },
        retention: { expire_after: p.expireAfter, min_count: p.minCount, max_count: p.maxCount },
    };
}

export interface SnapshotClientArgs {
    namespace: string;
    /** The search engine's StatefulSet name: the objects here are <sts>-bootstrap-<hash>, <sts>-snapshot, <sts>-restore. */
    sts: string;
    url: string;
    /** The jobs' labels. */
    labels: AppLabels;
    /** The search engine nodes' pods: the jobs' only peer. */
    nodes: Record<string, string>;
    passwordSecret?: k8s.core.v1.Secret;
}

export function snapshotClient(name: string, cfg: StackConfig, a: SnapshotClientArgs, opts: pulumi.CustomResourceOptions): { bootstrapJobName: string } {
    const s = cfg.searchEngine;
    const snap = s.snapshot;
    const j = s.jobs;
    const ns = a.namespace;
    const bodies: Record<string, string> = {
        "repository.json": JSON.stringify(repositoryBody(cfg)),
        "policy.json": JSON.stringify(policyBody(cfg)),
        ...(s.security.enabled ? { "role.json": JSON.stringify(roleBody(cfg)) } : {}),
    };
    const scripts = new k8s.core.v1.ConfigMap(`${name}-snapshot-scripts`, {
        metadata: { name: `${a.sts}-snapshot-scripts`, namespace: ns, labels: a.labels.labels },
        data: { "bootstrap.sh": SEARCH_SCRIPT, "snapshot.sh": scriptFile("search-snapshot.sh").content, "restore.sh": scriptFile("search-restore.sh").content },
    }, opts);
    const hash = crypto.createHash("sha256").update(JSON.stringify({ SEARCH_SCRIPT, bodies, image: j.image, url: a.url, security: s.security.enabled })).digest("hex").slice(0, 10);
    const bodiesMap = new k8s.core.v1.ConfigMap(`${name}-bootstrap-bodies`, {
        metadata: { name: `${a.sts}-bootstrap-${hash}`, namespace: ns, labels: a.labels.labels },
        data: bodies,
    }, opts);
    const pod = jobPod(cfg, a, scripts, bodiesMap);
    const job = (spec: PodSpec, backoffLimit: number) => ({ backoffLimit, activeDeadlineSeconds: j.activeDeadline, template: { metadata: { labels: a.labels.labels }, spec } });

    const bootstrapJobName = `${a.sts}-bootstrap-${hash}`;
    new k8s.batch.v1.Job(`${name}-bootstrap`, {
        metadata: { name: bootstrapJobName, namespace: ns, labels: a.labels.labels },
        spec: job(pod("bootstrap", [
            { name: "BODIES_DIR", value: "/bodies" },
            { name: "POLICY_ID", value: snap.policy.id },
            ...(s.security.enabled ? [{ name: "ROLE", value: snap.role.name }] : []),
        ], { bodies: true }), j.backoffLimit),
    }, { ...opts, dependsOn: [scripts, bodiesMap], deleteBeforeReplace: true });

    // Their options come from a ConfigMap made for one run.
    const onDemand = (mode: "snapshot" | "restore", how: string) => {
        const optionsConfigMap = `${a.sts}-${mode}-options`;
        return new k8s.batch.v1.CronJob(`${name}-${mode}`, {
            metadata: { name: `${a.sts}-${mode}`, namespace: ns, labels: a.labels.labels, annotations: { "ops/how-to-run": how, "ops/options-configmap": optionsConfigMap } },
            spec: {
                // Never fires: the job runs only when created from this template by hand.
                schedule: NEVER,
                suspend: true,
                concurrencyPolicy: "Forbid",
                successfulJobsHistoryLimit: cfg.backups.job.successfulJobsHistoryLimit,
                failedJobsHistoryLimit: cfg.backups.job.failedJobsHistoryLimit,
                jobTemplate: { metadata: { labels: a.labels.labels }, spec: job(pod(mode, [], { optionsConfigMap }), 0) },
            },
        }, { ...opts, dependsOn: [scripts] });
    };
    onDemand("snapshot", `kubectl -n ${ns} create job --from=cronjob/${a.sts}-snapshot ${a.sts}-snapshot-<suffix>`);
    onDemand("restore", `kubectl -n ${ns} create configmap ${a.sts}-restore-options --from-literal=SNAPSHOT_NAME=<snapshot> --from-literal=RESTORE_INDICES=<indices>; kubectl -n ${ns} create job --from=cronjob/${a.sts}-restore ${a.sts}-restore-<suffix>`);

    allowOnly(`${a.sts}-snapshot-client`, {
        namespace: ns,
        podSelector: a.labels.selector,
        labels: a.labels.labels,
        ingress: [],
        egress: [{ peer: podsIn(ns, a.nodes, "the search engine"), ports: [{ port: s.httpPort }] }],
    }, opts);
    return { bootstrapJobName };
}

/** The pod of one mode (bootstrap, snapshot, restore): its script from the scripts ConfigMap, the API's address and credentials. */
function jobPod(cfg: StackConfig, a: SnapshotClientArgs, scripts: k8s.core.v1.ConfigMap, bodiesMap: k8s.core.v1.ConfigMap) {
    const j = cfg.searchEngine.jobs;
    const env: EnvVar[] = [
        { name: "SEARCH_URL", value: a.url },
        { name: "SNAPSHOT_REPOSITORY", value: cfg.searchEngine.snapshot.repository },
        { name: "WAIT_TIMEOUT", value: String(j.waitTimeout) },
        { name: "HOME", value: "/tmp" },
        ...(a.passwordSecret
            ? [
                { name: "SEARCH_USERNAME", valueFrom: { secretKeyRef: { name: a.passwordSecret.metadata.name, key: "username" } } },
                { name: "SEARCH_PASSWORD", valueFrom: { secretKeyRef: { name: a.passwordSecret.metadata.name, key: "password" } } },
            ]
            : []),
    ];
    const tmp = scratch("tmp", "/tmp", "64Mi");
    return (mode: string, extraEnv: EnvVar[], extra: { bodies?: boolean; optionsConfigMap?: string } = {}): PodSpec =>
        hardenedPodSpec(cfg, {
            restartPolicy: "Never",
            containers: [hardenedContainer({
                name: mode,
                image: j.image,
                command: ["sh", `/scripts/${mode}.sh`],
                env: [...env, ...extraEnv],
                envFrom: extra.optionsConfigMap ? [{ configMapRef: { name: extra.optionsConfigMap, optional: true } }] : undefined,
                resources: j,
                preStopDelay: 0,
                volumeMounts: [
                    { name: "scripts", mountPath: "/scripts", readOnly: true },
                    ...(extra.bodies ? [{ name: "bodies", mountPath: "/bodies", readOnly: true }] : []),
                    tmp.mount,
                ],
            })],
            volumes: [
                { name: "scripts", configMap: { name: scripts.metadata.name, defaultMode: 0o555 } },
                ...(extra.bodies ? [{ name: "bodies", configMap: { name: bodiesMap.metadata.name } }] : []),
                tmp.volume,
            ],
        });
}
