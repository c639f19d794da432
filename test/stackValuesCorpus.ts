/**
 * The stack-value corpus and type cases shared by test/stackValues.test.ts (the render against the
 * corpus) and test/stackValues.integration.ts (the corpus against the pulumi CLI itself).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { declaredKeys, providerNamespaces } from "../cli/harness/stackConfig";

export const ROOT = path.resolve(__dirname, "..");

export interface Case {
    yaml: string;
    cli?: string;
    object?: boolean;
    cliRefuses?: string;
    renderRefuses?: string;
}

export const CASES: Case[] = YAML.parse(fs.readFileSync(path.join(__dirname, "fixtures", "stack-values", "corpus.yaml"), "utf8")).cases;

/** A stack file line `<key>: <value>` (a value spanning lines keeps its indentation under `config:`). */
export const line = (key: string, value: string) => `  ${key}: ${value}\n`;

export const DECLARED = declaredKeys("ops");
export const NAMESPACES = providerNamespaces(ROOT);

/** Values against the type Pulumi.yaml declares: does `pulumi preview` take them (its check runs before the program)? */
export const TYPE_CASES: Array<{ type: "integer" | "boolean" | "string" | "array"; items?: "integer" | "string"; yaml: string; accepted: boolean }> = [
    { type: "integer", yaml: "2.5", accepted: false },
    { type: "integer", yaml: "0x10", accepted: true },
    { type: "integer", yaml: "'12'", accepted: true },
    { type: "integer", yaml: "'0x10'", accepted: false },
    { type: "integer", yaml: "+5", accepted: true },
    { type: "integer", yaml: "[1]", accepted: false },
    { type: "boolean", yaml: "yes", accepted: false },
    { type: "boolean", yaml: "True", accepted: true },
    { type: "boolean", yaml: "'True'", accepted: false },
    { type: "string", yaml: "12", accepted: true },
    { type: "string", yaml: "[a]", accepted: false },
    { type: "array", items: "integer", yaml: "'[4000]'", accepted: false },
    { type: "array", items: "integer", yaml: "['4000']", accepted: true },
    { type: "array", items: "integer", yaml: "[4000, 2.0]", accepted: true },
    { type: "array", items: "integer", yaml: "[2.5]", accepted: false },
    { type: "array", items: "string", yaml: "[1]", accepted: false },
    { type: "array", items: "string", yaml: "a", accepted: false },
];
export const typeKey = (i: number) => `t${i}`;
export const typeDeclarations = () => new Map(TYPE_CASES.map((c, i) => [`ops:${typeKey(i)}`, { type: c.type, items: c.items, secret: false }]));
