#!/usr/bin/env bash
# Lints the GitHub workflows with zizmor (offline audits, auditor persona) and actionlint
# (checking every `run:` script with shellcheck), and the scripts they call. Both tools are
# installed by name and version from their registries into a cache outside the repository,
# once per version: zizmor from PyPI into a virtualenv, actionlint built from the Go module proxy.
#   bash tools/lint/workflows.sh            # install what is missing, then lint; non-zero on any finding
#   bash tools/lint/workflows.sh --install  # install only
# Suppressions live in the workflow files, each with its reason (`# zizmor: ignore[...]`).
set -euo pipefail
cd "$(dirname "$0")/../.."

ZIZMOR_VERSION=1.32.0     # PyPI zizmor
ACTIONLINT_VERSION=1.7.12 # Go module github.com/rhysd/actionlint
CACHE=${OPS_LINT_CACHE:-$HOME/.cache/ops-lint}
ZIZMOR_DIR="$CACHE/zizmor-$ZIZMOR_VERSION"
ACTIONLINT_DIR="$CACHE/actionlint-$ACTIONLINT_VERSION"

log() { printf '[lint:workflows] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# A folder counts as installed only with its .ok marker, written after the tool answered with
# its version; a half-finished install is removed and redone.
install_zizmor() {
  [[ -f $ZIZMOR_DIR/.ok ]] && return 0
  rm -rf "$ZIZMOR_DIR"
  log "zizmor $ZIZMOR_VERSION: pip install into $ZIZMOR_DIR"
  python3 -m venv "$ZIZMOR_DIR" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$ZIZMOR_DIR/bin/pip" install --quiet --disable-pip-version-check "zizmor==$ZIZMOR_VERSION"
  [[ $("$ZIZMOR_DIR/bin/zizmor" --version) == "zizmor $ZIZMOR_VERSION" ]] || die "zizmor --version is not $ZIZMOR_VERSION"
  touch "$ZIZMOR_DIR/.ok"
}

install_actionlint() {
  [[ -f $ACTIONLINT_DIR/.ok ]] && return 0
  command -v go >/dev/null 2>&1 || die "go is not installed: actionlint is built from the Go module proxy"
  rm -rf "$ACTIONLINT_DIR"
  mkdir -p "$ACTIONLINT_DIR"
  log "actionlint $ACTIONLINT_VERSION: go install into $ACTIONLINT_DIR"
  GOBIN="$ACTIONLINT_DIR" CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
    go install -trimpath -ldflags "-s -w" "github.com/rhysd/actionlint/cmd/actionlint@v$ACTIONLINT_VERSION"
  "$ACTIONLINT_DIR/actionlint" -version | head -n1 | grep -qx "v$ACTIONLINT_VERSION" || die "actionlint -version is not v$ACTIONLINT_VERSION"
  touch "$ACTIONLINT_DIR/.ok"
}

install_zizmor
install_actionlint
[[ ${1:-} == --install ]] && exit 0

# actionlint skips its shellcheck rule silently when shellcheck is missing: refuse instead.
command -v shellcheck >/dev/null 2>&1 || die "shellcheck is not installed (apt-get install shellcheck): actionlint would not check the run: scripts"

status=0
log "zizmor $ZIZMOR_VERSION --offline --persona auditor .github/workflows"
"$ZIZMOR_DIR/bin/zizmor" --offline --persona auditor .github/workflows || status=1
log "actionlint $ACTIONLINT_VERSION (shellcheck $(shellcheck --version | sed -n 's/^version: //p'))"
"$ACTIONLINT_DIR/actionlint" -shellcheck "$(command -v shellcheck)" || status=1
log "shellcheck .github/scripts/*.sh"
shellcheck .github/scripts/*.sh || status=1
if [[ $status -eq 0 ]]; then log "no findings"; else log "findings above"; fi
exit "$status"
