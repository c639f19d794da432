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
# The kubernetes provider plugin: the pseudo-version of the commit tagged v4.25.0 (the proxy refuses
# the tag). package.json pins @pulumi/kubernetes to the same version.
KUBERNETES_PROVIDER_VERSION=4.25.0
KUBERNETES_PROVIDER_MODULE=v4.0.0-20260115033456-f47bc2d6f199
# helm (helm.sh/helm/v3): packages the real add-on and GitOps child charts the e2e serves when
# OPS_CHART_SOURCES names their sources, and renders the children as Argo CD would (helm template).
HELM_VERSION=3.19.0
# The real node (docs/e2e.md, "The real node"): kubelet and kube-proxy of K8S_VERSION, kube-router
# for NetworkPolicy (firewall only; the proxy serves only v2.1.0 of v2, for which security flaws are
# reported: it runs inside the run's own network namespace, never on the host's network).
KUBE_ROUTER_VERSION=2.1.0
# The pause image: its binary compiled from build/pause/linux/pause.c of k8s.io/kubernetes at
# K8S_VERSION, whose build/pause/Makefile tags it 3.10.2 (kubeadm's PauseVersion of 1.36).
PAUSE_VERSION=3.10.2
# The cluster DNS the pods' NetworkPolicies name (kube-system, k8s-app: kube-dns): CoreDNS at
# kubeadm 1.36's CoreDNSVersion, run as a pod on the real node.
COREDNS_VERSION=1.14.2
# The Debian packages the real node runs on (bookworm: runc 1.1.5, containerd 1.6.20, CNI 1.1.1).
NODE_DEBS="runc containerd containernetworking-plugins iptables ipset conntrack umoci mmdebstrap"

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

# The Pulumi engine's binaries: without them the engine steps are said to be skipped, and why. The
# Node.js language host is not among them: the e2e runs the program through the Automation API
# (tools/e2e/engine.ts), which serves the language runtime itself.
e2e_engine() {
  echo "pulumi $PULUMI_VERSION"
  echo "pulumi-resource-kubernetes $KUBERNETES_PROVIDER_VERSION"
}

# engine_missing -> prints the engine binaries not in the cache; status 0 when all are there.
engine_missing() {
  local name version missing=0
  while read -r name version; do
    if [[ ! -x $(bin_path "$name" "$version") ]]; then echo "$name-$version"; missing=1; fi
  done < <(e2e_engine)
  return $missing
}

# The real node's binaries, as "name version" lines (tools/e2e/build.sh node).
e2e_node() {
  echo "kubelet $K8S_VERSION"
  echo "kube-proxy $K8S_VERSION"
  echo "kube-router $KUBE_ROUTER_VERSION"
  echo "pause $PAUSE_VERSION"
  echo "coredns $COREDNS_VERSION"
}

# node_missing -> prints what the real node lacks (cached binaries, Debian commands); status 0 when all are there.
node_missing() {
  local name version missing=0 c
  while read -r name version; do
    if [[ ! -x $(bin_path "$name" "$version") ]]; then echo "$name-$version"; missing=1; fi
  done < <(e2e_node)
  for c in runc containerd ctr iptables ipset umoci mmdebstrap unshare nsenter; do
    command -v "$c" >/dev/null 2>&1 || { echo "$c (Debian)"; missing=1; }
  done
  [[ -x /usr/lib/cni/bridge ]] || { echo "/usr/lib/cni/bridge (Debian containernetworking-plugins)"; missing=1; }
  return $missing
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

# Building Go commands from the Go module proxy (tools/e2e/build.sh, tools/gatekeeper/build.sh):
# wrapper, go_build and gomod_of come from the shared Go module build (tools/lib/gomodule.sh).
SRC="$E2E_CACHE/src"
TIMES="$E2E_CACHE/build-times.tsv"
WRAPPER_MODULE=ops-e2e/wrapper
. "$REPO_DIR/tools/lib/gomodule.sh"

# build NAME VERSION WRAPPER_DIR PKG [LDFLAGS] : go build into the cache, skipped when there.
build() {
  local name=$1 ver=$2 dir=$3 pkg=$4 ldflags=${5:-}
  local out; out=$(bin_path "$name" "$ver")
  if [[ -x $out ]]; then log "$name $ver: cached at $out"; return 0; fi
  log "$name $ver: building $pkg"
  local took; took=$(go_build "$out" "$dir" "$pkg" "$ldflags")
  log "$name $ver: built in ${took}s"
  printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$name" "$ver" "${took}s" >> "$TIMES"
}

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1fs", b - a }'; }
log() { printf '[e2e %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
