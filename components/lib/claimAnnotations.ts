/** The annotations of a StatefulSet whose volumes can grow (claimGrowth.ts), also read by npm run explain and diff. */
export const ORPHAN_ANNOTATION = "pulumi.com/deletionPropagationPolicy";
/** "<template>=<size>,...": unknown in a preview exactly when a size changes (claimGrowth.ts). */
export const CLAIM_SIZES_ANNOTATION = "ops/volume-claim-sizes";
/** "<template>=<config key>,...": where each size is configured. */
export const CLAIM_SIZE_KEYS_ANNOTATION = "ops/volume-claim-size-keys";
