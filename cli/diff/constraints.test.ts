/**
 * A shrinking constraint set is a decision a reviewer must see (issue 30): the diff lists the
 * Gatekeeper constraints a change removes, adds or moves to another enforcement action, per
 * stack, from each side's pack config and constraint file.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { constraintEntries, diffConstraints } from "./constraints";
import { renderMarkdown } from "./markdown";
import type { StackDiffReport } from "./report";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "diff-constraints-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const constraint = (kind: string, name: string, action: string) => `---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n  enforcementAction: ${action}\n`;

function side(name: string, constraintsYaml: string, dryrun: unknown = { constraints: "constraints/dev.yaml" }): string {
    const root = path.join(tmp, name);
    fs.mkdirSync(path.join(root, "policies", "config"), { recursive: true });
    fs.mkdirSync(path.join(root, "policies", "constraints"), { recursive: true });
    fs.writeFileSync(path.join(root, "policies", "constraints", "dev.yaml"), constraintsYaml);
    fs.writeFileSync(path.join(root, "policies", "config", "dev.json"), JSON.stringify({ "gatekeeper-deny": { constraints: "constraints/dev.yaml" }, "gatekeeper-warn": { constraints: "constraints/dev.yaml" }, "gatekeeper-dryrun": dryrun }));
    return root;
}

test("removed, added and re-enforced constraints are listed", () => {
    const base = side("base", constraint("K8sAllowedRepos", "allowed-repos", "deny") + constraint("K8sRequiredLabels", "labels", "warn") + constraint("K8sBlockNodePort", "node-ports", "dryrun"));
    const head = side("head", constraint("K8sRequiredLabels", "labels", "dryrun") + constraint("K8sHttpsOnly", "https", "deny"));
    const d = diffConstraints(constraintEntries(base, "dev"), constraintEntries(head, "dev"));
    assert.deepEqual(d.removed, ["K8sAllowedRepos/allowed-repos (deny)", "K8sBlockNodePort/node-ports (dryrun)"]);
    assert.deepEqual(d.added, ["K8sHttpsOnly/https (deny)"]);
    assert.deepEqual(d.changed, ["K8sRequiredLabels/labels: warn -> dryrun"]);
});

test("emptying the constraint file or disabling a gatekeeper policy shows every constraint it switches off", () => {
    const base = side("base2", constraint("K8sAllowedRepos", "allowed-repos", "deny") + constraint("K8sBlockNodePort", "node-ports", "dryrun"));
    const emptied = side("emptied", "# nothing\n");
    assert.deepEqual(diffConstraints(constraintEntries(base, "dev"), constraintEntries(emptied, "dev")).removed, ["K8sAllowedRepos/allowed-repos (deny)", "K8sBlockNodePort/node-ports (dryrun)"]);
    const disabled = side("disabled", constraint("K8sAllowedRepos", "allowed-repos", "deny") + constraint("K8sBlockNodePort", "node-ports", "dryrun"), "disabled");
    assert.deepEqual(diffConstraints(constraintEntries(base, "dev"), constraintEntries(disabled, "dev")).changed, ["K8sBlockNodePort/node-ports: dryrun -> off (gatekeeper-dryrun disabled)"]);
});

test("the Markdown report shows the removed constraints before the objects", () => {
    const report: StackDiffReport = {
        stack: "dev",
        base: { ref: "main", commit: "abc", problems: [] },
        head: { ref: "working tree", problems: [] },
        notes: [],
        objects: { added: [], removed: [], changed: [], unchangedCount: 3 } as any,
        policy: { available: true, appeared: [], disappeared: [], unchangedCount: 0 },
        constraints: { removed: ["K8sAllowedRepos/allowed-repos (deny)"], added: [], changed: [] },
    };
    const md = renderMarkdown(report);
    assert.match(md, /#### Gatekeeper constraints\n\nRemoved \(1\):\n\n- `K8sAllowedRepos\/allowed-repos \(deny\)`/);
    assert.match(md, /### Stack `dev`: .*1 constraint removed/);
});
