import type { K8sObject } from "../types";

export interface GroupVersionKind {
    group: string;
    version: string;
    kind: string;
}

/** Splits an apiVersion ("apps/v1", "v1") into group and version; the core group is "". */
export function parseApiVersion(apiVersion: string | undefined): { group: string; version: string } {
    if (!apiVersion) return { group: "", version: "" };
    const slash = apiVersion.indexOf("/");
    if (slash < 0) return { group: "", version: apiVersion };
    return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function gvkOf(obj: K8sObject): GroupVersionKind {
    const { group, version } = parseApiVersion(obj.apiVersion);
    return { group, version, kind: obj.kind ?? "" };
}

export function apiVersionOf(group: string, version: string): string {
    return group === "" ? version : `${group}/${version}`;
}
