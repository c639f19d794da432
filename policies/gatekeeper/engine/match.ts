import { DEFAULT_NAMESPACE } from "./scope";
import { compileLabelSelector, type LabelPredicate, type LabelSelector } from "./label-selector";
import { compileWildcard, compileWildcardList } from "./wildcard";

/** A constraint's spec.match, as written in the Constraint YAML. */
export interface Match {
    kinds?: KindSelector[];
    namespaces?: string[];
    excludedNamespaces?: string[];
    labelSelector?: LabelSelector;
    namespaceSelector?: LabelSelector;
    /** "*" (default), "Cluster" or "Namespaced". */
    scope?: string;
    /** Object name, with prefix/suffix glob. */
    name?: string;
    /** "All" (default), "Original" (only declared objects) or "Generated" (only pods expanded from workloads). */
    source?: string;
}

export interface KindSelector {
    apiGroups?: string[];
    kinds?: string[];
}

/** What matching needs to know about one object under review. */
export interface MatchTarget {
    group: string;
    kind: string;
    name: string;
    labels: Record<string, string> | undefined;
    /** Effective namespace; undefined for cluster-scoped objects. */
    namespace: string | undefined;
    isNamespace: boolean;
    /** True for a Pod synthesized from a workload's pod template. */
    generated: boolean;
    /** Labels of a namespace of the stack (or the labels the API server always sets). */
    namespaceLabels(namespace: string): Record<string, string>;
    /** Whether the stack declares the Namespace (a namespaceSelector cannot be judged on one it does not: MatchError). */
    namespaceDeclared?(namespace: string): boolean;
}

/**
 * A constraint's match that cannot be judged: Gatekeeper then rejects the object under that
 * constraint with this text as the violation's message (the constraint framework's
 * ErrAutoreject around the match's error), with the constraint's enforcement action.
 */
export class MatchError extends Error {
    override name = "MatchError";
}

/**
 * Gatekeeper's words (frameworks client ErrAutoreject around gatekeeper pkg/target matcher.go's
 * ErrMatching around pkg/mutation/match) for a namespaceSelector on an object whose Namespace it
 * does not have, naming the object.
 */
export const missingNamespace = (name: string) =>
    `unable to match constraints: error matching the requested object: ${name} :failed to run Match criteria: namespace selector for namespace-scoped object but missing Namespace`;

export interface CompiledMatch {
    /** Kind names this match can select, or undefined when it selects any kind. Lets the evaluator index constraints. */
    readonly kindNames: ReadonlySet<string> | undefined;
    matches(target: MatchTarget): boolean;
}

const MATCH_KEYS = new Set([
    "kinds",
    "namespaces",
    "excludedNamespaces",
    "labelSelector",
    "namespaceSelector",
    "scope",
    "name",
    "source",
]);

type Check = (t: MatchTarget) => boolean;

/** Compiles spec.match once per constraint; throws with `where` in the message on invalid input. */
export function compileMatch(match: Match | undefined | null, where: string): CompiledMatch {
    const m: Match = match ?? {};
    if (typeof m !== "object" || Array.isArray(m)) throw new Error(`${where}: match must be an object`);
    for (const key of Object.keys(m)) {
        if (!MATCH_KEYS.has(key)) {
            throw new Error(`${where}: unknown match field ${JSON.stringify(key)} (known: ${[...MATCH_KEYS].join(", ")})`);
        }
    }
    const checks: Check[] = [];
    const kinds = compileKinds(m.kinds, `${where}.kinds`);
    if (kinds.check) checks.push(kinds.check);
    const scope = compileScope(m.scope, `${where}.scope`);
    if (scope) checks.push(scope);
    if (m.namespaces !== undefined && m.namespaces !== null) {
        const inList = compileWildcardList(stringList(m.namespaces, `${where}.namespaces`));
        if (m.namespaces.length > 0) checks.push((t) => {
            const ns = namespaceForNamespaceMatching(t);
            return ns === undefined || inList(ns);
        });
    }
    if (m.excludedNamespaces !== undefined && m.excludedNamespaces !== null) {
        const inList = compileWildcardList(stringList(m.excludedNamespaces, `${where}.excludedNamespaces`));
        if (m.excludedNamespaces.length > 0) checks.push((t) => {
            const ns = namespaceForNamespaceMatching(t);
            return ns === undefined || !inList(ns);
        });
    }
    if (m.labelSelector) {
        const selects = compileLabelSelector(m.labelSelector, `${where}.labelSelector`);
        checks.push((t) => selects(t.labels));
    }
    if (m.namespaceSelector) {
        const selects: LabelPredicate = compileLabelSelector(m.namespaceSelector, `${where}.namespaceSelector`);
        checks.push((t) => {
            if (t.isNamespace) return selects(t.namespaceLabels(t.name));
            // Cluster-scoped objects other than Namespaces are not filtered by namespaceSelector.
            if (t.namespace === undefined) return true;
            // The default namespace always exists (gator's NamespaceForResource says so too).
            if (t.namespaceDeclared !== undefined && t.namespace !== DEFAULT_NAMESPACE && !t.namespaceDeclared(t.namespace)) throw new MatchError(missingNamespace(t.name));
            return selects(t.namespaceLabels(t.namespace));
        });
    }
    if (m.name !== undefined && m.name !== null && m.name !== "") {
        if (typeof m.name !== "string") throw new Error(`${where}.name: must be a string`);
        const nameMatches = compileWildcard(m.name);
        checks.push((t) => nameMatches(t.name));
    }
    const source = compileSource(m.source, `${where}.source`);
    if (source) checks.push(source);

    return {
        kindNames: kinds.kindNames,
        matches(t) {
            for (const check of checks) if (!check(t)) return false;
            return true;
        },
    };
}

/** A Namespace is matched by its own name; cluster-scoped objects are never excluded by namespace lists. */
function namespaceForNamespaceMatching(t: MatchTarget): string | undefined {
    return t.isNamespace ? t.name : t.namespace;
}

function compileKinds(
    kinds: KindSelector[] | undefined,
    where: string,
): { check?: Check; kindNames: ReadonlySet<string> | undefined } {
    if (kinds === undefined || kinds === null || (Array.isArray(kinds) && kinds.length === 0)) {
        return { kindNames: undefined };
    }
    if (!Array.isArray(kinds)) throw new Error(`${where}: must be a list of {apiGroups, kinds}`);
    const names = new Set<string>();
    let anyKind = false;
    const entries = kinds.map((entry, i) => {
        if (!entry || typeof entry !== "object") throw new Error(`${where}[${i}]: must be an object with apiGroups and kinds`);
        const groups = stringList(entry.apiGroups ?? [], `${where}[${i}].apiGroups`);
        const kindList = stringList(entry.kinds ?? [], `${where}[${i}].kinds`);
        const allKinds = kindList.length === 0 || kindList.includes("*");
        const allGroups = groups.length === 0 || groups.includes("*");
        if (allKinds) anyKind = true;
        else kindList.forEach((k) => names.add(k));
        const kindSet = new Set(kindList);
        const groupSet = new Set(groups);
        return (t: MatchTarget) => (allKinds || kindSet.has(t.kind)) && (allGroups || groupSet.has(t.group));
    });
    return {
        kindNames: anyKind ? undefined : names,
        check: (t) => entries.some((e) => e(t)),
    };
}

function compileScope(scope: string | undefined, where: string): Check | undefined {
    if (scope === undefined || scope === null || scope === "*" || scope === "") return undefined;
    if (scope === "Cluster") return (t) => t.isNamespace || t.namespace === undefined;
    if (scope === "Namespaced") return (t) => !t.isNamespace && t.namespace !== undefined;
    throw new Error(`${where}: must be "*", "Cluster" or "Namespaced", got ${JSON.stringify(scope)}`);
}

function compileSource(source: string | undefined, where: string): Check | undefined {
    if (source === undefined || source === null || source === "All" || source === "") return undefined;
    if (source === "Original") return (t) => !t.generated;
    if (source === "Generated") return (t) => t.generated;
    throw new Error(`${where}: must be "All", "Original" or "Generated", got ${JSON.stringify(source)}`);
}

function stringList(value: unknown, where: string): string[] {
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
        throw new Error(`${where}: must be a list of strings`);
    }
    return value as string[];
}
