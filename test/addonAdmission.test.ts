/**
 * The add-ons' pods are judged by both enforcement points like every other pod (issue 19): no
 * add-on namespace is excluded by the Gatekeeper Config, each image the program gives a chart is
 * an allowed repository (digest-pinned through the lock in prod), and every exception is a named,
 * scoped constraint listed in docs/admission.md. With OPS_HELM (a helm binary) and
 * OPS_CHART_SOURCES (a folder of <chart>-<version>/ chart sources) the last test renders the pinned
 * add-on charts with the emitted values and judges every object (npm run admission:charts does the
 * same by hand and prints the figures).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type { StackConfig } from "../config";
import { AddonKey, addonSpecs } from "../components/platform/addons";
import { imageParts } from "../components/platform/imageParts";
import { ACME_SOLVER_POD_LABELS } from "../components/platform/issuers";
import { constraintFiles, loadCatalogue } from "../policies/admission/catalogue";
import type { K8sObject } from "../policies/gatekeeper/types";
import { renderChart } from "../tools/admission/charts";
import { judge, POD_KINDS } from "../tools/admission/judge";
import { operatorStatefulSets } from "../tools/admission/operatorPods";
import { offlineStackConfig } from "../tools/genGitops";
import { listStacks, REPO_ROOT } from "../cli/harness/stackConfig";

/** Every image key of one add-on's configuration (…Image or image). */
function addonImages(cfg: StackConfig, key: AddonKey): { key: string; ref: string }[] {
    return Object.entries(cfg.addons[key] as Record<string, unknown>)
        .filter(([k, v]) => (k === "image" || k.endsWith("Image")) && typeof v === "string")
        .map(([k, v]) => ({ key: k, ref: v as string }));
}

/** A pod that meets every rule but the image's own: the image decides the verdict. */
function podWith(cfg: StackConfig, key: AddonKey, image: string, n: number): K8sObject {
    const ns = addonSpecs(cfg)[key].namespace;
    const labels = { "app.kubernetes.io/name": key.toLowerCase(), "app.kubernetes.io/instance": key.toLowerCase(), "app.kubernetes.io/component": "server", "app.kubernetes.io/part-of": cfg.environment.partOf, "app.kubernetes.io/managed-by": cfg.environment.managedBy };
    const probe = { httpGet: { path: "/healthz", port: 8080 } };
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: `${key.toLowerCase()}-${n}`, namespace: ns, labels },
        spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: {
                metadata: { labels },
                spec: {
                    automountServiceAccountToken: false,
                    securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } },
                    containers: [{
                        name: "c",
                        image,
                        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] }, runAsNonRoot: true, runAsUser: 65534 },
                        resources: { requests: { cpu: "10m", memory: "32Mi", "ephemeral-storage": "64Mi" }, limits: { cpu: "100m", memory: "64Mi", "ephemeral-storage": "128Mi" } },
                        livenessProbe: probe,
                        readinessProbe: probe,
                    }],
                },
            },
        },
    } as K8sObject;
}

const ADDONS = (cfg: StackConfig) => Object.keys(addonSpecs(cfg)) as AddonKey[];

test("no add-on namespace is excluded by the Gatekeeper Config of any stack (no blanket exemption)", () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack);
        const excluded = loadCatalogue(constraintFiles(stack, cfg.environment.tier)).excludedNamespaces;
        const addonNamespaces = ADDONS(cfg).map((k) => addonSpecs(cfg)[k].namespace);
        assert.deepEqual(addonNamespaces.filter((ns) => excluded.includes(ns)), [], stack);
    }
});

test("every add-on image runs from an allowed repository, and in prod by its recorded digest, at both enforcement points", () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        const pods = ADDONS(cfg).flatMap((key) => {
            const images = addonImages(cfg, key);
            assert.ok(images.length > 0, `${key} has no image key`);
            return images.map(({ key: k, ref }, i) => ({ what: `${key}.${k}`, ok: podWith(cfg, key, ref, i), elsewhere: podWith(cfg, key, ref.replace(/^[^/]+\//, "registry.invalid/"), i) }));
        });
        assert.deepEqual(judge(stack, cfg.environment.tier, pods.map((p) => p.ok)).denials, [], stack);
        // Not vacuous: the same pods from another registry are refused, each of them.
        const refused = judge(stack, cfg.environment.tier, pods.map((p) => p.elsewhere)).denials.filter((d) => /K8sAllowedRepos\/allowed-repos/.test(d));
        for (const p of pods) assert.ok(refused.some((d) => d.includes(`/${p.elsewhere.metadata!.name}:`)), `${stack} ${p.what} from another registry was admitted`);
    }
    // prod without a recorded digest (as committed here): refused by the two digest rules.
    const tagOnly = offlineStackConfig("prod", "tag");
    const d = judge("prod", "prod", [podWith(tagOnly, "certManager", tagOnly.addons.certManager.controllerImage, 0)]).denials.join("\n");
    assert.match(d, /K8sImageDigests\/image-digests/);
    assert.match(d, /images-pinned-by-digest/);
});

test("every add-on image key reaches its chart's values (tag, and digest where pinned)", () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        for (const key of ADDONS(cfg)) {
            const text = JSON.stringify(addonSpecs(cfg)[key].values);
            for (const { key: k, ref } of addonImages(cfg, key)) {
                const p = imageParts(ref);
                assert.ok(text.includes(JSON.stringify(p.repository)) || text.includes(`"${p.registry}/${p.repository}"`), `${stack} ${key}.${k}: repository ${p.repository}`);
                assert.ok(text.includes(`"${p.tag}`), `${stack} ${key}.${k}: tag ${p.tag}`);
                if (p.sha) assert.ok(text.includes(p.sha), `${stack} ${key}.${k}: digest`);
            }
        }
    }
});

test("every add-on exception is a named constraint scoped to add-on namespaces and listed in docs/admission.md", () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, "docs", "admission.md"), "utf8");
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack);
        const addonNamespaces = new Set(ADDONS(cfg).map((k) => addonSpecs(cfg)[k].namespace));
        const { constraints } = loadCatalogue(constraintFiles(stack, cfg.environment.tier));
        const scoped = constraints.filter((c: any) => (c.match?.namespaces ?? []).some((ns: string) => addonNamespaces.has(ns)));
        assert.ok(scoped.length >= 8, `${stack}: ${scoped.map((c) => c.name).join(", ")}`);
        for (const c of scoped as any[]) {
            assert.deepEqual(c.match.namespaces.filter((ns: string) => !addonNamespaces.has(ns)), [], `${c.name} reaches beyond the add-ons`);
            assert.ok(doc.includes(`\`${c.name}\``), `docs/admission.md does not name ${c.name}`);
        }
        for (const c of constraints as any[]) {
            for (const ns of (c.match?.excludedNamespaces ?? []).filter((n: string) => addonNamespaces.has(n))) {
                assert.ok(doc.includes(`\`${c.name}\``), `docs/admission.md does not name ${c.name} (excludes ${ns})`);
            }
        }
    }
});

/**
 * The http01 solver pod cert-manager v1.16.2 creates in an Ingress's namespace (pkg/issuer/acme/http/
 * pod.go buildDefaultPod, the controller's default solver resources 10m/64Mi and 100m/64Mi, the
 * ClusterIssuer's podTemplate labels merged in).
 */
function acmeSolverPod(cfg: StackConfig, namespace: string, labels: Record<string, string>): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "cm-acme-http-solver-x7k2p", namespace, labels: { "acme.cert-manager.io/http-domain": "1", "acme.cert-manager.io/http-token": "2", "acme.cert-manager.io/http01-solver": "true", ...labels } },
        spec: {
            automountServiceAccountToken: false,
            restartPolicy: "OnFailure",
            securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
            containers: [{
                name: "acmesolver",
                image: cfg.addons.certManager.acmesolverImage,
                resources: { requests: { cpu: "10m", memory: "64Mi" }, limits: { cpu: "100m", memory: "64Mi" } },
                ports: [{ name: "http", containerPort: 8089 }],
                securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            }],
        },
    } as K8sObject;
}

test("cert-manager's ACME http01 solver pods, labelled by the lets-encrypt ClusterIssuer, are admitted in an application namespace", () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        const ns = cfg.gitops.chatUi.namespace;
        assert.deepEqual(judge(stack, cfg.environment.tier, [acmeSolverPod(cfg, ns, ACME_SOLVER_POD_LABELS)]).denials, [], stack);
        // Without the ClusterIssuer's labels the same pod is refused (pod-app-labels; probes where they deny).
        if (cfg.environment.tier === "prod") assert.match(judge(stack, "prod", [acmeSolverPod(cfg, ns, {})]).denials.join("\n"), /pod-app-labels[\s\S]*required-probes|required-probes[\s\S]*pod-app-labels/);
    }
});

const HELM = process.env.OPS_HELM;
const SOURCES = process.env.OPS_CHART_SOURCES;
const skipHelm = !HELM || !SOURCES ? "set OPS_HELM (a helm binary) and OPS_CHART_SOURCES (a folder with <chart>-<version>/ chart sources) to render the pinned add-on charts" : false;

test("helm template of each pinned add-on chart with the emitted values: every pod admitted by both points", { skip: skipHelm }, () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        for (const [key, spec] of Object.entries(addonSpecs(cfg)) as [AddonKey, ReturnType<typeof addonSpecs>[AddonKey]][]) {
            const pin = cfg.addons[key];
            const dir = path.join(SOURCES!, `${pin.chart}-${pin.version}`);
            assert.ok(fs.existsSync(path.join(dir, "Chart.yaml")), `${dir}/Chart.yaml`);
            const rendered = renderChart(HELM!, dir, { releaseName: spec.release, namespace: spec.namespace, values: spec.values });
            const objects = [...rendered, ...operatorStatefulSets(rendered)];
            if (key === "monitoring") assert.deepEqual(objects.filter((o) => o.kind === "StatefulSet").map((o) => o.metadata!.name).sort(), ["alertmanager-kube-prometheus-stack-alertmanager", "prometheus-kube-prometheus-stack-prometheus"]);
            const j = judge(stack, cfg.environment.tier, objects);
            assert.ok(j.podObjects > 0, `${stack} ${pin.chart}`);
            assert.deepEqual(j.denials.filter((d) => POD_KINDS.has(d.split(" ")[0])), [], `${stack} ${pin.chart}`);
            assert.deepEqual(j.denials, [], `${stack} ${pin.chart}`);
        }
    }
});
