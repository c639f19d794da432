/**
 * Alerts on the nodes and the key store (sections 3.2, 6.4, 7, 8.1): KubeNodeNotReady and
 * KubeletDown, and the key-store metrics the specification names, with thresholds from config.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import { MONITORING_RELEASE } from "./addonValues";
import { environmentLabels } from "../lib/labels";

export interface MonitoringArgs {
    config: StackConfig;
    /** The monitoring Chart (the PrometheusRule CRD and the Prometheus that loads the rules). */
    monitoring: pulumi.Resource;
}

export interface AlertRule {
    alert: string;
    expr: string;
    for: string;
    labels: { severity: "warning" | "critical" };
    annotations: { summary: string; description: string };
}

/** The rule groups, as pure data (tests read the expressions from here and from the render). */
export function alertGroups(cfg: StackConfig): { name: string; rules: AlertRule[] }[] {
    const a = cfg.alerts;
    const quota = cfg.keyStore.quotaBackendBytes;
    const seconds = (ms: number) => String(ms / 1000);
    return [
        {
            name: "nodes",
            rules: [
                {
                    alert: "KubeNodeNotReady",
                    expr: 'kube_node_status_condition{job="kube-state-metrics",condition="Ready",status="true"} == 0',
                    for: a.nodeNotReadyFor,
                    labels: { severity: "warning" },
                    annotations: {
                        summary: "A node is not ready.",
                        description: "{{ $labels.node }} has been NotReady: new pods are not scheduled there and its pods are evicted after 300 s (section 3.2). Causes: section 7.",
                    },
                },
                {
                    alert: "KubeletDown",
                    expr: 'absent(up{job="kubelet",metrics_path="/metrics"} == 1)',
                    for: a.kubeletDownFor,
                    labels: { severity: "critical" },
                    annotations: { summary: "No node agent can be scraped.", description: "Every kubelet target is down or has disappeared from discovery." },
                },
            ],
        },
        {
            name: "key-store",
            rules: [
                {
                    alert: "EtcdWalFsyncSlow",
                    expr: `histogram_quantile(0.99, rate(etcd_disk_wal_fsync_duration_seconds_bucket[5m])) > ${seconds(a.walFsyncP99Ms)}`,
                    for: a.keyStoreFor,
                    labels: { severity: "warning" },
                    annotations: { summary: "Key-store WAL fsync is slow.", description: `99th percentile of etcd_disk_wal_fsync_duration_seconds on {{ $labels.instance }} is above ${a.walFsyncP99Ms} ms.` },
                },
                {
                    alert: "EtcdBackendCommitSlow",
                    expr: `histogram_quantile(0.99, rate(etcd_disk_backend_commit_duration_seconds_bucket[5m])) > ${seconds(a.backendCommitP99Ms)}`,
                    for: a.keyStoreFor,
                    labels: { severity: "warning" },
                    annotations: { summary: "Key-store backend commits are slow.", description: `99th percentile of etcd_disk_backend_commit_duration_seconds on {{ $labels.instance }} is above ${a.backendCommitP99Ms} ms.` },
                },
                {
                    alert: "EtcdFrequentLeaderChanges",
                    expr: `increase(etcd_server_leader_changes_seen_total[1h]) > ${a.leaderChangesPerHour}`,
                    for: a.keyStoreFor,
                    labels: { severity: "warning" },
                    annotations: { summary: "The key store changes leader often.", description: `{{ $labels.instance }} saw more than ${a.leaderChangesPerHour} leader changes in the last hour.` },
                },
                {
                    alert: "EtcdNoLeader",
                    expr: "etcd_server_has_leader == 0",
                    for: a.noLeaderFor,
                    labels: { severity: "critical" },
                    annotations: { summary: "A key-store member has no leader.", description: "{{ $labels.instance }} reports etcd_server_has_leader 0." },
                },
                {
                    alert: "EtcdDatabaseNearQuota",
                    expr: `etcd_mvcc_db_total_size_in_bytes / ${quota} > ${a.dbSizeQuotaPercent / 100}`,
                    for: a.keyStoreFor,
                    labels: { severity: "warning" },
                    annotations: {
                        summary: "The key store approaches its quota.",
                        description: `{{ $labels.instance }} uses more than ${a.dbSizeQuotaPercent}% of quota-backend-bytes (${quota}); at the quota it refuses writes (section 7). Compact and defragment.`,
                    },
                },
            ],
        },
    ];
}

export class Monitoring extends pulumi.ComponentResource {
    constructor(name: string, args: MonitoringArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:Monitoring", name, {}, opts);
        const cfg = args.config;
        new k8s.apiextensions.CustomResource(`${name}-rules`, {
            apiVersion: "monitoring.coreos.com/v1",
            kind: "PrometheusRule",
            metadata: {
                name: "nodes-and-key-store",
                namespace: cfg.addons.monitoring.namespace,
                labels: { ...environmentLabels(cfg), release: MONITORING_RELEASE },
            },
            spec: { groups: alertGroups(cfg) },
        }, { parent: this, dependsOn: [args.monitoring] });
        this.registerOutputs({});
    }
}
