#!/bin/sh
# objectstore-backup.sh - spec 8.3 "Object store": client mirror of each bucket into a dated folder.
#
# Uses the MinIO client (`mc mirror`). Credentials are written to a private, temporary mc config
# directory (mktemp, removed on exit) instead of `mc alias set ... KEY SECRET`, so they never appear
# on a command line or in the logs.
#
# Layout: $BACKUP_DIR/<YYYY-MM-DDTHHMMSSZ>/<bucket>/<object keys...> and SHA256SUMS (every object
# file, paths ./<bucket>/<key>), written before the folder is renamed into place.
# The run mirrors into $BACKUP_DIR/.partial-<stamp>-<pid>/ and renames it only when every bucket
# mirrored successfully; a failure removes the partial folder, exits non-zero and deletes nothing.
# Retention: dated folders older than $RETENTION_DAYS days, after a successful run only.
#
# Environment:
#   BACKUP_DIR RETENTION_DAYS   backup volume, retention in days (0 = keep everything)
#   OBJECTSTORE_URL             S3 endpoint, e.g. http://minio.<ns>.svc:9000
#   OBJECTSTORE_ACCESS_KEY      access key (secret)
#   OBJECTSTORE_SECRET_KEY      secret key (secret)
#   OBJECTSTORE_BUCKETS         optional: buckets to back up (space or comma separated); default: all
#   OBJECTSTORE_INSECURE        optional: "true" adds --insecure (self-signed TLS)
set -eu
umask 077
SCRIPT=objectstore-backup
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs
ALIAS=objstore

require BACKUP_DIR RETENTION_DAYS OBJECTSTORE_URL OBJECTSTORE_ACCESS_KEY OBJECTSTORE_SECRET_KEY
check_retention
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
command -v mc > /dev/null 2>&1 || die "the MinIO client 'mc' is not installed in this image"

new_backup_folder
temp_folder "writing the mc configuration"
cfg=$tmpd
trap 'rm -rf -- "$work" "$cfg"' EXIT
out=$(mkdir -p "$work" 2>&1) || die "creating $work failed: $(write_cause "$out" "$BACKUP_DIR")"

out=$( { printf '{"version":"10","aliases":{"%s":{"url":"%s","accessKey":"%s","secretKey":"%s","api":"S3v4","path":"auto"}}}\n' \
  "$ALIAS" "$(json_escape "$OBJECTSTORE_URL")" "$(json_escape "$OBJECTSTORE_ACCESS_KEY")" "$(json_escape "$OBJECTSTORE_SECRET_KEY")" > "$cfg/config.json"; } 2>&1) \
  || die "writing the mc configuration failed: $(write_cause "$out" "${TMPDIR:-/tmp}")"
insecure=""
[ "${OBJECTSTORE_INSECURE:-false}" = true ] && insecure=--insecure
mcq() { mc --config-dir "$cfg" --no-color --quiet $insecure "$@"; }

log "listing buckets at $OBJECTSTORE_URL"
out=$(mcq ls "$ALIAS" 2>&1) || mc_fail "listing buckets" "$out"
# last field of each line, trailing "/" dropped (no awk/sed in the mc image)
all=$(printf '%s\n' "$out" | while read -r line; do
  [ -n "$line" ] || continue
  last=${line##*[[:space:]]}
  printf '%s\n' "${last%/}"
done)
if [ -n "${OBJECTSTORE_BUCKETS:-}" ]; then
  buckets=$(printf '%s' "$OBJECTSTORE_BUCKETS" | tr ',' ' ')
  for b in $buckets; do
    found=false
    for x in $all; do [ "$x" = "$b" ] && found=true; done
    [ "$found" = true ] || die "bucket '$b' (from OBJECTSTORE_BUCKETS) does not exist at $OBJECTSTORE_URL; existing: $(printf '%s' "$all" | tr '\n' ' ')"
  done
else
  buckets=$all
fi
[ -n "$(printf '%s' "$buckets" | tr -d ' \n')" ] || die "no buckets to back up at $OBJECTSTORE_URL"
log "buckets: $(printf '%s' "$buckets" | tr '\n' ' ')"

count=0
for b in $buckets; do
  case $b in */*|.|..) die "refusing unexpected bucket name '$b'" ;; esac
  log "mirroring bucket $b -> $stamp/$b"
  mkdir -p "$work/$b"
  out=$(mcq mirror --preserve "$ALIAS/$b" "$work/$b" 2>&1) || mc_fail "mirror of bucket '$b'" "$out"
  log "bucket $b: $(count_files "$work/$b") objects, $(du -sk "$work/$b" | cut -f1) KiB"
  count=$((count + 1))
done

log "writing SHA256SUMS"
write_sums "$work"
fsync_tree "$work"
publish_backup_folder || die "could not move the finished backup into place ($final): $(oneline "$publish_err")"
sync "$BACKUP_DIR" 2>/dev/null || true
log "backup complete: $final ($count buckets)"

retention
log "done"
