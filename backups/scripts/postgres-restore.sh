#!/bin/sh
# postgres-restore.sh - restore what postgres-backup.sh wrote (spec 8.3: "feed the dump into the
# client; for one database create it empty first").
#
#   RESTORE_DATABASE empty  -> full restore: cluster.sql.gz is fed to psql (roles, every database).
#                              Databases of the dump that already exist are refused unless
#                              RESTORE_DROP_EXISTING=true (then dropped WITH (FORCE) first).
#                              "role ... already exists" errors are expected and ignored (pg_dumpall
#                              output re-creates every role, including the one we connect as); any
#                              other SQL error makes the restore fail and is listed.
#   RESTORE_DATABASE=<name> -> single database: CREATE DATABASE (empty, template0, original owner,
#                              encoding and locale from databases.tsv), then pg_restore of its dump
#                              in one transaction. On failure the half-created database is dropped.
#
# Environment:
#   BACKUP_DIR             backup volume
#   RESTORE_FROM           backup folder name under BACKUP_DIR (or absolute path); default: newest
#   RESTORE_DATABASE       database to restore alone; empty = full-cluster restore
#   RESTORE_DROP_EXISTING  "true" to drop databases that already exist (default: refuse)
#   PGHOST PGPORT PGUSER PGPASSWORD(secret) PGSSLMODE  libpq connection (superuser)
set -eu
umask 077
SCRIPT=postgres-restore
# @prelude  (backups/scripts/lib/prelude.sh is joined in here by backups/scripts.ts)

# psql reading SQL from stdin, so that :"var" / :'var' quoting of names works.
sql() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
db_exists() { printf '%s\n' "SELECT 1 FROM pg_database WHERE datname = :'db'" | sql -v db="$1" 2>&1; }

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
[ -f "$src/databases.tsv" ] && [ -f "$src/cluster.sql.gz" ] || die "$src is not a postgres-backup.sh folder (databases.tsv / cluster.sql.gz missing)"
log "restoring from $src"
verify_sums "$src"

log "connecting to PostgreSQL at $TARGET as '${PGUSER:-}'"
out=$(psql -X -A -t -v ON_ERROR_STOP=1 -c 'SELECT version()' 2>&1) || pg_fail "connection check" "$out"

drop_or_refuse() { # $1 = database name
  out=$(db_exists "$1") || pg_fail "checking database '$1'" "$out"
  [ -n "$out" ] || return 0
  if [ "${RESTORE_DROP_EXISTING:-false}" = true ]; then
    log "dropping existing database '$1' (RESTORE_DROP_EXISTING=true)"
    out=$(printf '%s\n' 'DROP DATABASE :"db" WITH (FORCE)' | sql -v db="$1" 2>&1) || pg_fail "dropping database '$1'" "$out"
  else
    die "database '$1' already exists on $TARGET; drop it first or set RESTORE_DROP_EXISTING=true"
  fi
}

if [ -z "${RESTORE_DATABASE:-}" ]; then
  log "full-cluster restore"
  while IFS="$TAB" read -r file db owner enc coll ctype; do
    [ -n "$db" ] || continue
    [ "$db" = postgres ] && continue
    drop_or_refuse "$db"
  done < "$src/databases.tsv"
  gzip -t "$src/cluster.sql.gz" 2>/dev/null || die "cluster.sql.gz in $src is corrupt"
  errlog=$(mktemp)
  trap 'rm -f -- "$errlog"' EXIT
  log "feeding cluster.sql.gz to psql"
  rc=0
  gzip -dc "$src/cluster.sql.gz" | psql -X -q -v ON_ERROR_STOP=0 -d postgres > /dev/null 2> "$errlog" || rc=$?
  # Only the ERROR lines are shown: psql's LINE context could echo statements (e.g. password hashes).
  unexpected=$(grep -E 'ERROR|FATAL|could not connect' "$errlog" | grep -vE 'ERROR: +role ".*" already exists' || true)
  if [ "$rc" -ne 0 ] || [ -n "$unexpected" ]; then
    case $unexpected in *"could not connect"*|*"authentication failed"*|*FATAL*) pg_fail "full restore" "$unexpected" ;; esac
    printf '%s\n' "$unexpected" | head -n 20 >&2
    die "full restore finished with $(printf '%s\n' "$unexpected" | grep -c . || true) unexpected error(s) (psql exit code $rc); see the lines above"
  fi
  log "full-cluster restore complete ($(grep -c 'already exists' "$errlog" || true) expected 'role already exists' notices)"
  exit 0
fi

db="$RESTORE_DATABASE"
row=$(awk -F "$TAB" -v d="$db" '$2 == d { print; exit }' "$src/databases.tsv")
[ -n "$row" ] || die "backup $src has no dump of database '$db' (available: $(cut -f2 "$src/databases.tsv" | tr '\n' ' '))"
IFS="$TAB" read -r file _name owner enc coll ctype <<EOF
$row
EOF
log "single-database restore of '$db' from databases/$file"
drop_or_refuse "$db"
log "creating empty database '$db' (owner $owner, encoding $enc, template0)"
out=$(printf '%s\n' "CREATE DATABASE :\"db\" WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
  | sql -v db="$db" -v owner="$owner" -v enc="$enc" -v coll="$coll" -v ctype="$ctype" 2>&1) \
  || pg_fail "creating database '$db' (does role '$owner' exist? restore the full dump first)" "$out"
qdb=$(printf '%s' "$db" | sed "s/[\\\\']/\\\\&/g")
log "loading dump into '$db' (pg_restore, single transaction)"
if ! out=$(pg_restore --exit-on-error --single-transaction -d "dbname='$qdb'" "$src/databases/$file" 2>&1); then
  printf '%s\n' "DROP DATABASE IF EXISTS :\"db\"" | sql -v db="$db" > /dev/null 2>&1 || true
  pg_fail "loading the dump of '$db' (the new database was dropped again)" "$out"
fi
log "database '$db' restored"
