/**
 * A node:test reporter that ends `npm run test:products` with one line:
 * `test:products: N passed, N failed` (skipped tests are counted apart when there are any).
 * Plain JavaScript: node loads reporters before the tsx loader.
 */
/** @param {AsyncIterable<{ type: string, data: { nesting: number, skip?: unknown, todo?: unknown } }>} source */
export default async function* summary(source) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for await (const event of source) {
        if (event.data?.nesting !== 0) continue;
        if (event.type === "test:pass") {
            if (event.data.skip !== undefined || event.data.todo !== undefined) skipped++;
            else passed++;
        } else if (event.type === "test:fail") failed++;
    }
    yield `test:products: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
}
