#!/usr/bin/env bash
# Stops the nodes hack/node/up.sh started and undoes what it changed on the host. It stops only the
# processes recorded in $PLUGFLOW_NODE_DIR/pids, lets the kubelets remove the pods first (the bridge
# plugin's DEL frees their addresses and NAT chains), then removes what is left: containers (also of
# a node hack/node/lose.sh killed), mounts under the nodes' directories, the bridge, the node
# addresses on lo, the KUBE-*/CNI-* iptables chains (IPv4 and IPv6; this assumes no other Kubernetes
# node runs on this host), each node's cgroup root, and restores the sysctls recorded at start. Safe
# to run twice, or after a failed start.
set -uo pipefail
# shellcheck source=config.sh
source "$(dirname "${BASH_SOURCE[0]}")/config.sh"
[[ -d "$NODE_DIR" ]] || { log "nothing to stop ($NODE_DIR does not exist)"; exit 0; }
mkdir -p "$WORK"
T0=$SECONDS
KUBECTL="$(sed -n 's/^KUBECTL=//p' "$NODE_DIR/env" 2>/dev/null) --kubeconfig $KUBECONFIG_ADMIN"
# The nodes up.sh made (however many PLUGFLOW_NODE_COUNT says now).
NODES=()
for d in "$NODE_DIR"/nodes/*/; do [[ -d "$d" ]] && NODES+=("$(basename "$d")"); done
ctr_n() { local n="$1"; shift; ctr -a "$(node_sock "$n")" -n k8s.io "$@"; }

# stop NAME...: SIGTERM to each recorded process at once, SIGKILL to those still there after 10 s.
stop() {
  local name pids=() pid
  for name in "$@"; do
    [[ -f "$NODE_DIR/pids/$name" ]] || continue
    pid="$(cat "$NODE_DIR/pids/$name")"
    kill "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$NODE_DIR/pids/$name"
  done
  for _ in $(seq 50); do
    local left=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
    [[ ${#left[@]} == 0 ]] && return 0
    sleep 0.2
  done
  kill -9 "${pids[@]}" 2>/dev/null
  return 0
}
running() { [[ -f "$NODE_DIR/pids/$1" ]] && kill -0 "$(cat "$NODE_DIR/pids/$1")" 2>/dev/null; }

# 1. pods, through the kubelet, so the CNI plugins clean up after each one. The scheduler and the
# controller manager stop first: otherwise Deployments replace the deleted pods and they run again.
stop kube-scheduler kube-controller-manager
tasks_left() {
  local n
  for n in "${NODES[@]}"; do running "containerd-$n" && ctr_n "$n" tasks ls -q 2>/dev/null; done
}
if running kube-apiserver && [[ -f "$NODE_DIR/env" ]]; then
  log "deleting every pod through the kubelets ..."
  $KUBECTL delete pods --all -A --grace-period=1 --wait=false >/dev/null 2>&1
  # Done when no containerd runs anything: pods kept by a finalizer whose controller is gone have
  # their containers and sandboxes stopped all the same. (A node lose.sh killed runs nothing.)
  for _ in $(seq 60); do [[ -z "$(tasks_left)" ]] && break; sleep 1; done
  log "pods stopped in $((SECONDS - T0))s"
fi
stop kube-proxy
[[ -x "$(dirname "${KUBECTL%% *}")/kube-proxy" ]] && "$(dirname "${KUBECTL%% *}")/kube-proxy" --cleanup >/dev/null 2>&1
kubelets=(); for n in "${NODES[@]}"; do kubelets+=("kubelet-$n"); done
stop "${kubelets[@]}"
# 2. whatever each containerd still runs
for n in "${NODES[@]}"; do
  if running "containerd-$n"; then
    for c in $(ctr_n "$n" tasks ls -q 2>/dev/null); do ctr_n "$n" tasks kill -s KILL "$c" >/dev/null 2>&1; done
    sleep 1
    for c in $(ctr_n "$n" tasks ls -q 2>/dev/null); do ctr_n "$n" tasks delete -f "$c" >/dev/null 2>&1; done
    for c in $(ctr_n "$n" containers ls -q 2>/dev/null); do ctr_n "$n" containers delete "$c" >/dev/null 2>&1; done
  fi
done
containerds=(); for n in "${NODES[@]}"; do containerds+=("containerd-$n"); done
stop "${containerds[@]}"
# Shims and pod processes of a node whose containerd is gone (lose.sh) are not stopped by anyone.
for n in "${NODES[@]}"; do bash "$ROOT/hack/node/lose.sh" --processes-only "$n"; done
stop kube-apiserver; stop etcd
log "processes stopped in $((SECONDS - T0))s"

# 3. host state: mounts (deepest first), network, iptables, cgroups, sysctls
grep -E " ($NODE_DIR|/run/containerd|/var/lib/kubelet)[^ ]* " /proc/mounts | awk '{print $2}' | sort -r |
  while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
ip link del "$BRIDGE" 2>/dev/null
for n in "${NODES[@]}"; do ip addr del "$(node_ip "$n")/32" dev lo 2>/dev/null; done
for ipt in iptables ip6tables; do
  for table in filter nat mangle; do
    chains="$($ipt -t $table -S 2>/dev/null | awk '/^-N (CNI-|KUBE-)/{print $2}')"
    [[ -z "$chains" ]] && continue
    # Jumps into our chains from the built-in ones first, then empty and delete the chains.
    for ch in $chains; do
      $ipt -t $table -S 2>/dev/null | grep -E "^-A [A-Z]+ .*-j $ch( |$)" | sed 's/^-A /-D /' |
        while read -r rule; do eval "$ipt -t $table $rule"; done
    done
    for ch in $chains; do $ipt -t $table -F "$ch" 2>/dev/null; done
    for ch in $chains; do $ipt -t $table -X "$ch" 2>/dev/null; done
  done
done
for hierarchy in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
  for n in "${NODES[@]}"; do
    g="$hierarchy$(node_cgroup "$n" | cut -c2-)"
    [[ -d "$g" ]] && find "$g" -depth -type d -exec rmdir {} + 2>/dev/null
  done
done
[[ -f "$NODE_DIR/sysctl.orig" ]] && sysctl -q -p "$NODE_DIR/sysctl.orig"
# What the kubelet and containerd's shims create outside the node's directory whatever their flags.
rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
[[ -d /var/lib/kubelet ]] && find /var/lib/kubelet -depth -type d -empty -delete
[[ -d /run/containerd ]] && find /run/containerd -depth -type d -empty -delete
log "node stopped and host restored in $((SECONDS - T0))s (logs kept in $WORK)"
exit 0
