/**
 * The add-ons are helm releases (kubernetes:helm.sh/v3:Release; older revisions used helm v4
 * Charts). The offline render cannot expand them into objects, so the diff shows each one as an
 * object of its own, "HelmRelease <namespace>/<release>" with the pinned chart and its values: a
 * change of chart version or values appears as a changed object, and a v4 Chart replaced by a
 * Release with the same chart, version and values shows no change.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import type { PolicyResource } from "./policy";

const HELM = /^kubernetes:helm\.sh\/v\d+:(Chart|Release)$/;

export const HELM_RELEASE_API = "helm.sh/pseudo";

export function helmReleaseObjects(resources: readonly PolicyResource[]): K8sObject[] {
    return resources
        .filter((r) => HELM.test(r.type))
        .map((r) => ({
            apiVersion: HELM_RELEASE_API,
            kind: "HelmRelease",
            metadata: { name: r.props.name ?? r.name, namespace: r.props.namespace },
            spec: {
                chart: r.props.chart,
                version: r.props.version,
                repo: r.props.repositoryOpts?.repo,
                values: r.props.values ?? {},
            },
        }));
}
