// The floor with the provider SDKs' own per-resource work: the same resources as floorProgram.ts,
// each through the class of its type (@pulumi/kubernetes, @pulumi/random, @pulumi/tls), so each
// carries what the class adds (the kubernetes classes' aliases for earlier API versions, their
// output-only properties such as `status`). The program over this floor is its own logic only.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { RegisteredResource } from "../../cli/harness/program";
import { SECRET_SIG } from "../../cli/harness/program";

const rewrap = (v: unknown): unknown => {
    if (v && typeof v === "object" && SECRET_SIG in (v as object)) return pulumi.secret(rewrap((v as { value: unknown }).value));
    if (Array.isArray(v)) return v.map(rewrap);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rewrap(x)]));
    return v;
};

type Ctor = new (name: string, args: any, opts?: pulumi.CustomResourceOptions) => pulumi.CustomResource;

/** The class of a type token: kubernetes:<group>/<version>:<Kind> or <package>:index/<x>:<Kind>; undefined for a custom resource type. */
export function classOf(type: string): Ctor | undefined {
    const [pkg, mod, kind] = type.split(":");
    if (pkg === "kubernetes") {
        const [group, version] = mod.split("/");
        const area = group === "core" ? "core" : group.split(".")[0];
        // A group of another API (autoscaling.k8s.io is the vertical autoscaler's, not autoscaling).
        const builtin = group === "core" || !group.includes(".") || group.endsWith(".k8s.io") || group === "helm.sh";
        return builtin ? (k8s as any)[area]?.[version]?.[kind] : undefined;
    }
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    return require(`@pulumi/${pkg}`)[kind];
}

const replay: RegisteredResource[] = (globalThis as any).__benchReplay ?? [];
replay.forEach((r, i) => {
    const Class = classOf(r.type);
    const args = rewrap(r.inputs) as Record<string, unknown>;
    if (Class) new Class(`${r.name}-${i}`, args);
    else new k8s.apiextensions.CustomResource(`${r.name}-${i}`, args as unknown as k8s.apiextensions.CustomResourceArgs);
});
export const registered = replay.length;
