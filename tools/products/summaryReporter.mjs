/**
 * A node:test reporter that ends `npm run test:products` with one line:
 * `test:products: N passed, N failed` (skipped tests are counted apart when there are any).
 * Plain JavaScript: node loads reporters before the tsx loader.
 */
/**
 * Tests are counted, not suites: a suite of five is five, and a suite that stands skipped for a
 * missing product (test/skip.ts: one skipped test inside) counts as skipped, not passed.
 * @param {AsyncIterable<{ type: string, data: { nesting: number, skip?: unknown, todo?: unknown, details?: { type?: string } } }>} source
 */
export default async function* summary(source) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for await (const event of source) {
        if (event.type !== "test:pass" && event.type !== "test:fail") continue;
        if (event.data?.details?.type === "suite") continue;
        if (event.type === "test:pass") {
            if (event.data.skip !== undefined || event.data.todo !== undefined) skipped++;
            else passed++;
        } else if (event.type === "test:fail") failed++;
    }
    yield `test:products: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
}
