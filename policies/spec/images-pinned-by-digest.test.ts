import assert from "node:assert/strict";
import { test } from "node:test";
import { deployment, messagesOf } from "../pack/testing";
import { rule } from "./images-pinned-by-digest";

const DIGEST = `@sha256:${"ab".repeat(32)}`;

function pinned() {
    const app = deployment("web");
    app.spec.template.spec.containers[0].image += DIGEST;
    app.spec.template.spec.initContainers = [{ name: "init", image: `docker.io/library/busybox:1.36${DIGEST}` }];
    return app;
}

test("tag plus digest on every container passes in prod", () => {
    assert.deepEqual(messagesOf(rule, [pinned()], { tier: "prod" }), []);
});

test("a tag-only image fails in prod, init containers included; dev allows tags", () => {
    const app = pinned();
    app.spec.template.spec.initContainers[0].image = "docker.io/library/busybox:1.36";
    assert.match(messagesOf(rule, [app], { tier: "prod" })[0], /init container init image "docker.io\/library\/busybox:1.36" is not pinned/);
    assert.deepEqual(messagesOf(rule, [deployment("web")], { tier: "dev" }), []);
});

test("CronJob pod templates are checked; a short digest fails", () => {
    const job = { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "backup", namespace: "apps" }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: "b", image: "docker.io/library/postgres:15.10@sha256:abc" }] } } } } } };
    assert.equal(messagesOf(rule, [job], { tier: "prod" }).length, 1);
});
