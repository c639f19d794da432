/**
 * The Gatekeeper constraints of a stack on one side of the diff: each constraint of the files the
 * stack's pack config (policies/config/<stack>.json) names, with the enforcement action it runs
 * under, or "off" where its gatekeeper-<action> policy is disabled. A change that removes
 * constraints or weakens them is listed in the report (issue 30: an emptied constraint file
 * switched everything off with "0 violations").
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";

const ACTIONS = ["deny", "warn", "dryrun"] as const;

export interface ConstraintDiff {
    removed: string[];
    added: string[];
    changed: string[];
}

/** Kind/name -> how it is enforced; undefined when the side has no pack config for the stack. */
export function constraintEntries(root: string, stack: string): Map<string, string> | undefined {
    const configFile = path.join(root, "policies", "config", `${stack}.json`);
    if (!fs.existsSync(configFile)) return undefined;
    let config: Record<string, unknown>;
    try {
        config = JSON.parse(fs.readFileSync(configFile, "utf8"));
    } catch {
        return undefined;
    }
    const out = new Map<string, string>();
    const files = new Map<string, Array<{ kind: string; name: string; action: string }>>();
    const read = (file: string) => {
        if (!files.has(file)) {
            const full = path.resolve(root, "policies", file);
            const docs = fs.existsSync(full) ? parseAllDocuments(fs.readFileSync(full, "utf8")) : [];
            const list: Array<{ kind: string; name: string; action: string }> = [];
            for (const doc of Array.isArray(docs) ? docs : []) {
                const o = doc.toJS() as { apiVersion?: string; kind?: string; metadata?: { name?: string }; spec?: { enforcementAction?: string } } | null;
                if (o && typeof o === "object" && String(o.apiVersion ?? "").startsWith("constraints.gatekeeper.sh/"))
                    list.push({ kind: String(o.kind), name: String(o.metadata?.name), action: o.spec?.enforcementAction ?? "deny" });
            }
            files.set(file, list);
        }
        return files.get(file)!;
    };
    const all = config.all;
    const allDisabled = all === "disabled" || (typeof all === "object" && all !== null && (all as { enforcementLevel?: string }).enforcementLevel === "disabled");
    for (const action of ACTIONS) {
        const entry = config[`gatekeeper-${action}`] as { constraints?: string; enforcementLevel?: string } | string | undefined;
        const disabled = entry === "disabled" || (typeof entry === "object" && entry?.enforcementLevel === "disabled") || (entry === undefined && allDisabled);
        const file = typeof entry === "object" ? entry.constraints : undefined;
        // A disabled policy names no file to read: its constraints are those of the others' files.
        const sources = file ? [file] : [...new Set(ACTIONS.map((a) => (config[`gatekeeper-${a}`] as { constraints?: string } | undefined)?.constraints).filter((f): f is string => typeof f === "string"))];
        for (const f of sources)
            for (const c of read(f).filter((c) => c.action === action)) out.set(`${c.kind}/${c.name}`, disabled ? `off (gatekeeper-${action} disabled)` : action);
    }
    return out;
}

export function diffConstraints(base: Map<string, string> | undefined, head: Map<string, string> | undefined): ConstraintDiff {
    const b = base ?? new Map<string, string>();
    const h = head ?? new Map<string, string>();
    const sorted = (xs: string[]) => xs.sort();
    return {
        removed: sorted([...b].filter(([k]) => !h.has(k)).map(([k, v]) => `${k} (${v})`)),
        added: sorted([...h].filter(([k]) => !b.has(k)).map(([k, v]) => `${k} (${v})`)),
        changed: sorted([...h].filter(([k, v]) => b.has(k) && b.get(k) !== v).map(([k, v]) => `${k}: ${b.get(k)} -> ${v}`)),
    };
}
