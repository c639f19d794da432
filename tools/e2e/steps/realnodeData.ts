/**
 * The real node's data stores as an operator reaches them (issue 40's paths, backups and faults):
 * psql and redis-cli run in the stores' own pods (kubectl exec, credentials from the pod's own
 * environment, never on a command line), the object store through mc in the object store's network
 * namespace, and a pod of a StatefulSet deleted and waited back.
 */
import type { Context } from "../harness/context";
import { since } from "../harness/context";
import { GO_PRODUCTS, goBinary } from "../../products/pins";
import { inPod, secretValue } from "./realnodePod";

export const DATA_NS = "data";

/** SQL through psql in postgres-0 (its socket, the superuser of its environment); the rows, tab-separated. */
export async function psql(ctx: Context, db: string, sql: string): Promise<string> {
    const r = await ctx.kubectl(["-n", DATA_NS, "exec", "-i", "postgres-0", "-c", "postgres", "--", "sh", "-c", `exec psql -X -q -At -F '\t' -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d ${db}`], { input: sql, quiet: true });
    return r.stdout.trim();
}

/** redis-cli in redis-0 (REDISCLI_AUTH of its environment). */
export async function redisCli(ctx: Context, args: string[]): Promise<string> {
    const r = await ctx.kubectl(["-n", DATA_NS, "exec", "redis-0", "-c", "redis", "--", "redis-cli", "--no-auth-warning", ...args], { quiet: true });
    return r.stdout.trim();
}

export type KeyRef = { name: string; key: string };

/**
 * mc (tools/products' build) against the object store (alias e2e) from inside its own pod's network
 * namespace, with the root credentials of its Secret, or the keys named, in mc's environment.
 */
export async function mc(ctx: Context, args: string[], keys?: { access: KeyRef; secret: KeyRef }): Promise<{ code: number; out: string }> {
    const pod = await ctx.kubectlJson(["-n", DATA_NS, "get", "pod", "object-store-0"]);
    const env = pod.spec.containers[0].env as Array<{ name: string; valueFrom?: { secretKeyRef?: KeyRef } }>;
    const ref = (n: string) => env.find((e) => e.name === n)?.valueFrom?.secretKeyRef;
    const u = keys?.access ?? ref("MINIO_ROOT_USER");
    const p = keys?.secret ?? ref("MINIO_ROOT_PASSWORD");
    if (!u || !p) throw new Error("object-store-0 has no MINIO_ROOT_USER/MINIO_ROOT_PASSWORD from a Secret");
    const access = await secretValue(ctx, DATA_NS, u.name, u.key);
    const secret = await secretValue(ctx, DATA_NS, p.name, p.key);
    // MC_HOST_<alias>: mc's own way to name a server with its credentials (no config file, nothing on the command line).
    const host = `http://${encodeURIComponent(access)}:${encodeURIComponent(secret)}@127.0.0.1:9000`;
    return inPod(ctx, pod.metadata.uid, [goBinary(GO_PRODUCTS.mc), "--config-dir", ctx.path("mc"), "--no-color", ...args], { env: { MC_HOST_e2e: host } });
}

/** Deletes a StatefulSet's pod and waits for its replacement to be Ready; the seconds it took. */
export async function deleteAndWait(ctx: Context, ns: string, pod: string, seconds = 240): Promise<number> {
    const before = (await ctx.kubectlJson(["-n", ns, "get", "pod", pod])).metadata.uid;
    const t0 = process.hrtime.bigint();
    await ctx.kubectl(["-n", ns, "delete", "pod", pod, "--wait=false"]);
    await ctx.waitFor(seconds, `${ns}/${pod} re-created and Ready`, async () => {
        const p = await ctx.kubectlJson(["-n", ns, "get", "pod", pod]);
        return p.metadata.uid !== before && (p.status.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True");
    });
    return since(t0);
}
