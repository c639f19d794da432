#!/usr/bin/env bash
# The postgres image's entrypoint contract (docker-library/postgres docker-entrypoint.sh), written
# here for the real node's image (tools/e2e/images/recipes.ts), for a start as a non-root user:
# - an option as the first argument starts `postgres` with it;
# - `postgres` on an empty PGDATA (default /var/lib/postgresql/data) first runs initdb as
#   POSTGRES_USER (default postgres) with POSTGRES_PASSWORD (required unless
#   POSTGRES_HOST_AUTH_METHOD=trust) and POSTGRES_INITDB_ARGS, lets every host in with
#   POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), creates POSTGRES_DB (default the user),
#   runs /docker-entrypoint-initdb.d/*.sh and *.sql on a server listening on the socket only, stops it;
# - listen_addresses is '*' (the published image sets it in postgresql.conf.sample; Debian's is
#   set by this image's recipe the same way).
# Not done: the switch from root to postgres (gosu; the program runs it as 999), *_FILE variables,
# *.sql.gz/xz/zst init files.
set -Eeo pipefail
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
  echo "this image's entrypoint does not switch from root to postgres: run it as uid 999" >&2
  exit 1
fi
: "${PGDATA:=/var/lib/postgresql/data}" "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
mkdir -p "$PGDATA"
chmod 700 "$PGDATA" 2>/dev/null || :
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    echo "Error: Database is uninitialized and superuser password is not specified (POSTGRES_PASSWORD)." >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "${POSTGRES_PASSWORD:-}") ${POSTGRES_INITDB_ARGS:-}
  printf '\nhost all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >> "$PGDATA/pg_hba.conf"
  PGUSER=$POSTGRES_USER PGPASSWORD=${POSTGRES_PASSWORD:-} pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p ${PGPORT:-5432}" -w start
  export PGUSER=$POSTGRES_USER PGPASSWORD=${POSTGRES_PASSWORD:-} PGHOST=/var/run/postgresql PGPORT=${PGPORT:-5432}
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db" ;'
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    # shellcheck disable=SC1090
    case $f in
      *.sh) if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
      *.sql) psql -v ON_ERROR_STOP=1 --dbname "$POSTGRES_DB" -f "$f" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  unset PGUSER PGPASSWORD PGHOST
fi
exec "$@"
