/**
 * The one place the pack reaches into @pulumi/policy's internals (written against 1.21.0, whose
 * public surface has no way to change how a PolicyPack serves a call): while `new PolicyPack`
 * registers the Analyzer service, its AnalyzeStack is swapped for one that builds the stack's
 * resources once per call instead of once per stack policy.
 *
 * Why: the SDK (server.js makeAnalyzeStackRpcFun) decodes every resource's properties anew for
 * each stack policy (google-protobuf's Struct, deserializeProperties, unknownCheckingProxy); with
 * one named policy per rule that was ~20x the in-process run, and the rules share one view of
 * the stack (rule.ts viewOf) only when they are handed the same resource list.
 *
 * What it restates of the SDK's AnalyzeStack, policy by policy: the level (the pack config's,
 * else the policy's, else the pack's; disabled and non-stack policies skipped; remediate
 * reported as mandatory), the fast "not applicable" of a validateStack with a Pulumi type, each
 * PolicyResource (props deserialized behind the unknown-checking proxy, options, provider,
 * parent, dependencies), the report of a violation (a message or an object), an unknown value
 * during preview as an advisory "can't run ... during preview", notApplicable(), any other error
 * failing the call. ./sdkAdapter.test.ts serves the same policies with the SDK's own server and
 * with this one and fails on any difference in what they answer but the shared list.
 * Every other method is the SDK's; Configure and ConfigureStack are observed to know each
 * policy's config and the stack tags. Policies of this pack read props without mutating them
 * (plainProps), so sharing the list is safe.
 */
import * as grpc from "@grpc/grpc-js";
import type { EnforcementLevel, PolicyResource, PolicyResourceOptions, ReportViolation, StackValidationArgs, StackValidationPolicy } from "@pulumi/policy";
import { markWithoutUnknowns } from "./resources";
import { decodeAnalyzeStackRequest, type DecodedResource } from "./wire";

/* eslint-disable @typescript-eslint/no-var-requires */
const analyzerRpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");
const { deserializeProperties } = require("@pulumi/policy/deserialize");
const { unknownCheckingProxy, UnknownValueError } = require("@pulumi/policy/proxy");
const { makeAnalyzeResponse, asGrpcError, convertEnforcementLevel } = require("@pulumi/policy/protoutil");
const { getPulumiType, isStackPolicy } = require("@pulumi/policy/policy");
/* eslint-enable @typescript-eslint/no-var-requires */

/** What the served pack is: its name and version, level and policies, and what Configure and ConfigureStack said. */
export interface PackState {
    name: string;
    version: string;
    enforcementLevel: EnforcementLevel;
    policies: readonly StackValidationPolicy[];
    config: Record<string, Record<string, unknown> & { enforcementLevel?: EnforcementLevel }>;
    stackTags: ReadonlyMap<string, string>;
}

class NotApplicableError extends Error {
    constructor(readonly reason?: string) {
        super(reason ?? "Policy does not apply");
    }
}

function resourceOptions(r: any): PolicyResourceOptions {
    const opts = r.getOptions();
    if (!opts) throw new Error("A more recent version of the Pulumi CLI is required. To upgrade, see https://www.pulumi.com/docs/get-started/install/");
    const t = opts.getCustomtimeouts();
    const result: PolicyResourceOptions = {
        protect: opts.getProtect(),
        ignoreChanges: opts.getIgnorechangesList(),
        aliases: opts.getAliasesList(),
        customTimeouts: { createSeconds: t?.getCreate() ?? 0.0, updateSeconds: t?.getUpdate() ?? 0.0, deleteSeconds: t?.getDelete() ?? 0.0 },
        additionalSecretOutputs: opts.getAdditionalsecretoutputsList(),
    };
    if (opts.getDeletebeforereplacedefined()) result.deleteBeforeReplace = opts.getDeletebeforereplace();
    if (opts.getParent()) result.parent = opts.getParent();
    return result;
}

function isTypeOf(type: string, resourceClass: any): boolean {
    const pulumiType = getPulumiType(resourceClass);
    if (pulumiType) return type === pulumiType;
    const isInstance = resourceClass.isInstance;
    return !!isInstance && typeof isInstance === "function" && isInstance({ __pulumiType: type }) === true;
}

/** The PolicyResource list of one request, built once, as the SDK builds it per policy. */
function policyResources(decoded: readonly DecodedResource[]): PolicyResource[] {
    const intermediates = decoded.map(({ message: r, properties, flags }) => {
        const type: string = r.getType();
        // deserializeProperties only changes objects with Pulumi's signature key (secrets, assets,
        // archives, resource references); plain JSON comes out as an equal copy.
        const deserialized = flags.special ? deserializeProperties({ toJavaScript: () => properties }, false) : properties;
        if (!flags.unknown) markWithoutUnknowns(deserialized);
        const props = unknownCheckingProxy(deserialized);
        const resource: PolicyResource = {
            type,
            props,
            urn: r.getUrn(),
            name: r.getName(),
            opts: resourceOptions(r),
            dependencies: [],
            propertyDependencies: {},
            isType: (cls: any) => isTypeOf(type, cls),
            asType: ((cls: any) => (isTypeOf(type, cls) ? props : undefined)) as PolicyResource["asType"],
        };
        const prov = r.getProvider();
        if (prov) resource.provider = { type: prov.getType(), props: unknownCheckingProxy(deserializeProperties(prov.getProperties(), false)), urn: prov.getUrn(), name: prov.getName() };
        const propertyDependencies: Record<string, string[]> = {};
        for (const [k, v] of r.getPropertydependenciesMap().entries()) propertyDependencies[k] = v.getUrnsList();
        return { resource, parent: r.getParent() as string, dependencies: r.getDependenciesList() as string[], propertyDependencies };
    });
    const byUrn = new Map(intermediates.map((i) => [i.resource.urn, i.resource]));
    const found = (urns: string[]) => urns.map((d) => byUrn.get(d)).filter((d): d is PolicyResource => d !== undefined);
    for (const i of intermediates) {
        if (i.parent && byUrn.has(i.parent)) i.resource.parent = byUrn.get(i.parent);
        i.resource.dependencies = found(i.dependencies);
        for (const [k, urns] of Object.entries(i.propertyDependencies)) i.resource.propertyDependencies[k] = found(urns);
    }
    return intermediates.map((i) => i.resource);
}

/** The SDK's report function of a policy at a level: a violation is a message (after the description) or an object. */
function reporter(state: PackState, p: StackValidationPolicy, level: EnforcementLevel, ds: unknown[]): ReportViolation {
    const base = { policyPackName: state.name, policyPackVersion: state.version, description: p.description, severity: p.severity };
    return ((message: any, urn?: string) => {
        if (message && typeof message === "object") {
            ds.push({
                ...base,
                policyName: message.name || p.name,
                message: message.message || message.description || p.description,
                urn: message.urn,
                description: message.description || p.description,
                enforcementLevel: message.enforcementLevel || level,
                severity: message.severity || base.severity,
            });
        } else {
            ds.push({ ...base, policyName: p.name, message: message ? `${p.description}\n${message}` : p.description, urn, enforcementLevel: level });
        }
    }) as ReportViolation;
}

function analyzeStack(state: PackState) {
    return async (call: { request: { resources: DecodedResource[] } }, callback: (err: unknown, res?: unknown) => void) => {
        const ds: unknown[] = [];
        let notApplicable: unknown[] | undefined;
        const pushNotApplicable = (policyName: string, reason?: string) => {
            const na = new analyzerProto.PolicyNotApplicable();
            na.setPolicyName(policyName);
            if (reason) na.setReason(reason);
            (notApplicable ??= []).push(na);
        };
        try {
            let resources: PolicyResource[] | undefined;
            for (const p of state.policies) {
                let level = state.config[p.name]?.enforcementLevel || p.enforcementLevel || state.enforcementLevel;
                if (level === "disabled" || !isStackPolicy(p)) continue;
                if (level === "remediate") level = "mandatory";
                const pulumiType = getPulumiType(p.validateStack);
                if (pulumiType && !call.request.resources.some((r) => r.message.getType() === pulumiType)) {
                    pushNotApplicable(p.name, `Policy only applies to resources of type '${pulumiType}'`);
                    continue;
                }
                try {
                    resources ??= policyResources(call.request.resources);
                    const args: StackValidationArgs = {
                        resources,
                        getConfig: <T>() => {
                            const { enforcementLevel: _level, ...properties } = state.config[p.name] ?? {};
                            return properties as T;
                        },
                        stackTags: state.stackTags,
                        notApplicable: (reason?: string) => {
                            throw new NotApplicableError(reason);
                        },
                    };
                    await Promise.resolve(p.validateStack(args, reporter(state, p, level, ds)));
                } catch (e) {
                    const from = `policy '${p.name}' from policy pack '${state.name}@v${state.version}'`;
                    if (e instanceof UnknownValueError) {
                        const { validateStack: _v, name, ...diag } = p;
                        ds.push({ policyName: name, policyPackName: state.name, policyPackVersion: state.version, message: `can't run ${from} during preview: ${(e as Error).message}`, ...diag, enforcementLevel: "advisory" });
                    } else if (e instanceof NotApplicableError) {
                        pushNotApplicable(p.name, e.reason);
                    } else {
                        throw asGrpcError(e, `Error validating resource with ${from}`);
                    }
                }
            }
        } catch (err) {
            callback(err, undefined);
            return;
        }
        callback(undefined, makeAnalyzeResponse(ds, notApplicable));
    };
}

/**
 * Runs `construct` (which makes the PolicyPack) with the Analyzer service it registers serving
 * AnalyzeStack as described above; throws when it registers none (an SDK this adapter does not fit).
 */
export function withSharedAnalyzeStack<T>(state: PackState, construct: () => T): T {
    const proto = grpc.Server.prototype as any;
    const addService = proto.addService;
    let adapted = false;
    proto.addService = function (service: any, impl: any) {
        if (service !== analyzerRpc.AnalyzerService) return addService.call(this, service, impl);
        adapted = true;
        const definition = { ...service, analyzeStack: { ...service.analyzeStack, requestDeserialize: (b: Buffer) => decodeAnalyzeStackRequest(b) } };
        const configure = (call: any, callback: any) => {
            try {
                const config: PackState["config"] = {};
                for (const [k, v] of call.request.getPolicyconfigMap().entries()) config[k] = { ...v.getProperties().toJavaScript(), enforcementLevel: convertEnforcementLevel(v.getEnforcementlevel()) };
                state.config = config;
            } catch {
                // The SDK's handler reports the error.
            }
            return impl.configure(call, callback);
        };
        const configureStack = (call: any, callback: any) => {
            try {
                state.stackTags = new Map(call.request.getTagsMap().entries());
            } catch {
                // The SDK's handler reports the error.
            }
            return impl.configureStack(call, callback);
        };
        return addService.call(this, definition, { ...impl, configure, configureStack, analyzeStack: analyzeStack(state) });
    };
    try {
        const made = construct();
        if (!adapted) throw new Error("@pulumi/policy registered no Analyzer service through grpc.Server's addService while making the PolicyPack: policies/pack/sdkAdapter.ts does not fit this SDK version");
        return made;
    } finally {
        proto.addService = addService;
    }
}
