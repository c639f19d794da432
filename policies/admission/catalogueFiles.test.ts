import assert from "node:assert/strict";
import { test } from "node:test";
import { loadCatalogue } from "./catalogue";

test("a missing constraint file is named with the pack setting that points at it, not a raw ENOENT (issue 22)", () => {
    assert.throws(
        () => loadCatalogue({ deny: "constraints/prod.yaml", warn: "constraints/no-such-file.yaml", dryrun: "constraints/prod.yaml" }),
        (err: Error) => /the constraint file .*constraints\/no-such-file\.yaml \(gatekeeper-warn\.constraints, relative to policies\/\) does not exist/.test(err.message) && !/ENOENT/.test(err.message),
    );
});
