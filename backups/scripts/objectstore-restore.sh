#!/bin/sh
# objectstore-restore.sh - spec 8.3 "Object store": reverse mirror of a dated backup folder.
#
# For each bucket folder in the backup (or only RESTORE_BUCKETS): create the bucket if missing
# (mc mb --ignore-existing), then `mc mirror --overwrite <backup>/<bucket> <alias>/<bucket>`.
# Objects that exist in the bucket but not in the backup are kept unless RESTORE_REMOVE_EXTRA=true
# (adds --remove). Credentials go through a temporary mc config directory, never the command line.
# The backup's SHA256SUMS is verified before any bucket is touched (a folder without it is refused
# unless RESTORE_ALLOW_UNVERIFIED=true).
#
# Environment:
#   BACKUP_DIR                 backup volume
#   RESTORE_FROM               backup folder name in BACKUP_DIR, "latest" or an absolute path; default: newest
#   RESTORE_BUCKETS            optional: buckets to restore (space or comma separated); default: all in the backup
#   RESTORE_REMOVE_EXTRA       "true" to delete objects that are not in the backup
#   RESTORE_ALLOW_UNVERIFIED   "true" to restore a backup folder that has no SHA256SUMS
#   OBJECTSTORE_URL OBJECTSTORE_ACCESS_KEY(secret) OBJECTSTORE_SECRET_KEY(secret) OBJECTSTORE_INSECURE
set -eu
umask 077
SCRIPT=objectstore-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs
ALIAS=objstore

require BACKUP_DIR OBJECTSTORE_URL OBJECTSTORE_ACCESS_KEY OBJECTSTORE_SECRET_KEY
bool_settings RESTORE_REMOVE_EXTRA RESTORE_ALLOW_UNVERIFIED
command -v mc > /dev/null 2>&1 || die "the MinIO client 'mc' is not installed in this image"
chosen_backup ""
verify_sums "$src"

if [ -n "${RESTORE_BUCKETS:-}" ]; then
  buckets=$(printf '%s' "$RESTORE_BUCKETS" | tr ',' ' ')
  for b in $buckets; do
    case $b in */*|.|..) die "RESTORE_BUCKETS: '$b' is not a bucket name (a bucket is a folder of the backup); nothing was changed" ;; esac
    [ -d "$src/$b" ] || die "backup $src has no bucket '$b'"
  done
else
  buckets=$(cd "$src" && for d in *; do [ -d "$d" ] && printf '%s\n' "$d"; done)
fi
[ -n "$(printf '%s' "$buckets" | tr -d ' \n')" ] || die "backup $src contains no bucket folders"

temp_folder "writing the mc configuration"
cfg=$tmpd
trap 'rm -rf -- "$cfg"' EXIT
out=$( { printf '{"version":"10","aliases":{"%s":{"url":"%s","accessKey":"%s","secretKey":"%s","api":"S3v4","path":"auto"}}}\n' \
  "$ALIAS" "$(json_escape "$OBJECTSTORE_URL")" "$(json_escape "$OBJECTSTORE_ACCESS_KEY")" "$(json_escape "$OBJECTSTORE_SECRET_KEY")" > "$cfg/config.json"; } 2>&1) \
  || die "writing the mc configuration failed: $(write_cause "$out" "${TMPDIR:-/tmp}")"
insecure=""
[ "${OBJECTSTORE_INSECURE:-false}" = true ] && insecure=--insecure
mcq() { mc --config-dir "$cfg" --no-color --quiet $insecure "$@"; }
remove=""
[ "${RESTORE_REMOVE_EXTRA:-false}" = true ] && remove=--remove

log "restoring from $src to $OBJECTSTORE_URL"
out=$(mcq ls "$ALIAS" 2>&1) || mc_fail "connecting" "$out"
for b in $buckets; do
  log "bucket $b: creating if missing"
  out=$(mcq mb --ignore-existing "$ALIAS/$b" 2>&1) || mc_fail "creating bucket '$b'" "$out"
  log "bucket $b: reverse mirror ($(count_files "$src/$b") objects)${remove:+, removing objects not in the backup}"
  out=$(mcq mirror --overwrite $remove "$src/$b" "$ALIAS/$b" 2>&1) || mc_fail "reverse mirror of bucket '$b'" "$out"
done
log "restore complete"
