/**
 * Chart values against the chart's own values.yaml at the pinned version (../shared/reference/
 * chart-values/<chart>-<version>-values.yaml): every value path the program sets must be a key of
 * values.yaml, or lie under a key whose default is an empty map/null (free-form: labels, annotations,
 * resources, config maps of the product) or a list. Paths the chart's templates read although
 * values.yaml leaves them out (commented-out examples) are listed by the caller with a reason.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { REPO_ROOT } from "../cli/harness/stackConfig";

export const CHART_VALUES_DIR = path.resolve(REPO_ROOT, "..", "shared", "reference", "chart-values");

export const chartValuesFile = (chart: string, version: string) => path.join(CHART_VALUES_DIR, `${chart}-${version}-values.yaml`);

export function readChartValues(chart: string, version: string): unknown {
    return YAML.parse(fs.readFileSync(chartValuesFile(chart, version), "utf8"), { version: "1.1" });
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The value paths of `set` (dotted, keys with dots in brackets) that values.yaml (`ref`) does not have. */
export function unknownValuePaths(set: unknown, ref: unknown, at = ""): string[] {
    if (!isMap(set)) return [];
    const out: string[] = [];
    for (const [key, value] of Object.entries(set)) {
        const p = at + (/^[A-Za-z_][\w-]*$/.test(key) ? `${at ? "." : ""}${key}` : `[${JSON.stringify(key)}]`);
        if (!isMap(ref) || !(key in ref)) {
            out.push(p);
            continue;
        }
        const r = ref[key];
        // An empty map or null default is free-form (labels, annotations, resources, product config).
        if (r === null || (isMap(r) && Object.keys(r).length === 0)) continue;
        if (isMap(value)) {
            if (!isMap(r)) {
                out.push(`${p} (a map where values.yaml has ${Array.isArray(r) ? "a list" : typeof r})`);
                continue;
            }
            out.push(...unknownValuePaths(value, r, p));
        }
    }
    return out;
}
