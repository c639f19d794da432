/**
 * The rules the Kubernetes API server applies to the names, label values, hosts and time zones the
 * program emits (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label, IsDNS1123Subdomain,
 * IsValidLabelValue; pkg/apis/batch/validation validateTimeZone), and whether a CronJob schedule
 * can fire at all (the robfig/cron parser CronJobs use). Used by the schema's fields (config/areas)
 * and the cross-key rules (config/apiServerRules.ts).
 */
import { IANA_TIME_ZONES } from "./timeZones";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A namespace, Service or host label: at most 63 lower-case letters, digits and '-', alphanumeric at both ends. */
export const isDns1123Label = (s: string) => s.length <= 63 && DNS1123_LABEL.test(s);
/** A StorageClass, IngressClass, Secret name: at most 253 characters of dot-separated labels. */
export const isDns1123Subdomain = (s: string) => s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
/** A label value: empty, or at most 63 letters, digits, '-', '_', '.', alphanumeric at both ends. */
export const isLabelValue = (s: string) => s.length <= 63 && LABEL_VALUE.test(s);

/** An IPv4 CIDR as NetworkPolicy ipBlock takes it: four octets 0..255 and a prefix 0..32. */
export function isIpv4Cidr(s: string): boolean {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(s);
    return !!m && m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) <= 32;
}

/** validateTimeZone's character rule of each '/'-separated part, then time.LoadLocation over the API server's tzdata. */
const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;
export function isIanaTimeZone(s: string): boolean {
    if (s === "" || s.toLowerCase() === "local") return false;
    if (s.split("/").some((p) => p === "." || p === ".." || p.startsWith("-") || !TIME_ZONE_PART.test(p))) return false;
    return IANA_TIME_ZONES.has(s);
}

/** The cluster's own namespaces and the policy controller's: the stack must never own (default-deny, delete on destroy) them. */
export const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease", "gatekeeper-system"] as const;

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/** The values one cron field allows (robfig/cron getRange: '*' and '?' are full, "a/n" runs a..max by n), or undefined when it does not parse. */
function fieldValues(field: string, lo: number, hi: number, names?: string[], first = 0): { values: Set<number>; star: boolean } | undefined {
    const values = new Set<number>();
    let star = false;
    const value = (v: string) => (/^\d+$/.test(v) ? Number(v) : names && names.includes(v.toUpperCase()) ? names.indexOf(v.toUpperCase()) + first : NaN);
    for (const part of field.split(",")) {
        const m = /^(\*|\?|[0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?(?:\/(\d+))?$/.exec(part);
        if (!m) return undefined;
        let [a, b] = [lo, hi];
        if (m[1] === "*" || m[1] === "?") star = star || m[3] === undefined || Number(m[3]) === 1;
        else {
            a = value(m[1]);
            b = m[2] !== undefined ? value(m[2]) : m[3] !== undefined ? hi : a;
        }
        const step = m[3] !== undefined ? Number(m[3]) : 1;
        if (!Number.isFinite(a) || !Number.isFinite(b) || a < lo || b > hi || a > b || step < 1) return undefined;
        for (let v = a; v <= b; v += step) values.add(v);
    }
    return { values, star };
}

/** The longest each month can be (February 29 in leap years). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether a five-field schedule fires at all. robfig/cron matches a day when the day-of-month and
 * the weekday both match if either is '*' or '?', and when either matches otherwise: a restricted
 * weekday always finds a day, so only a day-of-month with an unrestricted weekday can miss every
 * month ("0 3 31 2 *", "0 3 30 2 *", "0 3 31 4,6,9,11 *").
 */
export function cronFires(schedule: string): boolean {
    const f = schedule.trim().split(/\s+/);
    if (f.length !== 5) return false;
    const dom = fieldValues(f[2], 1, 31);
    const month = fieldValues(f[3], 1, 12, MONTHS, 1);
    const dow = fieldValues(f[4], 0, 7, WEEKDAYS, 0);
    if (!dom || !month || !dow) return false;
    if (dom.star || (!dow.star && dow.values.size > 0)) return true;
    return [...month.values].some((m) => [...dom.values].some((d) => d <= MONTH_DAYS[m - 1]));
}
