import { readLibrary } from "./library";
import { runSeed } from "./differential";
const lib = readLibrary(process.env.HOME + "/.cache/gatekeeper-library-5c441fb6");
lib.cases = lib.cases.filter(c => c.id.startsWith(process.argv[2]));
const r = runSeed({ library: "", seeds: [1], mutants: 2000 * lib.cases.length / 270, stacks: [], gator: process.env.HOME + "/.cache/ops-e2e/gator-3.23.1/gator", show: 5 }, lib, [], 1, console.log);
for (const d of r.differ.slice(0, 3)) console.log(JSON.stringify(d));
