/**
 * Silent switches of the policy pack (issue 30): an emptied constraint file switched off every
 * Gatekeeper constraint and the admission policies generated from it, with "render ok"; an
 * auditLog of the dryrun policy wrote wherever it pointed, relative to policies/ (../README.md).
 * Both are refused, naming the file and the expected form.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { loadCatalogue } from "../admission/catalogue";
import { PackConfigError, validatePackConfig } from "./config";
import { packPolicies } from "./policies";
import { loadPackConfig } from "./run";
import { PACK_DIR } from "./paths";

const FILE = "policies/config/test.json";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "constraint-safety-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const problemsOf = (config: unknown): string => {
    try {
        validatePackConfig(config, FILE, packPolicies);
    } catch (err) {
        assert.ok(err instanceof PackConfigError, String(err));
        return err.message;
    }
    return "";
};

/** The prod config with every gatekeeper policy pointing at `file` (absolute). */
function withConstraints(file: string): Record<string, any> {
    const config = structuredClone(loadPackConfig("prod")) as Record<string, any>;
    for (const action of ["deny", "warn", "dryrun"]) config[`gatekeeper-${action}`] = { ...config[`gatekeeper-${action}`], constraints: file };
    return config;
}

for (const [what, text] of [
    ["an empty file", ""],
    ["comments only", "# emptied\n"],
    ["only the Config", fs.readFileSync(path.join(PACK_DIR, "constraints", "dev.yaml"), "utf8").split("\n---\n")[0] + "\n"],
] as const) {
    test(`a constraint file with no constraints (${what}) is refused by the pack and by the admission catalogue`, () => {
        const file = path.join(tmp, `empty-${what.replace(/\W+/g, "-")}.yaml`);
        fs.writeFileSync(file, text);
        assert.match(problemsOf(withConstraints(file)), /gatekeeper-deny\.constraints: .*holds no constraints: an empty set would switch off every Gatekeeper constraint and the admission policies generated from them/);
        assert.throws(() => loadCatalogue({ deny: file, warn: file, dryrun: file }), /holds no constraints/);
    });
}

test("the committed constraint files hold constraints (dev and prod)", () => {
    for (const tier of ["dev", "prod"]) {
        const file = `constraints/${tier}.yaml`;
        assert.ok(loadCatalogue({ deny: file, warn: file, dryrun: file }).constraints.length > 10, tier);
    }
});

test("auditLog is a .jsonl file inside the pack directory or an absolute path: ../README.md and source files are refused", () => {
    for (const bad of ["../README.md", "../../x.jsonl", "README.md", "index.ts", "audit/../../a.jsonl", ""]) {
        const config = structuredClone(loadPackConfig("prod")) as Record<string, any>;
        config["gatekeeper-dryrun"] = { ...config["gatekeeper-dryrun"], auditLog: bad };
        assert.match(problemsOf(config), /gatekeeper-dryrun\.auditLog: .*expected a JSON lines file ending in \.jsonl/, bad);
    }
    for (const ok of ["audit/dryrun.jsonl", path.join(tmp, "audit.jsonl")]) {
        const config = structuredClone(loadPackConfig("prod")) as Record<string, any>;
        config["gatekeeper-dryrun"] = { ...config["gatekeeper-dryrun"], auditLog: ok };
        assert.equal(problemsOf(config), "", ok);
    }
});
