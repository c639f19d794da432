import type { K8sObject, TemplateRule } from "../types";
import { type Container, checkedContainers, isSet, rego, regoFormat, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    allowedProfiles?: string[];
    allowedLocalhostFiles?: string[];
}

const CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/";
const POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";

interface FoundProfile {
    profile: string;
    file: string;
    location: string;
}

/**
 * The library's get_allowed_profiles: the entries as given, plus, for each entry without "/"
 * (a securityContext type) and each allowedLocalhostFiles entry (default: none), the type in
 * annotation syntax (RuntimeDefault: runtime/default and docker/default; Localhost: localhost/<file>;
 * Unconfined: unconfined). Without allowedLocalhostFiles a type name stays untranslated.
 */
function allowedProfiles(params: Params): Set<string> {
    const allowed = new Set<string>();
    const files = Array.isArray(params.allowedLocalhostFiles) ? params.allowedLocalhostFiles : [];
    for (const profile of params.allowedProfiles ?? []) {
        allowed.add(profile);
        if (profile.includes("/")) continue;
        for (const file of files) for (const name of canonical({ type: profile, localhostProfile: file }, "") ?? []) allowed.add(name);
    }
    return allowed;
}

/**
 * The library's canonicalize_seccomp_profile: a securityContext seccompProfile in annotation
 * syntax; RuntimeDefault is `runtimeDefault` (or both names when it is ""); undefined for an
 * unknown type or a Localhost profile without localhostProfile.
 */
function canonical(seccompProfile: any, runtimeDefault: string): string[] | undefined {
    switch (seccompProfile?.type) {
        case "RuntimeDefault":
            return runtimeDefault === "" ? ["runtime/default", "docker/default"] : [runtimeDefault];
        case "Localhost":
            return seccompProfile.localhostProfile === undefined ? undefined : [`localhost/${regoFormat(seccompProfile.localhostProfile)}`];
        case "Unconfined":
            return ["unconfined"];
        default:
            return undefined;
    }
}

/** The library's canonicalize_runtime_default_profile: runtime/default, or docker/default when only that one is allowed. */
function runtimeDefaultName(params: Params): string {
    const list = params.allowedProfiles ?? [];
    if (list.includes("runtime/default")) return "runtime/default";
    if (list.includes("docker/default")) return "docker/default";
    return "runtime/default";
}

function fromSecurityContext(seccompProfile: any, location: string, runtimeDefault: string): FoundProfile | undefined {
    const profile = canonical(seccompProfile, runtimeDefault)?.[0];
    if (profile === undefined) return undefined;
    const file = seccompProfile.localhostProfile;
    return { profile, file: file === undefined ? "" : regoFormat(file), location };
}

/**
 * Precedence: container securityContext, pod securityContext, container annotation, pod
 * annotation. Undefined when the field that wins cannot be read (the library skips it).
 */
function findProfile(pod: K8sObject, container: Container, runtimeDefault: string): FoundProfile | undefined {
    const own = container.securityContext?.seccompProfile;
    if (isSet(own)) return fromSecurityContext(own, "container securityContext", runtimeDefault);
    const podLevel = pod.spec?.securityContext?.seccompProfile;
    if (isSet(podLevel)) return fromSecurityContext(podLevel, "pod securityContext", runtimeDefault);
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
        const runtimeDefault = runtimeDefaultName(params);
        const pod = review.object;
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(pod, params.exemptImages)) {
            const found = findProfile(pod, container, runtimeDefault);
            if (!found || isAllowed(found.profile, allowed)) continue;
            // The library's only message form (the file is not printed).
            messages.push(rego`Seccomp profile '${found.profile}' is not allowed for container '${container.name}'. Found at: ${found.location}. Allowed profiles: ${allowed}`);
        }
        return violations(messages);
    },
};
