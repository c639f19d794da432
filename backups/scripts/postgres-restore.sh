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
#   RESTORE_ROLE_PASSWORDS    "true" to set the passwords of roles that exist to the dump's (default: keep the
#                             current ones; the connecting role always keeps its own)
#   RESTORE_ALLOW_UNVERIFIED  "true" to restore a folder that has no SHA256SUMS (default: refuse)
#   PGHOST PGPORT PGUSER PGPASSWORD(secret) PGSSLMODE  libpq connection (superuser)
set -eu
umask 077
SCRIPT=postgres-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR PGHOST
bool_settings RESTORE_DROP_EXISTING RESTORE_ROLE_PASSWORDS RESTORE_ALLOW_UNVERIFIED
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
# One backup or restore of this server at a time (refuses, naming the holder, before anything changes).
pg_lock exclusive
# Databases an earlier restore left behind when it was killed (the originals it had renamed aside, or its
# scratch copies): named now, and a run that finds them never calls itself complete.
leftovers=$(printf '%s\n' "SELECT string_agg(quote_literal(datname) || coalesce(' (' || shobj_description(oid, 'pg_database') || ')', ''), ', ' ORDER BY datname) FROM pg_database WHERE datname ~ '^(pre_restore|restore)_[0-9]{14}_[0-9]+'" | pg_sql 2>&1) \
  || pg_fail "looking for databases left by an earlier restore" "$leftovers"
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
gzip -dc "$src/cluster.sql.gz" | tail -n 5 | grep -q 'PostgreSQL database cluster dump complete' \
  || die "cluster.sql.gz in $src is incomplete (no 'PostgreSQL database cluster dump complete' line at its end); nothing was changed"
while IFS="$TAB" read -r file db owner enc coll ctype; do
  [ -n "$db" ] || continue
  out=$(pg_restore --list "$src/databases/$file" 2>&1 > /dev/null) || die "the dump of '$db' (databases/$file) is unreadable: $(oneline "$out"); nothing was changed"
done < "$src/databases.tsv"

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
# The databases the feed writes into are the ones the dump itself connects to (its \connect lines outside
# COPY data), not databases.tsv: a name with a TAB is in the dump but cannot be in databases.tsv, and a
# database of the dump that is not renamed aside would have the dump's rows added to its own. template1
# is a template: the dump only sets its grants and comments.
dbs="$work/dump.dbs"
gzip -dc "$src/cluster.sql.gz" | awk '
  /^COPY .* FROM stdin;$/ { copy = 1; next }
  copy { if ($0 == "\\.") copy = 0; next }
  index($0, "\\connect ") == 1 {
    s = substr($0, 10)
    if (index(s, "-reuse-previous=on \"") == 1) {
      s = substr(s, 21); sub(/"$/, "", s); gsub(/""/, "\"", s)
      s = substr(s, 9); sub(/'"'"'$/, "", s)
      o = ""; while ((i = index(s, "\\")) > 0) { o = o substr(s, 1, i - 1) substr(s, i + 1, 1); s = substr(s, i + 2) }
      s = o s
    }
    if (s != "template1" && !(s in seen)) { seen[s] = 1; print s }
  }' > "$dbs" || die "reading the list of databases from cluster.sql.gz failed; nothing was changed"
in_dump() { while IFS= read -r _d; do [ "$_d" != "$1" ] || return 0; done < "$dbs"; return 1; }
tsv_file() { while IFS="$TAB" read -r _f _d _rest; do [ "$_d" != "$1" ] || { printf '%s' "$_f"; return 0; }; done < "$src/databases.tsv"; }
while IFS="$TAB" read -r file db rest; do
  [ -n "$db" ] || continue
  in_dump "$db" || die "databases.tsv lists '$db', but cluster.sql.gz does not hold it; nothing was changed"
done < "$src/databases.tsv"
grep -qx postgres "$dbs" || printf '%s\n' postgres >> "$dbs"
dbnames=$(while IFS= read -r d; do printf '%s, ' "$d"; done < "$dbs"); dbnames=${dbnames%, }
log "backup verified (checksums, cluster dump complete, $(grep -c . "$src/databases.tsv") database dumps readable); the dump holds $(grep -c . "$dbs") databases: $dbnames"
while IFS= read -r d; do
  [ -n "$(tsv_file "$d")" ] || log "'$d' is in the cluster dump only (no per-database dump: a TAB in its name); its tables are not counted against one"
done < "$dbs"

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
  while IFS= read -r _db; do
    if [ "$_db" = postgres ]; then [ "$created_postgres" = true ] || continue
    elif [ "$fed" != true ]; then continue; fi
    # only what this restore made: a database renamed aside and re-created, or one that did not exist before
    in_aside "$_db" || [ "$_db" = postgres ] || ! grep -qFx -- "$_db" "$work/before" || continue
    pg_drop "$_db" > /dev/null 2>&1 || _dropfail="$_dropfail '$_db'"
  done < "$dbs"
  _back=""; _lost=""
  while IFS="$TAB" read -r _as _comment _db; do
    _comment=${_comment#c:}
    if pg_rename "$_as" "$_db" > /dev/null 2>&1; then
      log "put back the original '$_db'"; _back="${_back:+$_back, }$_db"
      pg_set_comment "$_db" "$_comment"
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
# aside.tsv: copy <TAB> c:<comment> <TAB> original name (last: a name may hold a TAB).
in_aside() { while IFS="$TAB" read -r _as _c _a; do [ "$_a" != "$1" ] || return 0; done < "$aside"; return 1; }

me=$(printf '%s\n' "SELECT current_user || E'\\t' || quote_ident(current_user)" | pg_sql 2>&1) || pg_fail "reading the role this restore connects as" "$me"
me_name=${me%%"$TAB"*}
me_ident=${me#*"$TAB"}

existing="$work/existing"
: > "$existing"
out=$(printf '%s\n' "SELECT datname FROM pg_database WHERE datname !~ E'[\\n\\r]'" | pg_sql 2>&1) || pg_fail "listing the databases" "$out"
printf '%s\n' "$out" > "$work/before"
while IFS= read -r db; do
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
done < "$dbs"
i=0
while IFS= read -r db; do
  i=$((i + 1))
  as="pre_restore_${stamp}_$i"
  log "renaming the existing database '$db' aside to '$as' (RESTORE_DROP_EXISTING=true; dropped only after a checked restore)"
  comment=$(printf '%s\n' "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = :'db'" | pg_sql -v db="$db" 2>&1) || comment=""
  out=$(pg_rename "$db" "$as") || { rollback; pg_fail "renaming '$db' aside ($rolled)" "$out"; }
  printf '%s\tc:%s\t%s\n' "$as" "$(oneline "$comment")" "$db" >> "$aside"
  # Says what it holds, for whoever finds it after this run was killed.
  pg_set_comment "$as" "holds the original of '$db', renamed aside by $SCRIPT pid $$ at $(ts)"
  if [ "$db" = postgres ]; then
    while IFS="$TAB" read -r file name owner enc coll ctype; do [ "$name" = postgres ] && break; done < "$src/databases.tsv"
    log "creating an empty 'postgres' (owner $owner, template0) for the dump to load into"
    out=$(printf '%s\n' "CREATE DATABASE postgres WITH OWNER :\"owner\" TEMPLATE template0 ENCODING :'enc' LC_COLLATE :'coll' LC_CTYPE :'ctype'" \
      | pg_sql -v owner="$owner" -v enc="$enc" -v coll="$coll" -v ctype="$ctype" 2>&1) || { rollback; pg_fail "creating an empty 'postgres' ($rolled)" "$out"; }
    created_postgres=true
  fi
done < "$existing"

# Roles: the dump re-creates every role and sets its attributes. A role that exists keeps its current
# password unless RESTORE_ROLE_PASSWORDS=true (after a rotation the dump's older one would lock its
# applications out); the role this restore connects as always keeps its own (psql reconnects for each
# database, and its Secret holds the current one). Roles the dump creates get the dump's password.
# A role name may hold a line break: its ALTER ROLE statement then spans lines. Role names are compared
# (and shown) as quoted identifiers with line breaks written \n and \r.
out=$(printf '%s\n' "SELECT replace(replace(quote_ident(rolname), E'\\n', '\\n'), E'\\r', '\\r') FROM pg_roles" | pg_sql 2>&1) || pg_fail "listing the roles" "$out"
printf '%s\n' "$out" > "$work/roles.now"
: > "$work/roles.kept"; : > "$work/roles.set"; : > "$work/roles.created"
errlog="$work/psql.err"
log "feeding cluster.sql.gz to psql"
rc=0
fed=true
gzip -dc "$src/cluster.sql.gz" \
  | awk -v me="$me_ident" -v setpw="${RESTORE_ROLE_PASSWORDS:-false}" -v now="$work/roles.now" -v kept="$work/roles.kept" -v set="$work/roles.set" -v created="$work/roles.created" '
      function enc(s,   o, i) { o = ""; while ((i = index(s, "\n")) > 0) { o = o substr(s, 1, i - 1) "\\n"; s = substr(s, i + 1) } s = o s
        o = ""; while ((i = index(s, "\r")) > 0) { o = o substr(s, 1, i - 1) "\\r"; s = substr(s, i + 1) } return o s }
      BEGIN { while ((getline l < now) > 0) have[l] = 1 }
      !body && index($0, "\\connect ") == 1 { body = 1 }
      !body && pend != "" { $0 = pend "\n" $0; pend = "" }
      !body && index($0, "ALTER ROLE ") == 1 && !index($0, " WITH ") { pend = $0; next }
      !body && index($0, "ALTER ROLE ") == 1 {
        w = index($0, " WITH "); r = enc(substr($0, 12, w - 12))
        if (!(r in have)) print r > created
        else if (r == me || setpw != "true") { gsub(/ PASSWORD '"'"'[^'"'"']*'"'"'/, ""); print r > kept }
        else if (index($0, " PASSWORD ")) print r > set
        else print r > kept
      }
      { print }
      END { if (pend != "") print pend }' \
  | psql -X -q -v ON_ERROR_STOP=0 -d postgres > /dev/null 2> "$errlog" || rc=$?
names() { _l=""; while IFS= read -r _r; do _l="${_l:+$_l, }$_r"; done < "$1"; printf '%s' "$_l"; }
log "the password of '$me_name' (the role this restore connects as) is kept as it is now; the dump's is not restored"
[ ! -s "$work/roles.kept" ] || log "roles of the dump that exist: $(names "$work/roles.kept"): attributes and memberships set from the dump, current passwords kept (RESTORE_ROLE_PASSWORDS=true sets the dump's)"
[ ! -s "$work/roles.set" ] || log "roles of the dump that exist, passwords set from the dump (RESTORE_ROLE_PASSWORDS=true): $(names "$work/roles.set")"
[ ! -s "$work/roles.created" ] || log "roles created from the dump, with the dump's passwords: $(names "$work/roles.created")"
# Only the ERROR lines are shown: psql's LINE context could echo statements (e.g. password hashes).
# A message about a name with a line break spans lines: continuation lines are joined (as \n) first.
unexpected=$(awk '/^(psql|ERROR|FATAL|WARNING|NOTICE|DETAIL|HINT|LINE|CONTEXT|QUERY)[: ]/ { if (NR > 1) print m; m = $0; next } { m = m "\\n" $0 } END { if (NR) print m }' "$errlog" \
  | grep -E 'ERROR|FATAL|could not connect' | grep -vE 'ERROR: +role ".*" already exists' || true)
if [ "$rc" -ne 0 ] || [ -n "$unexpected" ]; then
  case $unexpected in *"could not connect"*|*"authentication failed"*|*FATAL*) rollback; pg_fail "full restore ($rolled)" "$unexpected" ;; esac
  printf '%s\n' "$unexpected" | head -n 20 >&2
  rollback
  die "full restore finished with $(printf '%s\n' "$unexpected" | grep -c . || true) unexpected error(s) (psql exit code $rc); see the lines above; $rolled"
fi
log "checking every restored database"
while IFS= read -r db; do
  file=$(tsv_file "$db")
  got=$(pg_db_tables "$db") || { rollback; die "check failed: database '$db' is missing after the restore ($(oneline "$got")); $rolled"; }
  [ -n "$file" ] || continue
  want=$(pg_dump_tables "$src/databases/$file")
  [ "$got" -ge "$want" ] || { rollback; die "check failed: database '$db' has $got tables after the restore, its dump lists $want; $rolled"; }
done < "$dbs"
while IFS="$TAB" read -r as comment db; do
  out=$(pg_drop "$as") || log "WARNING: the previous copy of '$db' ('$as') could not be dropped ($(oneline "$out")); drop it by hand"
done < "$aside"
[ -z "$leftovers" ] || die "every database of the dump was restored and checked ($dbnames), but $leftover_note"
log "full-cluster restore complete: $(grep -c . "$dbs") databases of the dump restored ($dbnames); $(grep -c 'already exists' "$errlog" || true) expected 'role already exists' notices"
