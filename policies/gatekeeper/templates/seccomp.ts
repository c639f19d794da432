import type { K8sObject, TemplateRule } from "../types";
import { type Container, checkedContainers, isSet, regoFormat, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    allowedProfiles?: string[];
    allowedLocalhostFiles?: string[];
}

const CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/";
const POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";

/** securityContext profile type → the annotation names it stands for. */
const ANNOTATION_NAMES = new Map<string, string[]>([
    ["RuntimeDefault", ["runtime/default", "docker/default"]],
    ["Unconfined", ["unconfined"]],
]);

interface FoundProfile {
    profile: string;
    file: string;
    location: string;
}

/** The allowed profiles in annotation syntax, plus the entries as given. */
function allowedProfiles(params: Params): Set<string> {
    const allowed = new Set<string>();
    const files = Array.isArray(params.allowedLocalhostFiles) ? params.allowedLocalhostFiles : [];
    for (const profile of params.allowedProfiles ?? []) {
        allowed.add(profile);
        for (const name of ANNOTATION_NAMES.get(profile) ?? []) allowed.add(name);
        if (profile === "Localhost") for (const file of files) allowed.add(`localhost/${regoFormat(file)}`);
    }
    return allowed;
}

/** A securityContext seccompProfile in annotation syntax; undefined for an unknown type. */
function canonical(seccompProfile: any): string | undefined {
    switch (seccompProfile?.type) {
        case "RuntimeDefault":
            return "runtime/default";
        case "Unconfined":
            return "unconfined";
        case "Localhost":
            return seccompProfile.localhostProfile === undefined ? undefined : `localhost/${regoFormat(seccompProfile.localhostProfile)}`;
        default:
            return undefined;
    }
}

function fromSecurityContext(seccompProfile: any, location: string): FoundProfile | undefined {
    const profile = canonical(seccompProfile);
    if (profile === undefined) return undefined;
    const file = seccompProfile.localhostProfile;
    return { profile, file: file === undefined ? "" : regoFormat(file), location };
}

/**
 * Precedence: container securityContext, pod securityContext, container annotation, pod
 * annotation. Undefined when the field that wins cannot be read (the library skips it).
 */
function findProfile(pod: K8sObject, container: Container): FoundProfile | undefined {
    const own = container.securityContext?.seccompProfile;
    if (isSet(own)) return fromSecurityContext(own, "container securityContext");
    const podLevel = pod.spec?.securityContext?.seccompProfile;
    if (isSet(podLevel)) return fromSecurityContext(podLevel, "pod securityContext");
    const annotations = pod.metadata?.annotations;
    const containerKey = `${CONTAINER_ANNOTATION_PREFIX}${regoFormat(container.name)}`;
    for (const key of [containerKey, POD_ANNOTATION]) {
        const value = annotations?.[key];
        if (value !== undefined) return { profile: regoFormat(value), file: "", location: `annotation ${key}` };
    }
    return { profile: "not configured", file: "", location: "no explicit profile found" };
}

function isAllowed(profile: string, allowed: Set<string>): boolean {
    if (allowed.has(profile)) return true;
    return profile.startsWith("localhost/") && allowed.has("localhost/*");
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPSeccomp",
    template: "seccomp",
    category: "pod-security-policy",
    description: "Controls the seccomp profile used by containers. Corresponds to the `seccomp.security.alpha.kubernetes.io/allowedProfileNames` annotation on a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#seccomp",
    parameterSchema: {
        "type": "object",
        "description": "Controls the seccomp profile used by containers. Corresponds to the `seccomp.security.alpha.kubernetes.io/allowedProfileNames` annotation on a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#seccomp",
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
                "description": "An array of allowed profile values for seccomp on Pods/Containers.\nCan use the annotation naming scheme: `runtime/default`, `docker/default`, `unconfined` and/or `localhost/some-profile.json`. The item `localhost/*` will allow any localhost based profile.\nCan also use the securityContext naming scheme: `RuntimeDefault`, `Unconfined` and/or `Localhost`. For securityContext `Localhost`, use the parameter `allowedLocalhostProfiles` to list the allowed profile JSON files.\nThe policy code will translate between the two schemes so it is not necessary to use both.\nPutting a `*` in this array allows all Profiles to be used.\nThis field is required since with an empty list this policy will block all workloads.",
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
        if (params.allowedProfiles?.includes("*")) return [];
        const allowed = allowedProfiles(params);
        const pod = review.object;
        const messages: string[] = [];
        for (const { container } of checkedContainers(pod, params.exemptImages)) {
            const found = findProfile(pod, container);
            if (!found || isAllowed(found.profile, allowed)) continue;
            const name = regoFormat(container.name);
            const what = found.profile === "Localhost" ? `'${found.profile}' with file '${found.file}'` : `'${found.profile}'`;
            messages.push(
                `Seccomp profile ${what} is not allowed for container '${name}'. Found at: ${found.location}. ` +
                    `Allowed profiles: ${regoFormat(allowed)}`,
            );
        }
        return violations(messages);
    },
};
