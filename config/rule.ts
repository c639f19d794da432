/**
 * What a cross-key rule is (config/rules.ts and the *Rules.ts files): a function of the typed
 * configuration that returns the problems it finds, each naming the key to change. Below both
 * the rules and the loader (config/index.ts), which reports their problems.
 */
import type { Infer } from "./schema";
import type { schema } from "./stack";

/** One problem of a stack's configuration: the key (without the project), what is wrong, the expected form. */
export interface ConfigProblem {
    key: string;
    problem: string;
    expected: string;
}

/** The typed configuration the rules read (without the stack and project names). */
export type Config = Infer<typeof schema>;

export type Rule = (c: Config) => ConfigProblem[];
