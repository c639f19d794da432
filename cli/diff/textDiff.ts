/**
 * Unified line diff of two multi-line strings (ConfigMap data, embedded config files), for the
 * field-level diff: hunks with `@@ -a,b +c,d @@` headers and three lines of context.
 */

type Op = { op: " " | "-" | "+"; line: string };

/** Longest-common-subsequence edit script; texts here are config files, small enough for O(n*m). */
function editScript(a: string[], b: string[]): Op[] {
    const n = a.length;
    const m = b.length;
    const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
        for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
    const ops: Op[] = [];
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
        if (a[i] === b[j]) {
            ops.push({ op: " ", line: a[i++] });
            j++;
        } else if (lcs[i + 1][j] >= lcs[i][j + 1]) ops.push({ op: "-", line: a[i++] });
        else ops.push({ op: "+", line: b[j++] });
    }
    while (i < n) ops.push({ op: "-", line: a[i++] });
    while (j < m) ops.push({ op: "+", line: b[j++] });
    return ops;
}

const splitLines = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

/**
 * The unified diff of `before` and `after` as lines (without the ---/+++ file header); an empty
 * array when the texts are equal.
 */
export function unifiedLineDiff(before: string, after: string, context = 3): string[] {
    const ops = editScript(splitLines(before), splitLines(after));
    const changed = ops.map((o, k) => (o.op !== " " ? k : -1)).filter((k) => k >= 0);
    if (changed.length === 0) return [];

    // Group changes whose context windows touch into hunks.
    const hunks: Array<[number, number]> = [];
    for (const k of changed) {
        const start = Math.max(0, k - context);
        const end = Math.min(ops.length - 1, k + context);
        const last = hunks[hunks.length - 1];
        if (last && start <= last[1] + 1) last[1] = end;
        else hunks.push([start, end]);
    }

    const out: string[] = [];
    for (const [start, end] of hunks) {
        // Line numbers (1-based) where the hunk starts on each side.
        let oldLine = 1;
        let newLine = 1;
        for (let k = 0; k < start; k++) {
            if (ops[k].op !== "+") oldLine++;
            if (ops[k].op !== "-") newLine++;
        }
        const slice = ops.slice(start, end + 1);
        const oldCount = slice.filter((o) => o.op !== "+").length;
        const newCount = slice.filter((o) => o.op !== "-").length;
        out.push(`@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`);
        for (const o of slice) out.push(`${o.op}${o.line}`);
    }
    return out;
}
