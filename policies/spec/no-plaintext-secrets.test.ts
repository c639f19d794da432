import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { stackView } from "../pack/stack";
import { deployment, messagesOf } from "../pack/testing";
import { rule } from "./no-plaintext-secrets";

const ADMIN_KEY = `admin-${"3f".repeat(32)}`;

function stack(): K8sObject[] {
    const app = deployment("agent");
    app.spec.template.spec.containers[0].env = [
        { name: "GATEWAY_ADMIN_API_KEY", valueFrom: { secretKeyRef: { name: "gateway-admin", key: "admin-api-key" } } },
        { name: "OPENCODE_CONFIG", value: "/etc/agent-server/config.json" },
        { name: "PASSWORD_LENGTH", value: "16" },
    ];
    app.metadata!.annotations = { "checksum/config": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" };
    const config: K8sObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "agent-server-config", namespace: "apps" },
        data: {
            "config.json": JSON.stringify({ provider: { bridge: { options: { apiKey: "{env:MODEL_API_KEY}", baseURL: "http://bridge:8080/v1" } } } }),
            known_hosts: "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
            "settings.yaml": "auth:\n  existingSecret: db-credentials\n  passwordSecret: db-credentials\n",
        },
    };
    const secret: K8sObject = { apiVersion: "v1", kind: "Secret", metadata: { name: "gateway-admin", namespace: "apps" }, stringData: { "admin-api-key": ADMIN_KEY } };
    return [app, config, secret];
}

test("references to Secrets, env substitution, public host keys and checksums pass; Secrets hold secrets", () => {
    assert.deepEqual(messagesOf(rule, stack()), []);
});

test("key-shaped strings in a ConfigMap fail: sk- keys, AKIA ids, private-key PEM blocks, admin keys, high-entropy tokens", () => {
    const samples = [
        "sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB",
        "aws: AKIAIOSFODNN7EXAMPLE",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow==\n-----END RSA PRIVATE KEY-----",
        `key=${ADMIN_KEY}`,
        "token ghp7Qm2Zx9Lk4Rt8Vb1Nc6Hd3Fs5Jw0Pa2Ye",
    ];
    for (const sample of samples) {
        const [app, config] = stack();
        config.data.notes = sample;
        assert.equal(messagesOf(rule, [app, config]).length, 1, sample);
    }
});

test("password-named keys with literal values fail in structured and key=value ConfigMap data", () => {
    const [app, config] = stack();
    config.data["config.json"] = JSON.stringify({ db: { password: "hunter2" } });
    config.data["app.env"] = "DB_USER=app\nDB_PASSWORD=hunter2\n";
    const messages = messagesOf(rule, [app, config]);
    assert.equal(messages.length, 2);
    assert.match(messages.join("\n"), /config\.json\.db\.password/);
    assert.match(messages.join("\n"), /sets DB_PASSWORD to a literal/);
});

test("an env literal under a password-named variable or holding a key fails; valueFrom passes", () => {
    const [app] = stack();
    app.spec.template.spec.containers[0].env.push({ name: "AGENT_SERVER_PASSWORD", value: "s3cret" });
    app.spec.template.spec.containers[0].env.push({ name: "UPSTREAM", value: "sk-live-0123456789abcdefghijKLMN" });
    const messages = messagesOf(rule, [app]);
    assert.equal(messages.length, 2);
    assert.match(messages[0], /env AGENT_SERVER_PASSWORD is a literal/);
});

test("a secret in an annotation fails", () => {
    const [app] = stack();
    app.spec.template.metadata.annotations = { "ops/admin-key": ADMIN_KEY };
    assert.match(messagesOf(rule, [app])[0], /gateway admin key/);
});

test("Helm chart values with a literal password fail", () => {
    const chart = { type: "kubernetes:helm.sh/v4:Chart", urn: "urn:pulumi:test::ops::kubernetes:helm.sh/v4:Chart::redis", name: "redis", props: { chart: "redis", values: { auth: { password: "changeme", existingSecret: "redis-auth" } } } };
    const findings = rule.check(stackView([chart]));
    assert.equal(findings.length, 1);
    assert.match(findings[0].message, /values\.auth\.password/);
    chart.props.values.auth.password = "";
    assert.equal(rule.check(stackView([chart])).length, 0);
});

test("Application helm.values strings are parsed; children in the repository are scanned too", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "gitops-"));
    fs.mkdirSync(path.join(root, "gitops", "prod"), { recursive: true });
    const parent: K8sObject = { apiVersion: "argoproj.io/v1alpha1", kind: "Application", metadata: { name: "ops-apps", namespace: "argocd" }, spec: { project: "default", source: { repoURL: "git@example.com:o/r.git", path: "gitops/prod", targetRevision: "main" } } };
    const child = `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: uptime\n  namespace: argocd\nspec:\n  source:\n    chart: uptime-kuma\n    targetRevision: 2.19.0\n    helm:\n      values: |\n        admin:\n          password: hunter2\n`;
    fs.writeFileSync(path.join(root, "gitops", "prod", "uptime.yaml"), child);
    const messages = messagesOf(rule, [parent], { repositoryRoot: root });
    assert.equal(messages.length, 1);
    assert.match(messages[0], /uptime \(gitops\/prod\/uptime.yaml\): helm.values.admin.password/);
    fs.rmSync(root, { recursive: true, force: true });
});
