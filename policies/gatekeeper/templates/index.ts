/**
 * Every Gatekeeper library template this pack implements, by constraint kind.
 * One module per library folder (templates.json `template`), each exporting `rule`.
 */
import type { TemplateRule } from "../types";
import { createTemplateRegistry, type TemplateRegistry } from "../engine/constraints";

import { rule as allowedrepos } from "./allowedrepos";
import { rule as allowedreposv2 } from "./allowedreposv2";
import { rule as automountServiceaccountToken } from "./automount-serviceaccount-token";
import { rule as blockEndpointEditDefaultRole } from "./block-endpoint-edit-default-role";
import { rule as blockLoadbalancerServices } from "./block-loadbalancer-services";
import { rule as blockNodeportServices } from "./block-nodeport-services";
import { rule as blockWildcardIngress } from "./block-wildcard-ingress";
import { rule as containerlimits } from "./containerlimits";
import { rule as containerrequests } from "./containerrequests";
import { rule as containerresourceratios } from "./containerresourceratios";
import { rule as containerresources } from "./containerresources";
import { rule as disallowanonymous } from "./disallowanonymous";
import { rule as disallowedrepos } from "./disallowedrepos";
import { rule as disallowedtags } from "./disallowedtags";
import { rule as disallowinteractive } from "./disallowinteractive";
import { rule as ephemeralstoragelimit } from "./ephemeralstoragelimit";
import { rule as externalip } from "./externalip";
import { rule as horizontalpodautoscaler } from "./horizontalpodautoscaler";
import { rule as httpsonly } from "./httpsonly";
import { rule as imagedigests } from "./imagedigests";
import { rule as noupdateserviceaccount } from "./noupdateserviceaccount";
import { rule as poddisruptionbudget } from "./poddisruptionbudget";
import { rule as replicalimits } from "./replicalimits";
import { rule as requiredannotations } from "./requiredannotations";
import { rule as requiredlabels } from "./requiredlabels";
import { rule as requiredprobes } from "./requiredprobes";
import { rule as storageclass } from "./storageclass";
import { rule as uniqueingresshost } from "./uniqueingresshost";
import { rule as uniqueserviceselector } from "./uniqueserviceselector";
import { rule as verifydeprecatedapi } from "./verifydeprecatedapi";
import { rule as allowPrivilegeEscalation } from "./allow-privilege-escalation";
import { rule as apparmor } from "./apparmor";
import { rule as capabilities } from "./capabilities";
import { rule as flexvolumeDrivers } from "./flexvolume-drivers";
import { rule as forbiddenSysctls } from "./forbidden-sysctls";
import { rule as fsgroup } from "./fsgroup";
import { rule as hostFilesystem } from "./host-filesystem";
import { rule as hostNamespaces } from "./host-namespaces";
import { rule as hostNetworkPorts } from "./host-network-ports";
import { rule as hostProbesLifecycle } from "./host-probes-lifecycle";
import { rule as hostProcess } from "./host-process";
import { rule as privilegedContainers } from "./privileged-containers";
import { rule as procMount } from "./proc-mount";
import { rule as readOnlyRootFilesystem } from "./read-only-root-filesystem";
import { rule as seccomp } from "./seccomp";
import { rule as seccompv2 } from "./seccompv2";
import { rule as selinux } from "./selinux";
import { rule as users } from "./users";
import { rule as volumes } from "./volumes";

export const generalTemplates: readonly TemplateRule[] = [
    allowedrepos,
    allowedreposv2,
    automountServiceaccountToken,
    blockEndpointEditDefaultRole,
    blockLoadbalancerServices,
    blockNodeportServices,
    blockWildcardIngress,
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
    horizontalpodautoscaler,
    httpsonly,
    imagedigests,
    noupdateserviceaccount,
    poddisruptionbudget,
    replicalimits,
    requiredannotations,
    requiredlabels,
    requiredprobes,
    storageclass,
    uniqueingresshost,
    uniqueserviceselector,
    verifydeprecatedapi,
];

export const podSecurityPolicyTemplates: readonly TemplateRule[] = [
    allowPrivilegeEscalation,
    apparmor,
    capabilities,
    flexvolumeDrivers,
    forbiddenSysctls,
    fsgroup,
    hostFilesystem,
    hostNamespaces,
    hostNetworkPorts,
    hostProbesLifecycle,
    hostProcess,
    privilegedContainers,
    procMount,
    readOnlyRootFilesystem,
    seccomp,
    seccompv2,
    selinux,
    users,
    volumes,
];

export const allTemplates: readonly TemplateRule[] = [...generalTemplates, ...podSecurityPolicyTemplates];

export const templateRegistry: TemplateRegistry = createTemplateRegistry(allTemplates);
