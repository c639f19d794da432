/**
 * Every backup CronJob of the render, whichever component built it with components/lib/backupCronJob.ts
 * (recognised by its component label "backup"), has the same shape and a matching restore.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, find, podSpecOf, renderStack } from "./render";
import { NEVER } from "../components/lib/backupCronJob";
import { backupScript } from "../backups/scripts";

const COMPONENT = "app.kubernetes.io/component";
const backups = (r: any) => (all(r, "CronJob") as any[]).filter((c) => c.metadata.labels?.[COMPONENT] === "backup");

test("at least the PostgreSQL, Redis, object store and workflow backups are built by the shared builder", async () => {
    const r = await renderStack("dev");
    const names = backups(r).map((c) => c.metadata.name);
    for (const n of ["postgres-backup", "redis-backup", "object-store-backup", "workflow-backup"]) assert.ok(names.includes(n), `${n} missing; have ${names.join(", ")}`);
});

test("each backup CronJob: Forbid, history limits, deadlines, backoff, time zone, hardened pod with Never restarts", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, [], `${stack} renders`);
        assert.ok(backups(r).length >= 4);
        for (const cj of backups(r)) {
            const at = `${stack} ${cj.metadata.namespace}/${cj.metadata.name}`;
            assert.equal(cj.spec.concurrencyPolicy, "Forbid", at);
            assert.equal(cj.spec.successfulJobsHistoryLimit, 3, at);
            assert.equal(cj.spec.failedJobsHistoryLimit, 3, at);
            assert.equal(cj.spec.startingDeadlineSeconds, 3600, at);
            assert.equal(cj.spec.timeZone, "Etc/UTC", at);
            assert.equal(cj.spec.jobTemplate.spec.backoffLimit, 1, at);
            assert.equal(cj.spec.jobTemplate.spec.activeDeadlineSeconds, 3600, at);
            const pod = podSpecOf(cj);
            assert.equal(pod.restartPolicy, "Never", at);
            assert.equal(pod.automountServiceAccountToken, false, at);
            assert.equal(pod.securityContext.runAsNonRoot, true, at);
            for (const c of pod.containers) {
                assert.deepEqual(c.command, ["sh", "/scripts/backup.sh"], at);
                assert.equal(c.securityContext.readOnlyRootFilesystem, true, at);
                assert.equal(c.securityContext.allowPrivilegeEscalation, false, at);
                assert.ok(c.resources?.requests?.cpu && c.resources?.limits?.memory, `${at}: requests and limits`);
                assert.ok(c.volumeMounts.some((m: any) => m.mountPath === "/tmp"), `${at}: /tmp emptyDir`);
                const scripts = pod.volumes.find((v: any) => v.name === "scripts");
                assert.equal(scripts.configMap.name, `${cj.metadata.name}-scripts`, at);
                const backup = pod.volumes.find((v: any) => v.name === "backup");
                assert.equal(backup.persistentVolumeClaim.claimName, cj.metadata.name, at);
                find(r, "PersistentVolumeClaim", cj.metadata.name, cj.metadata.namespace);
                for (const e of c.env ?? []) {
                    if (/PASSWORD|SECRET|AUTH|TOKEN|_KEY$/.test(e.name)) assert.ok(e.valueFrom?.secretKeyRef, `${at}: ${e.name} must come from a secretKeyRef`);
                }
            }
        }
    }
});

test("each backup has a suspended <name>-restore CronJob that never fires, reads the backup volume read-only", async () => {
    const r = await renderStack("dev");
    assert.ok(backups(r).length >= 4);
    for (const cj of backups(r)) {
        const restore = find(r, "CronJob", `${cj.metadata.name}-restore`, cj.metadata.namespace);
        assert.equal(restore.spec.suspend, true);
        assert.equal(restore.spec.schedule, NEVER);
        assert.equal(restore.spec.concurrencyPolicy, "Forbid");
        const pod = podSpecOf(restore);
        assert.deepEqual(pod.containers[0].command, ["sh", "/scripts/restore.sh"]);
        const backup = pod.volumes.find((v: any) => v.name === "backup");
        assert.equal(backup.persistentVolumeClaim.claimName, cj.metadata.name);
        assert.equal(backup.persistentVolumeClaim.readOnly, true);
        // Each job side has its own NetworkPolicy: no ingress at all.
        for (const name of [cj.metadata.name, `${cj.metadata.name}-restore`]) {
            const np = find(r, "NetworkPolicy", name, cj.metadata.namespace);
            assert.deepEqual(np.spec.ingress ?? [], [], name);
        }
    }
});

test("February 31st never comes: the restore schedule matches no date", () => {
    const [minute, hour, day, month] = NEVER.split(" ");
    assert.equal(`${minute} ${hour}`, "0 0");
    assert.equal(new Date(Date.UTC(2028, Number(month) - 1, Number(day))).getUTCMonth(), 2, "the date rolls over into March");
});

test("bad backup config fails with the key and the expected form", async () => {
    const bad = await renderStack("dev", { backupsPostgresSchedule: "daily at 3", backupsRetentionDays: -1 });
    const text = bad.errors.join("\n");
    assert.match(text, /ops:backupsPostgresSchedule: .*expected a five-field cron schedule/);
    assert.match(text, /ops:backupsRetentionDays: -1 is below 0/);
});

test("the scripts ConfigMap holds exactly the catalogue's joined text (shared prelude joined in, no marker left)", async () => {
    const r = await renderStack("dev");
    for (const cj of backups(r)) {
        const restore = find(r, "CronJob", `${cj.metadata.name}-restore`, cj.metadata.namespace);
        const cm = find(r, "ConfigMap", `${cj.metadata.name}-scripts`, cj.metadata.namespace);
        for (const [file, owner] of [["backup.sh", cj], ["restore.sh", restore]] as const) {
            const name = owner.metadata.annotations["ops/script"];
            assert.equal(cm.data[file], backupScript(name).content, `${cj.metadata.name} ${file} is ${name} with the prelude`);
            assert.match(cm.data[file], /^# ---- begin backups\/scripts\/lib\/prelude\.sh ----$/m);
            assert.doesNotMatch(cm.data[file], /^(\. .*lib\/prelude\.sh" +)?# @prelude/m, "no marker line, nothing sourced");
        }
    }
});

test("jobs in the git image run as a UID that has a passwd entry there (OpenSSH: \"No user exists for uid\")", async () => {
    // alpine/git is alpine + git + openssh; alpine-baselayout's /etc/passwd has nobody = 65534, not the default 10001
    const r = await renderStack("dev");
    const gitJobs = (all(r, "CronJob") as any[]).filter((c) => podSpecOf(c).containers[0].image === "docker.io/alpine/git:2.45.2");
    assert.ok(gitJobs.length >= 2, "the source mirror and its restore use the git image");
    for (const cj of gitJobs) {
        const pod = podSpecOf(cj);
        assert.equal(pod.securityContext.runAsUser, 65534, cj.metadata.name);
        assert.equal(pod.containers[0].securityContext.runAsUser ?? pod.securityContext.runAsUser, 65534, cj.metadata.name);
        assert.equal(pod.securityContext.runAsNonRoot, true);
    }
    const others = backups(r).filter((c) => !gitJobs.includes(c));
    for (const cj of others) assert.notEqual(podSpecOf(cj).securityContext.runAsUser, 65534, `${cj.metadata.name} keeps its own UID`);
});
