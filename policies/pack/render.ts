/** The pack over the offline render (npm run render, test/render.ts): the same evaluation as the tests and the bench. */
import type { RenderResult } from "../../tools/harness/render";
import { unwrapSecrets } from "../../tools/harness/manifests";
import type { PackResource } from "./resources";
import { loadPackConfig, runPack, verdict, type PackResult } from "./run";

/** Every registered resource as the policy server would hand it over: type, URN, name and props (secrets unwrapped). */
export function stackResourcesOf(result: RenderResult): PackResource[] {
    return result.resources.map((r) => ({ type: r.type, urn: r.urn, name: r.name, props: unwrapSecrets(r.inputs) as Record<string, any> }));
}

/** The pack with policies/config/<stack>.json over a render of that stack. */
export function evaluateRender(result: RenderResult, stack = result.stack): PackResult {
    return runPack(stackResourcesOf(result), loadPackConfig(stack));
}

/** The pack's verdict for the render summary; a pack that cannot be evaluated says why instead of failing the render. */
export function renderVerdict(result: RenderResult): string {
    if (result.errors.length > 0) return "policy pack: not evaluated (the render failed)";
    try {
        return verdict(evaluateRender(result));
    } catch (err) {
        return `policy pack: could not be evaluated: ${(err as Error).message}`;
    }
}
