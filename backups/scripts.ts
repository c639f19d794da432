/**
 * Catalogue of the backup and restore scripts of section 8.3 (issue 5).
 *
 * The scripts in backups/scripts/*.sh are the single source: the CronJobs run exactly these files
 * (mounted from a ConfigMap, started with `sh /scripts/<file>`), and test/backups/*.test.ts run the
 * same files against real servers. Every setting comes from the environment; the names each script
 * reads are listed here (names only; meanings in docs/backups.md and in each script's header).
 * `secrets` is the subset that must come from a Secret (secretKeyRef), never a literal.
 *
 * Image kinds (the client tool the script needs in its container):
 *   postgres  psql, pg_dump, pg_dumpall, pg_restore (same major version as the server)
 *   redis     redis-cli (redis-check-rdb used when present)
 *   sqlite    sqlite3 >= 3.27 (VACUUM INTO)
 *   mc        the MinIO client
 *   git       git
 *   curl      curl
 *   workflow  the workflow tool's own image (its CLI), for WF_BACKUP_MODE=cli
 * Every image also needs a POSIX sh and coreutils (date, tr, sha256sum, du, sync). The mc image (ubi-micro)
 * has no sed, awk, grep or find, so the object-store scripts and the shared prelude use none of them.
 *
 * Shared prelude: backups/scripts/lib/prelude.sh holds the helpers every script uses (log, die, require,
 * retention, checksum verification, ...). Each script has exactly one "# @prelude" line; `content` is
 * the script with the prelude joined in at that line, which is what the ConfigMap mounts and the tests run.
 */
import * as fs from "fs";
import * as path from "path";

export type ImageKind = "postgres" | "redis" | "sqlite" | "mc" | "git" | "curl" | "workflow";

/** Which row of table 8.3 a script serves. */
export type BackupService =
    | "relational-database"
    | "in-memory-cache"
    | "object-store"
    | "workflow-tool"
    | "sqlite-file" // uptime monitor, chat UI, booking application
    | "search-engine"
    | "source-repositories";

export interface BackupScript {
    /** File name under backups/scripts/ (also what the CronJob annotates as ops/script). */
    readonly name: string;
    /** The script text, read from disk when this module loads. */
    readonly content: string;
    readonly kind: "backup" | "restore";
    readonly service: BackupService;
    /** Container image kind the script expects (for mode-dependent scripts: the default mode's). */
    readonly image: ImageKind;
    /** For scripts whose image depends on a mode variable (workflow tool). */
    readonly imageByMode?: { readonly variable: string; readonly images: Readonly<Record<string, ImageKind>> };
    /** Every environment variable the script reads (names only). */
    readonly env: readonly string[];
    /** The subset of `env` that is a credential: fill from a Secret. */
    readonly secrets: readonly string[];
}

const DIR = path.join(__dirname, "scripts");

/** The shared helpers joined into every script (backups/scripts/lib/prelude.sh). */
export const PRELUDE_FILE = path.join(DIR, "lib", "prelude.sh");
/**
 * The marker line: `# @prelude ...`, or the line that reads the prelude when the file is run by hand from the
 * repository (`sh backups/scripts/<x>.sh`, as docs/backups.md shows): `. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude ...`.
 * Either way the whole line is replaced by the prelude's text, so the mounted script sources nothing.
 */
const PRELUDE_MARKER = /^(?:\. "\$\(dirname -- "\$0"\)\/lib\/prelude\.sh" +)?# @prelude\b.*$/m;

/** A script's text with the prelude joined in at its one "@prelude" marker line (throws without exactly one). */
export function joinPrelude(name: string, script: string, prelude: string): string {
    const marks = script.split("\n").filter((l) => PRELUDE_MARKER.test(l)).length;
    if (marks !== 1) throw new Error(`backups/scripts/${name}: expected exactly one "# @prelude" line (where the shared prelude is joined in), found ${marks}`);
    const body = prelude.endsWith("\n") ? prelude : prelude + "\n";
    return script.replace(PRELUDE_MARKER, () => `# ---- begin backups/scripts/lib/prelude.sh ----\n${body}# ---- end backups/scripts/lib/prelude.sh ----`);
}

function read(name: string): string {
    return joinPrelude(name, fs.readFileSync(path.join(DIR, name), "utf8"), fs.readFileSync(PRELUDE_FILE, "utf8"));
}

const PG_CONN = ["PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGSSLMODE", "CONNECT_WAIT_SECONDS"] as const;
const OBJ_CONN = ["OBJECTSTORE_URL", "OBJECTSTORE_ACCESS_KEY", "OBJECTSTORE_SECRET_KEY", "OBJECTSTORE_INSECURE"] as const;
const SEARCH_CONN = ["SEARCH_URL", "SNAPSHOT_REPOSITORY", "SEARCH_USERNAME", "SEARCH_PASSWORD", "SEARCH_CA_CERT", "SEARCH_TIMEOUT"] as const;
const GIT_AUTH = ["GIT_USERNAME", "GIT_PASSWORD", "GIT_SSH_COMMAND"] as const;

type Def = Omit<BackupScript, "content">;

const DEFS: readonly Def[] = [
    {
        name: "postgres-backup.sh", kind: "backup", service: "relational-database", image: "postgres",
        env: ["BACKUP_DIR", "RETENTION_DAYS", ...PG_CONN, "PGDATABASE", "TMPDIR"], secrets: ["PGPASSWORD"],
    },
    {
        name: "postgres-restore.sh", kind: "restore", service: "relational-database", image: "postgres",
        env: ["BACKUP_DIR", "RESTORE_FROM", "RESTORE_DATABASE", "RESTORE_DROP_EXISTING", "RESTORE_ROLE_PASSWORDS", "RESTORE_ALLOW_UNVERIFIED", ...PG_CONN, "TMPDIR"], secrets: ["PGPASSWORD"],
    },
    {
        name: "redis-backup.sh", kind: "backup", service: "in-memory-cache", image: "redis",
        env: ["BACKUP_DIR", "RETENTION_DAYS", "REDIS_HOST", "REDIS_PORT", "REDIS_USERNAME", "REDISCLI_AUTH", "REDIS_PERSISTENCE_MODE", "REDIS_SAVE_TIMEOUT", "CONNECT_WAIT_SECONDS"],
        secrets: ["REDISCLI_AUTH"],
    },
    {
        name: "redis-restore.sh", kind: "restore", service: "in-memory-cache", image: "redis",
        env: ["BACKUP_DIR", "RESTORE_FROM", "RESTORE_ALLOW_UNVERIFIED", "REDIS_DATA_DIR", "REDIS_RDB_FILENAME", "REDIS_PERSISTENCE_MODE", "REDIS_AOF_DIRNAME", "REDIS_AOF_FILENAME", "REDIS_SERVER_LOCK", "REDIS_HOST", "REDIS_PORT"],
        secrets: [],
    },
    {
        name: "sqlite-backup.sh", kind: "backup", service: "sqlite-file", image: "sqlite",
        env: ["BACKUP_DIR", "RETENTION_DAYS", "SQLITE_DB", "UPLOADS_DIR", "SQLITE_BUSY_TIMEOUT_MS"], secrets: [],
    },
    {
        name: "sqlite-restore.sh", kind: "restore", service: "sqlite-file", image: "sqlite",
        env: ["BACKUP_DIR", "RESTORE_FROM", "RESTORE_ALLOW_UNVERIFIED", "SQLITE_DB", "UPLOADS_DIR"], secrets: [],
    },
    {
        name: "objectstore-backup.sh", kind: "backup", service: "object-store", image: "mc",
        env: ["BACKUP_DIR", "RETENTION_DAYS", ...OBJ_CONN, "OBJECTSTORE_BUCKETS", "TMPDIR"], secrets: ["OBJECTSTORE_ACCESS_KEY", "OBJECTSTORE_SECRET_KEY"],
    },
    {
        name: "objectstore-restore.sh", kind: "restore", service: "object-store", image: "mc",
        env: ["BACKUP_DIR", "RESTORE_FROM", "RESTORE_BUCKETS", "RESTORE_REMOVE_EXTRA", "RESTORE_ALLOW_UNVERIFIED", ...OBJ_CONN, "TMPDIR"], secrets: ["OBJECTSTORE_ACCESS_KEY", "OBJECTSTORE_SECRET_KEY"],
    },
    {
        name: "workflow-backup.sh", kind: "backup", service: "workflow-tool", image: "postgres",
        imageByMode: { variable: "WF_BACKUP_MODE", images: { database: "postgres", cli: "workflow" } },
        env: ["BACKUP_DIR", "RETENTION_DAYS", "WF_BACKUP_MODE", ...PG_CONN, "PGDATABASE", "WF_CLI", "WF_EXPORT_CREDENTIALS", "TMPDIR"], secrets: ["PGPASSWORD"],
    },
    {
        name: "workflow-restore.sh", kind: "restore", service: "workflow-tool", image: "postgres",
        imageByMode: { variable: "WF_BACKUP_MODE", images: { database: "postgres", cli: "workflow" } },
        env: ["BACKUP_DIR", "RESTORE_FROM", "RESTORE_DROP_EXISTING", "RESTORE_ALLOW_UNVERIFIED", ...PG_CONN, "PGDATABASE", "WF_CLI", "TMPDIR"], secrets: ["PGPASSWORD"],
    },
    {
        name: "search-snapshot.sh", kind: "backup", service: "search-engine", image: "curl",
        env: [...SEARCH_CONN, "SNAPSHOT_NAME", "SNAPSHOT_INDICES", "TMPDIR"], secrets: ["SEARCH_PASSWORD"],
    },
    {
        name: "search-restore.sh", kind: "restore", service: "search-engine", image: "curl",
        env: [...SEARCH_CONN, "SNAPSHOT_NAME", "RESTORE_INDICES", "TMPDIR"], secrets: ["SEARCH_PASSWORD"],
    },
    {
        name: "git-mirror.sh", kind: "backup", service: "source-repositories", image: "git",
        env: ["BACKUP_DIR", "RETENTION_DAYS", "REPOSITORIES", ...GIT_AUTH, "GIT_MIRROR_PRUNE"], secrets: ["GIT_PASSWORD"],
    },
    {
        name: "git-restore.sh", kind: "restore", service: "source-repositories", image: "git",
        env: ["BACKUP_DIR", "RESTORE_REPOSITORY", "RESTORE_FROM", "RESTORE_ALLOW_UNVERIFIED", "RESTORE_TARGET", "RESTORE_PUSH_URL", "RESTORE_PUSH_PRUNE", "RESTORE_PUSH_FORCE", ...GIT_AUTH, "TMPDIR"], secrets: ["GIT_PASSWORD"],
    },
];

/** All scripts, in the order of table 8.3. */
export const BACKUP_SCRIPTS: readonly BackupScript[] = DEFS.map((d) => Object.freeze({ ...d, content: read(d.name) }));

/** One script by file name; throws for an unknown name. */
export function backupScript(name: string): BackupScript {
    const s = BACKUP_SCRIPTS.find((x) => x.name === name);
    if (!s) throw new Error(`unknown backup script ${name}; known: ${BACKUP_SCRIPTS.map((x) => x.name).join(", ")}`);
    return s;
}

/** The image kind a script needs for a given mode value (workflow scripts), else its default. */
export function imageFor(script: BackupScript, mode?: string): ImageKind {
    return (mode !== undefined && script.imageByMode?.images[mode]) || script.image;
}
