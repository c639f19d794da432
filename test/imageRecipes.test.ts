/**
 * Every image the environment runs is a published image pinned by the configuration, built from a
 * recipe here (images/agent-server, bridge/), or the user's booking application under the contract
 * in images/booking/contract.json (docs/images.md); each recipe's start command is what its
 * Deployment runs.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { all, containersOf, find, renderStack } from "./render";
import { CONTRACTS, containerfileStart, effectiveStart, PLACEHOLDER_REGISTRY, RECIPES, ROOT } from "../tools/images/recipes";
import { BRIDGE_START } from "../components/bridge";
import { PRODUCTS } from "../tools/products/pins";
import { loadFetchedDefinition } from "../tools/products/fetchedDefinitions";
import { GATEWAY_MCP } from "../components/agentServerConfig";

const repository = (image: string) => image.split("@")[0].replace(/:[^/]+$/, "");
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");
const container = (r: any, w: { name: string; namespace: string; container: string }) =>
    find(r, "Deployment", w.name, w.namespace).spec.template.spec.containers.find((c: any) => c.name === w.container);

for (const stack of ["dev", "prod", "ci"]) {
    test(`${stack}: every image under ${PLACEHOLDER_REGISTRY} is built from a recipe here or is the booking application under its contract`, async () => {
        const r = await renderStack(stack);
        const covered = new Set([...RECIPES, ...CONTRACTS].map((x) => repository(container(r, x.workload).image)));
        const placeholders = new Set<string>();
        for (const o of r.objects) {
            if (!["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"].includes(o.kind ?? "")) continue;
            for (const c of containersOf(o)) if (c.image.startsWith(PLACEHOLDER_REGISTRY)) placeholders.add(repository(c.image));
        }
        assert.deepEqual([...placeholders].filter((p) => !covered.has(p)), [], "placeholder images without a recipe or contract");
        for (const x of RECIPES) assert.ok(fs.existsSync(path.join(ROOT, x.containerfile)) && fs.existsSync(path.join(ROOT, x.context)), x.containerfile);
        for (const x of CONTRACTS) assert.ok(fs.existsSync(path.join(ROOT, x.file)), x.file);
    });
}

for (const stack of ["dev", "prod"]) {
    test(`${stack}: the bridge's Deployment runs its recipe's start command (ENTRYPOINT ${JSON.stringify(BRIDGE_START)}), as its recipe's user`, async () => {
        const r = await renderStack(stack);
        const recipe = RECIPES.find((x) => x.key === "bridgeImage")!;
        const image = containerfileStart(recipe.containerfile);
        const c = container(r, recipe.workload);
        assert.deepEqual(effectiveStart(c, image), effectiveStart({}, image));
        assert.deepEqual(effectiveStart(c, image), [...BRIDGE_START]);
        assert.equal(image.user, `${c.securityContext.runAsUser}:${find(r, "Deployment", "model-bridge", "agent").spec.template.spec.securityContext.runAsGroup}`);
    });

    test(`${stack}: the agent server's Deployment runs its recipe's ENTRYPOINT (tini, then opencode) with the whole command line in args (opencode serve ...); the tool server is where the recipe puts it`, async () => {
        const r = await renderStack(stack);
        const recipe = RECIPES.find((x) => x.key === "agentServerImage")!;
        const image = containerfileStart(recipe.containerfile);
        for (const d of all(r, "Deployment").filter((o) => o.metadata?.name?.startsWith("agent-server-"))) {
            const c = d.spec.template.spec.containers.find((x: any) => x.name === "server");
            assert.equal(c.command, undefined, "the Deployment relies on the image's ENTRYPOINT");
            assert.equal(image.cmd, undefined, "no CMD: the Deployment's args are the whole argument list");
            assert.deepEqual(image.entrypoint, ["/usr/bin/tini", "-g", "--", "opencode"], "an init process in front of opencode");
            assert.deepEqual(effectiveStart(c, image).slice(3, 5), ["opencode", "serve"]);
            assert.equal(image.user, `${c.securityContext.runAsUser}:${d.spec.template.spec.securityContext.runAsGroup}`);
        }
        const config = JSON.parse(find(r, "ConfigMap", "agent-server-config", "agent").data["config.json"]);
        const [node, script] = config.mcp[GATEWAY_MCP].command;
        assert.equal(node, "node");
        assert.match(read(recipe.containerfile), new RegExp(`\\/sub2api-admin\\/server\\.mjs" ${script.replace(/[/.]/g, "\\$&")} `), "the recipe writes the tool server where the configuration starts it");
    });
}

test("agent server recipe: opencode's release at the version the products test runs, checked by SHA-512; the tool server at the commit its settings were read from, checked by SHA-256", () => {
    const recipe = RECIPES.find((x) => x.key === "agentServerImage")!;
    const image = containerfileStart(recipe.containerfile);
    const text = read(recipe.containerfile);
    assert.equal(image.args.OPENCODE_VERSION, PRODUCTS.opencode.version);
    assert.match(image.args.OPENCODE_SHA512, /^[0-9a-f]{128}$/);
    assert.match(text, /opencode-linux-x64-\$\{OPENCODE_VERSION\}\.tgz" \/tmp\/opencode\.tgz \\\n && echo "\$\{OPENCODE_SHA512\}  \/tmp\/opencode\.tgz" \| sha512sum -c -/);
    assert.equal(image.args.SUB2API_ADMIN_COMMIT, loadFetchedDefinition("sub2api-admin").source.commit);
    assert.match(image.args.SUB2API_ADMIN_SHA256, /^[0-9a-f]{64}$/);
    assert.match(text, /server\.mjs \\\n && echo "\$\{SUB2API_ADMIN_SHA256\}  \/opt\/sub2api-admin\/server\.mjs" \| sha256sum -c -/);
    // Every pin is required: an empty build argument stops the build.
    assert.match(text, /for pin in OPENCODE_VERSION OPENCODE_SHA512 SUB2API_ADMIN_COMMIT SUB2API_ADMIN_SHA256; do/);
});

test("bridge recipe: compiles with the TypeScript and Node type versions the repository pins; its runtime stage holds node and the compiled code only (no npm)", () => {
    const recipe = RECIPES.find((x) => x.key === "bridgeImage")!;
    const text = read(recipe.containerfile);
    const last = text.slice(text.lastIndexOf("\nFROM "));
    assert.match(last, /^\nFROM \$\{RUNTIME_IMAGE\}\n/);
    assert.deepEqual(last.split("\n").filter((l) => l.startsWith("COPY ")), ["COPY --from=build /usr/local/bin/node /usr/local/bin/node", "COPY --from=build /build/bridge/dist/ /app/"]);
    assert.doesNotMatch(last, /^RUN /m, "nothing runs in the runtime stage (it has no shell)");
    assert.match(containerfileStart(recipe.containerfile).args.RUNTIME_IMAGE, /^gcr\.io\/distroless\/cc-/);
    const dev = JSON.parse(read("package.json")).devDependencies;
    assert.ok(text.includes(`typescript@${dev.typescript} `), `typescript@${dev.typescript}`);
    assert.ok(text.includes(`@types/node@${dev["@types/node"]}\n`), `@types/node@${dev["@types/node"]}`);
    assert.match(text, /COPY src bridge\/src/);
    assert.ok(fs.existsSync(path.join(ROOT, recipe.context, "tsconfig.json")));
});

for (const stack of ["dev", "prod"]) {
    test(`${stack}: the booking Deployment gives the image exactly what images/booking/contract.json promises, and expects what it says`, async () => {
        const r = await renderStack(stack);
        const contract = JSON.parse(read(CONTRACTS[0].file));
        const d = find(r, "Deployment", CONTRACTS[0].workload.name, CONTRACTS[0].workload.namespace);
        const c = container(r, CONTRACTS[0].workload);
        const env = Object.fromEntries(c.env.map((e: any) => [e.name, e]));
        assert.deepEqual(Object.keys(env).sort(), Object.keys(contract.env).sort(), "environment names");
        assert.equal(env[contract.port.env].value, String(contract.port.value));
        assert.equal(c.ports.find((p: any) => p.name === "http").containerPort, contract.port.value);
        assert.equal(c.livenessProbe.httpGet.path, contract.probes.liveness);
        assert.equal(c.readinessProbe.httpGet.path, contract.probes.readiness);
        assert.equal(c.securityContext.runAsUser, contract.user.uid);
        assert.equal(c.securityContext.runAsNonRoot, contract.user.runAsNonRoot);
        assert.equal(c.securityContext.readOnlyRootFilesystem, contract.readOnlyRootFilesystem);
        assert.equal(d.spec.template.spec.securityContext.fsGroup, contract.user.gid);
        assert.deepEqual(c.volumeMounts.filter((m: any) => !m.readOnly).map((m: any) => m.mountPath).sort(), [...contract.writablePaths].sort());
        assert.ok(env.DATABASE_PATH.value.startsWith(`${contract.writablePaths[0]}/`), env.DATABASE_PATH.value);
        for (const [name, key] of Object.entries(contract.secret.keys)) assert.deepEqual(env[name].valueFrom.secretKeyRef, { name: contract.secret.name, key }, name);
    });
}
