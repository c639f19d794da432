import { get, lit } from "../cel";
import type { SpecAdmissionRule } from "./types";

const DIGEST = "@sha256:[0-9a-f]{64}$";

/** In prod every container and init container image of a Pod or a workload's pod template is pinned by digest. */
export const admission: SpecAdmissionRule<{ tier: string }> = {
    name: "images-pinned-by-digest",
    resources: [
        { apiGroups: [""], resources: ["pods", "replicationcontrollers"], kinds: ["Pod", "ReplicationController"] },
        { apiGroups: ["apps"], resources: ["deployments", "statefulsets", "daemonsets", "replicasets"], kinds: ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"] },
        { apiGroups: ["batch"], resources: ["jobs", "cronjobs"], kinds: ["Job", "CronJob"] },
    ],
    checks: (c) => {
        if (c.tier !== "prod") return [];
        const both = (base: string) => `${get("object", `${base}containers`, "[]")} + ${get("object", `${base}initContainers`, "[]")}`;
        const containers = `(object.kind == "Pod" ? ${both("spec.")} : object.kind == "CronJob" ? ${both("spec.jobTemplate.spec.template.spec.")} : ${both("spec.template.spec.")})`;
        return [{
            expression: `${containers}.all(c, has(c.image) && c.image.matches(${lit(DIGEST)}))`,
            message: "in prod every container and init container image is pinned by digest (<image>@sha256:<64 hex>) (section 9.4)",
        }];
    },
};
