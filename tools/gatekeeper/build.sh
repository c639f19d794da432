#!/usr/bin/env bash
# Builds Gatekeeper's tools from the Go module proxy into the tool cache ($OPS_E2E_CACHE, default
# ~/.cache/ops-e2e); each is skipped when already there.
#   gator, Gatekeeper's CLI, as gator-$GATOR_VERSION/gator (about 10 min on 2 cores)
#   opa, at the version Gatekeeper vendors, as opa-$OPA_VERSION/opa: it compiles ConstraintTemplates'
#     Rego to Wasm (npm run gatekeeper:wasm) and is the oracle of the Wasm host's tests
#   bash tools/gatekeeper/build.sh                # build both
#   bash tools/gatekeeper/build.sh gator|opa      # build one
#   bash tools/gatekeeper/build.sh --path [opa]   # print where the binary is (built or not)
. "$(dirname "$0")/../e2e/lib.sh"

GATOR_VERSION=3.23.1   # github.com/open-policy-agent/gatekeeper/v3, whose go.mod has no replace
GATOR_MODULE=github.com/open-policy-agent/gatekeeper/v3
OPA_VERSION=1.17.1     # the opa version gatekeeper v3.23.1's go.mod requires
OPA_MODULE=github.com/open-policy-agent/opa

if [[ ${1:-} == --path ]]; then
  if [[ ${2:-gator} == opa ]]; then bin_path opa "$OPA_VERSION"; else bin_path gator "$GATOR_VERSION"; fi
  exit 0
fi

build_gator() {
  wrapper "$SRC/gator-$GATOR_VERSION" "$GATOR_MODULE" "v$GATOR_VERSION" "$GATOR_MODULE/cmd/gator" < /dev/null
  build gator "$GATOR_VERSION" "$SRC/gator-$GATOR_VERSION" "$GATOR_MODULE/cmd/gator" \
    "-X $GATOR_MODULE/pkg/version.Version=v$GATOR_VERSION"
}

build_opa() {
  wrapper "$SRC/opa-$OPA_VERSION" "$OPA_MODULE" "v$OPA_VERSION" "$OPA_MODULE" < /dev/null
  build opa "$OPA_VERSION" "$SRC/opa-$OPA_VERSION" "$OPA_MODULE" \
    "-X $OPA_MODULE/v1/version.Version=$OPA_VERSION"
}

case ${1:-all} in
  gator) build_gator ;;
  opa) build_opa ;;
  all) build_gator; build_opa ;;
  *) die "usage: build.sh [gator|opa|all] | --path [gator|opa]" ;;
esac
