# Shared prelude of the scripts that build from the Go module proxy (tools/e2e/*.sh,
# tools/gatekeeper/build.sh): versions, cache layout, logging, wrapper modules.
# Sourced, never run. Every other script in this folder starts with:
#   . "$(dirname "$0")/lib.sh"
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$E2E_DIR/../.." && pwd)

# Versions: each one names a module served by the Go module proxy.
K8S_VERSION=1.36.3            # k8s.io/kubernetes v1.36.3, staging modules k8s.io/* v0.36.3
ETCD_VERSION=3.6.16           # go.etcd.io/etcd/server/v3
KWOK_VERSION=0.8.0            # sigs.k8s.io/kwok
PULUMI_VERSION=3.259.0        # github.com/pulumi/pulumi/pkg/v3 and sdk/v3, and the Node.js language host

# Build outputs live outside the repository, one folder per binary and version.
E2E_CACHE=${OPS_E2E_CACHE:-$HOME/.cache/ops-e2e}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

# bin_path NAME VERSION -> path of the cached binary (present or not)
bin_path() { printf '%s/%s-%s/%s\n' "$E2E_CACHE" "$1" "$2" "$1"; }

# The binaries of the control plane, as "name version" lines: the e2e needs all of them.
e2e_required() {
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do echo "$b $K8S_VERSION"; done
  echo "etcd $ETCD_VERSION"
  echo "kwok $KWOK_VERSION"
}

# The Pulumi engine: the e2e runs the steps these allow and says which it could not run.
e2e_optional() {
  echo "pulumi $PULUMI_VERSION"
  echo "pulumi-language-nodejs $PULUMI_VERSION"
}

kwok_stages() { printf '%s/stages.yaml\n' "$(dirname "$(bin_path kwok "$KWOK_VERSION")")"; }

# toolchain_missing -> prints the required binaries not in the cache; status 0 when all are there.
toolchain_missing() {
  local name version missing=0
  while read -r name version; do
    if [[ ! -x $(bin_path "$name" "$version") ]]; then echo "$name-$version"; missing=1; fi
  done < <(e2e_required)
  [[ -s $(kwok_stages) ]] || { echo "kwok-$KWOK_VERSION/stages.yaml"; missing=1; }
  return $missing
}

# Building Go commands from the Go module proxy (tools/e2e/build.sh, tools/gatekeeper/build.sh).
SRC="$E2E_CACHE/src"
TIMES="$E2E_CACHE/build-times.tsv"

# wrapper DIR MODULE VERSION TOOL_PKG... : a module that requires MODULE@VERSION and lists its
# commands as tools (go.mod `tool` directives), so `go mod tidy` keeps exactly what they need.
# Extra `replace` lines are read from stdin.
wrapper() {
  local dir=$1 mod=$2 ver=$3; shift 3
  mkdir -p "$dir"
  {
    echo "module ops-e2e/wrapper"
    echo
    echo "go 1.26.0"
    echo
    echo "require $mod $ver"
    local p; for p in "$@"; do echo "tool $p"; done
    cat
  } > "$dir/go.mod.new"
  if ! cmp -s "$dir/go.mod.new" "$dir/go.mod.in" 2>/dev/null; then
    cp "$dir/go.mod.new" "$dir/go.mod"; rm -f "$dir/go.sum"
    (cd "$dir" && go mod tidy) || die "go mod tidy failed for $mod@$ver (wrapper in $dir)"
    mv "$dir/go.mod.new" "$dir/go.mod.in"
  fi
}

# build NAME VERSION WRAPPER_DIR PKG [LDFLAGS] : go build into a temp file, renamed into place.
build() {
  local name=$1 ver=$2 dir=$3 pkg=$4 ldflags=${5:-}
  local out; out=$(bin_path "$name" "$ver")
  if [[ -x $out ]]; then log "$name $ver: cached at $out"; return 0; fi
  mkdir -p "$(dirname "$out")"
  local tmp="$out.tmp.$$" t0; t0=$(now_s)
  log "$name $ver: building $pkg"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg") \
    || { rm -f "$tmp"; die "$name $ver: go build $pkg failed"; }
  mv "$tmp" "$out"
  local took; took=$(elapsed "$t0")
  log "$name $ver: built in $took"
  printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$name" "$ver" "$took" >> "$TIMES"
}

# gomod_of MODULE VERSION -> path of that module's go.mod in the module cache
gomod_of() { go mod download -json "$1@$2" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p'; }

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1fs", b - a }'; }
log() { printf '[e2e %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
