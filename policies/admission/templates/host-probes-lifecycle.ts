import type { Params } from "../../gatekeeper/templates/host-probes-lifecycle";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule } from "../types";

const HANDLERS = ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle.postStart", "lifecycle.preStop"];
const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"];

/** Two of `fields` present on `c` with different values. */
function differ(c: string, fields: readonly string[]): string {
    const pairs: string[] = [];
    for (let i = 0; i < fields.length; i++) {
        for (let j = i + 1; j < fields.length; j++) pairs.push(`(${present(c, fields[i])} && ${present(c, fields[j])} && ${c}.${fields[i]} != ${c}.${fields[j]})`);
    }
    return pairs.join(" || ");
}

/**
 * No probe or lifecycle hook of a container sets an httpGet or tcpSocket host (other than "").
 * And, as Gatekeeper: a container with two different probes (or two different hooks) makes the
 * library's Rego fail (eval_conflict_error), which Gatekeeper reports as a violation (see the
 * template and docs/gatekeeper.md), so it is refused here too.
 */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPHostProbesLifecycle",
    template: "host-probes-lifecycle",
    checks: (p, s) => [
        {
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) => `!(${differ(c, PROBES)} || ${differ(c, ["lifecycle.postStart", "lifecycle.preStop"])})`),
            message: "a container with two different probes or two different lifecycle hooks: Gatekeeper's evaluation of the library's Rego fails on it (eval_conflict_error) and refuses it",
        },
        {
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                HANDLERS.flatMap((h) => ["httpGet", "tcpSocket"].map((a) => `!(${present(c, `${h}.${a}.host`)} && ${c}.${h}.${a}.host != "")`)).join(" && ")),
            message: "probes and lifecycle hooks may not set a host",
        },
    ],
};
