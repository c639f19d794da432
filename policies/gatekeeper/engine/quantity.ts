/**
 * Resource quantities compared the way the library's Rego does ("canonify_cpu"/"canonify_mem"):
 * CPU in millicores, memory and storage in thousandths of a byte. Undefined means the value
 * cannot be parsed, which the templates report as such. Only plain decimal numbers with the
 * Kubernetes suffixes are understood (no exponent forms), like the library.
 */

const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

export function parseCpuMillis(value: unknown): number | undefined {
    if (typeof value === "number") return Number.isFinite(value) ? value * 1000 : undefined;
    if (typeof value !== "string") return undefined;
    if (value.endsWith("m")) {
        const raw = value.slice(0, -1);
        return DECIMAL.test(raw) ? Number(raw) : undefined;
    }
    return DECIMAL.test(value) ? Number(value) * 1000 : undefined;
}

const BYTE_MULTIPLES: ReadonlyMap<string, number> = new Map([
    ["E", 1e21],
    ["P", 1e18],
    ["T", 1e15],
    ["G", 1e12],
    ["M", 1e9],
    ["k", 1e6],
    ["m", 1],
    ["Ki", 1000 * 2 ** 10],
    ["Mi", 1000 * 2 ** 20],
    ["Gi", 1000 * 2 ** 30],
    ["Ti", 1000 * 2 ** 40],
    ["Pi", 1000 * 2 ** 50],
    ["Ei", 1000 * 2 ** 60],
]);

/** Memory or ephemeral-storage in thousandths of a byte. */
export function parseBytesMillis(value: unknown): number | undefined {
    if (typeof value === "number") return Number.isFinite(value) ? value * 1000 : undefined;
    if (typeof value !== "string") return undefined;
    let multiple = 1000;
    let raw = value;
    const two = value.slice(-2);
    const one = value.slice(-1);
    if (value.length > 1 && BYTE_MULTIPLES.has(two)) {
        multiple = BYTE_MULTIPLES.get(two)!;
        raw = value.slice(0, -2);
    } else if (value.length > 0 && BYTE_MULTIPLES.has(one)) {
        multiple = BYTE_MULTIPLES.get(one)!;
        raw = value.slice(0, -1);
    }
    return DECIMAL.test(raw) ? Number(raw) * multiple : undefined;
}
