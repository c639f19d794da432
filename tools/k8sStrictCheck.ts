/**
 * npm run check:k8s [-- --stack dev]: renders each stack (default: all) and validates manifests.yaml
 * and the stack's committed gitops/ files with ../shared/tools/k8s-strict-check.py against the
 * Kubernetes 1.35 API and the CRDs of the pinned charts (`--k8s 1.35 --crds deployed`), the way the API
 * server validates under strict field validation. A field or API newer than the stack's
 * environmentKubernetesMinVersion counts as a problem too (the script reports those as warnings
 * naming the release that added them). Exit 1 on any problem; needs python3 with PyYAML.
 */
import { spawnSync } from "child_process";
import * as YAML from "yaml";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { compareVersions, SCHEMA_VERSION } from "../config/kubernetesVersion";
import { render } from "../cli/harness/render";
import { listStacks, REPO_ROOT } from "../cli/harness/stackConfig";
import { gitopsFolder, offlineStackConfig } from "./genGitops";

export const STRICT_CHECK_SCRIPT = path.resolve(REPO_ROOT, "..", "shared", "tools", "k8s-strict-check.py");

export const strictCheckArgs = (files: string[]) => [STRICT_CHECK_SCRIPT, "--k8s", SCHEMA_VERSION, "--crds", "deployed", ...files];

export interface StrictVerdict {
    problems: string[];
    /** The script's own count ("k8s-strict: N objects, N problems"). */
    objects: number;
    warnings: number;
}

const NEWER = /(?:in the Kubernetes API since|is served since Kubernetes) (1\.\d+)/;

/** Reads the script's output: its problems, plus every newer-than-minVersion field or API warning as a problem. */
export function judgeStrictOutput(output: string, minVersion: string): StrictVerdict {
    const problems: string[] = [];
    let objects = -1;
    let warnings = 0;
    let counted = -1;
    for (const line of output.split("\n").filter(Boolean)) {
        const summary = /^k8s-strict: (\d+) objects, (\d+) problems/.exec(line);
        if (summary) {
            objects = Number(summary[1]);
            counted = Number(summary[2]);
            continue;
        }
        if (line.startsWith("k8s-strict:")) continue;
        if (line.startsWith("warning: ")) {
            warnings++;
            const m = NEWER.exec(line);
            if (m && compareVersions(m[1], minVersion) > 0) problems.push(`${line.slice("warning: ".length)} (needs Kubernetes ${m[1]}, the stack's minimum is ${minVersion})`);
            continue;
        }
        problems.push(line);
    }
    if (objects < 0) problems.push("k8s-strict-check.py printed no summary line (k8s-strict: N objects, N problems)");
    else if (counted !== problems.filter((p) => !p.includes("the stack's minimum is")).length) problems.push(`the script counted ${counted} problem(s)`);
    return { problems, objects, warnings };
}

/**
 * The shared schemas have no admissionregistration.k8s.io group, so its objects (the generated
 * ValidatingAdmissionPolicies and bindings) are left out here; the render checks them against the
 * kubernetes-models schemas and `npm run e2e` has a real kube-apiserver accept them.
 */
export const UNCOVERED_GROUPS = ["admissionregistration.k8s.io/"];

export function withoutUncoveredGroups(manifests: string): { manifests: string; left: number } {
    const docs = YAML.parseAllDocuments(manifests);
    const keep = docs.filter((d) => !UNCOVERED_GROUPS.some((g) => String((d.toJS() as { apiVersion?: string } | null)?.apiVersion ?? "").startsWith(g)));
    return { manifests: keep.map((d) => d.toString()).join(""), left: docs.length - keep.length };
}

export function strictCheckStack(stack: string, allManifests: string): StrictVerdict & { left: number } {
    const { manifests, left } = withoutUncoveredGroups(allManifests);
    const cfg = offlineStackConfig(stack);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `k8s-strict-${stack}-`));
    try {
        const manifestFile = path.join(dir, "manifests.yaml");
        fs.writeFileSync(manifestFile, manifests);
        const gitops = gitopsFolder(cfg);
        const gitopsFiles = fs.existsSync(gitops) ? fs.readdirSync(gitops).filter((f) => f.endsWith(".yaml")).sort().map((f) => path.join(gitops, f)) : [];
        const run = spawnSync("python3", strictCheckArgs([manifestFile, ...gitopsFiles]), { encoding: "utf8" });
        if (run.error) throw new Error(`python3 ${STRICT_CHECK_SCRIPT}: ${run.error.message} (needs python3 with PyYAML: apt-get install python3-yaml)`);
        if (run.status === 2) throw new Error(`k8s-strict-check.py could not read its input:\n${run.stderr}${run.stdout}`);
        return { ...judgeStrictOutput(`${run.stdout}\n${run.stderr}`, cfg.environment.kubernetesMinVersion), left };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

async function main() {
    const argv = process.argv.slice(2);
    const i = argv.indexOf("--stack");
    const stacks = i >= 0 ? [argv[i + 1]] : listStacks();
    if (!fs.existsSync(STRICT_CHECK_SCRIPT)) throw new Error(`${STRICT_CHECK_SCRIPT} is missing: clone the repository next to shared/`);
    let failed = 0;
    for (const stack of stacks) {
        const r = await render(stack);
        if (r.errors.length) throw new Error(`the ${stack} render has errors:\n${r.errors.join("\n")}`);
        const v = strictCheckStack(stack, r.manifests);
        for (const p of v.problems) console.log(`${stack}: ${p}`);
        console.log(`${stack}: k8s-strict (Kubernetes ${SCHEMA_VERSION} + deployed CRDs, minimum ${offlineStackConfig(stack).environment.kubernetesMinVersion}): ${v.objects} objects, ${v.problems.length} problems, ${v.warnings} warnings; ${v.left} admissionregistration.k8s.io object(s) not in the shared schemas, checked by the render and by npm run e2e's API server`);
        failed += v.problems.length;
    }
    process.exit(failed ? 1 : 0);
}

if (require.main === module) {
    main().catch((err) => {
        console.error(err instanceof Error ? err.message : err);
        process.exit(2);
    });
}
