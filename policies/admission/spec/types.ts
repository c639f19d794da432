import type { CelCheck } from "../types";

/** The admission side of one single-object rule of the specification (policies/spec/<name>.ts). */
export interface SpecAdmissionRule<C = any> {
    /** The spec rule's name (its policy name in the pack). */
    name: string;
    /** What it judges, as resourceRules (API group and resources). */
    resources: Array<{ apiGroups: string[]; resources: string[]; kinds: string[] }>;
    /** The checks on `object` for the rule's config (pack config over the rule's defaults); none when the config turns the rule off. */
    checks(config: C): CelCheck[];
}
