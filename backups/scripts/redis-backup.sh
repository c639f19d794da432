#!/bin/sh
# redis-backup.sh - spec 8.3 "In-memory cache": trigger an RDB save (or an AOF rewrite), wait until it
# completed, then copy the dump.
#
# The copy is fetched over the network with `redis-cli --rdb` (a replication-style transfer of a
# fresh point-in-time RDB snapshot), so the CronJob runs in its own pod and never needs the Redis
# data volume (which is ReadWriteOnce and mounted by the Redis pod). The BGSAVE / BGREWRITEAOF
# before it keeps the server's own persistence file current and proves persistence works
# (rdb_last_bgsave_status / aof_last_bgrewrite_status must be "ok").
#
# Layout: $BACKUP_DIR/<YYYY-MM-DDTHHMMSSZ>/dump.rdb + SHA256SUMS (work folder .partial-*, renamed on success).
# Retention: folders older than $RETENTION_DAYS days are deleted after a successful backup only.
#
# Environment:
#   BACKUP_DIR RETENTION_DAYS   backup volume, retention in days (0 = keep everything)
#   REDIS_HOST REDIS_PORT       server address (REDIS_PORT default 6379)
#   REDIS_USERNAME              optional ACL user (needs the SYNC/PSYNC, BGSAVE, INFO permissions)
#   REDISCLI_AUTH               password (secret; read by redis-cli itself, never on the command line)
#   REDIS_PERSISTENCE_MODE      rdb (default: BGSAVE) or aof (BGREWRITEAOF; the server must have appendonly yes)
#   REDIS_SAVE_TIMEOUT          seconds to wait for the save/rewrite (default 600)
set -eu
# Group-readable: the restore runs as the redis user, in the group this job runs as (components/redis.ts).
umask 027
SCRIPT=redis-backup
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

nap() { sleep 0.2 2>/dev/null || sleep 1; }

require BACKUP_DIR RETENTION_DAYS REDIS_HOST
check_retention
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
REDIS_PORT="${REDIS_PORT:-6379}"
MODE="${REDIS_PERSISTENCE_MODE:-rdb}"
TIMEOUT="${REDIS_SAVE_TIMEOUT:-600}"
case $MODE in rdb|aof) ;; *) die "REDIS_PERSISTENCE_MODE must be rdb or aof, got '$MODE'" ;; esac
case $TIMEOUT in ''|*[!0-9]*) die "REDIS_SAVE_TIMEOUT must be a number of seconds" ;; esac
# shellcheck disable=SC2153  # REDIS_HOST is required above, not a misspelling
TARGET="$REDIS_HOST:$REDIS_PORT"

if [ -n "${REDIS_USERNAME:-}" ]; then
  cli() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" --user "$REDIS_USERNAME" "$@"; }
else
  cli() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" "$@"; }
fi
redis_fail() { # $1 = step, $2 = output
  case $2 in
    *NOAUTH*|*WRONGPASS*|*"AUTH failed"*|*"invalid password"*|*"invalid username-password"*)
      die "$1: authentication failed at Redis $TARGET (check the REDISCLI_AUTH secret${REDIS_USERNAME:+ and user $REDIS_USERNAME})" ;;
    *NOPERM*) die "$1: permission denied for the Redis user at $TARGET: $(oneline "$2")" ;;
    *"Could not connect"*|*"Connection refused"*|*"Name or service not known"*|*"timed out"*|*"No route to host"*)
      die "$1: Redis server unreachable at $TARGET: $(oneline "$2")" ;;
    *"No space left"*) die "$1: $(write_cause "$2" "$BACKUP_DIR"): $(oneline "$2")" ;;
    *) die "$1 failed at Redis $TARGET: $(oneline "$2")" ;;
  esac
}
info() { cli INFO persistence 2>&1 | tr -d '\r'; }
field() { printf '%s\n' "$1" | sed -n "s/^$2://p"; }

new_backup_folder
trap 'rm -rf -- "$work"' EXIT
out=$(mkdir -p "$work" 2>&1) || die "creating $work failed: $(write_cause "$out" "$BACKUP_DIR")"

log "connecting to Redis at $TARGET"
connect_check cli PING || redis_fail "connection check" "$out"
[ "$(oneline "$out" | sed 's/ *$//')" = PONG ] || redis_fail "connection check" "$out"

inf=$(info)
case $inf in *"# Persistence"*) ;; *) redis_fail "INFO persistence" "$inf" ;; esac
if [ "$MODE" = aof ]; then
  [ "$(field "$inf" aof_enabled)" = 1 ] || die "REDIS_PERSISTENCE_MODE=aof but the server at $TARGET has appendonly disabled"
  counter=aof_rewrites; busy=aof_rewrite_in_progress; status=aof_last_bgrewrite_status
  cmd=BGREWRITEAOF
else
  counter=rdb_saves; busy=rdb_bgsave_in_progress; status=rdb_last_bgsave_status
  cmd="BGSAVE SCHEDULE"
fi
before=$(field "$inf" "$counter")
if [ -z "$before" ]; then
  # Redis < 7 has no rdb_saves/aof_rewrites counters: fall back to the save time (1 s resolution).
  [ "$MODE" = rdb ] || die "REDIS_PERSISTENCE_MODE=aof needs Redis 7 or later (INFO field aof_rewrites missing)"
  counter=rdb_last_save_time
  before=$(field "$inf" rdb_last_save_time)
  sleep 1
fi

log "triggering $cmd"
# shellcheck disable=SC2086
out=$(cli $cmd 2>&1) || redis_fail "$cmd" "$out"
case $out in
  *"started"*|*"scheduled"*|*"already in progress"*) log "server: $(oneline "$out")" ;;
  *) redis_fail "$cmd" "$out" ;;
esac

log "waiting for the ${MODE} save to complete (timeout ${TIMEOUT}s)"
start=$(date +%s)
while :; do
  inf=$(info)
  now_count=$(field "$inf" "$counter")
  if [ "$(field "$inf" "$busy")" = 0 ] && [ "$(field "$inf" aof_rewrite_scheduled)" != 1 ] \
     && [ -n "$now_count" ] && [ "$now_count" -gt "$before" ]; then
    break
  fi
  case $inf in *"# Persistence"*) ;; *) redis_fail "waiting for $cmd" "$inf" ;; esac
  [ $(( $(date +%s) - start )) -lt "$TIMEOUT" ] || die "$cmd did not complete within ${TIMEOUT}s on $TARGET"
  nap
done
st=$(field "$inf" "$status")
[ "$st" = ok ] || die "$cmd failed on the server ($status:$st); check the Redis log (disk full? permissions?)"
log "$cmd completed ($status:ok)"

log "fetching a point-in-time RDB snapshot with redis-cli --rdb"
out=$(cli --rdb "$work/dump.rdb" 2>&1) || redis_fail "redis-cli --rdb" "$out"
[ -s "$work/dump.rdb" ] || die "redis-cli --rdb produced an empty file: $(oneline "$out")"
[ "$(head -c 5 "$work/dump.rdb")" = REDIS ] || die "fetched file is not an RDB file"
if command -v redis-check-rdb > /dev/null 2>&1; then
  out=$(redis-check-rdb "$work/dump.rdb" 2>&1) || die "redis-check-rdb rejected the dump: $(oneline "$out" | tail -c 300)"
  log "redis-check-rdb: RDB looks OK"
fi

(cd "$work" && sha256sum dump.rdb > SHA256SUMS) || die "writing checksums failed"
fsync_tree "$work"
publish_backup_folder || die "could not move the finished backup into place ($final): $(oneline "$publish_err")"
sync "$BACKUP_DIR" 2>/dev/null || true
log "backup complete: $final/dump.rdb ($(wc -c < "$final/dump.rdb" | tr -d ' ') bytes)"

retention
log "done"
