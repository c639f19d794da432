import { get } from "../cel";
import type { SpecAdmissionRule } from "./types";

/** The API server's default scale-down window (autoscaling/v2), as the spec rule assumes. */
const KUBERNETES_DEFAULT_SECONDS = 300;

export const admission: SpecAdmissionRule<{ tier: string; minimumSeconds: number }> = {
    name: "hpa-scale-down-stabilization",
    resources: [{ apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], kinds: ["HorizontalPodAutoscaler"] }],
    checks: (c) => c.tier !== "prod" ? [] : [{
        expression: `${get("object", "spec.behavior.scaleDown.stabilizationWindowSeconds", String(KUBERNETES_DEFAULT_SECONDS))} >= ${c.minimumSeconds}`,
        message: `the scale-down stabilization window must be at least ${c.minimumSeconds} s in prod (section 2.4)`,
    }],
};
