/**
 * How far the pack could judge a team template by its CEL (issue 32): the library's templates
 * that carry CEL code (engine K8sNativeValidation), taken as if they were a team's, judged on
 * every case of their suites by the offline CEL route (policies/cel/judge.ts)
 * and by gator with its CEL driver on (its default: a template with both is judged by its CEL,
 * as the cluster judges it).
 *
 *   npm run -s gatekeeper:cel-agree -- --library DIR [--gator BIN] [--show 40]
 *
 * Prints each difference with its class, the counts per class and `cel: N agree, N differ`;
 * exit 1 on any difference, 2 when it cannot run.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { compileMatch } from "../../policies/gatekeeper/engine/match";
import { parseApiVersion } from "../../policies/gatekeeper/engine/gvk";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { celSourceError, judgeCel } from "../../policies/cel/judge";
import { parseCel, type CelSource } from "../../policies/cel/source";
import { objectKey, runGator } from "./gator";
import { readLibrary, type LibraryCase } from "./library";

const REPO = path.resolve(__dirname, "..", "..");

function arg(name: string): string | undefined {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
}

const sorted = (l: string[]) => [...l].sort();
const same = (a: string[], b: string[]) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

/** Gatekeeper's match (the client matches before any driver runs), on the object as gator reviews it. */
function matches(c: LibraryCase, namespaces: K8sObject[]): boolean {
    const m = compileMatch((c.constraint.spec as any)?.match, `${c.id} constraint`);
    const o = c.object;
    const { group } = parseApiVersion(o.apiVersion);
    const labelsOf = (ns: string) => (namespaces.find((n) => n.metadata?.name === ns)?.metadata?.labels as Record<string, string>) ?? {};
    return m.matches({
        group,
        kind: o.kind ?? "",
        name: o.metadata?.name ?? "",
        labels: o.metadata?.labels ?? undefined,
        namespace: o.metadata?.namespace || undefined,
        isNamespace: group === "" && o.kind === "Namespace",
        generated: false,
        namespaceLabels: labelsOf,
    });
}

/** The class of one difference: why the offline CEL route and gator part. */
function classify(ours: { messages: string[]; errors: boolean[] }, theirs: string[]): string {
    const errs = ours.messages.filter((_, i) => ours.errors[i]);
    if (errs.length > 0) {
        const fn = /found no matching overload for '([^']+)'|Function '?([\w.]+)'? not found|Unknown function[: ]+'?([\w.]+)/i.exec(errs[0]);
        return fn ? `offline evaluator lacks ${fn[1] ?? fn[2] ?? fn[3]}` : `offline evaluation error: ${errs[0].replace(/^expression '[\s\S]*' resulted in error: /, "").slice(0, 100)}`;
    }
    const theirErrors = theirs.filter((m) => m.includes("resulted in error"));
    if (theirErrors.length > 0) return `gator evaluation error: ${theirErrors[0].slice(0, 120)}`;
    if (ours.messages.length !== theirs.length) return `verdict differs (ours ${ours.messages.length}, gator ${theirs.length})`;
    return "message text differs";
}

function main(): number {
    const library = arg("library") ?? process.env.GATEKEEPER_LIBRARY;
    if (!library) {
        console.error("gatekeeper:cel-agree: --library DIR (a checkout of the Gatekeeper library) is required");
        return 2;
    }
    let gator = arg("gator");
    if (!gator) {
        const r = spawnSync("bash", [path.join(REPO, "tools", "gatekeeper", "build.sh"), "--path"], { encoding: "utf8" });
        if (r.status !== 0) {
            console.error(`gatekeeper:cel-agree: cannot find gator: ${r.stderr.trim()}`);
            return 2;
        }
        gator = r.stdout.trim();
    }
    const show = Number(arg("show") ?? 40);
    const lib = readLibrary(library);
    const cels = new Map<string, CelSource>();
    for (const [kind, t] of lib.templates) {
        const cel = parseCel((t.spec as any)?.targets?.[0]?.code ?? [], `${library}: template ${kind}`);
        if (!cel) continue;
        const error = celSourceError(cel);
        if (error) {
            console.error(`gatekeeper:cel-agree: template ${kind}: ${error}`);
            return 1;
        }
        cels.set(kind, cel);
    }
    const cases = lib.cases.filter((c) => cels.has(c.templateKind));
    console.log(`${cels.size} templates with CEL, ${cases.length} of the ${lib.cases.length} suite cases`);
    let agree = 0;
    let differ = 0;
    const classes = new Map<string, number>();
    for (const c of cases) {
        const run = runGator(gator, [lib.templates.get(c.templateKind)!, c.constraint, ...c.inventory, c.object], 600_000, true);
        if (!run.ok) {
            console.error(`${c.id}: gator: ${run.error}`);
            return 2;
        }
        const key = objectKey(c.object);
        const theirs = run.violations.filter((v) => v.object === key && v.constraintKind === c.templateKind).map((v) => v.message);
        const namespaces = c.inventory.filter((o) => o.kind === "Namespace");
        const ours = matches(c, namespaces) ? judgeCel(cels.get(c.templateKind)!, (c.constraint.spec as any)?.parameters ?? undefined, {
                  object: c.object,
                  kind: { ...parseApiVersion(c.object.apiVersion), kind: c.object.kind ?? "" },
                  namespace: c.object.metadata?.namespace || undefined,
              }) : { messages: [], errors: [] };
        if (same(ours.messages, theirs)) {
            agree++;
            continue;
        }
        differ++;
        const cls = classify(ours, theirs);
        classes.set(cls, (classes.get(cls) ?? 0) + 1);
        if (differ <= show) console.log(`DIFF ${c.id} [${cls}]\n  cel:   ${JSON.stringify(sorted(ours.messages))}\n  gator: ${JSON.stringify(sorted(theirs))}`);
    }
    for (const [cls, n] of [...classes].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(4)}  ${cls}`);
    console.log(`cel: ${agree} agree, ${differ} differ`);
    return differ === 0 ? 0 : 1;
}

process.exitCode = main();
