#!/bin/sh
# sqlite-restore.sh - copy a sqlite-backup.sh snapshot back (spec 8.3: "copy file back, restart pod").
#
# Run it while the application is STOPPED (Deployment scaled to 0) in a Job that mounts the
# application's data volume; start the application afterwards.
# Steps: verify checksums and integrity_check of the backup copy; copy it next to the live file;
# move the live database and its -wal / -shm files aside as <file>.before-restore-<stamp>[-<n>][-wal|-shm]
# (a stale WAL next to the restored file would be replayed into it; -<n> when a kept copy of that second
# exists: kept copies are never overwritten); rename the copy into place.
# Refused while another restore of the same file runs (flock on <dir>/.<file>.restore-lock, which names
# its holder) and while the database is still open (an exclusive SQLite lock cannot be had: a WAL-mode
# connection, or any connection in a transaction; an idle rollback-journal connection cannot be seen).
# With UPLOADS_DIR set and uploads/ in the backup, the uploads folder is replaced the same way.
#
# Environment:
#   BACKUP_DIR    backup volume
#   RESTORE_FROM  backup folder name under BACKUP_DIR (or absolute path); default: newest
#   SQLITE_DB     path of the application's database file (restored to this path)
#   UPLOADS_DIR   optional uploads folder to restore as well
set -eu
umask 027
SCRIPT=sqlite-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR SQLITE_DB
bool_settings RESTORE_ALLOW_UNVERIFIED
name=$(basename "$SQLITE_DB")
dbdir=$(dirname "$SQLITE_DB")
[ -d "$dbdir" ] || die "directory $dbdir of SQLITE_DB does not exist (is the application data volume mounted?)"
[ -w "$dbdir" ] || die "directory $dbdir is not writable"
# One restore of this database at a time (refuses, naming the holder, before anything changes).
store_lock "$dbdir/.$name.restore-lock" "$SQLITE_DB"

from="${RESTORE_FROM:-}"
if [ -z "$from" ]; then
  from=$(latest) || true
  [ -n "$from" ] || die "no backup found in $BACKUP_DIR"
fi
case $from in /*) src=$from ;; *) src="$BACKUP_DIR/$from" ;; esac
[ -f "$src/$name" ] || die "backup $src has no database file named $name"
verify_sums "$src"
out=$(sqlite3 -bail -batch "$src/$name" "PRAGMA integrity_check" 2>&1 < /dev/null) || die "cannot read the backup copy: $(oneline "$out")"
[ "$out" = ok ] || die "integrity_check of the backup copy failed: $(printf '%s' "$out" | head -n 5 | tr '\n' ' ')"

# The application must be stopped. A connection to a WAL-mode database holds a shared lock on it for as long
# as it is open, and a connection in a transaction holds one in any mode: an exclusive lock that cannot be
# had (busy timeout 0) means the database is still in use. (An idle connection to a rollback-journal
# database holds no lock and cannot be seen from here: scaling the application to 0 stays the first step.)
if [ -e "$SQLITE_DB" ]; then
  out=$(sqlite3 -bail -batch "$SQLITE_DB" "PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; SELECT count(*) FROM sqlite_master; COMMIT;" 2>&1 < /dev/null) || {
    case $out in
      *"database is locked"*|*"database is busy"*|*SQLITE_BUSY*)
        die "$SQLITE_DB is still open: another SQLite connection holds a lock on it (is the application stopped? scale it to 0 first); nothing was changed" ;;
      *) log "warning: the live $name cannot be read ($(oneline "$out")); it is replaced and kept aside" ;;
    esac
  }
fi

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
owner=$(stat -c '%u:%g' "$dbdir")
tmp="$dbdir/.restore-$stamp-$$.db"
tmpup=""
trap 'rm -rf -- "$tmp" ${tmpup:+"$tmpup"}' EXIT
cp "$src/$name" "$tmp" || die "copying the backup into $dbdir failed (disk full?)"
chown "$owner" "$tmp" 2>/dev/null || true
sync "$tmp" 2>/dev/null || sync

# Kept copies get a name no earlier restore used (-2, -3 ... in the same second): never overwritten.
free_aside_name "$SQLITE_DB" "" -wal -shm -journal
for suffix in "" -wal -shm -journal; do
  if [ -e "$SQLITE_DB$suffix" ]; then
    move_aside "$SQLITE_DB$suffix" "$aside_base$suffix"
    log "kept the previous $name$suffix as ${aside_base##*/}$suffix"
  fi
done
mv "$tmp" "$SQLITE_DB"
sync "$dbdir" 2>/dev/null || true
log "restored $src/$name -> $SQLITE_DB"

if [ -n "${UPLOADS_DIR:-}" ]; then
  if [ -d "$src/uploads" ]; then
    tmpup="$UPLOADS_DIR.restore-$stamp-$$"
    mkdir -p "$tmpup"
    cp -pR "$src/uploads/." "$tmpup/" || die "copying uploads back failed (database already restored; re-run to retry)"
    chown -R "$(stat -c '%u:%g' "$(dirname "$UPLOADS_DIR")")" "$tmpup" 2>/dev/null || true
    if [ -e "$UPLOADS_DIR" ]; then
      free_aside_name "$UPLOADS_DIR" ""
      move_aside "$UPLOADS_DIR" "$aside_base"
      log "kept the previous uploads folder as $aside_base"
    fi
    mv "$tmpup" "$UPLOADS_DIR"
    tmpup=""
    log "restored uploads -> $UPLOADS_DIR ($(count_files "$UPLOADS_DIR") files)"
  else
    log "warning: UPLOADS_DIR is set but backup $src has no uploads/ folder; uploads left as they are"
  fi
fi
log "done; start the application now"
