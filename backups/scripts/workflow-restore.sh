#!/bin/sh
# workflow-restore.sh - import a workflow-backup.sh folder (spec 8.3 "Workflow tool": import).
#
#   The mode is taken from the backup folder (workflow-db.dump => database, workflows.json => cli).
#   database: the tool's database (PGDATABASE) is created empty (owner/encoding/locale of the
#     original, template0) and the dump is loaded with pg_restore in one transaction. An existing
#     database is refused unless RESTORE_DROP_EXISTING=true. Scale the workflow tool (main and
#     workers) to 0 first; start it afterwards. Needs a role allowed to create/drop databases.
#   cli: $WF_CLI import:credentials --input=credentials.json (when present), then
#     $WF_CLI import:workflow --input=workflows.json; restart the workflow tool afterwards.
#     The credentials only decrypt with the same encryption key as the exporting instance.
#
# Environment:
#   BACKUP_DIR RESTORE_FROM (folder name or absolute path; default newest)
#   RESTORE_DROP_EXISTING ("true" to replace an existing database; database mode)
#   database mode: PGHOST PGPORT PGUSER PGPASSWORD(secret) PGDATABASE PGSSLMODE
#   cli mode: WF_CLI (default n8n)
set -eu
umask 077
SCRIPT=workflow-restore
# @prelude  (backups/scripts/lib/prelude.sh is joined in here by backups/scripts.ts)

require BACKUP_DIR
from="${RESTORE_FROM:-}"
if [ -z "$from" ]; then
  from=$(latest) || true
  [ -n "$from" ] || die "no backup found in $BACKUP_DIR"
fi
case $from in /*) src=$from ;; *) src="$BACKUP_DIR/$from" ;; esac
[ -d "$src" ] || die "backup folder $src does not exist"
verify_sums "$src"

if [ -f "$src/workflow-db.dump" ]; then
  require PGHOST PGDATABASE
  db="$PGDATABASE"
  TARGET="${PGHOST}:${PGPORT:-5432}"
  export PGDATABASE=postgres
  sql() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
  IFS="$TAB" read -r _orig owner enc coll ctype < "$src/database.tsv"
  log "database mode: restoring $src/workflow-db.dump into '$db' at $TARGET"
  out=$(printf '%s\n' "SELECT 1 FROM pg_database WHERE datname = :'db'" | sql -v db="$db" 2>&1) || pg_fail "connection check" "$out"
  if [ -n "$out" ]; then
    [ "${RESTORE_DROP_EXISTING:-false}" = true ] || die "database '$db' already exists on $TARGET; stop the workflow tool and set RESTORE_DROP_EXISTING=true to replace it"
    log "dropping existing database '$db' (RESTORE_DROP_EXISTING=true)"
    out=$(printf '%s\n' 'DROP DATABASE :"db" WITH (FORCE)' | sql -v db="$db" 2>&1) || pg_fail "dropping database '$db'" "$out"
  fi
  log "creating empty database '$db' (owner $owner, template0)"
  out=$(printf '%s\n' "CREATE DATABASE :\"db\" WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
    | sql -v db="$db" -v owner="$owner" -v enc="$enc" -v coll="$coll" -v ctype="$ctype" 2>&1) || pg_fail "creating database '$db'" "$out"
  qdb=$(printf '%s' "$db" | sed "s/[\\\\']/\\\\&/g")
  log "loading the dump (pg_restore, single transaction)"
  if ! out=$(pg_restore --exit-on-error --single-transaction -d "dbname='$qdb'" "$src/workflow-db.dump" 2>&1); then
    printf '%s\n' 'DROP DATABASE IF EXISTS :"db"' | sql -v db="$db" > /dev/null 2>&1 || true
    pg_fail "loading the dump into '$db' (the new database was dropped again)" "$out"
  fi
  log "database '$db' restored; start the workflow tool now"
elif [ -f "$src/workflows.json" ]; then
  WF_CLI="${WF_CLI:-n8n}"
  command -v "$WF_CLI" > /dev/null 2>&1 || die "workflow CLI '$WF_CLI' not found (WF_CLI); cli restores must run in the workflow tool's image"
  if [ -f "$src/credentials.json" ]; then
    log "cli mode: importing credentials"
    out=$("$WF_CLI" import:credentials --input="$src/credentials.json" 2>&1) || die "credentials import ($WF_CLI import:credentials) failed: $(oneline "$out" | tail -c 500)"
  fi
  log "cli mode: importing workflows"
  out=$("$WF_CLI" import:workflow --input="$src/workflows.json" 2>&1) || die "workflow import ($WF_CLI import:workflow) failed: $(oneline "$out" | tail -c 500)"
  log "import complete; restart the workflow tool so it picks up the imported workflows"
else
  die "$src is not a workflow-backup.sh folder (neither workflow-db.dump nor workflows.json)"
fi
