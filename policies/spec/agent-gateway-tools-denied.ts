/**
 * Section 5.3: the global default is deny for every gateway-admin_ tool. The maintainer agent
 * allows describe, health, read, find_user, preview_recharge and model_control_options and asks
 * before recharge, update_user_limits and set_account_schedulable; other agents inherit deny.
 * Checked in the agent configuration file (ConfigMap agent-server-config, key config.json).
 */
import { specRule, type Finding } from "../pack/rule";
import { describe, type StackView } from "../pack/stack";

const PREFIX = "gateway-admin_";
const WILDCARD = `${PREFIX}*`;

export interface AgentToolsConfig {
    configMapName: string;
    configKey: string;
    maintainerAgent: string;
    maintainerAllow: string[];
}

export const rule = specRule<AgentToolsConfig>({
    name: "agent-gateway-tools-denied",
    description: "The agent configuration denies every gateway-admin_* tool by default; only the maintainer agent allows the read-only tools and must ask before the mutating ones (section 5.3)",
    configSchema: {
        properties: {
            configMapName: { type: "string", default: "agent-server-config", description: "the ConfigMap holding the agent configuration" },
            configKey: { type: "string", default: "config.json", description: "its key holding the configuration file" },
            maintainerAgent: { type: "string", default: "maintainer", description: "the agent that may use the gateway admin tools" },
            maintainerAllow: {
                type: "array",
                items: { type: "string" },
                default: ["describe", "health", "read", "find_user", "preview_recharge", "model_control_options"],
                description: "tools (without the gateway-admin_ prefix) the maintainer may use without asking",
            },
        },
    },
    check(stack: StackView, config): Finding[] {
        const findings: Finding[] = [];
        for (const { urn, object: cm } of stack.ofKind("ConfigMap", "").filter((o) => o.object.metadata?.name === config.configMapName)) {
            const what = `${describe(cm)} ${config.configKey}`;
            const text = cm.data?.[config.configKey];
            let file: any;
            try {
                file = JSON.parse(String(text));
            } catch {
                findings.push({ urn, message: `${what} is missing or not JSON, so the gateway-admin tool permissions cannot be verified` });
                continue;
            }
            const global = file?.permission ?? {};
            if (global[WILDCARD] !== "deny") findings.push({ urn, message: `${what}: permission["${WILDCARD}"] is ${JSON.stringify(global[WILDCARD])}; the global default must be "deny"` });
            for (const [key, value] of Object.entries(global)) {
                if (key.startsWith(PREFIX) && key !== WILDCARD && value !== "deny") findings.push({ urn, message: `${what}: permission["${key}"] is ${JSON.stringify(value)} for every agent; only the maintainer agent may use gateway-admin tools` });
            }
            for (const [agent, agentConfig] of Object.entries<any>(file?.agent ?? {})) {
                for (const [key, value] of Object.entries(agentConfig?.permission ?? {})) {
                    if (!key.startsWith(PREFIX) || value === "deny") continue;
                    const tool = key.slice(PREFIX.length);
                    if (agent !== config.maintainerAgent) findings.push({ urn, message: `${what}: agent ${agent} sets ${key} to ${JSON.stringify(value)}; agents other than ${config.maintainerAgent} inherit deny` });
                    else if (key === WILDCARD) findings.push({ urn, message: `${what}: agent ${agent} sets ${WILDCARD} to ${JSON.stringify(value)}; its default must stay deny` });
                    else if (value === "allow" && !config.maintainerAllow.includes(tool)) findings.push({ urn, message: `${what}: agent ${agent} allows ${key} without asking; it must ask first (only ${config.maintainerAllow.join(", ")} are allowed)` });
                    else if (value !== "allow" && value !== "ask") findings.push({ urn, message: `${what}: agent ${agent} sets ${key} to ${JSON.stringify(value)}; expected allow, ask or deny` });
                }
            }
        }
        return findings;
    },
});
