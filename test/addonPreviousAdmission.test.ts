/**
 * The e2e's upgrade path (tools/e2e/steps/dev.ts) installs every add-on at its previous version
 * (tools/e2e/steps/addons.ts PREVIOUS) with the values the program emits, beside the stack's own
 * admission policies, then upgrades to the pins. A pod of the previous chart the policies refuse is
 * refused at creation, or, created before the policies, can never lose its Job tracking finalizer
 * (the update is refused too): vpa 4.6.0's certgen hook Jobs (the chart's default securityContext
 * is empty) kept the install waiting until its timeout. With OPS_CHART_SOURCES and OPS_HELM, every
 * pod of each previous version, rendered with the emitted values, is admitted by both enforcement
 * points; skipped without them, saying so.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { AddonKey, addonSpecs } from "../components/platform/addons";
import { renderChart } from "../tools/admission/charts";
import { judge } from "../tools/admission/judge";
import { operatorStatefulSets } from "../tools/admission/operatorPods";
import { PREVIOUS } from "../tools/e2e/steps/addons";
import { offlineStackConfig } from "../tools/genGitops";

const HELM = process.env.OPS_HELM;
const SOURCES = process.env.OPS_CHART_SOURCES;
const skip = !HELM || !SOURCES ? "set OPS_CHART_SOURCES (a folder with <chart>-<version>/ chart sources) and OPS_HELM (a helm binary) to judge the previous add-on charts" : false;

test("helm template of each add-on's previous version (the e2e's upgrade path, dev) with the emitted values: every object admitted by both points", { skip }, () => {
    const cfg = offlineStackConfig("dev", "placeholder");
    for (const [key, spec] of Object.entries(addonSpecs(cfg)) as [AddonKey, ReturnType<typeof addonSpecs>[AddonKey]][]) {
        const chart = cfg.addons[key].chart;
        const previous = PREVIOUS[chart];
        assert.ok(previous, `no previous version of ${chart} in tools/e2e/steps/addons.ts`);
        const dir = path.join(SOURCES!, `${chart}-${previous}`);
        assert.ok(fs.existsSync(path.join(dir, "Chart.yaml")), `${dir}/Chart.yaml`);
        const rendered = renderChart(HELM!, dir, { releaseName: spec.release, namespace: spec.namespace, values: spec.values });
        const j = judge("dev", cfg.environment.tier, [...rendered, ...operatorStatefulSets(rendered)]);
        assert.ok(j.podObjects > 0, `${chart} ${previous}`);
        assert.deepEqual(j.denials, [], `${chart} ${previous}`);
    }
});
