/**
 * For tests: a temporary team template folder holding copies of test templates of
 * policies/gatekeeper/wasm/testdata and every generated file each has (a template whose plan the
 * compiler refuses has no .plan.js).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { modulePaths } from "../gatekeeper/wasm/rule";

export const TESTDATA = path.resolve(__dirname, "..", "gatekeeper", "wasm", "testdata");

export function teamFolder(names: string[], prefix = "team-templates-"): string {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    mkdirSync(path.join(dir, "wasm"));
    for (const n of names) {
        const from = path.join(TESTDATA, `${n}.yaml`);
        const to = path.join(dir, `${n}.yaml`);
        copyFileSync(from, to);
        for (const which of ["wasm", "manifest", "plan", "js"] as const) if (existsSync(modulePaths(from)[which])) copyFileSync(modulePaths(from)[which], modulePaths(to)[which]);
    }
    return dir;
}
