/**
 * Every environment name, flag and configuration key the render emits for the agent server
 * (opencode) and the workflow tool (n8n 1.68.0) is one the product reads at the pinned version:
 * checked against definitions extracted from the products' own npm packages
 * (tools/products/definitions/*.json; `npm run test:products` regenerates and compares them).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { extractN8n, loadDefinition, n8nEnvNames, opencodeEnvNames } from "../tools/products/definitions";
import { isInstalled } from "../tools/products/install";
import { PRODUCTS } from "../tools/products/pins";
import { all, find, podSpecOf, renderStack } from "./render";
import { agentServer } from "../config/areas/agent";
import { workflow } from "../config/areas/workflow";
import { mountedScript } from "./backups/mounted";

const n8n = loadDefinition("n8n");
const opencode = loadDefinition("opencode");
const SCRIPTS = path.join(__dirname, "..", "backups", "scripts");

/** Names in `names` that are not in `known` (with where they were emitted). */
const unknown = (names: { name: string; where: string }[], known: Set<string>) => names.filter((n) => !known.has(n.name)).map((n) => `${n.name} (${n.where})`);

/** Names a shell script, as mounted (the shared prelude joined in), reads from its environment (${NAME...} or $NAME). */
function scriptEnv(file: string): Set<string> {
    const text = mountedScript(file);
    return new Set([...text.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]));
}

/** Environment names read by the workflows themselves ($env.NAME in an expression), not by n8n. */
const WORKFLOW_ENV = new Set(["GATEWAY_TOKEN", "MODEL_API_KEY"]);
/** Read by Node.js and the tools in the image, not by a product setting. */
const PROCESS_ENV = new Set(["HOME"]);

test("the definitions are those of the pinned versions, and the image tags match them", () => {
    assert.equal(n8n.version, PRODUCTS.n8n.version);
    assert.equal(n8n.configPackage, `${PRODUCTS.n8n.configPkg}@${PRODUCTS.n8n.configVersion}`);
    assert.equal(opencode.version, PRODUCTS.opencode.version);
    assert.ok(n8nEnvNames(n8n).has("N8N_ENCRYPTION_KEY") && n8nEnvNames(n8n).has("QUEUE_BULL_REDIS_HOST"));
    assert.ok(opencodeEnvNames(opencode).has("OPENCODE_SERVER_PASSWORD"));
    const tag = (image: string) => image.slice(image.lastIndexOf(":") + 1);
    assert.equal(tag(workflow.image.default!), PRODUCTS.n8n.imageTag);
    assert.equal(PRODUCTS.n8n.imageTag, PRODUCTS.n8n.version);
    assert.equal(tag(agentServer.image.default!), PRODUCTS.opencode.imageTag);
    // The image is built from images/agent-server/package-lock.json: the version the products test runs.
    assert.equal(PRODUCTS.opencode.imageTag, PRODUCTS.opencode.version);
});

test("the committed n8n definition is what the cached n8n 1.68.0 packages say (opencode's is compared by npm run test:products)", {
    skip: !isInstalled(PRODUCTS.n8n) && "n8n 1.68.0 is not in the product cache (npm run test:products installs it)",
}, () => {
    assert.deepEqual(JSON.parse(JSON.stringify(extractN8n())), n8n, "run: npm run gen:product-definitions");
});

test("a name the product does not read fails the check (the specification's placeholders among them)", () => {
    const names = [{ name: "WF_HOST", where: "t" }, { name: "OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS", where: "t" }, { name: "N8N_HOST", where: "t" }];
    assert.deepEqual(unknown(names, n8nEnvNames(n8n)), ["WF_HOST (t)", "OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS (t)"]);
    assert.deepEqual(unknown([{ name: "AGENT_SERVER_PASSWORD", where: "t" }], opencodeEnvNames(opencode)), ["AGENT_SERVER_PASSWORD (t)"]);
});

for (const stack of ["dev", "prod"]) {
    test(`${stack}: the agent server's environment, serve flags and configuration file are opencode's own`, async () => {
        const r = await renderStack(stack);
        const cm = find(r, "ConfigMap", "agent-server-config", "agent");
        const text: string = cm.data["config.json"];
        const config = JSON.parse(text);
        // {env:NAME} references in the file: opencode substitutes them, so it reads those names.
        const referenced = new Set([...text.matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]));
        const known = new Set([...opencodeEnvNames(opencode), ...referenced]);
        const deployments = (all(r, "Deployment") as any[]).filter((d) => d.metadata.namespace === "agent" && /^agent-server-\d+$/.test(d.metadata.name));
        assert.ok(deployments.length >= 2);
        for (const d of deployments) {
            const c = podSpecOf(d).containers.find((x: any) => x.name === "server");
            assert.deepEqual(unknown(c.env.map((e: any) => ({ name: e.name, where: d.metadata.name })), known), []);
            assert.equal(c.args[0], "serve");
            const flags = c.args.filter((a: string) => a.startsWith("--")).map((a: string) => a.replace(/^--/, "").replace(/=.*/, ""));
            assert.deepEqual(flags.filter((f: string) => !opencode.serveFlags.includes(f)), [], `${d.metadata.name}: flags opencode serve does not have`);
            // Every referenced name reaches the pod.
            for (const name of referenced) assert.ok(c.env.some((e: any) => e.name === name), `${name} is referenced by config.json but not set`);
        }
        const ajv = new Ajv2020({ strict: false, allErrors: true });
        const validate = ajv.compile(opencode.configSchema);
        assert.ok(validate(config), `config.json does not validate against opencode ${opencode.version}'s schema: ${ajv.errorsText(validate.errors)}`);
    });

    test(`${stack}: every environment name, command and flag of the workflow tool is n8n 1.68.0's own`, async () => {
        const r = await renderStack(stack);
        const known = n8nEnvNames(n8n);
        const workloads = [...all(r, "StatefulSet"), ...all(r, "CronJob")].filter((o: any) => o.metadata.namespace === "workflow") as any[];
        assert.equal(workloads.filter((o) => o.kind === "StatefulSet").length, 2);
        for (const o of workloads) {
            for (const c of podSpecOf(o).containers) {
                const isScript = o.kind === "CronJob";
                const scriptNames = isScript ? new Set([...scriptEnv("workflow-backup.sh"), ...scriptEnv("workflow-restore.sh")]) : new Set<string>();
                const allowed = new Set([...known, ...PROCESS_ENV, ...scriptNames, ...(isScript ? [] : WORKFLOW_ENV)]);
                assert.deepEqual(unknown(c.env.map((e: any) => ({ name: e.name, where: `${o.kind} ${o.metadata.name}` })), allowed), []);
                if (!isScript) {
                    const [command, ...rest] = c.args;
                    assert.ok(command in n8n.commands, `${o.metadata.name}: n8n has no command ${command}`);
                    const flags = rest.map((a: string) => a.replace(/^--/, "").replace(/=.*/, ""));
                    assert.deepEqual(flags.filter((f: string) => !n8n.commands[command].includes(f)), [], `${o.metadata.name}: flags n8n ${command} does not have`);
                }
            }
        }
    });
}

test("the n8n commands and flags the workflow backup and restore scripts call exist in n8n 1.68.0", () => {
    for (const file of ["workflow-backup.sh", "workflow-restore.sh"]) {
        const text = fs.readFileSync(path.join(SCRIPTS, file), "utf8");
        const calls = [...text.matchAll(/"\$WF_CLI" ([a-z]+:[a-z]+)((?: --[a-z]+(?:=\S+)?)*)/g)];
        assert.ok(calls.length >= 2, `${file}: no n8n calls found`);
        for (const [, command, flags] of calls) {
            assert.ok(command in n8n.commands, `${file}: n8n has no command ${command}`);
            for (const f of flags.trim().split(/\s+/).map((x) => x.replace(/^--/, "").replace(/=.*/, ""))) {
                assert.ok(n8n.commands[command].includes(f), `${file}: n8n ${command} has no flag --${f}`);
            }
        }
    }
});
