import assert from "node:assert/strict";
import { test } from "node:test";
import { childApp, parentApp, repository } from "../pack/gitopsFixture";
import { messagesOf } from "../pack/testing";
import { rule } from "./gitops-project-default";

test("parent and children in project default pass", () => {
    const repo = repository([childApp()]);
    try {
        assert.deepEqual(messagesOf(rule, [parentApp()], { repositoryRoot: repo.root }), []);
    } finally {
        repo.remove();
    }
});

test("another project, on the parent or on a child, fails", () => {
    const child = childApp();
    child.spec.project = "platform";
    const repo = repository([child]);
    try {
        const parent = parentApp();
        delete parent.spec.project;
        const messages = messagesOf(rule, [parent], { repositoryRoot: repo.root });
        assert.equal(messages.length, 2);
        assert.match(messages.join("\n"), /uses project "platform"/);
    } finally {
        repo.remove();
    }
});
