/**
 * Issue 12: both enforcement points agree on the real API server. Every CREATE case of the shared
 * conformance cases is created with server-side dry-run under its constraint's generated policy.
 * Run after the engine steps: the stack's own admission policies are gone, only the harness's judge.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Context, StepIO } from "../harness/context";

export async function agree(ctx: Context, io: StepIO): Promise<void> {
    const kubectlDir = path.dirname(ctx.bin("kubectl", ctx.tools.k8s));
    const r = await ctx.tsxRun("tools/admission/agree.ts", ["--kubeconfig", ctx.kubeconfig], { env: { PATH: `${kubectlDir}:${process.env.PATH}` }, allowFail: true });
    fs.writeFileSync(ctx.path("admission-agree.txt"), r.stdout + r.stderr);
    if (r.code !== 0) throw new Error(`npm run admission:agree exited ${r.code}`);
    const figures = /fixtures \d+, agree \d+, disagree \d+, unusable \d+/.exec(r.stdout + r.stderr)?.[0];
    if (!figures) throw new Error("npm run admission:agree printed no figures");
    io.result(figures);
}
