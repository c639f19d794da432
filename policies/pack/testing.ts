/** Helpers for the rules' unit tests: fixtures as stack resources, a rule's messages over them. */
import type { K8sObject } from "../gatekeeper/types";
import { resourceOf } from "./resources";
import type { SpecRule } from "./rule";
import { stackView } from "./stack";

/** The messages a rule reports over these objects (with its defaults under `config`). */
export function messagesOf<C>(rule: SpecRule<C>, objects: K8sObject[], config: Partial<C> = {}): string[] {
    return rule.check(stackView(objects.map((o) => resourceOf(o))), config).map((f) => f.message);
}

export const labels = (app: string, component = "server") => ({
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/instance": `${app}-${component}`,
    "app.kubernetes.io/component": component,
});

/** A Deployment whose pods carry labels(app) and one container with requests and limits. */
export function deployment(app: string, namespace = "apps"): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: app, namespace, labels: labels(app) },
        spec: {
            replicas: 2,
            selector: { matchLabels: labels(app) },
            template: {
                metadata: { labels: labels(app) },
                spec: {
                    containers: [{
                        name: "main",
                        image: `registry.example.com/ops/${app}:1.0.0`,
                        ports: [{ name: "http", containerPort: 8080 }],
                        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
                    }],
                },
            },
        },
    };
}

export function service(app: string, namespace = "apps"): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: app, namespace },
        spec: { selector: labels(app), ports: [{ name: "http", port: 80, targetPort: "http" }] },
    };
}
