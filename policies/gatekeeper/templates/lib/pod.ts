/**
 * Helpers shared by the Pod templates: container iteration, exemptImages, and the
 * Rego-compatible bits that keep messages and violation counts identical to Gatekeeper's.
 */
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
 * Renders a value as Rego's sprintf("%v") does: a top-level string bare, everything else in
 * OPA's term syntax (quoted strings, ", " separators, object keys and set members sorted).
 */
export function regoFormat(value: unknown): string {
    return typeof value === "string" ? value : regoTerm(value);
}

function regoTerm(value: unknown): string {
    if (value === undefined) return "";
    if (value === null) return "null";
    if (typeof value === "string") return JSON.stringify(value);
    if (typeof value !== "object") return String(value);
    if (Array.isArray(value)) return `[${value.map(regoTerm).join(", ")}]`;
    if (value instanceof Set) {
        if (value.size === 0) return "set()";
        return `{${[...value].sort(regoCompare).map(regoTerm).join(", ")}}`;
    }
    const entries = Object.keys(value)
        .sort()
        .map((key) => `${JSON.stringify(key)}: ${regoTerm((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(", ")}}`;
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

const REGO_TYPE_ORDER = ["null", "boolean", "number", "string", "array", "object", "set"];
const regoType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : v instanceof Set ? "set" : typeof v);

/**
 * OPA's ordering of values (ast.Compare), the order of a set's members and of its rendering:
 * by type first (null < boolean < number < string < array < object < set), then false < true,
 * numbers by value, strings by their characters, arrays and sets element by element (a prefix
 * first), objects by their sorted keys and then the values under them.
 */
export function regoCompare(a: unknown, b: unknown): number {
    const ta = REGO_TYPE_ORDER.indexOf(regoType(a));
    const tb = REGO_TYPE_ORDER.indexOf(regoType(b));
    if (ta !== tb) return ta < tb ? -1 : 1;
    if (a === null) return 0;
    if (typeof a === "boolean" || typeof a === "number" || typeof a === "string") return a === b ? 0 : a < (b as typeof a) ? -1 : 1;
    if (Array.isArray(a) || a instanceof Set) {
        const x = a instanceof Set ? [...a].sort(regoCompare) : a;
        const y = b instanceof Set ? [...b].sort(regoCompare) : (b as unknown[]);
        for (let i = 0; i < Math.min(x.length, y.length); i++) {
            const c = regoCompare(x[i], y[i]);
            if (c !== 0) return c;
        }
        return x.length - y.length < 0 ? -1 : x.length > y.length ? 1 : 0;
    }
    const ka = Object.keys(a as object).sort(regoCompare);
    const kb = Object.keys(b as object).sort(regoCompare);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
        if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
        const c = regoCompare((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]]);
        if (c !== 0) return c;
    }
    return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0;
}

/**
 * Rego's `a <= b` for scalars: values of different types compare by type (null < boolean <
 * number < string < array < object), so e.g. `1 <= null` is false and `1 <= "2"` is true; an
 * undefined operand makes the comparison undefined (false here).
 */
export function regoLessOrEqual(a: unknown, b: unknown): boolean {
    if (a === undefined || b === undefined) return false;
    return regoCompare(a, b) <= 0;
}
