import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, find, renderStack } from "./render";

const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);

test("prod: two agent server instances on ports 4000 and 4001, bound to 0.0.0.0, Recreate strategy", async () => {
    const r = await renderStack("prod");
    for (const port of [4000, 4001]) {
        const d = find(r, "Deployment", `agent-server-${port}`, "agent");
        assert.equal(d.spec.strategy.type, "Recreate");
        assert.equal(d.spec.replicas, 1);
        const c = d.spec.template.spec.containers.find((x: any) => x.name === "server");
        assert.deepEqual(c.args, ["serve", "--port", String(port), "--hostname", "0.0.0.0"]);
        assert.equal(c.ports[0].containerPort, port);
        const svc = find(r, "Service", `agent-server-${port}`, "agent");
        assert.equal(svc.spec.ports[0].port, port);
        assert.deepEqual(svc.spec.selector, d.spec.selector.matchLabels);
    }
});

test("prod: probes with the timings of section 8.2 that need no credentials (opencode's basic auth covers /global/health too)", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "agent-server-4000").spec.template.spec.containers[0];
    assert.deepEqual(c.livenessProbe, { tcpSocket: { port: "http" }, initialDelaySeconds: 15, periodSeconds: 30 });
    assert.deepEqual(c.readinessProbe, { tcpSocket: { port: "http" }, initialDelaySeconds: 10, periodSeconds: 10 });
    assert.deepEqual(c.startupProbe, { tcpSocket: { port: "http" }, periodSeconds: 5, failureThreshold: 30 });
    for (const p of [c.livenessProbe, c.readinessProbe, c.startupProbe]) assert.ok(!JSON.stringify(p).includes("Authorization"));
});

test("opencode's XDG folders (cache, data, state) are on writable volumes under the read-only root; its global config folder is read-only (nothing installed there at start)", async () => {
    const r = await renderStack("prod");
    const pod = find(r, "Deployment", "agent-server-4000").spec.template.spec;
    const c = pod.containers[0];
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    const writable = c.volumeMounts.filter((m: any) => !m.readOnly).map((m: any) => m.mountPath);
    const under = (p: string) => writable.some((m: string) => p === m || p.startsWith(`${m}/`));
    for (const name of ["HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"]) {
        assert.ok(under(env(c, name).value), `${name}=${env(c, name).value} is not on a writable mount (${writable.join(", ")})`);
    }
    const config = c.volumeMounts.find((m: any) => m.name === "config");
    assert.equal(env(c, "XDG_CONFIG_HOME").value, config.mountPath);
    assert.equal(config.readOnly, true);
    // opencode creates XDG_CONFIG_HOME/opencode at start: the mount brings it as a folder.
    assert.deepEqual(pod.volumes.find((v: any) => v.name === "config").configMap.items.map((i: any) => i.path), ["config.json", "opencode/README"]);
    // Data and state survive a restart: they are on the data volume, not on scratch.
    const data = c.volumeMounts.find((m: any) => m.name === "data").mountPath;
    assert.ok(env(c, "XDG_DATA_HOME").value.startsWith(data));
    assert.ok(env(c, "XDG_STATE_HOME").value.startsWith(data));
    assert.equal(env(c, "OPENCODE_CONFIG").value, "/etc/agent-server/config.json");
});

test("prod: requests 500m/1Gi, limits 2/4Gi, volumes of 1Gi data and 5Gi workspace", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "agent-server-4001").spec.template.spec.containers[0];
    // ephemeral storage: its logs (64Mi) requested; limited to them plus its emptyDirs /tmp 256Mi, home 256Mi, cache 1Gi.
    assert.deepEqual(c.resources, { requests: { cpu: "500m", memory: "1Gi", "ephemeral-storage": "64Mi" }, limits: { cpu: "2", memory: "4Gi", "ephemeral-storage": "1600Mi" } });
    assert.equal(find(r, "PersistentVolumeClaim", "agent-server-4001-data").spec.resources.requests.storage, "1Gi");
    assert.equal(find(r, "PersistentVolumeClaim", "agent-server-4001-workspace").spec.resources.requests.storage, "5Gi");
});

test("hardened pod: non-root, no escalation, capabilities dropped, seccomp, read-only root, no token, preStop, grace period", async () => {
    const r = await renderStack("prod");
    const pod = find(r, "Deployment", "agent-server-4000").spec.template.spec;
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault");
    assert.equal(pod.terminationGracePeriodSeconds, 30);
    const c = pod.containers[0];
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
    assert.ok(c.lifecycle.preStop.sleep.seconds > 0);
    const config = c.volumeMounts.find((m: any) => m.mountPath === "/etc/agent-server");
    assert.equal(config.readOnly, true);
});

test("basic authentication from a Secret; the password is 16 random alphanumerics", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "agent-server-4000").spec.template.spec.containers[0];
    // opencode 1.2 reads OPENCODE_SERVER_USERNAME/OPENCODE_SERVER_PASSWORD (the specification's AGENT_SERVER_*).
    assert.deepEqual(env(c, "OPENCODE_SERVER_USERNAME").valueFrom.secretKeyRef, { name: "agent-server-auth", key: "username" });
    assert.deepEqual(env(c, "OPENCODE_SERVER_PASSWORD").valueFrom.secretKeyRef, { name: "agent-server-auth", key: "password" });
    assert.equal(env(c, "AGENT_SERVER_USERNAME"), undefined);
    assert.equal(env(c, "AGENT_SERVER_PASSWORD"), undefined);
    const password = r.resources.find((x) => x.type === "random:index/randomPassword:RandomPassword" && x.name === "agent-server-password");
    assert.ok(password);
    assert.equal(password.inputs.length, 16);
    assert.equal(password.inputs.special, false);
    const secret = find(r, "Secret", "agent-server-auth", "agent");
    assert.match(secret.stringData.password, /^[A-Za-z0-9]{16}$/);
});

test("the gateway admin key reaches the pod only from the Secret key admin-api-key, under the tool server's name", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "agent-server-4000").spec.template.spec.containers[0];
    assert.deepEqual(env(c, "SUB2API_ADMIN_API_KEY").valueFrom.secretKeyRef, { name: "gateway-admin", key: "admin-api-key" });
    assert.ok(!c.env.some((e: any) => e.name.startsWith("GATEWAY_")), "the specification's GATEWAY_* names are read by nothing");
    assert.match(find(r, "Secret", "gateway-admin", "agent").stringData["admin-api-key"], /^admin-[0-9a-f]{64}$/);
});

test("the configuration file of section 2.8 holds no secret and denies gateway-admin tools by default", async () => {
    const r = await renderStack("prod");
    const cm = find(r, "ConfigMap", "agent-server-config", "agent");
    const text: string = cm.data["config.json"];
    const cfg = JSON.parse(text);
    assert.equal(cfg.$schema, "https://opencode.ai/config.json");
    assert.match(cfg.model, /^[\w.-]+\/[\w.:-]+$/);
    assert.match(cfg.small_model, /^[\w.-]+\/[\w.:-]+$/);
    const provider: any = Object.values(cfg.provider)[0];
    assert.equal(provider.options.apiKey, "{env:MODEL_API_KEY}");
    // The bridge is in front of the agent server, not its model provider.
    assert.equal(provider.options.baseURL, "https://api.openai.com/v1");
    assert.ok(!text.includes("model-bridge"));
    for (const model of Object.values<any>(provider.models)) assert.deepEqual(model.limit, { context: 128000, output: 32000 });
    assert.equal(cfg.agent.build.options.store, false);
    assert.equal(cfg.agent.plan.options.store, false);
    assert.deepEqual(cfg.permission, { "gateway-admin_*": "deny" });
    const maintainer = cfg.agent.maintainer.permission;
    for (const t of ["describe", "health", "read", "find_user", "preview_recharge", "model_control_options"]) assert.equal(maintainer[`gateway-admin_${t}`], "allow", t);
    for (const t of ["recharge", "update_user_limits", "set_account_schedulable"]) assert.equal(maintainer[`gateway-admin_${t}`], "ask", t);
    for (const [agent, def] of Object.entries<any>(cfg.agent)) {
        if (agent !== "maintainer") assert.ok(Object.keys(def.permission ?? {}).every((k) => !k.startsWith("gateway-admin")), `${agent} must inherit deny`);
    }
    const mcp = cfg.mcp["gateway-admin"];
    assert.equal(mcp.type, "local");
    assert.equal(mcp.timeout, 40000);
    // sub2api-admin's server.mjs reads these names (docs/product-settings.md); 30000 ms and 10000 are section 8.2's.
    assert.deepEqual(mcp.environment, {
        SUB2API_BASE_URL: "http://gateway.gateway.svc.cluster.local:3000",
        SUB2API_ALLOWED_HOST: "gateway.gateway.svc.cluster.local",
        SUB2API_TIMEOUT_MS: "30000",
        SUB2API_MAX_RECHARGE: "10000",
        SUB2API_ADMIN_API_KEY: "{env:SUB2API_ADMIN_API_KEY}",
    });
    for (const s of all(r, "Secret")) for (const v of Object.values<string>(s.stringData ?? {})) if (v.length >= 8) assert.ok(!text.includes(v));
});

test("reloader annotations name the mounted ConfigMap and Secrets", async () => {
    const r = await renderStack("dev");
    const a = find(r, "Deployment", "agent-server-4000").metadata.annotations;
    assert.equal(a["configmap.stakater.com/reload"], "agent-server-config");
    assert.equal(a["secret.stakater.com/reload"], "agent-server-auth,agent-server-model,gateway-admin");
});

test("ingress: class nginx, TLS per host, the stack's issuer, proxy timeouts of section 8.2", async () => {
    const prod = await renderStack("prod");
    const ing = find(prod, "Ingress", "agent-server-4000", "agent");
    assert.equal(ing.spec.ingressClassName, "nginx");
    assert.deepEqual(ing.spec.tls, [{ hosts: ["agent.ops.example.com"], secretName: "agent-ops-example-com-tls" }]);
    const a = ing.metadata.annotations;
    assert.equal(a["cert-manager.io/cluster-issuer"], "lets-encrypt");
    assert.equal(a["nginx.ingress.kubernetes.io/proxy-connect-timeout"], "300");
    assert.equal(a["nginx.ingress.kubernetes.io/proxy-send-timeout"], "300");
    assert.equal(a["nginx.ingress.kubernetes.io/proxy-read-timeout"], "600");
    assert.equal(a["nginx.ingress.kubernetes.io/proxy-body-size"], "50m");
    const dev = await renderStack("dev");
    assert.equal(find(dev, "Ingress", "agent-server-4001").metadata.annotations["cert-manager.io/cluster-issuer"], "self-signed-ca-issuer");
});

test("network policy: in from the ingress controller and (its instance only) the bridge; out to DNS, the gateway and the model API, never to the bridge", async () => {
    const r = await renderStack("prod");
    const np = find(r, "NetworkPolicy", "agent-server-4000", "agent");
    assert.deepEqual(np.spec.policyTypes, ["Ingress", "Egress"]);
    assert.equal(np.spec.ingress.length, 2);
    assert.deepEqual(np.spec.ingress[0].from, [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } }]);
    assert.deepEqual(np.spec.ingress[0].ports, [{ port: 4000, protocol: "TCP" }]);
    assert.deepEqual(np.spec.ingress[1].from[0].podSelector.matchLabels["app.kubernetes.io/name"], "model-bridge");
    assert.deepEqual(np.spec.ingress[1].ports, [{ port: 4000, protocol: "TCP" }]);
    const other = find(r, "NetworkPolicy", "agent-server-4001", "agent");
    assert.equal(other.spec.ingress.length, 1, "the bridge forwards to the 4000 instance only");
    const peers = np.spec.egress.map((e: any) => JSON.stringify(e.to));
    assert.equal(np.spec.egress.length, 3, peers.join("\n"));
    assert.match(peers[0], /kube-dns/);
    assert.match(peers[1], /"kubernetes.io\/metadata.name":"gateway"/);
    assert.deepEqual(np.spec.egress[1].ports, [{ port: 3000, protocol: "TCP" }]);
    assert.match(peers[2], /0\.0\.0\.0\/0/, "the model API (https://api.openai.com/v1) is outside the cluster");
    assert.deepEqual(np.spec.egress[2].ports, [{ port: 443, protocol: "TCP" }]);
    assert.ok(!peers.some((p: string) => p.includes("model-bridge")), "the agent server never calls the bridge");
});

test("behind the OAuth proxy, the bridge's instance also publishes the server port for the bridge", async () => {
    const r = await renderStack("dev", { agentServerOauthProxyEnabled: true, agentServerOauthProxyClientId: "client", agentServerOauthProxyClientSecret: "client-secret-value" });
    assert.deepEqual(r.errors, []);
    const svc = find(r, "Service", "agent-server-4000", "agent");
    assert.deepEqual(svc.spec.ports.map((p: any) => [p.name, p.port, p.targetPort]), [["http", 4180, 4180], ["server", 4000, 4000]]);
    assert.deepEqual(find(r, "Service", "agent-server-4001", "agent").spec.ports.map((p: any) => p.name), ["http"]);
    const np = find(r, "NetworkPolicy", "agent-server-4000", "agent");
    assert.deepEqual(np.spec.ingress.map((i: any) => i.ports), [[{ port: 4180, protocol: "TCP" }], [{ port: 4000, protocol: "TCP" }]]);
});

test("an outbound proxy gets a NO_PROXY that covers every in-cluster host", async () => {
    const r = await renderStack("dev", { agentServerHttpProxy: "http://proxy.corp.example.com:3128" });
    assert.deepEqual(r.errors, []);
    const c = find(r, "Deployment", "agent-server-4000").spec.template.spec.containers[0];
    const noProxy: string = env(c, "NO_PROXY").value;
    for (const host of [".svc", ".svc.cluster.local", "localhost", "127.0.0.1", "gateway.gateway.svc.cluster.local", "10.0.0.0/8"]) assert.ok(noProxy.split(",").includes(host), host);
    assert.equal(env(c, "HTTPS_PROXY").value, "http://proxy.corp.example.com:3128");
});

test("the optional OAuth proxy: a sidecar and a Secret with client-id, client-secret and a 32-character cookie-secret", async () => {
    const r = await renderStack("dev", { agentServerOauthProxyEnabled: true, agentServerOauthProxyClientId: "client", agentServerOauthProxyClientSecret: "client-secret-value" });
    assert.deepEqual(r.errors, []);
    const s = find(r, "Secret", "agent-server-oauth", "agent");
    assert.deepEqual(Object.keys(s.stringData).sort(), ["client-id", "client-secret", "cookie-secret"]);
    assert.match(s.stringData["cookie-secret"], /^[A-Za-z0-9]{32}$/);
    const pod = find(r, "Deployment", "agent-server-4000").spec.template.spec;
    const proxy = pod.containers.find((c: any) => c.name === "oauth-proxy");
    assert.ok(proxy.args.includes("--upstream=http://127.0.0.1:4000/"));
    assert.equal(find(r, "Service", "agent-server-4000").spec.ports[0].port, 4180);
    assert.ok(!r.manifests.includes("client-secret-value"));
});

test("41.6 chats through the bridge run as the bridge agent: no shell, no subagents, no question and no ask rule unless bridgeChatShell/bridgeChatAsk say so; opencode's switches for no catalogue fetch, no plugin install and no workspace config", async () => {
    const r = await renderStack("prod");
    const cfg = JSON.parse(find(r, "ConfigMap", "agent-server-config", "agent").data["config.json"]);
    assert.deepEqual(cfg.agent.bridge.permission, { bash: "deny", task: "deny", question: "deny", doom_loop: "deny", external_directory: "deny", read: { "*": "allow", "*.env": "deny", "*.env.*": "deny", "*.env.example": "allow" } });
    assert.equal(cfg.agent.bridge.mode, "primary");
    const bridgeEnv = Object.fromEntries(find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    assert.equal(bridgeEnv.BRIDGE_AGENT, "bridge");
    assert.equal(bridgeEnv.BRIDGE_REJECT_ASKS, "true");
    const open = await renderStack("prod", { bridgeChatShell: true, bridgeChatAsk: true });
    const openCfg = JSON.parse(find(open, "ConfigMap", "agent-server-config", "agent").data["config.json"]);
    assert.deepEqual(openCfg.agent.bridge.permission, { bash: "allow", task: "deny", question: "allow", doom_loop: "ask", external_directory: "ask", read: { "*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow" } });
    assert.equal(find(open, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0].env.find((e: any) => e.name === "BRIDGE_REJECT_ASKS").value, "false");
    const c = find(r, "Deployment", "agent-server-4000").spec.template.spec.containers[0];
    for (const flag of ["OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_DEFAULT_PLUGINS", "OPENCODE_DISABLE_PROJECT_CONFIG"]) assert.equal(env(c, flag).value, "true", flag);
});
