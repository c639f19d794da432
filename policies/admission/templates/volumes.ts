import type { Params } from "../../gatekeeper/templates/volumes";
import { get } from "../cel";
import type { AdmissionRule } from "../types";

/**
 * The volume sources of io.k8s.api.core.v1.Volume in Kubernetes 1.35 (every property but
 * `name`; volumes.test.ts checks the list against the schema). The API server drops unknown
 * fields, so these are all a volume can carry at admission.
 */
export const VOLUME_SOURCES = [
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi", "downwardAPI", "emptyDir",
    "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "image", "iscsi",
    "nfs", "persistentVolumeClaim", "photonPersistentDisk", "portworxVolume", "projected", "quobyte", "rbd", "scaleIO",
    "secret", "storageos", "vsphereVolume",
] as const;

/** Every volume uses only the allowed volume types ("*" allows all; without the list nothing is checked, as in the template). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPVolumeTypes",
    template: "volumes",
    checks: (p, s) => {
        if (!Array.isArray(p.volumes) || p.volumes.includes("*")) return [];
        const forbidden = VOLUME_SOURCES.filter((v) => !p.volumes!.includes(v));
        if (forbidden.length === 0) return [];
        return [{
            expression: `${get(s.o, "spec.volumes", "[]")}.all(v, ${forbidden.map((f) => `!has(v.${f})`).join(" && ")})`,
            message: `only the volume types ${JSON.stringify(p.volumes)} are allowed`,
        }];
    },
};
