/**
 * Serves the pack over the analyzer gRPC protocol with @pulumi/policy's own server, changing one
 * thing: AnalyzeStack builds the stack's resources once per call instead of once per stack policy.
 *
 * @pulumi/policy 1.21.0 (server.js makeAnalyzeStackRpcFun) deserializes every resource's
 * properties anew for each stack policy (deserializeProperties + unknownCheckingProxy), and the
 * generated jspb classes decode google.protobuf.Struct slowly; with one named policy per rule that
 * dominated the pack's time (~20x the in-process run). Here, while `new PolicyPack` registers the
 * Analyzer service, the AnalyzeStack method gets:
 *   - a request decoder that decodes each resource's properties Struct directly (wire.ts) and the
 *     rest of the request with the generated classes;
 *   - a handler with the server's semantics, policy by policy (level from the pack config, else
 *     the policy's, else the pack's; disabled and non-stack policies skipped; remediate counts as
 *     mandatory; the getPulumiType fast "not applicable" check; an unknown value during preview
 *     becomes an advisory "can't run ... during preview"; notApplicable() is reported as such;
 *     any other error fails the call), over one resource list shared by all policies.
 * Every other method (GetAnalyzerInfo, Configure, ConfigureStack, Analyze, Remediate, ...) is the
 * SDK's; Configure and ConfigureStack are observed to know each policy's config and the stack tags.
 * Policies of this pack read props without mutating them (plainProps), so sharing is safe.
 */
import * as grpc from "@grpc/grpc-js";
import { PolicyPack, type PolicyPackArgs, type StackValidationPolicy } from "@pulumi/policy";
import { markWithoutUnknowns } from "./resources";
import { structToJavaScript, WireReader, type StructFlags } from "./wire";

/* eslint-disable @typescript-eslint/no-var-requires */
const analyzerRpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");
const { deserializeProperties } = require("@pulumi/policy/deserialize");
const { unknownCheckingProxy, UnknownValueError } = require("@pulumi/policy/proxy");
const { makeAnalyzeResponse, asGrpcError, convertEnforcementLevel } = require("@pulumi/policy/protoutil");
const { getPulumiType, isStackPolicy } = require("@pulumi/policy/policy");
/* eslint-enable @typescript-eslint/no-var-requires */

type Level = "advisory" | "mandatory" | "remediate" | "disabled";

/** One resource of an AnalyzeStack request: the generated message without its properties, and the properties as plain data. */
export interface DecodedResource {
    message: any;
    properties: Record<string, unknown>;
    flags: StructFlags;
}

/** Decodes an AnalyzeStackRequest (field 1: repeated AnalyzerResource) with the properties Structs decoded directly. */
export function decodeAnalyzeStackRequest(bytes: Uint8Array): { resources: DecodedResource[] } {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const r = new WireReader(buf);
    const resources: DecodedResource[] = [];
    while (r.pos < buf.length) {
        const tag = r.varint();
        if (tag !== ((1 << 3) | 2)) {
            r.skip(tag & 7);
            continue;
        }
        resources.push(decodeResource(r, r.delimitedEnd()));
    }
    return { resources };
}

function decodeResource(r: WireReader, end: number): DecodedResource {
    const msg = new analyzerProto.AnalyzerResource();
    let properties: Record<string, unknown> = {};
    const flags: StructFlags = { special: false, unknown: false };
    const str = (e: number) => {
        const s = r.buf.toString("utf8", r.pos, e);
        r.pos = e;
        return s;
    };
    const sub = (e: number) => {
        const b = r.buf.subarray(r.pos, e);
        r.pos = e;
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    };
    while (r.pos < end) {
        const tag = r.varint();
        const field = tag >>> 3;
        if ((tag & 7) !== 2) {
            r.skip(tag & 7);
            continue;
        }
        const e = r.delimitedEnd();
        switch (field) {
            case 1:
                msg.setType(str(e));
                break;
            case 2:
                properties = structToJavaScript(sub(e), flags);
                break;
            case 3:
                msg.setUrn(str(e));
                break;
            case 4:
                msg.setName(str(e));
                break;
            case 5:
                msg.setOptions(analyzerProto.AnalyzerResourceOptions.deserializeBinary(sub(e)));
                break;
            case 6:
                msg.setProvider(analyzerProto.AnalyzerProviderResource.deserializeBinary(sub(e)));
                break;
            case 7:
                msg.setParent(str(e));
                break;
            case 8:
                msg.addDependencies(str(e));
                break;
            case 9: {
                // map<string, AnalyzerPropertyDependencies> entry: key = 1, value = 2.
                let key = "";
                let value = new analyzerProto.AnalyzerPropertyDependencies();
                while (r.pos < e) {
                    const t = r.varint();
                    if (t === ((1 << 3) | 2)) key = str(r.delimitedEnd());
                    else if (t === ((2 << 3) | 2)) value = analyzerProto.AnalyzerPropertyDependencies.deserializeBinary(sub(r.delimitedEnd()));
                    else r.skip(t & 7);
                }
                msg.getPropertydependenciesMap().set(key, value);
                break;
            }
            default:
                r.pos = e;
        }
    }
    return { message: msg, properties, flags };
}

class NotApplicableError extends Error {
    constructor(readonly reason?: string) {
        super(reason ?? "Policy does not apply");
    }
}

interface PackState {
    name: string;
    version: string;
    enforcementLevel: Level;
    policies: StackValidationPolicy[];
    config: Record<string, Record<string, unknown> & { enforcementLevel?: Level }>;
    stackTags: ReadonlyMap<string, string>;
}

function resourceOptions(r: any) {
    const opts = r.getOptions();
    if (!opts) throw new Error("A more recent version of the Pulumi CLI is required. To upgrade, see https://www.pulumi.com/docs/get-started/install/");
    const t = opts.getCustomtimeouts();
    const result: Record<string, unknown> = {
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
function policyResources(decoded: DecodedResource[]) {
    const intermediates = decoded.map(({ message: r, properties, flags }) => {
        const type = r.getType();
        // deserializeProperties only changes objects with Pulumi's signature key (secrets, assets,
        // archives, resource references); plain JSON comes out as an equal copy.
        const deserialized = flags.special ? deserializeProperties({ toJavaScript: () => properties }, false) : properties;
        if (!flags.unknown) markWithoutUnknowns(deserialized);
        const props = unknownCheckingProxy(deserialized);
        const resource: any = {
            type,
            props,
            urn: r.getUrn(),
            name: r.getName(),
            opts: resourceOptions(r),
            dependencies: [],
            propertyDependencies: {},
            isType: (cls: any) => isTypeOf(type, cls),
            asType: (cls: any) => (isTypeOf(type, cls) ? props : undefined),
        };
        const prov = r.getProvider();
        if (prov) {
            resource.provider = {
                type: prov.getType(),
                props: unknownCheckingProxy(deserializeProperties(prov.getProperties(), false)),
                urn: prov.getUrn(),
                name: prov.getName(),
            };
        }
        const propertyDependencies: Record<string, string[]> = {};
        for (const [k, v] of r.getPropertydependenciesMap().entries()) propertyDependencies[k] = v.getUrnsList();
        return { resource, parent: r.getParent(), dependencies: r.getDependenciesList() as string[], propertyDependencies };
    });
    const byUrn = new Map(intermediates.map((i) => [i.resource.urn, i.resource]));
    for (const i of intermediates) {
        if (i.parent && byUrn.has(i.parent)) i.resource.parent = byUrn.get(i.parent);
        i.resource.dependencies = i.dependencies.map((d) => byUrn.get(d)).filter((d) => d);
        for (const [k, urns] of Object.entries(i.propertyDependencies)) i.resource.propertyDependencies[k] = urns.map((d) => byUrn.get(d)).filter((d) => d);
    }
    return intermediates.map((i) => i.resource);
}

function analyzeStack(state: PackState) {
    return async (call: { request: { resources: DecodedResource[] } }, callback: (err: unknown, res?: unknown) => void) => {
        const ds: any[] = [];
        let notApplicable: any[] | undefined;
        const pushNotApplicable = (policyName: string, reason?: string) => {
            const na = new analyzerProto.PolicyNotApplicable();
            na.setPolicyName(policyName);
            if (reason) na.setReason(reason);
            (notApplicable ??= []).push(na);
        };
        try {
            let resources: any[] | undefined;
            for (const p of state.policies) {
                let level: Level = state.config[p.name]?.enforcementLevel || (p.enforcementLevel as Level) || state.enforcementLevel;
                if (level === "disabled" || !isStackPolicy(p)) continue;
                if (level === "remediate") level = "mandatory";
                const pulumiType = getPulumiType(p.validateStack);
                if (pulumiType && !call.request.resources.some((r) => r.message.getType() === pulumiType)) {
                    pushNotApplicable(p.name, `Policy only applies to resources of type '${pulumiType}'`);
                    continue;
                }
                const report = (message: any, urn?: string) => {
                    const base = { policyPackName: state.name, policyPackVersion: state.version, description: p.description, severity: (p as any).severity };
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
                };
                try {
                    resources ??= policyResources(call.request.resources);
                    const args = {
                        resources,
                        getConfig: () => {
                            const { enforcementLevel: _level, ...properties } = state.config[p.name] ?? {};
                            return properties;
                        },
                        stackTags: state.stackTags,
                        notApplicable: (reason?: string) => {
                            throw new NotApplicableError(reason);
                        },
                    };
                    await Promise.resolve(p.validateStack(args as any, report as any));
                } catch (e) {
                    const from = `policy '${p.name}' from policy pack '${state.name}@v${state.version}'`;
                    if (e instanceof UnknownValueError) {
                        const { validateStack: _v, name, ...diag } = p as any;
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
 * `new PolicyPack(name, args)`, with the AnalyzeStack method replaced as described above. Only the
 * Analyzer service registration made by the constructor is affected.
 */
export function servePolicyPack(name: string, args: PolicyPackArgs & { enforcementLevel: Level }): PolicyPack {
    const state: PackState = {
        name,
        // The SDK reads the version the same way (policy.js).
        version: require(`${process.cwd()}/package.json`).version, // eslint-disable-line @typescript-eslint/no-var-requires
        enforcementLevel: args.enforcementLevel,
        policies: args.policies as StackValidationPolicy[],
        config: {},
        stackTags: new Map(),
    };
    const proto = grpc.Server.prototype as any;
    const addService = proto.addService;
    proto.addService = function (service: any, impl: any) {
        if (service !== analyzerRpc.AnalyzerService) return addService.call(this, service, impl);
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
        return new PolicyPack(name, args);
    } finally {
        proto.addService = addService;
    }
}
