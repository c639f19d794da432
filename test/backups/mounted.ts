/** The text a CronJob mounts for a backup script: the file with the shared prelude file joined in at its "# @prelude" line. */
import * as fs from "node:fs";
import * as path from "node:path";
import { joinPrelude, PRELUDE_FILE } from "../../backups/scripts";

export function mountedScript(name: string): string {
    const dir = path.resolve(__dirname, "..", "..", "backups", "scripts");
    return joinPrelude(name, fs.readFileSync(path.join(dir, name), "utf8"), fs.readFileSync(PRELUDE_FILE, "utf8"));
}
