#!/usr/bin/env bash
# npm run e2e: the ci stack against a real control plane on loopback (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok's fake node), built by tools/e2e/build.sh into
# $E2E_CACHE. The steps are TypeScript (tools/e2e/driver.ts, tools/e2e/steps/*.ts); this script
# prepares the work folder and the environment, runs them, and supervises what they start: every
# process the run starts is listed in $WORK/pids and stopped on exit, whatever failed.
# Each step prints its time; the last line is `e2e: N passed, N failed, N skipped`.
# E2E_KEEP=1 keeps the work folder. The run happens in namespaces of its own (namespace.sh): the
# host's network, mounts and cgroups are checked afterwards to be as they were.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/namespace.sh"

if [[ ${E2E_INSIDE:-} != 1 ]]; then
  ns_cleanup_stale
  ID=ops-e2e-$$
  BEFORE=$(ns_snapshot "$ID")
  HOLDER=
  forward() { local c; [[ -n $HOLDER ]] && for c in $(pgrep -P "$HOLDER"); do kill -TERM "$c" 2>/dev/null || true; done; }
  trap forward INT TERM
  ns_enter "$ID" env E2E_INSIDE=1 bash "$0" "$@" &
  HOLDER=$!
  rc=0
  while :; do rc=0; wait "$HOLDER" || rc=$?; kill -0 "$HOLDER" 2>/dev/null || break; done
  ns_cleanup_cgroups "$ID" || echo "host: the run's cgroups $ID could not all be removed"
  if changed=$(diff <(echo "$BEFORE") <(ns_snapshot "$ID")); then
    echo "host: left as it was (interfaces, addresses, routes, iptables rules, mounts, cgroups compared before and after)"
  else
    echo "host: NOT as it was:"; echo "$changed" | sed 's/^/  /'; ((rc)) || rc=1
  fi
  exit "$rc"
fi
ns_inside

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ops-e2e.XXXXXX")
mkdir -p "$WORK/logs" "$WORK/pki" "$WORK/bin"
: > "$WORK/pids"

stop_all() {
  local pid pids=()
  if [[ -n ${DRIVER:-} ]]; then kill -TERM "$DRIVER" 2>/dev/null || true; fi
  if [[ -f $WORK/pids ]]; then mapfile -t pids < "$WORK/pids"; fi
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  # Loopback addresses the webhook stand-in added and could not remove (tools/e2e/webhookStandIn.ts).
  if [[ -f $WORK/webhook-standin/addresses ]]; then
    while read -r a; do ip addr del "$a/32" dev lo 2>/dev/null || true; done < "$WORK/webhook-standin/addresses"
  fi
  if [[ ${E2E_KEEP:-} == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# The pulumi CLI never reaches for the network: a home in the work folder, no plugin download.
export PULUMI_HOME="$WORK/pulumi-home" PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
# The file backend writes the whole state after every step; zstd-compressed, each write is about a
# twentieth of the bytes and the checkpoints stay (docs/e2e.md, "Engine speed: the levers").
export PULUMI_DIY_BACKEND_ZSTD=true
PULUMI_CONFIG_PASSPHRASE=$(openssl rand -hex 32); export PULUMI_CONFIG_PASSPHRASE
ln -sf "$(bin_path pulumi "$PULUMI_VERSION")" "$WORK/bin/pulumi"
ln -sf "$(bin_path pulumi-resource-kubernetes "$KUBERNETES_PROVIDER_VERSION")" "$WORK/bin/pulumi-resource-kubernetes"
# tools/e2e/bin: the policy-pack analyzer shim and the STAND-IN random and tls providers (e2e only).
export PATH="$WORK/bin:$E2E_DIR/bin:$PATH"
# The providers talk to this run's API server only; helm's caches stay in the work folder.
export KUBECONFIG="$WORK/pki/admin.kubeconfig" HELM_CACHE_HOME="$WORK/helm/cache" HELM_CONFIG_HOME="$WORK/helm/config" HELM_DATA_HOME="$WORK/helm/data"
export OPS_JS_CACHE="${OPS_JS_CACHE:-$E2E_CACHE/js}"
# The toolchain for the driver (lib.sh holds the versions).
export E2E_WORK="$WORK" E2E_CACHE K8S_VERSION ETCD_VERSION KWOK_VERSION PULUMI_VERSION KUBERNETES_PROVIDER_VERSION HELM_VERSION
E2E_REQUIRED=$(e2e_required); E2E_ENGINE=$(e2e_engine); export E2E_REQUIRED E2E_ENGINE
# The real node (steps/realnode.ts): its addresses in this namespace, its toolchain, what it lacks.
export E2E_NODE_IP=$NODE_IP E2E_INTERNET_IP=$INTERNET_IP KUBE_ROUTER_VERSION COREDNS_VERSION PAUSE_VERSION
E2E_NODE_MISSING=$(node_missing | tr '\n' ';' || true); export E2E_NODE_MISSING

set +e
"$REPO_DIR/node_modules/.bin/tsx" "$E2E_DIR/driver.ts" &
DRIVER=$!
wait "$DRIVER"
rc=$?
DRIVER=
exit "$rc"
