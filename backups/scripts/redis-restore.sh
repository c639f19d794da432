#!/bin/sh
# redis-restore.sh - spec 8.3 "In-memory cache": copy the dump file back into the data directory,
# then the Redis pod is (re)started and loads it.
#
# Run it in a Job that mounts the Redis data volume while Redis is STOPPED (StatefulSet scaled to 0):
# a running Redis would overwrite dump.rdb with its current data set on shutdown. The program's Redis
# holds a lock (flock) on $REDIS_SERVER_LOCK in the data folder while it runs: the restore refuses
# while it is held, and holds it itself until it is done, so a server starting meanwhile waits. That
# sign does not pass through the network, where a network policy engine can refuse or drop a
# connection to a running server. When REDIS_HOST is set, a server that answers there refuses too;
# without the lock file (a server never started with it), only a refused connection counts as stopped.
#
#   REDIS_PERSISTENCE_MODE=rdb (default): the dump becomes $REDIS_DATA_DIR/$REDIS_RDB_FILENAME.
#   REDIS_PERSISTENCE_MODE=aof: Redis 7 ignores dump.rdb when appendonly is on, so the dump becomes the
#     base file of a fresh multi-part AOF: $REDIS_AOF_DIRNAME/<appendfilename>.1.base.rdb plus a manifest.
# Files that are replaced are kept next to the new ones as *.before-restore-<stamp>[-<n>] (delete them
# once the restore is verified); a kept copy is never overwritten (-2, -3 ... in the same second).
# One restore into a data folder at a time: flock on $REDIS_DATA_DIR/.restore-lock, which names its holder.
# Holding it, the run names and removes the temporary .restore-<stamp>-<pid>.rdb / .aofdir files that
# runs killed or stopped by a full disk left there (no live run can own one: it would hold the lock).
# The file names are plain names in the data folder (Redis itself refuses a '/' in them), never '..'.
#
# Environment:
#   BACKUP_DIR            backup volume
#   RESTORE_FROM          backup folder name in BACKUP_DIR, "latest" or an absolute path; default: newest
#   REDIS_DATA_DIR        Redis data directory (the mounted data volume, Redis "dir")
#   REDIS_RDB_FILENAME    dbfilename (default dump.rdb)
#   REDIS_PERSISTENCE_MODE rdb or aof (must match the server's appendonly setting)
#   REDIS_AOF_DIRNAME     appenddirname (default appendonlydir)
#   REDIS_AOF_FILENAME    appendfilename (default appendonly.aof)
#   REDIS_SERVER_LOCK     the server's lock file in REDIS_DATA_DIR (default .redis-server.lock)
#   REDIS_HOST REDIS_PORT optional: address checked to make sure Redis is stopped
set -eu
umask 027
SCRIPT=redis-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR REDIS_DATA_DIR
bool_settings RESTORE_ALLOW_UNVERIFIED
MODE="${REDIS_PERSISTENCE_MODE:-rdb}"
case $MODE in rdb|aof) ;; *) die "REDIS_PERSISTENCE_MODE must be rdb or aof, got '$MODE'" ;; esac
RDB_NAME="${REDIS_RDB_FILENAME:-dump.rdb}"
AOF_DIR="${REDIS_AOF_DIRNAME:-appendonlydir}"
AOF_NAME="${REDIS_AOF_FILENAME:-appendonly.aof}"
plain_name REDIS_RDB_FILENAME "$RDB_NAME" "the Redis data directory $REDIS_DATA_DIR"
plain_name REDIS_AOF_DIRNAME "$AOF_DIR" "the Redis data directory $REDIS_DATA_DIR"
plain_name REDIS_AOF_FILENAME "$AOF_NAME" "the AOF directory $AOF_DIR"
SERVER_LOCK="${REDIS_SERVER_LOCK:-.redis-server.lock}"
plain_name REDIS_SERVER_LOCK "$SERVER_LOCK" "the Redis data directory $REDIS_DATA_DIR"
for n in "$RDB_NAME" "$AOF_DIR"; do
  case $n in .restore-*) die "'$n' (REDIS_RDB_FILENAME / REDIS_AOF_DIRNAME) is a name this restore keeps for its lock and temporary files; nothing was changed" ;; esac
done
[ "$MODE" = rdb ] || [ "$RDB_NAME" != "$AOF_DIR" ] || die "REDIS_RDB_FILENAME and REDIS_AOF_DIRNAME are both '$RDB_NAME'; nothing was changed"
[ -d "$REDIS_DATA_DIR" ] || die "Redis data directory $REDIS_DATA_DIR does not exist (is the data volume mounted?)"
[ -w "$REDIS_DATA_DIR" ] || die "Redis data directory $REDIS_DATA_DIR is not writable"
chosen_backup dump.rdb
[ -f "$src/dump.rdb" ] || die "$src/dump.rdb does not exist"
# One restore into this data folder at a time (refuses, naming the holder, before anything changes).
store_lock "$REDIS_DATA_DIR/.restore-lock" "the Redis data in $REDIS_DATA_DIR"
remove_leftovers "$REDIS_DATA_DIR" '.restore-[0-9]*.rdb' "restore"
remove_leftovers "$REDIS_DATA_DIR" '.restore-[0-9]*.aofdir' "restore"
verify_sums "$src"

# The server's lock (made by the server, never here): held means running. Taken and kept (fd 8)
# until the restore is done.
server_lock="$REDIS_DATA_DIR/$SERVER_LOCK"
guarded=""
if [ -f "$server_lock" ]; then
  out=$( { exec 8>> "$server_lock"; } 2>&1) || die "cannot open the server lock $server_lock: $(oneline "$out"); nothing was changed"
  exec 8>> "$server_lock"
  flock -n 8 || die "Redis is still running: its server holds $server_lock; stop it first (scale the StatefulSet to 0), otherwise it overwrites the restored file on shutdown; nothing was changed"
  guarded=y
  log "no Redis server holds $server_lock (stopped), good"
fi

if [ -n "${REDIS_HOST:-}" ]; then
  # An answer means a server runs there. Without the lock file, only a refused connection shows that
  # Redis is stopped: an unknown host (a typo in REDIS_HOST) or any other failure says nothing.
  out=$(redis-cli -h "$REDIS_HOST" -p "${REDIS_PORT:-6379}" PING 2>&1) || true
  case $out in
    *"Connection refused"*) log "Redis at $REDIS_HOST:${REDIS_PORT:-6379} refuses connections (stopped), good" ;;
    *"Could not connect"*|'')
      [ -n "$guarded" ] || die "cannot tell whether Redis at $REDIS_HOST:${REDIS_PORT:-6379} is stopped: $(oneline "${out:-no answer}") (is REDIS_HOST right?), and no server lock $server_lock shows it; nothing was changed"
      log "Redis at $REDIS_HOST:${REDIS_PORT:-6379} does not answer: $(oneline "$out")" ;;
    *) die "Redis at $REDIS_HOST:${REDIS_PORT:-6379} is still running; stop it first (scale the StatefulSet to 0), otherwise it overwrites the restored file on shutdown" ;;
  esac
fi

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
owner=$(stat -c '%u:%g' "$REDIS_DATA_DIR")
# A failed write names its cause (a full disk, a read-only volume); the temporary copy is removed.
copy_failed() { die "$1 failed: $(write_cause "$2" "$REDIS_DATA_DIR"); nothing was changed"; }

if [ "$MODE" = rdb ]; then
  dest="$REDIS_DATA_DIR/$RDB_NAME"
  tmp="$REDIS_DATA_DIR/.restore-$stamp-$$.rdb"
  trap 'rm -f -- "$tmp"' EXIT
  out=$(cp "$src/dump.rdb" "$tmp" 2>&1) || copy_failed "copying the dump into $REDIS_DATA_DIR" "$out"
else
  dest="$REDIS_DATA_DIR/$AOF_DIR"
  tmp="$REDIS_DATA_DIR/.restore-$stamp-$$.aofdir"
  trap 'rm -rf -- "$tmp"' EXIT
  out=$(mkdir "$tmp" 2>&1) || copy_failed "creating $tmp" "$out"
  out=$(cp "$src/dump.rdb" "$tmp/$AOF_NAME.1.base.rdb" 2>&1) || copy_failed "copying the dump into $REDIS_DATA_DIR" "$out"
  out=$( { printf 'file %s.1.base.rdb seq 1 type b\n' "$AOF_NAME" > "$tmp/$AOF_NAME.manifest"; } 2>&1) || copy_failed "writing the AOF manifest" "$out"
fi
chown -R "$owner" "$tmp" 2>/dev/null || true
sync "$tmp" 2>/dev/null || sync
if [ -e "$dest" ]; then
  free_aside_name "$dest" ""
  move_aside "$dest" "$aside_base"
  log "kept the previous $([ "$MODE" = rdb ] && echo file || echo AOF directory) as $aside_base"
fi
if ! out=$(mv -T -- "$tmp" "$dest" 2>&1); then
  [ ! -e "${aside_base:-}" ] || mv -T -- "$aside_base" "$dest" 2>/dev/null || die "moving the restored copy into place failed: $(write_cause "$out" "$REDIS_DATA_DIR"); the previous one is $aside_base"
  copy_failed "moving the restored copy into place" "$out"
fi
sync "$REDIS_DATA_DIR" 2>/dev/null || true
if [ "$MODE" = rdb ]; then
  if [ -d "$REDIS_DATA_DIR/$AOF_DIR" ]; then
    log "warning: $REDIS_DATA_DIR/$AOF_DIR exists; if the server runs with appendonly yes it loads that instead (use REDIS_PERSISTENCE_MODE=aof)"
  fi
  log "restored $src/dump.rdb -> $dest; start the Redis pod now"
else
  log "restored $src/dump.rdb as the AOF base $dest/$AOF_NAME.1.base.rdb; start the Redis pod now"
fi
