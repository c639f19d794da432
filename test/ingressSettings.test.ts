/**
 * The ingress controller, cert-manager and the reloader read the annotations and keys the program
 * emits: every nginx.ingress.kubernetes.io/* annotation (Ingresses of the render and of the child
 * charts' values) is one that ingress-nginx controller v1.11.3 (chart 4.11.3) parses, every
 * controller ConfigMap key is one of its configuration keys, the cert-manager annotations are
 * ingress-shim's, and the reloader annotations are the ones the reloader chart passes to the controller.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ingressNginxValues, reloaderValues } from "../components/platform/addonValues";
import { childApps } from "../components/platform/gitopsChildren";
import { offlineStackConfig } from "../tools/genGitops";
import { renderStack } from "./render";

/** internal/ingress/annotations/<parser>: the `...Annotation = "<name>"` constants at controller-v1.11.3. */
const NGINX_ANNOTATIONS = new Set(`allowlist-source-range app-root auth-always-set-cookie auth-cache-key auth-keepalive auth-keepalive-requests auth-keepalive-share-vars
auth-method auth-proxy-set-headers auth-realm auth-request-redirect auth-response-headers auth-secret auth-secret-type auth-signin auth-signin-redirect-param
auth-snippet auth-type auth-url backend-protocol canary canary-by-cookie canary-by-header canary-by-header-pattern canary-by-header-value canary-weight
canary-weight-total client-body-buffer-size configuration-snippet connection-proxy-header cors-allow-credentials cors-allow-headers cors-allow-methods
cors-allow-origin cors-expose-headers cors-max-age custom-headers custom-http-errors default-backend denylist-source-range disable-proxy-intercept-errors
enable-access-log enable-cors enable-global-auth enable-modsecurity enable-opentelemetry enable-owasp-core-rules enable-rewrite-log fastcgi-index
fastcgi-params-configmap force-ssl-redirect from-to-www-redirect global-rate-limit global-rate-limit-ignored-cidrs global-rate-limit-key global-rate-limit-window
limit-allowlist limit-burst-multiplier limit-connections limit-rate limit-rate-after limit-rpm limit-rps limit-whitelist load-balance mirror-host
mirror-request-body mirror-target modsecurity-snippet modsecurity-transaction-id opentelemetry-operation-name opentelemetry-trust-incoming-span
permanent-redirect preserve-trailing-slash proxy-body-size proxy-buffer-size proxy-buffering proxy-buffers-number proxy-connect-timeout proxy-cookie-domain
proxy-cookie-path proxy-http-version proxy-max-temp-file-size proxy-next-upstream proxy-next-upstream-timeout proxy-next-upstream-tries proxy-read-timeout
proxy-redirect-from proxy-redirect-to proxy-request-buffering proxy-send-timeout proxy-ssl-ciphers proxy-ssl-name proxy-ssl-protocols proxy-ssl-secret
proxy-ssl-server-name proxy-ssl-verify proxy-ssl-verify-depth rewrite-target satisfy server-alias server-snippet service-upstream ssl-ciphers ssl-passthrough
ssl-prefer-server-ciphers ssl-redirect stream-snippet temporal-redirect upstream-hash-by upstream-hash-by-subset upstream-vhost use-port-in-redirects
use-regex whitelist-source-range x-forwarded-prefix`.split(/\s+/));

/** The keys this program sets in the controller ConfigMap: `json:"..."` tags of internal/ingress/controller/config/config.go and internal/ingress/defaults/main.go at v1.11.3. */
const NGINX_CONFIG_KEYS = new Set(["upstream-keepalive-connections", "upstream-keepalive-timeout", "proxy-connect-timeout", "proxy-send-timeout", "proxy-read-timeout", "proxy-body-size"]);

/** cert-manager v1.16 ingress-shim (pkg/apis/certmanager/v1 IngressIssuerNameAnnotationKey …). */
const CERT_MANAGER_ANNOTATIONS = new Set(["cert-manager.io/issuer", "cert-manager.io/cluster-issuer", "cert-manager.io/issuer-kind", "cert-manager.io/issuer-group"]);

/** Annotations read by something other than the three products above, with the reader. */
const OTHER_READERS: Record<string, string> = {
    "kubernetes.io/ingress.allow-http": "the Gatekeeper httpsonly constraint (policies/constraints)",
    "pulumi.com/patchForce": "the kubernetes provider 4.25.0, pkg/await/await.go patchForce (every object: components/lib/fieldOwnership.ts)",
};

const ON_OFF = new Set(["proxy-buffering", "proxy-request-buffering"]);

function checkAnnotations(annotations: Record<string, string | null>, where: string): void {
    for (const [key, value] of Object.entries(annotations)) {
        if (value === null) continue; // removes a chart default
        if (key.startsWith("nginx.ingress.kubernetes.io/")) {
            const name = key.slice("nginx.ingress.kubernetes.io/".length);
            assert.ok(NGINX_ANNOTATIONS.has(name), `${where}: ${key} is not an ingress-nginx v1.11.3 annotation`);
            assert.equal(typeof value, "string", `${where}: ${key} must be a string`);
            if (ON_OFF.has(name)) assert.match(value, /^(on|off)$/, `${where}: ${key}`);
            if (/timeout$/.test(name)) assert.match(value, /^\d+$/, `${where}: ${key} is seconds`);
        } else if (key.startsWith("cert-manager.io/")) assert.ok(CERT_MANAGER_ANNOTATIONS.has(key), `${where}: ${key} is not an ingress-shim annotation`);
        else assert.ok(key in OTHER_READERS, `${where}: ${key} has no known reader`);
    }
}

for (const stack of ["dev", "prod"]) {
    test(`${stack}: Ingress annotations of the render and of the child charts are ones the products read`, async () => {
        const r = await renderStack(stack);
        const ingresses = r.objects.filter((o) => o.kind === "Ingress");
        assert.ok(ingresses.length > 0);
        for (const o of ingresses) {
            checkAnnotations(o.metadata?.annotations ?? {}, `Ingress ${o.metadata?.namespace}/${o.metadata?.name}`);
            assert.equal(o.metadata?.annotations?.["nginx.ingress.kubernetes.io/ssl-redirect"], "true", "HTTPS only, as the controller reads it");
        }
        for (const app of childApps(offlineStackConfig(stack))) {
            const ingress = (app.values as any).ingress;
            if (ingress?.annotations) checkAnnotations(ingress.annotations, `child ${app.key}`);
        }
    });
}

test("the ingress controller's ConfigMap keys are ingress-nginx configuration keys", () => {
    const config = ingressNginxValues(offlineStackConfig("prod")).controller.config;
    for (const key of Object.keys(config)) assert.ok(NGINX_CONFIG_KEYS.has(key), `${key} is not an ingress-nginx v1.11.3 ConfigMap key`);
    for (const value of Object.values(config)) assert.equal(typeof value, "string", "ConfigMap values are strings");
});

test("workloads carry the reloader annotations that the reloader chart hands to its controller", async () => {
    const r = await renderStack("prod");
    const custom = reloaderValues(offlineStackConfig("prod")).reloader.custom_annotations;
    // reloader chart 1.2.0 templates/deployment.yaml: --configmap-annotation / --secret-annotation from custom_annotations.
    const known = new Set([custom.configmap, custom.secret]);
    let seen = 0;
    for (const o of r.objects.filter((x) => ["Deployment", "StatefulSet", "DaemonSet"].includes(x.kind ?? ""))) {
        for (const key of Object.keys(o.metadata?.annotations ?? {}).filter((k) => /\/reload$|reloader/.test(k))) {
            assert.ok(known.has(key), `${o.kind} ${o.metadata?.name}: ${key} is not an annotation the reloader watches (${[...known].join(", ")})`);
            seen++;
        }
    }
    assert.ok(seen > 0);
});
