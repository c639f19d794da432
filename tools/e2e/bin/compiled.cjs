// Loads TypeScript through compiled JavaScript cached by content: `node --require compiled.cjs x.ts`.
// Each .ts file is transpiled once (typescript's transpileModule, the repository's compiler
// options) into ${OPS_JS_CACHE:-~/.cache/ops-e2e/js}/<sha256 of compiler version, options, path
// and source>.js; later starts read that file, so a process starts without compiling anything.
// Files keep their real paths (__dirname, node_modules resolution are the source's). Plain CommonJS
// because it runs before any TypeScript can. Used by the e2e's plugins (tools/e2e/bin/*).
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const Module = require("node:module");

const repo = path.resolve(__dirname, "../../..");
const cacheDir = process.env.OPS_JS_CACHE || path.join(os.homedir(), ".cache", "ops-e2e", "js");
const tsPackage = path.join(repo, "node_modules", "typescript", "package.json");
const tsVersion = JSON.parse(fs.readFileSync(tsPackage, "utf8")).version;
const tsconfig = fs.readFileSync(path.join(repo, "tsconfig.json"), "utf8");
let ts; // loaded only on a cache miss

function compile(source, filename) {
    const key = crypto.createHash("sha256").update(tsVersion).update("\0").update(tsconfig).update("\0").update(filename).update("\0").update(source).digest("hex");
    const cached = path.join(cacheDir, `${key}.js`);
    try {
        return fs.readFileSync(cached, "utf8");
    } catch {
        ts = ts || require(path.join(repo, "node_modules", "typescript"));
        const options = ts.convertCompilerOptionsFromJson(JSON.parse(tsconfig).compilerOptions, repo).options;
        const out = ts.transpileModule(source, { fileName: filename, compilerOptions: { ...options, sourceMap: false, inlineSourceMap: false } }).outputText;
        fs.mkdirSync(cacheDir, { recursive: true });
        const tmp = `${cached}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, out);
        fs.renameSync(tmp, cached);
        return out;
    }
}

// @pulumi/pulumi loads, when it is required, two large modules used only to serialize closures
// (dynamic providers, callbacks): typescript (through its typescript-shim) and @npmcli/arborist. A
// policy pack and a provider plugin never serialize closures; each module is loaded on first use.
const lazy = {
    typescript: (load) => new Proxy({}, { get: (_t, k) => load()[k] }),
    // __esModule: its __importStar helper then keeps the object instead of copying (and reading) each export.
    "@npmcli/arborist": (load) => Object.defineProperties({}, { __esModule: { value: true }, Arborist: { enumerable: true, get: () => load().Arborist } }),
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
    const fromPulumi = parent && parent.filename && parent.filename.includes(`${path.sep}@pulumi${path.sep}pulumi${path.sep}`);
    if (fromPulumi && Object.prototype.hasOwnProperty.call(lazy, request)) {
        let real;
        return lazy[request](() => (real = real || load.call(this, request, parent, isMain)));
    }
    return load.apply(this, arguments);
};

Module._extensions[".ts"] = function (module, filename) {
    module._compile(compile(fs.readFileSync(filename, "utf8"), filename), filename);
};
