import { LocalWorkspace } from "@pulumi/pulumi/automation";
import * as pulumi from "@pulumi/pulumi";
const dir = process.argv[2];
async function run(mode: string, opts: any = {}) {
    const program = async () => {
        const r: any = await pulumi.runtime.invoke("pulumi:pulumi:readStackResourceOutputs", { stackName: `organization/exp/dev` });
        pulumi.log.info(`[${mode}] read outputs: ${JSON.stringify(r?.outputs)}`);
        if (mode === "refuse") throw new pulumi.RunError("refused");
        new pulumi.ComponentResource("x:y:Z", "c", {});
        return { volumeClaimSizes: { "ns/pg": "data=2Gi" } };
    };
    const stack = await LocalWorkspace.createOrSelectStack({ stackName: "dev", projectName: "exp", program }, {
        workDir: dir, envVars: { PULUMI_BACKEND_URL: `file://${dir}/state`, PULUMI_CONFIG_PASSPHRASE: "x" },
        projectSettings: { name: "exp", runtime: "nodejs", backend: { url: `file://${dir}/state` } },
    });
    try { await stack.up({ onOutput: (s) => { if (/read outputs|error/.test(s)) process.stdout.write(s); }, ...opts }); console.log(`${mode}: up ok`); } catch (e) { console.log(`${mode}: up failed`); }
    console.log(`${mode}: outputs after: ${JSON.stringify(await stack.outputs())}`);
}
(async () => { await run("ok"); await run("refuse"); await run("ok"); })();
