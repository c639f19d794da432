import assert from "node:assert/strict";
import { test } from "node:test";
import { parseBytesMillis, parseCpuMillis } from "./quantity";

test("cpu: cores, millicores and numbers in millicores", () => {
    assert.equal(parseCpuMillis("100m"), 100);
    assert.equal(parseCpuMillis("2"), 2000);
    assert.equal(parseCpuMillis("0.5"), 500);
    assert.equal(parseCpuMillis(1.5), 1500);
});

test("cpu: anything else cannot be parsed", () => {
    for (const bad of ["-1", "1e3", "abc", "m", "", null, undefined, {}]) assert.equal(parseCpuMillis(bad), undefined, String(bad));
});

test("bytes: decimal and binary suffixes, plain numbers", () => {
    assert.equal(parseBytesMillis("1Gi"), 1000 * 2 ** 30);
    assert.equal(parseBytesMillis("500Mi"), 500 * 1000 * 2 ** 20);
    assert.equal(parseBytesMillis("1G"), 1e12);
    assert.equal(parseBytesMillis("128974848"), 128974848000);
    assert.equal(parseBytesMillis(1024), 1024000);
    assert.ok(parseBytesMillis("1Pi")! > parseBytesMillis("500Mi")!);
    assert.ok(parseBytesMillis("1Gi")! > parseBytesMillis("1G")!);
});

test("bytes: unknown suffixes and malformed numbers cannot be parsed", () => {
    for (const bad of ["1GB", "Gi", "1.2.3Mi", "-1Gi", ""]) assert.equal(parseBytesMillis(bad), undefined, bad);
});
