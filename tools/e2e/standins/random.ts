/**
 * STAND-IN for the random provider (pulumi-random / terraform-provider-random), for the e2e only:
 * the Go module proxy does not serve the real one. RandomPassword and RandomString with the real
 * provider's inputs and character classes (its defaults: every class on, special characters
 * `!@#$%&*()-_=+[]{}<>:?`, min counts 0), from node:crypto's CSPRNG. `bcryptHash` is not made
 * (node:crypto has no bcrypt and the program does not read it).
 */
import * as crypto from "node:crypto";

export interface RandomInputs {
    length: number;
    special?: boolean;
    upper?: boolean;
    lower?: boolean;
    numeric?: boolean;
    minSpecial?: number;
    minUpper?: number;
    minLower?: number;
    minNumeric?: number;
    overrideSpecial?: string;
}

const CLASSES = {
    lower: "abcdefghijklmnopqrstuvwxyz",
    upper: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    numeric: "0123456789",
    special: "!@#$%&*()-_=+[]{}<>:?",
};

export function checkRandom(i: RandomInputs): string[] {
    const problems: string[] = [];
    if (!Number.isInteger(i.length) || i.length < 1) problems.push(`length: expected an integer >= 1, got ${i.length}`);
    const mins = (i.minSpecial ?? 0) + (i.minUpper ?? 0) + (i.minLower ?? 0) + (i.minNumeric ?? 0);
    if (mins > i.length) problems.push(`length: ${i.length} is less than the sum of the min* counts (${mins})`);
    if (![i.special, i.upper, i.lower, i.numeric].some((v) => v !== false)) problems.push("at least one of special, upper, lower, numeric must be true");
    return problems;
}

/** A random string with the real provider's rules: the minimum of each class first, the rest from every enabled class, then shuffled. */
export function randomString(i: RandomInputs): string {
    const on = (v: boolean | undefined) => v !== false;
    const special = i.overrideSpecial ?? CLASSES.special;
    const pick = (set: string, n: number) => Array.from({ length: n }, () => set[crypto.randomInt(set.length)]);
    const chars = [
        ...(on(i.lower) ? pick(CLASSES.lower, i.minLower ?? 0) : []),
        ...(on(i.upper) ? pick(CLASSES.upper, i.minUpper ?? 0) : []),
        ...(on(i.numeric) ? pick(CLASSES.numeric, i.minNumeric ?? 0) : []),
        ...(on(i.special) ? pick(special, i.minSpecial ?? 0) : []),
    ];
    const all = (on(i.lower) ? CLASSES.lower : "") + (on(i.upper) ? CLASSES.upper : "") + (on(i.numeric) ? CLASSES.numeric : "") + (on(i.special) ? special : "");
    chars.push(...pick(all, i.length - chars.length));
    for (let k = chars.length - 1; k > 0; k--) {
        const j = crypto.randomInt(k + 1);
        [chars[k], chars[j]] = [chars[j], chars[k]];
    }
    return chars.join("");
}
