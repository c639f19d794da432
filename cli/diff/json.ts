/**
 * The diff as JSON for tools: one entry per stack diffed, one per stack that could not be
 * rendered, and a format version so consumers can tell a shape change from a content change.
 */
import { hasChanges, StackDiffReport } from "./report";

export const JSON_FORMAT_VERSION = 1;

export function renderJson(reports: StackDiffReport[], failures: Array<{ stack: string; error: string }> = []): string {
    const body = { formatVersion: JSON_FORMAT_VERSION, stacks: reports.map((r) => ({ ...r, hasChanges: hasChanges(r) })), failures };
    return JSON.stringify(body, null, 2) + "\n";
}
