#!/bin/sh
# postgres-backup.sh - full-cluster dump plus one dump per database (spec 8.3, "Relational database").
#
# Layout written (one folder per run, renamed into place only when everything succeeded):
#   $BACKUP_DIR/<YYYY-MM-DDTHHMMSSZ>/
#     cluster.sql.gz        pg_dumpall (roles, tablespaces, every database), plain SQL, gzip
#     databases/<file>.dump pg_dump -Fc of each non-template database that accepts connections
#     databases.tsv         file <TAB> database <TAB> owner <TAB> encoding <TAB> collate <TAB> ctype
#     SHA256SUMS            checksums of the files above (checked by postgres-restore.sh)
# Work happens in $BACKUP_DIR/.partial-<stamp>-<pid>; on any failure it is removed and earlier
# backups are not touched. Retention (folders older than $RETENTION_DAYS days) runs only after success.
#
# Environment (all settings come from here; nothing is hard-coded):
#   BACKUP_DIR      directory on the backup volume (must exist)
#   RETENTION_DAYS  delete backup folders older than this many days (0 = keep everything)
#   PGHOST PGPORT PGUSER  server address and superuser (libpq variables)
#   PGPASSWORD      password (secret; read by libpq, never printed)
#   PGDATABASE      maintenance database used to list databases (default postgres)
#   PGSSLMODE       optional, passed through to libpq
set -eu
umask 077
SCRIPT=postgres-backup
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR RETENTION_DAYS PGHOST
check_retention
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
export PGDATABASE="${PGDATABASE:-postgres}"
TARGET="${PGHOST}:${PGPORT:-5432}"

new_backup_folder
doing="preparing"
# On any exit: remove the partial folder; a failure that did not say why (die) gets its cause printed.
trap 'rc=$?; rm -rf -- "$work"; [ "$rc" -eq 0 ] || [ -n "${DIED:-}" ] || warn "stopped with exit code $rc while $doing: $(write_cause "" "$BACKUP_DIR")"' EXIT
out=$(mkdir -p "$work/databases" 2>&1) || die "creating $work failed: $(write_cause "$out" "$BACKUP_DIR")"

log "connecting to PostgreSQL at $TARGET as '${PGUSER:-}'"
connect_check psql -X -A -t -v ON_ERROR_STOP=1 -c 'SELECT version()' || pg_fail "connection check" "$out"
log "server: $(oneline "$out")"
# Backups may overlap each other, never a restore of this server (refuses, naming the restore).
pg_lock shared

log "listing databases (templates excluded)"
# A TAB or line break in a name cannot be held by databases.tsv: such a database is only in the cluster
# dump, and the run says so at its end (exit 1) instead of failing every backup.
out=$(psql -X -A -t -v ON_ERROR_STOP=1 -F "$TAB" -c "SELECT datname, pg_get_userbyid(datdba), pg_encoding_to_char(encoding), datcollate, datctype FROM pg_database WHERE NOT datistemplate AND datallowconn AND datname !~ E'[\\t\\n\\r]' ORDER BY datname" 2>&1) \
  || pg_fail "listing databases" "$out"
unlisted=$(psql -X -A -t -v ON_ERROR_STOP=1 -c "SELECT string_agg(quote_literal(datname), ', ' ORDER BY datname) FROM pg_database WHERE NOT datistemplate AND datallowconn AND datname ~ E'\\t' AND datname !~ E'[\\n\\r]'" 2>&1) \
  || pg_fail "listing databases" "$unlisted"
doing="writing the database list"
printf '%s\n' "$out" > "$work/list.tsv" || die "writing $work/list.tsv failed: $(write_cause "" "$BACKUP_DIR")"
log "databases: $(cut -f1 "$work/list.tsv" | tr '\n' ' ')"

# pg_dumpall refuses the whole run for a database whose name has a line break (it cannot put that name
# on pg_dump's command line). Such databases are left out of the cluster dump (--exclude-database with a
# pattern that matches exactly that name), so that every other database is backed up, and the run fails
# at its end naming them. The pattern is built by the server: quoted text, with each line break as a
# bracket expression outside the quotes (psql pattern rules; a bracket expression matches only that byte).
nl_count=$(psql -X -A -t -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM pg_database WHERE datallowconn AND datname ~ E'[\\n\\r]'" 2>&1) \
  || pg_fail "listing databases" "$nl_count"
set --
j=0
while [ "$j" -lt "$nl_count" ]; do
  pat=$(psql -X -A -t -v ON_ERROR_STOP=1 -c "SELECT '\"' || replace(replace(replace(datname, '\"', '\"\"'), E'\\n', E'\"[\\n]\"'), E'\\r', E'\"[\\r]\"') || '\"x' FROM pg_database WHERE datallowconn AND datname ~ E'[\\n\\r]' ORDER BY datname OFFSET $j LIMIT 1" 2>&1) \
    || pg_fail "listing databases" "$pat"
  set -- "$@" "--exclude-database=${pat%x}"
  j=$((j + 1))
done
if [ "$nl_count" -gt 0 ]; then
  nl_names=$(psql -X -A -t -v ON_ERROR_STOP=1 -c "SELECT string_agg(replace(replace(quote_literal(datname), E'\\n', '\\n'), E'\\r', '\\r'), ', ' ORDER BY datname) FROM pg_database WHERE datallowconn AND datname ~ E'[\\n\\r]'" 2>&1) \
    || pg_fail "listing databases" "$nl_names"
  log "WARNING: left out of the cluster dump (pg_dumpall cannot dump a name with a line break): $nl_names"
fi
log "full-cluster dump (pg_dumpall) -> cluster.sql.gz"
# Errors are kept in memory, not in a file: on a full disk a file of errors would be empty.
doing="running pg_dumpall"
out=$(pg_dumpall "$@" -f "$work/cluster.sql" 2>&1) || pg_fail "pg_dumpall" "$(write_cause "$out" "$BACKUP_DIR")"
doing="compressing cluster.sql"
out=$(gzip -6 "$work/cluster.sql" 2>&1) || die "compressing cluster.sql failed: $(write_cause "$out" "$BACKUP_DIR")"

doing="dumping each database"
: > "$work/databases.tsv" || die "writing $work/databases.tsv failed: $(write_cause "" "$BACKUP_DIR")"
i=0
while IFS="$TAB" read -r db owner enc coll ctype; do
  [ -n "$db" ] || continue
  i=$((i + 1))
  # Safe file name: the database name when it is plain, otherwise a numbered name (mapping kept in databases.tsv).
  case $db in
    *[!A-Za-z0-9._-]*|.*) file="db-$i.dump" ;;
    *) file="$db.dump" ;;
  esac
  log "dumping database '$db' (pg_dump -Fc) -> databases/$file"
  out=$(PGDATABASE="$db" pg_dump -Fc -f "$work/databases/$file" 2>&1) || pg_fail "pg_dump of database '$db'" "$(write_cause "$out" "$BACKUP_DIR")"
  out=$(pg_restore -l "$work/databases/$file" 2>&1 > /dev/null) || die "dump of '$db' is unreadable: $(oneline "$out")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$file" "$db" "$owner" "$enc" "$coll" "$ctype" >> "$work/databases.tsv"
done < "$work/list.tsv"
rm -f "$work/list.tsv"
doing="writing checksums"

write_sums "$work"
fsync_tree "$work"
publish_backup_folder || die "could not move the finished backup into place ($final): $(oneline "$publish_err")"
sync "$BACKUP_DIR" 2>/dev/null || true
log "backup complete: $final ($(du -sk "$final" | cut -f1) KiB, $i database dumps + cluster dump)"

# A database that could not be backed up: an older backup may be the last one that holds it (from before
# it got its name), so there is no retention in this run.
if [ -n "${nl_names:-}" ]; then
  die "database $(oneline "$nl_names") has a line break in its name, which pg_dumpall cannot dump: it is NOT in this backup (rename it to back it up); the backup $final of every other database is complete; no retention this run${unlisted:+; also only in cluster.sql.gz (a TAB in the name, no per-database dump): $(oneline "$unlisted")}"
fi
# Retention: only after a successful dump; only our own dated folders (and stale partial folders).
retention
if [ -n "$unlisted" ]; then
  die "database $(oneline "$unlisted") has a TAB or newline in its name, which databases.tsv cannot hold: it is only in cluster.sql.gz (rename it to get a per-database dump); the backup $final of everything else is complete"
fi
log "done"
