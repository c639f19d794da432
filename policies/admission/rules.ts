/** Every template with an admission rule (one file per template under ./templates), and why the others have none. */
import { allTemplates } from "../gatekeeper/templates";
import type { AdmissionRule } from "./types";
import { admission as allowPrivilegeEscalation } from "./templates/allow-privilege-escalation";
import { admission as allowedrepos } from "./templates/allowedrepos";
import { admission as allowedreposv2 } from "./templates/allowedreposv2";
import { admission as apparmor } from "./templates/apparmor";
import { admission as automountServiceaccountToken } from "./templates/automount-serviceaccount-token";
import { admission as blockEndpointEditDefaultRole } from "./templates/block-endpoint-edit-default-role";
import { admission as blockLoadbalancerServices } from "./templates/block-loadbalancer-services";
import { admission as blockNodeportServices } from "./templates/block-nodeport-services";
import { admission as blockWildcardIngress } from "./templates/block-wildcard-ingress";
import { admission as capabilities } from "./templates/capabilities";
import { admission as containerlimits } from "./templates/containerlimits";
import { admission as containerrequests } from "./templates/containerrequests";
import { admission as containerresourceratios } from "./templates/containerresourceratios";
import { admission as containerresources } from "./templates/containerresources";
import { admission as disallowanonymous } from "./templates/disallowanonymous";
import { admission as disallowedrepos } from "./templates/disallowedrepos";
import { admission as disallowedtags } from "./templates/disallowedtags";
import { admission as disallowinteractive } from "./templates/disallowinteractive";
import { admission as ephemeralstoragelimit } from "./templates/ephemeralstoragelimit";
import { admission as externalip } from "./templates/externalip";
import { admission as flexvolumeDrivers } from "./templates/flexvolume-drivers";
import { admission as forbiddenSysctls } from "./templates/forbidden-sysctls";
import { admission as fsgroup } from "./templates/fsgroup";
import { admission as hostFilesystem } from "./templates/host-filesystem";
import { admission as hostNamespaces } from "./templates/host-namespaces";
import { admission as hostNetworkPorts } from "./templates/host-network-ports";
import { admission as hostProbesLifecycle } from "./templates/host-probes-lifecycle";
import { admission as hostProcess } from "./templates/host-process";
import { admission as httpsonly } from "./templates/httpsonly";
import { admission as imagedigests } from "./templates/imagedigests";
import { admission as privilegedContainers } from "./templates/privileged-containers";
import { admission as procMount } from "./templates/proc-mount";
import { admission as readOnlyRootFilesystem } from "./templates/read-only-root-filesystem";
import { admission as replicalimits } from "./templates/replicalimits";
import { admission as requiredannotations } from "./templates/requiredannotations";
import { admission as requiredlabels } from "./templates/requiredlabels";
import { admission as requiredprobes } from "./templates/requiredprobes";
import { admission as seccomp } from "./templates/seccomp";
import { admission as seccompv2 } from "./templates/seccompv2";
import { admission as selinux } from "./templates/selinux";
import { admission as users } from "./templates/users";
import { admission as volumes } from "./templates/volumes";

export const admissionRuleList: readonly AdmissionRule[] = [
    allowPrivilegeEscalation,
    allowedrepos,
    allowedreposv2,
    apparmor,
    automountServiceaccountToken,
    blockEndpointEditDefaultRole,
    blockLoadbalancerServices,
    blockNodeportServices,
    blockWildcardIngress,
    capabilities,
    containerlimits,
    containerrequests,
    containerresourceratios,
    containerresources,
    disallowanonymous,
    disallowedrepos,
    disallowedtags,
    disallowinteractive,
    ephemeralstoragelimit,
    externalip,
    flexvolumeDrivers,
    forbiddenSysctls,
    fsgroup,
    hostFilesystem,
    hostNamespaces,
    hostNetworkPorts,
    hostProbesLifecycle,
    hostProcess,
    httpsonly,
    imagedigests,
    privilegedContainers,
    procMount,
    readOnlyRootFilesystem,
    replicalimits,
    requiredannotations,
    requiredlabels,
    requiredprobes,
    seccomp,
    seccompv2,
    selinux,
    users,
    volumes,
];

export const admissionRules: ReadonlyMap<string, AdmissionRule> = new Map(admissionRuleList.map((r) => [r.kind, r]));

const NO_CEL_YET = "judged on one object, but no CEL is written for it yet";

/** Templates that cannot be judged at admission, by library folder name, with the reason. */
const CANNOT: Record<string, string> = {
    uniqueingresshost: "referential: compares the Ingress with every other Ingress (data.inventory); CEL sees one object",
    uniqueserviceselector: "referential: compares the Service's selector with every other Service (data.inventory)",
    poddisruptionbudget: "referential: a Deployment/StatefulSet is judged against the PodDisruptionBudgets that select it (data.inventory)",
    horizontalpodautoscaler: "referential: enforceScaleTargetRef looks the scale target up in data.inventory",
    storageclass: "referential: the PersistentVolumeClaim's storage class must exist (data.inventory)",
    noupdateserviceaccount: "UPDATE only: compares the object with its previous version and the requesting user",
    verifydeprecatedapi: "the 1.35 API server no longer serves the removed versions, so such objects never reach admission (they are refused before)",
};

/**
 * Every template without an admission rule, by constraint kind, with the reason
 * (docs/admission.md lists the same; admission.test.ts checks they agree).
 */
export const notAtAdmission: ReadonlyMap<string, string> = new Map(
    allTemplates.filter((t) => !admissionRules.has(t.kind)).map((t) => [t.kind, CANNOT[t.template] ?? NO_CEL_YET]),
);
