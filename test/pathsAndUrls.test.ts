/**
 * Issue 42 classes 5 and 6: paths that can never work (a file name "..", a volume mounted on "/" or
 * over what another mount of the same job uses), a URL port above 65535 named as such, and a
 * credential in a URL's query string refused wherever the URL stands, its value never shown.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BACKUP_JOB_MOUNTS } from "../config/dataStoreRules";
import { configProblems as problems } from "./configProblems";
import { renderStack } from "./render";

describe("issue 42 class 5: paths", () => {
    it("a file name or relative path of '.' or '..' is refused", () => {
        assert.match(problems({ bookingDatabaseFile: ".." }), /ops:bookingDatabaseFile: "\.\." leaves its folder or names it/);
        assert.match(problems({ bookingDatabaseFile: "." }), /ops:bookingDatabaseFile: "\."/);
        assert.match(problems({ gitopsChatUiDatabase: "../webui.db" }), /ops:gitopsChatUiDatabase: "\.\.\/webui\.db" leaves its folder/);
        assert.match(problems({ gitopsChatUiUploads: "a/./b" }), /ops:gitopsChatUiUploads/);
        assert.match(problems({ gitopsPathPrefix: ".." }), /ops:gitopsPathPrefix/);
        assert.equal(problems({ bookingDatabaseFile: "..booking.db", gitopsChatUiDatabase: "db/webui.db" }), "");
    });

    it("a mount path of '/', a system folder, /tmp, or a path with '.', '..' or a trailing '/' is refused", () => {
        for (const bad of ["/", "/etc", "/usr", "/proc/x", "/tmp", "/tmp/backup", "/backup/", "/a/../b", "/a//b", "backup"])
            assert.match(problems({ backupsMountPath: bad }), /ops:backupsMountPath: /, bad);
        assert.match(problems({ backupsMountPath: "/" }), /ops:backupsMountPath: "\/" is a folder of the container's own system/);
        assert.match(problems({ bookingDataMountPath: "/dev" }), /ops:bookingDataMountPath: /);
        assert.match(problems({ searchEngineSnapshotFsLocation: "/usr" }), /ops:searchEngineSnapshotFsLocation: /);
        assert.equal(problems({ backupsMountPath: "/var/backup", searchEngineSnapshotFsLocation: "/usr/share/elasticsearch/snapshots" }), "");
    });

    it("the backup volume's folder apart from every other mount of the backup jobs (the API server refuses a path twice)", () => {
        assert.match(problems({ backupsMountPath: "/data" }), /ops:backupsMountPath: "\/data" is or holds "\/data" of bookingDataMountPath/);
        assert.match(problems({ backupsMountPath: "/scripts" }), /ops:backupsMountPath: "\/scripts" is or holds \/scripts, which backup and restore jobs mount/);
        assert.match(problems({ backupsMountPath: "/ssh-known-hosts/x" }), /ops:backupsMountPath/);
        assert.match(problems({ bookingDataMountPath: "/scripts" }), /ops:bookingDataMountPath: "\/scripts" is or holds \/scripts/);
        assert.match(problems({ bookingDataMountPath: "/srv/data", backupsMountPath: "/srv" }), /ops:backupsMountPath: "\/srv" is or holds "\/srv\/data"/);
    });

    it("BACKUP_JOB_MOUNTS covers every folder a rendered backup or restore job mounts", async () => {
        const r = await renderStack("ci");
        const paths = new Set<string>();
        for (const o of r.redactedObjects) {
            if (!["backup", "restore"].includes(String(o.metadata?.labels?.["app.kubernetes.io/component"]))) continue;
            const t = o.kind === "CronJob" ? o.spec.jobTemplate.spec.template : o.spec?.template;
            for (const c of [...(t?.spec?.containers ?? []), ...(t?.spec?.initContainers ?? [])]) for (const m of c.volumeMounts ?? []) paths.add(m.mountPath);
        }
        assert.ok(paths.size > 3);
        assert.deepEqual([...paths].filter((p) => !["/backup", "/tmp", ...BACKUP_JOB_MOUNTS].includes(p)), []);
    });
});

describe("issue 42 class 5/6: URLs", () => {
    it("a port above 65535 is named, not 'Invalid URL'", () => {
        assert.match(problems({ agentServerHttpProxy: "http://proxy.example.com:70000" }), /ops:agentServerHttpProxy: "http:\/\/proxy\.example\.com:70000" has the port 70000, above 65535; expected .* with a port from 1 to 65535/);
        assert.match(problems({ searchEngineSnapshotS3Endpoint: "http://object-store:99999/" }), /has the port 99999, above 65535/);
    });

    it("a token in a URL's query string is refused on every URL key, its value never shown", () => {
        for (const key of ["agentServerHttpProxy", "agentServerProviderBaseUrl", "gatewayToolBaseUrl", "gitopsChatUiModelBaseUrl", "searchEngineSnapshotS3Endpoint"]) {
            const text = problems({ [key]: "https://h.example.com/v1?token=sekrit-123" });
            assert.match(text, new RegExp(`ops:${key}: "https://h\\.example\\.com/v1" has a query string or fragment \\(value not shown`), key);
            assert.doesNotMatch(text, /sekrit/);
        }
        assert.doesNotMatch(problems({ agentServerHttpProxy: "http://proxy:70000/?token=sekrit-123" }), /sekrit/);
    });

    it("a credential in a URL anywhere in plain configuration (a list of arguments) is refused, not shown", () => {
        const text = problems({ bookingArgs: ["--upstream=https://api.example.com/x?api_key=sekrit-123"] });
        assert.match(text, /ops:bookingArgs: a URL in it carries "api_key" in its query \(value not shown\)/);
        assert.doesNotMatch(text, /sekrit/);
        assert.match(problems({ bookingArgs: ["--db=postgres://u:sekrit@db/x"] }), /ops:bookingArgs: a URL in it carries a user or password/);
        assert.equal(problems({ bookingArgs: ["--page=https://example.com/docs?lang=en"] }), "");
    });

    it("the rendered files of a stack never hold a token given in a URL: the render refuses it", async () => {
        const said = await renderStack("ci", { agentServerHttpProxy: "http://proxy.example.com:3128/?token=sekrit-123" }).then((r) => [...r.errors, JSON.stringify(r.redactedObjects), JSON.stringify(r.files ?? {})].join("\n"), (err: Error) => err.message);
        assert.match(said, /has a query string or fragment/);
        assert.doesNotMatch(said, /sekrit/);
    });
});
