import type { K8sObject, TemplateRule } from "../types";
import { allContainers, isSet, violations, rego } from "./lib/pod";

export interface AllowedHostPath {
    pathPrefix?: string;
    readOnly?: boolean;
}

export interface Params {
    allowedHostPaths?: AllowedHostPath[];
}

/** Path segments, so that "/foo" matches "/foo/bar" and "/foo/" but not "/fool". */
function segments(path: string): string[] {
    if (path === "/") return [];
    return path.replace(/^\/+|\/+$/g, "").split("/");
}

function pathMatches(prefix: unknown, path: unknown): boolean {
    if (typeof prefix !== "string" || typeof path !== "string") return false;
    const a = segments(prefix);
    const b = segments(path);
    if (a.length > b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
}

/** Whether any container (of any kind) mounts the volume without readOnly. */
function mountedWritable(pod: K8sObject, volumeName: unknown): boolean {
    // As the Rego: a call with an undefined argument is undefined, so a nameless volume has no writable mount.
    if (volumeName === undefined) return false;
    for (const { container } of allContainers(pod)) {
        const mounts = container.volumeMounts;
        if (!Array.isArray(mounts)) continue;
        for (const mount of mounts) {
            if (mount?.name === volumeName && !isSet(mount.readOnly)) return true;
        }
    }
    return false;
}

function hostPathAllowed(pod: K8sObject, volume: any, allowed: AllowedHostPath[]): boolean {
    for (const entry of allowed) {
        if (!pathMatches(entry?.pathPrefix, volume.hostPath?.path)) continue;
        if (entry.readOnly !== true) return true;
        if (!mountedWritable(pod, volume.name)) return true;
    }
    return false;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPHostFilesystem",
    template: "host-filesystem",
    category: "pod-security-policy",
    description: "Controls usage of the host filesystem. Corresponds to the `allowedHostPaths` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
    parameterSchema: {
        "type": "object",
        "description": "Controls usage of the host filesystem. Corresponds to the `allowedHostPaths` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
        "properties": {
            "allowedHostPaths": {
                "type": "array",
                "description": "An array of hostpath objects, representing paths and read/write configuration.",
                "items": {
                    "type": "object",
                    "properties": {
                        "pathPrefix": {
                            "type": "string",
                            "description": "The path prefix that the host volume must match."
                        },
                        "readOnly": {
                            "type": "boolean",
                            "description": "when set to true, any container volumeMounts matching the pathPrefix must include `readOnly: true`."
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        const pod = review.object;
        const volumes = pod.spec?.volumes;
        if (!Array.isArray(volumes)) return [];
        // No allowedHostPaths (or an empty list) blocks every hostPath volume.
        const allowed = Array.isArray(parameters?.allowedHostPaths) ? parameters.allowedHostPaths : [];
        const messages: (string | undefined)[] = [];
        for (const volume of volumes) {
            if (!isSet(volume?.hostPath)) continue;
            if (allowed.length > 0 && hostPathAllowed(pod, volume, allowed)) continue;
            messages.push(
                rego`HostPath volume ${volume} is not allowed, pod: ${pod.metadata?.name}. Allowed path: ${allowed}`,
            );
        }
        return violations(messages);
    },
};
