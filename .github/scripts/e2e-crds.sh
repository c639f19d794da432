#!/usr/bin/env bash
# Installs, into the e2e kind cluster, the CustomResourceDefinitions (and for cert-manager the
# controller) of every non-built-in API group the rendered stack uses, so `pulumi up` can create
# its custom resources. Usage: e2e-crds.sh out/ci/manifests.yaml
# The versions are pinned; an API group this script does not know fails the job by name.
set -euo pipefail
manifests="$1"

builtin='^(v1|apps|batch|autoscaling|policy|networking\.k8s\.io|rbac\.authorization\.k8s\.io|storage\.k8s\.io|scheduling\.k8s\.io|coordination\.k8s\.io|discovery\.k8s\.io|admissionregistration\.k8s\.io|apiextensions\.k8s\.io|node\.k8s\.io)$'
groups=$(grep -E '^apiVersion: ' "$manifests" | sed -E 's/^apiVersion: //; s#/.*##' | sort -u)

for group in $groups; do
  [[ "$group" =~ $builtin ]] && continue
  echo "::group::CRDs for $group"
  case "$group" in
    cert-manager.io)
      kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.16.2/cert-manager.yaml
      kubectl -n cert-manager wait --for=condition=Available deployment --all --timeout=300s ;;
    argoproj.io)
      for crd in application-crd appproject-crd applicationset-crd; do
        kubectl apply --server-side -f "https://raw.githubusercontent.com/argoproj/argo-cd/v2.13.3/manifests/crds/$crd.yaml"
      done ;;
    autoscaling.k8s.io)
      kubectl apply -f https://raw.githubusercontent.com/kubernetes/autoscaler/vertical-pod-autoscaler-1.2.1/vertical-pod-autoscaler/deploy/vpa-v1-crd-gen.yaml ;;
    monitoring.coreos.com)
      kubectl apply --server-side -f https://github.com/prometheus-operator/prometheus-operator/releases/download/v0.79.2/stripped-down-crds.yaml ;;
    templates.gatekeeper.sh|constraints.gatekeeper.sh|config.gatekeeper.sh)
      kubectl apply -f https://raw.githubusercontent.com/open-policy-agent/gatekeeper/v3.18.2/deploy/gatekeeper.yaml
      kubectl -n gatekeeper-system wait --for=condition=Available deployment --all --timeout=300s ;;
    kubelet.config.k8s.io)
      : ;; # a KubeletConfiguration document inside a ConfigMap, not an API object
    *)
      echo "::error::the ci stack uses API group $group, which .github/scripts/e2e-crds.sh does not install"; exit 1 ;;
  esac
  echo "::endgroup::"
done
kubectl wait --for=condition=Established crd --all --timeout=120s
