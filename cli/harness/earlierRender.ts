/**
 * A render's resources.json read back: the registered resources (redacted records) as the policy
 * pack takes them. The earlier state of the Gatekeeper policies' operation model (issue 43): `npm
 * run render -- --previous DIR` judges the stack with an earlier render's resources, `npm run diff`
 * the working tree with the base revision's. A Kubernetes object of the earlier render is matched
 * to one of this render by group, kind, namespace and name (policies/gatekeeper/engine/evaluate.ts):
 * not there before, a CREATE; different, an UPDATE with its old object; the same, judged as
 * Gatekeeper's audit judges what is on the cluster (operation "").
 */
import * as fs from "fs";
import * as path from "path";
import { isDeepStrictEqual } from "util";
import type { PackResource } from "../../policies/pack/resources";
import type { ResourceRecord } from "./manifests";

const FORM = "a JSON list of the records {type, urn, name, inputs} an earlier `npm run render` wrote";

/** resources.json's text as the pack's resources; an error names the file, the entry and the expected form. */
export function parseRenderResources(text: string, file: string): PackResource[] {
    let records: unknown;
    try {
        records = JSON.parse(text);
    } catch (err) {
        throw new Error(`${file}: not JSON (${(err as Error).message}); expected ${FORM}`);
    }
    if (!Array.isArray(records)) throw new Error(`${file}: expected ${FORM}, got ${records === null ? "null" : typeof records}`);
    return records.map((r: unknown, i) => {
        const rec = r as Partial<Record<keyof ResourceRecord, unknown>> | null;
        const bad = !rec || typeof rec !== "object" ? "not an object" : (["type", "urn", "name"] as const).find((k) => typeof rec[k] !== "string" || rec[k] === "");
        if (bad) throw new Error(`${file}: entry ${i}: ${bad === "not an object" ? bad : `"${bad}" is not a non-empty string`}; expected ${FORM}`);
        const inputs = rec!.inputs ?? {};
        if (typeof inputs !== "object" || Array.isArray(inputs)) throw new Error(`${file}: entry ${i} (${rec!.urn}): "inputs" is not an object; expected ${FORM}`);
        return { type: rec!.type as string, urn: rec!.urn as string, name: rec!.name as string, props: inputs as Record<string, any> };
    });
}

/** The stack a resource's URN names (`urn:pulumi:<stack>::<project>::...`). */
const stackOfUrn = (urn: string): string | undefined => /^urn:pulumi:([^:]+)::/.exec(urn)?.[1];

/**
 * The resources of the earlier render in folder `dir` (its resources.json), checked to be a render of
 * `stack`: an error names the folder or file, what is wrong and what is expected.
 */
export function readEarlierRender(dir: string, stack: string): PackResource[] {
    const file = path.join(dir, "resources.json");
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`--previous ${dir}: not a folder; expected the output folder of an earlier \`npm run render -- --stack ${stack}\` (e.g. out/${stack})`);
    if (!fs.existsSync(file)) throw new Error(`--previous ${dir}: it has no resources.json; expected the output folder of an earlier \`npm run render -- --stack ${stack}\` (e.g. out/${stack})`);
    const resources = parseRenderResources(fs.readFileSync(file, "utf8"), file);
    if (resources.length === 0) throw new Error(`${file}: no resources; expected ${FORM}`);
    const other = resources.find((r) => stackOfUrn(r.urn) !== stack);
    if (other) throw new Error(`${file}: a render of stack ${stackOfUrn(other.urn) ?? "(no stack in its URN)"} (${other.urn}), not of ${stack}; give --previous a render of the same stack`);
    return resources;
}

/**
 * The earlier resources as the pack compares them with this render's: an earlier record equal to
 * this render's record of the same URN (both redacted: secret values are placeholders there) is
 * this render's own resource, so an object with a secret value counts as unchanged when nothing of
 * it changed, not as an UPDATE of its redacted self.
 */
export function earlierState(current: readonly ResourceRecord[], currentResources: readonly PackResource[], earlier: readonly PackResource[]): PackResource[] {
    const records = new Map(current.map((r) => [r.urn, r]));
    const resources = new Map(currentResources.map((r) => [r.urn, r]));
    return earlier.map((e) => {
        const now = records.get(e.urn);
        return now && resources.has(e.urn) && isDeepStrictEqual(now.inputs ?? {}, e.props) ? resources.get(e.urn)! : e;
    });
}

/** group/kind/namespace/name of a Kubernetes object's props, as the operation model matches objects; undefined for anything else. */
function objectKey(props: Record<string, any>): string | undefined {
    const { apiVersion, kind, metadata } = props ?? {};
    if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof metadata?.name !== "string") return undefined;
    const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
    return [group, kind, metadata.namespace ?? "", metadata.name].join("\u0000");
}

/** The render summary's line about the earlier state: how many Kubernetes objects are new, changed, unchanged, gone. */
export function earlierStateLine(file: string, current: readonly ResourceRecord[], earlier: readonly PackResource[]): string {
    const before = new Map<string, unknown>();
    for (const e of earlier) {
        const key = objectKey(e.props);
        if (key) before.set(key, e.props);
    }
    const now = new Set<string>();
    const counts = { created: 0, changed: 0, same: 0 };
    for (const r of current) {
        const key = objectKey((r.inputs ?? {}) as Record<string, any>);
        if (!key) continue;
        now.add(key);
        const old = before.get(key);
        if (old === undefined) counts.created++;
        else if (isDeepStrictEqual(r.inputs, old)) counts.same++;
        else counts.changed++;
    }
    const gone = [...before.keys()].filter((k) => !now.has(k)).length;
    return `policy pack: earlier state from ${file}: ${counts.created} Kubernetes object(s) new (judged as CREATE), ${counts.changed} changed (UPDATE, with the old object), ${counts.same} unchanged (as Gatekeeper's audit judges them), ${gone} gone (a deletion is not judged)`;
}
