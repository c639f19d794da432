/**
 * The diff of one stack between a base revision and the working tree, as data: what both
 * formats (Markdown, JSON) print.
 */
import type { ConstraintDiff } from "./constraints";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { helmReleaseObjects } from "./helmReleases";
import { diffObjects, ObjectDiff } from "./objects";
import { diffFindings, PACK_MODULE, PolicyDiff, PolicyEvaluator, PolicyResource } from "./policy";
import { explainDiff, ExplainDiff } from "./explain";
import { findReplacements, Replacement } from "./replacements";

export interface RevisionInfo {
    /** The revision as given (`main`, `origin/main`, a SHA) or "working tree". */
    ref: string;
    /** The resolved commit, when the side is a commit. */
    commit?: string;
    /** Render problems (schema errors, duplicates): the render produced objects anyway. */
    problems: string[];
}

export interface StackDiffReport {
    stack: string;
    base: RevisionInfo;
    head: RevisionInfo;
    /** Things a reader must know about how the diff was made (e.g. the base has no such stack). */
    notes: string[];
    objects: ObjectDiff;
    policy: PolicyDiff;
    /** What the change does on the cluster (npm run explain on both sides). */
    explain?: ExplainDiff;
    /** Changed objects `pulumi up` replaces instead of updating in place (replacements.ts). */
    replacements?: Replacement[];
    /** Gatekeeper constraints removed, added or enforced differently (constraints.ts). */
    constraints?: ConstraintDiff;
}

export interface RenderedSide {
    info: RevisionInfo;
    /** Redacted objects of the render. */
    objects: K8sObject[];
    /** Every registered resource, redacted (the render's resources.json), for the policy pack. */
    resources: PolicyResource[];
    /** The render's rendered files (node pool, node agent, declared flows), when the side has them. */
    files?: Record<string, string>;
    /** The revision has no such stack: nothing to render or judge, every object of the other side is new. */
    absent?: boolean;
}

export interface PolicyEvaluators {
    base?: PolicyEvaluator;
    head?: PolicyEvaluator;
}

export async function buildReport(stack: string, base: RenderedSide, head: RenderedSide, evaluators: PolicyEvaluators, notes: string[] = [], constraints?: ConstraintDiff): Promise<StackDiffReport> {
    // Helm releases are single resources in the render: they take part as objects of their own.
    const objects = diffObjects([...base.objects, ...helmReleaseObjects(base.resources)], [...head.objects, ...helmReleaseObjects(head.resources)]);
    let policy: PolicyDiff;
    if (!evaluators.head) {
        policy = { available: false, reason: `this revision has no in-process policy evaluation (${PACK_MODULE})` };
    } else {
        // A base revision without the evaluation is judged by this revision's pack, so that only
        // object changes (not the arrival of the pack) show up.
        const baseEvaluator = evaluators.base ?? evaluators.head;
        if (!evaluators.base) notes.push("the base revision has no in-process policy evaluation: both sides were evaluated with this revision's policy pack");
        // A pack that cannot be evaluated (its config names an unknown policy, a constraint file does
        // not parse, a policy throws) is an error of the diff, not a missing evaluation.
        let side = "the working tree";
        try {
            // The operation model (issue 43): the working tree is the change to the base, which is what is
            // deployed: judged with the base's objects as the earlier state (new: CREATE, changed: UPDATE
            // with the old object, unchanged: as Gatekeeper's audit judges them). The base is judged as the
            // audit judges it (every object unchanged, itself its earlier state), so an unchanged object is
            // judged alike on both sides and only what the change does appears or disappears.
            const headFindings = await evaluators.head(stack, head.resources, base.absent ? [] : base.resources);
            side = evaluators.base ? "the base revision" : "the base revision (with this revision's pack)";
            policy = diffFindings(base.absent ? [] : await baseEvaluator(stack, base.resources, base.resources), headFindings);
        } catch (err) {
            policy = { available: false, error: true, reason: `the policy pack failed on ${side}: ${err instanceof Error ? err.message : String(err)}` };
        }
    }
    const explain = explainDiff(stack, base, head);
    return { stack, base: base.info, head: head.info, notes, objects, policy, explain, replacements: findReplacements(objects.changed), ...(constraints ? { constraints } : {}) };
}

export function hasChanges(r: StackDiffReport): boolean {
    const o = r.objects;
    const constraintsChanged = r.constraints !== undefined && r.constraints.removed.length + r.constraints.added.length + r.constraints.changed.length > 0;
    const policyChanged = r.policy.available && (r.policy.appeared.length > 0 || r.policy.disappeared.length > 0);
    const explainChanged = r.explain?.available === true && r.explain.changes.length > 0;
    return o.added.length + o.removed.length + o.changed.length > 0 || policyChanged || explainChanged || constraintsChanged;
}
