import { present, unlessNameless } from "../cel";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Record<string, never>> = {
    kind: "K8sPSPHostNamespace",
    template: "host-namespaces",
    checks: (_p, s) => [{
        expression: unlessNameless(`!(${present(s.o, "spec.hostPID")} && ${s.o}.spec.hostPID) && !(${present(s.o, "spec.hostIPC")} && ${s.o}.spec.hostIPC)`),
        message: "sharing the host PID or IPC namespace is not allowed",
    }],
};
