#!/bin/sh
# sqlite-restore.sh - copy a sqlite-backup.sh snapshot back (spec 8.3: "copy file back, restart pod").
#
# Run it while the application is STOPPED (Deployment scaled to 0) in a Job that mounts the
# application's data volume; start the application afterwards.
# Steps: verify checksums and integrity_check of the backup copy; copy it next to the live file;
# move the live database and its -wal / -shm files aside as <file>.before-restore-<stamp>[-wal|-shm]
# (a stale WAL next to the restored file would be replayed into it); rename the copy into place.
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
# @prelude  (backups/scripts/lib/prelude.sh is joined in here by backups/scripts.ts)

require BACKUP_DIR SQLITE_DB
name=$(basename "$SQLITE_DB")
dbdir=$(dirname "$SQLITE_DB")
[ -d "$dbdir" ] || die "directory $dbdir of SQLITE_DB does not exist (is the application data volume mounted?)"
[ -w "$dbdir" ] || die "directory $dbdir is not writable"

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

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
owner=$(stat -c '%u:%g' "$dbdir")
tmp="$dbdir/.restore-$stamp-$$.db"
tmpup=""
trap 'rm -rf -- "$tmp" ${tmpup:+"$tmpup"}' EXIT
cp "$src/$name" "$tmp" || die "copying the backup into $dbdir failed (disk full?)"
chown "$owner" "$tmp" 2>/dev/null || true
sync "$tmp" 2>/dev/null || sync

for suffix in "" -wal -shm -journal; do
  if [ -e "$SQLITE_DB$suffix" ]; then
    mv "$SQLITE_DB$suffix" "$SQLITE_DB.before-restore-$stamp$suffix"
    log "kept the previous $name$suffix as $name.before-restore-$stamp$suffix"
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
      mv "$UPLOADS_DIR" "$UPLOADS_DIR.before-restore-$stamp" || die "cannot move $UPLOADS_DIR aside (is it a mount point?)"
      log "kept the previous uploads folder as $UPLOADS_DIR.before-restore-$stamp"
    fi
    mv "$tmpup" "$UPLOADS_DIR"
    tmpup=""
    log "restored uploads -> $UPLOADS_DIR ($(count_files "$UPLOADS_DIR") files)"
  else
    log "warning: UPLOADS_DIR is set but backup $src has no uploads/ folder; uploads left as they are"
  fi
fi
log "done; start the application now"
