#!/bin/sh
# sqlite-backup.sh - spec 8.3 "Uptime monitor" (history), "Chat UI" (history, config, uploads) and the
# booking application: a consistent copy of a live SQLite database.
#
# The copy is made with `VACUUM INTO` (SQLite >= 3.27): it runs inside one read transaction, so the
# result is a transaction-consistent snapshot even while the application keeps writing (WAL or
# rollback journal), and it never restarts the way the step-wise `.backup` can under constant writes.
# The copy is then checked with PRAGMA integrity_check (must be "ok"); PRAGMA foreign_key_check
# findings are reported as warnings (they would be in the live database too).
# Optionally the uploads folder ($UPLOADS_DIR) is copied as well (after the database snapshot; files
# uploaded in between may be present without a database row - harmless for the chat UI).
#
# The job must mount the application's data volume (same node as the pod for ReadWriteOnce volumes,
# see docs/backups.md) because SQLite cannot be read over the network.
#
# Layout: $BACKUP_DIR/<YYYY-MM-DDTHHMMSSZ>/<database file name> [+ uploads/] + SHA256SUMS
#
# Environment:
#   BACKUP_DIR RETENTION_DAYS  backup volume, retention in days (0 = keep everything)
#   SQLITE_DB                  path of the live database file (must exist; never created)
#   UPLOADS_DIR                optional folder copied too (chat UI uploads)
#   SQLITE_BUSY_TIMEOUT_MS     how long to wait for locks (default 30000)
set -eu
umask 077
SCRIPT=sqlite-backup
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR RETENTION_DAYS SQLITE_DB
check_retention
TIMEOUT="${SQLITE_BUSY_TIMEOUT_MS:-30000}"
case $TIMEOUT in ''|*[!0-9]*) die "SQLITE_BUSY_TIMEOUT_MS must be a number of milliseconds" ;; esac
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
command -v sqlite3 > /dev/null 2>&1 || die "sqlite3 is not installed in this image"
# Never let sqlite3 create an empty database where the real one is missing.
[ -f "$SQLITE_DB" ] || die "database file $SQLITE_DB not found (is the application data volume mounted?)"
[ -r "$SQLITE_DB" ] || die "database file $SQLITE_DB is not readable"
if [ -n "${UPLOADS_DIR:-}" ]; then
  [ -d "$UPLOADS_DIR" ] || die "uploads folder $UPLOADS_DIR not found"
  ! inside "$(real_dir "$BACKUP_DIR")" "$(real_dir "$UPLOADS_DIR")" || die "UPLOADS_DIR=$UPLOADS_DIR holds the backup volume $BACKUP_DIR: its copy would copy the backups into themselves; nothing was changed"
fi
case $SQLITE_DB in -*) SQLITE_DB="./$SQLITE_DB" ;; esac
name=$(basename "$SQLITE_DB")

new_backup_folder
trap 'rm -rf -- "$work"' EXIT
out=$(mkdir -p "$work" 2>&1) || die "creating $work failed: $(write_cause "$out" "$BACKUP_DIR")"

copy="$work/$name"
qcopy=$(printf '%s' "$copy" | sed "s/'/''/g")
log "snapshot of $SQLITE_DB with VACUUM INTO (busy timeout ${TIMEOUT} ms)"
out=$(sqlite3 -bail -batch -cmd ".timeout $TIMEOUT" "$SQLITE_DB" "VACUUM INTO '$qcopy'" 2>&1 < /dev/null) || {
  case $out in
    *"not a database"*|*"malformed"*|*"corrupt"*) die "$SQLITE_DB is not a valid SQLite database or is corrupt: $(oneline "$out")" ;;
    *"locked"*|*"busy"*) die "$SQLITE_DB stayed locked for more than ${TIMEOUT} ms: $(oneline "$out")" ;;
    *) die "VACUUM INTO of $SQLITE_DB failed: $(write_cause "$out" "$BACKUP_DIR")" ;;
  esac
}
[ -s "$copy" ] || die "VACUUM INTO produced no file"

log "checking the copy: PRAGMA integrity_check"
out=$(sqlite3 -bail -batch "$copy" "PRAGMA integrity_check" 2>&1 < /dev/null) || die "integrity_check could not run on the copy: $(oneline "$out")"
[ "$out" = ok ] || die "integrity_check of the copy failed: $(printf '%s' "$out" | head -n 5 | tr '\n' ' ')"
fk=$(sqlite3 -bail -batch "$copy" "PRAGMA foreign_key_check" 2>&1 < /dev/null) || die "foreign_key_check could not run: $(oneline "$fk")"
if [ -n "$fk" ]; then
  log "warning: foreign_key_check reports $(printf '%s\n' "$fk" | wc -l | tr -d ' ') violation(s) (present in the live database as well)"
fi
log "copy ok: $(sqlite3 -batch "$copy" "SELECT count(*) FROM sqlite_master WHERE type = 'table'" < /dev/null) tables, $(wc -c < "$copy" | tr -d ' ') bytes"

if [ -n "${UPLOADS_DIR:-}" ]; then
  log "copying uploads folder $UPLOADS_DIR"
  mkdir "$work/uploads"
  cp -pR "$UPLOADS_DIR/." "$work/uploads/" || die "copying $UPLOADS_DIR failed"
  log "uploads: $(count_files "$work/uploads") files"
fi

write_sums "$work"
fsync_tree "$work"
publish_backup_folder || die "could not move the finished backup into place ($final): $(oneline "$publish_err")"
sync "$BACKUP_DIR" 2>/dev/null || true
log "backup complete: $final"

retention
log "done"
