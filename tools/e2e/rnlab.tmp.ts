import { Context } from "./harness/context";
import { Steps } from "./harness/steps";
import * as cluster from "./steps/cluster";
import * as realnode from "./steps/realnode";
import { IMAGE_RECIPES } from "./images/recipes";
async function main() {
    const ctx = new Context();
    const run = new Steps(ctx);
    ctx.ports = { etcd: await cluster.freePort(), etcdPeer: await cluster.freePort(), api: await cluster.freePort() };
    await run.must("render", cluster.render);
    await run.must("pki", cluster.pki);
    await run.must("etcd", cluster.etcd);
    await run.must("apiserver", cluster.apiserver);
    await run.must("controllers", cluster.controllers);
    await run.must("node", cluster.node);
    await run.must("containerd", realnode.startContainerd);
    await run.must("import", (c, io) => realnode.importImages(c, io, IMAGE_RECIPES.filter((r) => ["pause"].includes(r.name))));
    await run.must("join", (c, io) => realnode.joinNode(c, io, false));
    await run.step("a pod", async (c, io) => {
        const fs = await import("node:fs");
        fs.writeFileSync(c.path("p.json"), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "p1", namespace: "default" }, spec: { nodeSelector: { "kubernetes.io/hostname": "e2e-node" }, containers: [{ name: "c", image: "registry.k8s.io/pause:3.10.2" }] } }));
        await c.kubectl(["apply", "-f", c.path("p.json")]);
        await c.kubectl(["wait", "--for=condition=Ready", "pod/p1", "--timeout=120s"]);
        io.result((await c.kubectl(["get", "pod", "p1", "-o", "wide"])).stdout);
    });
    if (process.env.RNLAB_HOLD) await new Promise((r) => setTimeout(r, Number(process.env.RNLAB_HOLD) * 1000));
    return run.finish();
}
main().then((c) => process.exit(c), (e) => { console.error(e); process.exit(2); });
