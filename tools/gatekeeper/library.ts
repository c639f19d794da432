/**
 * Reads a checkout of the Gatekeeper library (open-policy-agent/gatekeeper-library, the commit
 * shared/conformance/gatekeeper/*.json names): every template and every case of its suites.
 * The library is read beside the project, never copied into it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { K8sObject } from "../../policies/gatekeeper/types";

export interface LibraryCase {
    /** "<template folder>/<test>/<case>". */
    id: string;
    templateKind: string;
    constraint: K8sObject;
    object: K8sObject;
    inventory: K8sObject[];
}

export interface Library {
    /** Template objects by constraint kind. */
    templates: Map<string, K8sObject>;
    cases: LibraryCase[];
}

export const LIBRARY_FOLDERS = ["library/general", "library/pod-security-policy"];

function docs(file: string): K8sObject[] {
    return parseAllDocuments(readFileSync(file, "utf8"))
        .map((d) => d.toJS())
        .filter((d): d is K8sObject => d !== null && typeof d === "object");
}

export function readLibrary(root: string): Library {
    const templates = new Map<string, K8sObject>();
    const cases: LibraryCase[] = [];
    for (const folder of LIBRARY_FOLDERS) {
        const base = path.join(root, folder);
        if (!existsSync(base)) throw new Error(`${root} is not a checkout of the Gatekeeper library: no ${folder}/`);
        for (const name of readdirSync(base).sort()) {
            const dir = path.join(base, name);
            const suiteFile = path.join(dir, "suite.yaml");
            if (!existsSync(suiteFile)) continue;
            const suite = docs(suiteFile)[0] as any;
            for (const test of suite.tests ?? []) {
                const [template] = docs(path.join(dir, test.template));
                const kind = template?.spec?.crd?.spec?.names?.kind;
                if (!kind) throw new Error(`${path.join(dir, test.template)}: no spec.crd.spec.names.kind`);
                templates.set(kind, template);
                if (!test.constraint) continue;
                const [constraint] = docs(path.join(dir, test.constraint));
                for (const c of test.cases ?? []) {
                    if (!c.object) continue;
                    const [object] = docs(path.join(dir, c.object));
                    if (!object) continue;
                    const inventory = (c.inventory ?? []).flatMap((f: string) => docs(path.join(dir, f)));
                    cases.push({ id: `${name}/${test.name}/${c.name}`, templateKind: kind, constraint, object, inventory });
                }
            }
        }
    }
    if (cases.length === 0) throw new Error(`${root}: the library has no suite case`);
    return { templates, cases };
}
