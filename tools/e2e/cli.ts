/**
 * The e2e's object steps (called by tools/e2e/run.sh):
 *   tsx tools/e2e/cli.ts crds <manifests.yaml> <crds.json.gz> <out.json>
 *   tsx tools/e2e/cli.ts standins <manifests.yaml> <pool.yaml> <kubelet-config.yaml> <volume-dir> <out-dir>  (the ci node: node.json, volumes.json)
 *   tsx tools/e2e/cli.ts compare <manifests.yaml> <live.json> [--generated-secrets]
 *   tsx tools/e2e/cli.ts pool <manifests.yaml> <pool.yaml> <kubelet-config.yaml> <volume-dir> <out-dir> [pool name, default prod]  (a pool's nodes, volumes)
 *   tsx tools/e2e/cli.ts lists <manifests.yaml> <dir>
 * Outputs are JSON Lists (kubectl reads YAML as 1.1, the yaml package writes 1.2: JSON means the
 * same to both), written to a temp file and renamed into place.
 */
import * as fs from "fs";
import * as path from "path";
import * as zlib from "zlib";
import * as YAML from "yaml";
import { compareWithCluster, crdsFor, CrdSchemaFile, fakeNode, K8sObject, parseManifests, standInVolumes } from "./objects";

interface Pool { count: number; cpu: string; memory: string; ephemeralStorage: string }

/** A stack's worker pool (node/pool.yaml of its render: the nodePool* keys). */
function readPool(poolFile: string): Pool {
    if (!fs.existsSync(poolFile)) throw new Error(`${poolFile}: no such file (the offline render writes it from the stack's nodePool* keys)`);
    const pool = YAML.parse(fs.readFileSync(poolFile, "utf8")) as Pool;
    if (!(Number.isInteger(pool?.count) && pool.count > 0) || !pool.cpu || !pool.memory || !pool.ephemeralStorage) throw new Error(`${poolFile}: expected count (integer > 0), cpu, memory and ephemeralStorage`);
    return pool;
}

/**
 * The pool's nodes, each less the kubelet's reservations of the rendered node/kubelet-config.yaml
 * (110 pods: the kubelet's default). `labelled`: the pool label and a zone per node (the extra
 * pools of the dev and prod steps, next to the cordoned ci node).
 */
function poolNodes(pool: Pool, kubelet: Record<string, any>, poolName: string, labelled: boolean): K8sObject[] {
    return Array.from({ length: pool.count }, (_, i) => {
        const node = fakeNode(`kwok-${poolName}-${i}`, { cpu: String(pool.cpu), memory: String(pool.memory), pods: "110", ephemeralStorage: String(pool.ephemeralStorage) }, kubelet);
        if (labelled) node.metadata!.labels = { ...node.metadata!.labels, "ops-e2e/pool": poolName, "topology.kubernetes.io/zone": `zone-${i % 3}` };
        return node;
    });
}

function writeList(file: string, items: K8sObject[]): void {
    const tmp = `${file}.tmp.${process.pid}`;
    fs.writeFileSync(tmp, JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 1));
    fs.renameSync(tmp, file);
}

function readManifests(file: string): K8sObject[] {
    if (!fs.existsSync(file)) throw new Error(`${file}: no such file (the offline render writes it)`);
    return parseManifests(fs.readFileSync(file, "utf8"));
}

function main(argv: string[]): number {
    const [cmd, ...args] = argv;
    if (cmd === "crds" && args.length === 3) {
        const [manifests, schemas, out] = args;
        if (!fs.existsSync(schemas)) throw new Error(`${schemas}: no such file (the pinned CRD schemas of shared/reference/k8s-schemas)`);
        const file = JSON.parse(zlib.gunzipSync(fs.readFileSync(schemas)).toString("utf8")) as CrdSchemaFile;
        const crds = crdsFor(readManifests(manifests), file, `shared/reference/k8s-schemas/${path.basename(schemas)}`);
        writeList(out, crds);
        console.log(`${crds.length} CRDs: ${crds.map((c) => c.metadata!.name).join(", ")}`);
        return 0;
    }
    if (cmd === "standins" && args.length === 5) {
        // The ci stack's node(s), from its rendered pool (Pulumi.ci.yaml: the one node of the kind
        // workflow's GitHub-hosted runner).
        const [manifests, poolFile, kubeletConfig, volumeDir, outDir] = args;
        const kubelet = YAML.parse(fs.readFileSync(kubeletConfig, "utf8"));
        const nodes = poolNodes(readPool(poolFile), kubelet, "ci", false);
        const volumes = standInVolumes(readManifests(manifests), volumeDir);
        writeList(path.join(outDir, "node.json"), nodes);
        writeList(path.join(outDir, "volumes.json"), volumes);
        console.log(`${nodes.map((n) => n.metadata!.name).join(", ")} (allocatable ${JSON.stringify(nodes[0].status.allocatable)}), ${volumes.length} pre-bound volumes`);
        return 0;
    }
    if (cmd === "compare" && (args.length === 2 || (args.length === 3 && args[2] === "--generated-secrets"))) {
        const [manifests, liveFile] = args;
        const live = (JSON.parse(fs.readFileSync(liveFile, "utf8")).items ?? []) as K8sObject[];
        let rendered = readManifests(manifests);
        const keyProblems: string[] = [];
        if (args[2] === "--generated-secrets") {
            // The engine made the values (random, tls, the stack's secrets); the render has
            // placeholders. A Secret's keys must be the render's; its values are not compared.
            const liveSecret = new Map(live.filter((o) => o.kind === "Secret").map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o]));
            rendered = rendered.map((o) => {
                if (o.kind !== "Secret" || o.apiVersion !== "v1") return o;
                const want = [...Object.keys(o.stringData ?? {}), ...Object.keys(o.data ?? {})].sort();
                const l = liveSecret.get(`${o.metadata?.namespace}/${o.metadata?.name}`);
                const got = Object.keys(l?.data ?? {}).sort();
                if (l && JSON.stringify(want) !== JSON.stringify(got)) keyProblems.push(`Secret ${o.metadata?.namespace}/${o.metadata?.name}: keys ${got.join(",")}, rendered ${want.join(",")}`);
                const { stringData: _s, data: _d, ...rest } = o;
                return rest as K8sObject;
            });
        }
        const r = compareWithCluster(rendered, live, ["app.kubernetes.io/part-of", "ops-environment"]);
        r.differing.push(...keyProblems);
        for (const m of r.missing) console.log(`missing on the cluster: ${m}`);
        for (const d of r.differing) console.log(`differs: ${d}`);
        for (const e of r.extra) console.log(`on the cluster, not in the render: ${e}`);
        console.log(`${rendered.length} rendered objects: ${r.missing.length} missing, ${r.differing.length} differences, ${r.extra.length} extra`);
        return r.missing.length + r.differing.length + r.extra.length === 0 ? 0 : 1;
    }
    if (cmd === "pool" && (args.length === 5 || args.length === 6)) {
        // Prod's worker pool (node/pool.yaml: count and capacity of each node, the program's own
        // figures), each node less the kubelet's reservations, like the ci node.
        const [manifests, poolFile, kubeletConfig, volumeDir, outDir, poolName = "prod"] = args;
        const kubelet = YAML.parse(fs.readFileSync(kubeletConfig, "utf8"));
        const nodes = poolNodes(readPool(poolFile), kubelet, poolName, true);
        fs.mkdirSync(outDir, { recursive: true });
        writeList(path.join(outDir, "node.json"), nodes);
        writeList(path.join(outDir, "volumes.json"), standInVolumes(readManifests(manifests), volumeDir));
        console.log(`${nodes.length} nodes (allocatable ${JSON.stringify(nodes[0].status.allocatable)})`);
        return 0;
    }
    if (cmd === "lists" && args.length === 2) {
        // The render as JSON Lists for kubectl: manifests.yaml is YAML 1.2 (the yaml package), in
        // which `off` is a string; kubectl reads YAML 1.1, where it is false. JSON means the same
        // to both. Namespaces apart, so they can be applied first.
        const [manifests, dir] = args;
        const all = readManifests(manifests);
        const write = (name: string, items: K8sObject[]) => writeList(path.join(dir, name), items);
        write("all.json", all);
        write("namespaces.json", all.filter((o) => o.kind === "Namespace" && o.apiVersion === "v1"));
        write("objects.json", all.filter((o) => !(o.kind === "Namespace" && o.apiVersion === "v1")));
        console.log(`${all.length} objects`);
        return 0;
    }
    throw new Error("usage: cli.ts crds <manifests> <crds.json.gz> <out.json> | standins <manifests> <pool.yaml> <kubelet-config> <volume-dir> <out-dir> | compare <manifests> <live.json> [--generated-secrets] | pool <manifests> <pool.yaml> <kubelet-config> <volume-dir> <out-dir> [pool] | lists <manifests> <dir>");
}

try {
    process.exitCode = main(process.argv.slice(2));
} catch (err) {
    console.error(`e2e: ${err instanceof Error ? err.message : err}`);
    process.exitCode = 2;
}
