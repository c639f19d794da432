/**
 * YAML that means the same to YAML 1.1 readers (kubectl, Argo CD, helm: go-yaml v2 / sigs.k8s.io/yaml)
 * and YAML 1.2 readers. A string that a plain scalar of either version would resolve to something
 * else (off, y, No, 0755, 1:20, 0b11, 1_000, 0o17, ~, <<, =, .inf …) is written double-quoted,
 * in values and in keys. Every YAML file or YAML text the program writes goes through portableYaml.
 */
import * as YAML from "yaml";

/** The plain-scalar tests of the YAML 1.1 and 1.2 core schemas: a match resolves to a non-string. */
const NON_STRING_TESTS: RegExp[] = (["1.1", "1.2"] as const).flatMap((version) =>
    (new YAML.Document(null, { version }).schema.tags as Array<{ default?: boolean; test?: RegExp }>)
        .filter((t) => t.default && t.test instanceof RegExp)
        .map((t) => t.test as RegExp),
);

/** YAML 1.1's value key "=" is a type of its own in some readers. */
const EXTRA = /^=$/;

/** True when a plain scalar `s` would be read as anything but the string s by a YAML 1.1 or 1.2 reader. */
export function isYamlAmbiguous(s: string): boolean {
    return EXTRA.test(s) || NON_STRING_TESTS.some((re) => re.test(s));
}

/** YAML text of `value` (key order kept) with every YAML-1.1-or-1.2-ambiguous string scalar double-quoted. */
export function portableYaml(value: unknown): string {
    const doc = new YAML.Document(value, { aliasDuplicateObjects: false });
    YAML.visit(doc, {
        Scalar(_key, node) {
            if (typeof node.value === "string" && isYamlAmbiguous(node.value)) node.type = YAML.Scalar.QUOTE_DOUBLE;
        },
    });
    return doc.toString({ lineWidth: 0 });
}
