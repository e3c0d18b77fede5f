#!/usr/bin/env bash
# Builds the peer's workflow controller (Argo Workflows, pinned below) from the Go module proxy into
# the cache, for the side-by-side bench (bench/peer-bench.ts, `make bench-peer`). Nothing of the
# peer is committed to this repo: its sources and CRDs stay in the Go module cache.
#
# The wrapper module is the peer's own go.mod (renamed, plus a requirement on the peer itself) and
# its go.sum, so every dependency resolves to exactly the version the peer pins; the module and its
# dependencies are checked against sum.golang.org (GOSUMDB) on download and by `go mod verify`.
# Re-running is cheap: a finished binary is reused. Each step is timed; a failure names the step.
#
#   hack/build-peer.sh            build if missing
#   hack/build-peer.sh --print    print the binary's path (builds first if needed)
#   hack/build-peer.sh --crds     print the directory of the peer's CRDs (in the module cache)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), PEER_VERSION (default v4.0.2).
set -euo pipefail

PEER_MODULE="github.com/argoproj/argo-workflows/v4"
PEER_VERSION="${PEER_VERSION:-v4.0.2}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
OUT="$CACHE/bin/peer-argo-workflows-$PEER_VERSION/workflow-controller"
WORK="$CACHE/build/peer-$PEER_VERSION"
MODE="${1:-}"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
# Checksums are never skipped for the peer, whatever the caller's environment says.
unset GONOSUMDB GONOSUMCHECK GOPRIVATE GOINSECURE
[[ "$(go env GOSUMDB)" == "off" ]] && export GOSUMDB=sum.golang.org

log() { echo "[peer] $*" >&2; }
step() {
  local name="$1"; shift
  local t0=$SECONDS
  log "$name ..."
  if ! "$@" >"$WORK/$name.log" 2>&1; then
    echo "[peer] step '$name' failed; the last lines of its log ($WORK/$name.log):" >&2
    tail -n 30 "$WORK/$name.log" >&2
    echo "[peer] retry with: hack/build-peer.sh (a finished binary is kept; delete $WORK to start over)" >&2
    exit 1
  fi
  log "$name done in $((SECONDS - t0))s"
  echo "$name $((SECONDS - t0))" >> "$WORK/timings.txt"
}

module_dir() { go mod download -json "$PEER_MODULE@$PEER_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'; }

if [[ "$MODE" == "--crds" ]]; then
  command -v go >/dev/null || { log "go is not installed"; exit 1; }
  mkdir -p "$CACHE"
  dir="$(cd "$CACHE" && module_dir)"
  [[ -d "$dir/manifests/base/crds/minimal" ]] || { log "no CRDs at $dir/manifests/base/crds/minimal"; exit 1; }
  echo "$dir/manifests/base/crds/minimal"
  exit 0
fi

if [[ ! -x "$OUT" ]]; then
  command -v go >/dev/null || { log "go is not installed (need Go >= 1.24)"; exit 1; }
  mkdir -p "$WORK" "$(dirname "$OUT")"
  renice -n 15 $$ >/dev/null # the machine is shared: the build (and every step, inherited) yields to others
  log "building $PEER_MODULE@$PEER_VERSION cmd/workflow-controller into $OUT (cold build: several minutes)"

  # The module from the proxy, its hash checked against sum.golang.org.
  download() {
    cd "$WORK"
    go mod download -json "$PEER_MODULE@$PEER_VERSION" > download.json
    grep -q '"Error"' download.json && { cat download.json; return 1; }
    return 0
  }
  step download download
  dir="$(sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p' "$WORK/download.json")"
  sum="$(sed -n 's/^\s*"Sum": "\(.*\)",$/\1/p' "$WORK/download.json")"
  modsum="$(sed -n 's/^\s*"GoModSum": "\(.*\)",$/\1/p' "$WORK/download.json")"

  # The wrapper: the peer's go.mod renamed + the peer itself; its go.sum + the peer's own lines.
  wrapper() {
    cd "$WORK"
    if grep -qE '^\s*replace\b' "$dir/go.mod"; then echo "the peer's go.mod has replace directives; this wrapper does not apply them"; return 1; fi
    sed "s#^module .*#module plugflow.local/peer-build#" "$dir/go.mod" > go.mod
    printf '\nrequire %s %s\n' "$PEER_MODULE" "$PEER_VERSION" >> go.mod
    cp "$dir/go.sum" go.sum
    printf '%s %s %s\n%s %s/go.mod %s\n' "$PEER_MODULE" "$PEER_VERSION" "$sum" "$PEER_MODULE" "$PEER_VERSION" "$modsum" >> go.sum
    chmod u+w go.mod go.sum
  }
  step wrapper wrapper
  step dependencies bash -c "cd '$WORK' && go list -deps '$PEER_MODULE/cmd/workflow-controller' > deps.txt"
  step verify bash -c "cd '$WORK' && go mod verify"
  ldflags="-s -w -X $PEER_MODULE.version=$PEER_VERSION -X $PEER_MODULE.gitTreeState=clean"
  step build bash -c "cd '$WORK' && go build -trimpath -ldflags '$ldflags' -o '$OUT.tmp' '$PEER_MODULE/cmd/workflow-controller'"
  mv "$OUT.tmp" "$OUT"
  log "built $OUT (step timings: $WORK/timings.txt)"
fi
if [[ "$MODE" == "--print" ]]; then echo "$OUT"; else log "$OUT is up to date"; fi
