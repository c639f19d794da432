# shellcheck shell=bash
# The e2e's own corner of the machine (docs/e2e.md, "Isolation"): run.sh runs the whole driver in
# one private mount, network, PID and cgroup namespace held by one process (unshare), inside child
# cgroups of its own. Sourced by run.sh after lib.sh, never run.
#
# - Network: the namespace has its own loopback (every server of the run listens there, never on
#   the host's) and a veth pair whose one end carries the real node's IP (NODE_IP: the kubelet needs
#   an address that is not loopback; this kernel has no dummy device). Nothing routes out of it.
# - Mounts: private propagation; tmpfs over /run, /var/lib and /var/log (containerd's socket, the
#   kubelet's fixed paths /var/lib/kubelet and /var/log/pods) and over /sys/fs/cgroup, where each
#   hierarchy is mounted again rooted at the run's own cgroup; the kernel settings the kubelet would
#   otherwise rewrite for the whole host (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops)
#   are shown to it at the values it wants, by files bound over them in this namespace only.
# - PID: the run is PID 1 of its namespace; when it ends, however it ends (the holder killed, the
#   run killed), the kernel kills every process left in it: containerd's shims and the containers
#   included. run.sh on the host then removes the run's cgroups and checks that the host is as it was.

NODE_IP=10.200.0.1
NODE_PEER_IP=10.200.0.2
# A documentation address (TEST-NET-3, RFC 5737) on the peer end: the "internet" the pods' egress
# policies allow (ipBlock 0.0.0.0/0 except the private ranges); it exists only in this namespace.
INTERNET_IP=203.0.113.10
# The kernel settings the kubelet checks (pkg/kubelet/cm/container_manager_linux.go setupKernelTunables).
KUBELET_SYSCTLS="vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000"

# The run's cgroup in each v1 hierarchy (and the unified one): a child of the cgroup this shell is in.
ns_cgroups() {
  local dir name rel
  for dir in /sys/fs/cgroup/*/; do
    dir=${dir%/}; name=${dir##*/}
    [[ -f $dir/cgroup.procs ]] || continue
    rel=$(awk -F: -v n="$name" '{ split($2, a, ","); for (i in a) if (a[i] == n || a[i] == "name=" n) print $3 } $1 == "0" && n == "unified" { print $3 }' /proc/self/cgroup | head -n 1)
    printf '%s%s/%s\n' "$dir" "${rel%/}" "$1"
  done
}

# ns_snapshot ID -> what the host has that a run could leave behind: interfaces, addresses, routes,
# iptables rules, mounts, the run's cgroups and any kubelet's (kubepods).
ns_snapshot() {
  ip -o link show | awk -F': ' '{ print "link " $2 }' | sed 's/@.*//'
  ip -o addr show | awk '{ print "addr " $2 " " $4 }'
  ip route show | sed 's/^/route /'
  if command -v iptables-save >/dev/null 2>&1; then iptables-save 2>/dev/null | grep -v '^#' | sed 's/^/iptables /'; fi
  awk '{ print "mount " $5 }' /proc/self/mountinfo | sort -u
  # Another run's cgroups (ops-e2e-<its pid>, its kubelet's kubepods inside) are its own to check:
  # colleagues' e2e runs go on beside this one.
  local c; for c in /sys/fs/cgroup/*/; do find "$c" -maxdepth 4 -type d \( -name "$1" -o -name 'kubepods*' \) 2>/dev/null | { grep -v '/ops-e2e-[0-9]*/' || true; } | sed 's/^/cgroup /'; done
}

# ns_cleanup_cgroups ID: kills what is left in the run's cgroups (nothing, normally: the PID
# namespace took it) and removes them, deepest first.
ns_cleanup_cgroups() {
  local id=$1 cg p
  for _ in 1 2 3 4 5; do
    local left=0
    while read -r cg; do
      [[ -d $cg ]] || continue
      while read -r p; do [[ -n $p ]] && { kill -KILL "$p" 2>/dev/null || true; left=1; }; done < <(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)
      find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [[ -d $cg ]] && left=1
    done < <(ns_cgroups "$id")
    ((left)) || return 0
    sleep 0.5
  done
  return 1
}

# Cgroups of earlier runs whose run.sh is gone (a run killed with SIGKILL cannot remove its own).
ns_cleanup_stale() {
  local c d pid
  for c in /sys/fs/cgroup/*/; do
    while read -r d; do
      pid=${d##*ops-e2e-}
      [[ $pid =~ ^[0-9]+$ ]] || continue
      kill -0 "$pid" 2>/dev/null && continue
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done < <(find "$c" -maxdepth 4 -type d -name 'ops-e2e-*' 2>/dev/null)
  done
}

# ns_enter ID CMD... : runs CMD as PID 1 of new mount, network, PID and cgroup namespaces, in the
# run's cgroups. The holder (unshare) dies with this shell (PDEATHSIG KILL) and then sends its child
# SIGTERM (run.sh stops what it started); when that PID 1 ends, the kernel kills the rest.
ns_enter() {
  local id=$1 cg; shift
  # Run in the background (`ns_enter ... &`): this shell execs the holder, whose parent is then the
  # caller, so the holder dies with the caller.
  while read -r cg; do
    mkdir -p "$cg"
    # A new cpuset has no CPUs or memory nodes until given its parent's.
    if [[ -f $cg/cpuset.cpus ]]; then cat "$cg/../cpuset.cpus" > "$cg/cpuset.cpus"; cat "$cg/../cpuset.mems" > "$cg/cpuset.mems"; fi
    echo "$BASHPID" > "$cg/cgroup.procs"
  done < <(ns_cgroups "$id")
  exec setpriv --pdeathsig KILL unshare --mount --net --pid --cgroup --fork --kill-child=TERM --mount-proc --propagation private "$@"
}

# Inside the namespaces, before anything else (run.sh, PID 1).
ns_inside() {
  local m d c kv hierarchies
  # Own cgroup view: each hierarchy mounted again, rooted at this cgroup namespace (the run's cgroups).
  mapfile -t hierarchies < <(awk '($3 == "cgroup" || $3 == "cgroup2") && $2 ~ "^/sys/fs/cgroup/" { n = $2; sub(".*/", "", n); print n }' /proc/self/mounts)
  mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
  for m in "${hierarchies[@]}"; do
    d=/sys/fs/cgroup/$m; mkdir -p "$d"
    case $m in
      unified) mount -t cgroup2 cgroup2 "$d" ;;
      systemd) mount -t cgroup -o none,name=systemd cgroup "$d" ;;
      *) mount -t cgroup -o "$m" cgroup "$d" ;;
    esac
  done
  for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=755 e2e "$d"; done
  mkdir -p /run/e2e-sysctl /var/log/pods /var/log/containers /var/lib/kubelet
  for kv in $KUBELET_SYSCTLS; do
    c=/run/e2e-sysctl/${kv%%=*}; mkdir -p "$(dirname "$c")"; echo "${kv#*=}" > "$c"
    mount --bind "$c" "/proc/sys/${kv%%=*}"
  done
  ip link set lo up
  ip link add e2e-node type veth peer name e2e-peer
  ip addr add "$NODE_IP/24" dev e2e-node
  ip addr add "$NODE_PEER_IP/24" dev e2e-peer
  ip addr add "$INTERNET_IP/32" dev e2e-peer
  ip link set e2e-node up
  ip link set e2e-peer up
}
