/**
 * What `npm run test:gatekeeper` judges: groups of objects and the constraints that judge them,
 * each run through gator at once: every case of the Gatekeeper library's suites, a rendered stack
 * with its constraint file, a team's templates (./customTemplates.ts, ./teamCorpus.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { TemplateRegistry } from "../../policies/gatekeeper/engine";
import type { K8sObject } from "../../policies/gatekeeper/types";
import type { Library } from "./library";

const REPO = path.resolve(__dirname, "..", "..");

/** One set of objects judged by one set of constraints in one gator run. */
export interface Group {
    id: string;
    constraints: K8sObject[];
    objects: K8sObject[];
    /** Other objects the templates see (data.inventory); never judged. */
    inventory: K8sObject[];
    /** Object mutants to keep per object, constraint mutants per constraint. */
    objectMutants: number;
    constraintMutants: number;
    /** The templates the pack judges the constraints with (default: the library's in TypeScript). */
    registry?: TemplateRegistry;
    /** Gator with its CEL driver on (its default): a template with CEL code is judged by its CEL. */
    native?: boolean;
    /** The pack judges the objects as unchanged (its operation model's audit view), as gator does; else as creations. */
    audit?: boolean;
}

export function libraryGroups(library: Library, perCase: number): Group[] {
    return library.cases.map((c) => ({
        id: c.id,
        constraints: [c.constraint],
        objects: [c.object],
        inventory: c.inventory,
        objectMutants: perCase,
        constraintMutants: 3,
    }));
}


function readDocs(file: string): K8sObject[] {
    return parseAllDocuments(readFileSync(file, "utf8"))
        .map((d) => d.toJS())
        .filter((d): d is K8sObject => d !== null && typeof d === "object");
}

/** The rendered objects of a stack (npm run render, into a temporary folder) and its constraints. */
export function stackGroup(stack: string, perObject: number): Group {
    const out = mkdtempSync(path.join(tmpdir(), `gatekeeper-render-${stack}-`));
    try {
        const r = spawnSync("npm", ["run", "-s", "render", "--", "--stack", stack, "--out", path.join(out, "render")], { cwd: REPO, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
        if (r.status !== 0) throw new Error(`render of stack ${stack} failed (exit ${r.status}): ${(r.stderr || r.stdout).slice(-2000)}`);
        const objects = readDocs(path.join(out, "render", "manifests.yaml"));
        const constraints = readDocs(path.join(REPO, "policies", "constraints", `${stack}.yaml`)).filter((d) => d.apiVersion?.startsWith("constraints.gatekeeper.sh/"));
        return { id: `stack ${stack}`, constraints, objects, inventory: [], objectMutants: perObject, constraintMutants: 2 };
    } finally {
        rmSync(out, { recursive: true, force: true });
    }
}
