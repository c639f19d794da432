// The SDK's floor for the bench: the same resources the program registers (type, name, inputs,
// secrets kept secret), replayed as bare custom resources with no program logic around them.
import * as pulumi from "@pulumi/pulumi";
import type { RegisteredResource } from "../../cli/harness/program";
import { SECRET_SIG } from "../../cli/harness/program";

const rewrap = (v: unknown): unknown => {
    if (v && typeof v === "object" && SECRET_SIG in (v as object)) return pulumi.secret(rewrap((v as { value: unknown }).value));
    if (Array.isArray(v)) return v.map(rewrap);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rewrap(x)]));
    return v;
};

class Bare extends pulumi.CustomResource {}

const replay: RegisteredResource[] = (globalThis as any).__benchReplay ?? [];
replay.forEach((r, i) => new Bare(r.type, `${r.name}-${i}`, rewrap(r.inputs) as pulumi.Inputs));
export const registered = replay.length;
