#!/bin/sh
# sqlite-restore.sh - copy a sqlite-backup.sh snapshot back (spec 8.3: "copy file back, restart pod").
#
# Run it while the application is STOPPED (Deployment scaled to 0) in a Job that mounts the
# application's data volume; start the application afterwards.
# Steps: verify checksums and integrity_check of the backup copy; copy it next to the live file;
# move the live database and its -wal / -shm files aside as <file>.before-restore-<stamp>[-<n>][-wal|-shm]
# (a stale WAL next to the restored file would be replayed into it; -<n> when a kept copy of that second
# exists: kept copies are never overwritten); rename the copy into place.
# Refused while another restore into the same folder runs (flock on <dir>/.restore-lock, which names its
# holder; also on the uploads folder's parent when that is another folder) and while the database is still
# open (an exclusive SQLite lock cannot be had: a WAL-mode connection, or any connection in a transaction;
# an idle rollback-journal connection cannot be seen). Holding the lock, the run names and removes the
# temporary copies (.restore-<stamp>-<pid>.db, <uploads>.restore-<stamp>-<pid>) that runs killed or stopped by
# a full disk left there. SQLITE_DB names a file and UPLOADS_DIR a folder that holds neither the database
# nor the backup volume.
# With UPLOADS_DIR set and uploads/ in the backup, the uploads folder is replaced the same way.
#
# Environment:
#   BACKUP_DIR    backup volume
#   RESTORE_FROM  backup folder name in BACKUP_DIR, "latest" or an absolute path; default: newest
#   SQLITE_DB     path of the application's database file (restored to this path)
#   UPLOADS_DIR   optional uploads folder to restore as well
set -eu
umask 027
SCRIPT=sqlite-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR SQLITE_DB
bool_settings RESTORE_ALLOW_UNVERIFIED
case $SQLITE_DB in */) die "SQLITE_DB='$SQLITE_DB' must name the database file, not a folder; nothing was changed" ;; esac
name=$(basename "$SQLITE_DB")
dbdir=$(dirname "$SQLITE_DB")
plain_name SQLITE_DB "$name" "$dbdir"
case $name in .restore-*) die "SQLITE_DB='$SQLITE_DB': '.restore-*' names are this restore's own lock and temporary files; nothing was changed" ;; esac
[ -d "$dbdir" ] || die "directory $dbdir of SQLITE_DB does not exist (is the application data volume mounted?)"
[ -w "$dbdir" ] || die "directory $dbdir is not writable"
[ ! -d "$SQLITE_DB" ] || die "SQLITE_DB=$SQLITE_DB is a folder, not a database file; nothing was changed"
updir=""
if [ -n "${UPLOADS_DIR:-}" ]; then
  upname=$(basename "$UPLOADS_DIR")
  updir=$(dirname "$UPLOADS_DIR")
  plain_name UPLOADS_DIR "$upname" "$updir"
  case $upname in *[*?[]*|.restore-*) die "UPLOADS_DIR='$UPLOADS_DIR': its name must not hold '*', '?' or '[' nor start with '.restore-'; nothing was changed" ;; esac
  [ -d "$updir" ] || die "directory $updir of UPLOADS_DIR does not exist (is the application data volume mounted?)"
  rup="$(real_dir "$updir")/$upname"
  ! inside "$(real_dir "$dbdir")/$name" "$rup" || die "UPLOADS_DIR=$UPLOADS_DIR holds the database $SQLITE_DB: restoring the uploads would move it aside; nothing was changed"
  ! inside "$(real_dir "$BACKUP_DIR")" "$rup" || die "UPLOADS_DIR=$UPLOADS_DIR holds the backup volume $BACKUP_DIR; nothing was changed"
fi
chosen_backup "$name"
[ -f "$src/$name" ] || die "backup $src has no database file named $name"
# One restore into this folder at a time (refuses, naming the holder, before anything changes); holding
# the lock, the temporary copies of runs that did not finish are removed.
store_lock "$dbdir/.restore-lock" "the SQLite databases in $dbdir"
remove_leftovers "$dbdir" '.restore-[0-9]*.db' "restore"
if [ -n "$updir" ]; then
  [ "$(real_dir "$updir")" = "$(real_dir "$dbdir")" ] || store_lock "$updir/.restore-lock" "the uploads in $updir" 6
  remove_leftovers "$updir" "$upname.restore-[0-9]*" "restore"
fi

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
out=$(cp "$src/$name" "$tmp" 2>&1) || die "copying the backup into $dbdir failed: $(write_cause "$out" "$dbdir"); nothing was changed"
chown "$owner" "$tmp" 2>/dev/null || true
sync "$tmp" 2>/dev/null || sync

# Kept copies get a name no earlier restore used (-2, -3 ... in the same second): never overwritten.
free_aside_name "$SQLITE_DB" "" -wal -shm -journal
moved=""
for suffix in "" -wal -shm -journal; do
  if [ -e "$SQLITE_DB$suffix" ]; then
    move_aside "$SQLITE_DB$suffix" "$aside_base$suffix"
    moved="$moved ${suffix:-db}"
    log "kept the previous $name$suffix as ${aside_base##*/}$suffix"
  fi
done
if ! out=$(mv -T -- "$tmp" "$SQLITE_DB" 2>&1); then
  for suffix in $moved; do [ "$suffix" != db ] || suffix=""; mv -T -- "$aside_base$suffix" "$SQLITE_DB$suffix" 2>/dev/null || true; done
  die "moving the restored copy into place failed: $(write_cause "$out" "$dbdir"); the previous files were moved back"
fi
sync "$dbdir" 2>/dev/null || true
log "restored $src/$name -> $SQLITE_DB"

if [ -n "${UPLOADS_DIR:-}" ]; then
  if [ -d "$src/uploads" ]; then
    tmpup="$UPLOADS_DIR.restore-$stamp-$$"
    out=$(mkdir "$tmpup" 2>&1) || die "creating $tmpup failed: $(write_cause "$out" "$updir") (the database is already restored; re-run to retry the uploads)"
    out=$(cp -pR "$src/uploads/." "$tmpup/" 2>&1) || die "copying uploads back failed: $(write_cause "$out" "$updir") (the database is already restored; re-run to retry the uploads)"
    chown -R "$(stat -c '%u:%g' "$updir")" "$tmpup" 2>/dev/null || true
    if [ -e "$UPLOADS_DIR" ]; then
      free_aside_name "$UPLOADS_DIR" ""
      move_aside "$UPLOADS_DIR" "$aside_base"
      log "kept the previous uploads folder as $aside_base"
    fi
    mv -T -- "$tmpup" "$UPLOADS_DIR"
    tmpup=""
    log "restored uploads -> $UPLOADS_DIR ($(count_files "$UPLOADS_DIR") files)"
  else
    log "warning: UPLOADS_DIR is set but backup $src has no uploads/ folder; uploads left as they are"
  fi
fi
log "done; start the application now"
