/**
 * The templates the pack judges constraints with: the Gatekeeper library's (TypeScript,
 * policies/gatekeeper/templates) and a team's own ConstraintTemplates, the YAML files of
 * policies/templates/ whose Rego `npm run gatekeeper:wasm` compiled to Wasm
 * (policies/gatekeeper/wasm). Loaded once per process; a missing or stale module is an error.
 */
import * as path from "path";
import { createTemplateRegistry, type TemplateRegistry } from "../gatekeeper/engine";
import { allTemplates } from "../gatekeeper/templates";
import { loadWasmTemplates } from "../gatekeeper/wasm/rule";
import { PACK_DIR } from "./paths";

/** The folder of the team's ConstraintTemplate files, beside the constraint sets. */
export const TEAM_TEMPLATES_DIR = path.join(PACK_DIR, "templates");

/** The library's templates and those of a folder of ConstraintTemplate files (shown as `display` in errors). */
export function templateRegistryWith(dir: string, display = path.relative(PACK_DIR, dir)): TemplateRegistry {
    return createTemplateRegistry([...allTemplates, ...loadWasmTemplates(dir, display)]);
}

let registry: TemplateRegistry | undefined;

export function packTemplateRegistry(): TemplateRegistry {
    registry ??= templateRegistryWith(TEAM_TEMPLATES_DIR);
    return registry;
}
