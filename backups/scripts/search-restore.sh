#!/bin/sh
# search-restore.sh - spec 8.3 "Search engine": restore call (4.5):
#   POST $SEARCH_URL/_snapshot/<repository>/<snapshot>/_restore?wait_for_completion=true
#   body {"indices": "<RESTORE_INDICES>"}
# An open index with the same name blocks the restore: delete (DELETE /<index>) or close it first.
#
# Environment:
#   SEARCH_URL SNAPSHOT_REPOSITORY    as for search-snapshot.sh
#   SNAPSHOT_NAME                     snapshot to restore (required; list: GET /_snapshot/<repo>/*?verbose=false)
#   RESTORE_INDICES                   index pattern to restore, e.g. "logs-*" (required, deliberate)
#   SEARCH_USERNAME SEARCH_PASSWORD(secret) SEARCH_CA_CERT SEARCH_TIMEOUT
set -eu
umask 077
SCRIPT=search-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require SEARCH_URL SNAPSHOT_REPOSITORY SNAPSHOT_NAME RESTORE_INDICES
TIMEOUT="${SEARCH_TIMEOUT:-3600}"
case $TIMEOUT in ''|*[!0-9]*) die "SEARCH_TIMEOUT must be a number of seconds" ;; esac
printf '%s' "$SNAPSHOT_REPOSITORY" | grep -Eq '^[A-Za-z0-9][A-Za-z0-9._-]*$' || die "SNAPSHOT_REPOSITORY '$SNAPSHOT_REPOSITORY' has unexpected characters"
printf '%s' "$SNAPSHOT_NAME" | grep -Eq '^[a-z0-9][a-z0-9._-]*$' || die "SNAPSHOT_NAME '$SNAPSHOT_NAME' has unexpected characters"
case $RESTORE_INDICES in *'"'*|*\\*) die "RESTORE_INDICES must not contain quotes or backslashes" ;; esac
command -v curl > /dev/null 2>&1 || die "curl is not installed in this image"

temp_folder "preparing the request"
tmp=$tmpd
trap 'rm -rf -- "$tmp"' EXIT
resp="$tmp/response.json"

STEP="restore of $SNAPSHOT_REPOSITORY/$SNAPSHOT_NAME"
log "restoring indices '$RESTORE_INDICES' from snapshot $SNAPSHOT_NAME (repository $SNAPSHOT_REPOSITORY) at $(masked_url)"
request POST "/_snapshot/$SNAPSHOT_REPOSITORY/$SNAPSHOT_NAME/_restore?wait_for_completion=true" "{\"indices\": \"$RESTORE_INDICES\"}"
[ "$code" = 200 ] || http_fail
failed=$(sed -n 's/.*"failed" *: *\([0-9][0-9]*\).*/\1/p' "$resp" | head -n 1)
[ -n "$failed" ] || die "$STEP: unexpected response: $(head -c 300 "$resp")"
[ "$failed" = 0 ] || die "$STEP: $failed shard(s) failed to restore"
indices=$(sed -n 's/.*"indices" *: *\[\([^]]*\)\].*/\1/p' "$resp" | head -n 1)
log "restore complete; indices: ${indices:-none}"
