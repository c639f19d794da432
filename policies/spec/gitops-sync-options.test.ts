import assert from "node:assert/strict";
import { test } from "node:test";
import { childApp, parentApp, repository } from "../pack/gitopsFixture";
import { messagesOf } from "../pack/testing";
import { rule } from "./gitops-sync-options";

test("the four sync options of section 2.7 pass, in any order and with others", () => {
    const parent = parentApp();
    parent.spec.syncPolicy.syncOptions.reverse().push("PruneLast=true");
    assert.deepEqual(messagesOf(rule, [parent], { repositoryRoot: "/nonexistent" }), []);
});

test("a missing option, or ApplyOutOfSyncOnly=true instead of false, fails", () => {
    const parent = parentApp();
    parent.spec.syncPolicy.syncOptions = ["CreateNamespace=true", "ServerSideApply=true", "ApplyOutOfSyncOnly=true", "RespectIgnoreDifferences=true"];
    assert.match(messagesOf(rule, [parent], { repositoryRoot: "/nonexistent" })[0], /lacks sync options ApplyOutOfSyncOnly=false/);
    delete parent.spec.syncPolicy;
    assert.match(messagesOf(rule, [parent], { repositoryRoot: "/nonexistent" })[0], /has none/);
});

test("children in the repository are checked too", () => {
    const child = childApp();
    child.spec.syncPolicy.syncOptions = ["CreateNamespace=true"];
    const repo = repository([child]);
    try {
        assert.match(messagesOf(rule, [parentApp()], { repositoryRoot: repo.root })[0], /uptime \(gitops\/prod\/uptime.yaml\) lacks/);
    } finally {
        repo.remove();
    }
});
