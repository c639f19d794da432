/**
 * images:lock without a network (issue 30): each failure names the image, the address it asked
 * and the cause (name resolution, refused connection, timeout), not a bare "fetch failed".
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { lockImages } from "../tools/images/lock";

const offline = (code: string, detail: string): typeof fetch => async () => {
    throw new TypeError("fetch failed", { cause: Object.assign(new Error(detail), { code }) });
};

test("a network failure names the image, the registry address and the cause", async () => {
    const refs = ["docker.io/library/redis:7.2.6", "quay.io/oauth2-proxy/oauth2-proxy:v7.6.0"];
    const r = await lockImages(refs, [], {}, offline("ENOTFOUND", "getaddrinfo ENOTFOUND registry-1.docker.io"));
    assert.equal(r.failures.length, 2);
    assert.match(r.failures[0], /^docker\.io\/library\/redis:7\.2\.6: GET https:\/\/registry-1\.docker\.io\/v2\/library\/redis\/manifests\/7\.2\.6 failed: getaddrinfo ENOTFOUND registry-1\.docker\.io \(ENOTFOUND\)/);
    assert.match(r.failures[1], /^quay\.io\/oauth2-proxy\/oauth2-proxy:v7\.6\.0: GET https:\/\/quay\.io\/v2\/oauth2-proxy\/oauth2-proxy\/manifests\/v7\.6\.0 failed:/);
    for (const f of r.failures) assert.notEqual(f, "fetch failed");
});

test("a refused connection and a timeout are named too", async () => {
    const refused = await lockImages(["docker.io/library/redis:7.2.6"], [], {}, offline("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:443"));
    assert.match(refused.failures[0], /redis:7\.2\.6: .*connect ECONNREFUSED 127\.0\.0\.1:443 \(ECONNREFUSED\)/);
    const timeout: typeof fetch = async () => {
        throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
    };
    const slow = await lockImages(["docker.io/library/redis:7.2.6"], [], {}, timeout);
    assert.match(slow.failures[0], /redis:7\.2\.6: GET .* failed: no answer within 30 s \(TimeoutError\)/);
});
