/**
 * Checks Kubernetes objects against the API schemas of the kubernetes-models packages (core,
 * Argo CD, cert-manager, autoscaler, prometheus-operator): wrong types, missing required fields,
 * and unknown fields. The packages' validators ignore unknown fields, so each object is walked
 * through a proxy that records which properties the validator asked for: an own property of a
 * schema-described object that the validator never asked for is unknown to the schema.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";

type Validate = (data: unknown) => void;

const PACKAGES: Record<string, string> = {
    "argoproj.io": "@kubernetes-models/argo-cd",
    "cert-manager.io": "@kubernetes-models/cert-manager",
    "acme.cert-manager.io": "@kubernetes-models/cert-manager",
    "autoscaling.k8s.io": "@kubernetes-models/autoscaler",
    "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};

const cache = new Map<string, Validate | undefined>();

function validatorFor(apiVersion: string, kind: string): Validate | undefined {
    const key = `${apiVersion}/${kind}`;
    if (cache.has(key)) return cache.get(key);
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    const pkg = PACKAGES[group] ?? "kubernetes-models";
    const modulePath = group ? `${pkg}/${group}/${version}/${kind}` : `${pkg}/${version}/${kind}`;
    let validate: Validate | undefined;
    try {
        // eslint-disable-next-line @typescript-eslint/no-var-requires
        const mod = require(modulePath);
        const Model = mod[kind];
        // Call the schema check on the object itself: the model's constructor would deep-copy it
        // and so read every property, which hides unknown fields from the tracking proxy.
        validate = (data) => Model.prototype.validate.call(data);
    } catch {
        validate = undefined;
    }
    cache.set(key, validate);
    return validate;
}

export interface SchemaProblem {
    object: string;
    problem: string;
}

export function identity(o: K8sObject): string {
    return `${o.apiVersion}/${o.kind} ${o.metadata?.namespace ? o.metadata.namespace + "/" : ""}${o.metadata?.name ?? "<no name>"}`;
}

export function validateObject(o: K8sObject): SchemaProblem[] {
    const id = identity(o);
    if (!o.apiVersion || !o.kind) return [{ object: id, problem: "apiVersion and kind are required" }];
    if (!o.metadata?.name) return [{ object: id, problem: "metadata.name is required (the program names every object)" }];
    const validate = validatorFor(o.apiVersion, o.kind);
    if (!validate) return [{ object: id, problem: `no schema known for ${o.apiVersion} ${o.kind}` }];
    const problems: SchemaProblem[] = [];
    const { proxy, unknownFields } = tracked(o);
    try {
        validate(proxy);
    } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        for (const line of text.split("\n").filter(Boolean)) problems.push({ object: id, problem: line.replace(/^data\//, "") });
    }
    for (const f of unknownFields()) problems.push({ object: id, problem: `${f}: unknown field` });
    return problems;
}

/** Wraps an object so that every property read is recorded, per object path. */
function tracked(root: unknown) {
    const reads = new Map<object, Set<PropertyKey>>();
    const paths = new Map<object, string>();
    const proxies = new WeakMap<object, object>();
    const wrap = (value: unknown, p: string): unknown => {
        if (!value || typeof value !== "object") return value;
        const target = value as object;
        if (proxies.has(target)) return proxies.get(target);
        reads.set(target, new Set());
        paths.set(target, p);
        const proxy = new Proxy(target, {
            get(t, prop, receiver) {
                reads.get(t)!.add(prop);
                const v = Reflect.get(t, prop, receiver);
                return typeof prop === "string" ? wrap(v, Array.isArray(t) ? `${p}[${prop}]` : `${p}${p ? "." : ""}${prop}`) : v;
            },
        });
        proxies.set(target, proxy);
        return proxy;
    };
    const proxy = wrap(root, "");
    const unknownFields = () => {
        const out: string[] = [];
        for (const [target, props] of reads) {
            if (Array.isArray(target)) continue;
            // An object whose properties the validator never looked at is free-form to the schema.
            const looked = [...props].filter((k) => typeof k === "string" && k !== "then" && k !== "toJSON" && k !== "constructor");
            if (looked.length === 0) continue;
            for (const key of Object.keys(target)) {
                if (!props.has(key)) out.push(`${paths.get(target)}${paths.get(target) ? "." : ""}${key}`);
            }
        }
        return out.sort();
    };
    return { proxy, unknownFields };
}
