/**
 * Section 2.9 and 8.2: GATEWAY_MAX_RECHARGE bounds every recharge the gateway admin tool server
 * accepts, at most 10000. The tool server (sub2api-admin's server.mjs) reads it as
 * SUB2API_MAX_RECHARGE. It may be set as a container env var or in the agent server's
 * configuration file (mcp.<server>.environment), so both are checked wherever they appear.
 */
import { specRule, type Finding } from "../pack/rule";
import { containersOf, describe, podTemplateOf, type StackView } from "../pack/stack";

export const MAX_RECHARGE_VAR = "SUB2API_MAX_RECHARGE";

function problem(value: unknown, max: number): string | undefined {
    const n = typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < 1) return `${MAX_RECHARGE_VAR} is ${JSON.stringify(value)}, not a positive integer`;
    if (n > max) return `${MAX_RECHARGE_VAR} is ${n}, above the limit of ${max}`;
    return undefined;
}

/** Values of the variable anywhere in a parsed configuration file. */
function valuesIn(value: unknown, path: string, out: { path: string; value: unknown }[]): void {
    if (Array.isArray(value)) value.forEach((v, i) => valuesIn(v, `${path}[${i}]`, out));
    else if (value && typeof value === "object") {
        for (const [k, v] of Object.entries(value)) {
            if (k === MAX_RECHARGE_VAR) out.push({ path: `${path}.${k}`, value: v });
            else valuesIn(v, `${path}.${k}`, out);
        }
    }
}

export const rule = specRule<{ max: number }>({
    name: "gateway-max-recharge",
    description: "SUB2API_MAX_RECHARGE, the specification's GATEWAY_MAX_RECHARGE (container env or the agent configuration's tool-server environment) is a positive integer of at most 10000 (sections 2.9, 8.2)",
    configSchema: { properties: { max: { type: "integer", minimum: 1, default: 10000, description: "the largest allowed SUB2API_MAX_RECHARGE" } } },
    check(stack: StackView, config): Finding[] {
        const findings: Finding[] = [];
        for (const { urn, object } of stack.objects) {
            for (const { container } of containersOf(podTemplateOf(object))) {
                for (const env of Array.isArray(container.env) ? container.env : []) {
                    if (env?.name !== MAX_RECHARGE_VAR || env.value === undefined) continue;
                    const p = problem(env.value, config.max);
                    if (p) findings.push({ urn, message: `${describe(object)}: container ${container.name}: ${p}` });
                }
            }
            if (object.kind !== "ConfigMap") continue;
            for (const [key, text] of Object.entries(object.data ?? {})) {
                if (typeof text !== "string" || !text.includes(MAX_RECHARGE_VAR)) continue;
                let parsed: unknown;
                try {
                    parsed = JSON.parse(text);
                } catch {
                    const m = new RegExp(`${MAX_RECHARGE_VAR}\\s*[:=]\\s*["']?([^"'\\s,}]*)`).exec(text);
                    parsed = m ? { [MAX_RECHARGE_VAR]: m[1] } : undefined;
                }
                const found: { path: string; value: unknown }[] = [];
                valuesIn(parsed, key, found);
                for (const f of found) {
                    const p = problem(f.value, config.max);
                    if (p) findings.push({ urn, message: `${describe(object)}: ${f.path}: ${p}` });
                }
            }
        }
        return findings;
    },
});
