import assert from "node:assert/strict";
import { test } from "node:test";
import { childApp, parentApp, repository } from "../pack/gitopsFixture";
import { messagesOf } from "../pack/testing";
import { chartRevisionProblem, gitRevisionProblem, rule } from "./gitops-pinned-revision";

test("a parent tracking main (section 1.2) and a child pinned to an exact chart version pass", () => {
    const repo = repository([childApp("uptime", "2.19.0"), childApp("cert-manager", "v1.16.2")]);
    try {
        assert.deepEqual(messagesOf(rule, [parentApp()], { repositoryRoot: repo.root }), []);
    } finally {
        repo.remove();
    }
});

test("a child chart on latest, *, a range or without a version fails, read from the parent's path", () => {
    for (const revision of ["latest", "*", "^1.2.0", "~1", "1.x", ">=1.0.0", "", "1.2"]) {
        const repo = repository([childApp("uptime", revision)]);
        try {
            const messages = messagesOf(rule, [parentApp()], { repositoryRoot: repo.root });
            assert.equal(messages.length, 1, revision);
            assert.match(messages[0], /uptime \(gitops\/prod\/uptime.yaml\)/);
        } finally {
            repo.remove();
        }
    }
});

test("a parent on HEAD or on an untracked branch fails", () => {
    const parent = parentApp();
    parent.spec.source.targetRevision = "HEAD";
    assert.match(messagesOf(rule, [parent], { repositoryRoot: "/nonexistent" })[0], /follows HEAD/);
    parent.spec.source.targetRevision = "develop";
    assert.match(messagesOf(rule, [parent], { repositoryRoot: "/nonexistent" })[0], /branch or range/);
});

test("git revisions: tags and commits are pins; a branch is allowed only where tracked", () => {
    assert.equal(gitRevisionProblem("v1.4.0", undefined), undefined);
    assert.equal(gitRevisionProblem("3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a", undefined), undefined);
    assert.notEqual(gitRevisionProblem("main", undefined), undefined);
    assert.equal(gitRevisionProblem("main", ["main"]), undefined);
    assert.equal(chartRevisionProblem("24.8.4"), undefined);
});
