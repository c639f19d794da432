/**
 * Helpers shared by the Pod templates: container iteration, exemptImages, and the
 * Rego-compatible bits that keep messages and violation counts identical to Gatekeeper's.
 */
import { regoSprintf } from "../../rego/sprintf";
import { compare, RegoSet } from "../../rego/values";
import type { K8sObject, Violation } from "../../types";

export type ContainerKind = "container" | "initContainer" | "ephemeralContainer";

/** A container of a Pod spec, as plain JSON. */
export interface Container {
    name?: string;
    image?: string;
    securityContext?: Record<string, any> | null;
    [key: string]: any;
}

export interface PodContainer {
    container: Container;
    kind: ContainerKind;
}

const CONTAINER_LISTS: ReadonlyArray<readonly [string, ContainerKind]> = [
    ["containers", "container"],
    ["initContainers", "initContainer"],
    ["ephemeralContainers", "ephemeralContainer"],
];

/** containers, initContainers and ephemeralContainers of a Pod, in that order. */
export function allContainers(pod: K8sObject): PodContainer[] {
    const out: PodContainer[] = [];
    const spec = pod.spec;
    if (!spec || typeof spec !== "object") return out;
    for (const [field, kind] of CONTAINER_LISTS) {
        const list = spec[field];
        if (!Array.isArray(list)) continue;
        for (const container of list) {
            if (container && typeof container === "object") out.push({ container, kind });
        }
    }
    return out;
}

/**
 * Gatekeeper's exemptImages: an entry ending in `*` is a prefix, any other entry must equal
 * the image.
 */
export function isExempt(image: unknown, exemptImages: readonly string[] | undefined): boolean {
    if (typeof image !== "string" || !Array.isArray(exemptImages)) return false;
    for (const exemption of exemptImages) {
        if (typeof exemption !== "string") continue;
        if (exemption.endsWith("*") ? image.startsWith(exemption.slice(0, -1)) : exemption === image) {
            return true;
        }
    }
    return false;
}

/** The containers of a Pod whose image is not exempt. */
export function checkedContainers(pod: K8sObject, exemptImages: readonly string[] | undefined): PodContainer[] {
    const all = allContainers(pod);
    if (!Array.isArray(exemptImages) || exemptImages.length === 0) return all;
    return all.filter(({ container }) => !isExempt(container.image, exemptImages));
}

/** Rego truthiness: a value counts unless it is undefined or `false` (0, "" and {} count). */
export function isSet(value: unknown): boolean {
    return value !== undefined && value !== false;
}

/**
 * Renders a value as Rego's sprintf("%v") does (../../rego/sprintf.ts): a top-level string bare, a
 * number as Go prints Gatekeeper's float64 (1e+06), everything else in OPA's term syntax (quoted
 * strings, ", " separators, object keys and set members sorted).
 */
export function regoFormat(value: unknown): string {
    if (typeof value === "string") return value;
    if (value === undefined) return "";
    if (!(value instanceof Set)) return regoSprintf("%v", [value]);
    // A template's Set as a Rego set (its members hold no Set: the templates make none).
    const set = new RegoSet();
    for (const x of value) set.add(x);
    return regoSprintf("%v", [set]);
}

/**
 * A message as the library's sprintf("...%v...", [...]) builds it: each value rendered as %v does
 * (regoFormat), and undefined when any value is undefined, because in Rego a call with an undefined
 * argument is undefined and the violation whose message it is does not exist (e.g. a container
 * without a name, a Pod without metadata.name).
 */
export function rego(strings: TemplateStringsArray, ...values: unknown[]): string | undefined {
    let out = strings[0];
    for (let i = 0; i < values.length; i++) {
        if (values[i] === undefined) return undefined;
        out += regoFormat(values[i]) + strings[i + 1];
    }
    return out;
}

/**
 * Rego's violation rule is a set: a message produced twice is one violation; an undefined message
 * (see `rego`) is no violation.
 */
export function violations(messages: readonly (string | undefined)[]): Violation[] {
    const defined = messages.filter((m): m is string => m !== undefined);
    if (defined.length === 0) return [];
    const unique = defined.length === 1 ? defined : [...new Set(defined)];
    return unique.map((msg) => ({ msg }));
}

/**
 * OPA's ordering of values (ast.Compare, ../../rego/values.ts), the order of a
 * set's members and of its rendering: by type first (null < boolean < number < string < array <
 * object < set), then false < true, numbers by value, strings by their code points, arrays element
 * by element (a prefix first), objects by their sorted keys and then the values under them.
 */
export const regoCompare: (a: unknown, b: unknown) => number = compare;

/**
 * Rego's `a <= b` for scalars: values of different types compare by type (null < boolean <
 * number < string < array < object), so e.g. `1 <= null` is false and `1 <= "2"` is true; an
 * undefined operand makes the comparison undefined (false here).
 */
export function regoLessOrEqual(a: unknown, b: unknown): boolean {
    if (a === undefined || b === undefined) return false;
    return regoCompare(a, b) <= 0;
}
