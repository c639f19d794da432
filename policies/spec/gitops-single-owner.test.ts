import assert from "node:assert/strict";
import { test } from "node:test";
import { childApp, parentApp, repository } from "../pack/gitopsFixture";
import { messagesOf } from "../pack/testing";
import { rule } from "./gitops-single-owner";

test("a parent in the stack owning children in the repository passes", () => {
    const repo = repository([childApp("uptime"), childApp("chat")]);
    try {
        assert.deepEqual(messagesOf(rule, [parentApp()], { repositoryRoot: repo.root }), []);
    } finally {
        repo.remove();
    }
});

test("a child Application created directly by the stack fails (second owner), and is named twice when also in the repository", () => {
    assert.match(messagesOf(rule, [parentApp(), childApp("uptime")], { repositoryRoot: "/nonexistent" })[0], /created directly by the stack/);
    const repo = repository([childApp("uptime")]);
    try {
        const messages = messagesOf(rule, [parentApp(), childApp("uptime")], { repositoryRoot: repo.root });
        assert.equal(messages.length, 2);
        assert.match(messages[1], /also created directly by the stack: two owners/);
    } finally {
        repo.remove();
    }
});

test("a child read by two parents (overlapping paths) or declared in two files fails", () => {
    const repo = repository([childApp("uptime")]);
    try {
        const wide = parentApp();
        wide.metadata!.name = "all-apps";
        wide.spec.source.path = "gitops";
        wide.spec.source.directory = { recurse: true };
        assert.match(messagesOf(rule, [parentApp(), wide], { repositoryRoot: repo.root })[0], /read by 2 parents/);
        repo.write("gitops/prod/uptime-copy.yaml", childApp("uptime"));
        assert.match(messagesOf(rule, [parentApp()], { repositoryRoot: repo.root })[0], /uptime(-copy)?\.yaml\) is declared again, first in gitops\/prod\/uptime/);
    } finally {
        repo.remove();
    }
});

test("only files the parent's directory include/exclude select are its children", () => {
    const repo = repository([childApp("uptime")]);
    try {
        repo.write("gitops/prod/extra/uptime.yml", childApp("uptime"));
        const parent = parentApp();
        parent.spec.source.directory = { recurse: true, include: "{*.yaml,extra/*.yml}" };
        assert.match(messagesOf(rule, [parent], { repositoryRoot: repo.root })[0], /declared again/);
        parent.spec.source.directory.exclude = "extra/*";
        assert.deepEqual(messagesOf(rule, [parent], { repositoryRoot: repo.root }), []);
    } finally {
        repo.remove();
    }
});
