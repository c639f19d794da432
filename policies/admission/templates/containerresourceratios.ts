import type { Params } from "../../gatekeeper/templates/containerresourceratios";
import { containersAndInit, everyContainer } from "../cel";
import { resourceValue, sectionOk, syntaxOf } from "../resources";
import type { AdmissionRule } from "../types";

function toNumber(value: string | undefined): number | undefined {
    if (value === undefined || value.trim() === "") return undefined;
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
}

/** cpu and memory limits and requests set; limit at most ratio × request (cpuRatio for CPU, default ratio). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sContainerRatios",
    template: "containerresourceratios",
    checks: (p, s) => {
        const both = [{ resource: "cpu" as const }, { resource: "memory" as const }];
        const memoryRatio = toNumber(p.ratio);
        // As the library's object.get(input.parameters, "cpuRatio", input.parameters.ratio): no CPU ratio without `ratio`.
        const cpuRatio = p.ratio === undefined ? undefined : p.cpuRatio !== undefined ? toNumber(p.cpuRatio) : memoryRatio;
        const ratioOk = (c: string, resource: string, ratio: number | undefined) => {
            if (ratio === undefined) return "true";
            const l = resourceValue(c, "limits", resource);
            const r = resourceValue(c, "requests", resource);
            const syntax = JSON.stringify(syntaxOf(resource));
            return `(!(${l}.matches(${syntax}) && ${r}.matches(${syntax})) || ` +
                `quantity(${l}).asApproximateFloat() <= ${Number(ratio).toString().includes(".") ? ratio : `${ratio}.0`} * quantity(${r}).asApproximateFloat())`;
        };
        return [{
            expression: everyContainer(containersAndInit(s.o), p.exemptImages, (c) =>
                `${sectionOk(c, "limits", both)} && ${sectionOk(c, "requests", both)} && ${ratioOk(c, "cpu", cpuRatio)} && ${ratioOk(c, "memory", memoryRatio)}`),
            message: `every container must set cpu and memory limits and requests, limits at most ${p.ratio ?? "-"}× the requests (cpu ${p.cpuRatio ?? p.ratio ?? "-"}×)`,
        }];
    },
};
