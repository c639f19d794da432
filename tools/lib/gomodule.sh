# shellcheck shell=bash
# Building a Go command from the Go module proxy by module path and version only, shared by
# tools/e2e/build.sh and tools/products/gobuild.sh. Sourced, never run; the sourcing script defines
# log and die. A module is required from a throwaway wrapper module, so its own go.mod decides
# the versions of its dependencies; a `replace` of the module's own go.mod is ignored in a
# dependency and must be repeated in the wrapper (given on stdin).

# WRAPPER_MODULE: the wrapper's module path (a wrapper is re-tidied when its go.mod changes).
WRAPPER_MODULE=${WRAPPER_MODULE:-ops/wrapper}

# wrapper DIR MODULE VERSION TOOL_PKG... : a module that requires MODULE@VERSION and lists its
# commands as tools (go.mod `tool` directives), so `go mod tidy` keeps exactly what they need.
# Extra `replace` lines are read from stdin.
wrapper() {
  local dir=$1 mod=$2 ver=$3; shift 3
  mkdir -p "$dir"
  {
    echo "module $WRAPPER_MODULE"
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

# go_build OUT DIR PKG [LDFLAGS] : a static build of PKG in the wrapper DIR into a temporary file
# beside OUT, renamed to OUT only when the build succeeded. Prints the seconds it took.
go_build() {
  local out=$1 dir=$2 pkg=$3 ldflags=${4:-} t0
  mkdir -p "$(dirname "$out")"
  local tmp="$out.tmp.$$"
  t0=$(date +%s.%N)
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg") \
    || { rm -f "$tmp"; die "go build $pkg failed (wrapper in $dir)"; }
  mv "$tmp" "$out"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'
}

# gomod_of MODULE VERSION -> path of that module's go.mod in the module cache
gomod_of() { go mod download -json "$1@$2" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p'; }
