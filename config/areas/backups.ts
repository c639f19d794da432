import {
    cpu, cron, image, int, list, memory, mountPath, optional, seconds, storage, timeZone, storageClassName, sshRepository,
} from "../schema";

const jobRun = {
    backoffLimit: int("backoffLimit of every backup/restore Job (retries before the Job fails)", 1, { min: 0, max: 10 }),
    connectWait: seconds("how long a backup/restore Job's first connection to its server is tried again while refused or timed out (CONNECT_WAIT_SECONDS): a network policy engine may admit a new pod only at its next sync (kube-router does)", 60, 3600),
    activeDeadline: seconds("activeDeadlineSeconds of every backup/restore Job: a hung run is killed after this", 3600, 86400),
    startingDeadline: seconds("startingDeadlineSeconds of every backup CronJob: a run missed by more than this is skipped", 3600, 86400),
    successfulJobsHistoryLimit: int("successfulJobsHistoryLimit of every backup CronJob", 3, { min: 0, max: 100 }),
    failedJobsHistoryLimit: int("failedJobsHistoryLimit of every backup CronJob", 3, { min: 0, max: 100 }),
    requests: { cpu: cpu("backup job cpu request", "100m"), memory: memory("backup job memory request", "128Mi") },
    limits: { cpu: cpu("backup job cpu limit", "500m"), memory: memory("backup job memory limit", "512Mi") },
    tmpSize: storage("size limit of the /tmp emptyDir of backup jobs (the root file system is read-only)", "1Gi"),
};

/**
 * Backups (section 8.3): schedules, retention, the defaults of every backup/restore Job and the
 * images of the client tools the scripts run in. The jobs themselves live next to the data they
 * save (components/lib/backupCronJob.ts), in the owning component's namespace.
 */
export const backups = {
    retentionDays: int("backup folders older than this many days are deleted after a successful run (section 8.3: 7; 0 keeps everything)", 7, { min: 0, max: 3650 }),
    timeZone: timeZone("time zone of every backup schedule (CronJob spec.timeZone, an IANA name)", "Etc/UTC"),
    mountPath: mountPath("where the backup volume is mounted in backup and restore jobs (BACKUP_DIR)", "/backup"),
    storageClass: optional(storageClassName("storage class of the backup volumes (the cluster default when unset)")),
    job: jobRun,
    postgresClientImage: image("image with psql, pg_dump, pg_dumpall, pg_restore (same major as the server, 15)", "docker.io/library/postgres:15.10"),
    redisClientImage: image("image with redis-cli and redis-check-rdb (Redis 7)", "docker.io/library/redis:7.2.6"),
    mcImage: image("the object store client (MinIO mc) image", "docker.io/minio/mc:RELEASE.2024-11-21T17-21-54Z"),
    sqliteImage: image("image with sqlite3 (online .backup of SQLite files)", "docker.io/keinos/sqlite3:3.47.0"),
    gitImage: image("image with git (configuration in git, repository mirrors)", "docker.io/alpine/git:2.45.2"),
    gitRunAsUser: int("UID the git image's jobs run as; it must have an /etc/passwd entry in that image, because OpenSSH exits \"No user exists for uid\" without one (alpine/git: 65534 = nobody, from alpine-baselayout)", 65534, { min: 1, max: 2147483647 }),
    curlImage: image("image with curl (HTTP APIs such as the search engine's snapshot API)", "docker.io/curlimages/curl:8.11.0"),
    postgres: {
        schedule: cron("PostgreSQL full-cluster + per-database dump (section 8.3: daily at 03:00)", "0 3 * * *"),
        volumeSize: storage("size of the PostgreSQL backup volume", "20Gi"),
    },
    redis: {
        schedule: cron("Redis RDB save + copy (section 8.3 says on demand; scheduled daily here so a copy always exists)", "30 3 * * *"),
        volumeSize: storage("size of the Redis backup volume", "5Gi"),
    },
    objectStore: {
        schedule: cron("object store mirror of each bucket into a dated folder (section 8.3: daily at 04:00)", "0 4 * * *"),
        volumeSize: storage("size of the object store backup volume", "50Gi"),
    },
    gitMirror: {
        schedule: cron("mirror clones of the source repositories (section 8.3: source repositories, mirror clones)", "0 5 * * *"),
        volumeSize: storage("size of the source repository mirror volume", "10Gi"),
        repositories: list("repository URLs to mirror besides the GitOps repository (read with the GitOps deploy key over SSH)", [], sshRepository("an SSH git repository URL")),
    },
    workflow: {
        schedule: cron("export of the workflow tool's workflows and credentials (section 8.3 says manual; scheduled daily here)", "0 2 * * *"),
        volumeSize: storage("size of the workflow export volume", "5Gi"),
    },
};
