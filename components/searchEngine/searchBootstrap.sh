#!/bin/sh
# searchBootstrap.sh - prepares the search engine's snapshots (spec 2.10, 4.5, 8.3):
#   PUT  /_snapshot/<repo>          create the snapshot repository (repository.json)
#   POST /_snapshot/<repo>/_verify  fail unless the response lists nodes (spec 7)
#   POST /_security/role/<role>     the backup role (role.json; only when security is on)
#   PUT  /_slm/policy/<id>          the snapshot lifecycle policy (policy.json)
# Every call is idempotent (the same body replaces the same object), so it may run again at any
# time. On-demand snapshots and restores use backups/scripts/search-snapshot.sh / search-restore.sh.
#
# Environment:
#   SEARCH_URL        base URL of the search engine, e.g. http://search.search.svc.cluster.local:9200
#   SEARCH_USERNAME   user of basic authentication (default elastic); used only with SEARCH_PASSWORD
#   SEARCH_PASSWORD   password (secret, from a Secret); unset when security is off. It reaches curl
#                     through a config on stdin, never on a command line or in a log line.
#   SNAPSHOT_REPOSITORY  snapshot repository name
#   BODIES_DIR        directory with repository.json, policy.json and (security on) role.json
#   ROLE              backup role name (required with role.json)
#   POLICY_ID         lifecycle policy id
#   WAIT_TIMEOUT      seconds to wait for the search engine to answer (default 300)
set -eu
umask 077
SCRIPT=search-bootstrap

ts() { date -u +%Y-%m-%dT%H:%M:%SZ; }
log() { printf '%s [%s] %s\n' "$(ts)" "$SCRIPT" "$*"; }
die() { printf '%s [%s] ERROR: %s\n' "$(ts)" "$SCRIPT" "$*" >&2; exit 1; }
require() {
  for _v in "$@"; do
    eval "_val=\${$_v:-}"
    [ -n "$_val" ] || die "required environment variable $_v is not set"
  done
}

require SEARCH_URL SNAPSHOT_REPOSITORY BODIES_DIR POLICY_ID
REPOSITORY=$SNAPSHOT_REPOSITORY
SEARCH_URL=${SEARCH_URL%/}
WAIT_TIMEOUT=${WAIT_TIMEOUT:-300}
case $WAIT_TIMEOUT in *[!0-9]*|'') die "WAIT_TIMEOUT must be a whole number of seconds, got '$WAIT_TIMEOUT'" ;; esac
WORK=$(mktemp -d)
trap 'rm -rf -- "$WORK"' EXIT

# curl reads the credentials from this config on stdin (printf is a shell builtin: no process
# argument ever carries the password).
auth_config() {
  if [ -n "${SEARCH_PASSWORD:-}" ]; then
    _esc=$(printf '%s' "${SEARCH_USERNAME:-elastic}:$SEARCH_PASSWORD" | sed 's/[\\"]/\\&/g')
    printf 'user = "%s"\n' "$_esc"
  fi
}

# call METHOD PATH [BODY_FILE]: the response body goes to $WORK/response, the status to $STATUS.
call() {
  _method=$1 _path=$2 _body=${3:-}
  if [ -n "$_body" ]; then
    STATUS=$(auth_config | curl -sS -K - -o "$WORK/response" -w '%{http_code}' -X "$_method" \
      -H 'Content-Type: application/json' --data-binary "@$_body" "$SEARCH_URL$_path" 2>"$WORK/curl.err") || STATUS=000
  else
    STATUS=$(auth_config | curl -sS -K - -o "$WORK/response" -w '%{http_code}' -X "$_method" \
      "$SEARCH_URL$_path" 2>"$WORK/curl.err") || STATUS=000
  fi
}

# must METHOD PATH [BODY_FILE]: call, and stop unless the answer is 2xx.
must() {
  call "$@"
  case $STATUS in
    2??) ;;
    000) die "$1 $2: the search engine at $SEARCH_URL is unreachable: $(tr '\n' ' ' <"$WORK/curl.err")" ;;
    401) die "$1 $2: HTTP 401, authentication failed for user '${SEARCH_USERNAME:-elastic}' (check the password Secret)" ;;
    *) die "$1 $2: HTTP $STATUS: $(head -c 2000 "$WORK/response" | tr '\n' ' ')" ;;
  esac
}

wait_for_engine() {
  _deadline=$(( $(date +%s) + WAIT_TIMEOUT ))
  while :; do
    call GET "/_cluster/health?wait_for_status=yellow&timeout=10s"
    case $STATUS in
      2??) log "search engine at $SEARCH_URL answers"; return 0 ;;
      401) die "GET /_cluster/health: HTTP 401, authentication failed for user '${SEARCH_USERNAME:-elastic}'" ;;
    esac
    [ "$(date +%s)" -lt "$_deadline" ] || die "the search engine at $SEARCH_URL did not answer within ${WAIT_TIMEOUT}s (last status $STATUS)"
    sleep 5
  done
}

bootstrap() {
  for _f in repository.json policy.json; do
    [ -f "$BODIES_DIR/$_f" ] || die "$BODIES_DIR/$_f is missing"
  done
  wait_for_engine

  must PUT "/_snapshot/$REPOSITORY" "$BODIES_DIR/repository.json"
  log "repository $REPOSITORY created or updated"

  must POST "/_snapshot/$REPOSITORY/_verify"
  # A usable repository answers {"nodes":{"<id>":{...},...}}; no nodes means unusable (spec 7).
  if ! tr -d ' \t\r\n' <"$WORK/response" | grep -q '"nodes":{"'; then
    die "repository $REPOSITORY is not usable: the verify response lists no nodes: $(head -c 2000 "$WORK/response" | tr '\n' ' ')"
  fi
  log "repository $REPOSITORY verified"

  if [ -f "$BODIES_DIR/role.json" ]; then
    require ROLE
    must POST "/_security/role/$ROLE" "$BODIES_DIR/role.json"
    log "role $ROLE created or updated"
  fi

  must PUT "/_slm/policy/$POLICY_ID" "$BODIES_DIR/policy.json"
  log "lifecycle policy $POLICY_ID created or updated"
}

bootstrap
