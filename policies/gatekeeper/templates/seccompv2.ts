import type { K8sObject, TemplateRule } from "../types";
import { type Container, checkedContainers, isSet, rego, regoFormat, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    allowedProfiles?: string[];
    allowedLocalhostFiles?: string[];
}

interface FoundProfile {
    /** The securityContext type as written (RuntimeDefault, Unconfined, Localhost), or "not configured". */
    profile: string;
    file: string;
    location: string;
}

function fromSecurityContext(seccompProfile: any, location: string): FoundProfile | undefined {
    const type = seccompProfile?.type;
    if (type === undefined) return undefined;
    const file = seccompProfile.localhostProfile;
    return { profile: regoFormat(type), file: file === undefined ? "" : regoFormat(file), location };
}

/** Container securityContext wins over the pod's; annotations are not read. */
function findProfile(pod: K8sObject, container: Container): FoundProfile | undefined {
    const own = container.securityContext?.seccompProfile;
    if (isSet(own)) return fromSecurityContext(own, "container securityContext");
    const podLevel = pod.spec?.securityContext?.seccompProfile;
    if (isSet(podLevel)) return fromSecurityContext(podLevel, "pod securityContext");
    return { profile: "not configured", file: "", location: "no explicit profile found" };
}

/**
 * As the library's Rego: a Localhost profile is allowed by an allowedLocalhostFiles "*" alone, or by
 * "Localhost" in allowedProfiles with its file in allowedLocalhostFiles (default [""], which admits
 * a Localhost profile without localhostProfile); any other profile by its type in allowedProfiles.
 */
function isAllowed(found: FoundProfile, allowed: Set<string>, localhostFiles: readonly string[]): boolean {
    if (found.profile !== "Localhost") return allowed.has(found.profile);
    return localhostFiles.includes("*") || (allowed.has("Localhost") && localhostFiles.includes(found.file));
}

/** The library's get_allowed_profiles set, which its messages print: {"type": p}, and {"type": "Localhost", "localHostProfile": f} per file. */
function allowedProfilesTerm(allowed: Set<string>, localhostFiles: readonly string[]): Set<Record<string, string>> {
    const out = new Map<string, Record<string, string>>();
    for (const profile of allowed) {
        if (profile !== "Localhost") out.set(JSON.stringify({ type: profile }), { type: profile });
        else for (const file of localhostFiles) out.set(JSON.stringify({ file }), { type: "Localhost", localHostProfile: file });
    }
    return new Set(out.values());
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPSeccompV2",
    template: "seccompv2",
    category: "pod-security-policy",
    description: "Controls the seccomp profile used by containers. Corresponds to the `securityContext.seccompProfile` field. Security contexts from the annotation is not considered as Kubernetes no longer reads security contexts from the annotation.",
    parameterSchema: {
        "type": "object",
        "description": "Controls the seccomp profile used by containers. Corresponds to the `securityContext.seccompProfile` field. Security contexts from the annotation is not considered as Kubernetes no longer reads security contexts from the annotation.",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "allowedProfiles": {
                "type": "array",
                "description": "An array of allowed profile values for seccomp on Pods/Containers.\nCan use the securityContext naming scheme: `RuntimeDefault`, `Unconfined` and/or `Localhost`. For securityContext `Localhost`, use the parameter `allowedLocalhostFiles` to list the allowed profile JSON files.\nThe policy code will translate between the two schemes so it is not necessary to use both.\nPutting a `*` in this array allows all Profiles to be used.\nThis field is required since with an empty list this policy will block all workloads.",
                "items": {
                    "type": "string"
                }
            },
            "allowedLocalhostFiles": {
                "type": "array",
                "description": "When using securityContext naming scheme for seccomp and including `Localhost` this array holds the allowed profile JSON files.\nPutting a `*` in this array will allows all JSON files to be used.\nThis field is required to allow `Localhost` in securityContext as with an empty list it will block.",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const params = parameters ?? {};
        const allowed = new Set(Array.isArray(params.allowedProfiles) ? params.allowedProfiles : []);
        if (allowed.has("*")) return [];
        const localhostFiles = Array.isArray(params.allowedLocalhostFiles) ? params.allowedLocalhostFiles : [""];
        const allowedTerm = allowedProfilesTerm(allowed, localhostFiles);
        const pod = review.object;
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(pod, params.exemptImages)) {
            const found = findProfile(pod, container);
            if (!found || isAllowed(found, allowed, localhostFiles)) continue;
            messages.push(
                found.profile === "Localhost"
                    ? rego`Seccomp profile '${found.profile}' with file '${found.file}' is not allowed for container '${container.name}'. Found at: ${found.location}. Allowed profiles: ${allowedTerm}`
                    : rego`Seccomp profile '${found.profile}' is not allowed for container '${container.name}'. Found at: ${found.location}. Allowed profiles: ${allowedTerm}`,
            );
        }
        return violations(messages);
    },
};
