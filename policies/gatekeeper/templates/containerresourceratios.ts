import type { TemplateRule } from "../types";
import { resourceSectionMessages } from "../engine/container-resources";
import { parseBytesMillis, parseCpuMillis } from "../engine/quantity";
import { checkedContainers, violations, type Container } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    ratio?: string;
    cpuRatio?: string;
}

const CHECKS = [
    { resource: "cpu", parse: parseCpuMillis },
    { resource: "memory", parse: parseBytesMillis },
];

export const rule: TemplateRule<Params> = {
    kind: "K8sContainerRatios",
    template: "containerresourceratios",
    category: "general",
    description: "Sets a maximum ratio for container resource limits to requests.\nhttps://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
    parameterSchema: {
        "type": "object",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "ratio": {
                "type": "string",
                "description": "The maximum allowed ratio of `resources.limits` to `resources.requests` on a container."
            },
            "cpuRatio": {
                "type": "string",
                "description": "The maximum allowed ratio of `resources.limits.cpu` to `resources.requests.cpu` on a container. If not specified, equal to `ratio`."
            }
        }
    },
    validate({ review, parameters }) {
        const memoryRatio = toNumber(parameters.ratio);
        // object.get(input.parameters, "cpuRatio", input.parameters.ratio): undefined without `ratio`,
        // even when cpuRatio is set (a call with an undefined argument is undefined).
        const cpuRatio = parameters.ratio === undefined ? undefined : parameters.cpuRatio !== undefined ? toNumber(parameters.cpuRatio) : memoryRatio;
        const messages: string[] = [];
        // Ephemeral containers cannot set resources.
        for (const { container, kind } of checkedContainers(review.object, parameters.exemptImages)) {
            if (kind === "ephemeralContainer") continue;
            messages.push(...resourceSectionMessages(container, "limits", CHECKS));
            messages.push(...resourceSectionMessages(container, "requests", CHECKS));
            const cpu = ratioMessage(container, "cpu", parseCpuMillis, cpuRatio, parameters.cpuRatio ?? parameters.ratio);
            if (cpu) messages.push(cpu);
            const memory = ratioMessage(container, "memory", parseBytesMillis, memoryRatio, parameters.ratio);
            if (memory) messages.push(memory);
        }
        return violations(messages);
    },
};

function ratioMessage(
    container: Container,
    resource: string,
    parse: (v: unknown) => number | undefined,
    ratio: number | undefined,
    ratioText: string | undefined,
): string | undefined {
    if (ratio === undefined) return undefined;
    const limitText = container.resources?.limits?.[resource];
    const limit = parse(limitText);
    const request = parse(container.resources?.requests?.[resource]);
    if (limit === undefined || request === undefined || !(limit > ratio * request)) return undefined;
    return `container <${container.name}> ${resource} limit <${limitText}> is higher than the maximum allowed ratio of <${ratioText}>`;
}

function toNumber(value: string | undefined): number | undefined {
    if (value === undefined || value.trim() === "") return undefined;
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
}
