import { isSet, regoFormat } from "../templates/lib/pod";

/**
 * The checks the library's resource templates (containerlimits, containerrequests,
 * containerresourceratios, ephemeralstoragelimit) run on one section of a container's
 * resources, with their messages: section missing, resource missing, value unparseable,
 * value above a maximum.
 */
export type ResourceSection = "limits" | "requests";

const SECTION_NOUN: Record<ResourceSection, string> = { limits: "limit", requests: "request" };

export interface ResourceCheck {
    /** "cpu", "memory" or "ephemeral-storage". */
    resource: string;
    /** Parses a quantity to a comparable number, undefined when unparseable. */
    parse(value: unknown): number | undefined;
    /** Maximum from the constraint's parameters (exclusive bound: equal is allowed); ignored when absent or unparseable. */
    max?: unknown;
}

export function resourceSectionMessages(
    container: { name?: string; resources?: any },
    section: ResourceSection,
    checks: readonly ResourceCheck[],
): string[] {
    const name = container.name;
    const values = isSet(container.resources) ? container.resources?.[section] : undefined;
    const noun = SECTION_NOUN[section];
    const messages: string[] = [];
    if (!isSet(values)) messages.push(`container <${name}> has no resource ${section}`);
    for (const { resource, parse, max } of checks) {
        const value = values?.[resource];
        if (!isSet(value) || value === "") messages.push(`container <${name}> has no ${resource} ${noun}`);
        if (value === undefined) continue;
        const amount = parse(value);
        if (amount === undefined) {
            messages.push(`container <${name}> ${resource} ${noun} <${regoFormat(value)}> could not be parsed`);
            continue;
        }
        if (max === undefined) continue;
        const maxAmount = parse(max);
        if (maxAmount !== undefined && amount > maxAmount) {
            messages.push(
                `container <${name}> ${resource} ${noun} <${regoFormat(value)}> is higher than the maximum allowed of <${regoFormat(max)}>`,
            );
        }
    }
    return messages;
}
