/**
 * Memoizes data derived from an inventory list (e.g. Ingresses by host) for as long as the list
 * lives. The stack inventory returns the same array for the same query, so a template reviewing
 * thousands of objects builds its index once instead of scanning the list for each object;
 * with an inventory that returns fresh arrays it still works, just without the saving.
 */
const derived = new WeakMap<readonly unknown[], Map<string, unknown>>();

export function derivedFrom<L extends readonly unknown[], T>(list: L, name: string, build: (list: L) => T): T {
    let byName = derived.get(list);
    if (!byName) derived.set(list, (byName = new Map()));
    if (byName.has(name)) return byName.get(name) as T;
    const value = build(list);
    byName.set(name, value);
    return value;
}
