# The dev node's fixed choices, shared by hack/node/*.sh (sourced, not run). Ports sit below the
# kernel's ephemeral range, so they never clash with src/devenv/control-plane.ts (it asks the kernel
# for free ports) or the test harness. Change them here, consistently.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Everything the node writes lives here (data, certificates, logs, pids, kubeconfigs).
NODE_DIR="${PLUGFLOW_NODE_DIR:-/tmp/plugflow-node}"
NODE_NAME=plugflow-node
# No dummy netdev on these machines: the node's own address is a /32 on lo. Pods reach the API
# server through it (127.0.0.1 inside a pod is the pod).
NODE_IP=10.77.0.1
POD_CIDR=10.88.0.0/16
POD_GATEWAY=10.88.0.1
BRIDGE=pf-br0
SERVICE_CIDR=10.96.0.0/24
API_PORT=26443
ETCD_PORT=23790
ETCD_PEER_PORT=23800
KCM_PORT=26257
SCHEDULER_PORT=26259
KUBELET_PORT=20250
KUBELET_HEALTHZ_PORT=20248
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
