import * as fs from "node:fs";
import { Context, sleep } from "./harness/context";
import { Steps } from "./harness/steps";
import * as cluster from "./steps/cluster";
import * as objects from "./steps/objects";
import * as realnode from "./steps/realnode";
import * as flows from "./steps/realnodeFlows";
import { cached } from "./images/build";
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
    await run.must("crds", cluster.crds);
    await run.must("volumes", cluster.volumes);
    await run.must("containerd", realnode.startContainerd);
    await run.must("import", (c, io) => realnode.importImages(c, io, IMAGE_RECIPES.filter((r) => cached(r))));
    await run.must("join", (c, io) => realnode.joinNode(c, io, true));
    if (cached(IMAGE_RECIPES.find((r) => r.name === "coredns")!)) await run.step("dns", realnode.startDns);
    await run.must("kwok", realnode.keepOnKwok);
    await run.step("apply", async (c, io) => {
        const pvs = JSON.parse(fs.readFileSync(c.path("volumes.json"), "utf8")).items as Array<{ spec: { hostPath: { path: string } } }>;
        for (const pv of pvs) { fs.mkdirSync(pv.spec.hostPath.path, { recursive: true }); fs.chmodSync(pv.spec.hostPath.path, 0o777); }
        await objects.apply(c, io);
        for (const d of ["agent-server-4000", "agent-server-4001"]) await c.kubectl(["-n", "agent", "set", "image", `deploy/${d}`, "server=registry.example.com/ops/agent-server:1.2.27"]);
        await c.kubectl(["-n", "agent", "patch", "deploy", "model-bridge", "--type", "json", "-p", JSON.stringify([{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "registry.example.com/ops/model-bridge:0.5.0" }, { op: "remove", path: "/spec/template/spec/containers/0/args" }])]);
    });
    await sleep(Number(process.env.RNLAB_WAIT ?? 150) * 1000);
    await run.step("pods", async (c, io) => void (await realnode.podLines(c, io)));
    await run.step("declared", flows.declaredStep);
    await run.step("refused", flows.refusedStep);
    if (process.env.RNLAB_HOLD) await new Promise((r) => setTimeout(r, Number(process.env.RNLAB_HOLD) * 1000));
    return run.finish();
}
main().then((c) => process.exit(c), (e) => { console.error(e); process.exit(2); });
