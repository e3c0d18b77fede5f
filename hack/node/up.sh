#!/usr/bin/env bash
# Starts a Kubernetes cluster of NODE_COUNT nodes (default 3; PLUGFLOW_NODE_COUNT) on this machine:
# etcd, kube-apiserver (bound to node 1's address, lease endpoint reconciler, Node+RBAC),
# kube-controller-manager with every controller, kube-scheduler, and per node containerd + runc,
# bridge CNI (pods get their own IPs from the node's range, all on one bridge) and a kubelet (node
# client token, webhook authn/authz, the API server's client certificate for logs/exec, its own
# cgroup root), with plugflow's images imported into each node's containerd from OCI archives; one
# kube-proxy (iptables) serves every node, as they share this host's network namespace. No
# registry, no systemd, no Docker. hack/node/lose.sh N kills node N the way a machine dies.
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
rm -rf "$NODE_DIR" && mkdir -p "$WORK" "$NODE_DIR"/{pids,pki,etcd,nodes,kube-proxy}
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
  local n ip
  for n in $(seq "$NODE_COUNT"); do
    ip="$(node_ip "$n")"
    ip addr show dev lo | grep -q " $ip/32 " || ip addr add "$ip/32" dev lo
  done
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
  local nodes=()
  for n in $(seq "$NODE_COUNT"); do nodes+=("system:node:$(node_name "$n")"); done
  for user in admin system:kube-controller-manager system:kube-scheduler "${nodes[@]}" system:kube-proxy; do
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
start etcd "$CP_BIN/etcd" --name=plugflow-etcd --data-dir="$NODE_DIR/etcd/data" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="plugflow-etcd=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level=warn
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
  kubeconfig kube-proxy system:kube-proxy
  local n
  for n in $(seq "$NODE_COUNT"); do kubeconfig "kubelet-$n" "system:node:$(node_name "$n")"; done
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

# --- the nodes. Each has its own containerd (root, state, socket, runc root), CNI config with its
# own subnet on the shared bridge (containerd adds the loopback itself), kubelet directories and
# cgroup root, and imports the images into its own store.
# cgroup_root N: the node's cgroup parent in every hierarchy. On cgroup v1 a new cpuset group has no
# CPUs or memory nodes until given its parent's.
cgroup_root() {
  local root; root="$(node_cgroup "$1")"
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    mkdir -p "/sys/fs/cgroup$root"
    return 0
  fi
  local h
  for h in /sys/fs/cgroup/*/; do
    [[ -f "$h/cgroup.procs" ]] || continue
    mkdir -p "$h${root#/}"
    if [[ -f "$h/cpuset.cpus" ]]; then
      cat "$h/cpuset.cpus" > "$h${root#/}/cpuset.cpus"
      cat "$h/cpuset.mems" > "$h${root#/}/cpuset.mems"
    fi
  done
}
# start_node N: containerd and the kubelet of node N (not waited for).
start_node() {
  local n="$1" dir name ip
  dir="$(node_dir "$n")"; name="$(node_name "$n")"; ip="$(node_ip "$n")"
  mkdir -p "$dir"/{containerd,cni/net.d,cni/ipam,kubelet}
  cat > "$dir/cni/net.d/10-plugflow.conflist" <<JSON
{ "cniVersion": "1.0.0", "name": "plugflow-node", "plugins": [
  { "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
    "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY",
                "rangeStart": "$(node_range_start "$n")", "rangeEnd": "$(node_range_end "$n")" }]],
              "routes": [{ "dst": "0.0.0.0/0" }], "dataDir": "$dir/cni/ipam" } },
  { "type": "portmap", "capabilities": { "portMappings": true } } ] }
JSON
  # containerd: CRI with runc, overlayfs, cgroupfs. restrict_oom_score_adj: without CAP_SYS_RESOURCE
  # no process may lower its oom_score_adj, and the sandbox's -998 would fail every pod.
  cat > "$dir/containerd/config.toml" <<TOML
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$(node_sock "$n")"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$SANDBOX_IMAGE"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$dir/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/containerd/runc"
TOML
  start "containerd-$n" containerd --config "$dir/containerd/config.toml"
  wait_until "containerd of $name" 30 ctr -a "$(node_sock "$n")" version
  bash "$ROOT/hack/node/images.sh" import "$n"
  cgroup_root "$n"
  # kubelet: cgroup v1 allowed, cgroupfs under the node's own root, oomScoreAdj 0 (no
  # CAP_SYS_RESOURCE), webhook authn/authz with the CA of the API server's client certificate, image
  # GC off (imported images cannot be pulled back)
  cat > "$dir/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: $(node_cgroup "$n")
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
containerRuntimeEndpoint: unix://$(node_sock "$n")
imageServiceEndpoint: unix://$(node_sock "$n")
address: $ip
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $(node_healthz_port "$n")
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $NODE_DIR/pki/ca.crt}
authorization: {mode: Webhook}
podLogsDir: $dir/kubelet/pod-logs
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 60
YAML
  start "kubelet-$n" "$NODE_BIN/kubelet" --config="$dir/kubelet/config.yaml" --kubeconfig="$NODE_DIR/pki/kubelet-$n.kubeconfig" \
    --root-dir="$dir/kubelet/root" --cert-dir="$dir/kubelet/pki" --hostname-override="$name" --node-ip="$ip" \
    --containerd="$(node_sock "$n")"
}
for n in $(seq "$NODE_COUNT"); do
  FIX="see $WORK/containerd-$n.log and $WORK/node-$n.log; build the image archives (make image, make test-images)" \
    step "node-$n" start_node "$n"
  sed -n 's/^\[node\] /  /p' "$WORK/node-$n.log" >&2
done
nodes_ready() {
  local n name
  for n in $(seq "$NODE_COUNT"); do
    name="$(node_name "$n")"
    alive "kubelet-$n" || { echo "the kubelet of $name exited; see $WORK/kubelet-$n.log" >&2; return 2; }
    [[ "$($KUBECTL get node "$name" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]] || return 1
  done
}
FIX="see $WORK/kubelet-N.log (and $WORK/containerd-N.log)" step nodes-ready wait_until "$NODE_COUNT nodes Ready" 60 nodes_ready

# --- kube-proxy (iptables), leaving the conntrack and route_localnet sysctls alone
cat > "$NODE_DIR/kube-proxy/config.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $NODE_DIR/pki/kube-proxy.kubeconfig}
hostnameOverride: $(node_name 1)
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

sockets=(); names=()
for n in $(seq "$NODE_COUNT"); do sockets+=("$(node_sock "$n")"); names+=("$(node_name "$n")"); done
printf 'KUBECONFIG=%s\nKUBECTL=%s\nNODES=%s\nCONTAINERD_SOCKETS=%s\n' "$KUBECONFIG_ADMIN" "$NODE_BIN/kubectl" \
  "$(IFS=,; echo "${names[*]}")" "$(IFS=,; echo "${sockets[*]}")" > "$NODE_DIR/env"
log "$NODE_COUNT nodes (${names[*]}) up in $(elapsed): export KUBECONFIG=$KUBECONFIG_ADMIN (kubectl: $NODE_BIN/kubectl); stop with hack/node/down.sh"
