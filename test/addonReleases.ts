/** The helm Releases the program makes for a configuration, in explain's form (cli/explain/addonPods.ts). */
import type { StackConfig } from "../config";
import { AddonKey, addonSpecs } from "../components/platform/addons";
import type { AddonRelease } from "../cli/explain/addonPods";

export function releasesOf(cfg: StackConfig): AddonRelease[] {
    return (Object.entries(addonSpecs(cfg)) as [AddonKey, ReturnType<typeof addonSpecs>[AddonKey]][])
        .map(([key, s]) => ({ release: s.release, namespace: s.namespace, chart: cfg.addons[key].chart, version: cfg.addons[key].version, values: s.values }));
}
