#!/usr/bin/env bash
# Installs into the e2e kind cluster what the ci stack needs from outside this repository:
#   e2e-manifests.sh ingress                   # the ingress controller (ingress-nginx, kind provider)
#   e2e-manifests.sh crds out/ci/manifests.yaml # the CRDs of every non-built-in API group the render uses
# Every file is fetched from its project's repository at a commit (not a tag, which can be moved)
# and applied only when its sha256 matches the value below. Each commit is the one its release
# tag pointed to, and each sha256 that of the file at that commit, both read with
# `git rev-parse <tag>^{commit}` and `git show <commit>:<path> | sha256sum` in a clone of the
# project on 2026-11-25. An API group not listed here fails the job by name.
set -euo pipefail

INGRESS_NGINX=64780b1fed3af99f4eccbc3fdad7ad785e8a83b6 # kubernetes/ingress-nginx controller-v1.12.1
ARGO_CD=a25c8a0eef7830be0c2c9074c92dbea8ff23a962       # argoproj/argo-cd v2.13.3
CERT_MANAGER=33df0f22ab5753b942ce2deb36d7e452bc78e49d  # cert-manager/cert-manager v1.16.2
PROMETHEUS_OPERATOR=1d2dca5a93d50fe09d7662860f80448d2e37ff1a # prometheus-operator/prometheus-operator v0.79.2

# The raw-file host; a test points it at a local folder (file://).
RAW_BASE=${E2E_RAW_BASE:-https://raw.githubusercontent.com}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# verified REPO COMMIT PATH SHA256 -> path of the downloaded file, after its checksum matched
verified() {
  local repo=$1 commit=$2 file=$3 sum=$4 out
  out="$work/$(printf '%s' "$repo/$file" | tr '/' '_')"
  curl -fsSL --retry 3 -o "$out" "$RAW_BASE/$repo/$commit/$file"
  if ! printf '%s  %s\n' "$sum" "$out" | sha256sum -c --status; then
    echo "::error::$repo/$file at $commit does not have the sha256 $sum: not applied" >&2
    return 1
  fi
  printf '%s\n' "$out"
}

ingress() {
  local f
  f=$(verified kubernetes/ingress-nginx "$INGRESS_NGINX" deploy/static/provider/kind/deploy.yaml cb84b0ea747c9149cce08aef4e95b1e55f183f07299f40e7009043e960a0133f)
  kubectl apply -f "$f"
  kubectl -n ingress-nginx wait --for=condition=Ready pod -l app.kubernetes.io/component=controller --timeout=300s
}

crds() {
  local manifests=$1 group f file sum
  local builtin='^(v1|apps|batch|autoscaling|policy|networking\.k8s\.io|rbac\.authorization\.k8s\.io|storage\.k8s\.io|scheduling\.k8s\.io|coordination\.k8s\.io|discovery\.k8s\.io|admissionregistration\.k8s\.io|apiextensions\.k8s\.io|node\.k8s\.io)$'
  local groups
  mapfile -t groups < <(grep -E '^apiVersion: ' "$manifests" | sed -E 's/^apiVersion: //; s#/.*##' | sort -u)
  for group in "${groups[@]}"; do
    [[ "$group" =~ $builtin ]] && continue
    echo "::group::CRDs for $group"
    case "$group" in
      cert-manager.io)
        # The CRDs only (the ci stack has ClusterIssuers; no controller issues certificates, the
        # ingress serves its default certificate). The files are the chart's: their label values
        # are Helm templates, which the API server would refuse, so those lines are dropped.
        while read -r file sum; do
          f=$(verified cert-manager/cert-manager "$CERT_MANAGER" "deploy/crds/$file" "$sum")
          grep -vE "^\s+[a-z./]+: '\{\{.*\}\}'\s*$" "$f" | kubectl apply -f -
        done <<'PINS'
crd-clusterissuers.yaml 00c084501df99d9f619847355fa548d8a09e199eddc811f1c767998ddd22d655
crd-issuers.yaml ba2c503318f1f14f63fa7ad61589e4d7718c09d82eb39bbc9fd78c8d0fac1b6b
crd-certificates.yaml b419c7a07f7ea95044beede49fcc0c33dc8c1f81b97f888c890d34c293012112
PINS
        ;;
      argoproj.io)
        while read -r file sum; do
          f=$(verified argoproj/argo-cd "$ARGO_CD" "manifests/crds/$file" "$sum")
          kubectl apply --server-side -f "$f"
        done <<'PINS'
application-crd.yaml 69377c0f0308b610beee247d7d5352dfd9a2947c00a2ebf29ec0282101b23cd5
appproject-crd.yaml d9a63cb9a12ef66bbf4e811c94fbaa3922af00ed7bb3af791e85dcd7337ffe4c
applicationset-crd.yaml d13d9a992fdb8c5d7a8ece02176ffd70d9f3a966c1cefaace92f5f6d5dfda4d2
PINS
        ;;
      monitoring.coreos.com)
        f=$(verified prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR" example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml c8947e584c8e9cb40a339bb887e5bf9a3cafda8b915b63c7cb077dd4a9f4528e)
        kubectl apply --server-side -f "$f" ;;
      kubelet.config.k8s.io)
        : ;; # a KubeletConfiguration document inside a ConfigMap, not an API object
      *)
        echo "::error::the ci stack uses API group $group, which .github/scripts/e2e-manifests.sh does not install: add its CRDs at a commit with their sha256"; exit 1 ;;
    esac
    echo "::endgroup::"
  done
  kubectl wait --for=condition=Established crd --all --timeout=120s
}

case "${1:-}" in
  verified) verified "$2" "$3" "$4" "$5" ;; # for the tests: prints the path of the checked file
  ingress) ingress ;;
  crds) crds "${2:?usage: e2e-manifests.sh crds <manifests.yaml>}" ;;
  *) echo "usage: e2e-manifests.sh ingress | crds <manifests.yaml>" >&2; exit 2 ;;
esac
