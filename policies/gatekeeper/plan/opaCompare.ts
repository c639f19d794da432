/**
 * For the plan compiler's tests: a Rego v1 module's plan and what `opa eval` gives for it (the
 * meaning the compiled code must have), and what the compiled plan gives.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { opaBinary } from "../wasm/opa";
import { compilePlan, type Plan } from "./compile";
import { toJSON } from "../rego/values";
import { goNumbersJSON } from "../wasm/host";

const opa = opaBinary();

/** Why the tests that run opa skip (false when opa is there). */
export const opaMissing: string | false = existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)`;

/** The plan (`opa build -t plan`, entrypoint t/<rule>) of a Rego v1 module, and opa eval's value (or error, and the row of t.rego it names) of data.t.<rule> for each input. */
export function withOpa(rego: string, rule: string, inputs: unknown[], data: unknown): { plan: Plan; expected: ({ value: unknown } | { error: string; row?: number })[] } {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-opa-"));
    try {
        writeFileSync(path.join(dir, "t.rego"), rego);
        writeFileSync(path.join(dir, "data.json"), goNumbersJSON(JSON.stringify(data)));
        const r = spawnSync(opa, ["build", "-t", "plan", "-e", `t/${rule}`, "-o", "b.tar.gz", "t.rego"], { cwd: dir, encoding: "utf8" });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(spawnSync("tar", ["-xzf", "b.tar.gz", "/plan.json"], { cwd: dir }).status, 0);
        const plan = JSON.parse(readFileSync(path.join(dir, "plan.json"), "utf8")) as Plan;
        const expected = inputs.map((input) => {
            writeFileSync(path.join(dir, "input.json"), goNumbersJSON(JSON.stringify(input)));
            const e = spawnSync(opa, ["eval", "--format", "json", "-d", "t.rego", "-d", "data.json", "-i", "input.json", `data.t.${rule}`], { cwd: dir, encoding: "utf8" });
            const out = JSON.parse(e.stdout) as { result?: { expressions: { value: unknown }[] }[]; errors?: { message: string; location?: { row: number } }[] };
            if (out.errors) return { error: out.errors[0].message, ...(out.errors[0].location ? { row: out.errors[0].location.row } : {}) };
            return { value: out.result?.[0]?.expressions[0]?.value };
        });
        return { plan, expected };
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/** What the compiled plan gives: data.t.<rule>'s value, or the error that stopped it. */
export function compiled(plan: Plan, input: unknown, data: unknown): { value: unknown } | { error: string } {
    try {
        return { value: (toJSON(compilePlan(plan)(input, data)) as { result: unknown }[])[0]?.result };
    } catch (err) {
        return { error: (err as Error).message };
    }
}
