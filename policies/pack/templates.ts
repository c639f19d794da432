/**
 * The templates the pack judges constraints with: the Gatekeeper library's (TypeScript,
 * policies/gatekeeper/templates) and a team's own ConstraintTemplates, the YAML files of
 * policies/templates/ whose Rego `npm run gatekeeper:wasm` compiled (policies/gatekeeper/wasm;
 * a CEL-only template needs nothing compiled). Loaded once per process; a missing or stale
 * module is an error. A team template of a kind the library also has replaces the library's
 * (teams vendor an edited copy under the library's name), and the render says so.
 */
import * as path from "path";
import { createTemplateRegistry, type TemplateRegistry } from "../gatekeeper/engine";
import { allTemplates } from "../gatekeeper/templates";
import { loadWasmTemplates } from "../gatekeeper/wasm/rule";
import { PACK_DIR } from "./paths";

/** The folder of the team's ConstraintTemplate files, beside the constraint sets. */
export const TEAM_TEMPLATES_DIR = path.join(PACK_DIR, "templates");

export interface PackTemplates {
    registry: TemplateRegistry;
    /** Lines for the render: which library templates a team's file replaces. */
    notes: string[];
}

/** The library's templates and those of a folder of ConstraintTemplate files (shown as `display` in errors and notes). */
export function packTemplatesWith(dir: string, display = path.relative(PACK_DIR, dir)): PackTemplates {
    const team = loadWasmTemplates(dir, display);
    const teamKinds = new Map(team.map((t) => [t.kind, t]));
    const notes = allTemplates
        .filter((t) => teamKinds.has(t.kind))
        .map((t) => `policy pack: the team's ConstraintTemplate ${teamKinds.get(t.kind)!.template} (${display}/) replaces the library's template of kind ${t.kind}`);
    return { registry: createTemplateRegistry([...allTemplates.filter((t) => !teamKinds.has(t.kind)), ...team]), notes };
}

/** The library's templates and those of a folder of ConstraintTemplate files (shown as `display` in errors). */
export function templateRegistryWith(dir: string, display = path.relative(PACK_DIR, dir)): TemplateRegistry {
    return packTemplatesWith(dir, display).registry;
}

let loaded: PackTemplates | undefined;

function packTemplates(): PackTemplates {
    loaded ??= packTemplatesWith(TEAM_TEMPLATES_DIR);
    return loaded;
}

export function packTemplateRegistry(): TemplateRegistry {
    return packTemplates().registry;
}

/** The render's lines about the team's templates (a library template replaced). */
export function packTemplateNotes(): string[] {
    return packTemplates().notes;
}
