/** Kubernetes quantities as numbers: cpu in millicores, memory in bytes (BigInt-free: bytes stay below 2^53). */
import { cpuMillis, quantityBytes } from "../../config/schema";

export function millis(q: unknown): number | undefined {
    if (q === undefined || q === null || q === "") return undefined;
    if (typeof q === "number") return Math.round(q * 1000);
    const s = String(q);
    if (!/^\d+(\.\d+)?m?$/.test(s)) throw new Error(`not a cpu quantity: ${s}`);
    return cpuMillis(s);
}

export function bytes(q: unknown): number | undefined {
    if (q === undefined || q === null || q === "") return undefined;
    if (typeof q === "number") return q;
    return quantityBytes(String(q));
}

/** Human form: 1500 -> "1500m", 2000 -> "2". */
export const cpuText = (m: number) => (m % 1000 === 0 ? String(m / 1000) : `${m}m`);

export function memText(b: number): string {
    for (const [unit, f] of [["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]] as const) if (b >= f && b % f === 0) return `${b / f}${unit}`;
    if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(2)}Gi`;
    if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(1)}Mi`;
    return `${b}`;
}
