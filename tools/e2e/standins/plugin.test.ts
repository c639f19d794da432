/**
 * The stand-in plugins as the engine starts them (tools/e2e/bin/pulumi-resource-random|tls): they
 * print a port and serve the provider protocol; GetPluginInfo reports the version the program's
 * SDK asks for, Create makes the material.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";

/* eslint-disable @typescript-eslint/no-var-requires */
const rpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
const proto = require("@pulumi/pulumi/proto/provider_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
/* eslint-enable @typescript-eslint/no-var-requires */

const BIN = path.join(__dirname, "..", "bin");
const sdkVersion = (name: string) => JSON.parse(fs.readFileSync(path.join(__dirname, "../../../node_modules/@pulumi", name, "package.json"), "utf8")).pulumi.version;

async function withPlugin<T>(name: string, fn: (client: any) => Promise<T>): Promise<T> {
    const child = spawn(path.join(BIN, `pulumi-resource-${name}`), ["127.0.0.1:1"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
        const port = await new Promise<number>((resolve, reject) => {
            child.once("exit", (c) => reject(new Error(`pulumi-resource-${name} exited (${c})`)));
            child.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
        });
        const client = new rpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
        try {
            return await fn(client);
        } finally {
            client.close();
        }
    } finally {
        child.removeAllListeners("exit");
        child.kill();
    }
}

const call = <T>(client: any, method: string, req: unknown) => new Promise<T>((resolve, reject) => client[method](req, (err: Error | null, res: T) => (err ? reject(err) : resolve(res))));

/** Starts the plugin, checks that GetPluginInfo reports its SDK's version, and returns what Create makes of (urn, properties). */
async function create(name: string, urn: string, properties: Record<string, unknown>): Promise<{ id: string; outs: any }> {
    return withPlugin(name, async (client) => {
        const info: any = await call(client, "getPluginInfo", new Empty());
        assert.equal(info.getVersion(), sdkVersion(name));
        const req = new proto.CreateRequest();
        req.setUrn(urn);
        req.setProperties(Struct.fromJavaScript(properties));
        const res: any = await call(client, "create", req);
        return { id: res.getId(), outs: res.getProperties().toJavaScript() };
    });
}

test("pulumi-resource-random serves the provider protocol: its SDK's version, and a RandomPassword of the asked length", { timeout: 120_000 }, async () => {
    const { id, outs } = await create("random", "urn:pulumi:ci::ops::ops:Redis$random:index/randomPassword:RandomPassword::redis-password", { length: 32, special: false });
    assert.match(outs.result, /^[A-Za-z0-9]{32}$/);
    assert.ok(id);
});

test("pulumi-resource-tls serves the provider protocol: an ED25519 PrivateKey with its OpenSSH public key", { timeout: 120_000 }, async () => {
    const { outs } = await create("tls", "urn:pulumi:ci::ops::ops:platform:GitOps$tls:index/privateKey:PrivateKey::gitops-deploy-key", { algorithm: "ED25519" });
    assert.match(outs.publicKeyOpenssh, /^ssh-ed25519 AAAA/);
    assert.match(outs.privateKeyOpenssh, /^-----BEGIN OPENSSH PRIVATE KEY-----/);
});
