# prelude.sh - the helpers every backup/restore script shares (one copy, no duplicates).
#
# backups/scripts.ts joins this file into each script at its "# @prelude" line when it builds the
# script text that the CronJob's ConfigMap mounts (the scripts are mounted standalone: nothing is
# sourced at run time), and the tests run exactly that joined text.
#
# The generic helpers (log, die, require, oneline, latest, retention, verify_sums, count_files,
# json_escape) use only POSIX sh built-ins and coreutils (date, tr, sha256sum, rm, sync): the MinIO
# client image (ubi-micro: bash + coreutils, no sed/awk/grep/find) runs them too. The helpers of one
# family (pg_*, git_*, search request) may use what that family's image has.
# shellcheck disable=SC2034  # used by most scripts, not all
TAB=$(printf '\t')

ts() { date -u +%Y-%m-%dT%H:%M:%SZ; }
log() { printf '%s [%s] %s\n' "$(ts)" "$SCRIPT" "$*"; }
warn() { printf '%s [%s] ERROR: %s\n' "$(ts)" "$SCRIPT" "$*" >&2; }
# DIED tells an EXIT trap that the cause was already printed.
# shellcheck disable=SC2034
die() { warn "$*"; DIED=1; exit 1; }
# One line, runs of blanks squeezed (no sed: tr only).
oneline() { printf '%s' "$1" | tr -s '\r\n\t ' '    '; }
require() {
  for _v in "$@"; do
    eval "_val=\${$_v:-}"
    [ -n "$_val" ] || die "required environment variable $_v is not set"
  done
}

# true/false settings: empty means the default; any other value is refused before anything changes
# (a "yes" or "True" must not silently mean false).
bool_settings() {
  for _v in "$@"; do
    eval "_val=\${$_v:-}"
    case $_val in ''|true|false) ;; *) die "$_v must be true or false, got '$_val'; nothing was changed" ;; esac
  done
}

# A new backup: sets stamp, final (the dated folder, -<n> when that name is taken; a successful run
# renames work into it) and work (its partial folder beside it, for the script's EXIT trap to
# remove); TERM and INT end the script with 143 and 130 so that trap runs. (stamp, final and work
# are read by the backup scripts, not by the restore scripts that share this prelude.)
# shellcheck disable=SC2034
new_backup_folder() {
  stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
  final="$BACKUP_DIR/$stamp"
  _n=1
  while [ -e "$final" ]; do _n=$((_n + 1)); final="$BACKUP_DIR/$stamp-$_n"; done
  work="$BACKUP_DIR/.partial-$stamp-$$"
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

# Moves the finished $work into place as $final, never into another folder: two backups started in
# the same second computed the same name, and a plain mv would put the second inside the first. On a
# name taken meanwhile the next free -<n> is used (final is updated; on failure publish_err says why).
# mv -T (coreutils, busybox). Not in a $(...): final must change in the script itself.
# shellcheck disable=SC2034
publish_backup_folder() {
  _base=$final; _n=1; publish_err=""
  while :; do
    if [ ! -e "$final" ]; then
      publish_err=$(mv -T -- "$work" "$final" 2>&1) && return 0
      [ -e "$final" ] || return 1
    fi
    _n=$((_n + 1)); final="$_base-$_n"
    [ "$_n" -lt 100 ] || { publish_err="no free folder name next to $_base"; return 1; }
  done
}

# A dated backup folder name as the backup scripts write it: YYYY-MM-DDTHHMMSSZ, optionally -<n>.
is_stamp() {
  case $1 in
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z) return 0 ;;
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z-*)
      case ${1#*Z-} in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac ;;
    *) return 1 ;;
  esac
}
# Newest dated folder in $BACKUP_DIR (globs sort by name; no ls | grep).
latest() {
  _last=""
  for _d in "$BACKUP_DIR"/*; do
    _n=${_d##*/}
    if is_stamp "$_n" && [ -d "$_d" ]; then _last=$_n; fi
  done
  printf '%s' "$_last"
}

# RETENTION_DAYS: a whole number of days, 0..RETENTION_MAX_DAYS. Refused before anything is written,
# so that no arithmetic can overflow into a cut-off in the future (which would delete every backup).
RETENTION_MAX_DAYS=36500
check_retention() {
  case ${RETENTION_DAYS:-} in
    ''|*[!0-9]*) die "RETENTION_DAYS must be a whole number of days (0 keeps everything), got '${RETENTION_DAYS:-}'" ;;
  esac
  _r=$RETENTION_DAYS
  while [ "${#_r}" -gt 1 ] && [ "${_r#0}" != "$_r" ]; do _r=${_r#0}; done
  # Compare the length first: a 20-digit number would overflow the shell's own arithmetic.
  if [ "${#_r}" -gt 6 ] || [ "$_r" -gt "$RETENTION_MAX_DAYS" ]; then
    die "RETENTION_DAYS=$RETENTION_DAYS is out of range: expected 0 to $RETENTION_MAX_DAYS days; nothing was deleted"
  fi
  RETENTION_DAYS=$_r
}
# Delete dated folders (and stale .partial-* folders) in $BACKUP_DIR whose modification time is more
# than RETENTION_DAYS days ago. Run only after a successful backup. Needs date -r (coreutils, busybox).
retention() {
  check_retention
  if [ "$RETENTION_DAYS" -eq 0 ]; then
    log "retention disabled (RETENTION_DAYS=0)"
    return 0
  fi
  _now=$(date -u +%s) || die "retention: cannot read the clock"
  _cut=$((_now - RETENTION_DAYS * 86400))
  [ "$_cut" -lt "$_now" ] || die "retention: cut-off $_cut is not in the past (RETENTION_DAYS=$RETENTION_DAYS); nothing deleted"
  log "retention: deleting backups older than $RETENTION_DAYS days"
  for _old in "$BACKUP_DIR"/* "$BACKUP_DIR"/.partial-*; do
    [ -d "$_old" ] || continue
    case ${_old##*/} in .partial-*) ;; *) is_stamp "${_old##*/}" || continue ;; esac
    _m=$(date -r "$_old" +%s) || die "retention: cannot read the modification time of $_old"
    [ "$_m" -lt "$_cut" ] || continue
    log "retention: deleting $_old"
    rm -rf -- "$_old" || die "retention: could not delete $_old"
  done
}

# Checksums of a backup folder: required unless RESTORE_ALLOW_UNVERIFIED=true.
verify_sums() { # $1 = backup folder
  if [ -f "$1/SHA256SUMS" ]; then
    command -v sha256sum > /dev/null 2>&1 || die "sha256sum is not installed in this image, so the checksums of $1 cannot be verified; nothing was changed"
    _out=$(cd "$1" && sha256sum -c SHA256SUMS 2>&1) || die "checksum verification of $1 failed: $(oneline "$_out"); nothing was changed"
    log "checksums of $1 verified"
  elif [ "${RESTORE_ALLOW_UNVERIFIED:-false}" = true ]; then
    log "WARNING: $1 has no SHA256SUMS; restoring without checksum verification (RESTORE_ALLOW_UNVERIFIED=true)"
  else
    die "$1 has no SHA256SUMS, so the backup cannot be verified; nothing was changed (set RESTORE_ALLOW_UNVERIFIED=true to restore it anyway)"
  fi
}
# Write SHA256SUMS of every file under the current folder (no find).
write_sums() { # $1 = folder
  command -v sha256sum > /dev/null 2>&1 || die "sha256sum is not installed in this image, so no SHA256SUMS can be written for $1; the backup was not kept"
  _out=$( (cd "$1" && sums_of . > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS) 2>&1) || die "writing checksums in $1 failed: $(write_cause "$_out" "$1")"
}
sums_of() {
  for _f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -L "$_f" ]; then :
    elif [ -d "$_f" ]; then sums_of "$_f"
    elif [ -f "$_f" ]; then
      case $_f in ./SHA256SUMS|./SHA256SUMS.tmp) ;; *) sha256sum "$_f" || return 1 ;; esac
    fi
  done
}
# Flush what was written to the backup volume before it is renamed into place.
fsync_tree() { sync; }
# Number of regular files under a folder (no find).
count_files() {
  _c=0
  for _f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -L "$_f" ]; then :
    elif [ -d "$_f" ]; then _c=$((_c + $(count_files "$_f")))
    elif [ -f "$_f" ]; then _c=$((_c + 1))
    fi
  done
  printf '%s' "$_c"
}
# Backslash and double quote escaped for a JSON or curl-config string (no sed).
json_escape() {
  _s=$1; _o=""
  while [ -n "$_s" ]; do
    _r=${_s#?}; _ch=${_s%"$_r"}; _s=$_r
    case $_ch in \\|\") _o="$_o\\$_ch" ;; *) _o="$_o$_ch" ;; esac
  done
  printf '%s' "$_o"
}

# --- PostgreSQL family (postgres image) ---------------------------------------------------------
# shellcheck disable=SC2154
pg_fail() { # $1 = step, $2 = client output; TARGET = host:port
  case $2 in
    *"password authentication failed"*|*"no password supplied"*|*"SCRAM"*|*"authentication failed"*)
      die "$1: authentication failed for user '${PGUSER:-}' at $TARGET (check the PGPASSWORD secret). Server said: $(oneline "$2")" ;;
    *"pg_hba.conf"*)
      die "$1: access refused by pg_hba.conf for user '${PGUSER:-}' at $TARGET. Server said: $(oneline "$2")" ;;
    *"Connection refused"*|*"could not connect"*|*"could not translate host name"*|*"timeout expired"*|*"No route to host"*|*"Is the server running"*|*"server closed the connection"*)
      die "$1: PostgreSQL server unreachable at $TARGET. Client said: $(oneline "$2")" ;;
    *"No space left on device"*)
      die "$1: the disk is full (No space left on device): $(oneline "$2")" ;;
    *) die "$1 failed: $(oneline "$2")" ;;
  esac
}
# psql on the maintenance database reading SQL from stdin, so that :"var" / :'var' quoting of names works.
# pg_admin_db: template1 while a full restore has the maintenance database renamed aside.
pg_sql() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "${pg_admin_db:-postgres}" "$@"; }
pg_db_exists() { printf '%s\n' "SELECT 1 FROM pg_database WHERE datname = :'db'" | pg_sql -v db="$1" 2>&1; }
# libpq connection string naming one database (quotes and backslashes escaped).
pg_dbconn() { printf "dbname='%s'" "$(printf '%s' "$1" | sed "s/[\\\\']/\\\\&/g")"; }
pg_drop() { printf '%s\n' 'DROP DATABASE IF EXISTS :"db" WITH (FORCE)' | pg_sql -v db="$1" 2>&1; }
# Tables of a custom-format dump (its table of contents, pg_restore --list) and of a live database.
pg_dump_tables() {
  pg_restore --list "$1" 2>/dev/null | grep -E '^[0-9]+; [0-9]+ [0-9]+ TABLE ' | grep -vcE '^[0-9]+; [0-9]+ [0-9]+ TABLE DATA ' || true
}
pg_db_tables() {
  psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$(pg_dbconn "$1")" -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%'" 2>&1
}
# Comment of database $1 set to $2 (empty: none); best effort, it only labels the database.
pg_set_comment() {
  if [ -n "$2" ]; then printf '%s\n' "COMMENT ON DATABASE :\"db\" IS :'c'" | pg_sql -v db="$1" -v c="$2" > /dev/null 2>&1 || true
  else printf '%s\n' 'COMMENT ON DATABASE :"db" IS NULL' | pg_sql -v db="$1" > /dev/null 2>&1 || true; fi
}
# Rename database $1 to $2 (its sessions are ended first; retried while new ones arrive).
pg_rename() {
  _i=0
  while :; do
    _out=$(printf '%s\n' "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :'from' AND pid <> pg_backend_pid();" \
      'ALTER DATABASE :"from" RENAME TO :"to";' | pg_sql -v from="$1" -v to="$2" 2>&1) && return 0
    _i=$((_i + 1))
    [ "$_i" -lt 10 ] || { printf '%s' "$_out"; return 1; }
    sleep 1
  done
}
# Replace database $1 by the custom-format dump $6 (owner $2, encoding $3, collate $4, ctype $5), verified first:
# the dump's table of contents is read, the dump is loaded into a scratch database in one transaction and its
# tables are counted against the dump; only then the scratch database takes the live one's name (the live one
# is renamed aside and dropped after the swap). Any failure before the swap leaves the live database untouched.
# An existing database is refused unless RESTORE_DROP_EXISTING=true.
pg_restore_verified() {
  _db=$1; _owner=$2; _dump=$6
  _list=$(pg_restore --list "$_dump" 2>&1) || die "the dump $_dump is unreadable (pg_restore --list): $(oneline "$_list"); nothing was changed"
  _want=$(pg_dump_tables "$_dump")
  _live=$(pg_db_exists "$_db") || pg_fail "checking database '$_db'" "$_live"
  if [ -n "$_live" ] && [ "${RESTORE_DROP_EXISTING:-false}" != true ]; then
    die "database '$_db' already exists on $TARGET; nothing was changed (set RESTORE_DROP_EXISTING=true to replace it after the backup is verified)"
  fi
  _stamp="$(date -u +%Y%m%d%H%M%S)_$$"
  _scratch="restore_${_stamp}"
  log "creating empty database '$_db' (owner $_owner, encoding $3, template0) as scratch database '$_scratch'"
  _out=$(printf '%s\n' "CREATE DATABASE :\"db\" WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
    | pg_sql -v db="$_scratch" -v owner="$_owner" -v enc="$3" -v coll="$4" -v ctype="$5" 2>&1) \
    || pg_fail "creating the scratch database for '$_db' (does role '$_owner' exist? restore the full dump first); '$_db' is untouched" "$_out"
  pg_set_comment "$_scratch" "scratch copy of the backup of '$_db', made by $SCRIPT pid $$ at $(ts); not the live data"
  log "verifying: loading the dump into '$_scratch' (pg_restore, single transaction)"
  if ! _out=$(pg_restore --exit-on-error --single-transaction -d "$(pg_dbconn "$_scratch")" "$_dump" 2>&1); then
    pg_drop "$_scratch" > /dev/null || true
    pg_fail "loading the dump of '$_db' into the scratch database (dropped again; '$_db' is untouched)" "$_out"
  fi
  _got=$(pg_db_tables "$_scratch") || { pg_drop "$_scratch" > /dev/null || true; pg_fail "counting the tables of '$_scratch'" "$_got"; }
  if [ "$_got" -lt "$_want" ]; then
    pg_drop "$_scratch" > /dev/null || true
    die "check failed: the restored copy has $_got tables, the dump lists $_want; '$_db' is untouched"
  fi
  log "verified: $_got tables restored ($_want in the dump)"
  # The comment of the live database (database metadata, not in a pg_dump -Fc dump) stays with the name.
  _ocomment=$(printf '%s\n' "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = :'db'" | pg_sql -v db="$_db" 2>/dev/null) || _ocomment=""
  if [ -z "$_live" ]; then
    _out=$(pg_rename "$_scratch" "$_db") || { pg_drop "$_scratch" > /dev/null || true; pg_fail "renaming '$_scratch' to '$_db'" "$_out"; }
    pg_set_comment "$_db" ""
  else
    _aside="pre_restore_${_stamp}"
    log "replacing '$_db' (RESTORE_DROP_EXISTING=true): live copy renamed to '$_aside', verified copy renamed to '$_db'"
    _out=$(pg_rename "$_db" "$_aside") || { pg_drop "$_scratch" > /dev/null || true; pg_fail "renaming the live '$_db' aside (it is unchanged)" "$_out"; }
    pg_set_comment "$_aside" "holds the original of '$_db', renamed aside by $SCRIPT pid $$ at $(ts)"
    if ! _out=$(pg_rename "$_scratch" "$_db"); then
      pg_rename "$_aside" "$_db" > /dev/null || die "renaming '$_scratch' to '$_db' failed and the live copy could not be renamed back: it is '$_aside' now: $(oneline "$_out")"
      pg_set_comment "$_db" "$_ocomment"
      pg_drop "$_scratch" > /dev/null || true
      pg_fail "renaming the verified copy to '$_db' (the live copy was put back)" "$_out"
    fi
    pg_set_comment "$_db" "$_ocomment"
    _out=$(pg_drop "$_aside") || log "WARNING: the previous copy '$_aside' could not be dropped ($(oneline "$_out")); drop it by hand"
  fi
}

# One backup or restore at a time per PostgreSQL server: an advisory lock (key PG_LOCK_KEY) held by one
# session that stays open for the script's whole run (psql reading from a FIFO on fd 8). When the script
# ends or is killed, fd 8 closes, psql ends, and the server releases the lock; a lost pod's connection is
# dropped by the server, so no stale lock outlives its run. Restores take it exclusively in template1
# (the full restore renames "postgres" aside, which ends the sessions in it); backups take it shared in
# their maintenance database, so that backups can overlap each other but never a restore. Advisory locks
# are per database, so each side also looks for the other's lock in pg_locks (cluster-wide) after taking
# its own: of a backup and a restore started together at least one sees the other and refuses.
# $1 = exclusive | shared. Refuses, naming the session(s) that hold it, while another run holds it.
PG_LOCK_KEY="738301, 83"
pg_lock() {
  if [ "$1" = exclusive ]; then _lkdb=template1; _lkfn=pg_try_advisory_lock; _lkother="true"
  else _lkdb=${PGDATABASE:-postgres}; _lkfn=pg_try_advisory_lock_shared; _lkother="l.mode = 'ExclusiveLock'"; fi
  _lk=$(mktemp -d) || die "taking the $1 lock: cannot create a temporary folder"
  mkfifo "$_lk/in" || die "taking the $1 lock: mkfifo failed"
  PGAPPNAME="$SCRIPT pid $$ $(uname -n 2>/dev/null)" psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$_lkdb" < "$_lk/in" > "$_lk/out" 2> "$_lk/err" &
  pg_lock_pid=$!
  exec 8> "$_lk/in"
  printf '%s\n' "SELECT CASE WHEN $_lkfn($PG_LOCK_KEY) THEN 'granted' ELSE 'busy' END || E'\\t' || coalesce((SELECT string_agg(coalesce(nullif(a.application_name, ''), 'a session without application_name') || ' (server pid ' || a.pid || ', client ' || coalesce(host(a.client_addr), 'local socket') || ', connected since ' || to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC)', '; ' ORDER BY a.backend_start) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND (l.classid, l.objid, l.objsubid) = ($PG_LOCK_KEY, 2) AND l.granted AND l.pid <> pg_backend_pid() AND $_lkother), '');" >&8
  _i=0
  while [ ! -s "$_lk/out" ]; do
    kill -0 "$pg_lock_pid" 2>/dev/null || { _e=$(cat "$_lk/err"); rm -rf -- "$_lk"; pg_fail "taking the $1 lock of $TARGET (one backup or restore at a time)" "$_e"; }
    _i=$((_i + 1)); [ "$_i" -lt 600 ] || { rm -rf -- "$_lk"; die "taking the $1 lock of $TARGET: no answer within 60 s"; }
    sleep 0.1
  done
  sleep 0.1
  _ans=$(cat "$_lk/out"); rm -rf -- "$_lk"
  case $_ans in
    "granted$TAB") log "holding the $1 lock of $TARGET (one restore at a time; backups only while no restore runs)" ;;
    *) _who=${_ans#*"$TAB"}
       die "another backup or restore of PostgreSQL at $TARGET is running, held by: ${_who:-a session that ended just now, try again}; nothing was changed" ;;
  esac
}

# One restore at a time per file store (Redis data folder, SQLite folder): flock on a lock file in the
# store's folder, on fd 9 for the script's whole run. The kernel drops it when the process ends or is
# killed, so no stale lock outlives its run. The holder writes who it is into the file; a refusal names it.
store_lock() { # $1 = lock file, $2 = what it guards
  command -v flock > /dev/null 2>&1 || die "flock is not installed in this image, so this run cannot make sure no other restore of $2 runs; nothing was changed"
  _out=$( { : >> "$1"; } 2>&1) || die "cannot create the lock file $1: $(write_cause "$_out" "${1%/*}"); nothing was changed"
  exec 9>> "$1"
  if ! flock -n 9; then
    _who=$(cat "$1" 2>/dev/null) || true
    die "another backup or restore of $2 is running (lock $1 held by: ${_who:-a run that is just starting}); nothing was changed"
  fi
  printf '%s pid %s on %s, started %s\n' "$SCRIPT" "$$" "$(uname -n 2>/dev/null || echo an unknown host)" "$(ts)" > "$1"
}

# A name for a kept copy that does not exist yet: $1.before-restore-<stamp>, then -2, -3 ... when taken
# (for every suffix in $2..., e.g. "" -wal -shm). Sets aside_base; never reuses a name, so an earlier
# kept copy is never overwritten (and mv never moves a folder into an existing one).
free_aside_name() { # $1 = path, $2... = suffixes
  _p=$1; shift
  _b="$_p.before-restore-$(date -u +%Y-%m-%dT%H%M%SZ)"; aside_base=$_b; _n=1
  while :; do
    _taken=""
    for _s in "$@"; do if [ -e "$aside_base$_s" ] || [ -L "$aside_base$_s" ]; then _taken=y; fi; done
    [ -n "$_taken" ] || return 0
    _n=$((_n + 1)); aside_base="$_b-$_n"
  done
}
# mv that never overwrites or moves into an existing folder (mv -T -n, then checked).
move_aside() { # $1 = from, $2 = to
  if [ -e "$2" ] || [ -L "$2" ]; then die "$2 already exists; it is never overwritten; nothing more was changed"; fi
  _out=$(mv -T -- "$1" "$2" 2>&1) || die "moving $1 aside to $2 failed: $(oneline "$_out")"
}

# The cause of a failed write to a file: disk full, read-only, or what the writer said.
write_cause() { # $1 = output of the failed command, $2 = folder written to
  case $1 in
    *"No space left"*) printf 'the disk is full (No space left on device) at %s' "$2" ;;
    *"Read-only file system"*) printf '%s is read-only' "$2" ;;
    *"Permission denied"*) printf 'permission denied writing to %s' "$2" ;;
    '') _free=$(df -Pk "$2" 2>/dev/null | tail -n 1 | tr -s ' ' | cut -d' ' -f4)
        printf 'no message from the tool (free space at %s: %s KiB)' "$2" "${_free:-unknown}" ;;
    *) oneline "$1" ;;
  esac
}

# --- git family (alpine/git: busybox sed) ---------------------------------------------------------
mask() { printf '%s' "$1" | sed -E 's#^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@#\1***@#'; }
# The mirror's folder for a URL: scheme and user info stripped. In a URL (scheme://) host:port is the
# host (port kept as host_port: another server); without a scheme, scp-like [user@]host:path is host/path.
mirror_path() {
  case $1 in
    [a-zA-Z]*://*) printf '%s' "$1" | sed -E 's#^[a-zA-Z][a-zA-Z0-9+.-]*://##; s#^[^/@]*@##; s#^([^/:]+):([0-9]+)(/|$)#\1_\2\3#; s#^([^/:]+):(/|$)#\1\2#; s#^/+##; s#/+$##' ;;
    *) printf '%s' "$1" | sed -E 's#^[^/@:]*@##; s#^([^/:]+):#\1/#; s#^/+##; s#/+$##' ;;
  esac
}
git_auth() {
  # The helper is shell code run by git; it expands the variables itself, so no secret is on argv.
  # shellcheck disable=SC2016
  git -c credential.helper= \
      -c 'credential.helper=!f() { test "$1" = get || exit 0; [ -n "${GIT_PASSWORD:-}" ] || exit 0; echo "username=${GIT_USERNAME:-git}"; echo "password=${GIT_PASSWORD}"; }; f' \
      "$@"
}

# --- MinIO client family (mc image: no sed/awk/grep/find) -----------------------------------------
mc_fail() { # $1 = step, $2 = output
  case $2 in
    *"Access Key Id you provided does not exist"*|*"signature we calculated does not match"*|*"SignatureDoesNotMatch"*|*"InvalidAccessKeyId"*|*"Access Denied"*|*"AccessDenied"*)
      die "$1: authentication failed at $OBJECTSTORE_URL (check the OBJECTSTORE_ACCESS_KEY / OBJECTSTORE_SECRET_KEY secret): $(oneline "$2")" ;;
    *"connection refused"*|*"no such host"*|*"i/o timeout"*|*"dial tcp"*|*"Server not initialized"*|*"network is unreachable"*)
      die "$1: object store unreachable at $OBJECTSTORE_URL: $(oneline "$2")" ;;
    *"NoSuchBucket"*|*"does not exist"*)
      die "$1: bucket not found: $(oneline "$2")" ;;
    *"No space left"*)
      die "$1: the disk is full (No space left on device): $(oneline "$2")" ;;
    *) die "$1 failed: $(oneline "$2")" ;;
  esac
}

# --- search engine family (curl image: busybox sed) -----------------------------------------------
masked_url() { printf '%s' "$SEARCH_URL" | sed 's#//[^/@]*@#//***@#'; }
json_field() { sed -n "s/.*\"$1\" *: *\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n 1; }
# shellcheck disable=SC2154
request() { # $1 = method, $2 = path, $3 = body; uses tmp, resp, STEP, TIMEOUT; sets code
  _body=${3:-}
  {
    if [ -n "${SEARCH_PASSWORD:-}" ]; then
      printf 'user = "%s"\n' "$(json_escape "${SEARCH_USERNAME:-elastic}:$SEARCH_PASSWORD")"
    fi
    [ -n "${SEARCH_CA_CERT:-}" ] && printf 'cacert = "%s"\n' "$(json_escape "$SEARCH_CA_CERT")"
    [ -n "$_body" ] && printf 'data-binary = "%s"\n' "$(json_escape "$_body")"
    printf 'url = "%s"\n' "$(json_escape "${SEARCH_URL%/}$2")"
  } > "$tmp/curl.cfg"
  rc=0
  code=$(curl -sS -K - -X "$1" -H 'Content-Type: application/json' --max-time "$TIMEOUT" -o "$resp" -w '%{http_code}' < "$tmp/curl.cfg" 2> "$tmp/err") || rc=$?
  rm -f "$tmp/curl.cfg"
  if [ "$rc" -ne 0 ]; then
    case $rc in
      6|7) die "$STEP: search engine unreachable at $(masked_url) (curl exit $rc: $(oneline "$(cat "$tmp/err")"))" ;;
      28) die "$STEP: no answer from $(masked_url) within ${TIMEOUT}s (SEARCH_TIMEOUT)" ;;
      35|51|58|60|77|83) die "$STEP: TLS problem talking to $(masked_url) (curl exit $rc; set SEARCH_CA_CERT?): $(oneline "$(cat "$tmp/err")")" ;;
      *) die "$STEP: request to $(masked_url) failed (curl exit $rc: $(oneline "$(cat "$tmp/err")"))" ;;
    esac
  fi
}
# shellcheck disable=SC2154
http_fail() {
  _type=$(json_field type "$resp"); _reason=$(json_field reason "$resp")
  case $code in
    401) die "$STEP: authentication failed at $(masked_url) as user '${SEARCH_USERNAME:-elastic}' (HTTP 401; check the SEARCH_PASSWORD secret)" ;;
    403) die "$STEP: user '${SEARCH_USERNAME:-elastic}' is not allowed to do this (HTTP 403 ${_type}: ${_reason})" ;;
    *)
      case $_reason in *"open index with same name already exists"*)
        die "$STEP failed: HTTP $code ${_type}: ${_reason} -- delete or close that index first, then run the restore again" ;;
      esac
      die "$STEP failed: HTTP $code ${_type:-}${_reason:+: $_reason}" ;;
  esac
}
