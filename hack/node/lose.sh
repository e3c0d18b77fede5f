#!/usr/bin/env bash
# Loses node N of the cluster hack/node/up.sh started, the way a machine dies: its kubelet,
# containerd, containerd's shims and every process of its pods get SIGKILL at once, and nothing is
# told — the Node object, its Lease and its pods stay as they were until the cluster notices (the
# node lifecycle controller after node-monitor-grace-period; plugflow's controller from the
# kubelet's Lease). What is left on the host (mounts, cgroups, addresses) is hack/node/down.sh's.
#
#   hack/node/lose.sh N                    kill node N
#   hack/node/lose.sh --processes-only N   only its shims and pod processes (down.sh, after its
#                                          containerd stopped)
set -uo pipefail
# shellcheck source=config.sh
source "$(dirname "${BASH_SOURCE[0]}")/config.sh"
only_processes=false
[[ "${1:-}" == "--processes-only" ]] && { only_processes=true; shift; }
n="${1:-}"
[[ "$n" =~ ^[1-9]$ && -d "$(node_dir "$n")" ]] || { echo "usage: hack/node/lose.sh [--processes-only] N (a node up.sh started under $NODE_DIR/nodes)" >&2; exit 2; }

# The pids to kill: the node's own daemons, the shims serving its containerd socket, and every
# process in a cgroup under its cgroup root.
victims() {
  if ! $only_processes; then
    local c
    for c in kubelet containerd; do [[ -f "$NODE_DIR/pids/$c-$n" ]] && cat "$NODE_DIR/pids/$c-$n"; done
  fi
  local sock p
  sock="$(node_sock "$n")"
  for p in /proc/[0-9]*; do
    # A shim's command line holds "-address <socket>": compare whole arguments (paths may have spaces).
    tr '\0' '\n' < "$p/cmdline" 2>/dev/null | grep -qxF -- "$sock" && [[ "$(tr '\0' '\n' < "$p/cmdline" 2>/dev/null | head -1)" == *containerd-shim* ]] &&
      echo "${p#/proc/}"
  done
  local h
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    local g="$h$(node_cgroup "$n" | cut -c2-)"
    [[ -d "$g" ]] && find "$g" -name cgroup.procs -exec cat {} + 2>/dev/null
  done
}
killed=0
# Twice: a shim can start a process between the listing and the kill.
for _ in 1 2; do
  pids="$(victims | sort -un)"
  [[ -z "$pids" ]] && break
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null
  killed=$((killed + $(echo "$pids" | wc -l)))
  sleep 0.2
done
$only_processes || rm -f "$NODE_DIR/pids/kubelet-$n" "$NODE_DIR/pids/containerd-$n"
$only_processes && [[ $killed == 0 ]] && exit 0
log "$(node_name "$n") lost: $killed processes killed (kubelet, containerd, shims, pods)"
