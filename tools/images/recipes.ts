/**
 * Where each image the program runs comes from (docs/images.md): published images are pinned by
 * the stack configuration; the agent server's and the model bridge's are built from recipes in
 * this repository; the booking application is the user's own and its image must meet the contract
 * in images/booking/contract.json. test/imageRecipes.test.ts holds the render to these files.
 */
import * as fs from "fs";
import * as path from "path";

export const ROOT = path.resolve(__dirname, "..", "..");

export interface Recipe {
    /** The configuration key of the image. */
    key: string;
    containerfile: string;
    /** The build context (the folder given to `podman build`). */
    context: string;
    /** The container that runs the image. */
    workload: { name: string; namespace: string; container: string };
}

export const RECIPES: Recipe[] = [
    { key: "agentServerImage", containerfile: "images/agent-server/Containerfile", context: "images/agent-server", workload: { name: "agent-server-4000", namespace: "agent", container: "server" } },
    { key: "bridgeImage", containerfile: "bridge/Containerfile", context: "bridge", workload: { name: "model-bridge", namespace: "agent", container: "bridge" } },
];

export interface Contract {
    key: string;
    file: string;
    workload: { name: string; namespace: string; container: string };
}

export const CONTRACTS: Contract[] = [
    { key: "bookingImage", file: "images/booking/contract.json", workload: { name: "booking", namespace: "booking", container: "booking" } },
];

/** The placeholder registry of the images built here (the user pushes to their own). */
export const PLACEHOLDER_REGISTRY = "registry.example.com/";

export interface ImageStart {
    entrypoint?: string[];
    cmd?: string[];
    user?: string;
    /** Build arguments with their defaults (ARG NAME=value). */
    args: Record<string, string>;
}

/** ENTRYPOINT, CMD and USER of a Containerfile's last stage (exec form only; a shell form is an error). */
export function containerfileStart(file: string): ImageStart {
    const text = fs.readFileSync(path.join(ROOT, file), "utf8").replace(/\\\n/g, " ");
    const lines = text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
    const out: ImageStart = { args: {} };
    for (const line of lines) {
        const [, instr, rest] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
        switch (instr?.toUpperCase()) {
            case "FROM":
                out.entrypoint = undefined;
                out.cmd = undefined;
                out.user = undefined;
                break;
            case "ARG": {
                const m = /^(\w+)(?:=(.*))?$/.exec(rest);
                if (m && m[2] !== undefined) out.args[m[1]] = m[2];
                break;
            }
            case "ENTRYPOINT":
            case "CMD": {
                let v: unknown;
                try {
                    v = JSON.parse(rest);
                } catch {
                    throw new Error(`${file}: ${instr} ${rest}: expected the exec form (a JSON array)`);
                }
                if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw new Error(`${file}: ${instr} ${rest}: expected a JSON array of strings`);
                if (instr.toUpperCase() === "ENTRYPOINT") out.entrypoint = v;
                else out.cmd = v;
                break;
            }
            case "USER":
                out.user = rest;
                break;
        }
    }
    return out;
}

/** What a container runs: its command (else the image's ENTRYPOINT) and its args (else, without a command, the image's CMD). */
export function effectiveStart(container: { command?: string[]; args?: string[] }, image: ImageStart): string[] {
    if (container.command) return [...container.command, ...(container.args ?? [])];
    return [...(image.entrypoint ?? []), ...(container.args ?? image.cmd ?? [])];
}

/**
 * The base images the recipes build from (their `ARG <NAME>_IMAGE=<reference>` defaults): not run
 * by any stack, but pinned the same way, by the digest `npm run images:lock` records for them
 * (docs/images.md: build with --build-arg <NAME>_IMAGE=<reference>@<digest>).
 */
export function recipeBaseImages(): string[] {
    const refs = RECIPES.flatMap((r) => Object.entries(containerfileStart(r.containerfile).args).filter(([name]) => name.endsWith("_IMAGE")).map(([, ref]) => ref));
    return [...new Set(refs)].sort();
}
