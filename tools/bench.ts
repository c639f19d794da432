/**
 * npm run bench [-- --runs N] [-- --bridge-only]: medians, not single timings; these machines are
 * noisy. With GATEKEEPER_LIBRARY (a checkout of the Gatekeeper library) and opa, also the library's
 * Rego compiled as a team's templates are (its plans compiled to JavaScript, then its Wasm modules)
 * against its TypeScript templates (tools/bench/wasmTemplates.ts). The last part is the model
 * bridge's overhead over the agent server (real opencode).
 */
import * as fs from "fs";
import * as path from "path";
import { benchBridge } from "./bench/bridge";
import { benchProgram } from "./bench/program";
import { benchWasmTemplates } from "./bench/wasmTemplates";
import { startPack } from "./e2e/analyzerShim";

async function main() {
    const runsArg = process.argv.indexOf("--runs");
    const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 9;
    if (process.argv.includes("--bridge-only")) return benchBridge(Math.max(runs, 50));
    console.log(`program run vs the SDK floor (median of ${runs} interleaved runs, same mocks, same resource count)`);
    for (const stack of ["dev", "prod"]) {
        const b = await benchProgram(stack, runs);
        console.log(`  ${stack.padEnd(5)} ${String(b.resources).padStart(4)} resources: program ${b.programMs.toFixed(1)} ms, floor ${b.floorMs.toFixed(1)} ms, ratio ${b.ratio.toFixed(2)}x (target <= 1.5x)`);
        console.log(`  ${"".padEnd(5)} ${"".padStart(4)}            floor with the provider classes' own work (aliases, output properties) ${b.classFloorMs.toFixed(1)} ms, program over it ${b.classRatio.toFixed(2)}x`);
    }
    // The pack's start as the pulumi CLI starts it (the e2e's analyzer shim, compiled JavaScript).
    const starts: number[] = [];
    for (let i = 0; i < Math.min(runs, 5); i++) {
        const pack = await startPack();
        starts.push(pack.seconds);
        pack.stop();
    }
    starts.sort((a, b) => a - b);
    console.log(`policy pack start through tools/e2e/bin/pulumi-analyzer-policy-nodejs: median ${starts[Math.floor(starts.length / 2)].toFixed(2)} s of ${starts.length} (${starts.map((x) => x.toFixed(2)).join(", ")})`);
    const packBench = path.join(__dirname, "bench", "policyPack.ts");
    if (fs.existsSync(packBench)) {
        // eslint-disable-next-line @typescript-eslint/no-var-requires
        const mod = require(packBench);
        const fn = mod.benchPolicyPack ?? mod.default ?? mod.main;
        if (typeof fn === "function") await fn({ runs });
    }
    // The library's compiled Rego against its TypeScript templates (needs GATEKEEPER_LIBRARY and opa; says so otherwise).
    await benchWasmTemplates({ runs: Math.min(runs, 5) });
    await benchBridge(Math.max(runs, 50));
}

main().catch((err) => {
    console.error(`bench failed: ${err instanceof Error ? err.stack : err}`);
    process.exitCode = 1;
});
