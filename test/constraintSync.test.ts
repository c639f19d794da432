/**
 * A referential Gatekeeper template reads data.inventory, which holds only the kinds the Config's
 * spec.sync.syncOnly lists. Each constraint file must sync, for every referential constraint it
 * holds, each kind the library says its template reads (templates.json `syncKinds`; any API
 * version of the kind counts): otherwise Gatekeeper (and the pack's Wasm path) judges against an empty
 * inventory, so uniqueness rules find nothing and the autoscaler rule reports every target missing.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { missingShared, sharedPath, suiteNeeding } from "./skip";
import { test } from "node:test";
import { parseConstraintObjects } from "../policies/gatekeeper/engine/constraints";
import { PACK_DIR } from "../policies/pack/paths";

const TEMPLATES = ["conformance", "gatekeeper", "templates.json"];

interface LibraryTemplate { constraintKind: string; requiresSync: boolean; syncKinds: string[] }

suiteNeeding("constraint files sync what their referential templates read", () => {
    const library = JSON.parse(fs.readFileSync(sharedPath(...TEMPLATES), "utf8")) as { templates: LibraryTemplate[] };
    const referential = new Map(library.templates.filter((t) => t.requiresSync).map((t) => [t.constraintKind, t.syncKinds]));

    for (const tier of ["dev", "prod"]) {
        test(`constraints/${tier}.yaml`, () => {
            const file = path.join(PACK_DIR, "constraints", `${tier}.yaml`);
            const docs = parseConstraintObjects(fs.readFileSync(file, "utf8"), file) as { kind?: string; spec?: any }[];
            const config = docs.find((d) => d.kind === "Config");
            const synced = ((config?.spec?.sync?.syncOnly ?? []) as { group: string; kind: string }[]).map((k) => `${k.group}/${k.kind}`);
            const kinds = new Set(docs.map((d) => d.kind).filter((k) => k && referential.has(k)));
            assert.ok(kinds.size >= 4, `expected the referential constraints of the specification, found ${[...kinds].join(", ")}`);
            const missing: string[] = [];
            for (const kind of kinds) {
                // "extensions/v1beta1/Ingress" and "networking.k8s.io/v1/Ingress" are one kind: any served version will do.
                const needed = new Set(referential.get(kind!)!.map((s) => s.split("/").at(-1)!));
                for (const name of needed) if (!synced.some((s) => s.endsWith(`/${name}`))) missing.push(`${kind} reads ${name}`);
            }
            assert.deepEqual(missing, [], `${file}: spec.sync.syncOnly of the Config lacks kinds`);
        });
    }
}, missingShared(TEMPLATES));
