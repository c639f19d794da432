#!/usr/bin/env bash
# npm run e2e: the ci stack against a real control plane on loopback (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok's fake node), built by tools/e2e/build.sh into
# $E2E_CACHE. Each step prints its time; the last line is `e2e: N passed, N failed, N skipped`.
# Everything it starts is stopped on exit, whatever failed. E2E_KEEP=1 keeps the work folder.
. "$(dirname "$0")/lib.sh"

STACK=ci
SCHEMAS=${E2E_CRD_SCHEMAS:-$REPO_DIR/../shared/reference/k8s-schemas/crds-deployed.json.gz}
TSX="$REPO_DIR/node_modules/.bin/tsx"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ops-e2e.XXXXXX")
mkdir -p "$WORK/logs" "$WORK/pki" "$WORK/bin"
passed=0 failed=0 stepno=0
T_ALL=$(now_s)

# Every process the run starts is listed in $WORK/pids (steps run in subshells).
stop_all() {
  local pid pids=()
  [[ -f $WORK/pids ]] && mapfile -t pids < "$WORK/pids"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [[ ${E2E_KEEP:-} == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# step NAME CMD...: runs CMD in a subshell that stops at the first failing command (a plain
# `cmd || ...` would switch errexit off inside it), output in a log; prints the result and time.
step() {
  local name=$1; shift
  stepno=$((stepno + 1))
  local t0 out="$WORK/logs/step-$stepno.log" rc=0
  t0=$(now_s)
  ( set -euo pipefail; "$@" ) > "$out" 2>&1 &
  wait $! || rc=$?
  if ((rc == 0)); then
    passed=$((passed + 1))
    printf 'ok    %2d %-62s %8s\n' "$stepno" "$name" "$(elapsed "$t0")"
    sed -n 's/^RESULT: /        /p' "$out"
  else
    failed=$((failed + 1))
    printf 'FAIL  %2d %-62s %8s (exit %d)\n' "$stepno" "$name" "$(elapsed "$t0")" "$rc"
    tail -n 25 "$out" | sed 's/^/        | /'
  fi
  return "$rc"
}

# not_run NAME WHY: a step this machine cannot run, said as such and counted as skipped.
skipped=0
not_run() { skipped=$((skipped + 1)); printf 'skip     %-62s (%s)\n' "$1" "$2"; }

finish() {
  printf 'total %s\n' "$(elapsed "$T_ALL")"
  echo "e2e: $passed passed, $failed failed, $skipped skipped"
  if ((failed)); then exit 1; fi
  exit 0
}

# must NAME CMD...: a step the next ones need; on failure the run ends there.
must() { step "$@"; (( $? == 0 )) || finish; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start() { # start NAME CMD...: a background process of the run, logged to logs/NAME.log
  local name=$1; shift
  "$@" > "$WORK/logs/$name.log" 2>&1 &
  echo $! >> "$WORK/pids"
  echo "$name: pid $!, log $WORK/logs/$name.log"
}

wait_for() { # wait_for SECONDS WHAT CMD...
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || { echo "timed out after ${limit}s waiting for $what"; return 1; }
    sleep 0.5
  done
}

# kubectl's discovery cache lives in the work folder (dropped when CRDs are added).
KUBECTL() { "$(bin_path kubectl "$K8S_VERSION")" --kubeconfig "$WORK/pki/admin.kubeconfig" --cache-dir "$WORK/kube-cache" "$@"; }

# ---------------------------------------------------------------------------------------------
toolchain() {
  local missing
  missing=$(toolchain_missing) || { echo "not in $E2E_CACHE: $(echo $missing); build with: npm run e2e:build"; return 1; }
  echo "RESULT: $E2E_CACHE:$(e2e_required | tr ' ' '-' | sed 's/^/ /' | tr -d '\n')"
}

render() {
  (cd "$REPO_DIR" && "$TSX" cli/render.ts --stack "$STACK" --out "$WORK/render")
  echo "RESULT: $(grep -c '^kind: ' "$WORK/render/manifests.yaml") objects in the offline render of stack $STACK"
}

# A CA, the API server's serving certificate and one client certificate per component.
pki() {
  cd "$WORK/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout ca.key -out ca.crt -subj "/CN=ops-e2e-ca"
  cert() { # cert NAME SUBJECT [SAN]
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
    local ext=/dev/null
    if [[ -n ${3:-} ]]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$3" > "$1.ext"; ext="$1.ext"
    else printf 'extendedKeyUsage=clientAuth\n' > "$1.ext"; ext="$1.ext"; fi
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -out "$1.crt" -extfile "$ext"
  }
  cert apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin "/O=system:masters/CN=ops-e2e-admin"
  cert controller-manager "/CN=system:kube-controller-manager"
  cert scheduler "/CN=system:kube-scheduler"
  cert kwok "/O=system:masters/CN=kwok"
  openssl genrsa -out sa.key 2048 && openssl rsa -in sa.key -pubout -out sa.pub
  local k c
  for c in admin controller-manager scheduler kwok; do
    k="$c.kubeconfig"
    KUBECTL_() { "$(bin_path kubectl "$K8S_VERSION")" --kubeconfig "$k" "$@"; }
    KUBECTL_ config set-cluster e2e --server "https://127.0.0.1:$API_PORT" --certificate-authority ca.crt --embed-certs
    KUBECTL_ config set-credentials "$c" --client-certificate "$c.crt" --client-key "$c.key" --embed-certs
    KUBECTL_ config set-context e2e --cluster e2e --user "$c"
    KUBECTL_ config use-context e2e
  done
  echo "RESULT: CA, serving certificate for 127.0.0.1:$API_PORT, client certificates: admin, controller-manager, scheduler, kwok"
}

etcd_up() {
  start etcd "$(bin_path etcd "$ETCD_VERSION")" --name e2e --data-dir "$WORK/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
  wait_for 60 "etcd /health" curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  echo "RESULT: etcd $(curl -s "http://127.0.0.1:$ETCD_PORT/version") on 127.0.0.1:$ETCD_PORT"
}

apiserver_up() {
  local p="$WORK/pki"
  start kube-apiserver "$(bin_path kube-apiserver "$K8S_VERSION")" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$API_PORT" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" --authorization-mode Node,RBAC --anonymous-auth=false \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --endpoint-reconciler-type none --profiling=false \
    --allow-privileged=true
  wait_for 120 "kube-apiserver /readyz" KUBECTL get --raw /readyz
  local v; v=$(KUBECTL get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])')
  [[ $v == "v$K8S_VERSION" ]] || { echo "/version reports $v, expected v$K8S_VERSION"; return 1; }
  echo "RESULT: kube-apiserver $v on https://127.0.0.1:$API_PORT (client certificates, RBAC)"
}

controllers_up() {
  local p="$WORK/pki"
  start kube-controller-manager "$(bin_path kube-controller-manager "$K8S_VERSION")" \
    --kubeconfig "$p/controller-manager.kubeconfig" --secure-port 0 --leader-elect=false \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" --use-service-account-credentials
  start kube-scheduler "$(bin_path kube-scheduler "$K8S_VERSION")" \
    --kubeconfig "$p/scheduler.kubeconfig" --secure-port 0 --leader-elect=false
  start kwok "$(bin_path kwok "$KWOK_VERSION")" --kubeconfig "$p/kwok.kubeconfig" \
    --config "$(kwok_stages)" \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-lease-duration-seconds 40
  wait_for 60 "the default ServiceAccount (controller manager)" KUBECTL -n default get serviceaccount default
  echo "RESULT: kube-controller-manager, kube-scheduler, kwok $KWOK_VERSION running"
}

node_up() {
  "$TSX" "$E2E_DIR/cli.ts" standins "$WORK/render/manifests.yaml" "$WORK/render/node/kubelet-config.yaml" "$WORK/volumes" "$WORK"
  # Created with its status, as a registering kubelet does.
  KUBECTL create -f "$WORK/node.json"
  KUBECTL wait --for=condition=Ready node -l type=kwok --timeout=60s
  echo "RESULT: $(KUBECTL get node -l type=kwok -o jsonpath='{range .items[*]}{.metadata.name} Ready, allocatable cpu {.status.allocatable.cpu} memory {.status.allocatable.memory}{end}')"
}

crds() {
  [[ -f $SCHEMAS ]] || { echo "$SCHEMAS is missing: the e2e needs shared/ beside the repository"; return 1; }
  "$TSX" "$E2E_DIR/cli.ts" crds "$WORK/render/manifests.yaml" "$SCHEMAS" "$WORK/crds.json" | tee "$WORK/crds.txt"
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/crds.json"
  KUBECTL wait --for=condition=Established crd -l app.kubernetes.io/managed-by=ops-e2e --timeout=60s
  rm -rf "$WORK/kube-cache"
  echo "RESULT: $(cat "$WORK/crds.txt") (from $(basename "$SCHEMAS"))"
}

standins() {
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/volumes.json"
  echo "RESULT: $(KUBECTL get pv -l ops-e2e/stand-in=storage -o name | wc -l) PersistentVolumes pre-bound to the stack's claims (no volume provisioner here)"
}

apply() {
  local m="$WORK/render/manifests.yaml"
  "$TSX" "$E2E_DIR/cli.ts" lists "$m" "$WORK"
  # Namespaces first, and their default ServiceAccounts, which pods need.
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/namespaces.json"
  local ns
  for ns in $(KUBECTL get -f "$WORK/namespaces.json" -o jsonpath='{.items[*].metadata.name}'); do
    wait_for 30 "ServiceAccount default in namespace $ns" KUBECTL -n "$ns" get serviceaccount default
  done
  now_s > "$WORK/t-kubectl-apply"
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/objects.json" | tee "$WORK/applied.txt"
  local n got
  n=$(grep -c '^kind: ' "$m")
  got=$(KUBECTL get -f "$WORK/all.json" -o name | wc -l)
  ((got == n)) || { echo "$got objects of the $n rendered are on the cluster"; return 1; }
  echo "RESULT: all $n objects of the render accepted by the API server (server-side apply)"
}

workloads() {
  KUBECTL wait --for=condition=Available deployment --all -A --timeout=180s
  local ns name
  # spec.replicas is read on each try: an autoscaler may still be changing it.
  while read -r ns name; do
    wait_for 180 "every replica of StatefulSet $ns/$name available" sts_ready "$ns" "$name"
  done < <(KUBECTL get statefulset -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name}{"\n"}{end}')
  KUBECTL wait --for=condition=Complete job -A -l app.kubernetes.io/part-of=ops-environment --timeout=180s
  local cron want
  cron=$(KUBECTL get cronjob -A -o name | wc -l); want=$(grep -c '^kind: CronJob' "${WORK_RENDER:-$WORK/render}/manifests.yaml")
  ((cron == want)) || { echo "$cron CronJobs on the cluster, $want rendered"; return 1; }
  if [[ -f $WORK/t-kubectl-apply && ! -f $WORK/time-kubectl-apply ]]; then secs "$(cat "$WORK/t-kubectl-apply")" > "$WORK/time-kubectl-apply"; fi
  echo "RESULT: $(KUBECTL get deploy -A --no-headers | wc -l) Deployments Available, $(KUBECTL get sts -A --no-headers | wc -l) StatefulSets with every replica available, $(KUBECTL get job -A -l app.kubernetes.io/part-of=ops-environment --no-headers | wc -l) Jobs complete, $cron CronJobs admitted"
  echo "RESULT: $(KUBECTL get pods -A --no-headers | awk '{print $4}' | sort | uniq -c | tr '\n' ' ')pods (kwok moves scheduled pods to Running and Ready)"
}

sts_ready() { # sts_ready NS NAME: status 0 when availableReplicas equals spec.replicas
  local r; r=$(KUBECTL -n "$1" get statefulset "$2" -o jsonpath='{.spec.replicas} {.status.availableReplicas}')
  [[ $r =~ ^([0-9]+)\ ([0-9]+)$ && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]]
}

# The cluster holds exactly the render: same objects, every rendered field with its value.
# kinds: "Kind.group,..." of every kind in the render, for kubectl get.
kinds() {
  python3 - "${1:-${WORK_RENDER:-$WORK/render}/manifests.yaml}" <<'PY'
import sys, re
seen = []
for d in open(sys.argv[1]).read().split("\n---\n"):
    a = re.search(r"^apiVersion: (\S+)$", d, re.M); k = re.search(r"^kind: (\S+)$", d, re.M)
    if not (a and k): continue
    g = a.group(1).split("/")[0] if "/" in a.group(1) else ""
    r = k.group(1) + ("." + g if g else "")
    if r not in seen: seen.append(r)
print(",".join(seen))
PY
}

# --generated-secrets: the engine made the Secrets' values (random, tls, config secrets), the
# render has placeholders: their keys are compared, not their values.
compare() {
  local kinds; kinds=$(kinds)
  KUBECTL get "$kinds" -A -o json > "$WORK/live.json"
  "$TSX" "$E2E_DIR/cli.ts" compare "${WORK_RENDER:-$WORK/render}/manifests.yaml" "$WORK/live.json" "$@" | tee "$WORK/compare.txt"
  echo "RESULT: $(tail -n 1 "$WORK/compare.txt")"
}

# A second server-side apply must change no field. Objects the server would rewrite with only a
# new generation are listed: empty lists or maps in the render (the server stores them absent,
# so each apply sees empty-vs-absent as an update).
no_change() {
  local rc=0 i t0 times=""
  for i in $(seq "$REPEAT"); do
    t0=$(now_s); rc=0
    KUBECTL diff --server-side --field-manager ops-e2e -f "$WORK/all.json" > "$WORK/diff.txt" 2>&1 || rc=$?
    times+=" $(secs "$t0")"
  done
  echo "$times" > "$WORK/time-kubectl-diff"
  ((rc <= 1)) || { cat "$WORK/diff.txt"; echo "kubectl diff failed (exit $rc)"; return 1; }
  local changed rewritten
  changed=$(grep -E '^[-+] ' "$WORK/diff.txt" | grep -vE '^[-+] +generation: [0-9]+$' || true)
  rewritten=$(grep -cE '^\+ +generation: [0-9]+$' "$WORK/diff.txt" || true)
  [[ -z $changed ]] || { cat "$WORK/diff.txt"; echo "a second apply would change fields (above)"; return 1; }
  if ((rewritten)); then
    echo "RESULT: no field changes; $rewritten objects would get a new generation (empty lists/maps in the render):"
    grep -E '^diff -u' "$WORK/diff.txt" | sed -E 's#.*/([^/]+)$#\1#; s/^([a-z0-9.-]+\.)?v[0-9]+[a-z0-9]*\.//' | tr '\n' ' ' | sed 's/^/RESULT:   /'; echo
  else
    echo "RESULT: kubectl diff --server-side of the render: no change"
  fi
}

# An object edited on the cluster must be found by the diff, which then fails.
drift() {
  KUBECTL -n booking patch deployment booking --type merge -p '{"spec":{"replicas":3}}' --field-manager e2e-drift
  local rc=0
  KUBECTL diff --server-side --force-conflicts --field-manager ops-e2e -f "$WORK/all.json" > "$WORK/drift.txt" 2>&1 || rc=$?
  ((rc == 1)) || { cat "$WORK/drift.txt"; echo "kubectl diff exited $rc after the edit, expected 1 (differences found)"; return 1; }
  grep -A2 -E '^diff -u.*Deployment\.booking\.booking$' "$WORK/drift.txt"
  grep -qE '^-  replicas: 3$' "$WORK/drift.txt" || { cat "$WORK/drift.txt"; echo "the diff does not show the edited field"; return 1; }
  KUBECTL apply --server-side --field-manager ops-e2e --force-conflicts -f "$WORK/all.json" > /dev/null
  [[ $(KUBECTL -n booking get deployment booking -o jsonpath='{.spec.replicas}') == 1 ]] || { echo "re-apply did not restore replicas"; return 1; }
  echo "RESULT: drift (booking replicas 1 -> 3 by another field manager) found by kubectl diff --server-side (exit 1), re-applied: replicas 1"
}

# ---- The Pulumi engine (issue 18) ------------------------------------------------------------
# The real pulumi CLI runs the real program through the Automation API (tools/e2e/engine.ts, an
# inline program: the Node.js language host is not needed) with the kubernetes provider 4.25.0
# built from the proxy, the stand-in random and tls providers and the policy-pack analyzer shim of
# tools/e2e/bin on PATH. The project folder holds the repository's files through links (Pulumi.yaml
# is the real one) and copies of the stack files, which the CLI writes (encryption salt, secrets):
# the repository is never written.
ENGINE() { # ENGINE OP STACK NAME [ARGS]: report in $WORK/engine-NAME.json, output in logs/engine-NAME.log
  local op=$1 stack=$2 name=$3 rc=0; shift 3
  "$TSX" "$E2E_DIR/engine.ts" "$op" --dir "$WORK/project" --stack "$stack" --json "$WORK/engine-$name.json" "$@" \
    > "$WORK/logs/engine-$name.log" 2>&1 || rc=$?
  grep '^ENGINE: ' "$WORK/logs/engine-$name.log" || tail -n 30 "$WORK/logs/engine-$name.log"
  return $rc
}
# jq-like reads of an engine report: EJ NAME EXPR (a python expression over `r`)
EJ() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$WORK/engine-$1.json" "$2"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }
secs() { printf '%.1f' "$(awk -v a="$1" -v b="$(now_s)" 'BEGIN { print b - a }')"; }
REPEAT=${E2E_REPEAT:-3}

# Stand-ins for the add-on charts: the ci and prod stacks install every add-on as a helm Release
# from its chart repository, which this machine cannot reach. Each stack's copy points every
# add-on at a chart repository on loopback serving, at each pinned name and version, an empty
# STAND-IN chart (the CRDs their dependents need are installed by the crds step), plus the chart
# of step 6 (tools/e2e/charts/hooked).
chart_repo() {
  local dir="$WORK/charts" c
  mkdir -p "$dir/src"
  python3 - "$WORK/render/resources.json" "$dir/src" <<'PY'
import json, os, sys
res = json.load(open(sys.argv[1]))
res = res if isinstance(res, list) else res.get("resources", [])
for r in res:
    if r["type"] != "kubernetes:helm.sh/v3:Release": continue
    p = r.get("inputs", {})
    d = os.path.join(sys.argv[2], p["chart"])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "Chart.yaml"), "w") as f:
        f.write(f"apiVersion: v2\nname: {p['chart']}\nversion: {p['version']}\n"
                "description: STAND-IN for the e2e (tools/e2e/run.sh), no objects; the real chart's repository is not reachable here\n")
PY
  cp -r "$E2E_DIR/charts/hooked" "$dir/src/"
  for c in "$dir"/src/*; do tar -C "$dir/src" -czf "$dir/$(basename "$c")-$(sed -n 's/^version: //p' "$c/Chart.yaml").tgz" "$(basename "$c")"; done
  python3 - "$dir" <<'PY'
import hashlib, os, sys, tarfile, yaml
d = sys.argv[1]; entries = {}
for f in sorted(os.listdir(d)):
    if not f.endswith(".tgz"): continue
    with tarfile.open(os.path.join(d, f)) as t:
        meta = yaml.safe_load(t.extractfile([m for m in t.getmembers() if m.name.endswith("/Chart.yaml")][0]))
    meta.update(urls=[f], digest=hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest(), created="2026-01-01T00:00:00Z")
    entries.setdefault(meta["name"], []).append(meta)
yaml.safe_dump({"apiVersion": "v1", "entries": entries, "generated": "2026-01-01T00:00:00Z"}, open(os.path.join(d, "index.yaml"), "w"))
PY
  CHART_PORT=$(free_port)
  start chart-repo python3 -m http.server --bind 127.0.0.1 --directory "$dir" "$CHART_PORT"
  wait_for 30 "the chart repository" curl -sf "http://127.0.0.1:$CHART_PORT/index.yaml"
  echo "$CHART_PORT" > "$WORK/chart-port"
  echo "RESULT: chart repository http://127.0.0.1:$CHART_PORT: $(ls "$dir"/*.tgz | xargs -n1 basename | tr '\n' ' ')"
}
chart_url() { echo "http://127.0.0.1:$(cat "$WORK/chart-port")"; }

# The one thing of ingress-nginx the engine waits for: each Ingress's .status.loadBalancer (the
# provider waits until it is set). Runs in the background while the engine works; bounded.
ingress_standin() {
  local i
  for i in $(seq 2400); do
    KUBECTL get ingress -A -o json 2>/dev/null | python3 -c '
import json, sys
for i in json.load(sys.stdin).get("items", []):
    if not (i.get("status", {}).get("loadBalancer", {}) or {}).get("ingress"):
        print(i["metadata"]["namespace"], i["metadata"]["name"])' |
    while read -r ns name; do
      KUBECTL -n "$ns" patch ingress "$name" --subresource=status --type=merge \
        -p '{"status":{"loadBalancer":{"ingress":[{"ip":"127.0.0.1"}]}}}' > /dev/null 2>&1 || true
    done
    sleep 2
  done
}

pulumi_project() {
  mkdir -p "$WORK/project" "$WORK/hooks"
  local f s
  for f in "$REPO_DIR"/* "$REPO_DIR"/.github; do
    case $(basename "$f") in Pulumi.ci.yaml|Pulumi.prod.yaml) cp "$f" "$WORK/project/" ;; *) ln -s "$f" "$WORK/project/" ;; esac
  done
  cd "$WORK/project"
  pulumi version
  mkdir -p "$WORK/state" && pulumi login "file://$WORK/state"
  for s in ci prod; do
    pulumi stack init "$s" --secrets-provider passphrase
    "$TSX" .github/scripts/ci-secrets.ts --stack "$s" > /dev/null
    for f in IngressNginx CertManager Reloader MetricsServer Vpa ArgoCd Monitoring; do
      pulumi config set --stack "$s" "ops:addons${f}Repo" "$(chart_url)"
    done
  done
  # prod runs every image by its digest recorded in images.lock.json, which has no record here (no
  # registry access; docs/images.md), so the program stops before anything is created. The e2e's
  # copy of prod takes the offline render's setting instead: the all-zero placeholder digest, which
  # kwok never pulls and which is never accepted in the lock. Same objects as the prod render.
  pulumi config set --stack prod render:imageDigests placeholder
  local secure; secure=$(grep -c 'secure: ' Pulumi.ci.yaml)
  ((secure > 0)) || { echo "no secure value in the stack file after config set --secret"; return 1; }
  git -C "$REPO_DIR" diff --quiet -- Pulumi.ci.yaml Pulumi.prod.yaml || { echo "the repository's stack files were written"; return 1; }
  echo "RESULT: pulumi $(pulumi version), login file://, stacks ci and prod, $secure secrets set with config set --secret (stored encrypted), add-on repositories -> $(chart_url)"
}

engine_setup() {
  # Pre-bound volumes again (the kubectl path's teardown deleted them with their claims).
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/volumes.json" > /dev/null
  chart_repo
  pulumi_project
  # Step 5's broken stack (bridgeImage from a repository no rule allows), previewed with the pack now,
  # on the empty cluster: none of the stack's own admission policies is there yet, so the preview
  # runs through to the pack's stack checks. Step 5 judges it.
  cp "$WORK/project/Pulumi.ci.yaml" "$WORK/broken.yaml"
  (cd "$WORK/project" && pulumi config set --config-file "$WORK/broken.yaml" --stack ci ops:bridgeImage quay.io/busybox/busybox:1.37.0)
  ENGINE preview ci pack-broken-empty --config-file "$WORK/broken.yaml" --policy-pack policies --policy-pack-config policies/config/ci.json || true
}

# Step 1: pulumi up converges; then the checks of the kubectl path: workloads ready, cluster == render.
engine_up() {
  local t0; t0=$(now_s)
  ENGINE up ci up
  secs "$t0" > "$WORK/time-pulumi-up"
  workloads
  compare --generated-secrets
  echo "RESULT: pulumi up: $(EJ up 'r["summary"]'), $(cat "$WORK/time-pulumi-up") s with the engine's own waits"
}

# Step 2: a second run changes nothing (timed REPEAT times: the speed figure).
engine_no_change() {
  local i t0 times=""
  for i in $(seq "$REPEAT"); do
    t0=$(now_s)
    ENGINE preview ci noop-$i --expect-no-changes
    times+=" $(secs "$t0")"
  done
  echo "$times" > "$WORK/time-pulumi-preview"
  echo "RESULT: pulumi preview --expect-no-changes exits 0 ($(EJ noop-1 'r["summary"]')); median $(median <<<"$times") s of$times"
}

# Step 3: an edit by another field manager is found by the drift workflow's command, then repaired
# (the program's objects carry pulumi.com/patchForce: components/lib/fieldOwnership.ts). At the same
# time the autoscaled bridge is scaled through the scale subresource, as its autoscaler does: that
# is not drift (the autoscaler owns spec.replicas), and the repair must leave it alone.
engine_drift() {
  local bridge_before
  bridge_before=$(KUBECTL -n agent get deployment model-bridge -o jsonpath='{.spec.replicas}')
  KUBECTL -n booking patch deployment booking --type merge -p '{"spec":{"replicas":3}}' --field-manager e2e-drift
  KUBECTL -n agent patch deployment model-bridge --subresource=scale --type merge -p '{"spec":{"replicas":1}}' --field-manager e2e-autoscaler
  if ENGINE preview ci drift --refresh --expect-no-changes; then echo "preview --refresh --expect-no-changes passed despite the drift"; return 1; fi
  local updates; updates=$(EJ drift '"; ".join(sorted(s["object"] or s["urn"] for s in r["steps"] if s["op"] == "update"))')
  [[ $updates == "Deployment booking/booking" ]] ||
    { EJ drift 'r["steps"]'; echo "the preview should update exactly Deployment booking/booking, it updates: $updates"; return 1; }
  ENGINE up ci repair --refresh
  [[ $(KUBECTL -n booking get deployment booking -o jsonpath='{.spec.replicas}') == 1 ]] || { echo "pulumi up --refresh did not restore booking's replicas"; return 1; }
  [[ $(KUBECTL -n agent get deployment model-bridge -o jsonpath='{.spec.replicas}') == 1 ]] || { echo "pulumi up --refresh took the autoscaled bridge's replicas back from the autoscaler"; return 1; }
  ENGINE preview ci after-repair --expect-no-changes
  KUBECTL -n agent patch deployment model-bridge --subresource=scale --type merge -p "{\"spec\":{\"replicas\":$bridge_before}}" --field-manager e2e-autoscaler > /dev/null
  echo "RESULT: drift (booking replicas 1 -> 3 by field manager e2e-drift) found by pulumi preview --refresh --expect-no-changes (non-zero, update of $updates only), repaired by pulumi up --refresh (replicas 1), then no change"
  echo "RESULT: the autoscaled bridge scaled $bridge_before -> 1 through the scale subresource meanwhile: not reported as drift, left at 1 by the repair"
}

# Step 4: a change of configuration: in place where possible, replaced where not, as the preview
# said; the PR diff names the same replacements. The replacement is the object store's provisioning
# Job (a Job's template is immutable on the API server): a StatefulSet's volumeClaimTemplates would
# be the other candidate, but provider 4.25.0 cannot preview that replacement (docs/e2e.md).
CHANGE='{"workflowWorkerReplicas": 2, "bookingLimitsMemory": "320Mi", "objectStoreBuckets": ["search-snapshots", "e2e-exports"]}'
engine_change() {
  # The render with the change: what the PR diff sees, and volumes for the claims it adds.
  (cd "$REPO_DIR" && "$TSX" "$E2E_DIR/plan.ts" prepare ci "$CHANGE" "$WORK/volumes" "$WORK/change")
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/change/volumes.json" > /dev/null
  cd "$WORK/project"
  pulumi config set --stack ci ops:workflowWorkerReplicas 2
  pulumi config set --stack ci ops:bookingLimitsMemory 320Mi
  pulumi config set --stack ci --path 'ops:objectStoreBuckets[0]' search-snapshots
  pulumi config set --stack ci --path 'ops:objectStoreBuckets[1]' e2e-exports
  ENGINE preview ci change-preview
  ENGINE up ci change-up
  workloads
  "$TSX" "$E2E_DIR/plan.ts" check "$WORK/engine-change-preview.json" "$WORK/engine-change-up.json" "$WORK/change" "$WORK/render/manifests.yaml" | tee "$WORK/plan.txt"
}

# Step 5: the policy pack through the CLI (analyzer shim), timed against the plain preview; a stack
# that breaks a mandatory rule is refused with the policy named.
engine_policy() {
  local i t0 times=""
  for i in $(seq "$REPEAT"); do
    t0=$(now_s)
    ENGINE preview ci pack-$i --policy-pack policies --policy-pack-config policies/config/ci.json
    times+=" $(secs "$t0")"
  done
  echo "$times" > "$WORK/time-pulumi-pack"
  local mandatory; mandatory=$(EJ pack-1 'len([v for v in r["policyViolations"] if v["level"] == "mandatory"])')
  ((mandatory == 0)) || { EJ pack-1 'r["policyViolations"]'; return 1; }
  # The broken stack: on the empty cluster (engine set-up) the pack refuses it by name; on the
  # deployed cluster the stack's own admission policy of the same rule refuses the preview's
  # dry-run of the bridge first, so the preview stops before the pack's stack checks.
  local mandatory_expr='"; ".join(sorted({v["policy"] + ": " + v["message"][:160] for v in r["policyViolations"] if v["level"] == "mandatory"}))'
  [[ $(EJ pack-broken-empty 'r["ok"]') == False ]] || { echo "the pack's preview of the broken stack on the empty cluster passed"; return 1; }
  local named; named=$(EJ pack-broken-empty "$mandatory_expr")
  [[ $named == *allowed-repos* || $named == *quay.io* ]] || { echo "no mandatory violation of the pack names the image repository: $named"; return 1; }
  if ENGINE preview ci pack-broken --config-file "$WORK/broken.yaml" --policy-pack policies --policy-pack-config policies/config/ci.json; then
    echo "the preview of the broken stack passed on the deployed cluster"; return 1
  fi
  local live admission
  live=$(EJ pack-broken "$mandatory_expr")
  admission=$(grep -oE "ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: \[[^]]+\]" "$WORK/logs/engine-pack-broken.log" | sort -u | tr '\n' ' ')
  [[ $live == *allowed-repos* || $admission == *allowed-repos* ]] || { echo "on the deployed cluster neither the pack nor the admission policies name the rule"; return 1; }
  echo "RESULT: pulumi preview --policy-pack policies: passes, $(EJ pack-1 'len(r["policyViolations"])') advisory results; median $(median <<<"$times") s of$times"
  echo "RESULT: bridgeImage from quay.io/busybox, on the empty cluster: exits non-zero, the pack's mandatory: $(tr '\n' ' ' <<<"$named" | cut -c1-240)"
  local said=""
  [[ -z $live ]] || said+="the pack's mandatory: ${live%%$'\n'*}; "
  [[ -z $admission ]] || said+="refused at the preview's dry-run by the stack's own admission policy: $admission"
  echo "RESULT: the same on the deployed cluster: exits non-zero, $said"
}

# Step 6: chart hooks through helm.v3.Release: install, upgrade on a values change, uninstall.
HOOKS() { "$TSX" "$E2E_DIR/engine.ts" "$1" --program hooks --dir "$WORK/hooks" --stack hooks --json "$WORK/engine-hooks-$2.json" --chart-repo "$(chart_url)" --values "$3" > "$WORK/logs/engine-hooks-$2.log" 2>&1 || { tail -n 30 "$WORK/logs/engine-hooks-$2.log"; return 1; }; }
engine_hooks() {
  HOOKS up install '{"message":"first"}'
  [[ $(KUBECTL -n e2e-hooks get secret hooked-token -o jsonpath='{.data.revision}' | base64 -d) == 1 ]] || { echo "the pre-install hook Secret is not revision 1"; return 1; }
  KUBECTL -n e2e-hooks wait --for=condition=Complete job/hooked-prepare-1 --timeout=60s
  KUBECTL -n e2e-hooks wait --for=condition=Available deployment/hooked --timeout=60s
  HOOKS up upgrade '{"message":"second"}'
  [[ $(KUBECTL -n e2e-hooks get secret hooked-token -o jsonpath='{.data.revision}' | base64 -d) == 2 ]] || { echo "the pre-upgrade hook did not run again"; return 1; }
  KUBECTL -n e2e-hooks wait --for=condition=Complete job/hooked-prepare-2 --timeout=60s
  [[ $(KUBECTL -n e2e-hooks get deployment hooked -o jsonpath='{.spec.template.metadata.annotations.e2e/message}') == second ]] || { echo "the upgrade did not change the Deployment"; return 1; }
  HOOKS destroy uninstall '{}'
  ! KUBECTL -n e2e-hooks get deployment hooked > /dev/null 2>&1 || { echo "the release's Deployment is still there after destroy"; return 1; }
  [[ -z $(KUBECTL -n e2e-hooks get secret -l owner=helm -o name) ]] || { echo "helm's release records are still there"; return 1; }
  # Hook objects are not part of a release: helm leaves them on uninstall; the namespace goes with them.
  KUBECTL delete namespace e2e-hooks --wait --timeout=120s > /dev/null
  echo "RESULT: helm.v3.Release of tools/e2e/charts/hooked: install (pre-install hook Secret + Job, Deployment Available), upgrade on a values change (hooks ran again: revision 2), uninstalled by pulumi destroy"
}

# Step 7: prod converges on kwok nodes shaped like its node pool, after ci is destroyed (same namespaces).
left_of() { KUBECTL get "$(kinds "$1")" -A -l app.kubernetes.io/part-of=ops-environment -o name 2>/dev/null; }
engine_prod() {
  local t0; t0=$(now_s)
  ENGINE destroy ci destroy-ci
  local left; left=$(left_of "$WORK/render/manifests.yaml")
  [[ -z $left ]] || { echo "pulumi destroy of ci left:"; echo "$left"; return 1; }
  echo "$(secs "$t0")" > "$WORK/time-destroy-ci"
  KUBECTL delete pv -l ops-e2e/stand-in=storage --wait --timeout=60s > /dev/null
  (cd "$REPO_DIR" && "$TSX" cli/render.ts --stack prod --out "$WORK/render-prod") > "$WORK/logs/render-prod.log"
  "$TSX" "$E2E_DIR/cli.ts" pool "$WORK/render-prod/manifests.yaml" "$WORK/render-prod/node/pool.yaml" "$WORK/render-prod/node/kubelet-config.yaml" "$WORK/volumes-prod" "$WORK/prod"
  KUBECTL cordon -l type=kwok > /dev/null
  KUBECTL create -f "$WORK/prod/node.json"
  KUBECTL wait --for=condition=Ready node -l ops-e2e/pool=prod --timeout=60s
  KUBECTL apply --server-side --field-manager ops-e2e -f "$WORK/prod/volumes.json"
  ENGINE up prod up-prod
  WORK_RENDER="$WORK/render-prod" workloads
  WORK_RENDER="$WORK/render-prod" compare --generated-secrets
  echo "RESULT: pulumi destroy ci: nothing of ci left ($(cat "$WORK/time-destroy-ci") s); prod: $(KUBECTL get node -l ops-e2e/pool=prod --no-headers | wc -l) nodes, pulumi up $(EJ up-prod 'r["summary"]') in $(EJ up-prod 'round(r["seconds"], 1)') s"
}

# Step 8: pulumi destroy leaves nothing of either stack. prod protects its PersistentVolumeClaims
# (the program sets protect in prod: data outlives an accidental destroy), so the first destroy
# must refuse them and leave them on the cluster; decommissioning is `pulumi state unprotect`, then
# destroy (docs/e2e.md).
pvcs_of() { python3 -c 'import sys, yaml; print("\n".join(sorted(d["metadata"]["namespace"] + "/" + d["metadata"]["name"] for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "PersistentVolumeClaim")))' "$1"; }
engine_destroy() {
  local t0 want protected live; t0=$(now_s)
  want=$(pvcs_of "$WORK/render-prod/manifests.yaml")
  protected=$(cd "$WORK/project" && pulumi stack export --stack prod | python3 -c '
import json, sys
for r in json.load(sys.stdin)["deployment"]["resources"]:
    if r.get("protect"):
        m = (r.get("outputs") or {}).get("metadata") or {}
        print(r["type"].rsplit(":", 1)[-1] + " " + m.get("namespace", "") + "/" + m.get("name", ""))' | LC_ALL=C sort)
  [[ $protected == "$(sed 's/^/PersistentVolumeClaim /' <<<"$want")" ]] || { echo "protected in prod's state:"; echo "$protected"; echo "expected exactly the claims of the render:"; echo "$want"; return 1; }
  if ENGINE destroy prod destroy-protected; then echo "pulumi destroy of prod passed although its claims are protected"; return 1; fi
  grep -q 'cannot be deleted' "$WORK/logs/engine-destroy-protected.log" || { echo "the failed destroy does not say the protected claims cannot be deleted"; return 1; }
  live=$(KUBECTL get pvc -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' | LC_ALL=C sort)
  local gone; gone=$(LC_ALL=C comm -23 <(echo "$want") <(echo "$live"))
  [[ -z $gone ]] || { echo "protected claims gone after the refused destroy:"; echo "$gone"; return 1; }
  (cd "$WORK/project" && pulumi state unprotect --all --yes --stack prod)
  ENGINE destroy prod destroy-prod
  local left; left=$(left_of "$WORK/render-prod/manifests.yaml"; left_of "$WORK/render/manifests.yaml")
  [[ -z $left ]] || { echo "left behind:"; echo "$left"; return 1; }
  KUBECTL delete pv -l ops-e2e/stand-in=storage --wait --timeout=60s > /dev/null
  echo "RESULT: prod's $(wc -l <<<"$want") protected claims refused by the first pulumi destroy and still on the cluster; after pulumi state unprotect --all, destroyed"
  echo "RESULT: pulumi destroy prod in $(secs "$t0") s in all; nothing of either stack left (ci destroyed in step 7)"
}

# The speed section: the engine against kubectl server-side apply of the same render plus its waits.
speed() {
  local apply pulumi_up kdiff preview pack
  apply=$(cat "$WORK/time-kubectl-apply"); pulumi_up=$(cat "$WORK/time-pulumi-up")
  kdiff=$(median < "$WORK/time-kubectl-diff"); preview=$(median < "$WORK/time-pulumi-preview"); pack=$(median < "$WORK/time-pulumi-pack")
  echo "speed: converge from empty: pulumi up $pulumi_up s, kubectl apply --server-side + waits $apply s"
  echo "speed: no-change check (median of $REPEAT): pulumi preview $preview s, kubectl diff --server-side $kdiff s"
  echo "speed: preview with the policy pack (median of $REPEAT): $pack s, without $preview s"
}

# Issue 12: both enforcement points agree on the real API server. Every CREATE case of the shared
# conformance cases is created with server-side dry-run under its constraint's generated policy.
admission_agree() {
  local out="$WORK/admission-agree.txt"
  (cd "$REPO_DIR" && PATH="$(dirname "$(bin_path kubectl "$K8S_VERSION")"):$PATH" \
    "$TSX" tools/admission/agree.ts --kubeconfig "$WORK/pki/admin.kubeconfig") 2>&1 | tee "$out"
  echo "RESULT: $(grep -o 'fixtures [0-9]*, agree [0-9]*, disagree [0-9]*, unusable [0-9]*' "$out")"
}

teardown() {
  KUBECTL delete -f "$WORK/all.json" --wait --timeout=180s > /dev/null
  local left; left=$(KUBECTL get "$(kinds)" -A -l app.kubernetes.io/part-of=ops-environment -o name)
  [[ -z $left ]] || { echo "left behind:"; echo "$left"; return 1; }
  KUBECTL delete pv -l ops-e2e/stand-in=storage --wait --timeout=60s > /dev/null
  echo "RESULT: every object of the render deleted (namespaces included), none of the stack left"
}

# ---------------------------------------------------------------------------------------------
# No errexit in the main flow: each step is a subshell with its own (set in `step`), which works
# only when `step` itself is not called from a `||`, `&&` or `if` (bash then ignores -e inside).
set +e
# The pulumi CLI never reaches for the network: a home in the work folder, no plugin download.
export PULUMI_HOME="$WORK/pulumi-home" PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
PULUMI_CONFIG_PASSPHRASE=$(openssl rand -hex 32); export PULUMI_CONFIG_PASSPHRASE
ln -sf "$(bin_path pulumi "$PULUMI_VERSION")" "$WORK/bin/pulumi"
ln -sf "$(bin_path pulumi-resource-kubernetes "$KUBERNETES_PROVIDER_VERSION")" "$WORK/bin/pulumi-resource-kubernetes"
# tools/e2e/bin: the policy-pack analyzer shim and the STAND-IN random and tls providers (e2e only).
export PATH="$WORK/bin:$E2E_DIR/bin:$PATH"
# The providers talk to this run's API server only; helm's caches stay in the work folder.
export KUBECONFIG="$WORK/pki/admin.kubeconfig" HELM_CACHE_HOME="$WORK/helm/cache" HELM_CONFIG_HOME="$WORK/helm/config" HELM_DATA_HOME="$WORK/helm/data"
export OPS_JS_CACHE="${OPS_JS_CACHE:-$E2E_CACHE/js}"
ETCD_PORT=$(free_port); ETCD_PEER_PORT=$(free_port); API_PORT=$(free_port)
echo "e2e of stack $STACK, work folder $WORK"
must "toolchain in $E2E_CACHE" toolchain
must "offline render of stack $STACK" render
must "PKI: CA, serving and client certificates, kubeconfigs" pki
must "etcd $ETCD_VERSION" etcd_up
must "kube-apiserver $K8S_VERSION" apiserver_up
must "controller manager, scheduler, kwok" controllers_up
must "fake node sized like the ci stack's node" node_up
must "CRDs the stack uses (pinned schemas)" crds
must "stand-ins: pre-bound volumes" standins
must "server-side apply of the render" apply
step "workloads Available, Jobs complete, CronJobs admitted" workloads
step "cluster holds exactly the render" compare
step "second apply: no change" no_change
step "drift found by diff, then repaired" drift
step "delete every object of the render, nothing left" teardown

# The Pulumi engine on the same control plane, from empty again.
ENGINE_STEPS=("1 pulumi up ci: converges, cluster holds exactly the render" "2 pulumi preview --expect-no-changes: no change"
  "3 drift: found by preview --refresh, repaired by up" "4 config change: in place / replaced as previewed; npm run diff agrees"
  "5 pulumi preview --policy-pack policies: passes; broken stack refused" "6 chart hooks through helm.v3.Release: install, upgrade, uninstall"
  "7 prod converges on kwok nodes shaped like its pool" "8 pulumi destroy: nothing of either stack left")
if engine_absent=$(engine_missing); then
  step "pulumi project, stacks ci and prod, secrets, add-on chart stand-ins" engine_setup
  engine_ready=$?
else
  engine_ready=skipped
  not_run "pulumi project, stacks ci and prod, secrets, add-on chart stand-ins" "not in $E2E_CACHE: $(echo $engine_absent); build with: npm run e2e:build"
fi
if [[ $engine_ready == 0 ]]; then
  start ingress-standin ingress_standin
  step "${ENGINE_STEPS[0]}" engine_up
  step "${ENGINE_STEPS[1]}" engine_no_change
  step "${ENGINE_STEPS[2]}" engine_drift
  step "${ENGINE_STEPS[3]}" engine_change
  step "${ENGINE_STEPS[4]}" engine_policy
  step "${ENGINE_STEPS[5]}" engine_hooks
  step "${ENGINE_STEPS[6]}" engine_prod
  step "${ENGINE_STEPS[7]}" engine_destroy
  speed 2>/dev/null | tee "$WORK/speed.txt"
else
  for s in "${ENGINE_STEPS[@]}"; do not_run "$s" "the engine set-up did not run (above)"; done
fi
# After the teardown: the stack's own admission policies are gone, only the harness's judge the cases.
step "admission policies agree with CrossGuard on the real API server" admission_agree
finish
