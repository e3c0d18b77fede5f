#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from the Go module proxy into a cache
# outside the repo, so tests and `plugflow dev` run against a real control plane on machines that
# have no Docker and no prebuilt Kubernetes binaries. Re-running is cheap: finished binaries are
# reused. Each step says what it does; a failure names the step and how to retry.
#
#   hack/build-control-plane.sh            build what is missing
#   hack/build-control-plane.sh --print    print the bin directory (builds first if needed)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), KUBE_VERSION, ETCD_VERSION.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.5.35}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
BIN="$CACHE/bin/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"
WORK="$CACHE/build"
PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

log() { [[ $PRINT == 1 ]] && echo "[control-plane] $*" >&2 || echo "[control-plane] $*"; }
step() {
  local name="$1"; shift
  local t0=$SECONDS
  log "$name ..."
  if ! "$@" >"$WORK/$name.log" 2>&1; then
    echo "[control-plane] step '$name' failed; the last lines of its log ($WORK/$name.log):" >&2
    tail -n 30 "$WORK/$name.log" >&2
    echo "[control-plane] retry with: hack/build-control-plane.sh (finished binaries are kept;" >&2
    echo "[control-plane] delete $WORK to start the build from scratch)" >&2
    exit 1
  fi
  log "$name done in $((SECONDS - t0))s"
  echo "$name $((SECONDS - t0))" >> "$WORK/timings.txt"
}

need() { [[ -x "$BIN/$1" ]]; }
if need kube-apiserver && need kube-controller-manager && need etcd; then
  [[ $PRINT == 1 ]] && echo "$BIN" || log "binaries present in $BIN (reused)"
  exit 0
fi
command -v go >/dev/null || { echo "[control-plane] go is not installed (need Go >= 1.25)" >&2; exit 1; }
mkdir -p "$BIN" "$WORK/kube" "$WORK/etcd"
log "building Kubernetes $KUBE_VERSION and etcd $ETCD_VERSION into $BIN (cold build takes several minutes)"

# --- Kubernetes: a wrapper module that requires k8s.io/kubernetes and pins every staging module.
# k8s.io/kubernetes replaces its staging modules (k8s.io/api, k8s.io/client-go, ...) with local
# paths, which do not apply to a module that depends on it; each one is published at v0.<minor>.<patch>.
kube_module() {
  cd "$WORK/kube"
  local staging="v0.${KUBE_VERSION#v1.}"
  go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
  local gomod; gomod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod"
  {
    echo "module plugflow.local/kube-build"
    echo
    echo "go 1.25.0"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
  } > go.mod
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
GO
  go mod tidy
}
kube_build() {
  cd "$WORK/kube"
  go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION" -o "$BIN/$1.tmp" "k8s.io/kubernetes/cmd/$1"
  mv "$BIN/$1.tmp" "$BIN/$1"
}

# --- etcd: the server module's etcdmain package is the whole etcd binary; pin its sibling modules.
etcd_module() {
  cd "$WORK/etcd"
  cat > go.mod <<MOD
module plugflow.local/etcd-build

go 1.25.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION

replace (
	go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v2 => go.etcd.io/etcd/client/v2 v2.305.${ETCD_VERSION#v3.5.}
	go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/raft/v3 => go.etcd.io/etcd/raft/v3 $ETCD_VERSION
)
MOD
  cat > main.go <<'GO'
// Command etcd is etcd's own server entry point, built from the published module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go mod tidy
}
etcd_build() {
  cd "$WORK/etcd"
  go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" .
  mv "$BIN/etcd.tmp" "$BIN/etcd"
}

need etcd || { step etcd-module etcd_module; step etcd-build etcd_build; }
if ! need kube-apiserver || ! need kube-controller-manager; then
  step kube-module kube_module
  need kube-apiserver || step kube-apiserver-build kube_build kube-apiserver
  need kube-controller-manager || step kube-controller-manager-build kube_build kube-controller-manager
fi
log "all binaries ready in $BIN"
# Keep the step timings of this cold build beside the binaries (bench/control-plane-bench.ts prints them).
[[ -f "$WORK/timings.txt" ]] && { echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"; cat "$WORK/timings.txt"; } > "$BIN/build-timings.txt" && rm -f "$WORK/timings.txt"
[[ $PRINT == 1 ]] && echo "$BIN"
exit 0
