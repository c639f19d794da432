/** Public API of the Gatekeeper engine, for the policy pack and tools. */
export {
    buildConstraint,
    constraintSetFromObjects,
    createTemplateRegistry,
    EMPTY_CONFIG,
    loadConstraintSet,
    parseConstraintObjects,
    parseGatekeeperConfig,
    requireConstraints,
    type Constraint,
    type ConstraintInput,
    type ConstraintSet,
    type EnforcementAction,
    type GatekeeperConfig,
    type SyncKind,
    type TemplateRegistry,
} from "./constraints";
export {
    createEvaluator,
    evaluate,
    type EvaluateOptions,
    type EvaluationResult,
    type Evaluator,
    type EvaluatorOptions,
    type ObjectIdentity,
} from "./evaluate";
export { expandPodTemplate } from "./expansion";
export { buildInventory, type StackInventory } from "./inventory";
export type { KindSelector, Match } from "./match";
export { ParameterError } from "./parameter-schema";
export { k8sObjectFromPulumi } from "./pulumi";
export { CLUSTER_SCOPED_KINDS, defaultIsClusterScoped, effectiveNamespace, type ScopePredicate } from "./scope";
