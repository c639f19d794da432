/**
 * What the webhook stand-in (tools/e2e/webhookStandIn.ts, e2e only) answers: an AdmissionReview
 * allowed and unchanged (a mutating webhook's answer without a patch), metrics.k8s.io/v1beta1
 * discovery (nodes and pods, get and list, as metrics-server serves them) and empty lists.
 */
export const METRICS_GV = "metrics.k8s.io/v1beta1";
const METRICS_RESOURCES = {
    kind: "APIResourceList", apiVersion: "v1", groupVersion: METRICS_GV,
    resources: [
        { name: "nodes", singularName: "", namespaced: false, kind: "NodeMetrics", verbs: ["get", "list"] },
        { name: "pods", singularName: "", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] },
    ],
};

/** The stand-in's answer to one request (the API server's AdmissionReview POSTs, the aggregator's GETs). */
export function answer(method: string, url: string, body: string): { code: number; json: unknown; counts?: "review" | "metrics" } {
    const p = url.split("?")[0];
    if (method === "POST") {
        const review = JSON.parse(body) as { apiVersion?: string; request?: { uid?: string } };
        if (!review.request?.uid) return { code: 400, json: { kind: "Status", apiVersion: "v1", status: "Failure", code: 400, message: "not an AdmissionReview request (no request.uid)" } };
        return { code: 200, counts: "review", json: { apiVersion: review.apiVersion ?? "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: review.request.uid, allowed: true } } };
    }
    if (["/healthz", "/readyz", "/livez"].includes(p)) return { code: 200, json: "ok" };
    if (p === "/apis") return { code: 200, json: { kind: "APIGroupList", apiVersion: "v1", groups: [{ name: "metrics.k8s.io", versions: [{ groupVersion: METRICS_GV, version: "v1beta1" }], preferredVersion: { groupVersion: METRICS_GV, version: "v1beta1" } }] } };
    if (p === "/apis/metrics.k8s.io") return { code: 200, json: { kind: "APIGroup", apiVersion: "v1", name: "metrics.k8s.io", versions: [{ groupVersion: METRICS_GV, version: "v1beta1" }], preferredVersion: { groupVersion: METRICS_GV, version: "v1beta1" } } };
    if (p === `/apis/${METRICS_GV}`) return { code: 200, counts: "metrics", json: METRICS_RESOURCES };
    const list = p.match(/^\/apis\/metrics\.k8s\.io\/v1beta1\/(?:namespaces\/[^/]+\/)?(nodes|pods)$/);
    if (list) {
        return { code: 200, counts: "metrics", json: { kind: list[1] === "nodes" ? "NodeMetricsList" : "PodMetricsList", apiVersion: METRICS_GV, metadata: {}, items: [] } };
    }
    return { code: 404, json: { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404, message: `the e2e stand-in serves no ${p}` } };
}

