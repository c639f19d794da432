import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { gatekeeperPolicies } from "./gatekeeper";
import { resourceOf } from "./resources";
import { runPack } from "./run";
import { deployment } from "./testing";

// One constraint per enforcement action, and a Config excluding kube-system (section 2.5, section 7).
const CONSTRAINTS = `
apiVersion: config.gatekeeper.sh/v1alpha1
kind: Config
metadata: { name: config, namespace: gatekeeper-system }
spec:
  match:
    - excludedNamespaces: [kube-system]
      processes: ["*"]
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sAllowedRepos
metadata: { name: allowed-repos }
spec:
  enforcementAction: deny
  match: { kinds: [{ apiGroups: [""], kinds: [Pod] }] }
  parameters: { repos: [registry.example.com/] }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sDisallowedTags
metadata: { name: no-latest }
spec:
  enforcementAction: warn
  match: { kinds: [{ apiGroups: [""], kinds: [Pod] }] }
  parameters: { tags: [latest] }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sBlockNodePort
metadata: { name: node-ports }
spec:
  enforcementAction: dryrun
  match: { kinds: [{ apiGroups: [""], kinds: [Service] }] }
`;

function setup() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gk-"));
    const constraints = path.join(dir, "constraints.yaml");
    fs.writeFileSync(constraints, CONSTRAINTS);
    const audit = path.join(dir, "audit.jsonl");
    const config = {
        "gatekeeper-deny": { constraints },
        "gatekeeper-warn": { constraints },
        "gatekeeper-dryrun": { constraints, auditLog: audit },
    };
    return { dir, config, audit };
}

function objects(): K8sObject[] {
    const app = deployment("web");
    app.spec.template.spec.containers[0].image = "docker.io/library/nginx:latest";
    const svc: K8sObject = { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "apps" }, spec: { type: "NodePort", selector: { a: "b" }, ports: [{ port: 80, nodePort: 30080 }] } };
    return [app, svc];
}

test("deny is mandatory, warn advisory, dryrun advisory prefixed dryrun: and appended to the audit log", () => {
    const { dir, config, audit } = setup();
    try {
        const resources = objects().map((o) => resourceOf(o));
        const result = runPack(resources, config, gatekeeperPolicies);
        const by = (policy: string) => result.violations.filter((v) => v.policy === policy);
        assert.equal(by("gatekeeper-deny").length, 1);
        assert.equal(by("gatekeeper-deny")[0].enforcementLevel, "mandatory");
        assert.match(by("gatekeeper-deny")[0].message, /^K8sAllowedRepos\/allowed-repos: \[Implied by Deployment\/web\] container <main> has an invalid image repo/);
        assert.equal(by("gatekeeper-deny")[0].urn, resources[0].urn);
        assert.equal(by("gatekeeper-warn").length, 1);
        assert.equal(by("gatekeeper-warn")[0].enforcementLevel, "advisory");
        assert.equal(by("gatekeeper-dryrun").length, 1);
        assert.equal(by("gatekeeper-dryrun")[0].enforcementLevel, "advisory");
        assert.match(by("gatekeeper-dryrun")[0].message, /^dryrun: K8sBlockNodePort\/node-ports: /);
        const lines = fs.readFileSync(audit, "utf8").trim().split("\n").map((l) => JSON.parse(l));
        assert.equal(lines.length, 1);
        assert.equal(lines[0].constraint, "K8sBlockNodePort/node-ports");
        assert.equal(lines[0].urn, resources[1].urn);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("namespaces excluded by the Config object are not evaluated", () => {
    const { dir, config } = setup();
    try {
        const excluded = objects().map((o) => ({ ...o, metadata: { ...o.metadata, namespace: "kube-system" } }));
        assert.deepEqual(runPack(excluded.map((o) => resourceOf(o)), config, gatekeeperPolicies).violations, []);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("the pack config can lower an action's level or disable it; a missing constraint file is an error naming the setting", () => {
    const { dir, config } = setup();
    try {
        const resources = objects().map((o) => resourceOf(o));
        const lowered = runPack(resources, { ...config, "gatekeeper-deny": { ...config["gatekeeper-deny"], enforcementLevel: "advisory" } }, gatekeeperPolicies);
        assert.equal(lowered.violations.filter((v) => v.enforcementLevel === "mandatory").length, 0);
        const disabled = runPack(resources, { ...config, "gatekeeper-warn": { enforcementLevel: "disabled" } }, gatekeeperPolicies);
        assert.equal(disabled.violations.some((v) => v.policy === "gatekeeper-warn"), false);
        assert.throws(() => runPack(resources, {}, gatekeeperPolicies), /must name the constraint file/);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
