#!/bin/sh
# postgres-restore.sh - restore what postgres-backup.sh wrote (spec 8.3: "feed the dump into the
# client; for one database create it empty first"). Nothing live is dropped before the backup is
# known to be good.
#
#   Always first: SHA256SUMS checked (a folder without it is refused unless RESTORE_ALLOW_UNVERIFIED=true),
#   cluster.sql.gz tested (gzip -t, and read as psql reads it: it must end with pg_dumpall's "dump complete"
#   line), the table of contents of every per-database dump read (pg_restore --list).
#   RESTORE_DATABASE=<name> -> single database: a scratch database is created empty (template0, original
#                              owner, encoding and locale from databases.tsv), the dump is loaded into it in
#                              one transaction and its tables are counted against the dump. Only then the
#                              scratch database is renamed to <name>; an existing <name> (refused unless
#                              RESTORE_DROP_EXISTING=true) is renamed aside first and dropped after the swap.
#                              Any failure before the swap leaves the live database untouched.
#   RESTORE_DATABASE empty  -> full restore: cluster.sql.gz is fed to psql (roles, every database).
#                              The databases of the dump are the ones psql connects to when it reads it
#                              (pg_scan_dump: its \connect commands outside strings, comments, function
#                              bodies and COPY data), not databases.tsv (a TAB-named database is only there).
#                              Databases of the dump that already exist are refused unless
#                              RESTORE_DROP_EXISTING=true; then they are renamed aside (not dropped), the
#                              dump is fed, every database of the dump is checked (exists, at least as
#                              many tables as its per-database dump). On any error the restored databases
#                              are dropped and the originals renamed back; on success the originals are dropped.
#                              "role ... already exists" errors are expected and ignored (pg_dumpall
#                              output re-creates every role, including the one we connect as); any
#                              other SQL error makes the restore fail and is listed.
#                              The "postgres" maintenance database is loaded into the live one when that
#                              holds no user tables; otherwise (RESTORE_DROP_EXISTING=true) it is renamed
#                              aside like the others and an empty one created (pg_dumpall does not create
#                              it), so that the dump's rows are not added to the live ones.
#                              The role this restore connects as keeps its current password: the dump's
#                              (older) one would lock the restore out half-way (psql reconnects for each
#                              database) and break the credentials secret that holds the current one.
#                              Every failure message says exactly which databases are back as they were.
#   The restore keeps its lists in memory, not in TMPDIR: a full TMPDIR cannot cut them short.
#   Databases an earlier restore left when it was killed carry a comment saying so (set in the same
#   transaction as their rename): they are named, and the run then never calls itself complete.
#
# Environment:
#   BACKUP_DIR                backup volume
#   RESTORE_FROM              backup folder name in BACKUP_DIR, "latest" or an absolute path; default: newest
#   RESTORE_DATABASE          database to restore alone; empty = full-cluster restore
#   RESTORE_DROP_EXISTING     "true" to replace databases that already exist (default: refuse)
#   RESTORE_ROLE_PASSWORDS    "true" to set the passwords of roles that exist to the dump's (default: keep the
#                             current ones; the connecting role always keeps its own)
#   RESTORE_ALLOW_UNVERIFIED  "true" to restore a folder that has no SHA256SUMS (default: refuse)
#   PGHOST PGPORT PGUSER PGPASSWORD(secret) PGSSLMODE  libpq connection (superuser)
#   TMPDIR                    where the lock session keeps its FIFO (default /tmp)
set -eu
umask 077
SCRIPT=postgres-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR PGHOST
bool_settings RESTORE_DROP_EXISTING RESTORE_ROLE_PASSWORDS RESTORE_ALLOW_UNVERIFIED
TARGET="${PGHOST}:${PGPORT:-5432}"
export PGDATABASE=postgres
chosen_backup cluster.sql.gz
{ [ -f "$src/databases.tsv" ] && [ -f "$src/cluster.sql.gz" ]; } || die "$src is not a postgres-backup.sh folder (databases.tsv / cluster.sql.gz missing)"
verify_sums "$src"
# databases.tsv names each per-database dump: a file in databases/, never a path.
while IFS="$TAB" read -r file db rest; do
  [ -n "$db" ] || continue
  case $file in ''|.*|*/*) die "databases.tsv in $src names the dump of '$db' '$file', not a file name in databases/; nothing was changed" ;; esac
done < "$src/databases.tsv"

log "connecting to PostgreSQL at $TARGET as '${PGUSER:-}'"
connect_check psql -X -A -t -v ON_ERROR_STOP=1 -c 'SELECT version()' || pg_fail "connection check" "$out"
# One backup or restore of this server at a time (refuses, naming the holder, before anything changes).
pg_lock exclusive
# Databases an earlier restore left behind when it was killed (the originals it had renamed aside, or its
# scratch copies), known by the comment they carry: named now, and a run that finds them never calls
# itself complete.
leftovers=$(pg_leftovers) || pg_fail "looking for databases left by an earlier restore" "$leftovers"
leftovers=$(oneline "$leftovers")
[ -z "$leftovers" ] || log "WARNING: databases left by an earlier restore that did not finish (not touched by this run): $leftovers"
leftover_note="databases left by an earlier restore that did not finish still exist and may hold originals: $leftovers; check them, then rename them back or drop them by hand"

if [ -n "${RESTORE_DATABASE:-}" ]; then
  db="$RESTORE_DATABASE"
  row=""
  while IFS="$TAB" read -r file name owner enc coll ctype; do
    if [ "$name" = "$db" ]; then row=y; break; fi
  done < "$src/databases.tsv"
  [ -n "$row" ] || die "backup $src has no dump of database '$db' (available: $(cut -f2 "$src/databases.tsv" | tr '\n' ' '))"
  log "single-database restore of '$db' from databases/$file"
  pg_restore_verified "$db" "$owner" "$enc" "$coll" "$ctype" "$src/databases/$file"
  [ -z "$leftovers" ] || die "database '$db' restored, but $leftover_note"
  log "database '$db' restored"
  exit 0
fi

log "full-cluster restore: verifying the backup before anything is changed"
out=$(gzip -t "$src/cluster.sql.gz" 2>&1) || die "cluster.sql.gz in $src is corrupt ($(oneline "$out")); nothing was changed"
while IFS="$TAB" read -r file db owner enc coll ctype; do
  [ -n "$db" ] || continue
  out=$(pg_restore --list "$src/databases/$file" 2>&1 > /dev/null) || die "the dump of '$db' (databases/$file) is unreadable: $(oneline "$out"); nothing was changed"
done < "$src/databases.tsv"

# Roles: the dump re-creates every role and sets its attributes. A role that exists keeps its current
# password unless RESTORE_ROLE_PASSWORDS=true (after a rotation the dump's older one would lock its
# applications out); the role this restore connects as always keeps its own (psql reconnects for each
# database, and its Secret holds the current one). Roles the dump creates get the dump's password.
# Role names are compared (and shown) as quoted identifiers with line breaks written \n and \r.
me=$(printf '%s\n' "SELECT current_user || E'\\t' || quote_ident(current_user)" | pg_sql 2>&1) || pg_fail "reading the role this restore connects as" "$me"
me_name=${me%%"$TAB"*}
me_ident=${me#*"$TAB"}
roles_now=$(printf '%s\n' "SELECT replace(replace(quote_ident(rolname), E'\\n', '\\n'), E'\\r', '\\r') FROM pg_roles" | pg_sql 2>&1) || pg_fail "listing the roles" "$roles_now"
setpw=${RESTORE_ROLE_PASSWORDS:-false}

# The databases the feed writes into are the ones psql connects to when it reads the dump, not
# databases.tsv: a name with a TAB is in the dump but cannot be in databases.tsv, and a database of the dump
# that is not renamed aside would have the dump's rows added to its own. template1 is a template: the dump
# only sets its grants and comments.
scan=$(gzip -dc "$src/cluster.sql.gz" | pg_scan_dump list "$roles_now" "$me_ident" "$setpw") \
  || die "reading cluster.sql.gz of $src failed: $(oneline "$scan"); nothing was changed"
dbs=""; ndbs=0; kept=""; set_pw=""; created=""; scan_end=""; scan_bad=""
while IFS= read -r l; do
  case $l in
    "db$TAB"*) dbs="$dbs${l#"db$TAB"}
"; ndbs=$((ndbs + 1)) ;;
    "role${TAB}kept$TAB"*) kept="${kept:+$kept, }${l#"role${TAB}kept$TAB"}" ;;
    "role${TAB}set$TAB"*) set_pw="${set_pw:+$set_pw, }${l#"role${TAB}set$TAB"}" ;;
    "role${TAB}created$TAB"*) created="${created:+$created, }${l#"role${TAB}created$TAB"}" ;;
    "bad$TAB"*) scan_bad=${l#"bad$TAB"} ;;
    "end$TAB"*) scan_end=${l#"end$TAB"} ;;
  esac
done <<EOF
$scan
EOF
[ -z "$scan_bad" ] || die "cluster.sql.gz in $src cannot be restored as written: $scan_bad; nothing was changed"
[ "$scan_end" = complete ] || die "cluster.sql.gz in $src is incomplete (it does not end with pg_dumpall's 'PostgreSQL database cluster dump complete' line); nothing was changed"
while IFS="$TAB" read -r file db rest; do
  [ -n "$db" ] || continue
  in_lines "$db" "$dbs" || die "databases.tsv lists '$db', but cluster.sql.gz does not hold it; nothing was changed"
done < "$src/databases.tsv"
in_lines postgres "$dbs" || { dbs="${dbs}postgres
"; ndbs=$((ndbs + 1)); }
dbnames=$(while IFS= read -r d; do [ -z "$d" ] || printf '%s, ' "$d"; done <<EOF
$dbs
EOF
); dbnames=${dbnames%, }
log "backup verified (checksums, cluster dump complete, $(grep -c . "$src/databases.tsv") database dumps readable); the dump holds $ndbs databases: $dbnames"
tsv_file() { while IFS="$TAB" read -r _f _d _rest; do [ "$_d" != "$1" ] || { printf '%s' "$_f"; return 0; }; done < "$src/databases.tsv"; }
while IFS= read -r d; do
  [ -z "$d" ] || [ -n "$(tsv_file "$d")" ] || log "'$d' is in the cluster dump only (no per-database dump: a TAB in its name); its tables are not counted against one"
done <<EOF
$dbs
EOF

# aside: copy <TAB> original name, a line each (the name last: it may hold a TAB).
aside=""
stamp="$(date -u +%Y%m%d%H%M%S)_$$"
# While "postgres" may be renamed aside, administrative statements run on template1.
pg_admin_db=template1
created_postgres=false
fed=false
in_aside() { while IFS="$TAB" read -r _as _a; do [ -z "$_as" ] || [ "$_a" != "$1" ] || return 0; done <<EOF
$aside
EOF
  return 1; }
# Put back what was there: drop the databases the restore created, rename the originals back (with their
# own comments). Sets rolled: one sentence saying exactly what state the server is in.
rollback() {
  _dropfail=""
  while IFS= read -r _db; do
    [ -n "$_db" ] || continue
    if [ "$_db" = postgres ]; then [ "$created_postgres" = true ] || continue
    elif [ "$fed" != true ]; then continue; fi
    # only what this restore made: a database renamed aside and re-created, or one that did not exist before
    in_aside "$_db" || [ "$_db" = postgres ] || ! in_lines "$_db" "$before" || continue
    pg_drop "$_db" > /dev/null 2>&1 || _dropfail="$_dropfail '$_db'"
  done <<EOF
$dbs
EOF
  _back=""; _lost=""
  while IFS="$TAB" read -r _as _db; do
    [ -n "$_as" ] || continue
    if pg_rename "$_as" "$_db" "" back > /dev/null 2>&1; then
      log "put back the original '$_db'"; _back="${_back:+$_back, }$_db"
    else _lost="${_lost:+$_lost; }the original '$_db' is in '$_as'"; fi
  done <<EOF
$aside
EOF
  if [ -n "$_lost" ]; then
    rolled="NOT everything was put back: $_lost (rename it back by hand)${_dropfail:+; partly restored, not dropped:$_dropfail}"
  elif [ -n "$_back" ]; then
    rolled="every database that existed before is back as it was ($_back)${_dropfail:+; partly restored and not dropped:$_dropfail}"
  else
    rolled="no database of the dump existed before${_dropfail:+; partly restored and not dropped:$_dropfail}${_dropfail:-; the partly restored ones were dropped}"
  fi
}

before=$(printf '%s\n' "SELECT datname FROM pg_database WHERE datname !~ E'[\\n\\r]'" | pg_sql 2>&1) || pg_fail "listing the databases" "$before"
existing=""
while IFS= read -r db; do
  [ -n "$db" ] || continue
  if [ "$db" = postgres ]; then
    n=$(pg_db_tables postgres) || pg_fail "counting the tables of 'postgres'" "$n"
    [ "$n" -gt 0 ] || continue
    [ "${RESTORE_DROP_EXISTING:-false}" = true ] || die "the maintenance database 'postgres' holds $n user table(s); a full restore loads the dump's 'postgres' into it, adding its rows to the live ones; nothing was changed (set RESTORE_DROP_EXISTING=true to replace it)"
    existing="$existing$db
"
    continue
  fi
  out=$(pg_db_exists "$db") || pg_fail "checking database '$db'" "$out"
  [ -n "$out" ] || continue
  [ "${RESTORE_DROP_EXISTING:-false}" = true ] || die "database '$db' already exists on $TARGET; nothing was changed (set RESTORE_DROP_EXISTING=true to replace it)"
  existing="$existing$db
"
done <<EOF
$dbs
EOF
i=0
while IFS= read -r db; do
  [ -n "$db" ] || continue
  i=$((i + 1))
  as=$(pg_free_name "pre_restore_${stamp}_$i") || { rollback; pg_fail "choosing a name to rename '$db' aside to ($rolled)" "$as"; }
  log "renaming the existing database '$db' aside to '$as' (RESTORE_DROP_EXISTING=true; dropped only after a checked restore)"
  # It says what it holds (and keeps its own comment below that), for whoever finds it after this run was killed.
  out=$(pg_rename "$db" "$as" "$(pg_label aside "$db")" aside) || { rollback; pg_fail "renaming '$db' aside ($rolled)" "$out"; }
  aside="$aside$as$TAB$db
"
  if [ "$db" = postgres ]; then
    while IFS="$TAB" read -r file name owner enc coll ctype; do [ "$name" = postgres ] && break; done < "$src/databases.tsv"
    log "creating an empty 'postgres' (owner $owner, template0) for the dump to load into"
    out=$(printf '%s\n' "CREATE DATABASE postgres WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
      | pg_sql -v owner="$owner" -v enc="$enc" -v coll="$coll" -v ctype="$ctype" 2>&1) || { rollback; pg_fail "creating an empty 'postgres' ($rolled)" "$out"; }
    created_postgres=true
  fi
done <<EOF
$existing
EOF

# The feed: what each stage ends with comes back on fd 3 beside psql's messages, all in memory (a file of
# errors in a full TMPDIR would be empty, and the restore would take that for success).
log "feeding cluster.sql.gz to psql"
fed=true
mark="postgres-restore feed $$ exit:"
# shellcheck disable=SC2069  # psql's messages are what is kept; its output is not
feed=$( { { gzip -dc "$src/cluster.sql.gz"; echo "$mark gzip $?" >&3; } \
  | { pg_scan_dump feed "$roles_now" "$me_ident" "$setpw"; echo "$mark awk $?" >&3; } \
  | { psql -X -q -v ON_ERROR_STOP=0 -d postgres 2>&1 > /dev/null; echo "$mark psql $?"; }; } 3>&1)
rc=""; psql_rc=""; msgs=""
while IFS= read -r l; do
  case $l in
    "$mark "*) l=${l#"$mark "}
      if [ "${l% *}" = psql ]; then psql_rc=${l#* }; elif [ "${l#* }" != 0 ]; then rc="${rc:+$rc, }${l% *} exited with ${l#* }"; fi ;;
    *) msgs="$msgs$l
" ;;
  esac
done <<EOF
$feed
EOF
[ -n "$psql_rc" ] || rc="${rc:+$rc, }psql did not report how it ended"
log "the password of '$me_name' (the role this restore connects as) is kept as it is now; the dump's is not restored"
[ -z "$kept" ] || log "roles of the dump that exist: $kept: attributes and memberships set from the dump, current passwords kept (RESTORE_ROLE_PASSWORDS=true sets the dump's)"
[ -z "$set_pw" ] || log "roles of the dump that exist, passwords set from the dump (RESTORE_ROLE_PASSWORDS=true): $set_pw"
[ -z "$created" ] || log "roles created from the dump, with the dump's passwords: $created"
if [ -n "$rc" ]; then
  rollback
  die "feeding cluster.sql.gz stopped ($rc); $rolled"
fi
# Only the ERROR lines are shown: psql's LINE context could echo statements (e.g. password hashes).
# A message about a name with a line break spans lines: continuation lines are joined (as \n) first.
unexpected=$(printf '%s' "$msgs" | awk '/^(psql|ERROR|FATAL|WARNING|NOTICE|DETAIL|HINT|LINE|CONTEXT|QUERY)[: ]/ { if (NR > 1) print m; m = $0; next } { m = m "\\n" $0 } END { if (NR) print m }' \
  | grep -E 'ERROR|FATAL|could not connect' | grep -vE 'ERROR: +role ".*" already exists' || true)
if [ "$psql_rc" -ne 0 ] || [ -n "$unexpected" ]; then
  case $unexpected in *"could not connect"*|*"authentication failed"*|*FATAL*) rollback; pg_fail "full restore ($rolled)" "$unexpected" ;; esac
  printf '%s\n' "$unexpected" | head -n 20 >&2
  rollback
  die "full restore finished with $(printf '%s\n' "$unexpected" | grep -c . || true) unexpected error(s) (psql exit code $psql_rc); see the lines above; $rolled"
fi
log "checking every restored database"
while IFS= read -r db; do
  [ -n "$db" ] || continue
  file=$(tsv_file "$db")
  got=$(pg_db_tables "$db") || { rollback; die "check failed: database '$db' is missing after the restore ($(oneline "$got")); $rolled"; }
  [ -n "$file" ] || continue
  want=$(pg_dump_tables "$src/databases/$file")
  [ "$got" -ge "$want" ] || { rollback; die "check failed: database '$db' has $got tables after the restore, its dump lists $want; $rolled"; }
done <<EOF
$dbs
EOF
while IFS="$TAB" read -r as db; do
  [ -n "$as" ] || continue
  out=$(pg_drop "$as") || log "WARNING: the previous copy of '$db' ('$as') could not be dropped ($(oneline "$out")); drop it by hand"
done <<EOF
$aside
EOF
[ -z "$leftovers" ] || die "every database of the dump was restored and checked ($dbnames), but $leftover_note"
log "full-cluster restore complete: $ndbs databases of the dump restored ($dbnames); $(printf '%s' "$msgs" | grep -c 'already exists' || true) expected 'role already exists' notices"
