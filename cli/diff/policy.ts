/**
 * Policy results of the two renders and which of them appeared or disappeared.
 *
 * The evaluation belongs to the policy pack: `loadPolicyEvaluator` adapts a revision's in-process
 * evaluation (policies/pack/run.ts: runPack with loadPackConfig(<stack>), the same policies and
 * policies/config/<stack>.json that `pulumi preview --policy-pack` uses). A revision without it
 * yields no evaluator and the report says so instead of guessing.
 */
import * as fs from "fs";
import * as path from "path";

/** A registered resource as the policy pack sees it (the render's resources.json records). */
export interface PolicyResource {
    type: string;
    urn: string;
    name: string;
    props: Record<string, any>;
}

export interface PolicyFinding {
    /** The pack's policy, e.g. "gatekeeper-deny" or "images-pinned-by-digest". */
    policy: string;
    /** mandatory or advisory. */
    enforcementLevel: string;
    /** "Deployment agent/model-bridge", or the resource name when it is not a Kubernetes object. */
    object: string;
    message: string;
}

/**
 * Evaluates one stack's policy configuration against its rendered resources. `previous`: the stack's
 * resources before the change, for the Gatekeeper policies' operation model (a new object is a
 * CREATE, a changed one an UPDATE with its old object, an unchanged one judged as the audit does);
 * without it every object is a CREATE.
 */
export type PolicyEvaluator = (stack: string, resources: PolicyResource[], previous?: PolicyResource[]) => PolicyFinding[] | Promise<PolicyFinding[]>;

export type PolicyDiff =
    /** error: the pack exists but could not be evaluated (config, constraint file or policy error): the diff fails. */
    | { available: false; reason: string; error?: boolean }
    | { available: true; appeared: PolicyFinding[]; disappeared: PolicyFinding[]; unchangedCount: number };

const key = (f: PolicyFinding) => [f.policy, f.enforcementLevel, f.object, f.message].join("\u0000");

export function diffFindings(base: readonly PolicyFinding[], head: readonly PolicyFinding[]): PolicyDiff {
    const before = new Set(base.map(key));
    const after = new Set(head.map(key));
    const dedupe = (list: readonly PolicyFinding[]) => [...new Map(list.map((f) => [key(f), f])).values()];
    return {
        available: true,
        appeared: dedupe(head.filter((f) => !before.has(key(f)))),
        disappeared: dedupe(base.filter((f) => !after.has(key(f)))),
        unchangedCount: [...after].filter((k) => before.has(k)).length,
    };
}

/** The parts of policies/pack/run.ts the diff uses (a revision before issue 43 takes no earlier resources, and ignores them). */
interface PackModule {
    runPack(resources: PolicyResource[], config: unknown, policies?: undefined, previous?: PolicyResource[]): { violations: Array<{ policy: string; enforcementLevel: string; message: string; urn?: string }> };
    loadPackConfig(stack: string): unknown;
}

export const PACK_MODULE = path.join("policies", "pack", "run.ts");

/** The in-process evaluation of the policy pack of the revision at `root`; undefined when it has none. */
export async function loadPolicyEvaluator(root: string): Promise<PolicyEvaluator | undefined> {
    const modulePath = path.join(root, PACK_MODULE);
    if (!fs.existsSync(modulePath)) return undefined;
    const mod = (await import(modulePath)) as Partial<PackModule> & { default?: Partial<PackModule> };
    const pack = typeof mod.runPack === "function" ? mod : mod.default;
    if (typeof pack?.runPack !== "function" || typeof pack.loadPackConfig !== "function") return undefined;
    const { runPack, loadPackConfig } = pack as PackModule;
    return (stack, resources, previous) => {
        const objects = new Map(resources.map((r) => [r.urn, describeResource(r)]));
        // undefined policies: the pack's own (runPack's default).
        return runPack(resources, loadPackConfig(stack), undefined, previous).violations.map((v) => ({
            policy: v.policy,
            enforcementLevel: v.enforcementLevel,
            object: (v.urn && objects.get(v.urn)) || "(stack)",
            message: v.message,
        }));
    };
}

/** "Kind namespace/name" for a Kubernetes object, else "<type> <name>". */
function describeResource(r: PolicyResource): string {
    const meta = r.props?.metadata;
    const kind = r.props?.kind ?? /:([A-Za-z]+)$/.exec(r.type)?.[1];
    if (r.type.startsWith("kubernetes:") && meta?.name) return `${kind} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name}`;
    return `${r.type} ${r.name}`;
}
