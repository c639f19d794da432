#!/usr/bin/env bash
# Builds gator, Gatekeeper's CLI, from the Go module proxy into the tool cache ($OPS_E2E_CACHE,
# default ~/.cache/ops-e2e) as gator-$GATOR_VERSION/gator; skips it when already there.
#   bash tools/gatekeeper/build.sh          # build (about 10 min on 2 cores)
#   bash tools/gatekeeper/build.sh --path   # print where the binary is (built or not)
. "$(dirname "$0")/../e2e/lib.sh"

GATOR_VERSION=3.23.1   # github.com/open-policy-agent/gatekeeper/v3, whose go.mod has no replace
GATOR_MODULE=github.com/open-policy-agent/gatekeeper/v3

if [[ ${1:-} == --path ]]; then bin_path gator "$GATOR_VERSION"; exit 0; fi
wrapper "$SRC/gator-$GATOR_VERSION" "$GATOR_MODULE" "v$GATOR_VERSION" "$GATOR_MODULE/cmd/gator" < /dev/null
build gator "$GATOR_VERSION" "$SRC/gator-$GATOR_VERSION" "$GATOR_MODULE/cmd/gator" \
  "-X $GATOR_MODULE/pkg/version.Version=v$GATOR_VERSION"
