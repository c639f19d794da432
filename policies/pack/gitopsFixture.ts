/** A parent Application of the stack and a repository with its children, for the GitOps rules' tests. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import type { K8sObject } from "../gatekeeper/types";

export const SYNC_OPTIONS = ["CreateNamespace=true", "ServerSideApply=true", "ApplyOutOfSyncOnly=false", "RespectIgnoreDifferences=true"];

export function parentApp(): K8sObject {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "ops-apps", namespace: "argocd" },
        spec: {
            project: "default",
            source: { repoURL: "git@github.com:example/ops-environment.git", path: "gitops/prod", targetRevision: "main" },
            destination: { server: "https://kubernetes.default.svc", namespace: "argocd" },
            syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: [...SYNC_OPTIONS] },
        },
    };
}

export function childApp(name = "uptime", targetRevision = "2.19.0"): K8sObject {
    return {
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name, namespace: "argocd" },
        spec: {
            project: "default",
            source: { repoURL: "https://charts.example.com", chart: name, targetRevision, helm: { releaseName: name } },
            destination: { server: "https://kubernetes.default.svc", namespace: name },
            syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: [...SYNC_OPTIONS] },
        },
    };
}

/** A temporary repository root with each child written to gitops/prod/<name>.yaml. */
export function repository(children: K8sObject[]): { root: string; write(file: string, obj: K8sObject): void; remove(): void } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "gitops-repo-"));
    const write = (file: string, obj: K8sObject) => {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), stringify(obj));
    };
    for (const child of children) write(`gitops/prod/${child.metadata!.name}.yaml`, child);
    return { root, write, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}
