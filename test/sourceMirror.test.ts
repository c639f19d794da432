import { test } from "node:test";
import * as assert from "node:assert/strict";
import { find, renderStack } from "./render";

const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);

test("source repositories are mirrored on a schedule with the GitOps deploy key, and restorable by clone", async () => {
    const r = await renderStack("prod", { backupsGitMirrorRepositories: ["git@github.com:example/other.git"] });
    assert.deepEqual(r.errors, []);
    const cron = find(r, "CronJob", "source-mirror", "argocd");
    assert.equal(cron.spec.schedule, "0 5 * * *");
    assert.equal(cron.spec.concurrencyPolicy, "Forbid");
    const pod = cron.spec.jobTemplate.spec.template.spec;
    const c = pod.containers[0];
    assert.deepEqual(env(c, "REPOSITORIES").value.split(" "), ["git@github.com:example/ops-environment.git", "git@github.com:example/other.git"]);
    assert.match(env(c, "GIT_SSH_COMMAND").value, /StrictHostKeyChecking=yes/);
    const key = pod.volumes.find((v: any) => v.name === "deploy-key");
    assert.deepEqual(key.secret.items, [{ key: "sshPrivateKey", path: "id" }]);
    assert.equal(key.secret.secretName, "ops-repository");
    assert.ok(!JSON.stringify(c.env).includes("PRIVATE KEY"), "the key is mounted, never an env value");
    const restore = find(r, "CronJob", "source-mirror-restore", "argocd");
    assert.equal(restore.spec.suspend, true);
    assert.equal(env(restore.spec.jobTemplate.spec.template.spec.containers[0], "RESTORE_REPOSITORY").value, "git@github.com:example/ops-environment.git");
    const np = find(r, "NetworkPolicy", "source-mirror", "argocd");
    assert.deepEqual(np.spec.ingress ?? [], []);
    assert.deepEqual(np.spec.egress[1].ports, [{ port: 22, protocol: "TCP" }, { port: 443, protocol: "TCP" }]);
});
