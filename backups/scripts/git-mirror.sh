#!/bin/sh
# git-mirror.sh - spec 8.3 "Source repositories": mirror clones of the hosted repositories.
#
# For each URL in $REPOSITORIES:
#   first run:  git clone --mirror <url> into a temporary folder, renamed into place on success
#   later runs: git -C <mirror> remote update --prune   (GIT_MIRROR_PRUNE=false drops --prune, so
#               branches deleted upstream are kept in the mirror)
# The mirror is only the working copy that follows upstream (forced refspecs, prune): a force-push
# or a deleted branch upstream changes it on the next run. The backups are dated snapshots:
#   after each successful update, git bundle create --all of the mirror, checked with git bundle verify,
#   into $BACKUP_DIR/<YYYY-MM-DDTHHMMSSZ>/<host>/<path>.bundle with a SHA256SUMS of the folder (renamed
#   into place when the run is done),
#   kept RETENTION_DAYS days like every other backup (git-restore.sh RESTORE_FROM restores from one).
# Layout: $BACKUP_DIR/<host>/<path>.git  (mirror; scheme and user info stripped; scp-style host:path -> host/path)
#         $BACKUP_DIR/<stamp>/<host>/<path>.bundle  (snapshots)
# A failing repository does not stop the others; the script exits non-zero at the end naming every
# failed URL. A failed fetch leaves the existing mirror as it was. Retention runs only when every
# repository succeeded, and never deletes the newest snapshot folder.
# An http(s) URL with a user name or token in it is refused: git would keep it in the mirror's config
# file (and the setting is plain text in the job); a mirror an earlier version cloned from such a URL has
# the credentials removed from its config. Partial clones (.partial-<name>-<pid>) of runs that were killed
# or stopped by a full disk are named and removed (this run holds the mirror lock: none is live).
#
# Environment:
#   BACKUP_DIR        backup volume
#   REPOSITORIES      repository URLs separated by spaces or new lines (https://, ssh://, git@host:path, file://)
#   GIT_USERNAME      optional user for https (e.g. a bot account or "x-access-token")
#   GIT_PASSWORD      optional token/password for https (secret; given to git by a credential helper
#                     that reads the environment: never in URLs, config files or logs)
#   GIT_SSH_COMMAND   optional, for ssh URLs: e.g. ssh -i /keys/id_ed25519 -o UserKnownHostsFile=/keys/known_hosts
#   GIT_MIRROR_PRUNE  true (default) or false
#   RETENTION_DAYS    delete snapshot folders older than this many days (0 = keep everything)
set -eu
umask 022
SCRIPT=git-mirror
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

explain() { # $1 = git output
  case $1 in
    *"Authentication failed"*|*"could not read Username"*|*"could not read Password"*|*"terminal prompts disabled"*|*"Permission denied"*|*"returned error: 401"*|*"returned error: 403"*|*"Host key verification failed"*)
      echo "authentication failed (check GIT_USERNAME/GIT_PASSWORD or the deploy key)" ;;
    *"Could not resolve host"*|*"Connection refused"*|*"Connection timed out"*|*"Failed to connect"*|*"Could not read from remote repository"*|*"unable to access"*)
      echo "repository server unreachable" ;;
    *"does not appear to be a git repository"*|*"not found"*|*"returned error: 404"*|*"does not exist"*)
      echo "repository not found" ;;
    *"No space left"*) echo "the disk is full (No space left on device) at $BACKUP_DIR" ;;
    *) echo "git failed" ;;
  esac
}

require BACKUP_DIR REPOSITORIES RETENTION_DAYS
check_retention
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
command -v git > /dev/null 2>&1 || die "git is not installed in this image"
# One mirror run per backup volume at a time: two runs would update one mirror at once, and two first
# clones would end with one moved inside the other (refuses, naming the holder, before anything changes).
store_lock "$BACKUP_DIR/.git-mirror.lock" "the mirrors in $BACKUP_DIR"
export GIT_TERMINAL_PROMPT=0
prune=--prune
[ "${GIT_MIRROR_PRUNE:-true}" = false ] && prune=""

new_backup_folder
trap 'rm -rf -- "$work"' EXIT
out=$(mkdir -p "$work" 2>&1) || die "creating $work failed: $(write_cause "$out" "$BACKUP_DIR")"

failed=""
ok=0
set -f  # no globbing of the URL list (only while it is split: the helpers need globbing)
# shellcheck disable=SC2086
set -- $REPOSITORIES
set +f
for url in "$@"; do
  shown=$(mask "$url")
  mirror_rel "$url" || { warn "$shown: cannot derive a safe mirror path ('$rel'); skipped"; failed="$failed $shown"; continue; }
  dest="$BACKUP_DIR/$rel"
  if [ -d "$dest" ] && [ "$(git -C "$dest" rev-parse --is-bare-repository 2>/dev/null)" = true ]; then
    cur=$(git -C "$dest" config --get remote.origin.url 2>/dev/null) || cur=""
    if ! url_without_credentials "$cur"; then
      out=$(git -C "$dest" config remote.origin.url "$(strip_userinfo "$cur")" 2>&1) || { warn "$shown: could not remove the credentials from the remote URL in $dest/config: $(oneline "$out")"; failed="$failed $shown"; continue; }
      log "$shown: removed the user name and password from the remote URL in $rel/config"
    fi
  fi
  if ! url_without_credentials "$url"; then
    warn "$shown: a user name or token in the URL is refused (git would keep it in the mirror's config, and REPOSITORIES is no Secret): list the URL without it and set GIT_USERNAME and the GIT_PASSWORD Secret; skipped"
    failed="$failed $shown"
    continue
  fi
  case ${dest##*/} in *[*?[]*) ;; *) remove_leftovers "${dest%/*}" ".partial-${dest##*/}-[0-9]*" "mirror run" ;; esac
  if [ -d "$dest" ] && [ "$(git -C "$dest" rev-parse --is-bare-repository 2>/dev/null)" = true ]; then
    log "$shown: updating mirror $rel (git remote update $prune)"
    if ! out=$(git_auth -C "$dest" remote update $prune 2>&1); then
      warn "$shown: $(explain "$out"): $(oneline "$out" | tail -c 400); the existing mirror is unchanged"
      failed="$failed $shown"
      continue
    fi
  else
    [ -e "$dest" ] && { warn "$shown: $dest exists but is not a bare mirror; left alone"; failed="$failed $shown"; continue; }
    log "$shown: first run, git clone --mirror into $rel"
    out=$(mkdir -p "$(dirname "$dest")" 2>&1) || { warn "$shown: creating the folder of $rel failed: $(write_cause "$out" "$BACKUP_DIR")"; failed="$failed $shown"; continue; }
    tmp="$(dirname "$dest")/.partial-$(basename "$dest")-$$"
    rm -rf -- "$tmp"
    if ! out=$(git_auth clone --mirror "$url" "$tmp" 2>&1); then
      rm -rf -- "$tmp"
      warn "$shown: $(explain "$out"): $(oneline "$out" | tail -c 400)"
      failed="$failed $shown"
      continue
    fi
    if ! out=$(mv -T -- "$tmp" "$dest" 2>&1); then
      rm -rf -- "$tmp"
      warn "$shown: moving the new mirror into place failed: $(oneline "$out")"
      failed="$failed $shown"
      continue
    fi
  fi
  nrefs=$(git -C "$dest" for-each-ref | wc -l | tr -d ' ')
  if [ "$nrefs" -eq 0 ]; then
    log "$shown: mirror is empty (no refs), no snapshot"
  else
    bundle="$work/${rel%.git}.bundle"
    mkdir -p "$(dirname "$bundle")"
    if ! out=$(git -C "$dest" bundle create "$bundle" --all 2>&1) || ! out=$(git -C "$dest" bundle verify "$bundle" 2>&1); then
      warn "$shown: snapshot (git bundle) failed: $(write_cause "$out" "$BACKUP_DIR")"
      rm -f -- "$bundle"
      failed="$failed $shown"
      continue
    fi
  fi
  log "$shown: ok, $nrefs refs, $(du -sk "$dest" | cut -f1) KiB mirror, snapshot ${rel%.git}.bundle verified"
  ok=$((ok + 1))
done

if [ "$ok" -gt 0 ]; then
  write_sums "$work"
  fsync_tree "$work"
  publish_backup_folder || die "could not move the snapshots into place ($final): $(oneline "$publish_err")"
  log "snapshots of $ok repositories in $final"
fi
if [ -n "$failed" ]; then
  die "$ok repositories mirrored, failed:$failed (no retention this run)"
fi
retention
log "done: $ok repositories mirrored into $BACKUP_DIR"
