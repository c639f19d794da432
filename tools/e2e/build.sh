#!/usr/bin/env bash
# Builds the e2e toolchain from the Go module proxy into $E2E_CACHE (default ~/.cache/ops-e2e),
# one folder per binary and version; skips what is already there. Modules are named by
# path and version only: each is required from a throwaway wrapper module made in the cache.
#   bash tools/e2e/build.sh            # everything missing
#   bash tools/e2e/build.sh k8s etcd   # some groups: k8s etcd kwok pulumi provider node images (helm: only by name)
#   bash tools/e2e/build.sh --check    # status 0 when the control plane is in the cache (the engine
#                                      # steps also need pulumi and the provider, or are skipped)
#   bash tools/e2e/build.sh --check-node  # status 0 when the real node's toolchain is there (its
#                                      # images are checked by the run, which says which are missing)
. "$(dirname "$0")/lib.sh"

# k8s_commands DIR CMD... : commands of k8s.io/kubernetes at K8S_VERSION from a wrapper in DIR.
k8s_commands() {
  local v=v$K8S_VERSION sv=v0.${K8S_VERSION#1.} dir=$1 gomod; shift
  local cmds=("$@") need=0 c
  for c in "${cmds[@]}"; do [[ -x $(bin_path "$c" "$K8S_VERSION") ]] || need=1; done
  ((need)) || { log "kubernetes $K8S_VERSION ${cmds[*]}: cached"; return 0; }
  gomod=$(gomod_of k8s.io/kubernetes "$v")
  [[ -f $gomod ]] || die "k8s.io/kubernetes@$v: the Go module proxy did not serve it"
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local
  # folders, which a dependent ignores: point each at its published release instead.
  grep -E '^\s*k8s.io/[a-z0-9-]+ v0\.0\.0\s*$' "$gomod" | awk -v sv="$sv" '{print "replace " $1 " => " $1 " " sv}' |
    wrapper "$dir" k8s.io/kubernetes "$v" "${cmds[@]/#/k8s.io/kubernetes/cmd/}"
  local major=${K8S_VERSION%%.*} minor=${K8S_VERSION#*.}; minor=${minor%%.*}
  local vf="" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    vf+=" -X $p.gitVersion=$v -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    vf+=" -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  for c in "${cmds[@]}"; do build "$c" "$K8S_VERSION" "$dir" "k8s.io/kubernetes/cmd/$c" "$vf"; done
}

build_k8s() { k8s_commands "$SRC/k8s-$K8S_VERSION" kube-apiserver kube-controller-manager kube-scheduler kubectl; }

# The real node (docs/e2e.md, "The real node"): the Debian packages it runs on, kubelet and
# kube-proxy (a wrapper of their own beside the control plane's: same modules, same Go build cache),
# the pause image's binary from the kubernetes module's own build/pause/linux/pause.c (gcc -static),
# and kube-router for NetworkPolicy.
build_node() {
  local missing
  if ! missing=$(node_missing 2>/dev/null | grep Debian); then :; fi
  if [[ -n $missing ]]; then
    log "installing Debian packages: $NODE_DEBS"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $NODE_DEBS >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $NODE_DEBS >/dev/null; } ||
      die "apt-get install $NODE_DEBS failed"
  fi
  k8s_commands "$SRC/k8s-node-$K8S_VERSION" kubelet kube-proxy
  local pause; pause=$(bin_path pause "$PAUSE_VERSION")
  if [[ ! -x $pause ]]; then
    local moddir; moddir=$(cd "$SRC/k8s-node-$K8S_VERSION" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
    [[ -f $moddir/build/pause/linux/pause.c ]] || die "k8s.io/kubernetes v$K8S_VERSION has no build/pause/linux/pause.c"
    mkdir -p "$(dirname "$pause")"
    gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION" -o "$pause.tmp.$$" "$moddir/build/pause/linux/pause.c" || die "gcc pause.c failed"
    strip "$pause.tmp.$$"; mv "$pause.tmp.$$" "$pause"; log "pause $PAUSE_VERSION: built (pause.c of kubernetes v$K8S_VERSION)"
  fi
  local kr=github.com/cloudnativelabs/kube-router/v2
  wrapper "$SRC/kube-router-$KUBE_ROUTER_VERSION" "$kr" "v$KUBE_ROUTER_VERSION" "$kr/cmd/kube-router" < /dev/null
  build kube-router "$KUBE_ROUTER_VERSION" "$SRC/kube-router-$KUBE_ROUTER_VERSION" "$kr/cmd/kube-router" "-X $kr/pkg/version.Version=v$KUBE_ROUTER_VERSION"
  # The module's root package is the coredns command, with the plugins of its plugin.cfg.
  wrapper "$SRC/coredns-$COREDNS_VERSION" github.com/coredns/coredns "v$COREDNS_VERSION" github.com/coredns/coredns < /dev/null
  build coredns "$COREDNS_VERSION" "$SRC/coredns-$COREDNS_VERSION" github.com/coredns/coredns
}

build_etcd() {
  local v=v$ETCD_VERSION dir="$SRC/etcd-$ETCD_VERSION"
  [[ -x $(bin_path etcd "$ETCD_VERSION") ]] && { log "etcd $ETCD_VERSION: cached"; return 0; }
  # The etcd server module's root package is the etcd command; its sibling modules are
  # required at the same release, so no replace is needed.
  wrapper "$dir" go.etcd.io/etcd/server/v3 "$v" go.etcd.io/etcd/server/v3 < /dev/null
  build etcd "$ETCD_VERSION" "$dir" go.etcd.io/etcd/server/v3
}

# kwok, and its configuration: the release's own "fast" Stage objects (node initialize, node
# heartbeat with lease, pod ready, pod complete, pod delete), which the kwok command does not
# load by itself (kwokctl passes them), read from the module as the proxy serves it.
build_kwok() {
  local v=v$KWOK_VERSION dir="$SRC/kwok-$KWOK_VERSION" out moddir f
  out=$(kwok_stages)
  if [[ -x $(bin_path kwok "$KWOK_VERSION") && -s $out ]]; then log "kwok $KWOK_VERSION: cached"; return 0; fi
  wrapper "$dir" sigs.k8s.io/kwok "$v" sigs.k8s.io/kwok/cmd/kwok < /dev/null
  build kwok "$KWOK_VERSION" "$dir" sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=$v"
  moddir=$(cd "$dir" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
           pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    [[ -f $moddir/kustomize/stage/$f.yaml ]] || die "kwok $v has no kustomize/stage/$f.yaml"
    echo "---"; cat "$moddir/kustomize/stage/$f.yaml"
  done > "$out.tmp.$$"
  mv "$out.tmp.$$" "$out"
}

# The pulumi CLI. Its Node.js language host (a module of its own, refused by the proxy) is not
# needed: the e2e runs the program through the Automation API (tools/e2e/engine.ts).
build_pulumi() {
  local v=v$PULUMI_VERSION dir="$SRC/pulumi-$PULUMI_VERSION" gomod
  local vf="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$v"
  [[ -x $(bin_path pulumi "$PULUMI_VERSION") ]] && { log "pulumi $PULUMI_VERSION: cached"; return 0; }
  gomod=$(gomod_of github.com/pulumi/pulumi/pkg/v3 "$v")
  [[ -f $gomod ]] || die "github.com/pulumi/pulumi/pkg/v3@$v: the Go module proxy did not serve it"
  # pkg/v3 replaces sdk/v3 with a local folder (ignored here: it requires sdk/v3 at the same
  # release) and one module with a fork by version, which a dependent must repeat.
  grep -E '^replace .* => [a-z][^ ]+ v[0-9][^ ]*$' "$gomod" |
    wrapper "$dir" github.com/pulumi/pulumi/pkg/v3 "$v" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  build pulumi "$PULUMI_VERSION" "$dir" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$vf"
}

# The kubernetes provider plugin at KUBERNETES_PROVIDER_VERSION. The proxy refuses the module at
# its tags but serves the pseudo-version of the tagged commit. Its command embeds two files that
# its own `go generate` makes (generate.go: schema.json with the version set, and the terraform
# mapping), so the command's package is copied from the module into the wrapper, generated there,
# and built with the version ldflag. The module's `replace .../sdk/v4 => ../sdk` (a folder of its
# repository) is ignored in a dependent: the sdk/v4 the module requires comes from the proxy.
build_provider() {
  local name=pulumi-resource-kubernetes ver=$KUBERNETES_PROVIDER_VERSION
  local mod=github.com/pulumi/pulumi-kubernetes/provider/v4 pv=$KUBERNETES_PROVIDER_MODULE
  local dir="$SRC/kubernetes-provider-$ver" moddir cmd t0
  [[ -x $(bin_path "$name" "$ver") ]] && { log "$name $ver: cached"; return 0; }
  mkdir -p "$SRC"
  moddir=$(cd "$SRC" && go mod download -json "$mod@$pv" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [[ -d $moddir ]] || die "$mod@$pv: the Go module proxy did not serve it"
  cmd="$dir/cmd/$name"
  mkdir -p "$cmd"
  cp "$moddir/cmd/$name/main.go" "$moddir/cmd/$name/generate.go" "$moddir/cmd/$name/schema.json" \
     "$moddir/cmd/$name/terraform-mapping.json" "$cmd/"
  chmod u+w "$cmd"/*
  wrapper "$dir" "$mod" "$pv" < /dev/null
  t0=$(now_s)
  (cd "$cmd" && VERSION=$ver go run generate.go) || die "$name $ver: go generate (generate.go) failed"
  log "$name $ver: embedded schema generated in $(elapsed "$t0")"
  build "$name" "$ver" "$dir" "./cmd/$name" "-X $mod/pkg/version.Version=$ver"
}

# helm at HELM_VERSION (the module's cmd/helm, its version ldflag): not part of the default groups;
# the e2e needs it only for the real charts (OPS_CHART_SOURCES).
build_helm() {
  local dir="$SRC/helm-$HELM_VERSION"
  [[ -x $(bin_path helm "$HELM_VERSION") ]] && { log "helm $HELM_VERSION: cached"; return 0; }
  wrapper "$dir" helm.sh/helm/v3 "v$HELM_VERSION" helm.sh/helm/v3/cmd/helm < /dev/null
  build helm "$HELM_VERSION" "$dir" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
}

# The real node's images (tools/e2e/images): the products they take from test:products' cache
# (n8n and opencode from npm, MinIO and mc built from the Go module proxy), then each image once
# per recipe and inputs into $E2E_CACHE/images.
build_images() {
  node_missing >/dev/null || die "the real node's toolchain is not complete (build the node group first): $(node_missing | tr '\n' ' ')"
  "$REPO_DIR/node_modules/.bin/tsx" "$REPO_DIR/tools/products/install.ts" n8n minio mc || die "tools/products/install.ts n8n minio mc failed"
  E2E_CACHE=$E2E_CACHE COREDNS_VERSION=$COREDNS_VERSION PAUSE_VERSION=$PAUSE_VERSION \
    "$REPO_DIR/node_modules/.bin/tsx" "$E2E_DIR/images/build.ts" || die "some images did not build (above)"
}

if [[ ${1:-} == --check-node ]]; then
  if missing=$(node_missing); then exit 0; fi
  echo "the real node lacks: $(echo $missing)"; exit 1
fi
if [[ ${1:-} == --check ]]; then
  if missing=$(toolchain_missing); then exit 0; fi
  echo "not in $E2E_CACHE: $(echo $missing)"; exit 1
fi

groups=("$@"); ((${#groups[@]})) || groups=(k8s etcd kwok pulumi provider node images)
for g in "${groups[@]}"; do
  case $g in
    k8s) build_k8s ;;
    etcd) build_etcd ;;
    kwok) build_kwok ;;
    pulumi) build_pulumi ;;
    provider) build_provider ;;
    helm) build_helm ;;
    node) build_node ;;
    images) build_images ;;
    *) die "unknown group '$g' (expected k8s, etcd, kwok, pulumi, provider, node, images or helm)" ;;
  esac
done
missing=$(toolchain_missing) || { log "still missing: $(echo $missing)"; exit 1; }
missing=$(engine_missing) || { log "control plane complete; the engine steps still miss: $(echo $missing)"; exit 1; }
log "e2e toolchain complete in $E2E_CACHE"
