/**
 * The cluster's Kubernetes release (section 2: one Kubernetes cluster): the configured minimum
 * (environmentKubernetesMinVersion) is the one number that the manifests, the strict API check and
 * the deprecated-API constraints agree on (test/clusterVersion.test.ts).
 */

/** The oldest release with the fields the program uses: lifecycle.preStop.sleep (PodLifecycleSleepAction, beta and on by default since 1.30). */
export const OLDEST_SUPPORTED = "1.30";
/** The release of the API schemas the strict check validates against (../shared/reference/k8s-schemas/k8s-1.35.json.gz). */
export const SCHEMA_VERSION = "1.35";

/** "1.30" -> 30; undefined for anything else. */
export function minorOf(version: string): number | undefined {
    const m = /^1\.(\d{1,2})$/.exec(version);
    return m ? Number(m[1]) : undefined;
}

/** -1, 0 or 1 as a is older than, the same as or newer than b ("1.9" < "1.30"). */
export function compareVersions(a: string, b: string): number {
    const ma = minorOf(a);
    const mb = minorOf(b);
    if (ma === undefined || mb === undefined) throw new Error(`not a Kubernetes release "1.<minor>": ${ma === undefined ? a : b}`);
    return Math.sign(ma - mb);
}
