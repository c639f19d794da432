/** The pack over the offline render (npm run render, test/render.ts): the same evaluation as the tests and the bench. */
import { unwrapSecrets, type PackResource } from "./resources";
import { packTemplateNotes } from "./templates";
import { loadPackConfig, mandatory, runPack, verdict, type PackResult } from "./run";

/** What the pack reads of an offline render (cli/harness/render.ts's RenderResult is one). */
export interface RenderResult {
    stack: string;
    /** Registered resources, inputs as registered (secret values keep their mark). */
    resources: { type: string; urn: string; name: string; inputs: Record<string, unknown> }[];
    /** The render's own problems: the pack is not evaluated over a failed render. */
    errors: string[];
}

/** Every registered resource as the policy server would hand it over: type, URN, name and props (secrets unwrapped). */
export function stackResourcesOf(result: RenderResult): PackResource[] {
    return result.resources.map((r) => ({ type: r.type, urn: r.urn, name: r.name, props: unwrapSecrets(r.inputs) as Record<string, any> }));
}

/** The pack with policies/config/<stack>.json over a render of that stack. */
export function evaluateRender(result: RenderResult, stack = result.stack): PackResult {
    return runPack(stackResourcesOf(result), loadPackConfig(stack));
}

export interface PackVerdict {
    /** The lines for the render summary. */
    text: string;
    /** False when the pack reports a mandatory violation or cannot be evaluated (config, constraint file, policy error). */
    ok: boolean;
}

/**
 * The pack's verdict on a render, part of the render's exit status: a mandatory violation, a pack
 * config naming an unknown policy or holding a bad value, a constraint file that does not parse or
 * breaks a template's schema, or a policy that fails each make it not ok, with a message naming
 * the file and the item.
 */
export function packVerdict(result: RenderResult, stack = result.stack): PackVerdict {
    if (result.errors.length > 0) return { text: "policy pack: not evaluated (the render failed)", ok: false };
    let notes: string[] = [];
    const verdict = verdictOf(() => {
        const evaluated = evaluateRender(result, stack);
        notes = packTemplateNotes();
        return evaluated;
    });
    return notes.length === 0 ? verdict : { ...verdict, text: `${notes.join("\n")}\n${verdict.text}` };
}

/** The verdict of one evaluation (which may throw: config, constraint file or policy errors). */
export function verdictOf(evaluate: () => PackResult): PackVerdict {
    let evaluated: PackResult;
    try {
        evaluated = evaluate();
    } catch (err) {
        return { text: `policy pack: error: ${(err as Error).message.split("\n").join("\n  ")}`, ok: false };
    }
    const blocking = mandatory(evaluated).length;
    const text = verdict(evaluated) + (blocking > 0 ? `\npolicy pack: ${blocking} mandatory violation(s) block the stack` : "");
    return { text, ok: blocking === 0 };
}

/** The pack's verdict text for the render summary. */
export function renderVerdict(result: RenderResult): string {
    return packVerdict(result).text;
}
