import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { ConfigError, loadConfig, mapSource, schema, StackConfig } from "../config";
import * as s from "../config/schema";
import { readStackValues } from "../cli/harness/stackConfig";

// Every required secret of the schema, with a value of the right shape.
const VALID: Record<string, unknown> = Object.fromEntries(
    s.flatten(schema).filter(({ field }) => field.secret && !field.optional).map(({ key, field }) => [key, field.placeholder]),
);
VALID.gatewayToolAdminApiKey = `admin-${"ab12".repeat(16)}`;

function load(values: Record<string, unknown>): StackConfig {
    return loadConfig(mapSource("ops", "test", { ...VALID, ...values }));
}

function problems(values: Record<string, unknown>): string {
    try {
        load(values);
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
        return err.message;
    }
    assert.fail("the configuration was accepted");
}

test("a configuration with only the required secrets loads with the specification's defaults", () => {
    const c = load({});
    assert.deepEqual([...c.agentServer.ports], [4000, 4001]);
    assert.equal(c.agentServer.liveness.initialDelay, 15);
    assert.equal(c.agentServer.startup.failureThreshold, 30);
    assert.equal(c.gatewayTool.timeoutMs, 30000);
    assert.equal(c.gatewayTool.toolTimeoutMs, 40000);
    assert.equal(c.gatewayTool.maxRecharge, 10000);
    assert.equal(c.ingress.proxyReadTimeout, 600);
    assert.ok(pulumi.Output.isInstance(c.gatewayTool.adminApiKey));
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.agentServer) && Object.isFrozen(c.agentServer.ports));
});

const cases: { key: string; bad: unknown; good: unknown; expected: RegExp }[] = [
    { key: "agentServerRequestsCpu", bad: "half", good: "250m", expected: /CPU quantity/ },
    { key: "agentServerLimitsMemory", bad: "4GB", good: "4Gi", expected: /memory quantity/ },
    { key: "agentServerDataVolumeSize", bad: "lots", good: "2Gi", expected: /storage quantity/ },
    { key: "agentServerPorts", bad: [4000, 70000], good: [4000], expected: /item 1: 70000 is above 65535/ },
    { key: "environmentDomain", bad: "Bad_Domain", good: "ops.example.org", expected: /DNS hostname/ },
    { key: "gatewayToolBaseUrl", bad: "ftp://gw", good: "https://gateway.gateway.svc.cluster.local:8443", expected: /http or https URL/ },
    { key: "agentServerImage", bad: "registry.example.com/agent:latest", good: "registry.example.com/agent:1.0", expected: /latest is not a pin/ },
    { key: "agentServerImage", bad: "registry.example.com/agent", good: "registry.example.com/agent:1.0", expected: /no tag or digest/ },
    { key: "gatewayToolMaxRecharge", bad: 10001, good: 10000, expected: /10001 is above 10000/ },
    { key: "gatewayToolTimeoutMs", bad: 0, good: 1000, expected: /milliseconds/ },
    { key: "bridgeMinReplicas", bad: 7, good: 3, expected: /7 is above the maximum 6; expected at most bridgeMaxReplicas/ },
    { key: "environmentTier", bad: "staging", good: "dev", expected: /one of dev, prod/ },
    { key: "agentServerLivenessPeriod", bad: "soon", good: 20, expected: /integer/ },
    { key: "agentServerStorageClass", bad: "", good: "fast", expected: /a storage class name \(a DNS-1123 subdomain/ },
];

for (const c of cases) {
    test(`${c.key}: ${JSON.stringify(c.bad)} is refused with the expected form, ${JSON.stringify(c.good)} is accepted`, () => {
        const message = problems({ [c.key]: c.bad });
        assert.match(message, new RegExp(`ops:${c.key}: `));
        assert.match(message, c.expected);
        assert.doesNotThrow(() => load({ [c.key]: c.good }));
    });
}

test("the gateway admin key must be admin- and 64 hex characters, and its value is never echoed", () => {
    for (const bad of ["admin-123", `admin-${"g".repeat(64)}`, `Admin-${"a".repeat(64)}`, `admin-${"a".repeat(65)}`]) {
        const message = problems({ gatewayToolAdminApiKey: bad });
        assert.match(message, /ops:gatewayToolAdminApiKey: has the wrong shape \(value not shown\); expected admin- followed by 64 lower-case hexadecimal characters/);
        assert.ok(!message.includes(bad), "the secret value appears in the error");
    }
});

test("a missing secret names the command that sets it", () => {
    const message = problems({ gatewayToolAdminApiKey: undefined });
    assert.match(message, /ops:gatewayToolAdminApiKey: is not set; expected .*pulumi config set --secret gatewayToolAdminApiKey/);
});

test("GATEWAY_ALLOWED_HOST must equal the host of GATEWAY_BASE_URL", () => {
    const message = problems({ gatewayToolBaseUrl: "http://gateway.gateway.svc.cluster.local:3000", gatewayToolAllowedHost: "evil.example.com" });
    assert.match(message, /ops:gatewayToolAllowedHost: "evil.example.com" is not the host of gatewayToolBaseUrl \(gateway.gateway.svc.cluster.local\)/);
    assert.doesNotThrow(() => load({ gatewayToolBaseUrl: "http://gw.internal:8080", gatewayToolAllowedHost: "gw.internal" }));
});

test("prod runs every image by a recorded digest: a tag images.lock.json does not record is refused before anything is created", () => {
    const message = problems({ environmentTier: "prod" });
    assert.match(message, /ops:agentServerImage: prod runs images by digest and images.lock.json has no digest for registry.example.com\/ops\/agent-server:1.2.27; expected .*npm run images:lock -- --stack <stack>/);
    assert.match(message, /ops:postgresImage: prod runs images by digest and images.lock.json has no digest for docker.io\/library\/postgres:15.10/);
});

const RECORD = (reference: string, digest: string) => ({ reference, digest, source: "registry answer in a test of the lock", date: "2026-11-25" });
const loadWith = (records: ReturnType<typeof RECORD>[], values: Record<string, unknown>, digestMode?: "require" | "placeholder" | "tag") =>
    loadConfig(mapSource("ops", "test", { ...VALID, ...values }, { records, digestMode }));

test("prod: a recorded tag runs as tag@digest; dev keeps the tag; the render's placeholder mode marks the rest", () => {
    const d = `sha256:${"1f".repeat(32)}`;
    const records = [RECORD("docker.io/library/postgres:15.10", d)];
    const v = readStackValues("prod");
    const prod = Object.fromEntries(Object.entries(v.config).filter(([k]) => k.startsWith("ops:")).map(([k, x]) => [k.slice(4), x]));
    const all = (mode: "placeholder" | "tag") => loadWith(records, prod, mode);
    assert.equal(all("placeholder").postgres.image, `docker.io/library/postgres:15.10@${d}`);
    assert.equal(all("placeholder").redis.image, `docker.io/library/redis:7.2.6@sha256:${"0".repeat(64)}`);
    assert.equal(all("tag").redis.image, "docker.io/library/redis:7.2.6");
    assert.equal(loadWith(records, {}).postgres.image, "docker.io/library/postgres:15.10", "dev runs the tag");
});

test("a digest written in the configuration must be its reference's record", () => {
    const d = `sha256:${"2e".repeat(32)}`;
    const records = [RECORD("docker.io/library/redis:7.2.6", d)];
    assert.equal(loadWith(records, { redisImage: `docker.io/library/redis:7.2.6@${d}` }).redis.image, `docker.io/library/redis:7.2.6@${d}`);
    const other = `sha256:${"3d".repeat(32)}`;
    assert.throws(() => loadWith(records, { redisImage: `docker.io/library/redis:7.2.6@${other}` }), /ops:redisImage: the digest sha256:3d3d.* is not the recorded sha256:2e2e.* of docker.io\/library\/redis:7.2.6/);
    assert.throws(() => loadWith(records, { postgresImage: `docker.io/library/postgres:15.10@${other}` }), /ops:postgresImage: the digest sha256:3d3d.* has no record in images.lock.json/);
});

test("requests may not exceed limits", () => {
    const message = problems({ agentServerRequestsMemory: "8Gi", agentServerLimitsMemory: "4Gi" });
    assert.match(message, /ops:agentServerRequestsMemory: 8Gi exceeds the limit 4Gi/);
});

test("a misspelt key is reported with a suggestion", () => {
    const message = problems({ agentServerImgae: "x:1" });
    assert.match(message, /ops:agentServerImgae: is not a key of this project; expected .*did you mean agentServerImage/);
});

test("every problem is reported at once, in one message", () => {
    const message = problems({ agentServerRequestsCpu: "x", gatewayToolMaxRecharge: 20000, environmentDomain: "-bad-", gatewayToolAdminApiKey: "nope" });
    assert.match(message, /4 problems; nothing was created/);
    for (const key of ["agentServerRequestsCpu", "gatewayToolMaxRecharge", "environmentDomain", "gatewayToolAdminApiKey"]) assert.match(message, new RegExp(`ops:${key}:`));
});

test("cron fields: five fields in range, or six with seconds", () => {
    const five = s.cron("t");
    assert.ok(five.check("0 3 * * *").ok);
    assert.ok(five.check("*/15 0-6 1,15 * 1-5").ok);
    assert.ok(!five.check("0 3 * *").ok);
    assert.ok(!five.check("61 3 * * *").ok);
    assert.ok(!five.check("0 25 * * *").ok);
    const six = s.cronWithSeconds("t");
    assert.ok(six.check("0 30 1 * * ?").ok);
    assert.ok(!six.check("0 3 * * *").ok);
});

test("node ports, hostnames and quantities", () => {
    assert.ok(s.nodePort("t").check(30900).ok);
    assert.ok(!s.nodePort("t").check(8080).ok);
    assert.ok(!s.nodePort("t").check(32768).ok);
    assert.ok(s.hostname("t").check("a-b.example.com").ok);
    assert.ok(!s.hostname("t").check("a_b.example.com").ok);
    assert.equal(s.quantityBytes("4Gi"), 4 * 2 ** 30);
    assert.equal(s.cpuMillis("2"), 2000);
    assert.equal(s.cpuMillis("500m"), 500);
    assert.ok(s.chartVersion("t").check("4.11.3").ok);
    assert.ok(!s.chartVersion("t").check("^4.11").ok);
    assert.ok(!s.chartVersion("t").check("latest").ok);
});
