/**
 * Runs gator (Gatekeeper's CLI, built by tools/gatekeeper/build.sh) on one batch of documents:
 * templates, constraints, expansion templates and objects in one file, `gator test -o json
 * --enable-k8s-native-validation=false` (the Rego of every template, as Gatekeeper's own
 * constraint framework runs it; `native` keeps gator's default, where a template with CEL code is
 * judged by its CEL), and reads back every violation with the object and constraint it belongs to.
 * ensureGator finds the binary, building it when the tool cache lacks it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const REPO = path.resolve(__dirname, "..", "..");

export interface GatorViolation {
    constraintKind: string;
    constraintName: string;
    enforcementAction: string;
    /** kind/namespace/name of the reviewed object (the workload for a violation of its pod template). */
    object: string;
    message: string;
}

export type GatorRun = { ok: true; violations: GatorViolation[] } | { ok: false; error: string };

export const objectKey = (o: { kind?: string; metadata?: { namespace?: string; name?: string } | null }) =>
    `${o.kind ?? ""}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/**
 * The expansion Gatekeeper applies to workloads (ExpansionTemplate objects, as in Gatekeeper's
 * docs): each workload kind the pack expands (policies/gatekeeper/engine/expansion.ts) yields the
 * Pod of its pod template, judged by the constraints that match Pod.
 */
export const EXPANSION_TEMPLATES = [
    {
        apiVersion: "expansion.gatekeeper.sh/v1beta1",
        kind: "ExpansionTemplate",
        metadata: { name: "expand-workloads" },
        spec: {
            applyTo: [
                { groups: ["apps"], kinds: ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"], versions: ["v1"] },
                { groups: [""], kinds: ["ReplicationController"], versions: ["v1"] },
                { groups: ["batch"], kinds: ["Job"], versions: ["v1"] },
            ],
            templateSource: "spec.template",
            generatedGVK: { kind: "Pod", group: "", version: "v1" },
        },
    },
    {
        apiVersion: "expansion.gatekeeper.sh/v1beta1",
        kind: "ExpansionTemplate",
        metadata: { name: "expand-cronjobs" },
        spec: {
            applyTo: [{ groups: ["batch"], kinds: ["CronJob"], versions: ["v1"] }],
            templateSource: "spec.jobTemplate.spec.template",
            generatedGVK: { kind: "Pod", group: "", version: "v1" },
        },
    },
];

/** `native`: also run templates' CEL (K8sNativeValidation), gator's default, which judges a template with both by its CEL. */
export function runGator(gator: string, docs: readonly unknown[], timeoutMs = 600_000, native = false): GatorRun {
    const dir = mkdtempSync(path.join(tmpdir(), "gator-batch-"));
    try {
        const file = path.join(dir, "batch.yaml");
        writeFileSync(file, docs.map((d) => JSON.stringify(d)).join("\n---\n") + "\n");
        if (process.env.GATOR_KEEP_BATCH) writeFileSync(path.join(process.env.GATOR_KEEP_BATCH, `batch-${Date.now()}-${process.pid}.yaml`), readFileSync(file));
        const r = spawnSync(gator, ["test", "-f", file, "-o", "json", `--enable-k8s-native-validation=${native}`], {
            encoding: "utf8",
            maxBuffer: 1024 * 1024 * 1024,
            timeout: timeoutMs,
        });
        if (r.error) return { ok: false, error: `gator: ${r.error.message}` };
        // Exit 1 means "a deny constraint is violated"; anything else unparsable is an error.
        const out = r.stdout.trim();
        if (!out.startsWith("[") && !out.startsWith("null")) return { ok: false, error: (r.stderr || r.stdout).trim().slice(0, 2000) || `gator exited ${r.status} and printed nothing` };
        let parsed: any[];
        try {
            parsed = out.startsWith("null") ? [] : JSON.parse(out.slice(0, out.lastIndexOf("]") + 1));
        } catch (err) {
            return { ok: false, error: `gator printed no JSON: ${(err as Error).message}: ${(r.stderr || out).slice(0, 500)}` };
        }
        if (r.status !== 0 && r.status !== 1) return { ok: false, error: `gator exited ${r.status}: ${r.stderr.trim().slice(0, 2000)}` };
        return {
            ok: true,
            violations: (parsed ?? []).map((v) => ({
                constraintKind: v.constraint?.kind ?? "",
                constraintName: v.constraint?.metadata?.name ?? "",
                enforcementAction: v.enforcementAction ?? "",
                object: objectKey(v.violatingObject ?? {}),
                message: v.msg ?? "",
            })),
        };
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/** The gator binary: `explicit`, else the tool cache's, built from the Go module proxy when missing. */
export function ensureGator(explicit: string | undefined): string {
    if (explicit) return explicit;
    const build = path.join(__dirname, "build.sh");
    const where = spawnSync("bash", [build, "--path"], { encoding: "utf8" }).stdout.trim();
    if (existsSync(where)) return where;
    console.log(`gatekeeper: gator is not in the tool cache (${where}); building it from the Go module proxy (about 10 min on 2 cores)`);
    const r = spawnSync("bash", [build, "gator"], { stdio: "inherit" });
    if (r.status !== 0 || !existsSync(where)) throw new Error(`building gator failed (bash ${path.relative(REPO, build)} gator)`);
    return where;
}
