#!/bin/sh
# git-mirror.sh - spec 8.3 "Source repositories": mirror clones of the hosted repositories.
#
# For each URL in $REPOSITORIES:
#   first run:  git clone --mirror <url> into a temporary folder, renamed into place on success
#   later runs: git -C <mirror> remote update --prune   (GIT_MIRROR_PRUNE=false drops --prune, so
#               branches deleted upstream are kept in the mirror)
# Layout: $BACKUP_DIR/<host>/<path>.git  (scheme and user info stripped; scp-style host:path -> host/path)
# A failing repository does not stop the others; the script exits non-zero at the end naming every
# failed URL. A failed fetch leaves the existing mirror as it was. There is no retention: mirrors are
# updated in place (the history is the backup).
#
# Environment:
#   BACKUP_DIR        backup volume
#   REPOSITORIES      repository URLs separated by spaces or new lines (https://, ssh://, git@host:path, file://)
#   GIT_USERNAME      optional user for https (e.g. a bot account or "x-access-token")
#   GIT_PASSWORD      optional token/password for https (secret; given to git by a credential helper
#                     that reads the environment: never in URLs, config files or logs)
#   GIT_SSH_COMMAND   optional, for ssh URLs: e.g. ssh -i /keys/id_ed25519 -o UserKnownHostsFile=/keys/known_hosts
#   GIT_MIRROR_PRUNE  true (default) or false
set -eu
umask 022
SCRIPT=git-mirror
# @prelude  (backups/scripts/lib/prelude.sh is joined in here by backups/scripts.ts)

explain() { # $1 = git output
  case $1 in
    *"Authentication failed"*|*"could not read Username"*|*"could not read Password"*|*"terminal prompts disabled"*|*"Permission denied"*|*"returned error: 401"*|*"returned error: 403"*|*"Host key verification failed"*)
      echo "authentication failed (check GIT_USERNAME/GIT_PASSWORD or the deploy key)" ;;
    *"Could not resolve host"*|*"Connection refused"*|*"Connection timed out"*|*"Failed to connect"*|*"Could not read from remote repository"*|*"unable to access"*)
      echo "repository server unreachable" ;;
    *"does not appear to be a git repository"*|*"not found"*|*"returned error: 404"*|*"does not exist"*)
      echo "repository not found" ;;
    *) echo "git failed" ;;
  esac
}

require BACKUP_DIR REPOSITORIES
[ -d "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR does not exist (is the backup volume mounted?)"
[ -w "$BACKUP_DIR" ] || die "backup directory $BACKUP_DIR is not writable"
command -v git > /dev/null 2>&1 || die "git is not installed in this image"
export GIT_TERMINAL_PROMPT=0
set -f  # no globbing of the URL list
prune=--prune
[ "${GIT_MIRROR_PRUNE:-true}" = false ] && prune=""

failed=""
ok=0
for url in $REPOSITORIES; do
  shown=$(mask "$url")
  rel=$(mirror_path "$url")
  case $rel in *.git) ;; *) rel="$rel.git" ;; esac
  case "/$rel/" in
    *"/../"*|*"/./"*|"/.git/") warn "$shown: cannot derive a safe mirror path ('$rel'); skipped"; failed="$failed $shown"; continue ;;
  esac
  dest="$BACKUP_DIR/$rel"
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
    mkdir -p "$(dirname "$dest")"
    tmp="$(dirname "$dest")/.partial-$(basename "$dest")-$$"
    rm -rf -- "$tmp"
    if ! out=$(git_auth clone --mirror "$url" "$tmp" 2>&1); then
      rm -rf -- "$tmp"
      warn "$shown: $(explain "$out"): $(oneline "$out" | tail -c 400)"
      failed="$failed $shown"
      continue
    fi
    mv "$tmp" "$dest"
  fi
  log "$shown: ok, $(git -C "$dest" for-each-ref | wc -l | tr -d ' ') refs, $(du -sk "$dest" | cut -f1) KiB"
  ok=$((ok + 1))
done

if [ -n "$failed" ]; then
  die "$ok repositories mirrored, failed:$failed"
fi
log "done: $ok repositories mirrored into $BACKUP_DIR"
