/**
 * The time one evaluation of a team's template may take, on the compiled path
 * (plan/compile.ts) and the Wasm path (wasm/host.ts): OPS_TEMPLATE_TIME_BUDGET_MS, by default
 * 10 s. Gatekeeper's webhook gives up after 3 s and its audit has no bound; a preview must end
 * and name the template whose Rego does too much work.
 */
export function templateTimeBudgetMs(): number {
    const setting = process.env.OPS_TEMPLATE_TIME_BUDGET_MS;
    if (setting === undefined || setting === "") return 10_000;
    const ms = Number(setting);
    if (!Number.isInteger(ms) || ms <= 0) throw new Error(`OPS_TEMPLATE_TIME_BUDGET_MS must be a whole number of milliseconds above 0, got ${JSON.stringify(setting)}`);
    return ms;
}
