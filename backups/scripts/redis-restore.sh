#!/bin/sh
# redis-restore.sh - spec 8.3 "In-memory cache": copy the dump file back into the data directory,
# then the Redis pod is (re)started and loads it.
#
# Run it in a Job that mounts the Redis data volume while Redis is STOPPED (StatefulSet scaled to 0):
# a running Redis would overwrite dump.rdb with its current data set on shutdown. When REDIS_HOST is
# set the script checks that nothing answers there and refuses otherwise.
#
#   REDIS_PERSISTENCE_MODE=rdb (default): the dump becomes $REDIS_DATA_DIR/$REDIS_RDB_FILENAME.
#   REDIS_PERSISTENCE_MODE=aof: Redis 7 ignores dump.rdb when appendonly is on, so the dump becomes the
#     base file of a fresh multi-part AOF: $REDIS_AOF_DIRNAME/<appendfilename>.1.base.rdb plus a manifest.
# Files that are replaced are kept next to the new ones as *.before-restore-<stamp>[-<n>] (delete them
# once the restore is verified); a kept copy is never overwritten (-2, -3 ... in the same second).
# One restore into a data folder at a time: flock on $REDIS_DATA_DIR/.restore-lock, which names its holder.
#
# Environment:
#   BACKUP_DIR            backup volume
#   RESTORE_FROM          backup folder name under BACKUP_DIR (or absolute path); default: newest
#   REDIS_DATA_DIR        Redis data directory (the mounted data volume, Redis "dir")
#   REDIS_RDB_FILENAME    dbfilename (default dump.rdb)
#   REDIS_PERSISTENCE_MODE rdb or aof (must match the server's appendonly setting)
#   REDIS_AOF_DIRNAME     appenddirname (default appendonlydir)
#   REDIS_AOF_FILENAME    appendfilename (default appendonly.aof)
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
[ -d "$REDIS_DATA_DIR" ] || die "Redis data directory $REDIS_DATA_DIR does not exist (is the data volume mounted?)"
[ -w "$REDIS_DATA_DIR" ] || die "Redis data directory $REDIS_DATA_DIR is not writable"
# One restore into this data folder at a time (refuses, naming the holder, before anything changes).
store_lock "$REDIS_DATA_DIR/.restore-lock" "the Redis data in $REDIS_DATA_DIR"

from="${RESTORE_FROM:-}"
if [ -z "$from" ]; then
  from=$(latest) || true
  [ -n "$from" ] || die "no backup found in $BACKUP_DIR"
fi
case $from in /*) src=$from ;; *) src="$BACKUP_DIR/$from" ;; esac
[ -f "$src/dump.rdb" ] || die "$src/dump.rdb does not exist"
verify_sums "$src"

if [ -n "${REDIS_HOST:-}" ]; then
  # Only a refused connection shows that Redis is stopped: an unknown host (a typo in REDIS_HOST) or
  # any other failure says nothing about the server that holds the data.
  out=$(redis-cli -h "$REDIS_HOST" -p "${REDIS_PORT:-6379}" PING 2>&1) || true
  case $out in
    *"Connection refused"*) log "Redis at $REDIS_HOST:${REDIS_PORT:-6379} refuses connections (stopped), good" ;;
    *"Could not connect"*|'')
      die "cannot tell whether Redis at $REDIS_HOST:${REDIS_PORT:-6379} is stopped: $(oneline "${out:-no answer}") (is REDIS_HOST right?); nothing was changed" ;;
    *) die "Redis at $REDIS_HOST:${REDIS_PORT:-6379} is still running; stop it first (scale the StatefulSet to 0), otherwise it overwrites the restored file on shutdown" ;;
  esac
fi

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
owner=$(stat -c '%u:%g' "$REDIS_DATA_DIR")

if [ "$MODE" = rdb ]; then
  dest="$REDIS_DATA_DIR/$RDB_NAME"
  tmp="$REDIS_DATA_DIR/.restore-$stamp-$$.rdb"
  trap 'rm -f -- "$tmp"' EXIT
  cp "$src/dump.rdb" "$tmp" || die "copying the dump into $REDIS_DATA_DIR failed (disk full?)"
  chown "$owner" "$tmp" 2>/dev/null || true
  sync "$tmp" 2>/dev/null || sync
  if [ -e "$dest" ]; then
    free_aside_name "$dest" ""
    move_aside "$dest" "$aside_base"
    log "kept the previous file as $aside_base"
  fi
  mv "$tmp" "$dest"
  sync "$REDIS_DATA_DIR" 2>/dev/null || true
  if [ -d "$REDIS_DATA_DIR/$AOF_DIR" ]; then
    log "warning: $REDIS_DATA_DIR/$AOF_DIR exists; if the server runs with appendonly yes it loads that instead (use REDIS_PERSISTENCE_MODE=aof)"
  fi
  log "restored $src/dump.rdb -> $dest; start the Redis pod now"
else
  dest="$REDIS_DATA_DIR/$AOF_DIR"
  tmp="$REDIS_DATA_DIR/.restore-$stamp-$$.aofdir"
  trap 'rm -rf -- "$tmp"' EXIT
  mkdir "$tmp"
  cp "$src/dump.rdb" "$tmp/$AOF_NAME.1.base.rdb" || die "copying the dump into $REDIS_DATA_DIR failed (disk full?)"
  printf 'file %s.1.base.rdb seq 1 type b\n' "$AOF_NAME" > "$tmp/$AOF_NAME.manifest"
  chown -R "$owner" "$tmp" 2>/dev/null || true
  sync
  if [ -e "$dest" ]; then
    free_aside_name "$dest" ""
    move_aside "$dest" "$aside_base"
    log "kept the previous AOF directory as $aside_base"
  fi
  mv "$tmp" "$dest"
  sync "$REDIS_DATA_DIR" 2>/dev/null || true
  log "restored $src/dump.rdb as the AOF base $dest/$AOF_NAME.1.base.rdb; start the Redis pod now"
fi
