/**
 * The policy pack over this program's own stacks: every stack (ci, dev, prod) passes their constraint sets and the
 * specification's rules with no mandatory (deny) violation, through the same in-process
 * evaluation as `npm run render`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { stackResourcesOf } from "../policies/pack/render";
import { loadPackConfig, mandatory, runPack, verdict } from "../policies/pack/run";
import { listStacks } from "../cli/harness/stackConfig";
import { renderStack } from "./render";

for (const stack of listStacks()) {
    test(`the ${stack} stack has no mandatory violation of its constraint set and the spec rules`, async () => {
        const rendered = await renderStack(stack);
        assert.deepEqual(rendered.errors, [], `the ${stack} render failed`);
        const result = runPack(stackResourcesOf(rendered), loadPackConfig(stack));
        assert.ok(result.policies.includes("gatekeeper-deny") && result.policies.includes("no-plaintext-secrets"), `policies that ran: ${result.policies.join(", ")}`);
        assert.deepEqual(mandatory(result), [], verdict(result));
    });
}

test("the prod evaluation is not vacuous: a tag-only image in a rendered Deployment is denied twice", async () => {
    const rendered = await renderStack("prod");
    const resources = structuredClone(stackResourcesOf(rendered));
    const app = resources.find((r) => r.type === "kubernetes:apps/v1:Deployment");
    assert.ok(app, "the prod stack has a Deployment");
    app.props.spec.template.spec.containers[0].image = "registry.example.com/ops/agent-server:1.2.26";
    const denied = mandatory(runPack(resources, loadPackConfig("prod"))).filter((v) => v.urn === app.urn);
    assert.deepEqual(denied.map((v) => v.policy).sort(), ["gatekeeper-deny", "images-pinned-by-digest"], verdict(runPack(resources, loadPackConfig("prod"))));
});
