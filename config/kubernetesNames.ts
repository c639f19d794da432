/**
 * The rules the Kubernetes API server applies to the names, label values, hosts and time zones the
 * program emits (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label, IsDNS1123Subdomain,
 * IsValidLabelValue; pkg/apis/batch/validation validateTimeZone); CronJob schedules in config/cron.ts.
 * Used by the schema's fields (config/areas) and the cross-key rules (config/apiServerRules.ts).
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
