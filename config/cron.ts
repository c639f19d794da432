/**
 * A CronJob schedule as the API server reads it: kubernetes 1.36 validates `spec.schedule` with
 * robfig/cron v3.0.1's ParseStandard (pkg/apis/batch/validation validateScheduleFormat ->
 * pkg/util/parsers ParseCronScheduleWithPanicRecovery), and the CronJob controller fires it with
 * that parser's Next. This is that parser (parser.go getField/getRange/parseIntOrName/mustParseInt,
 * spec.go bounds and dayMatches), for five-field schedules: the same values accepted, the same
 * refused, with its reason; test/cron.test.ts holds it against the Go parser itself where Go runs.
 * Descriptors ("@daily", "@every 1h") are valid there but not taken here; "TZ=" the API server refuses.
 */

/** robfig's bounds (spec.go): the day of week is 0..6 (SUN..SAT); 7 is refused. */
const FIELDS = [
    { name: "minute", min: 0, max: 59 },
    { name: "hour", min: 0, max: 23 },
    { name: "day of month", min: 1, max: 31 },
    { name: "month", min: 1, max: 12, names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], first: 1 },
    { name: "day of week", min: 0, max: 6, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"], first: 0 },
] as const;

export interface CronSchedule {
    /** The values of each of the five fields. */
    values: Array<Set<number>>;
    /** Whether the day of month and the day of week carry robfig's star bit ('*' or '?' with no step above 1). */
    domStar: boolean;
    dowStar: boolean;
}

const INT64_MAX = 2n ** 63n - 1n;

/** strconv.Atoi then the sign check of mustParseInt. */
function mustParseInt(expr: string): number | string {
    if (!/^[+-]?\d+$/.test(expr) || BigInt(expr) > INT64_MAX || BigInt(expr) < -INT64_MAX - 1n) return `failed to parse int from ${expr}`;
    const n = Number(BigInt(expr));
    if (n < 0) return `negative number (${n}) not allowed: ${expr}`;
    return n;
}

function parseIntOrName(expr: string, names?: readonly string[], first = 0): number | string {
    const i = names?.indexOf(expr.toLowerCase()) ?? -1;
    return i >= 0 ? i + first : mustParseInt(expr);
}

/** The values of one field, or robfig's reason for refusing it. */
function getField(field: string, f: (typeof FIELDS)[number]): { values: Set<number>; star: boolean } | string {
    const values = new Set<number>();
    let star = false;
    // strings.FieldsFunc: empty items ("1,,2", ",") are dropped.
    for (const expr of field.split(",").filter((e) => e !== "")) {
        const rangeAndStep = expr.split("/");
        const lowAndHigh = rangeAndStep[0].split("-");
        const names = "names" in f ? f.names : undefined;
        const first = "first" in f ? f.first : 0;
        let start: number;
        let end: number;
        let extra = false;
        if (lowAndHigh[0] === "*" || lowAndHigh[0] === "?") {
            [start, end, extra] = [f.min, f.max, true];
        } else {
            const s = parseIntOrName(lowAndHigh[0], names, first);
            if (typeof s === "string") return s;
            start = end = s;
            if (lowAndHigh.length === 2) {
                const e = parseIntOrName(lowAndHigh[1], names, first);
                if (typeof e === "string") return e;
                end = e;
            } else if (lowAndHigh.length > 2) return `too many hyphens: ${expr}`;
        }
        let step = 1;
        if (rangeAndStep.length === 2) {
            const s = mustParseInt(rangeAndStep[1]);
            if (typeof s === "string") return s;
            step = s;
            // "N/step" means "N-max/step".
            if (lowAndHigh.length === 1) end = f.max;
            if (step > 1) extra = false;
        } else if (rangeAndStep.length > 2) return `too many slashes: ${expr}`;
        if (start < f.min) return `beginning of range (${start}) below minimum (${f.min}): ${expr}`;
        if (end > f.max) return `end of range (${end}) above maximum (${f.max}): ${expr}`;
        if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
        if (step === 0) return `step of range should be a positive number: ${expr}`;
        for (let v = start; v <= end; v += step) values.add(v);
        star ||= extra;
    }
    return { values, star };
}

/** A five-field schedule as the API server parses it, or its reason for refusing it (naming the field). */
export function parseCron(schedule: string): CronSchedule | string {
    if (schedule.length === 0) return "empty spec string";
    if (schedule.includes("TZ")) return "cannot use TZ or CRON_TZ in schedule, use timeZone field instead";
    if (schedule.startsWith("@")) return `a descriptor (${schedule.split(/\s/)[0]}); write the five fields instead`;
    const fields = schedule.trim().split(/\s+/);
    if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(" ")}]`;
    const values: Array<Set<number>> = [];
    const stars: boolean[] = [];
    for (const [i, f] of FIELDS.entries()) {
        const r = getField(fields[i], f);
        if (typeof r === "string") return `${f.name} field: ${r}`;
        values.push(r.values);
        stars.push(r.star);
    }
    return { values, domStar: stars[2], dowStar: stars[4] };
}

const DAY = 86_400_000;
/** The Gregorian calendar repeats every 400 years: 146097 days, a whole number of weeks. */
const CYCLE_DAYS = 146_097;
const gaps = new Map<string, number | undefined>();

/**
 * The longest time in days between two days on which the schedule fires (robfig's dayMatches: the
 * day of month and the day of week must both match when either carries the star bit, otherwise
 * either may), over the calendar's whole 400-year cycle; undefined when it never fires.
 */
export function cronLongestGapDays(s: CronSchedule): number | undefined {
    const [, , dom, month, dow] = s.values;
    const key = [dom, month, dow].map((v) => [...v].join(",")).join(" ") + (s.domStar || s.dowStar ? "*" : "");
    if (gaps.has(key)) return gaps.get(key);
    const start = Date.UTC(2000, 0, 1);
    let first: number | undefined;
    let last: number | undefined;
    let longest = 0;
    for (let d = 0; d < CYCLE_DAYS; d++) {
        const t = new Date(start + d * DAY);
        if (!month.has(t.getUTCMonth() + 1)) continue;
        const [domMatch, dowMatch] = [dom.has(t.getUTCDate()), dow.has(t.getUTCDay())];
        if (!(s.domStar || s.dowStar ? domMatch && dowMatch : domMatch || dowMatch)) continue;
        if (last !== undefined) longest = Math.max(longest, d - last);
        first ??= d;
        last = d;
    }
    const gap = first === undefined ? undefined : Math.max(longest, first + CYCLE_DAYS - last!);
    gaps.set(key, gap);
    return gap;
}
