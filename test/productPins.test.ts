// The products test:products builds or installs are the images' releases: each pin of
// tools/products/pins.ts against the image default of the typed config (and so every stack that
// keeps the default tag; the stack files are checked below).
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { agentServer } from "../config/areas/agent";
import { backups } from "../config/areas/backups";
import { columnStore } from "../config/areas/columnStore";
import { objectStore } from "../config/areas/dataStores";
import { CHDB, GO_PRODUCTS } from "../tools/products/pins";

const tag = (image: string) => image.replace(/@sha256:[0-9a-f]{64}$/, "").split(":").at(-1)!;

test("the Go products are built at the releases the images name", () => {
    assert.equal(tag(objectStore.image.default!), GO_PRODUCTS.minio.release);
    assert.equal(tag(backups.mcImage.default!), GO_PRODUCTS.mc.release);
    assert.equal(tag(agentServer.oauthProxy.image.default!), GO_PRODUCTS.oauth2Proxy.release);
    // a pseudo-version's time stamp is the release's (RELEASE.YYYY-MM-DDTHH-MM-SSZ)
    for (const p of [GO_PRODUCTS.minio, GO_PRODUCTS.mc]) {
        const stamp = p.version.split("-")[1];
        assert.equal(p.release.replace(/\D/g, ""), stamp, `${p.module}@${p.version} is not ${p.release}`);
    }
    assert.equal(GO_PRODUCTS.oauth2Proxy.version, GO_PRODUCTS.oauth2Proxy.release);
});

test("chdb runs the column store image's ClickHouse release line", () => {
    assert.ok(tag(columnStore.image.default!).startsWith(`${CHDB.engine}.`), `${columnStore.image.default} vs ClickHouse ${CHDB.engine}`);
});

test("every stack file that pins these images pins the same releases", () => {
    const root = path.resolve(__dirname, "..");
    const keys: Record<string, string> = {
        "ops:objectStoreImage": GO_PRODUCTS.minio.release,
        "ops:backupsMcImage": GO_PRODUCTS.mc.release,
        "ops:agentServerOauthProxyImage": GO_PRODUCTS.oauth2Proxy.release,
    };
    let seen = 0;
    for (const f of fs.readdirSync(root).filter((n) => /^Pulumi\.\w+\.yaml$/.test(n))) {
        for (const line of fs.readFileSync(path.join(root, f), "utf8").split("\n")) {
            const m = line.match(/^\s*(ops:\w+):\s*(\S+)\s*$/);
            if (m && keys[m[1]]) {
                assert.equal(tag(m[2]), keys[m[1]], `${f}: ${m[1]}`);
                seen++;
            }
        }
    }
    assert.ok(seen >= 3, "no stack file pins these images");
});
