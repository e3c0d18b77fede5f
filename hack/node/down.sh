#!/usr/bin/env bash
# Stops the node hack/node/up.sh started and undoes what it changed on the host. It stops only the
# processes recorded in $PLUGFLOW_NODE_DIR/pids, lets the kubelet remove the pods first (the bridge
# plugin's DEL frees their addresses and NAT chains), then removes what is left: containers, mounts
# under the node's directories, the bridge, the node address on lo, the KUBE-*/CNI-* iptables chains
# (IPv4 and IPv6; this assumes no other Kubernetes node runs on this host), the kubepods cgroups,
# and restores the sysctls recorded at start. Safe to run twice, or after a failed start.
set -uo pipefail
# shellcheck source=config.sh
source "$(dirname "${BASH_SOURCE[0]}")/config.sh"
[[ -d "$NODE_DIR" ]] || { log "nothing to stop ($NODE_DIR does not exist)"; exit 0; }
mkdir -p "$WORK"
T0=$SECONDS
KUBECTL="$(sed -n 's/^KUBECTL=//p' "$NODE_DIR/env" 2>/dev/null) --kubeconfig $KUBECONFIG_ADMIN"
CTR=(ctr -a "$NODE_DIR/containerd/containerd.sock" -n k8s.io)

stop() {
  local f="$NODE_DIR/pids/$1" pid
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$f"
}
running() { [[ -f "$NODE_DIR/pids/$1" ]] && kill -0 "$(cat "$NODE_DIR/pids/$1")" 2>/dev/null; }

# 1. pods, through the kubelet, so the CNI plugins clean up after each one. The scheduler and the
# controller manager stop first: otherwise Deployments replace the deleted pods and they run again.
stop kube-scheduler; stop kube-controller-manager
if running kubelet && running kube-apiserver && [[ -f "$NODE_DIR/env" ]]; then
  log "deleting every pod through the kubelet ..."
  $KUBECTL delete pods --all -A --grace-period=1 --wait=false >/dev/null 2>&1
  # Done when containerd runs nothing: pods kept by a finalizer whose controller is gone have
  # their containers and sandboxes stopped all the same.
  for _ in $(seq 60); do [[ -z "$("${CTR[@]}" tasks ls -q 2>/dev/null)" ]] && break; sleep 1; done
  log "pods stopped in $((SECONDS - T0))s"
fi
stop kube-proxy
[[ -x "$(dirname "${KUBECTL%% *}")/kube-proxy" ]] && "$(dirname "${KUBECTL%% *}")/kube-proxy" --cleanup >/dev/null 2>&1
stop kubelet
# 2. whatever containerd still runs
if running containerd; then
  for c in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s KILL "$c" >/dev/null 2>&1; done
  sleep 1
  for c in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks delete -f "$c" >/dev/null 2>&1; done
  for c in $("${CTR[@]}" containers ls -q 2>/dev/null); do "${CTR[@]}" containers delete "$c" >/dev/null 2>&1; done
fi
stop containerd
stop kube-apiserver; stop etcd
log "processes stopped in $((SECONDS - T0))s"

# 3. host state: mounts (deepest first), network, iptables, cgroups, sysctls
grep -E " ($NODE_DIR|/run/containerd|/var/lib/kubelet)[^ ]* " /proc/mounts | awk '{print $2}' | sort -r |
  while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
ip link del "$BRIDGE" 2>/dev/null
ip addr del "$NODE_IP/32" dev lo 2>/dev/null
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
  for g in kubepods k8s.io; do [[ -d "$hierarchy$g" ]] && find "$hierarchy$g" -depth -type d -exec rmdir {} + 2>/dev/null; done
done
[[ -f "$NODE_DIR/sysctl.orig" ]] && sysctl -q -p "$NODE_DIR/sysctl.orig"
# What the kubelet and containerd's shims create outside the node's directory whatever their flags.
rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
[[ -d /var/lib/kubelet ]] && find /var/lib/kubelet -depth -type d -empty -delete
[[ -d /run/containerd ]] && find /run/containerd -depth -type d -empty -delete
log "node stopped and host restored in $((SECONDS - T0))s (logs kept in $WORK)"
exit 0
