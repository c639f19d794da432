/**
 * Sets every required secret of the stack schema on a throwaway stack (the e2e `ci` stack) from
 * generated values: the field's render placeholder with each `0` replaced by a random hex digit,
 * so the value keeps the shape the schema checks (e.g. admin- + 64 hex). Values go to
 * `pulumi config set --secret` on stdin and are masked in the job log; they are never written
 * to a file of the repository and never printed.
 *
 *   npx tsx .github/scripts/ci-secrets.ts --stack ci
 */
import { randomInt } from "crypto";
import { spawnSync } from "child_process";
import { flatten, schema } from "../../config/schemaIndex";

const HEX = "0123456789abcdef";

export function generatedValue(placeholder: string): string {
    return placeholder.replace(/0/g, () => HEX[randomInt(HEX.length)]);
}

function main() {
    const i = process.argv.indexOf("--stack");
    const stack = i > 0 ? process.argv[i + 1] : undefined;
    if (!stack) throw new Error("usage: ci-secrets.ts --stack <stack>");
    for (const { key, field } of flatten(schema)) {
        if (!field.secret || field.optional) continue;
        if (!field.placeholder) throw new Error(`secret ${key} has no placeholder to derive a value from`);
        let value = generatedValue(field.placeholder);
        if (!field.check(value).ok) value = field.placeholder;
        // GitHub masks the value in every later log line of the job.
        console.log(`::add-mask::${value}`);
        const run = spawnSync("pulumi", ["config", "set", "--secret", "--stack", stack, key], { input: value, stdio: ["pipe", "inherit", "inherit"] });
        if (run.status !== 0) throw new Error(`pulumi config set --secret ${key} failed (exit ${run.status})`);
        console.log(`set ${key} (generated, ${value.length} characters)`);
    }
}

if (require.main === module) main();
