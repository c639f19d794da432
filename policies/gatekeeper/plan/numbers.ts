/**
 * topdown's arithmetic on numbers that are not both integers (v1/topdown/arithmetic.go): each
 * operand's text read into a big.Float of 64 bits of mantissa, the operation rounded to 64 bits
 * (to nearest, ties to even), the result written as the shortest decimal that reads back to the
 * same 64-bit value (builtins.FloatToNumber: Text('g', -1), or the integer's digits). The plan
 * engine's numbers are float64: an operand's text is the shortest that reads back to it
 * (JavaScript's String), and the result is the float64 nearest to OPA's text. So 0.1 + 0.2 is
 * 0.3 as in OPA (not 0.30000000000000004), and 1.1 * 1000 is 1100.
 */

const BITS = 64n;

/** A nonzero finite value mant * 2^exp, mant of exactly 64 bits; zero as null. */
interface Big {
    neg: boolean;
    mant: bigint;
    exp: bigint;
}

function bitLength(n: bigint): bigint {
    return BigInt(n.toString(2).length);
}

/** num / den (both positive) rounded to 64 bits of mantissa, ties to even. */
function round(neg: boolean, num: bigint, den: bigint, exp: bigint): Big {
    // Scale so that the quotient has at least 66 bits: 64 kept, a guard bit, and more.
    const k = BITS + 2n - (bitLength(num) - bitLength(den));
    const n = k > 0n ? num << k : num;
    const d = k < 0n ? den << -k : den;
    let q = n / d;
    const sticky = n % d !== 0n;
    const shift = bitLength(q) - BITS;
    const rest = q & ((1n << shift) - 1n);
    const half = 1n << (shift - 1n);
    q >>= shift;
    if (rest > half || (rest === half && (sticky || (q & 1n) === 1n))) q += 1n;
    let e = exp - k + shift;
    if (bitLength(q) > BITS) {
        q >>= 1n;
        e += 1n;
    }
    return { neg, mant: q, exp: e };
}

/** A float64's value read from its shortest text, as big.Float.SetString does at 64 bits. */
function fromNumber(x: number): Big | null {
    if (x === 0) return null;
    const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
    if (!m) throw new RangeError(`no decimal text for ${x}`);
    const digits = BigInt(m[2] + (m[3] ?? ""));
    const e10 = (m[4] === undefined ? 0 : Number(m[4])) - (m[3]?.length ?? 0);
    return e10 >= 0 ? round(m[1] === "-", digits * 10n ** BigInt(e10), 1n, 0n) : round(m[1] === "-", digits, 10n ** BigInt(-e10), 0n);
}

/** The exact rational of a value: [numerator, denominator] of its magnitude. */
function ratio(v: Big): [bigint, bigint] {
    return v.exp >= 0n ? [v.mant << v.exp, 1n] : [v.mant, 1n << -v.exp];
}

/** The digits and decimal point position (value = 0.d1d2... * 10^point) of p significant digits of num/den: nearest (ties to even, as big's decimal round), down or up. */
function digitsOf(num: bigint, den: bigint, p: number, mode: "nearest" | "down" | "up"): { digits: bigint; point: number } {
    // point: the power of ten with 10^(point-1) <= num/den < 10^point.
    let point = (num.toString().length - den.toString().length);
    const pow = (e: number) => 10n ** BigInt(Math.abs(e));
    const atLeast = (e: number) => (e >= 0 ? num >= den * pow(e) : num * pow(e) >= den);
    while (!atLeast(point - 1)) point--;
    while (atLeast(point)) point++;
    const scale = p - point;
    const n = scale >= 0 ? num * pow(scale) : num;
    const d = scale >= 0 ? den : den * pow(scale);
    let q = n / d;
    const r = n % d;
    if (mode === "up" ? r !== 0n : mode === "nearest" && (2n * r > d || (2n * r === d && (q & 1n) === 1n))) q += 1n;
    if (q.toString().length > p) {
        q /= 10n;
        point++;
    }
    return { digits: q, point };
}

/** Whether a/b lies between lower and upper (inclusive when asked). */
function within(num: bigint, den: bigint, lower: [bigint, bigint], upper: [bigint, bigint], inclusive: boolean): boolean {
    const lo = num * lower[1] - lower[0] * den;
    const hi = upper[0] * den - num * upper[1];
    return inclusive ? lo >= 0n && hi >= 0n : lo > 0n && hi > 0n;
}

/** OPA's text of a 64-bit value read back as a float64 (FloatToNumber, then the plan engine's Number). */
function toNumber(v: Big | null): number {
    if (v === null) return 0;
    const sign = v.neg ? -1 : 1;
    if (v.exp >= 0n) return sign * Number(v.mant << v.exp);
    const [num, den] = ratio(v);
    if (num % den === 0n) return sign * Number(num / den);
    // The shortest digits within half a unit either side (big's ftoa roundShortest: the same half
    // unit below a power of two; inclusive when the mantissa is even).
    const lower: [bigint, bigint] = [v.mant * 2n - 1n, den * 2n];
    const upper: [bigint, bigint] = [v.mant * 2n + 1n, den * 2n];
    const inclusive = (v.mant & 1n) === 0n;
    for (let p = 1; p <= 25; p++) {
        for (const mode of ["nearest", "down", "up"] as const) {
            const { digits, point } = digitsOf(num, den, p, mode);
            const shift = point - p;
            const [a, b] = shift >= 0 ? [digits * 10n ** BigInt(shift), 1n] : [digits, 10n ** BigInt(-shift)];
            if (within(a, b, lower, upper, inclusive)) return sign * Number(`${digits}e${shift}`);
        }
    }
    return sign * (Number(num) / Number(den));
}

function combine(a: Big | null, b: Big | null, op: "add" | "mul" | "quo"): Big | null {
    if (op === "mul") {
        if (a === null || b === null) return null;
        const [an, ad] = ratio(a);
        const [bn, bd] = ratio(b);
        return round(a.neg !== b.neg, an * bn, ad * bd, 0n);
    }
    if (op === "quo") {
        if (a === null) return null;
        const [an, ad] = ratio(a);
        const [bn, bd] = ratio(b!);
        return round(a.neg !== b!.neg, an * bd, ad * bn, 0n);
    }
    if (a === null) return b;
    if (b === null) return a;
    const [an, ad] = ratio(a);
    const [bn, bd] = ratio(b);
    const d = ad > bd ? ad : bd;
    const x = (a.neg ? -1n : 1n) * an * (d / ad) + (b.neg ? -1n : 1n) * bn * (d / bd);
    if (x === 0n) return null;
    return round(x < 0n, x < 0n ? -x : x, d, 0n);
}

/**
 * x op y as topdown computes it for numbers that are not both integers (or whose exact result
 * is beyond 2^53): JavaScript's own result where the two agree by construction.
 */
export function opaArith(x: number, y: number, op: "plus" | "minus" | "mul" | "div"): number {
    if (Number.isInteger(x) && Number.isInteger(y) && op !== "div") {
        const r = op === "plus" ? x + y : op === "minus" ? x - y : x * y;
        if (Number.isSafeInteger(r)) return r;
    }
    if (!Number.isFinite(x) || !Number.isFinite(y)) return op === "plus" ? x + y : op === "minus" ? x - y : op === "mul" ? x * y : x / y;
    const a = fromNumber(x);
    const b = fromNumber(op === "minus" ? -y : y);
    return toNumber(combine(a, b, op === "mul" ? "mul" : op === "div" ? "quo" : "add"));
}

/** topdown's sum of numbers that are not all integers: a big.Float of 64 bits added to in order. */
export function opaSum(xs: readonly number[]): number {
    if (xs.every(Number.isInteger)) {
        const r = xs.reduce((s, x) => s + x, 0);
        if (Number.isSafeInteger(r)) return r;
    }
    if (!xs.every(Number.isFinite)) return xs.reduce((s, x) => s + x, 0);
    let acc: Big | null = null;
    for (const x of xs) acc = combine(acc, fromNumber(x), "add");
    return toNumber(acc);
}
