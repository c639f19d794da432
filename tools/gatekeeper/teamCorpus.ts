/**
 * Issue 43's team-template judge: a corpus of ConstraintTemplates written here in the styles teams
 * publish (tools/gatekeeper/teamCorpus/: Rego v0 and v1, a shared lib, data.inventory lookups of a
 * cluster-scoped custom resource, Rego and CEL, CEL only, a team's copy of a library kind), each
 * with its constraint and realistic objects, mutated like the library's cases and judged by gator
 * (Gatekeeper's engine, its audit view: no operation) and by the pack's team-template path (the
 * Rego compiled by opa into the tool cache, then the plan compiled to JavaScript; CEL by its CEL;
 * the objects judged as unchanged, which the operation model presents as the audit does).
 * Each template names the classes of the issue it exercises; the report gives a line per class.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { buildInventory, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import { parseApiVersion } from "../../policies/gatekeeper/engine/gvk";
import { defaultIsClusterScoped, withDeclaredScopes } from "../../policies/gatekeeper/engine/scope";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { isCelOnly, loadWasmTemplates, type CompiledTemplateRule } from "../../policies/gatekeeper/wasm/rule";
import { parseTemplate } from "../../policies/gatekeeper/wasm/template";
import { packTemplatesWith } from "../../policies/pack/templates";
import type { Group } from "./differential";
import { compileTemplate } from "./wasm";

export const CORPUS_DIR = path.join(__dirname, "teamCorpus");

/** Issue 43's classes, as the report names them. */
export const CLASSES: Record<number, string> = {
    1: "the operation (audit view, no operation)",
    2: "numbers as Go float64 (1e+06, %!d(float64=...)), computed integers as digits",
    3: "a cluster-scoped custom resource in data.inventory.cluster",
    4: "any compiled; concat over a set in OPA's order",
    5: "CEL variables' errors in cel-go's words; namespaceSelector on an undeclared namespace",
    6: "time.parse_rfc3339_ns, time.parse_duration_ns, units.parse_bytes, regex.find_n",
    7: "a CEL-only template",
    8: "a team template with a library kind replaces the library's",
    9: "every template problem at once",
};

const meta = (name: string, namespace?: string, labels?: Record<string, string>, annotations?: Record<string, string>) => ({
    name,
    ...(namespace ? { namespace } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
});

const pod = (name: string, namespace: string, spec: Record<string, unknown>, labels?: Record<string, string>, annotations?: Record<string, string>): K8sObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: meta(name, namespace, labels, annotations),
    spec,
});

const deployment = (name: string, namespace: string, spec: Record<string, unknown>, labels?: Record<string, string>): K8sObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(name, namespace, labels),
    spec: {
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "registry.example/app:1.2" }] } },
        ...spec,
    },
});

const container = (name: string, image: string, memory?: string) => ({ name, image, ...(memory ? { resources: { limits: { memory } } } : {}) });

const constraint = (kind: string, name: string, match: unknown, parameters?: Record<string, unknown>): K8sObject => ({
    apiVersion: "constraints.gatekeeper.sh/v1beta1",
    kind,
    metadata: { name },
    spec: { match, ...(parameters ? { parameters } : {}) },
});

const PODS = { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] };
const DEPLOYMENTS = { kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] };

const namespace = (name: string, labels?: Record<string, string>): K8sObject => ({ apiVersion: "v1", kind: "Namespace", metadata: meta(name, undefined, labels) });

const PROFILE_CRD: K8sObject = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "teamprofiles.example.com" },
    spec: {
        group: "example.com",
        scope: "Cluster",
        names: { kind: "TeamProfile", plural: "teamprofiles", singular: "teamprofile", listKind: "TeamProfileList" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
    },
};
const profile = (name: string, maxContainers: number): K8sObject => ({ apiVersion: "example.com/v1", kind: "TeamProfile", metadata: { name }, spec: { maxContainers } });

interface Case {
    classes: number[];
    constraint: K8sObject;
    objects: K8sObject[];
    inventory?: K8sObject[];
}

/** Each corpus template's constraint, objects (their mutants too) and the classes it exercises. */
const CASES: Record<string, Case> = {
    K8sTeamAuditOwner: {
        classes: [1],
        constraint: constraint("K8sTeamAuditOwner", "owner", { kinds: [{ apiGroups: ["", "apps"], kinds: ["Pod", "Deployment"] }] }),
        objects: [
            pod("a", "shop", { containers: [container("app", "registry.example/a:1")] }),
            pod("b", "shop", { containers: [container("app", "registry.example/b:1")] }, { owner: "team-a" }),
            deployment("c", "shop", { replicas: 2 }),
            deployment("d", "shop", { replicas: 1 }, { owner: "team-b" }),
        ],
    },
    K8sTeamResourceBudget: {
        classes: [2, 6],
        constraint: constraint("K8sTeamResourceBudget", "budget", PODS, { maxBytes: 2000000, maxGraceSeconds: 1000000 }),
        objects: [
            pod("small", "shop", { containers: [container("app", "registry.example/a:1", "1Mi")] }),
            pod("big", "shop", { containers: [container("app", "registry.example/a:1", "3M"), container("side", "registry.example/s:1", "2Gi")], terminationGracePeriodSeconds: 1200000 }),
            pod("slow", "shop", { containers: [container("app", "registry.example/a:1", "1.5Mi")], initContainers: [container("init", "registry.example/i:1", "4000000")], terminationGracePeriodSeconds: 30 }),
            pod("openshift", "shop", { containers: [container("app", "registry.example/a:1")], securityContext: { runAsUser: 1000650000, fsGroup: 1000650000 } }),
        ],
    },
    K8sTeamClusterProfile: {
        classes: [3],
        constraint: constraint("K8sTeamClusterProfile", "profile", PODS),
        objects: [
            pod("p1", "shop", { containers: [container("app", "registry.example/a:1")] }, undefined, { "example.com/profile": "small" }),
            pod("p2", "shop", { containers: [container("app", "registry.example/a:1"), container("b", "registry.example/b:1")] }, undefined, { "example.com/profile": "small" }),
            pod("p3", "shop", { containers: [container("app", "registry.example/a:1")] }, undefined, { "example.com/profile": "huge" }),
            pod("p4", "shop", { containers: [container("app", "registry.example/a:1")] }, undefined, { "example.com/profile": "large" }),
        ],
        inventory: [PROFILE_CRD, profile("small", 1), profile("large", 8)],
    },
    K8sTeamImagePolicy: {
        classes: [4, 6],
        constraint: constraint("K8sTeamImagePolicy", "images", PODS, { allowed: ["registry.example", "ghcr.io"] }),
        objects: [
            pod("i1", "shop", { containers: [container("app", "registry.example/team/app:1.2.3")] }),
            pod("i2", "shop", { containers: [container("app", "docker.io/library/nginx:1.27"), container("b", "quay.io/x/y:2"), container("c", "ghcr.io/o/r:0.0.1")] }),
            pod("i3", "shop", { containers: [container("app", "gcr.io/p/i@sha256:0123")] }),
        ],
    },
    K8sTeamReplicas: {
        classes: [5],
        constraint: constraint("K8sTeamReplicas", "replicas", { ...DEPLOYMENTS, namespaceSelector: { matchLabels: { team: "shop" } } }, { maxReplicas: 3 }),
        objects: [
            deployment("r1", "shop", { replicas: 2 }),
            deployment("r2", "shop", { replicas: 5, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "100%" } } }),
            deployment("r3", "shop", {}),
            deployment("r4", "elsewhere", { replicas: 9 }),
            deployment("r5", "other", { replicas: 1 }),
        ],
        inventory: [namespace("shop", { team: "shop" }), namespace("other", { team: "other" })],
    },
    K8sTeamExpiry: {
        classes: [6],
        constraint: constraint("K8sTeamExpiry", "expiry", PODS, { maxTTL: "7d" }),
        objects: [
            pod("e1", "shop", { containers: [container("app", "registry.example/a:1")] }, undefined, { "example.com/created": "2026-11-01T00:00:00Z", "example.com/expires": "2026-11-05T12:00:00.5+01:00" }),
            pod("e2", "shop", { containers: [container("app", "registry.example/a:1")] }, undefined, { "example.com/created": "2026-11-01T00:00:00Z", "example.com/expires": "2026-12-24T18:30:00.123456789Z" }),
            pod("e3", "shop", { containers: [container("app", "registry.example/a:1")] }, undefined, { "example.com/created": "2026-11-01T00:00:00Z", "example.com/expires": "next week" }),
        ],
    },
    K8sTeamLbCel: {
        classes: [7],
        constraint: constraint("K8sTeamLbCel", "lb-owner", { kinds: [{ apiGroups: [""], kinds: ["Service"] }] }),
        objects: [
            { apiVersion: "v1", kind: "Service", metadata: meta("web", "shop"), spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] } },
            { apiVersion: "v1", kind: "Service", metadata: meta("ssh", "shop", undefined, { "example.com/lb-owner": "ops" }), spec: { type: "LoadBalancer", selector: { app: "ssh" }, ports: [{ port: 22 }] } },
            { apiVersion: "v1", kind: "Service", metadata: meta("db", "shop"), spec: { type: "ClusterIP", selector: { app: "db" }, ports: [{ port: 5432 }] } },
        ],
    },
    K8sRequiredLabels: {
        classes: [8],
        constraint: constraint("K8sRequiredLabels", "team-labels", DEPLOYMENTS, { labels: [{ key: "owner", prefix: "team-" }, { key: "cost-center", prefix: "cc-" }] }),
        objects: [deployment("l1", "shop", {}, { owner: "team-a", "cost-center": "cc-1" }), deployment("l2", "shop", {}, { owner: "ops" }), deployment("l3", "shop", {})],
    },
};

export interface TeamCorpus {
    /** The ConstraintTemplate objects gator loads, by kind. */
    templates: Map<string, K8sObject>;
    registry: TemplateRegistry;
    groups: (perBase: number) => (Group & { kind: string; classes: number[] })[];
    /** Lines the corpus itself gives: the library kind replaced (class 8), every problem at once (class 9). */
    lines: { cls: number; ok: boolean; text: string }[];
}

/** The corpus compiled with opa into the tool cache (by the files' digest), loaded as the pack loads a team's templates. */
export function teamCorpus(opa: string, log: (l: string) => void = () => {}): TeamCorpus {
    const files = readdirSync(CORPUS_DIR).filter((f) => f.endsWith(".yaml")).sort();
    const digest = createHash("sha256");
    for (const f of files) digest.update(f).update(readFileSync(path.join(CORPUS_DIR, f)));
    const cache = path.join(process.env.OPS_E2E_CACHE || path.join(os.homedir(), ".cache", "ops-e2e"), "gatekeeper-team-corpus", digest.digest("hex").slice(0, 16));
    if (!existsSync(path.join(cache, "done"))) {
        rmSync(cache, { recursive: true, force: true });
        mkdirSync(path.join(cache, "wasm"), { recursive: true });
        const t0 = Date.now();
        for (const f of files) {
            copyFileSync(path.join(CORPUS_DIR, f), path.join(cache, f));
            if (!isCelOnly(parseTemplate(readFileSync(path.join(cache, f), "utf8"), f))) compileTemplate(path.join(cache, f), `teamCorpus/${f}`, opa);
        }
        writeFileSync(path.join(cache, "done"), "");
        log(`team: compiled the corpus's ${files.length} templates with opa in ${((Date.now() - t0) / 1000).toFixed(1)} s (${cache})`);
    }
    const { registry, notes } = packTemplatesWith(cache, "teamCorpus");
    const templates = new Map<string, K8sObject>();
    for (const f of files) {
        const t = parse(readFileSync(path.join(CORPUS_DIR, f), "utf8")) as K8sObject;
        templates.set(t.spec.crd.spec.names.kind, t);
    }
    for (const kind of templates.keys()) if (!CASES[kind]) throw new Error(`teamCorpus: no case for ${kind} in tools/gatekeeper/teamCorpus.ts`);
    const lines: TeamCorpus["lines"] = [];
    lines.push({ cls: 8, ok: notes.some((n) => n.includes("replaces the library's template of kind K8sRequiredLabels")), text: notes.join("; ") || "no line says the library's K8sRequiredLabels is replaced" });
    lines.push({ cls: 9, ...allProblemsAtOnce(cache) });
    const groups = (perBase: number) =>
        Object.entries(CASES).map(([kind, c]) => ({
            id: `team ${kind}`,
            kind,
            classes: c.classes,
            constraints: [c.constraint],
            objects: c.objects,
            inventory: c.inventory ?? [],
            objectMutants: perBase,
            constraintMutants: c.constraint.spec?.parameters ? 10 : 0,
            registry,
            native: true,
            audit: true,
        }));
    return { templates, registry, groups, lines };
}

/** Two broken copies beside the corpus: the load names both (class 9). */
function allProblemsAtOnce(cache: string): { ok: boolean; text: string } {
    const dir = path.join(cache, "..", `broken-${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.join(dir, "wasm"), { recursive: true });
    try {
        const expiry = readFileSync(path.join(CORPUS_DIR, "k8steamexpiry.yaml"), "utf8");
        writeFileSync(path.join(dir, "a.yaml"), expiry.replace("maxTTL: {type: string}", "maxTTL: {type: bogus}"));
        writeFileSync(path.join(dir, "b.yaml"), expiry.replace(/k8steamexpiry/g, "k8steamother").replace(/K8sTeamExpiry/g, "K8sTeamOther"));
        try {
            loadWasmTemplates(dir, "broken");
            return { ok: false, text: "two broken templates loaded" };
        } catch (err) {
            const m = (err as Error).message;
            const ok = /^2 team templates cannot be loaded/.test(m) && m.includes("broken/a.yaml") && m.includes("broken/b.yaml");
            return { ok, text: m.split("\n").join(" | ") };
        }
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/**
 * The corpus's Rego templates as npm run gatekeeper:wasm-oracle bases ([template, input, data]):
 * each case's objects under its constraint's parameters, data.inventory of its inventory in
 * Gatekeeper's layout (custom kinds in the scope their CRDs declare). A CEL-only template has no
 * Rego to compare.
 */
export function teamOracleBases(opa: string, log: (l: string) => void = () => {}): [CompiledTemplateRule, unknown, unknown][] {
    const { registry } = teamCorpus(opa, log);
    const bases: [CompiledTemplateRule, unknown, unknown][] = [];
    for (const [kind, c] of Object.entries(CASES)) {
        const rule = registry.get(kind) as CompiledTemplateRule | undefined;
        if (!rule || rule.engine === "cel") continue;
        const scope = withDeclaredScopes(c.inventory ?? [], defaultIsClusterScoped);
        const inventory = [...(c.inventory ?? []), ...c.objects];
        const syncOnly = inventory.map((o) => ({ ...parseApiVersion(o.apiVersion), kind: o.kind! }));
        const data = { inventory: buildInventory(inventory, scope, syncOnly).gatekeeperData!() };
        for (const object of c.objects) {
            const { group, version } = parseApiVersion(object.apiVersion);
            const review = { uid: "", object, oldObject: null, kind: { group, version, kind: object.kind }, operation: "", name: object.metadata?.name, namespace: object.metadata?.namespace, userInfo: {}, namespaceObject: null };
            bases.push([rule, { review, parameters: c.constraint.spec?.parameters ?? {} }, data]);
        }
    }
    return bases;
}
