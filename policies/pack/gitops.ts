/**
 * GitOps applications under review: the Applications the stack creates (the parents) and the
 * child Applications the parents read from the repository (files under a parent's source path,
 * e.g. gitops/). Children live only in the repository, owned by exactly one parent (section 2.7).
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import type { PolicyConfigJSONSchema } from "@pulumi/policy/schema";
import type { K8sObject } from "../gatekeeper/types";
import { resolveInPack } from "./paths";
import type { StackView } from "./stack";

export interface GitopsConfig {
    /** The repository checkout the parents' source paths are relative to (relative to the pack directory). */
    repositoryRoot: string;
}

export const gitopsSchema: Record<string, PolicyConfigJSONSchema> = {
    repositoryRoot: { type: "string", default: "..", description: "the repository root that parent Applications' source paths are relative to, relative to the policy pack directory" },
};

export interface ReviewedApplication {
    object: K8sObject;
    /** The stack resource (parents and any Application the stack creates). */
    urn?: string;
    /** The repository file a child Application is declared in. */
    file?: string;
    /** URNs of the parents whose source path holds the file. */
    parents?: string[];
}

export const isApplication = (o: K8sObject) => o.kind === "Application" && (o.apiVersion ?? "").startsWith("argoproj.io/");

export function sourcesOf(app: K8sObject): any[] {
    const spec = app.spec ?? {};
    return [spec.source, ...(Array.isArray(spec.sources) ? spec.sources : [])].filter((s) => s && typeof s === "object");
}

/** A parent reads a directory of manifests from git: a source with a path and no chart. */
export const isParent = (app: K8sObject) => sourcesOf(app).some((s) => typeof s.path === "string" && !s.chart);

export const appName = (app: K8sObject) => `Application ${app.metadata?.namespace ? app.metadata.namespace + "/" : ""}${app.metadata?.name ?? "(unnamed)"}`;

/** Argo CD's directory include/exclude globs (*, ?, {a,b}) as a test on a file name. */
function globTest(glob: string | undefined): ((name: string) => boolean) | undefined {
    if (!glob) return undefined;
    const source = glob.replace(/[.+^$()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]").replace(/\{([^}]*)\}/g, (_, alts: string) => `(?:${alts.split(",").join("|")})`);
    const re = new RegExp(`^${source}$`);
    return (name) => re.test(name);
}

function manifestFiles(dir: string, recurse: boolean): string[] {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return [];
    const out: string[] = [];
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            if (recurse) out.push(...manifestFiles(full, recurse));
        } else if (/\.(ya?ml|json)$/.test(entry.name)) {
            out.push(full);
        }
    }
    return out;
}

function applicationsIn(file: string): K8sObject[] {
    const docs = parseAllDocuments(fs.readFileSync(file, "utf8"));
    return (Array.isArray(docs) ? docs : [])
        .map((d) => d.toJS() as K8sObject)
        .flatMap((o) => (o?.kind === "List" && Array.isArray(o.items) ? o.items : [o]))
        .filter((o): o is K8sObject => !!o && typeof o === "object" && isApplication(o));
}

export interface ReviewedApplications {
    stack: ReviewedApplication[];
    children: ReviewedApplication[];
}

// Per stack view and repository root: the rules of one evaluation share one read of the repository.
const reviewed = new WeakMap<StackView, Map<string, ReviewedApplications>>();

/** The stack's Applications and the children its parents read from the repository. */
export function reviewedApplications(stack: StackView, config: GitopsConfig): ReviewedApplications {
    const byRoot = reviewed.get(stack) ?? new Map<string, ReviewedApplications>();
    reviewed.set(stack, byRoot);
    const root = resolveInPack(config.repositoryRoot);
    let apps = byRoot.get(root);
    if (!apps) byRoot.set(root, (apps = readApplications(stack, root)));
    return apps;
}

function readApplications(stack: StackView, root: string): ReviewedApplications {
    const inStack = stack.objects.filter((o) => isApplication(o.object)).map((o) => ({ object: o.object, urn: o.urn }));
    const byFile = new Map<string, { objects: K8sObject[]; parents: string[] }>();
    for (const parent of inStack.filter((a) => isParent(a.object))) {
        for (const source of sourcesOf(parent.object).filter((s) => typeof s.path === "string" && !s.chart)) {
            const include = globTest(source.directory?.include);
            const exclude = globTest(source.directory?.exclude);
            const dir = path.resolve(root, source.path);
            const files = manifestFiles(dir, source.directory?.recurse === true).filter((f) => {
                const name = path.relative(dir, f);
                return (!include || include(name)) && !(exclude && exclude(name));
            });
            for (const file of files) {
                const entry = byFile.get(file) ?? { objects: applicationsIn(file), parents: [] };
                entry.parents.push(parent.urn);
                byFile.set(file, entry);
            }
        }
    }
    const children = [...byFile].flatMap(([file, e]) => e.objects.map((object) => ({ object, file: path.relative(root, file), parents: e.parents })));
    return { stack: inStack, children };
}

/** Where to report an Application: its resource, or (children) the parent that reads its file. */
export function reportTarget(app: ReviewedApplication): { urn?: string; where: string } {
    return app.urn ? { urn: app.urn, where: appName(app.object) } : { urn: app.parents?.[0], where: `${appName(app.object)} (${app.file})` };
}
