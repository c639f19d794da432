#!/bin/sh
# search-snapshot.sh - spec 8.3 "Search engine": on-demand snapshot through the snapshot API (4.5):
#   PUT $SEARCH_URL/_snapshot/<repository>/<snapshot>?wait_for_completion=true
# The snapshot lands in the registered snapshot repository (fs path.repo or S3), not in a local
# folder; its retention is the lifecycle policy's job (retention expire_after/min_count/max_count).
# Basic authentication (user elastic by default) is used when SEARCH_PASSWORD is set; with security
# disabled leave it empty. The credentials are handed to curl on stdin (-K -), never on its command
# line, and never printed.
#
# Environment:
#   SEARCH_URL           base URL, e.g. https://search-es-http.<ns>.svc:9200
#   SNAPSHOT_REPOSITORY  registered repository name
#   SNAPSHOT_NAME        optional; default snapshot-<yyyy.mm.dd-hhmmss> (UTC, lower case)
#   SNAPSHOT_INDICES     optional index pattern; default: the engine's default (all indices + global state)
#   SEARCH_USERNAME      default elastic
#   SEARCH_PASSWORD      password (secret); empty = security disabled, no authentication
#   SEARCH_CA_CERT       optional CA bundle file for https
#   SEARCH_TIMEOUT       seconds to wait for completion (default 3600)
set -eu
umask 077
SCRIPT=search-snapshot
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

# request METHOD PATH [BODY] -> sets $code, body in $resp

require SEARCH_URL SNAPSHOT_REPOSITORY
TIMEOUT="${SEARCH_TIMEOUT:-3600}"
case $TIMEOUT in ''|*[!0-9]*) die "SEARCH_TIMEOUT must be a number of seconds" ;; esac
NAME="${SNAPSHOT_NAME:-snapshot-$(date -u +%Y.%m.%d-%H%M%S)}"
printf '%s' "$SNAPSHOT_REPOSITORY" | grep -Eq '^[A-Za-z0-9][A-Za-z0-9._-]*$' || die "SNAPSHOT_REPOSITORY '$SNAPSHOT_REPOSITORY' has unexpected characters"
printf '%s' "$NAME" | grep -Eq '^[a-z0-9][a-z0-9._-]*$' || die "snapshot name '$NAME' must be lower case letters, digits, '.', '_' or '-'"
command -v curl > /dev/null 2>&1 || die "curl is not installed in this image"
body=""
if [ -n "${SNAPSHOT_INDICES:-}" ]; then
  case $SNAPSHOT_INDICES in *'"'*|*\\*) die "SNAPSHOT_INDICES must not contain quotes or backslashes" ;; esac
  body="{\"indices\": \"$SNAPSHOT_INDICES\"}"
fi

temp_folder "preparing the request"
tmp=$tmpd
trap 'rm -rf -- "$tmp"' EXIT
resp="$tmp/response.json"

STEP="snapshot $SNAPSHOT_REPOSITORY/$NAME"
log "taking snapshot $NAME in repository $SNAPSHOT_REPOSITORY at $(masked_url) (auth: $([ -n "${SEARCH_PASSWORD:-}" ] && echo "basic, user ${SEARCH_USERNAME:-elastic}" || echo none))"
request PUT "/_snapshot/$SNAPSHOT_REPOSITORY/$NAME?wait_for_completion=true" "$body"
[ "$code" = 200 ] || http_fail
state=$(json_field state "$resp")
case $state in
  SUCCESS) ;;
  PARTIAL) die "$STEP finished PARTIAL: some shards failed (see GET /_snapshot/$SNAPSHOT_REPOSITORY/$NAME)" ;;
  '') die "$STEP: unexpected response (no snapshot state): $(head -c 300 "$resp")" ;;
  *) die "$STEP finished in state $state" ;;
esac
shards=$(sed -n 's/.*"shards" *: *{\([^}]*\)}.*/\1/p' "$resp" | head -n 1)
log "snapshot $NAME: state SUCCESS${shards:+ (shards: $shards)}"
log "done"
