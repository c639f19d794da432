#!/bin/sh
# workflow-backup.sh - spec 8.3 "Workflow tool": workflows and credentials, two modes.
#
#   WF_BACKUP_MODE=database (default): pg_dump -Fc of the workflow tool's PostgreSQL database
#     (everything: workflows, credentials, users, settings, execution history). Runs in a postgres
#     client image. Credentials stay encrypted with the tool's encryption key: keep that secret too.
#   WF_BACKUP_MODE=cli: the tool's own export commands, run in the tool's image with its database
#     environment and encryption key:
#       $WF_CLI export:workflow --all --output=<dir>/workflows.json
#       $WF_CLI export:credentials --all --output=<dir>/credentials.json   (encrypted; never --decrypted)
#
# Layout: $BACKUP_DIR/<YYYY-MM-DDTHHMMSSZ>/
#   database mode: workflow-db.dump + database.tsv (name, owner, encoding, collate, ctype) + SHA256SUMS
#   cli mode:      workflows.json [+ credentials.json] + SHA256SUMS
# Partial folder renamed only on success; retention after success only.
#
# Environment:
#   BACKUP_DIR RETENTION_DAYS   backup volume, retention in days (0 = keep everything)
#   WF_BACKUP_MODE              database (default) or cli
#   database mode: PGHOST PGPORT PGUSER PGPASSWORD(secret) PGDATABASE(the tool's database) PGSSLMODE
#   cli mode:      WF_CLI (CLI binary, default n8n), WF_EXPORT_CREDENTIALS (default true)
set -eu
umask 077
SCRIPT=workflow-backup
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR RETENTION_DAYS
check_retention
MODE="${WF_BACKUP_MODE:-database}"
case $MODE in cli|database) ;; *) die "WF_BACKUP_MODE must be cli or database, got '$MODE'" ;; esac
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
if [ "$MODE" = database ]; then
  require PGHOST PGDATABASE
  TARGET="${PGHOST}:${PGPORT:-5432}/${PGDATABASE}"
else
  WF_CLI="${WF_CLI:-n8n}"
  command -v "$WF_CLI" > /dev/null 2>&1 || die "workflow CLI '$WF_CLI' not found (WF_CLI); cli mode must run in the workflow tool's image"
fi

new_backup_folder
trap 'rm -rf -- "$work"' EXIT
out=$(mkdir -p "$work" 2>&1) || die "creating $work failed: $(write_cause "$out" "$BACKUP_DIR")"

if [ "$MODE" = database ]; then
  log "database mode: connecting to PostgreSQL at $TARGET as '${PGUSER:-}'"
  connect_check psql -X -A -t -v ON_ERROR_STOP=1 -F "$TAB" -c "SELECT current_database(), pg_get_userbyid(datdba), pg_encoding_to_char(encoding), datcollate, datctype FROM pg_database WHERE datname = current_database()" \
    || pg_fail "connection check" "$out"
  # Backups may overlap each other, never a restore of this server (refuses, naming the restore).
  pg_lock shared
  printf '%s\n' "$out" > "$work/database.tsv"
  log "dumping database '$PGDATABASE' (pg_dump -Fc) -> workflow-db.dump"
  pg_dump -Fc -f "$work/workflow-db.dump" 2> "$work/err" || pg_fail "pg_dump of '$PGDATABASE'" "$(cat "$work/err")"
  pg_restore -l "$work/workflow-db.dump" > "$work/toc" 2> "$work/err" || die "the dump is unreadable: $(oneline "$(cat "$work/err")")"
  log "dump ok: $(grep -c ' TABLE DATA ' "$work/toc" || true) tables with data"
  rm -f "$work/err" "$work/toc"
else
  # nothing_to_export <plural> <file> <output>: n8n 1.68.0 refuses an export of nothing (exit 1, "No
  # workflows found with specified filters", no file): a fresh instance is backed up as an empty
  # list, which its import reads. Any other failure: false.
  nothing_to_export() {
    printf '%s\n' "$3" | grep -qx "No $1 found with specified filters" || return 1
    log "cli mode: the tool has no $1: an empty list"
    printf '[]\n' > "$2"
  }
  log "cli mode: exporting workflows with $WF_CLI"
  out=$("$WF_CLI" export:workflow --all --output="$work/workflows.json" 2>&1) || nothing_to_export workflows "$work/workflows.json" "$out" \
    || die "workflow export ($WF_CLI export:workflow) failed: $(oneline "$out" | tail -c 500)"
  [ -s "$work/workflows.json" ] || die "workflow export wrote no file: $(oneline "$out" | tail -c 500)"
  if [ "${WF_EXPORT_CREDENTIALS:-true}" = true ]; then
    log "cli mode: exporting credentials (encrypted with the tool's encryption key)"
    out=$("$WF_CLI" export:credentials --all --output="$work/credentials.json" 2>&1) || nothing_to_export credentials "$work/credentials.json" "$out" \
      || die "credentials export ($WF_CLI export:credentials) failed: $(oneline "$out" | tail -c 500)"
    [ -s "$work/credentials.json" ] || die "credentials export wrote no file"
  fi
  for f in "$work"/*.json; do
    case $(head -c 1 "$f") in '['|'{') ;; *) die "$(basename "$f") is not JSON" ;; esac
  done
fi

write_sums "$work"
fsync_tree "$work"
publish_backup_folder || die "could not move the finished backup into place ($final): $(oneline "$publish_err")"
sync "$BACKUP_DIR" 2>/dev/null || true
log "backup complete: $final ($MODE mode)"

retention
log "done"
