#!/usr/bin/env bash
# Builds one command of a product from the Go module proxy (tools/products/install.ts runs it with
# the pins of tools/products/pins.ts):
#   bash tools/products/gobuild.sh OUT WRAPPER_DIR MODULE VERSION PKG [LDFLAGS]
# OUT is written only when the build succeeded; stdout is the build's seconds.
set -euo pipefail
log() { printf '[products %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
. "$(dirname "$0")/../lib/gomodule.sh"
export GOFLAGS=${GOFLAGS:--buildvcs=false}

(($# >= 5)) || die "usage: gobuild.sh OUT WRAPPER_DIR MODULE VERSION PKG [LDFLAGS]"
out=$1 dir=$2 mod=$3 ver=$4 pkg=$5 ldflags=${6:-}
gomod=$(gomod_of "$mod" "$ver") || true
[[ -f $gomod ]] || die "$mod@$ver: the Go module proxy did not serve it"
# A replace of the module's own go.mod is repeated in the wrapper; block-form replaces are not
# read here, so such a module stops the build instead of building with other versions.
if grep -qE '^replace\s*\(' "$gomod"; then die "$mod@$ver: its go.mod has a replace block, which gobuild.sh does not carry over"; fi
log "$mod@$ver: building $pkg into $out"
{ grep -E '^replace .* => [a-z][^ ]+ v[0-9][^ ]*$' "$gomod" || true; } | wrapper "$dir" "$mod" "$ver" "$pkg"
go_build "$out" "$dir" "$pkg" "$ldflags"
