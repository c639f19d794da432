#!/bin/sh
# git-restore.sh - restore from a git-mirror.sh mirror (spec 8.3 "Source repositories": clone).
#
#   Source: the mirror (default), or with RESTORE_FROM a dated snapshot that git-mirror.sh wrote (a git
#   bundle, checked with git bundle verify before anything is written): use it after a force-push or a
#   deleted branch upstream reached the mirror.
#   git clone <source> $RESTORE_TARGET              working copy of the mirrored repository
#   RESTORE_PUSH_URL set: git push of every branch and tag of the source to $RESTORE_PUSH_URL: new refs and
#                                                   fast-forwards; a ref the target moved on after the snapshot
#                                                   is never moved backwards without RESTORE_PUSH_FORCE=true (it
#                                                   is listed, exit 1). Refs the target has and the source does
#                                                   not (branches created after the snapshot) are kept and
#                                                   listed, unless RESTORE_PUSH_PRUNE=true (then deleted).
#                                                   Afterwards the target's refs are read back (git ls-remote):
#                                                   exit 0 only when it holds every branch and tag pushed.
#
# Environment:
#   BACKUP_DIR          backup volume holding the mirrors
#   RESTORE_REPOSITORY  the repository URL as listed in REPOSITORIES (or the mirror path relative to BACKUP_DIR)
#   RESTORE_FROM        optional: snapshot folder name in BACKUP_DIR ("latest" = the newest that holds this
#                       repository; its SHA256SUMS is checked), or an absolute path to a .bundle file; empty = the mirror
#   RESTORE_ALLOW_UNVERIFIED  "true" to use a snapshot folder that has no SHA256SUMS
#   RESTORE_TARGET      directory to clone into (must not exist); optional when RESTORE_PUSH_URL is set
#   RESTORE_PUSH_URL    optional: push every branch and tag of the source to this repository (an http(s) URL
#                       without user name or password: those come from GIT_USERNAME and GIT_PASSWORD)
#   RESTORE_PUSH_PRUNE  "true": also delete the target's branches and tags that the source does not have
#   RESTORE_PUSH_FORCE  "true": also move branches backwards (and tags elsewhere) where the target moved on
#                       after the snapshot; without it they are refused, listed, and the run exits 1
#   GIT_USERNAME GIT_PASSWORD(secret) GIT_SSH_COMMAND   credentials for the push
#   TMPDIR              where a snapshot is read into a temporary mirror (default /tmp)
# Ref names are compared as text (never as patterns: release-1.2 is not release-1x2).
set -eu
umask 022
SCRIPT=git-restore
. "$(dirname -- "$0")/lib/prelude.sh"  # @prelude: run by hand, the file reads the shared prelude; backups/scripts.ts joins it in here for the CronJobs

require BACKUP_DIR RESTORE_REPOSITORY
bool_settings RESTORE_PUSH_FORCE RESTORE_PUSH_PRUNE RESTORE_ALLOW_UNVERIFIED
[ -n "${RESTORE_TARGET:-}" ] || [ -n "${RESTORE_PUSH_URL:-}" ] || die "set RESTORE_TARGET (clone) and/or RESTORE_PUSH_URL (push --mirror)"
url_without_credentials "${RESTORE_PUSH_URL:-}" || die "RESTORE_PUSH_URL=$(mask "$RESTORE_PUSH_URL") has a user name or password in it: give the URL without it and set GIT_USERNAME and the GIT_PASSWORD Secret; nothing was changed"
export GIT_TERMINAL_PROMPT=0
mirror_rel "$RESTORE_REPOSITORY" || die "RESTORE_REPOSITORY=$(mask "$RESTORE_REPOSITORY") gives no mirror path inside $BACKUP_DIR ('$rel'); nothing was changed"
mirror="$BACKUP_DIR/$rel"
from="${RESTORE_FROM:-}"
if [ -n "$from" ]; then
  case $from in
    /*) bundle=$from ;;
    *) chosen_backup "${rel%.git}.bundle"; bundle="$src/${rel%.git}.bundle" ;;
  esac
  [ -f "$bundle" ] || die "no snapshot of $(mask "$RESTORE_REPOSITORY") at $bundle"
  case $from in /*) ;; *) verify_sums "$src" ;; esac
  temp_folder "reading snapshot $bundle"
  work=$tmpd
  trap 'rm -rf -- "$work"' EXIT
  out=$(git init -q --bare "$work/verify.git" 2>&1) || die "reading snapshot $bundle failed: $(write_cause "$out" "${TMPDIR:-/tmp}"); nothing was written"
  out=$(git -C "$work/verify.git" bundle verify "$bundle" 2>&1) || die "snapshot $bundle failed git bundle verify: $(oneline "$out"); nothing was written"
  log "snapshot $bundle verified"
  out=$(git clone -q --mirror "$bundle" "$work/repo.git" 2>&1) || die "reading snapshot $bundle failed: $(write_cause "$out" "${TMPDIR:-/tmp}"); nothing was written"
  mirror="$work/repo.git"
else
  [ "$(git -C "$mirror" rev-parse --is-bare-repository 2>/dev/null)" = true ] || die "no mirror of $(mask "$RESTORE_REPOSITORY") at $mirror (has git-mirror.sh run?)"
fi
log "source $mirror: $(git -C "$mirror" for-each-ref | wc -l | tr -d ' ') refs"

if [ -n "${RESTORE_TARGET:-}" ]; then
  [ ! -e "$RESTORE_TARGET" ] || die "RESTORE_TARGET $RESTORE_TARGET already exists"
  log "git clone $mirror $RESTORE_TARGET"
  out=$(git clone "$mirror" "$RESTORE_TARGET" 2>&1) || die "clone failed: $(write_cause "$out" "$(dirname "$RESTORE_TARGET")")"
  log "cloned; HEAD is $(git -C "$RESTORE_TARGET" rev-parse --short HEAD 2>/dev/null || echo '(empty repository)')"
fi
if [ -n "${RESTORE_PUSH_URL:-}" ]; then
  target_url=$(mask "$RESTORE_PUSH_URL")
  # The refs as "object name" lines, kept in memory.
  source_refs=$(git -C "$mirror" for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags 2>&1) || die "reading the refs of $mirror failed: $(oneline "$source_refs")"
  out=$(git_auth ls-remote --heads --tags "$RESTORE_PUSH_URL" 2>&1) || die "reading the refs of $target_url failed: $(oneline "$out" | tail -c 400); nothing was pushed"
  before_refs=$(remote_refs "$out")
  # A ref the target has at another commit moves forward only when the target's commit is an ancestor of
  # the snapshot's (a fast-forward). Otherwise the target moved on after the snapshot (or was rewritten):
  # moving it back loses that work, so it is refused and listed unless RESTORE_PUSH_FORCE=true. A tag that
  # points elsewhere counts as moving backwards too.
  rewind=""; rewound=""; extra=""; nextra=0
  set --
  while IFS=' ' read -r kind ref obj now; do
    case $kind in
      new) set -- "$@" "$ref:$ref" ;;
      moved)
        case $ref in refs/heads/*) if git -C "$mirror" merge-base --is-ancestor "$now" "$obj" 2>/dev/null; then set -- "$@" "$ref:$ref"; continue; fi ;; esac
        rewind="${rewind:+$rewind, }$(printf '%s (target %.12s, snapshot %.12s)' "$ref" "$now" "$obj")"
        rewound="$rewound$ref
"
        [ "${RESTORE_PUSH_FORCE:-false}" != true ] || set -- "$@" "+$ref:$ref" ;;
      extra)
        extra="${extra:+$extra, }${ref#refs/*/}"; nextra=$((nextra + 1))
        [ "${RESTORE_PUSH_PRUNE:-false}" != true ] || set -- "$@" ":$ref" ;;
    esac
  done <<EOF
$(ref_join "$source_refs" "$before_refs")
EOF
  [ "${RESTORE_PUSH_PRUNE:-false}" != true ] || log "RESTORE_PUSH_PRUNE=true: the target's branches and tags that the source does not have are deleted${extra:+: $extra}"
  if [ "$#" -gt 0 ]; then
    log "git push of $# branch(es) and tag(s) to $target_url (new ones, fast-forwards${RESTORE_PUSH_FORCE:+, and with RESTORE_PUSH_FORCE=$RESTORE_PUSH_FORCE those that move backwards})"
    out=$(git_auth -C "$mirror" push "$RESTORE_PUSH_URL" "$@" 2>&1) || die "push to $target_url failed: $(oneline "$out" | tail -c 400)"
  else
    log "nothing to push to $target_url: it already holds every branch and tag of the source${rewind:+ that may move}"
  fi
  if [ -n "$rewind" ] && [ "${RESTORE_PUSH_FORCE:-false}" = true ]; then
    log "RESTORE_PUSH_FORCE=true: moved backwards to the snapshot: $rewind"
  fi
  if [ "${RESTORE_PUSH_PRUNE:-false}" != true ] && [ -n "$extra" ]; then
    log "kept $nextra branch(es) or tag(s) that the snapshot does not have ($extra); RESTORE_PUSH_PRUNE=true deletes them"
  fi
  out=$(git_auth ls-remote --heads --tags "$RESTORE_PUSH_URL" 2>&1) || die "the push ran, but reading back the refs of $target_url failed: $(oneline "$out" | tail -c 400); its state is unknown"
  # Every branch and tag of the source must be there at the source's commit, but those refused as rewinds.
  missing=""
  while IFS=' ' read -r kind ref obj now; do
    case $kind in new|moved) ;; *) continue ;; esac
    [ "${RESTORE_PUSH_FORCE:-false}" != true ] && in_lines "$ref" "$rewound" && continue
    missing="$missing $ref"
  done <<EOF
$(ref_join "$source_refs" "$(remote_refs "$out")")
EOF
  [ -z "$missing" ] || die "the push reported success but the target does not hold what was pushed:$missing"
  if [ -n "$rewind" ] && [ "${RESTORE_PUSH_FORCE:-false}" != true ]; then
    die "every other branch and tag of the snapshot is on the target; refused to move backwards (the target moved on after the snapshot): $rewind; RESTORE_PUSH_FORCE=true rewinds them"
  fi
  log "verified: the target has every branch and tag of the source ($(printf '%s\n' "$source_refs" | grep -c .) refs)"
fi
log "done"
