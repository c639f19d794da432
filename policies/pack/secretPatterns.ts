/**
 * What a secret in plain text looks like: key-shaped strings (provider keys, cloud access keys,
 * private-key PEM blocks, the gateway admin key, long high-entropy tokens) and literal values
 * under password-named keys. References (env substitution, templating, Secret names) are not
 * secrets.
 */

const KEY_SHAPES: { name: string; pattern: RegExp }[] = [
    { name: "a private key PEM block", pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/ },
    { name: "a gateway admin key (admin- + 64 hex)", pattern: /(?<![\w-])admin-[0-9a-fA-F]{64}(?![0-9a-fA-F])/ },
    { name: "an API key (sk-...)", pattern: /(?<![\w-])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{20,}/ },
    { name: "a cloud access key id (AKIA...)", pattern: /(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])/ },
];

/** Runs of token characters ([A-Za-z0-9+/=_-]) long enough to be a credential. */
const MIN_TOKEN_LENGTH = 32;

function isTokenChar(c: number): boolean {
    return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 43 || c === 47 || c === 61 || c === 95 || c === 45;
}

/** The token runs of a text, in one pass (a {32,} regular expression backtracks at every word). */
function tokenRuns(text: string): string[] {
    const runs: string[] = [];
    let start = -1;
    for (let i = 0; i <= text.length; i++) {
        if (i < text.length && isTokenChar(text.charCodeAt(i))) {
            if (start < 0) start = i;
        } else if (start >= 0) {
            if (i - start >= MIN_TOKEN_LENGTH) runs.push(text.slice(start, i));
            start = -1;
        }
    }
    return runs;
}
const ENTROPY_BITS = 4.2;

function entropy(s: string): number {
    const counts = new Map<string, number>();
    for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    let bits = 0;
    for (const n of counts.values()) bits -= (n / s.length) * Math.log2(n / s.length);
    return bits;
}

/**
 * A high-entropy token: 32+ token characters mixing upper case, lower case and digits with more
 * than 4.2 bits per character. Hex digests (at most 4 bits) and paths or words do not qualify.
 */
function isHighEntropyToken(run: string): boolean {
    return /[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run) && entropy(run) > ENTROPY_BITS;
}

/** Public key material is high-entropy but not secret: SSH public keys (known hosts) and certificates. */
const PUBLIC_KEYS = [
    /(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+AAAA[A-Za-z0-9+/]+=*/g,
    /-----BEGIN (CERTIFICATE|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|PUBLIC KEY|X509 CRL)-----[\s\S]*?-----END \1-----/g,
];

/** Cheap pre-check: a string without any of these cannot match a key shape. */
const KEY_SHAPE_HINT = /sk-|AKIA|ASIA|admin-|PRIVATE KEY/;
/** The shortest string any shape matches (an AKIA id). */
const MIN_SECRET_LENGTH = 20;

/** The kind of secret a string contains, or undefined. */
export function secretShapeIn(text: string): string | undefined {
    if (text.length < MIN_SECRET_LENGTH) return undefined;
    if (KEY_SHAPE_HINT.test(text)) for (const { name, pattern } of KEY_SHAPES) if (pattern.test(text)) return name;
    if (text.length < MIN_TOKEN_LENGTH) return undefined;
    let runs = tokenRuns(text);
    if (runs.length === 0) return undefined;
    if (/AAAA|-----BEGIN/.test(text)) runs = tokenRuns(PUBLIC_KEYS.reduce((t, pattern) => t.replace(pattern, " "), text));
    for (const run of runs) if (isHighEntropyToken(run)) return "a high-entropy token";
    return undefined;
}

/** What replaces a secret-shaped part of a text in every output (render files, messages). */
export const SECRET_SHAPE_REDACTED = "<redacted: looks like a secret>";

/**
 * The text with every secret-shaped part (the shapes of secretShapeIn) replaced by
 * SECRET_SHAPE_REDACTED: what the render writes and prints, whatever key held the value.
 */
export function redactSecretShapes(text: string): string {
    if (!secretShapeIn(text)) return text;
    let out = text.replace(/-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----[\s\S]*?(?:-----END \1-----|$)/g, SECRET_SHAPE_REDACTED);
    for (const { pattern } of KEY_SHAPES) out = out.replace(new RegExp(pattern.source, "g"), SECRET_SHAPE_REDACTED);
    const scanned = /AAAA|-----BEGIN/.test(out) ? PUBLIC_KEYS.reduce((t, pattern) => t.replace(pattern, " "), out) : out;
    for (const run of tokenRuns(scanned)) if (isHighEntropyToken(run)) out = out.split(run).join(SECRET_SHAPE_REDACTED);
    return out;
}

/** Keys whose value is a credential: ...password, ...token, ...apiKey, ...secret, credentials. */
const SECRET_KEY = /(?:^|[^a-z])(?:pass(?:word|wd)?|pwd|token|api[-_]?key|apikey|private[-_]?key|secret[-_]?key|access[-_]?key|client[-_]?secret|secret|credentials?)$/i;
/** Keys that name where a secret is, not the secret itself. */
const REFERENCE_KEY = /^(?:existing|use|enable|disable|create)|(?:name|ref|file|path|env|length|policy|mode|enabled|type|ttl|url|uri|header)$/i;
/** Values that refer to a secret instead of holding it. */
const REFERENCE_VALUE = /^(?:\{env:[^}]+\}|\$\{[^}]+\}|\$\([^)]+\)|\{\{.*\}\}|<[^>]*>|\/[^\s]*|file:.*|secretref:.*|true|false|null|none|~)$/i;
/** A Secret's name, or an annotation/label key naming one ("secret.stakater.com/reload"). */
const OBJECT_OR_KEY_NAME = /^(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\/)?[a-z0-9](?:[-a-z0-9._]*[a-z0-9])?$/;

/** Cheap pre-check for a text that might contain a password-named key at all. */
export const MAY_NAME_SECRET = /pass|pwd|token|secret|key|credential/i;

export function isSecretNamedKey(key: string): boolean {
    const normalized = key.replace(/[^A-Za-z0-9_-]/g, "_");
    return SECRET_KEY.test(normalized) && !REFERENCE_KEY.test(normalized);
}

/**
 * A literal credential under a password-named key. Keys ending in "secret" commonly hold the
 * name of a Secret object (or an annotation key about Secrets), so such a name counts as a reference.
 */
export function isLiteralSecretValue(key: string, value: unknown): boolean {
    if (typeof value !== "string" || value.trim() === "" || !isSecretNamedKey(key)) return false;
    if (REFERENCE_VALUE.test(value.trim())) return false;
    if (/secret$/i.test(key) && OBJECT_OR_KEY_NAME.test(value)) return false;
    return true;
}

export interface SecretHit {
    /** Dotted path of the value inside the scanned structure. */
    path: string;
    reason: string;
}

/** Scans a JSON-like value: key-shaped strings anywhere and literal values under password-named keys. */
export function scanValue(value: unknown, path = ""): SecretHit[] {
    const hits: SecretHit[] = [];
    const walk = (v: unknown, p: string, key: string | undefined) => {
        if (typeof v === "string") {
            const shape = secretShapeIn(v);
            if (shape) hits.push({ path: p, reason: `holds ${shape}` });
            else if (key !== undefined && isLiteralSecretValue(key, v)) hits.push({ path: p, reason: "is a password-named key with a literal value" });
        } else if (Array.isArray(v)) {
            v.forEach((item, i) => walk(item, `${p}[${i}]`, key));
        } else if (v && typeof v === "object") {
            for (const [k, item] of Object.entries(v)) walk(item, p ? `${p}.${k}` : k, k);
        }
    };
    walk(value, path, undefined);
    return hits;
}
