# The dev node's fixed choices, shared by hack/node/*.sh (sourced, not run). Ports sit below the
# kernel's ephemeral range, so they never clash with src/devenv/control-plane.ts (it asks the kernel
# for free ports) or the test harness. Change them here, consistently.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Everything the node writes lives here (data, certificates, logs, pids, kubeconfigs).
NODE_DIR="${PLUGFLOW_NODE_DIR:-/tmp/plugflow-node}"
# The cluster's nodes: NODE_COUNT kubelets on this machine, each with its own containerd, directory,
# cgroup root, pod addresses and own address (node i: plugflow-node-i at 10.77.0.i, pods 10.88.i.x),
# all pods on one bridge, one kube-proxy for all of them (they share this host's network namespace).
NODE_COUNT="${PLUGFLOW_NODE_COUNT:-3}"
[[ "$NODE_COUNT" =~ ^[1-9]$ ]] || { echo "PLUGFLOW_NODE_COUNT must be 1-9, not '$NODE_COUNT'" >&2; exit 2; }
node_name() { echo "plugflow-node-$1"; }
# No dummy netdev on these machines: a node's own address is a /32 on lo. Pods reach the API
# server through node 1's (127.0.0.1 inside a pod is the pod).
node_ip() { echo "10.77.0.$1"; }
node_dir() { echo "$NODE_DIR/nodes/$1"; }
node_sock() { echo "$NODE_DIR/nodes/$1/containerd/containerd.sock"; }
# One bridge carries one IPv4 gateway address, so the nodes share the subnet and its gateway and
# each hands out addresses from its own range of it (node i: 10.88.i.2-254).
POD_GATEWAY=10.88.0.1
node_range_start() { echo "10.88.$1.2"; }
node_range_end() { echo "10.88.$1.254"; }
# The kubelet's cgroup parent: each kubelet removes pod cgroups it does not know under its root, so
# two kubelets must never share one.
node_cgroup() { echo "/plugflow-node-$1"; }
node_healthz_port() { echo $((20270 + $1)); }
NODE_IP="$(node_ip 1)"
POD_CIDR=10.88.0.0/16
BRIDGE=pf-br0
SERVICE_CIDR=10.96.0.0/24
API_PORT=26443
ETCD_PORT=23790
ETCD_PEER_PORT=23800
KCM_PORT=26257
SCHEDULER_PORT=26259
# Every kubelet listens on its own address, so they share the port.
KUBELET_PORT=20250
PROXY_HEALTHZ_PORT=20256
PROXY_METRICS_PORT=20249
# containerd's sandbox image: hack/node/pause, built by hack/node/images.sh (nothing is pulled).
SANDBOX_IMAGE=localhost/plugflow-pause:1
CNI_BIN_DIR="${CNI_BIN_DIR:-/usr/lib/cni}"
# Host settings the kubelet and the bridge plugin change; up.sh records them, down.sh restores them.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward)
KUBECONFIG_ADMIN="$NODE_DIR/pki/admin.kubeconfig"
IMAGE_DIR="${IMAGE_OUT:-$ROOT/out/image}"

TAG=node
WORK="$NODE_DIR/logs"
# shellcheck source=../image/lib.sh
source "$ROOT/hack/image/lib.sh"
