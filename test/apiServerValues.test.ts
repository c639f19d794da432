/**
 * Values the Kubernetes API server refuses, or that break the environment, are refused by the
 * configuration before anything is created, each naming the key and the form expected (issue 30):
 * names and namespaces (DNS-1123 labels and subdomains), label values, Ingress hosts, CronJob time
 * zones (the IANA names the API server's time.LoadLocation knows), quantities, schedules that
 * never fire, system namespaces as the stack's own, and values the products cannot take.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig, mapSource, schema } from "../config";
import * as s from "../config/schema";
import { isDns1123Label, isDns1123Subdomain, isIanaTimeZone, isLabelValue } from "../config/kubernetesNames";
import { cronLongestGapDays, parseCron } from "../config/cron";

const VALID: Record<string, unknown> = Object.fromEntries(
    s.flatten(schema).filter(({ field }) => field.secret && !field.optional).map(({ key, field }) => [key, field.placeholder]),
);
VALID.gatewayToolAdminApiKey = `admin-${"ab12".repeat(16)}`;

function problems(values: Record<string, unknown>): string {
    try {
        loadConfig(mapSource("ops", "test", { ...VALID, ...values }));
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
        return err.message;
    }
    assert.fail(`the configuration was accepted: ${JSON.stringify(values)}`);
}

test("the defaults pass", () => {
    assert.doesNotThrow(() => loadConfig(mapSource("ops", "test", VALID)));
});

test("the Kubernetes name rules (apimachinery validation: IsDNS1123Label, IsDNS1123Subdomain, IsValidLabelValue)", () => {
    for (const ok of ["a", "agent", "a-1", "0a", "a".repeat(63)]) assert.ok(isDns1123Label(ok), ok);
    for (const bad of ["", "Agent_NS", "-a", "a-", "a.b", "a b", "a".repeat(64)]) assert.ok(!isDns1123Label(bad), bad);
    for (const ok of ["fast-ssd", "gp3.encrypted", "a".repeat(253)]) assert.ok(isDns1123Subdomain(ok), ok);
    for (const bad of ["fast ssd", "Fast", "a..b", ".a", "a".repeat(254)]) assert.ok(!isDns1123Subdomain(bad), bad);
    for (const ok of ["", "ops-environment", "Pulumi", "a_b.c", "a".repeat(63)]) assert.ok(isLabelValue(ok), ok);
    for (const bad of ["ops environment", "-a", "a/b", "a".repeat(64)]) assert.ok(!isLabelValue(bad), bad);
});

test("time zones: the names of the IANA database, spelled as it spells them", () => {
    for (const ok of ["Etc/UTC", "UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Asia/Shanghai", "Etc/GMT+5"]) assert.ok(isIanaTimeZone(ok), ok);
    for (const bad of ["Mars/Olympus", "utc", "europe/berlin", "Local", "", "Europe/../UTC", "Europe/Berlin/"]) assert.ok(!isIanaTimeZone(bad), bad);
    assert.match(problems({ backupsTimeZone: "Mars/Olympus" }), /ops:backupsTimeZone: got "Mars\/Olympus"; expected an IANA time zone name/);
    assert.match(problems({ backupsTimeZone: "utc" }), /ops:backupsTimeZone: got "utc"/);
});

const cronFires = (s: string) => {
    const p = parseCron(s);
    return typeof p !== "string" && cronLongestGapDays(p) !== undefined;
};

test("schedules that never fire are refused (those that fire in some years only: test/cron.test.ts)", () => {
    assert.ok(!cronFires("0 3 31 2 *"));
    assert.ok(!cronFires("0 3 30 2 *"));
    assert.ok(!cronFires("0 3 31 4,6,9,11 *"));
    for (const ok of ["0 3 29 2 *", "0 3 31 * *", "0 3 31 2 MON", "0 3 30-31 1-2 *", "0 3 * * *", "*/5 * 31 */2 *"]) assert.ok(cronFires(ok), ok);
    assert.match(problems({ backupsPostgresSchedule: "0 3 31 2 *" }), /ops:backupsPostgresSchedule: "0 3 31 2 \*" never fires/);
    assert.match(problems({ gitopsChatUiBackupSchedule: "0 4 30 2 *" }), /ops:gitopsChatUiBackupSchedule: "0 4 30 2 \*" never fires/);
});

test("namespaces: DNS labels, never the cluster's own, never an add-on's for an application", () => {
    assert.match(problems({ agentServerNamespace: "Agent_NS" }), /ops:agentServerNamespace: got "Agent_NS"; expected a namespace name \(a DNS-1123 label/);
    for (const key of ["agentServerNamespace", "dataStoresNamespace", "bookingNamespace", "searchEngineNamespace", "columnStoreNamespace", "workflowNamespace", "ingressControllerNamespace", "addonsMonitoringNamespace", "gitopsChatUiNamespace"]) {
        for (const ns of ["kube-system", "kube-public", "kube-node-lease", "default", "gatekeeper-system"])
            assert.match(problems({ [key]: ns }), new RegExp(`ops:${key}: "${ns}" is a namespace of the cluster itself`), `${key}=${ns}`);
    }
    assert.match(problems({ bookingNamespace: "monitoring" }), /ops:bookingNamespace: "monitoring" is the namespace of an add-on \(addonsMonitoringNamespace\)/);
    assert.match(problems({ gatewayToolNamespace: "Gateway" }), /ops:gatewayToolNamespace: got "Gateway"/);
    // The workflow tool's service account may patch deployments in these: never the cluster's own.
    assert.match(problems({ workflowRbacNamespaces: ["argocd", "kube-system"] }), /ops:workflowRbacNamespaces: "kube-system" is a namespace of the cluster itself/);
    assert.match(problems({ columnStoreNamespace: "c".repeat(64) }), /ops:columnStoreNamespace/);
});

test("label values and object names", () => {
    assert.match(problems({ environmentPartOf: "ops environment" }), /ops:environmentPartOf: got "ops environment"; expected a label value/);
    assert.match(problems({ environmentManagedBy: "x".repeat(64) }), /ops:environmentManagedBy/);
    for (const key of ["agentServerStorageClass", "backupsStorageClass", "bookingStorageClass", "dataStoresStorageClass", "searchEngineStorageClass", "searchEngineSnapshotFsStorageClass", "columnStoreStorageClass"])
        assert.match(problems({ [key]: "fast ssd" }), new RegExp(`ops:${key}: got "fast ssd"; expected a storage class name \\(a DNS-1123 subdomain`), key);
    assert.match(problems({ ingressClassName: "Nginx" }), /ops:ingressClassName: got "Nginx"/);
    assert.match(problems({ searchEngineSnapshotS3CredentialsSecret: "S3 keys" }), /ops:searchEngineSnapshotS3CredentialsSecret/);
});

test("hosts: lower-case DNS labels of at most 63 characters, the whole name at most 253", () => {
    for (const key of ["agentServerHostLabel", "bridgeHost", "bookingHost", "searchEngineHost", "workflowEditorHost", "workflowWebhookHost"]) {
        assert.match(problems({ [key]: "Booking" }), new RegExp(`ops:${key}: got "Booking"; expected a lower-case host label`), key);
        assert.match(problems({ [key]: "b".repeat(64) }), new RegExp(`ops:${key}`), key);
    }
    // The agent server's second instance is <label>-<port>: that too must be a DNS label.
    assert.match(problems({ agentServerHostLabel: "a".repeat(60) }), /ops:agentServerHostLabel: .*a-4001.* is longer than 63 characters/);
    assert.match(problems({ environmentDomain: `${"d".repeat(60)}.${"e".repeat(60)}.${"f".repeat(60)}.${"g".repeat(60)}` }), /ops:environmentDomain: .*longer than 253 characters/);
    assert.match(problems({ gatewayToolAllowedHost: "Gateway.local", gatewayToolBaseUrl: "http://Gateway.local:3000" }), /ops:gatewayToolAllowedHost/);
});

test("quantities: limits above zero", () => {
    assert.match(problems({ agentServerLimitsCpu: "0", agentServerRequestsCpu: "0" }), /ops:agentServerLimitsCpu: 0 is no cpu at all; expected a cpu limit above 0/);
    assert.match(problems({ bookingLimitsMemory: "0Mi", bookingRequestsMemory: "0" }), /ops:bookingLimitsMemory: 0Mi is no memory at all; expected a memory limit above 0/);
    assert.match(problems({ workflowWorkerLimitsCpu: "0m", workflowWorkerRequestsCpu: "0m" }), /ops:workflowWorkerLimitsCpu/);
    assert.match(problems({ addonsMonitoringContainerLimitsMemory: "0", addonsMonitoringContainerRequestsMemory: "0" }), /ops:addonsMonitoringContainerLimitsMemory: 0 is no memory at all/);
    assert.match(problems({ guardrailsLimitRangeDefaultCpu: "0", guardrailsLimitRangeDefaultRequestCpu: "0" }), /ops:guardrailsLimitRangeDefaultCpu: 0 is no cpu at all/);
    assert.match(problems({ guardrailsQuotaLimitsMemory: "0" }), /ops:guardrailsQuotaLimitsMemory/);
});

test("product values: a basic-auth user without ':', an IP bind address, SSH mirror URLs", () => {
    assert.match(problems({ agentServerUsername: "ops:admin" }), /ops:agentServerUsername: got "ops:admin"; expected a basic-authentication user name without ':'/);
    assert.match(problems({ agentServerBindAddress: "localhost" }), /ops:agentServerBindAddress: got "localhost"; expected an IP address/);
    assert.doesNotThrow(() => loadConfig(mapSource("ops", "test", { ...VALID, agentServerBindAddress: "::" })));
    assert.match(problems({ backupsGitMirrorRepositories: ["not a url"] }), /ops:backupsGitMirrorRepositories: item 0: got "not a url"; expected a list of .*SSH/);
    assert.match(problems({ backupsGitMirrorRepositories: ["https://github.com/org/repo.git"] }), /ops:backupsGitMirrorRepositories: item 0/);
    assert.match(problems({ gitopsRepoUrl: "https://github.com/org/repo.git" }), /ops:gitopsRepoUrl/);
    assert.doesNotThrow(() => loadConfig(mapSource("ops", "test", { ...VALID, backupsGitMirrorRepositories: ["git@github.com:org/a.git", "ssh://git@git.example.com:2222/org/b.git"] })));
});

test("an autoscaler minimum of 0 (the API server refuses it without the alpha gate HPAScaleToZero), CIDRs with octets above 255, a StatefulSet name ending in '-'", () => {
    assert.match(problems({ bridgeMinReplicas: 0 }), /ops:bridgeMinReplicas: 0 .*HorizontalPodAutoscaler.*; expected at least 1/);
    assert.match(problems({ workflowWorkerReplicas: 0 }), /ops:workflowWorkerReplicas: 0 .*HorizontalPodAutoscaler/);
    assert.match(problems({ guardrailsApiServerCidr: "999.1.1.1/32" }), /ops:guardrailsApiServerCidr/);
    assert.match(problems({ guardrailsApiServerCidr: "10.0.0.0/33" }), /ops:guardrailsApiServerCidr/);
    assert.match(problems({ columnStoreClientCidrs: ["10.0.0.256/8"] }), /ops:columnStoreClientCidrs/);
    assert.match(problems({ searchEngineName: "search-" }), /ops:searchEngineName/);
    assert.doesNotThrow(() => loadConfig(mapSource("ops", "test", { ...VALID, guardrailsApiServerCidr: "10.96.0.1/32", columnStoreClientCidrs: ["192.168.0.0/16"] })));
});
