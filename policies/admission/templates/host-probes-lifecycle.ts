import type { Params } from "../../gatekeeper/templates/host-probes-lifecycle";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule } from "../types";

const HANDLERS = ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle.postStart", "lifecycle.preStop"];

/** No probe or lifecycle hook of a container sets an httpGet or tcpSocket host (other than ""). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPHostProbesLifecycle",
    template: "host-probes-lifecycle",
    checks: (p, s) => [{
        expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
            HANDLERS.flatMap((h) => ["httpGet", "tcpSocket"].map((a) => `!(${present(c, `${h}.${a}.host`)} && ${c}.${h}.${a}.host != "")`)).join(" && ")),
        message: "probes and lifecycle hooks may not set a host",
    }],
};
