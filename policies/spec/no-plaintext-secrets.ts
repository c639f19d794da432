/**
 * Section 1.2 and 5: secrets are created on the cluster only and never committed; the admin key,
 * passwords and API keys live in Secrets. So no secret in plain text in a ConfigMap, an env
 * literal (value:), an annotation, a Helm chart's values or an Application's helm values
 * (the stack's and the children's in the repository).
 */
import { parse as parseYaml } from "yaml";
import { gitopsSchema, reportTarget, reviewedApplications, sourcesOf, type GitopsConfig } from "../pack/gitops";
import { specRule, type Finding } from "../pack/rule";
import { isLiteralSecretValue, MAY_NAME_SECRET, scanValue, secretShapeIn, type SecretHit } from "../pack/secretPatterns";
import { containersOf, describe, podTemplateOf, type StackView } from "../pack/stack";

const HELM_RESOURCE = /^kubernetes:helm\.sh\/v\d+:(Chart|Release)$/;
/** key=value / key: value lines whose key may name a secret (one pass over the text). */
const KEY_VALUE_LINES = /^[ \t]*(?:export[ \t]+)?["']?([A-Za-z0-9_.-]*(?:pass|pwd|token|secret|key|credential)[A-Za-z0-9_.-]*)["']?[ \t]*[:=][ \t]*["']?([^"'#\s]+)["']?[ \t]*$/gim;

function parseStructured(key: string, text: string): unknown {
    const trimmed = text.trim();
    try {
        if (trimmed.startsWith("{") || trimmed.startsWith("[")) return JSON.parse(trimmed);
        if (/\.ya?ml$/.test(key)) return parseYaml(text);
    } catch {
        return undefined;
    }
    return undefined;
}

/** A ConfigMap value: key shapes in the text, then password-named keys in its structure or its key=value lines. */
function scanConfigText(key: string, text: string): SecretHit[] {
    const shape = secretShapeIn(text);
    if (shape) return [{ path: key, reason: `holds ${shape}` }];
    if (isLiteralSecretValue(key, text)) return [{ path: key, reason: "is a password-named key with a literal value" }];
    if (!MAY_NAME_SECRET.test(text)) return [];
    const structured = parseStructured(key, text);
    if (structured !== undefined && typeof structured === "object") return scanValue(structured, key);
    return [...text.matchAll(KEY_VALUE_LINES)]
        .filter((m) => isLiteralSecretValue(m[1], m[2]))
        .map((m) => ({ path: `${key}:${text.slice(0, m.index).split("\n").length}`, reason: `sets ${m[1]} to a literal value` }));
}

function scanAnnotations(annotations: Record<string, unknown> | undefined, path: string): SecretHit[] {
    return Object.entries(annotations ?? {}).flatMap(([k, v]) => {
        if (typeof v !== "string") return [];
        const shape = secretShapeIn(v);
        if (shape) return [{ path: `${path}.${k}`, reason: `holds ${shape}` }];
        return isLiteralSecretValue(k, v) ? [{ path: `${path}.${k}`, reason: "is a password-named annotation with a literal value" }] : [];
    });
}

function scanHelmSource(helm: any): SecretHit[] {
    if (!helm || typeof helm !== "object") return [];
    const hits: SecretHit[] = [];
    if (typeof helm.values === "string") {
        let values: unknown;
        try {
            values = parseYaml(helm.values);
        } catch {
            values = helm.values;
        }
        hits.push(...scanValue(values, "helm.values"));
    }
    if (helm.valuesObject) hits.push(...scanValue(helm.valuesObject, "helm.valuesObject"));
    for (const p of Array.isArray(helm.parameters) ? helm.parameters : []) {
        const shape = typeof p?.value === "string" ? secretShapeIn(p.value) : undefined;
        if (shape) hits.push({ path: `helm.parameters.${p.name}`, reason: `holds ${shape}` });
        else if (isLiteralSecretValue(String(p?.name ?? "").split(".").pop()!, p?.value)) hits.push({ path: `helm.parameters.${p.name}`, reason: "is a password-named parameter with a literal value" });
    }
    return hits;
}

const format = (what: string, hits: SecretHit[]) => hits.map((h) => `${what}: ${h.path} ${h.reason}; keep it in a Secret and reference it`);

export const rule = specRule<GitopsConfig>({
    name: "no-plaintext-secrets",
    description: "No secret in plain text in a ConfigMap, an env literal, an annotation, Helm chart values or an Application's helm values: no key-shaped strings (sk-..., AKIA..., private-key PEM blocks, admin- + 64 hex, high-entropy tokens) and no literal under a password-named key (sections 1.2, 5)",
    configSchema: { properties: { ...gitopsSchema } },
    check(stack: StackView, config): Finding[] {
        const findings: Finding[] = [];
        const add = (urn: string | undefined, messages: string[]) => messages.forEach((message) => findings.push({ urn, message }));
        for (const { urn, object } of stack.objects) {
            if (object.kind === "Secret") continue;
            const what = describe(object);
            add(urn, format(what, scanAnnotations(object.metadata?.annotations, "metadata.annotations")));
            if (object.kind === "ConfigMap") {
                for (const [key, text] of Object.entries(object.data ?? {})) if (typeof text === "string") add(urn, format(what, scanConfigText(key, text)));
            }
            const template = object.kind === "Pod" ? undefined : podTemplateOf(object);
            if (template) add(urn, format(what, scanAnnotations(template.metadata?.annotations, "pod template annotations")));
            for (const { container } of containersOf(podTemplateOf(object))) {
                for (const env of Array.isArray(container.env) ? container.env : []) {
                    if (typeof env?.value !== "string") continue;
                    const shape = secretShapeIn(env.value);
                    if (shape) add(urn, [`${what}: container ${container.name} env ${env.name} holds ${shape}; use valueFrom.secretKeyRef`]);
                    else if (isLiteralSecretValue(env.name, env.value)) add(urn, [`${what}: container ${container.name} env ${env.name} is a literal; use valueFrom.secretKeyRef`]);
                }
            }
        }
        for (const r of stack.resources.filter((x) => HELM_RESOURCE.test(x.type))) {
            add(r.urn, format(`Helm ${r.type.split(":").pop()} ${r.name}`, scanValue(r.props.values ?? {}, "values")));
        }
        const apps = reviewedApplications(stack, config);
        for (const app of [...apps.stack, ...apps.children]) {
            const { urn, where } = reportTarget(app);
            for (const source of sourcesOf(app.object)) add(urn, format(where, scanHelmSource(source.helm)));
        }
        return findings;
    },
});
