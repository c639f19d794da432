/**
 * The resources a stack policy sees, as plain data: Pulumi's AnalyzeStack resources (props behind
 * an unknown-checking proxy), the offline render's registered resources, or test fixtures.
 */
import type { K8sObject } from "../gatekeeper/types";

/** The part of @pulumi/policy's PolicyResource the pack reads. */
export interface PackResource {
    type: string;
    urn: string;
    name: string;
    props: Record<string, any>;
}

// @pulumi/pulumi runtime/rpc.js: a secret value is { [SECRET_SIG]: SECRET_VALUE, value } in registered inputs.
export const SECRET_SIG = "4dabf18193072939515e22adb298388d";
export const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";

export const isSecretValue = (v: unknown): v is { value: unknown } => typeof v === "object" && v !== null && SECRET_SIG in (v as object);

/** Removes secret marks, keeping the values (for schema checks and policies, never for output). */
export function unwrapSecrets(value: unknown): unknown {
    if (isSecretValue(value)) return unwrapSecrets(value.value);
    if (Array.isArray(value)) return value.map(unwrapSecrets);
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrapSecrets(v)]));
    return value;
}

/** What a value unknown during preview (e.g. a generated password) reads as. */
export const UNKNOWN_DURING_PREVIEW = "<unknown during preview>";

// @pulumi/policy's sentinels for unknown values (policy/proxy.js); a preview hands them to policies.
export const UNKNOWN_SENTINELS: ReadonlySet<string> = new Set([
    "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
    "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
    "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
    "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
    "030794c1-ac77-496b-92df-f27374a8bd58",
    "e48ece36-62e2-4504-bad9-02848725956a",
    "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
]);

/**
 * Props objects known to hold no unknown value (the pack's AnalyzeStack decoder saw none), which
 * plainProps hands back without walking them.
 */
const withoutUnknowns = new WeakSet<object>();
export function markWithoutUnknowns(props: object): void {
    withoutUnknowns.add(props);
}

/** The proxy key @pulumi/policy answers with the proxied object itself. */
const PROXY_TARGET = "__getSpecialProxyTarget";

/**
 * Props as plain JSON: unwraps the policy SDK's proxy (which throws on any unknown value, which
 * would abort a whole stack policy) and replaces unknown values with UNKNOWN_DURING_PREVIEW.
 * Objects without unknown values are returned as they are, not copied; plain props (in process)
 * are used as they are.
 */
export function plainProps(props: unknown): Record<string, any> {
    if (!props || typeof props !== "object") return {};
    const target = (props as Record<string, unknown>)[PROXY_TARGET];
    // Only the policy server hands over proxies, and only its props can hold unknown sentinels.
    if (!target || typeof target !== "object") return props as Record<string, any>;
    if (withoutUnknowns.has(target)) return target as Record<string, any>;
    return replaceUnknowns(target) as Record<string, any>;
}

function replaceUnknowns(value: unknown): unknown {
    if (typeof value === "string") return UNKNOWN_SENTINELS.has(value) ? UNKNOWN_DURING_PREVIEW : value;
    if (Array.isArray(value)) {
        let out: unknown[] | undefined;
        value.forEach((v, i) => {
            const r = replaceUnknowns(v);
            if (r !== v) (out ??= value.slice())[i] = r;
        });
        return out ?? value;
    }
    if (value && typeof value === "object") {
        let out: Record<string, unknown> | undefined;
        for (const key of Object.keys(value)) {
            const v = (value as Record<string, unknown>)[key];
            const r = replaceUnknowns(v);
            if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[key] = r;
        }
        return out ?? value;
    }
    return value;
}

/** The Pulumi type token of a Kubernetes object: kubernetes:<group|core>/<version>:<Kind>. */
export function pulumiTypeOf(obj: K8sObject): string {
    const apiVersion = obj.apiVersion ?? "v1";
    const module = apiVersion.includes("/") ? apiVersion : `core/${apiVersion}`;
    return `kubernetes:${module}:${obj.kind}`;
}

/** A PackResource for a Kubernetes object (fixtures, synthetic stacks). */
export function resourceOf(obj: K8sObject, project = "ops", stack = "test"): PackResource {
    const type = pulumiTypeOf(obj);
    const name = [obj.metadata?.namespace, obj.metadata?.name].filter(Boolean).join("-") || String(obj.kind);
    return { type, name, urn: `urn:pulumi:${stack}::${project}::${type}::${name}`, props: obj };
}
