#!/bin/sh
# postgres-restore.sh - restore what postgres-backup.sh wrote (spec 8.3: "feed the dump into the
# client; for one database create it empty first"). Nothing live is dropped before the backup is
# known to be good.
#
#   Always first: SHA256SUMS checked (a folder without it is refused unless RESTORE_ALLOW_UNVERIFIED=true),
#   cluster.sql.gz tested (gzip -t, and it must end with pg_dumpall's "dump complete" line), the table of
#   contents of every per-database dump read (pg_restore --list).
#   RESTORE_DATABASE=<name> -> single database: a scratch database is created empty (template0, original
#                              owner, encoding and locale from databases.tsv), the dump is loaded into it in
#                              one transaction and its tables are counted against the dump. Only then the
#                              scratch database is renamed to <name>; an existing <name> (refused unless
#                              RESTORE_DROP_EXISTING=true) is renamed aside first and dropped after the swap.
#                              Any failure before the swap leaves the live database untouched.
#   RESTORE_DATABASE empty  -> full restore: cluster.sql.gz is fed to psql (roles, every database).
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
#
# Environment:
#   BACKUP_DIR                backup volume
#   RESTORE_FROM              backup folder name under BACKUP_DIR (or absolute path); default: newest
#   RESTORE_DATABASE          database to restore alone; empty = full-cluster restore
#   RESTORE_DROP_EXISTING     "true" to replace databases that already exist (default: refuse)
#   RESTORE_ALLOW_UNVERIFIED  "true" to restore a folder that has no SHA256SUMS (default: refuse)
#   PGHOST PGPORT PGUSER PGPASSWORD(secret) PGSSLMODE  libpq connection (superuser)
set -eu
umask 077
SCRIPT=postgres-restore
# @prelude  (backups/scripts/lib/prelude.sh is joined in here by backups/scripts.ts)

require BACKUP_DIR PGHOST
TARGET="${PGHOST}:${PGPORT:-5432}"
export PGDATABASE=postgres
from="${RESTORE_FROM:-}"
if [ -z "$from" ]; then
  from=$(latest) || true
  [ -n "$from" ] || die "no backup found in $BACKUP_DIR"
fi
case $from in /*) src=$from ;; *) src="$BACKUP_DIR/$from" ;; esac
[ -d "$src" ] || die "backup folder $src does not exist"
{ [ -f "$src/databases.tsv" ] && [ -f "$src/cluster.sql.gz" ]; } || die "$src is not a postgres-backup.sh folder (databases.tsv / cluster.sql.gz missing)"
log "restoring from $src"
verify_sums "$src"

log "connecting to PostgreSQL at $TARGET as '${PGUSER:-}'"
out=$(psql -X -A -t -v ON_ERROR_STOP=1 -c 'SELECT version()' 2>&1) || pg_fail "connection check" "$out"

if [ -n "${RESTORE_DATABASE:-}" ]; then
  db="$RESTORE_DATABASE"
  row=""
  while IFS="$TAB" read -r file name owner enc coll ctype; do
    if [ "$name" = "$db" ]; then row=y; break; fi
  done < "$src/databases.tsv"
  [ -n "$row" ] || die "backup $src has no dump of database '$db' (available: $(cut -f2 "$src/databases.tsv" | tr '\n' ' '))"
  log "single-database restore of '$db' from databases/$file"
  pg_restore_verified "$db" "$owner" "$enc" "$coll" "$ctype" "$src/databases/$file"
  log "database '$db' restored"
  exit 0
fi

log "full-cluster restore: verifying the backup before anything is changed"
out=$(gzip -t "$src/cluster.sql.gz" 2>&1) || die "cluster.sql.gz in $src is corrupt ($(oneline "$out")); nothing was changed"
gzip -dc "$src/cluster.sql.gz" | tail -n 5 | grep -q 'PostgreSQL database cluster dump complete' \
  || die "cluster.sql.gz in $src is incomplete (no 'PostgreSQL database cluster dump complete' line at its end); nothing was changed"
while IFS="$TAB" read -r file db owner enc coll ctype; do
  [ -n "$db" ] || continue
  out=$(pg_restore --list "$src/databases/$file" 2>&1 > /dev/null) || die "the dump of '$db' (databases/$file) is unreadable: $(oneline "$out"); nothing was changed"
done < "$src/databases.tsv"
log "backup verified (checksums, cluster dump complete, $(grep -c . "$src/databases.tsv") database dumps readable)"

work=$(mktemp -d)
aside="$work/aside.tsv"
: > "$aside"
stamp="$(date -u +%Y%m%d%H%M%S)_$$"
# While "postgres" may be renamed aside, administrative statements run on template1.
pg_admin_db=template1
created_postgres=false
fed=false
# Put back what was there: drop the databases the restore created, rename the originals back. Sets
# rolled: one sentence saying exactly what state the server is in.
rollback() {
  _dropfail=""
  while IFS="$TAB" read -r _file _db _rest; do
    [ -n "$_db" ] || continue
    if [ "$_db" = postgres ]; then [ "$created_postgres" = true ] || continue
    elif [ "$fed" != true ]; then continue; fi
    pg_drop "$_db" > /dev/null 2>&1 || _dropfail="$_dropfail '$_db'"
  done < "$src/databases.tsv"
  _back=""; _lost=""
  while IFS="$TAB" read -r _db _as; do
    if pg_rename "$_as" "$_db" > /dev/null 2>&1; then log "put back the original '$_db'"; _back="${_back:+$_back, }$_db"
    else _lost="${_lost:+$_lost; }the original '$_db' is in '$_as'"; fi
  done < "$aside"
  if [ -n "$_lost" ]; then
    rolled="NOT everything was put back: $_lost (rename it back by hand)${_dropfail:+; partly restored, not dropped:$_dropfail}"
  elif [ -n "$_back" ]; then
    rolled="every database that existed before is back as it was ($_back)${_dropfail:+; partly restored and not dropped:$_dropfail}"
  else
    rolled="no database of the dump existed before${_dropfail:+; partly restored and not dropped:$_dropfail}${_dropfail:-; the partly restored ones were dropped}"
  fi
}
trap 'rm -rf -- "$work"' EXIT

me=$(printf '%s\n' "SELECT current_user || E'\\t' || quote_ident(current_user)" | pg_sql 2>&1) || pg_fail "reading the role this restore connects as" "$me"
me_name=${me%%"$TAB"*}
me_ident=${me#*"$TAB"}

existing="$work/existing"
: > "$existing"
while IFS="$TAB" read -r file db owner enc coll ctype; do
  [ -n "$db" ] || continue
  if [ "$db" = postgres ]; then
    n=$(pg_db_tables postgres) || pg_fail "counting the tables of 'postgres'" "$n"
    [ "$n" -gt 0 ] || continue
    [ "${RESTORE_DROP_EXISTING:-false}" = true ] || die "the maintenance database 'postgres' holds $n user table(s); a full restore loads the dump's 'postgres' into it, adding its rows to the live ones; nothing was changed (set RESTORE_DROP_EXISTING=true to replace it)"
    printf '%s\n' "$db" >> "$existing"
    continue
  fi
  out=$(pg_db_exists "$db") || pg_fail "checking database '$db'" "$out"
  [ -n "$out" ] || continue
  [ "${RESTORE_DROP_EXISTING:-false}" = true ] || die "database '$db' already exists on $TARGET; nothing was changed (set RESTORE_DROP_EXISTING=true to replace it)"
  printf '%s\n' "$db" >> "$existing"
done < "$src/databases.tsv"
i=0
while IFS= read -r db; do
  i=$((i + 1))
  as="pre_restore_${stamp}_$i"
  log "renaming the existing database '$db' aside to '$as' (RESTORE_DROP_EXISTING=true; dropped only after a checked restore)"
  out=$(pg_rename "$db" "$as") || { rollback; pg_fail "renaming '$db' aside ($rolled)" "$out"; }
  printf '%s\t%s\n' "$db" "$as" >> "$aside"
  if [ "$db" = postgres ]; then
    while IFS="$TAB" read -r file name owner enc coll ctype; do [ "$name" = postgres ] && break; done < "$src/databases.tsv"
    log "creating an empty 'postgres' (owner $owner, template0) for the dump to load into"
    out=$(printf '%s\n' "CREATE DATABASE postgres WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
      | pg_sql -v owner="$owner" -v enc="$enc" -v coll="$coll" -v ctype="$ctype" 2>&1) || { rollback; pg_fail "creating an empty 'postgres' ($rolled)" "$out"; }
    created_postgres=true
  fi
done < "$existing"

errlog="$work/psql.err"
log "feeding cluster.sql.gz to psql"
rc=0
fed=true
log "the password of '$me_name' (the role this restore connects as) is kept as it is now; the dump's is not restored"
gzip -dc "$src/cluster.sql.gz" \
  | awk -v me="ALTER ROLE $me_ident WITH " 'index($0, me) == 1 { gsub(/ PASSWORD '"'"'[^'"'"']*'"'"'/, "") } { print }' \
  | psql -X -q -v ON_ERROR_STOP=0 -d postgres > /dev/null 2> "$errlog" || rc=$?
# Only the ERROR lines are shown: psql's LINE context could echo statements (e.g. password hashes).
unexpected=$(grep -E 'ERROR|FATAL|could not connect' "$errlog" | grep -vE 'ERROR: +role ".*" already exists' || true)
if [ "$rc" -ne 0 ] || [ -n "$unexpected" ]; then
  case $unexpected in *"could not connect"*|*"authentication failed"*|*FATAL*) rollback; pg_fail "full restore ($rolled)" "$unexpected" ;; esac
  printf '%s\n' "$unexpected" | head -n 20 >&2
  rollback
  die "full restore finished with $(printf '%s\n' "$unexpected" | grep -c . || true) unexpected error(s) (psql exit code $rc); see the lines above; $rolled"
fi
log "checking every restored database"
while IFS="$TAB" read -r file db owner enc coll ctype; do
  [ -n "$db" ] || continue
  want=$(pg_dump_tables "$src/databases/$file")
  got=$(pg_db_tables "$db") || { rollback; die "check failed: database '$db' is missing after the restore ($(oneline "$got")); $rolled"; }
  [ "$got" -ge "$want" ] || { rollback; die "check failed: database '$db' has $got tables after the restore, its dump lists $want; $rolled"; }
done < "$src/databases.tsv"
while IFS="$TAB" read -r db as; do
  out=$(pg_drop "$as") || log "WARNING: the previous copy of '$db' ('$as') could not be dropped ($(oneline "$out")); drop it by hand"
done < "$aside"
log "full-cluster restore complete ($(grep -c 'already exists' "$errlog" || true) expected 'role already exists' notices)"
