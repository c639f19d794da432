/**
 * The built-in functions the pack's Wasm host provides to policies compiled by `opa build -t wasm`
 * (those OPA's Wasm library leaves to its host): the Rego runtime's (../rego/builtins.ts), on the
 * values ./value.ts reads the module's into.
 */
import { SHARED_BUILTINS, type Builtin } from "../rego/builtins";
import { unitsParse } from "../rego/topdownBuiltins";
import { numberFromText } from "../rego/values";

export type HostBuiltin = Builtin;

export const HOST_BUILTINS: ReadonlyMap<string, HostBuiltin> = new Map<string, HostBuiltin>([
    ...SHARED_BUILTINS,
    // The module keeps units.parse's decimal as OPA's text of it (0.0010000000), as topdown does; the plans a float64.
    [
        "units.parse",
        (s) => {
            if (typeof s !== "string") throw new TypeError("operand 1 must be string");
            return numberFromText(unitsParse(s), true);
        },
    ],
]);
