/** Kubernetes metav1.LabelSelector: matchLabels and matchExpressions, ANDed. */
export interface LabelSelector {
    matchLabels?: Record<string, string>;
    matchExpressions?: LabelSelectorRequirement[];
}

export interface LabelSelectorRequirement {
    key: string;
    operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    values?: string[];
}

/** `labels` null (metadata.labels: null) is no labels, as Gatekeeper's GetLabels() returns an empty map. */
export type LabelPredicate = (labels: Record<string, string> | undefined | null) => boolean;

/**
 * Compiles a selector once so matching an object is a few lookups.
 * Throws on selectors the API server would reject (unknown operator, In without values...),
 * naming `where` so the user can find the constraint.
 */
export function compileLabelSelector(selector: LabelSelector, where: string): LabelPredicate {
    if (selector === null || typeof selector !== "object" || Array.isArray(selector)) {
        throw new Error(`${where}: a label selector must be an object with matchLabels and/or matchExpressions`);
    }
    const checks: LabelPredicate[] = [];
    for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
        const expected = String(value);
        checks.push((labels) => labels != null && labels[key] === expected);
    }
    (selector.matchExpressions ?? []).forEach((req, i) => {
        checks.push(compileRequirement(req, `${where}.matchExpressions[${i}]`));
    });
    return (labels) => {
        for (const check of checks) if (!check(labels)) return false;
        return true;
    };
}

function compileRequirement(req: LabelSelectorRequirement, where: string): LabelPredicate {
    if (!req || typeof req.key !== "string" || req.key === "") {
        throw new Error(`${where}: key is required`);
    }
    const { key } = req;
    const values = new Set((req.values ?? []).map(String));
    const has = (labels: Record<string, string> | undefined | null) =>
        labels != null && Object.prototype.hasOwnProperty.call(labels, key);
    switch (req.operator) {
        case "In":
            if (values.size === 0) throw new Error(`${where}: operator In needs at least one value`);
            return (labels) => has(labels) && values.has(labels![key]);
        case "NotIn":
            if (values.size === 0) throw new Error(`${where}: operator NotIn needs at least one value`);
            return (labels) => !has(labels) || !values.has(labels![key]);
        case "Exists":
            if (values.size > 0) throw new Error(`${where}: operator Exists takes no values`);
            return has;
        case "DoesNotExist":
            if (values.size > 0) throw new Error(`${where}: operator DoesNotExist takes no values`);
            return (labels) => !has(labels);
        default:
            throw new Error(
                `${where}: unknown operator ${JSON.stringify(req.operator)} (expected In, NotIn, Exists or DoesNotExist)`,
            );
    }
}
