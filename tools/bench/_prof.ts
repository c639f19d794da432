import { benchWasmTemplates } from "./wasmTemplates";
benchWasmTemplates({ library: "/tmp/gklib", runs: 1, synthetic: 400 });
