/** The diff shows add-on helm releases (one resource each in the render) as objects of their own. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { helmReleaseObjects } from "../cli/diff/helmReleases";
import { buildReport } from "../cli/diff/report";
import type { PolicyResource } from "../cli/diff/policy";

const release = (type: string, version: string, values: Record<string, unknown>): PolicyResource => ({
    type,
    urn: `urn:pulumi:dev::ops::${type}::addons-ingress-nginx`,
    name: "addons-ingress-nginx",
    props: { name: "ingress-nginx", namespace: "ingress-nginx", chart: "ingress-nginx", version, repositoryOpts: { repo: "https://kubernetes.github.io/ingress-nginx" }, values },
});
const side = (resources: PolicyResource[]) => ({ info: { ref: "x", problems: [] }, objects: [], resources });

test("a changed chart version or value of a helm release is a changed object; v4 Chart -> v3 Release with the same inputs is no change", async () => {
    const v4 = release("kubernetes:helm.sh/v4:Chart", "4.11.3", { controller: { replicaCount: 2 } });
    const v3 = release("kubernetes:helm.sh/v3:Release", "4.11.3", { controller: { replicaCount: 2 } });
    const bumped = release("kubernetes:helm.sh/v3:Release", "4.11.4", { controller: { replicaCount: 3 } });
    assert.deepEqual(helmReleaseObjects([v3])[0].metadata, { name: "ingress-nginx", namespace: "ingress-nginx" });
    const same = await buildReport("dev", side([v4]), side([v3]), {});
    assert.deepEqual([same.objects.added.length, same.objects.removed.length, same.objects.changed.length], [0, 0, 0]);
    const changed = await buildReport("dev", side([v3]), side([bumped]), {});
    assert.equal(changed.objects.changed.length, 1);
    assert.match(JSON.stringify(changed.objects.changed[0]), /4\.11\.4/);
    assert.match(JSON.stringify(changed.objects.changed[0]), /replicaCount/);
    const added = await buildReport("dev", side([]), side([v3]), {});
    assert.deepEqual(added.objects.added.map((r) => `${r.kind} ${r.namespace}/${r.name}`), ["HelmRelease ingress-nginx/ingress-nginx"]);
});
