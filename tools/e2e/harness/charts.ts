/**
 * The real charts for the e2e: their sources, fetched by hand (never part of the repository), in
 * the folder OPS_CHART_SOURCES names, one `<chart>-<version>/` per pin (the layout of
 * `npm run admission:charts`), and helm (OPS_HELM, or the one `bash tools/e2e/build.sh helm`
 * builds into the cache). Each chart is checked against its pin (name and version in its
 * Chart.yaml) before it is used.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import type { K8sObject } from "../objects";
import type { Context } from "./context";

/** Kinds without a namespace that charts render (the release namespace is not filled in for them). */
export const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume", "StorageClass", "PriorityClass", "IngressClass",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ClusterIssuer"]);

export interface ChartSources {
    dir: string;
    helm: string;
}

/** The sources and helm, or why the real-chart steps cannot run (said as the skip reason). */
export function chartSources(ctx: Context, env: NodeJS.ProcessEnv = process.env): ChartSources | { missing: string } {
    const dir = env.OPS_CHART_SOURCES;
    if (!dir) return { missing: "OPS_CHART_SOURCES is not set: it names a folder with the pinned charts' sources, <chart>-<version>/ (docs/e2e.md)" };
    if (!fs.existsSync(dir)) return { missing: `OPS_CHART_SOURCES=${dir}: no such folder` };
    const helm = env.OPS_HELM ?? ctx.bin("helm", ctx.helmVersion);
    if (!fs.existsSync(helm)) return { missing: `no helm at ${helm}: set OPS_HELM or build it with bash tools/e2e/build.sh helm` };
    return { dir, helm };
}

/** The source folder of a pinned chart, checked: its Chart.yaml names exactly the pin. */
export function pinnedChart(src: ChartSources, chart: string, version: string): string {
    const dir = path.join(src.dir, `${chart}-${version}`);
    const file = path.join(dir, "Chart.yaml");
    if (!fs.existsSync(file)) throw new Error(`${file}: no such file (the source of ${chart} ${version})`);
    const meta = YAML.parse(fs.readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (meta.name !== chart || String(meta.version) !== version) throw new Error(`${file}: name ${meta.name} version ${meta.version}, the pin is ${chart} ${version}`);
    return dir;
}

/** `helm template` of a release, as Argo CD renders a helm source (tests left out: Argo CD never runs them). */
export async function helmTemplate(ctx: Context, src: ChartSources, chartDir: string, release: { releaseName: string; namespace: string; values: unknown }): Promise<K8sObject[]> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-values-"));
    try {
        fs.writeFileSync(path.join(tmp, "values.yaml"), typeof release.values === "string" ? release.values : YAML.stringify(release.values));
        const r = await ctx.run(src.helm, ["template", release.releaseName, chartDir, "--namespace", release.namespace, "--skip-tests", "--kube-version", ctx.tools.k8s, "-f", path.join(tmp, "values.yaml")], { quiet: true });
        return YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as K8sObject).filter((o) => o && o.kind)
            .map((o) => (CLUSTER_SCOPED.has(String(o.kind)) ? o : { ...o, metadata: { ...o.metadata, namespace: o.metadata?.namespace ?? release.namespace } }));
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}
