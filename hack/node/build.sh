#!/usr/bin/env bash
# Builds the node's Kubernetes binaries — kubelet, kube-proxy, kube-scheduler and kubectl, the
# same version as hack/build-control-plane.sh — from the Go module proxy into a cache outside the
# repo, with that script's wrapper-module technique and the same Go build cache (so a warm control
# plane build makes this one short). Finished binaries are reused. Each step is named and timed; a
# failure names the step, shows the end of its log and says how to retry.
#
#   hack/node/build.sh            build what is missing
#   hack/node/build.sh --print    print the bin directory (builds first if needed)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), KUBE_VERSION.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
BIN="$CACHE/bin/node-$KUBE_VERSION"
WORK="$CACHE/build/node"
PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1
COMPONENTS=(kube-scheduler kube-proxy kubelet kubectl)

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

log() { echo "[node-build] $*" >&2; }
step() {
  local name="$1"; shift
  local t0=$SECONDS rc
  log "$name ..."
  set +e
  ( set -e; "$@" ) >"$WORK/$name.log" 2>&1
  rc=$?
  set -e
  if [[ $rc != 0 ]]; then
    log "step '$name' failed; the last lines of its log ($WORK/$name.log):"
    tail -n 30 "$WORK/$name.log" >&2
    log "retry with: hack/node/build.sh (finished binaries are kept; delete $WORK to start from scratch)"
    exit 1
  fi
  log "$name done in $((SECONDS - t0))s"
  echo "$name $((SECONDS - t0))" >> "$WORK/timings.txt"
}

missing=()
for c in "${COMPONENTS[@]}"; do [[ -x "$BIN/$c" ]] || missing+=("$c"); done
if [[ ${#missing[@]} == 0 ]]; then
  [[ $PRINT == 1 ]] && echo "$BIN" || log "binaries present in $BIN (reused)"
  exit 0
fi
command -v go >/dev/null || { log "go is not installed (need Go >= 1.25)"; exit 1; }
mkdir -p "$BIN" "$WORK/module"
log "building ${missing[*]} (Kubernetes $KUBE_VERSION) into $BIN (a few minutes with a warm Go build cache)"

# A wrapper module requiring k8s.io/kubernetes, its staging modules pinned to v0.<minor>.<patch>
# (the replace directives of k8s.io/kubernetes point at local paths and do not apply to us).
node_module() {
  cd "$WORK/module"
  go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
  local gomod; gomod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod"
  {
    echo "module plugflow.local/kube-node-build"
    echo
    echo "go 1.25.0"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="v0.${KUBE_VERSION#v1.}" '{print "replace " $1 " => " $1 " " v}'
  } > go.mod
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for c in "${COMPONENTS[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
    printf ')\n'
  } > tools.go
  go mod tidy
}
node_build() {
  cd "$WORK/module"
  nice -n 15 go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION" -o "$BIN/$1.tmp" "k8s.io/kubernetes/cmd/$1"
  mv "$BIN/$1.tmp" "$BIN/$1"
}

[[ -f "$WORK/module/go.sum" ]] || step node-module node_module
for c in "${missing[@]}"; do step "$c-build" node_build "$c"; done
log "all node binaries ready in $BIN"
[[ -f "$WORK/timings.txt" ]] && { echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"; cat "$WORK/timings.txt"; } > "$BIN/build-timings.txt" && rm -f "$WORK/timings.txt"
[[ $PRINT == 1 ]] && echo "$BIN"
exit 0
