import { get, present } from "../cel";
import type { SpecAdmissionRule } from "./types";

export const admission: SpecAdmissionRule = {
    name: "hpa-replica-range",
    resources: [{ apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], kinds: ["HorizontalPodAutoscaler"] }],
    checks: () => [{
        expression: `${present("object", "spec.maxReplicas")} && ${get("object", "spec.minReplicas", "1")} >= 1 && ${get("object", "spec.minReplicas", "1")} <= object.spec.maxReplicas`,
        message: "minReplicas (default 1) must be at least 1 and at most maxReplicas (section 2.4)",
    }],
};
