#!/usr/bin/env bash
# Starts a one-node Kubernetes cluster on this machine: etcd, kube-apiserver (bound to the node's
# address, lease endpoint reconciler, Node+RBAC), kube-controller-manager with every controller,
# kube-scheduler, containerd + runc, bridge CNI (pods get their own IPs), kubelet (node client
# token, webhook authn/authz, the API server's client certificate for logs/exec) and kube-proxy
# (iptables), with plugflow's images imported from OCI archives. No registry, no systemd, no Docker.
# Every step is named and timed; a failure names the step and the fix. hack/node/down.sh undoes
# everything, including host changes (sysctls, iptables chains, mounts, the node address, cgroups).
#
#   hack/node/up.sh            start (a node left by an earlier run is torn down first)
#   hack/node/up.sh --check    only say whether this machine can run the node (exit 0) or why not (exit 3)
#
# After start: export KUBECONFIG=$PLUGFLOW_NODE_DIR/pki/admin.kubeconfig (default /tmp/plugflow-node);
# $PLUGFLOW_NODE_DIR/env has KUBECONFIG and KUBECTL. Needs root and the Debian packages in .ci/run.
# PLUGFLOW_NODE_APISERVER_ARGS: more kube-apiserver flags, space-separated (the benches' audit log).
set -euo pipefail
# shellcheck source=config.sh
source "$(dirname "${BASH_SOURCE[0]}")/config.sh"

# --- preflight: the reasons this machine cannot run a node, each with its fix
preflight() {
  local why=()
  [[ $(id -u) == 0 ]] || why+=("not root (the kubelet, containerd and the bridge need root)")
  local c
  for c in containerd:containerd runc:runc ctr:containerd iptables:iptables conntrack:conntrack ip:iproute2 openssl:openssl curl:curl umoci:umoci go:golang; do
    command -v "${c%%:*}" >/dev/null || why+=("no ${c%%:*} (apt-get install ${c#*:})")
  done
  [[ -x "$CNI_BIN_DIR/bridge" && -x "$CNI_BIN_DIR/host-local" ]] || why+=("no CNI plugins in $CNI_BIN_DIR (apt-get install containernetworking-plugins, or set CNI_BIN_DIR)")
  [[ -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ]] || why+=("no memory cgroup under /sys/fs/cgroup")
  [[ -w /proc/sys/net/ipv4/ip_forward ]] || why+=("/proc/sys is read-only (the bridge and kubelet set sysctls)")
  printf '%s\n' "${why[@]}"
}
reasons="$(preflight)"
if [[ "${1:-}" == "--check" ]]; then
  [[ -z "$reasons" ]] && { echo "the node can start here"; exit 0; }
  echo "the node cannot start here: $(echo "$reasons" | paste -sd';' | sed 's/;/; /g')"; exit 3
fi
if [[ -n "$reasons" ]]; then
  log "this machine cannot run the node:"; echo "$reasons" | sed 's/^/  - /' >&2; exit 3
fi

T0=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - T0) / 1000000 ))ms"; }
if compgen -G "$NODE_DIR/pids/*" >/dev/null; then
  log "a node from an earlier run is still recorded in $NODE_DIR; tearing it down first"
  bash "$ROOT/hack/node/down.sh"
fi
rm -rf "$NODE_DIR" && mkdir -p "$WORK" "$NODE_DIR"/{pids,pki,etcd,containerd,cni/net.d,cni/ipam,kubelet,kube-proxy}
chmod 700 "$NODE_DIR/pki"

# start NAME BIN ARGS...: a detached process (its own session), output in logs/NAME.log, pid in pids/.
start() {
  local name="$1"; shift
  setsid nohup "$@" >"$WORK/$name.log" 2>&1 < /dev/null &
  echo $! > "$NODE_DIR/pids/$name"
}
# wait_until WHAT SECONDS COMMAND...: polls COMMAND; on timeout shows the component's log.
wait_until() {
  local what="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  local rc
  while true; do
    rc=0; "$@" >/dev/null 2>&1 || rc=$?
    [[ $rc == 0 ]] && return 0
    [[ $rc == 2 ]] && { echo "$what: gave up (see above)" >&2; return 1; }
    if [[ $SECONDS -ge $deadline ]]; then echo "$what not ready after ${secs}s" >&2; return 1; fi
    sleep 0.2
  done
}
alive() { kill -0 "$(cat "$NODE_DIR/pids/$1")" 2>/dev/null; }

# --- binaries (built or reused; both scripts print their bin dir)
FIX="see the build step's log above" step binaries bash -c "bash '$ROOT/hack/build-control-plane.sh' --print > '$WORK/cp-bin' && bash '$ROOT/hack/node/build.sh' --print > '$WORK/node-bin'"
CP_BIN="$(tail -1 "$WORK/cp-bin")"; NODE_BIN="$(tail -1 "$WORK/node-bin")"
KUBECTL="$NODE_BIN/kubectl --kubeconfig $KUBECONFIG_ADMIN"
[[ -f "$IMAGE_DIR/pause.oci.tar" ]] || bash "$ROOT/hack/node/images.sh" pause

# --- host: record what we change, then the node's own address on lo
host_setup() {
  sysctl "${SYSCTLS[@]}" > "$NODE_DIR/sysctl.orig"
  ip addr show dev lo | grep -q " $NODE_IP/32 " || ip addr add "$NODE_IP/32" dev lo
}
FIX="needs root with CAP_NET_ADMIN (ip addr add $NODE_IP/32 dev lo)" step host host_setup

# --- credentials: static tokens per component, the service-account key pair, and a CA with the
# API server's client certificate for apiserver -> kubelet (logs, exec); the kubelet trusts that CA.
credentials() {
  cd "$NODE_DIR/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj /CN=plugflow-node-ca
  openssl req -newkey rsa:2048 -nodes -keyout kubelet-client.key -out kubelet-client.csr \
    -subj "/O=system:masters/CN=kube-apiserver-kubelet-client"
  openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out kubelet-client.crt -days 30
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key
  openssl pkey -in sa.key -pubout -out sa.pub
  local user
  for user in admin system:kube-controller-manager system:kube-scheduler "system:node:$NODE_NAME" system:kube-proxy; do
    local groups=""
    [[ $user == admin ]] && groups=',"system:masters"'
    [[ $user == system:node:* ]] && groups=',"system:nodes"'
    echo "$(openssl rand -hex 16),$user,$user$groups"
  done > tokens.csv
  chmod 600 ./*.key tokens.csv
}
step credentials credentials
token_of() { awk -F, -v u="$1" '$2==u{print $1}' "$NODE_DIR/pki/tokens.csv"; }

# --- etcd and the API server
read -r -a APISERVER_EXTRA <<< "${PLUGFLOW_NODE_APISERVER_ARGS:-}"
start etcd "$CP_BIN/etcd" --name="$NODE_NAME" --data-dir="$NODE_DIR/etcd/data" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="$NODE_NAME=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level=warn
FIX="see $WORK/etcd.log; is port $ETCD_PORT free?" step etcd-ready wait_until etcd 30 curl -fs "http://127.0.0.1:$ETCD_PORT/health"
start kube-apiserver "$CP_BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port="$API_PORT" --cert-dir="$NODE_DIR/pki/apiserver" \
  --token-auth-file="$NODE_DIR/pki/tokens.csv" --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$NODE_DIR/pki/sa.pub" --service-account-signing-key-file="$NODE_DIR/pki/sa.key" \
  --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=true --profiling=false \
  --kubelet-client-certificate="$NODE_DIR/pki/kubelet-client.crt" --kubelet-client-key="$NODE_DIR/pki/kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP "${APISERVER_EXTRA[@]}"
FIX="see $WORK/kube-apiserver.log; is $NODE_IP:$API_PORT free?" step apiserver-ready \
  wait_until kube-apiserver 120 curl -kfs -H "Authorization: Bearer $(token_of admin)" "https://$NODE_IP:$API_PORT/readyz"

# kubeconfig NAME USER: one kubeconfig per component, authenticating with its token.
kubeconfig() {
  local ca; ca="$(base64 -w0 < "$NODE_DIR/pki/apiserver/apiserver.crt")"
  cat > "$NODE_DIR/pki/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: plugflow-node
  cluster: {server: "https://$NODE_IP:$API_PORT", certificate-authority-data: "$ca"}
users:
- name: "$2"
  user: {token: "$(token_of "$2")"}
contexts:
- name: plugflow-node
  context: {cluster: plugflow-node, user: "$2"}
current-context: plugflow-node
YAML
  chmod 600 "$NODE_DIR/pki/$1.kubeconfig"
}
kubeconfigs() {
  kubeconfig admin admin; kubeconfig kcm system:kube-controller-manager; kubeconfig scheduler system:kube-scheduler
  kubeconfig kubelet "system:node:$NODE_NAME"; kubeconfig kube-proxy system:kube-proxy
}
step kubeconfigs kubeconfigs

# --- controller manager (all controllers: kube-proxy needs the endpointslice controller) and scheduler
start kube-controller-manager "$CP_BIN/kube-controller-manager" --kubeconfig="$NODE_DIR/pki/kcm.kubeconfig" \
  --authentication-kubeconfig="$NODE_DIR/pki/kcm.kubeconfig" --authorization-kubeconfig="$NODE_DIR/pki/kcm.kubeconfig" \
  --controllers='*' --service-account-private-key-file="$NODE_DIR/pki/sa.key" --root-ca-file="$NODE_DIR/pki/apiserver/apiserver.crt" \
  --use-service-account-credentials=true --service-cluster-ip-range="$SERVICE_CIDR" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$KCM_PORT"
start kube-scheduler "$NODE_BIN/kube-scheduler" --kubeconfig="$NODE_DIR/pki/scheduler.kubeconfig" \
  --authentication-kubeconfig="$NODE_DIR/pki/scheduler.kubeconfig" --authorization-kubeconfig="$NODE_DIR/pki/scheduler.kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT"

# --- CNI: a bridge with host-local addresses; containerd adds the loopback itself
cat > "$NODE_DIR/cni/net.d/10-plugflow.conflist" <<JSON
{ "cniVersion": "1.0.0", "name": "plugflow-node", "plugins": [
  { "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
    "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY" }]],
              "routes": [{ "dst": "0.0.0.0/0" }], "dataDir": "$NODE_DIR/cni/ipam" } },
  { "type": "portmap", "capabilities": { "portMappings": true } } ] }
JSON

# --- containerd: CRI with runc, overlayfs, cgroupfs. restrict_oom_score_adj: without CAP_SYS_RESOURCE
# no process may lower its oom_score_adj, and the sandbox's -998 would fail every pod.
cat > "$NODE_DIR/containerd/config.toml" <<TOML
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
[grpc]
  address = "$NODE_DIR/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$SANDBOX_IMAGE"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$NODE_DIR/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$NODE_DIR/containerd/runc"
TOML
start containerd containerd --config "$NODE_DIR/containerd/config.toml"
FIX="see $WORK/containerd.log" step containerd-ready wait_until containerd 30 ctr -a "$NODE_DIR/containerd/containerd.sock" version
FIX="build the archives (make image, make test-images) or see the lines above" step images bash "$ROOT/hack/node/images.sh" import
sed 's/^/  /' "$WORK/images.log" >&2

# --- kubelet: cgroup v1 allowed, cgroupfs, oomScoreAdj 0 (no CAP_SYS_RESOURCE), webhook authn/authz
# with the CA of the API server's client certificate, image GC off (imported images cannot be pulled back)
cat > "$NODE_DIR/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
containerRuntimeEndpoint: unix://$NODE_DIR/containerd/containerd.sock
imageServiceEndpoint: unix://$NODE_DIR/containerd/containerd.sock
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $NODE_DIR/pki/ca.crt}
authorization: {mode: Webhook}
podLogsDir: $NODE_DIR/kubelet/pod-logs
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 60
YAML
start kubelet "$NODE_BIN/kubelet" --config="$NODE_DIR/kubelet/config.yaml" --kubeconfig="$NODE_DIR/pki/kubelet.kubeconfig" \
  --root-dir="$NODE_DIR/kubelet/root" --cert-dir="$NODE_DIR/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
  --containerd="$NODE_DIR/containerd/containerd.sock"
node_ready() {
  alive kubelet || { echo "kubelet exited; see $WORK/kubelet.log" >&2; return 2; }
  [[ "$($KUBECTL get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
FIX="see $WORK/kubelet.log (and $WORK/containerd.log)" step node-ready wait_until "node $NODE_NAME Ready" 60 node_ready

# --- kube-proxy (iptables), leaving the conntrack and route_localnet sysctls alone
cat > "$NODE_DIR/kube-proxy/config.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $NODE_DIR/pki/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
nodePortAddresses: [primary]
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
YAML
start kube-proxy "$NODE_BIN/kube-proxy" --config="$NODE_DIR/kube-proxy/config.yaml"
FIX="see $WORK/kube-proxy.log" step kube-proxy-ready wait_until kube-proxy 60 curl -fs "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"
# Pods are refused until the controller manager has made the namespace's default ServiceAccount,
# and every pod's projected token volume needs kube-root-ca.crt.
FIX="see $WORK/kube-controller-manager.log" step service-accounts wait_until "default ServiceAccount" 60 \
  bash -c "$KUBECTL get serviceaccount default && $KUBECTL get configmap kube-root-ca.crt"

printf 'KUBECONFIG=%s\nKUBECTL=%s\nNODE_NAME=%s\nNODE_IP=%s\n' "$KUBECONFIG_ADMIN" "$NODE_BIN/kubectl" "$NODE_NAME" "$NODE_IP" > "$NODE_DIR/env"
log "node $NODE_NAME up in $(elapsed): export KUBECONFIG=$KUBECONFIG_ADMIN (kubectl: $NODE_BIN/kubectl); stop with hack/node/down.sh"
