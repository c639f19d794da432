#!/bin/sh
# git-restore.sh - restore from a git-mirror.sh mirror (spec 8.3 "Source repositories": clone).
#
#   git clone <mirror> $RESTORE_TARGET              working copy of the mirrored repository
#   RESTORE_PUSH_URL set: git -C <mirror> push --mirror $RESTORE_PUSH_URL
#                                                   re-creates every branch and tag on a new/empty hosted repo
#
# Environment:
#   BACKUP_DIR          backup volume holding the mirrors
#   RESTORE_REPOSITORY  the repository URL as listed in REPOSITORIES (or the mirror path relative to BACKUP_DIR)
#   RESTORE_TARGET      directory to clone into (must not exist); optional when RESTORE_PUSH_URL is set
#   RESTORE_PUSH_URL    optional: push all refs of the mirror to this (empty) repository
#   GIT_USERNAME GIT_PASSWORD(secret) GIT_SSH_COMMAND   credentials for the push
set -eu
umask 022
SCRIPT=git-restore
# @prelude  (backups/scripts/lib/prelude.sh is joined in here by backups/scripts.ts)

require BACKUP_DIR RESTORE_REPOSITORY
[ -n "${RESTORE_TARGET:-}" ] || [ -n "${RESTORE_PUSH_URL:-}" ] || die "set RESTORE_TARGET (clone) and/or RESTORE_PUSH_URL (push --mirror)"
export GIT_TERMINAL_PROMPT=0
rel=$(mirror_path "$RESTORE_REPOSITORY")
case $rel in *.git) ;; *) rel="$rel.git" ;; esac
mirror="$BACKUP_DIR/$rel"
[ "$(git -C "$mirror" rev-parse --is-bare-repository 2>/dev/null)" = true ] || die "no mirror of $(mask "$RESTORE_REPOSITORY") at $mirror (has git-mirror.sh run?)"
log "mirror $mirror: $(git -C "$mirror" for-each-ref | wc -l | tr -d ' ') refs"

if [ -n "${RESTORE_TARGET:-}" ]; then
  [ ! -e "$RESTORE_TARGET" ] || die "RESTORE_TARGET $RESTORE_TARGET already exists"
  log "git clone $mirror $RESTORE_TARGET"
  out=$(git clone "$mirror" "$RESTORE_TARGET" 2>&1) || die "clone failed: $(oneline "$out")"
  log "cloned; HEAD is $(git -C "$RESTORE_TARGET" rev-parse --short HEAD 2>/dev/null || echo '(empty repository)')"
fi
if [ -n "${RESTORE_PUSH_URL:-}" ]; then
  log "git push --mirror to $(mask "$RESTORE_PUSH_URL")"
  out=$(git_auth -C "$mirror" push --mirror "$RESTORE_PUSH_URL" 2>&1) || die "push --mirror to $(mask "$RESTORE_PUSH_URL") failed: $(oneline "$out" | tail -c 400)"
  log "pushed every branch and tag"
fi
log "done"
