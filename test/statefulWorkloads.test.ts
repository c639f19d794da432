/**
 * Every StatefulSet of the program (components/lib/statefulService.ts statefulWorkload, whichever
 * component declares it) is what the specification's StatefulSet is (section 2.2): spec.serviceName
 * names a headless Service of its namespace (clusterIP None) that selects its pods, so each pod has
 * the DNS name <statefulset>-<ordinal>.<service>.<namespace>.svc.cluster.local.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, renderStack } from "./render";

const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

for (const stack of ["dev", "prod"]) {
    test(`${stack}: each StatefulSet is governed by a headless Service of its namespace that selects its pods`, async () => {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, [], `${stack} renders`);
        const sets = all(r, "StatefulSet") as any[];
        // PostgreSQL, Redis, the object store, the workflow tool's main and workers, the search engine, a column store shard.
        assert.ok(sets.length >= 7, `${sets.length} StatefulSets`);
        for (const sts of sets) {
            const at = `${stack} ${sts.metadata.namespace}/${sts.metadata.name}`;
            const service = all(r, "Service").find((s: any) => s.metadata.namespace === sts.metadata.namespace && s.metadata.name === sts.spec.serviceName) as any;
            assert.ok(service, `${at}: no Service ${sts.spec.serviceName} in its namespace`);
            assert.equal(service.spec.clusterIP, "None", `${at}: ${sts.spec.serviceName} is not headless`);
            assert.ok(Object.keys(service.spec.selector ?? {}).length > 0, `${at}: ${sts.spec.serviceName} has no selector`);
            assert.ok(selects(service.spec.selector, sts.spec.template.metadata.labels), `${at}: ${sts.spec.serviceName} does not select its pods`);
            assert.ok(selects(sts.spec.selector.matchLabels, sts.spec.template.metadata.labels), `${at}: its selector does not match its pod template`);
        }
    });
}
