/**
 * The configuration schema language: every key of the project is a Field with its Pulumi type,
 * default, description and check. One nested schema yields the Pulumi.yaml declarations, the
 * validation and the typed, immutable object the components receive.
 *
 * A field's key is the camelCase join of its path: { agentServer: { image } } -> `agentServerImage`.
 */
import * as net from "net";
import * as pulumi from "@pulumi/pulumi";
import { cronLongestGapDays, parseCron } from "./cron";
import { isDns1123Label, isDns1123Subdomain, isIanaTimeZone, isIpv4Cidr, isLabelValue } from "./kubernetesNames";

export type PulumiType = "string" | "integer" | "boolean" | "array";

/** The result of checking one raw value: the typed value, or what is wrong and what was expected. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string; expected: string };

export interface Field<T> {
    readonly __field: true;
    readonly type: PulumiType;
    readonly description: string;
    /** The value when the stack sets none; a field with no default and not optional is required. */
    readonly default?: T;
    readonly optional: boolean;
    readonly secret: boolean;
    /** A value of the right shape used by the offline render when a secret cannot be read. */
    readonly placeholder?: string;
    /** Parses and checks a raw value (from YAML/JSON config: string, number, boolean or array). */
    readonly check: (raw: unknown) => Checked<T>;
}

export type Schema = { readonly [key: string]: Field<any> | Schema };

export type Infer<S> = S extends Field<infer T>
    ? T
    : { readonly [K in keyof S]: Infer<S[K]> };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const bad = (problem: string, expected: string): Checked<never> => ({ ok: false, problem, expected });

function describeRaw(raw: unknown): string {
    const s = typeof raw === "string" ? JSON.stringify(raw) : JSON.stringify(raw) ?? String(raw);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

type Rule<T> = (value: T) => string | undefined;

function field<T>(
    type: PulumiType,
    description: string,
    def: T | undefined,
    check: (raw: unknown) => Checked<T>,
    extra: Partial<Pick<Field<T>, "secret" | "placeholder" | "optional">> = {},
): Field<T> {
    return { __field: true, type, description, default: def, optional: extra.optional ?? false, secret: extra.secret ?? false, placeholder: extra.placeholder, check };
}

/** Builds a string field whose value must match `pattern`; `expected` says the form in words. */
export function patterned(pattern: RegExp, expected: string) {
    return (description: string, def?: string, rule?: Rule<string>): Field<string> =>
        field("string", description, def, (raw) => {
            if (typeof raw !== "string") return bad(`got ${describeRaw(raw)}`, expected);
            if (!pattern.test(raw)) return bad(`got ${describeRaw(raw)}`, expected);
            const problem = rule?.(raw);
            return problem ? bad(problem, expected) : ok(raw);
        });
}

export function str(description: string, def?: string, opts: { pattern?: RegExp; expected?: string; oneOf?: readonly string[] } = {}): Field<string> {
    const expected = opts.oneOf ? `one of ${opts.oneOf.join(", ")}` : (opts.expected ?? "a non-empty string");
    return field("string", description, def, (raw) => {
        if (typeof raw !== "string" || raw.length === 0) return bad(`got ${describeRaw(raw)}`, expected);
        if (opts.oneOf && !opts.oneOf.includes(raw)) return bad(`got ${describeRaw(raw)}`, expected);
        if (opts.pattern && !opts.pattern.test(raw)) return bad(`got ${describeRaw(raw)}`, expected);
        return ok(raw);
    });
}

export function oneOf<const T extends string>(description: string, values: readonly T[], def?: T): Field<T> {
    return str(description, def, { oneOf: values }) as Field<T>;
}

function toInteger(raw: unknown): number | undefined {
    if (typeof raw === "number" && Number.isInteger(raw)) return raw;
    if (typeof raw === "string" && /^-?\d+$/.test(raw.trim())) return Number(raw.trim());
    return undefined;
}

export function int(description: string, def: number | undefined, range: { min?: number; max?: number; unit?: string } = {}): Field<number> {
    const { min, max, unit } = range;
    const bounds = min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : max !== undefined ? ` of at most ${max}` : "";
    const expected = `an integer${bounds}${unit ? ` (${unit})` : ""}`;
    return field("integer", description, def, (raw) => {
        const n = toInteger(raw);
        if (n === undefined) return bad(`got ${describeRaw(raw)}`, expected);
        if (min !== undefined && n < min) return bad(`${n} is below ${min}`, expected);
        if (max !== undefined && n > max) return bad(`${n} is above ${max}`, expected);
        return ok(n);
    });
}

export const port = (description: string, def?: number) => int(description, def, { min: 1, max: 65535, unit: "TCP port" });
export const nodePort = (description: string, def?: number) => int(description, def, { min: 30000, max: 32767, unit: "node port" });
export const seconds = (description: string, def: number, max = 86400) => int(description, def, { min: 0, max, unit: "seconds" });
export const millis = (description: string, def: number, max = 3_600_000) => int(description, def, { min: 1, max, unit: "milliseconds" });
export const replicas = (description: string, def: number, max = 100) => int(description, def, { min: 0, max });

export function bool(description: string, def?: boolean): Field<boolean> {
    return field("boolean", description, def, (raw) => {
        if (typeof raw === "boolean") return ok(raw);
        if (raw === "true" || raw === "false") return ok(raw === "true");
        return bad(`got ${describeRaw(raw)}`, "true or false");
    });
}

/** An array of strings (YAML list in the stack file, JSON array through the runtime). */
export function list(description: string, def: readonly string[] | undefined, item?: Field<string>): Field<readonly string[]> {
    const expected = `a list${item ? ` of ${item.description}` : " of strings"}`;
    return field("array", description, def, (raw) => {
        let value = raw;
        if (typeof value === "string") {
            try {
                value = JSON.parse(value);
            } catch {
                return bad(`got ${describeRaw(raw)}`, expected);
            }
        }
        if (!Array.isArray(value)) return bad(`got ${describeRaw(raw)}`, expected);
        const out: string[] = [];
        for (const [i, v] of value.entries()) {
            if (!item) {
                if (typeof v !== "string") return bad(`item ${i} is ${describeRaw(v)}`, expected);
                out.push(v);
                continue;
            }
            const c = item.check(v);
            if (!c.ok) return bad(`item ${i}: ${c.problem}`, `${expected}, each ${c.expected}`);
            out.push(c.value);
        }
        return ok(out);
    });
}

export function intList(description: string, def: readonly number[], item: Field<number>): Field<readonly number[]> {
    const expected = `a list of ${item.description}`;
    return field("array", description, def, (raw) => {
        let value = raw;
        if (typeof value === "string") {
            try {
                value = JSON.parse(value);
            } catch {
                return bad(`got ${describeRaw(raw)}`, expected);
            }
        }
        if (!Array.isArray(value)) return bad(`got ${describeRaw(raw)}`, expected);
        const out: number[] = [];
        for (const [i, v] of value.entries()) {
            const c = item.check(v);
            if (!c.ok) return bad(`item ${i}: ${c.problem}`, `${expected}, each ${c.expected}`);
            out.push(c.value);
        }
        return ok(out);
    });
}

// Kubernetes quantities: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/
const CPU = /^(\d+m|\d+(\.\d{1,3})?)$/;
const MEMORY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;
export const cpu = patterned(CPU, 'a CPU quantity such as "500m" or "2"');
export const memory = patterned(MEMORY, 'a memory quantity with a binary suffix such as "128Mi" or "4Gi"');
/** Sane bounds of a volume or storage quantity: a zero-sized or exabyte volume is a typo. */
export const STORAGE_BOUNDS = { min: "1Mi", max: "64Ti" } as const;
const storageQuantity = patterned(MEMORY, `a storage quantity from ${STORAGE_BOUNDS.min} to ${STORAGE_BOUNDS.max} such as "10Gi"`);
export const storage = (description: string, def?: string, rule?: Rule<string>): Field<string> =>
    storageQuantity(description, def, (q) => {
        if (quantityBytes(q) < quantityBytes(STORAGE_BOUNDS.min)) return `${q} is below the minimum ${STORAGE_BOUNDS.min}`;
        if (quantityBytes(q) > quantityBytes(STORAGE_BOUNDS.max)) return `${q} is above the maximum ${STORAGE_BOUNDS.max}`;
        return rule?.(q);
    });

/** A memory quantity in bytes, for comparisons (requests <= limits). */
export function quantityBytes(q: string): number {
    const m = /^(\d+(?:\.\d+)?)([A-Za-z]*)$/.exec(q);
    if (!m) throw new Error(`not a quantity: ${q}`);
    const factors: Record<string, number> = {
        "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
        Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
    };
    return Number(m[1]) * (factors[m[2]] ?? NaN);
}

/** A CPU quantity in millicores. */
export function cpuMillis(q: string): number {
    return q.endsWith("m") ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000);
}

// Cron, six fields with seconds first (the search engine's lifecycle policy, read by the search
// engine itself): each field a comma list of `*`, `?`, a value or a range, with an optional /step;
// letters only as month (JAN-DEC) and weekday (SUN-SAT) names.
const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
type CronField = { lo: number; hi: number; names?: string[]; first?: number };
const SIX_FIELDS: CronField[] = [{ lo: 0, hi: 59 }, { lo: 0, hi: 59 }, { lo: 0, hi: 23 }, { lo: 1, hi: 31 }, { lo: 1, hi: 12, names: MONTHS, first: 1 }, { lo: 0, hi: 7, names: WEEKDAYS, first: 0 }];

function cronValue(v: string, f: CronField): number | undefined {
    if (/^\d+$/.test(v)) return Number(v);
    const i = f.names?.indexOf(v.toUpperCase()) ?? -1;
    return i >= 0 ? i + (f.first ?? 0) : undefined;
}

function cronFieldsValid(fields: string[], ranges: CronField[]): boolean {
    return fields.every((field, i) =>
        field.split(",").every((part) => {
            const m = /^(?:\*|\?|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:\/(\d+))?$/.exec(part);
            if (!m) return false;
            if (m[3] !== undefined && Number(m[3]) < 1) return false;
            return [m[1], m[2]].filter((v): v is string => v !== undefined).every((v) => {
                const n = cronValue(v, ranges[i]);
                return n !== undefined && n >= ranges[i].lo && n <= ranges[i].hi;
            });
        }),
    );
}

/** Days a schedule may go without a run: more, and some calendar years have none (February 29 only). */
export const CRON_MOST_DAYS_APART = 366;

/**
 * A CronJob schedule: five fields as the API server's parser reads them (config/cron.ts), that
 * fires at least once a year.
 */
export const cron = (description: string, def?: string) =>
    field<string>("string", description, def, (raw) => {
        const expected = 'a five-field cron schedule "minute hour day-of-month month day-of-week" as the API server reads it (robfig/cron: day of week 0-6 or SUN-SAT, 7 is refused), e.g. "0 3 * * *"';
        if (typeof raw !== "string") return bad(`got ${describeRaw(raw)}`, expected);
        const parsed = parseCron(raw);
        if (typeof parsed === "string") return bad(`${describeRaw(raw)}: ${parsed}`, expected);
        const gap = cronLongestGapDays(parsed);
        if (gap === undefined) return bad(`${describeRaw(raw)} never fires: no month of it has that day`, "a schedule whose day of month exists in one of its months (the 31st only in 31-day months, the 30th never in February)");
        if (gap > CRON_MOST_DAYS_APART) return bad(`${describeRaw(raw)} fires only in some years: up to ${gap} days apart (February 29 is in leap years only, and none from 2097 to 2103)`, "a schedule that fires at least once every year");
        return ok(raw);
    });

export const cronWithSeconds = (description: string, def?: string) =>
    field<string>("string", description, def, (raw) => {
        const expected = 'a six-field cron schedule with seconds first "sec min hour day month weekday", e.g. "0 30 1 * * ?"';
        if (typeof raw !== "string") return bad(`got ${describeRaw(raw)}`, expected);
        const fields = raw.trim().split(/\s+/);
        if (fields.length !== 6 || !cronFieldsValid(fields, SIX_FIELDS)) return bad(`got ${describeRaw(raw)}`, expected);
        return ok(raw);
    });

/** Folders of a container's own system a volume must not be mounted on or over; /tmp is every container's scratch (components/lib/pod.ts). */
export const RESERVED_MOUNT_PATHS = ["/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/root", "/run", "/sbin", "/sys", "/tmp", "/usr", "/var", "/var/run"] as const;
const UNDER_RESERVED = ["/dev/", "/proc/", "/sys/", "/tmp/", "/run/", "/var/run/"];

/** Why a path cannot be a mount path, or undefined. */
export function mountPathProblem(p: string): string | undefined {
    if (!p.startsWith("/")) return `"${p}" is not an absolute path`;
    if (p !== "/" && (p.endsWith("/") || p.split("/").slice(1).some((seg) => seg === "" || seg === "." || seg === ".."))) return `"${p}" has an empty, "." or ".." segment or a trailing "/"`;
    if ((RESERVED_MOUNT_PATHS as readonly string[]).includes(p) || UNDER_RESERVED.some((r) => p.startsWith(r))) return `"${p}" is a folder of the container's own system or its scratch /tmp: a volume there hides what the image needs`;
    return undefined;
}

/** A folder a volume is mounted at: absolute, plain, not a system folder. */
export const mountPath = (description: string, def: string): Field<string> =>
    field("string", description, def, (raw) => {
        const expected = `an absolute folder such as "${def}": no "." or ".." segment, no trailing "/", not ${RESERVED_MOUNT_PATHS.join(", ")}`;
        if (typeof raw !== "string" || !/^[\w./-]+$/.test(raw)) return bad(`got ${describeRaw(raw)}`, expected);
        const problem = mountPathProblem(raw);
        return problem ? bad(problem, expected) : ok(raw);
    });

/** A path inside a volume: relative, plain segments (`kind`: a file or a folder), never "." or "..". */
export const relativePath = (kind: "file name" | "relative file path" | "relative folder path") => (description: string, def: string): Field<string> =>
    field("string", description, def, (raw) => {
        const expected = `a ${kind}${kind === "file name" ? " (letters, digits, \".\", \"_\", \"-\")" : " of such names separated by \"/\""}, never "." or ".."`;
        const pattern = kind === "file name" ? /^[\w.-]+$/ : /^[\w.-]+(\/[\w.-]+)*$/;
        if (typeof raw !== "string" || !pattern.test(raw)) return bad(`got ${describeRaw(raw)}`, expected);
        if (raw.split("/").some((seg) => seg === "." || seg === "..")) return bad(`"${raw}" leaves its folder or names it ("." or "..")`, expected);
        return ok(raw);
    });

/** A string field checked by a predicate; `expected` says the form in words. */
export function matching(test: (s: string) => boolean, expected: string) {
    return (description: string, def?: string): Field<string> =>
        field("string", description, def, (raw) => (typeof raw === "string" && test(raw) ? ok(raw) : bad(`got ${describeRaw(raw)}`, expected)));
}

// Names the API server checks (config/kubernetesNames.ts).
export const namespaceName = matching(isDns1123Label, 'a namespace name (a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit)');
export const objectName = matching(isDns1123Label, 'a Kubernetes object name (a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit)');
export const storageClassName = matching(isDns1123Subdomain, 'a storage class name (a DNS-1123 subdomain: lower-case letters, digits, "-" and ".", at most 253 characters)');
export const subdomainName = matching(isDns1123Subdomain, 'a Kubernetes object name (a DNS-1123 subdomain: lower-case letters, digits, "-" and ".", at most 253 characters)');
export const labelValue = matching(isLabelValue, 'a label value (at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit)');
export const hostLabel = matching(isDns1123Label, 'a lower-case host label (a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit)');
export const timeZone = matching(isIanaTimeZone, 'an IANA time zone name as the tz database spells it, such as "Etc/UTC" or "Europe/Berlin" (the names the API server accepts for a CronJob\'s timeZone)');
/** A git repository read over SSH with a key: scp-like "git@host:path" or "ssh://[user@]host[:port]/path", never https and never a password. */
const SSH_REPOSITORY = /^([\w.-]+@[\w.-]+:[\w./-]+|ssh:\/\/([\w.-]+@)?[\w.-]+(:\d+)?\/[\w./-]+)$/;
export const sshRepository = matching(
    (s) => SSH_REPOSITORY.test(s) && !s.includes(".."),
    'an SSH git repository URL such as "git@github.com:org/repo.git" or "ssh://git@git.example.com:2222/org/repo.git" (the jobs authenticate with the GitOps deploy key over SSH: no https, no password or token in the URL)',
);
export const ipv4Cidr = matching(isIpv4Cidr, 'an IPv4 CIDR such as "10.0.0.0/8" (octets 0 to 255, prefix 0 to 32)');
export const ipAddress = matching((s) => net.isIP(s) !== 0, 'an IP address to bind, such as "0.0.0.0" or "::"');

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;
const hostnameField = patterned(HOSTNAME, 'a lower-case DNS hostname of at most 253 characters, each label at most 63, such as "agent.example.com"');
export const hostname = (description: string, def?: string) =>
    hostnameField(description, def, (h) => (h.split(".").some((l) => l.length > 63) ? `${h} has a label longer than 63 characters` : undefined));

/** A URL as shown in a message: without user, password, query and fragment (they may hold a secret). */
export function shownUrl(raw: string): string {
    return describeRaw(raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, "$1<user>@").replace(/[?#].*$/s, ""));
}

/**
 * `withoutCredentials`: the expected form when the URL carries a user or password (credentials in
 * a URL are secrets, never plain config). A query string or fragment is refused too: these are base
 * URLs (a client appends its paths, so a query never works there), and a token in one is a secret
 * the rendered files would show.
 */
export function url(description: string, def?: string, schemes: readonly string[] = ["http", "https"], withoutCredentials?: string): Field<string> {
    const expected = `an absolute ${schemes.join(" or ")} URL such as "${schemes[schemes.length - 1]}://host.example.com/path", without query string or fragment`;
    return field("string", description, def, (raw) => {
        if (typeof raw !== "string") return bad(`got ${describeRaw(raw)}`, expected);
        // WHATWG URL parsing says only "Invalid URL" for a port out of range: name it first.
        const port = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)(?:[/?#]|$)/i.exec(raw)?.[1];
        if (port !== undefined && Number(port) > 65535) return bad(`${shownUrl(raw)} has the port ${port}, above 65535`, `${expected}, with a port from 1 to 65535`);
        let u: URL;
        try {
            u = new URL(raw);
        } catch {
            return bad(`${shownUrl(raw)} is not a URL`, expected);
        }
        if (!schemes.includes(u.protocol.replace(/:$/, ""))) return bad(`scheme ${u.protocol} is not allowed`, expected);
        if (!u.hostname) return bad("the URL has no host", expected);
        if (u.username || u.password) return bad("the URL carries a user or password (value not shown)", withoutCredentials ?? `${expected}, without user or password (credentials in a URL are secrets)`);
        if (u.search || u.hash || raw.includes("?") || raw.includes("#")) return bad(`${shownUrl(raw)} has a query string or fragment (value not shown: a token there is a secret)`, `${expected} (a credential goes in a secret key of its own)`);
        return ok(raw);
    });
}

/** Each "<scheme>://<non-space>" of a text, found from its "://" (linear: a regular expression scanning for the scheme would be quadratic in a long value). */
function* urlsIn(text: string): Generator<string> {
    for (let i = text.indexOf("://"); i >= 0; i = text.indexOf("://", i + 3)) {
        let start = i;
        while (start > 0 && /[A-Za-z0-9+.-]/.test(text[start - 1])) start--;
        while (start < i && !/[A-Za-z]/.test(text[start])) start++;
        let end = i + 3;
        while (end < text.length && !/[\s"'<>]/.test(text[end])) end++;
        if (start < i) yield text.slice(start, end);
        i = end - 3;
    }
}

const SECRET_PARAM = /(token|key|secret|pass(word|wd)?|pwd|auth|sig(nature)?|credential|session|code)/i;

/**
 * A credential inside any text that holds a URL (a list item, an argument): a user or password, or
 * a query parameter named like a secret (token, key, signature, password ...). The value is never
 * shown; undefined when there is none.
 */
export function urlCredentialProblem(text: string): string | undefined {
    for (const candidate of urlsIn(text)) {
        let u: URL;
        try {
            u = new URL(candidate);
        } catch {
            if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#@]*:[^/?#@]*@/i.test(candidate)) return "a URL in it carries a user and password (value not shown)";
            continue;
        }
        // An SSH user ("git@") names the account the key logs in as; over HTTP a user alone is often a token.
        if (u.password || (u.username && u.protocol !== "ssh:")) return "a URL in it carries a user or password (value not shown)";
        const names = [...u.searchParams.keys(), ...new URLSearchParams(u.hash.slice(1)).keys()].filter((k) => SECRET_PARAM.test(k));
        if (names.length) return `a URL in it carries ${names.map((n) => `"${n}"`).join(", ")} in its query (value not shown)`;
    }
    return undefined;
}

export const email = patterned(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an e-mail address such as "ops@example.com"');

// Image references: [registry/]repository(:tag)(@sha256:<64 hex>); `latest` is never allowed.
const IMAGE = /^([a-z0-9.-]+(:\d+)?\/)?[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;
export const image = patterned(
    IMAGE,
    'an image reference pinned by tag or digest, such as "registry.example.com/app:1.2.3" or "...@sha256:<64 hex>", never "latest"',
);
export function imageProblem(ref: string): string | undefined {
    if (!/:[\w][\w.-]*$|@sha256:/.test(ref.replace(/^[^/]*:\d+\//, ""))) return "no tag or digest";
    if (/:latest(@|$)/.test(ref)) return "the tag latest is not a pin";
    return undefined;
}
export const isDigestPinned = (ref: string) => /@sha256:[a-f0-9]{64}$/.test(ref);

/** A chart version: an exact semantic version (no ranges, no "latest"). */
export const chartVersion = patterned(/^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/, 'an exact chart version such as "4.11.3" (no ranges, no "latest")');

/** Percentages or quantities, as in evictionHard ("100Mi" or "10%"). */
export const quantityOrPercent = patterned(/^(\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?|\d{1,2}(\.\d+)?%|100%)$/, 'a quantity such as "100Mi" or a percentage such as "10%"');

/**
 * A secret string: read from `pulumi config set --secret <key>`; the value is checked for shape
 * (never echoed in errors) and handed to components as a secret Output.
 */
export function secret(description: string, opts: { pattern?: RegExp; expected: string; placeholder: string }): Field<pulumi.Output<string>> {
    return field<pulumi.Output<string>>("string", description, undefined, (raw) => {
        if (typeof raw !== "string" || raw.length === 0) return bad("empty (value not shown)", opts.expected);
        if (opts.pattern && !opts.pattern.test(raw)) return bad("has the wrong shape (value not shown)", opts.expected);
        return ok(pulumi.secret(raw));
    }, { secret: true, placeholder: opts.placeholder });
}

/** Makes any field optional: absent means undefined. */
export function optional<T>(f: Field<T>): Field<T | undefined> {
    return { ...f, optional: true };
}

export function isField(x: unknown): x is Field<unknown> {
    return typeof x === "object" && x !== null && (x as Field<unknown>).__field === true;
}

/** Every field of a schema with its flat key, in declaration order. */
export function flatten(schema: Schema, prefix: string[] = []): { key: string; path: string[]; field: Field<unknown> }[] {
    const out: { key: string; path: string[]; field: Field<unknown> }[] = [];
    for (const [name, node] of Object.entries(schema)) {
        const path = [...prefix, name];
        if (isField(node)) out.push({ key: keyOf(path), path, field: node });
        else out.push(...flatten(node as Schema, path));
    }
    return out;
}

export function keyOf(path: string[]): string {
    return path.map((p, i) => (i === 0 ? p : p[0].toUpperCase() + p.slice(1))).join("");
}
