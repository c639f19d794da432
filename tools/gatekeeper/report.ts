/**
 * What one seed of `npm run test:gatekeeper` found: how many mutants were made and refused, and
 * per judge (the pack, the Wasm engine, the admission policies) the pairs that agree with gator
 * and those that differ.
 */

export interface Difference {
    group: string;
    object: string;
    objectOps: string;
    constraint: string;
    constraintOps: string;
    gator: string[];
    pack: string[];
    /** The judge compared with gator: the pack (TypeScript templates, the default) or the Wasm engine. */
    judge?: "wasm";
}

export interface SeedReport {
    seed: number;
    objectMutants: number;
    constraintMutants: number;
    /** Mutants the strict check refused (not admissible) or the pack's parameter check refused. */
    refusedObjects: number;
    refusedConstraints: number;
    agree: number;
    differ: Difference[];
    admissionAgree: number;
    admissionDiffer: Difference[];
    gatorRuns: number;
    gatorSeconds: number;
    /** The third judge: the library's Rego compiled to Wasm, against gator on the same pairs. */
    wasmAgree: number;
    wasmDiffer: Difference[];
}

export function emptyReport(seed: number): SeedReport {
    return { seed, objectMutants: 0, constraintMutants: 0, refusedObjects: 0, refusedConstraints: 0, agree: 0, differ: [], admissionAgree: 0, admissionDiffer: [], gatorRuns: 0, gatorSeconds: 0, wasmAgree: 0, wasmDiffer: [] };
}
