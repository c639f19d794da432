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

ts() { date -u +%Y-%m-%dT%H:%M:%SZ; }
log() { printf '%s [%s] %s\n' "$(ts)" "$SCRIPT" "$*"; }
die() { printf '%s [%s] ERROR: %s\n' "$(ts)" "$SCRIPT" "$*" >&2; exit 1; }
oneline() { printf '%s' "$1" | tr '\r\n\t' '   ' | sed 's/  */ /g'; }
require() {
  for _v in "$@"; do
    eval "_val=\${$_v:-}"
    [ -n "$_val" ] || die "required environment variable $_v is not set"
  done
}
cfg_escape() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
masked_url() { printf '%s' "$SEARCH_URL" | sed 's#//[^/@]*@#//***@#'; }
json_field() { sed -n "s/.*\"$1\" *: *\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n 1; }
request() {
  _body=${3:-}
  {
    if [ -n "${SEARCH_PASSWORD:-}" ]; then
      printf 'user = "%s"\n' "$(cfg_escape "${SEARCH_USERNAME:-elastic}:$SEARCH_PASSWORD")"
    fi
    [ -n "${SEARCH_CA_CERT:-}" ] && printf 'cacert = "%s"\n' "$(cfg_escape "$SEARCH_CA_CERT")"
    [ -n "$_body" ] && printf 'data-binary = "%s"\n' "$(cfg_escape "$_body")"
    printf 'url = "%s"\n' "$(cfg_escape "${SEARCH_URL%/}$2")"
  } > "$tmp/curl.cfg"
  rc=0
  code=$(curl -sS -K - -X "$1" -H 'Content-Type: application/json' --max-time "$TIMEOUT" -o "$resp" -w '%{http_code}' < "$tmp/curl.cfg" 2> "$tmp/err") || rc=$?
  rm -f "$tmp/curl.cfg"
  if [ "$rc" -ne 0 ]; then
    case $rc in
      6|7) die "$STEP: search engine unreachable at $(masked_url) (curl exit $rc: $(oneline "$(cat "$tmp/err")"))" ;;
      28) die "$STEP: no answer from $(masked_url) within ${TIMEOUT}s (SEARCH_TIMEOUT)" ;;
      35|51|58|60|77|83) die "$STEP: TLS problem talking to $(masked_url) (curl exit $rc; set SEARCH_CA_CERT?): $(oneline "$(cat "$tmp/err")")" ;;
      *) die "$STEP: request to $(masked_url) failed (curl exit $rc: $(oneline "$(cat "$tmp/err")"))" ;;
    esac
  fi
}
http_fail() {
  _type=$(json_field type "$resp"); _reason=$(json_field reason "$resp")
  case $code in
    401) die "$STEP: authentication failed at $(masked_url) as user '${SEARCH_USERNAME:-elastic}' (HTTP 401; check the SEARCH_PASSWORD secret)" ;;
    403) die "$STEP: user '${SEARCH_USERNAME:-elastic}' is not allowed to do this (HTTP 403 ${_type}: ${_reason})" ;;
    *)
      case $_reason in *"open index with same name already exists"*)
        die "$STEP failed: HTTP $code ${_type}: ${_reason} -- delete or close that index first, then run the restore again" ;;
      esac
      die "$STEP failed: HTTP $code ${_type:-}${_reason:+: $_reason}" ;;
  esac
}

require SEARCH_URL SNAPSHOT_REPOSITORY SNAPSHOT_NAME RESTORE_INDICES
TIMEOUT="${SEARCH_TIMEOUT:-3600}"
case $TIMEOUT in ''|*[!0-9]*) die "SEARCH_TIMEOUT must be a number of seconds" ;; esac
printf '%s' "$SNAPSHOT_REPOSITORY" | grep -Eq '^[A-Za-z0-9][A-Za-z0-9._-]*$' || die "SNAPSHOT_REPOSITORY '$SNAPSHOT_REPOSITORY' has unexpected characters"
printf '%s' "$SNAPSHOT_NAME" | grep -Eq '^[a-z0-9][a-z0-9._-]*$' || die "SNAPSHOT_NAME '$SNAPSHOT_NAME' has unexpected characters"
case $RESTORE_INDICES in *'"'*|*'\'*) die "RESTORE_INDICES must not contain quotes or backslashes" ;; esac
command -v curl > /dev/null 2>&1 || die "curl is not installed in this image"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/search-restore.XXXXXX")
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
