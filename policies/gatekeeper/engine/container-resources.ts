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
    // Every message of the library names the container: without a name sprintf is undefined and
    // no rule yields a violation.
    if (name === undefined) return [];
    const shown = regoFormat(name);
    const resources = container.resources;
    // container.resources.<section> in Rego: undefined unless resources is an object holding it.
    const values = isObjectValue(resources) ? resources[section] : undefined;
    const noun = SECTION_NOUN[section];
    const messages: string[] = [];
    // `not container.resources` and `not container.resources.<section>` (one message: a set).
    if (!isSet(values)) messages.push(`container <${shown}> has no resource ${section}`);
    // missing(container.resources.<section>, r) is undefined when the section is: a container
    // without limits gets "no resource limits" alone, not one more message per resource.
    if (values === undefined) return messages;
    for (const { resource, parse, max } of checks) {
        const value = isObjectValue(values) ? values[resource] : undefined;
        if (!isSet(value) || value === "") messages.push(`container <${shown}> has no ${resource} ${noun}`);
        if (value === undefined) continue;
        const amount = parse(value);
        if (amount === undefined) {
            messages.push(`container <${shown}> ${resource} ${noun} <${regoFormat(value)}> could not be parsed`);
            continue;
        }
        if (max === undefined) continue;
        const maxAmount = parse(max);
        if (maxAmount !== undefined && amount > maxAmount) {
            messages.push(
                `container <${shown}> ${resource} ${noun} <${regoFormat(value)}> is higher than the maximum allowed of <${regoFormat(max)}>`,
            );
        }
    }
    return messages;
}

const isObjectValue = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
