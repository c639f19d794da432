/**
 * Rules that relate several keys. Each returns the problems it finds, naming the key to change.
 */
import * as pulumi from "@pulumi/pulumi";
import type { Config, ConfigProblem, Rule } from "./rule";
import { cpuMillis, flatten, imageProblem, keyOf, quantityBytes, urlCredentialProblem } from "./schema";
import { schema } from "./stack";
import { API_SERVER_RULES } from "./apiServerRules";
import { APPLICATION_RULES } from "./applicationRules";
import { DATA_STORE_RULES } from "./dataStoreRules";
import { PLATFORM_RULES } from "./platformRules";

export const isImageKey = (path: string[]) => path[path.length - 1] === "image" || path[path.length - 1].endsWith("Image");

const imagesPinned: Rule = (c) =>
    flatten(schema)
        .filter(({ path }) => isImageKey(path))
        .flatMap(({ key, path }) => {
            const ref = path.reduce<any>((node, p) => node?.[p], c) as string | undefined;
            if (typeof ref !== "string") return [];
            const problem = imageProblem(ref);
            // Digests (recorded ones only; in prod every tag resolved) come from images.lock.json: config/index.ts.
            return problem ? [{ key, problem, expected: "an image pinned by tag or digest" }] : [];
        });

const gatewayHost: Rule = (c) => {
    const host = new URL(c.gatewayTool.baseUrl).hostname;
    return host === c.gatewayTool.allowedHost
        ? []
        : [{ key: "gatewayToolAllowedHost", problem: `"${c.gatewayTool.allowedHost}" is not the host of gatewayToolBaseUrl (${host})`, expected: "the host of gatewayToolBaseUrl" }];
};

const gatewayPermissions: Rule = (c) => {
    const both = c.gatewayTool.maintainerAllow.filter((t) => c.gatewayTool.maintainerAsk.includes(t));
    const known = ["describe", "health", "read", "find_user", "preview_recharge", "recharge", "update_user_limits", "set_account_schedulable", "model_control_options"];
    const unknown = [...c.gatewayTool.maintainerAllow, ...c.gatewayTool.maintainerAsk].filter((t) => !known.includes(t));
    return [
        ...both.map((t) => ({ key: "gatewayToolMaintainerAsk", problem: `${t} is also in gatewayToolMaintainerAllow`, expected: "each tool in at most one of the allow and ask lists" })),
        ...unknown.map((t) => ({ key: "gatewayToolMaintainerAllow", problem: `${t} is not a gateway admin tool`, expected: `tools among ${known.join(", ")}` })),
    ];
};

/** The bridge forwards to one of the agent server instances. */
const bridgeTarget: Rule = (c) =>
    c.agentServer.ports.includes(c.bridge.agentServerPort)
        ? []
        : [{ key: "bridgeAgentServerPort", problem: `${c.bridge.agentServerPort} is not an agent server port`, expected: `one of agentServerPorts (${c.agentServer.ports.join(", ")})` }];

/** Every model the agent server and the bridge name is one the agent configuration's provider offers. */
const offeredModels: Rule = (c) => {
    const p = c.agentServer.provider;
    const offered = p.models.map((m) => `${p.name}/${m}`);
    const named = { agentServerModel: c.agentServer.model, agentServerSmallModel: c.agentServer.smallModel, bridgeDefaultModel: c.bridge.defaultModel };
    return Object.entries(named)
        .filter(([, model]) => !offered.includes(model))
        .map(([key, model]) => ({ key, problem: `${model} is not a model of the agent server's provider`, expected: `one of ${offered.join(", ")} (agentServerProviderName/agentServerProviderModels)` }));
};

/** min <= max for every pair of keys named <x>MinReplicas / <x>MaxReplicas (or minReplicas / maxReplicas in one area). */
const replicaRanges: Rule = (c) => {
    const fields = flatten(schema);
    const problems: ConfigProblem[] = [];
    for (const { key, path } of fields) {
        const last = path[path.length - 1];
        if (!last.startsWith("min") || !last.endsWith("Replicas")) continue;
        const maxPath = [...path.slice(0, -1), "max" + last.slice(3)];
        const max = maxPath.reduce<any>((n, p) => n?.[p], c);
        const min = path.reduce<any>((n, p) => n?.[p], c);
        if (typeof max === "number" && typeof min === "number" && min > max)
            problems.push({ key, problem: `${min} is above the maximum ${max}`, expected: `at most ${keyOf(maxPath)}` });
    }
    return problems;
};

const requestsWithinLimits: Rule = (c) => {
    const problems: ConfigProblem[] = [];
    const walk = (node: any, path: string[]) => {
        // A secret value is an Output: nothing of a resource spec in it, and reading its properties
        // would make lifted Outputs (an apply each) of the Output's own fields.
        if (!node || typeof node !== "object" || pulumi.Output.isInstance(node)) return;
        if (node.requests && node.limits && typeof node.requests.memory === "string") {
            const key = keyOf(path);
            if (quantityBytes(node.requests.memory) > quantityBytes(node.limits.memory))
                problems.push({ key: `${key}RequestsMemory`, problem: `${node.requests.memory} exceeds the limit ${node.limits.memory}`, expected: "a request at most the limit" });
            if (cpuMillis(node.requests.cpu) > cpuMillis(node.limits.cpu))
                problems.push({ key: `${key}RequestsCpu`, problem: `${node.requests.cpu} exceeds the limit ${node.limits.cpu}`, expected: "a request at most the limit" });
        }
        for (const [k, v] of Object.entries(node)) if (v && typeof v === "object" && !Array.isArray(v)) walk(v, [...path, k]);
    };
    walk(c, []);
    return problems;
};

const distinctPorts: Rule = (c) =>
    new Set(c.agentServer.ports).size === c.agentServer.ports.length && c.agentServer.ports.length > 0
        ? []
        : [{ key: "agentServerPorts", problem: "ports repeat or the list is empty", expected: "one or more distinct ports" }];

const oauthSecrets: Rule = (c) =>
    c.agentServer.oauthProxy.enabled && (!c.agentServer.oauthProxy.clientId || !c.agentServer.oauthProxy.clientSecret)
        ? [{ key: "agentServerOauthProxyClientSecret", problem: "the OAuth proxy is enabled but its client id or secret is not set", expected: "agentServerOauthProxyClientId and agentServerOauthProxyClientSecret set with `pulumi config set --secret`" }]
        : [];

/** distinct node ports across every component: a key named <...>NodePort is one node port of the cluster. */
const distinctNodePorts: Rule = (c) => {
    const owner = new Map<number, string>();
    const problems: ConfigProblem[] = [];
    for (const { key, path } of flatten(schema)) {
        if (!key.endsWith("NodePort")) continue;
        const value = path.reduce<any>((n, p) => n?.[p], c);
        if (typeof value !== "number") continue;
        const other = owner.get(value);
        if (other) problems.push({ key, problem: `${value} is also ${other}`, expected: `a node port that no other component uses (taken: ${[...owner].map(([p, k]) => `${p} by ${k}`).join(", ")})` });
        else owner.set(value, key);
    }
    return problems;
};

const proxyCredentialsNeedProxy: Rule = (c) =>
    c.agentServer.httpProxyCredentials !== undefined && !c.agentServer.httpProxy
        ? [{ key: "agentServerHttpProxyCredentials", problem: "is set but agentServerHttpProxy is not", expected: "agentServerHttpProxy set too (the credentials are for that proxy), or neither" }]
        : [];

/** No plain (non-secret) value carries a credential in a URL, wherever the URL stands: those go in secret keys. */
const noCredentialsInUrls: Rule = (c) =>
    flatten(schema)
        .filter(({ field }) => !field.secret)
        .flatMap(({ key, path }) => {
            const value = path.reduce<any>((n, p) => n?.[p], c);
            const texts: unknown[] = Array.isArray(value) ? value : [value];
            const problem = texts.map((t) => (typeof t === "string" ? urlCredentialProblem(t) : undefined)).find((p) => p);
            return problem ? [{ key, problem, expected: "no credential in plain configuration: put it in a secret key (pulumi config set --secret), as agentServerHttpProxyCredentials does for the proxy" }] : [];
        });

const RULES: Rule[] = [noCredentialsInUrls, proxyCredentialsNeedProxy, imagesPinned, gatewayHost, gatewayPermissions, bridgeTarget, offeredModels, replicaRanges, requestsWithinLimits, distinctPorts, distinctNodePorts, oauthSecrets, ...PLATFORM_RULES, ...DATA_STORE_RULES, ...APPLICATION_RULES, ...API_SERVER_RULES];

/**
 * Every cross-key rule. `tolerant`: some keys failed their own check (and carry their default);
 * a rule that cannot run on such a configuration is skipped instead of hiding the others.
 */
export function crossChecks(c: Config, tolerant = false): ConfigProblem[] {
    return RULES.flatMap((r) => {
        if (!tolerant) return r(c);
        try {
            return r(c);
        } catch {
            return [];
        }
    });
}
