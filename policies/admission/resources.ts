/**
 * CEL for the resource templates (containerlimits, containerrequests, containerresourceratios,
 * ephemeralstoragelimit), following policies/gatekeeper/engine/container-resources.ts: each
 * checked resource is present, non-empty, parseable the way the library's Rego parses it, and
 * not above the maximum. Quantities are compared with the Kubernetes quantity library.
 */
import { parseBytesMillis, parseCpuMillis } from "../gatekeeper/engine/quantity";
import { get, lit } from "./cel";

/** What the library's canonify_cpu / canonify_mem accept (no exponent forms), as RE2. */
export const CPU_SYNTAX = "^[0-9]+(\\.[0-9]+)?m?$";
export const BYTES_SYNTAX = "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|E|P|T|G|M|k|m)?$";

export interface ResourceLimit {
    resource: "cpu" | "memory" | "ephemeral-storage";
    /** The constraint's maximum; ignored when absent or unparseable (as the template does). */
    max?: string;
}

export function syntaxOf(resource: string): string {
    return resource === "cpu" ? CPU_SYNTAX : BYTES_SYNTAX;
}

function parses(resource: string, value: string | undefined): boolean {
    if (value === undefined) return false;
    return (resource === "cpu" ? parseCpuMillis(value) : parseBytesMillis(value)) !== undefined;
}

/** The value of `resource` in the container `c`'s resources.<section>, "" when absent. */
export function resourceValue(c: string, section: "limits" | "requests", resource: string): string {
    const values = get(c, `resources.${section}`, "{}");
    return `(${lit(resource)} in ${values} ? string(${values}[${lit(resource)}]) : "")`;
}

/** A condition on container `c`: every listed resource of the section is set, parseable and within its maximum. */
export function sectionOk(c: string, section: "limits" | "requests", limits: readonly ResourceLimit[]): string {
    return limits
        .map(({ resource, max }) => {
            const v = resourceValue(c, section, resource);
            const parts = [`${v}.matches(${lit(syntaxOf(resource))})`];
            if (parses(resource, max)) parts.push(`quantity(${v}).compareTo(quantity(${lit(max)})) <= 0`);
            return `(${parts.join(" && ")})`;
        })
        .join(" && ");
}
