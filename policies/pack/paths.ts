import * as path from "path";

/** The pack's directory (policies/): relative paths in the pack config are relative to it. */
export const PACK_DIR = path.resolve(__dirname, "..");

export const resolveInPack = (p: string) => path.resolve(PACK_DIR, p);
