/**
 * npm run admission:charts -- --helm <helm binary> --charts <folder with <chart>-<version>/ sources> [--stack S]
 *
 * Renders each pinned GitOps child chart with the values the program writes for the stack
 * (`helm template`, helm test hooks left out: Argo CD never runs them) and judges every object with
 * both enforcement points (tools/admission/judge.ts). Prints per chart: objects, pods judged, pods
 * denied, and every denial. prod is judged with the images as they run once the lock records their
 * digests (the offline placeholder), and again as committed (tag-only where no digest is recorded).
 * --addons also renders the add-on charts with the values the program gives their Releases and
 * judges them the same way (no add-on namespace is excluded by the Gatekeeper Config; the scoped
 * exceptions are named constraints, docs/admission.md).
 * Needs helm and the chart sources, which this repository never contains; exit 1 on any denial
 * (of a child as it runs, of an add-on object).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { childApps } from "../../components/platform/gitopsChildren";
import { AddonKey, addonSpecs } from "../../components/platform/addons";
import { offlineStackConfig } from "../genGitops";
import { listStacks } from "../../cli/harness/stackConfig";
import { SCHEMA_VERSION } from "../../config/kubernetesVersion";
import { judge, POD_KINDS } from "./judge";
import { operatorStatefulSets } from "./operatorPods";

/** The objects `helm template` renders for a release (namespace filled in where the chart leaves it out). */
export function renderChart(helm: string, chartDir: string, release: { releaseName: string; namespace: string; values: unknown }, kubeVersion = `${SCHEMA_VERSION}.0`): K8sObject[] {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chart-values-"));
    try {
        fs.writeFileSync(path.join(dir, "values.yaml"), YAML.stringify(release.values));
        const out = execFileSync(helm, ["template", release.releaseName, chartDir, "--namespace", release.namespace, "--skip-tests", "--kube-version", kubeVersion, "-f", path.join(dir, "values.yaml")], { encoding: "utf8", maxBuffer: 64 << 20 });
        return YAML.parseAllDocuments(out).map((d) => d.toJSON()).filter((o) => o && o.kind)
            .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata?.namespace ?? release.namespace } }));
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

function main(argv: string[]): number {
    const arg = (n: string) => (argv.indexOf(n) >= 0 ? argv[argv.indexOf(n) + 1] : undefined);
    const helm = arg("--helm");
    const charts = arg("--charts");
    if (!helm || !charts) {
        console.error("usage: npm run admission:charts -- --helm <helm> --charts <folder of <chart>-<version>/> [--stack S]");
        return 2;
    }
    const stacks = arg("--stack") ? [arg("--stack")!] : listStacks();
    let denied = 0;
    for (const stack of stacks) {
        const modes = offlineStackConfig(stack).environment.tier === "prod" ? (["placeholder", "tag"] as const) : (["tag"] as const);
        for (const mode of modes) {
            const cfg = offlineStackConfig(stack, mode);
            for (const app of childApps(cfg)) {
                const objects = renderChart(helm, path.join(charts, `${app.chart}-${app.version}`), app);
                const j = judge(stack, cfg.environment.tier, objects);
                const label = mode === "placeholder" ? " (lock filled)" : cfg.environment.tier === "prod" ? " (as committed, no digest recorded)" : "";
                console.log(`${stack}${label} ${app.chart} ${app.version}: ${objects.length} objects, pods judged ${j.podObjects} (${objects.filter((o) => POD_KINDS.has(String(o.kind))).map((o) => o.kind).join(", ")}), pods denied ${j.deniedPodObjects}, denials ${j.denials.length}`);
                for (const d of j.denials) console.log(`  ${d}`);
                if (mode !== "tag" || cfg.environment.tier !== "prod") denied += j.denials.length;
            }
        }
    }
    if (argv.includes("--addons")) {
        for (const stack of stacks) {
            const cfg = offlineStackConfig(stack, "placeholder");
            for (const [key, spec] of Object.entries(addonSpecs(cfg)) as [AddonKey, ReturnType<typeof addonSpecs>[AddonKey]][]) {
                const pin = cfg.addons[key];
                const dir = path.join(charts, `${pin.chart}-${pin.version}`);
                if (!fs.existsSync(path.join(dir, "Chart.yaml"))) {
                    console.log(`${stack} add-on ${pin.chart} ${pin.version}: no chart source at ${dir}`);
                    denied++;
                    continue;
                }
                const rendered = renderChart(helm, dir, { releaseName: spec.release, namespace: spec.namespace, values: spec.values });
                // The Prometheus operator's StatefulSets (never rendered by helm), as tools/admission/operatorPods.ts models them.
                const objects = [...rendered, ...operatorStatefulSets(rendered)];
                const j = judge(stack, cfg.environment.tier, objects);
                const pods = j.denials.filter((d) => POD_KINDS.has(d.split(" ")[0]));
                console.log(`${stack}${cfg.environment.tier === "prod" ? " (lock filled)" : ""} add-on ${pin.chart} ${pin.version} (namespace ${spec.namespace}): ${objects.length} objects, pods judged ${j.podObjects}, pods denied ${j.deniedPodObjects}, denials ${j.denials.length} (${pods.length} on pods)`);
                for (const d of j.denials) console.log(`  ${d}`);
                denied += j.denials.length;
            }
        }
    }
    return denied === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
