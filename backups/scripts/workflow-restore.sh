#!/bin/sh
# workflow-restore.sh - import a workflow-backup.sh folder (spec 8.3 "Workflow tool": import).
#
#   The mode is taken from the backup folder (workflow-db.dump => database, workflows.json => cli).
#   Always first: SHA256SUMS checked (a folder without it is refused unless RESTORE_ALLOW_UNVERIFIED=true).
#   database: the dump's table of contents is read (pg_restore --list), a scratch database is created
#     empty (owner/encoding/locale of the original, template0), the dump is loaded into it in one
#     transaction and its tables are counted against the dump; only then it takes the name PGDATABASE
#     (an existing database, refused unless RESTORE_DROP_EXISTING=true, is renamed aside first and
#     dropped after the swap). A bad dump leaves the live database untouched. Scale the workflow tool
#     (main and workers) to 0 first; start it afterwards. Needs a role allowed to create/drop databases.
#   cli: $WF_CLI import:credentials --input=credentials.json (when present), then
#     $WF_CLI import:workflow --input=workflows.json; restart the workflow tool afterwards.
#     The credentials only decrypt with the same encryption key as the exporting instance.
#
# Environment:
#   BACKUP_DIR RESTORE_FROM (folder name in BACKUP_DIR, "latest" or an absolute path; default newest)
#   RESTORE_DROP_EXISTING ("true" to replace an existing database; database mode)
#   RESTORE_ALLOW_UNVERIFIED ("true" to restore a folder that has no SHA256SUMS)
#   database mode: PGHOST PGPORT PGUSER PGPASSWORD(secret) PGDATABASE PGSSLMODE
#   cli mode: WF_CLI (default n8n)
set -eu
umask 077
SCRIPT=workflow-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR
bool_settings RESTORE_DROP_EXISTING RESTORE_ALLOW_UNVERIFIED
chosen_backup ""
verify_sums "$src"

if [ -f "$src/workflow-db.dump" ]; then
  require PGHOST PGDATABASE
  db="$PGDATABASE"
  TARGET="${PGHOST}:${PGPORT:-5432}"
  export PGDATABASE=postgres
  IFS="$TAB" read -r _orig owner enc coll ctype < "$src/database.tsv"
  log "database mode: restoring $src/workflow-db.dump into '$db' at $TARGET"
  connect_check psql -X -A -t -v ON_ERROR_STOP=1 -c 'SELECT 1' || pg_fail "connection check" "$out"
  # One backup or restore of this server at a time (refuses, naming the holder, before anything changes).
  pg_lock exclusive
  pg_restore_verified "$db" "$owner" "$enc" "$coll" "$ctype" "$src/workflow-db.dump"
  log "database '$db' restored; start the workflow tool now"
elif [ -f "$src/workflows.json" ]; then
  WF_CLI="${WF_CLI:-n8n}"
  command -v "$WF_CLI" > /dev/null 2>&1 || die "workflow CLI '$WF_CLI' not found (WF_CLI); cli restores must run in the workflow tool's image"
  if [ -f "$src/credentials.json" ]; then
    log "cli mode: importing credentials"
    out=$("$WF_CLI" import:credentials --input="$src/credentials.json" 2>&1) || die "credentials import ($WF_CLI import:credentials) failed: $(oneline "$out" | tail -c 500)"
  fi
  log "cli mode: importing workflows"
  out=$("$WF_CLI" import:workflow --input="$src/workflows.json" 2>&1) || die "workflow import ($WF_CLI import:workflow) failed: $(oneline "$out" | tail -c 500)"
  log "import complete; restart the workflow tool so it picks up the imported workflows"
else
  die "$src is not a workflow-backup.sh folder (neither workflow-db.dump nor workflows.json)"
fi
