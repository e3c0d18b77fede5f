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
# Two binaries: the controller (cmd/workflow-controller) and the executor (cmd/argoexec), which the
# peer's step pods run; `--exec-image` packs the executor into an OCI archive (umoci, no engine) for
# the real node (bench/peer-node-bench.ts), laid out as the peer's own image: /bin/argoexec, the
# entrypoint, on an otherwise empty root.
#
#   hack/build-peer.sh               build if missing
#   hack/build-peer.sh --print       print the controller's path (builds first if needed)
#   hack/build-peer.sh --exec-image  print the path of the executor's OCI archive (builds first if needed)
#   hack/build-peer.sh --crds        print the directory of the peer's CRDs (in the module cache)
#   hack/build-peer.sh --cli         print the path of the peer's `argo` CLI (builds it first if needed;
#                                    test/argo-cli runs it against plugflow's server)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), PEER_VERSION (default v4.0.2).
set -euo pipefail

PEER_MODULE="github.com/argoproj/argo-workflows/v4"
PEER_VERSION="${PEER_VERSION:-v4.0.2}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
BIN="$CACHE/bin/peer-argo-workflows-$PEER_VERSION"
OUT="$BIN/workflow-controller"
EXEC="$BIN/argoexec"
EXEC_IMAGE="$CACHE/images/peer-argoexec-$PEER_VERSION.oci.tar"
CLI="$BIN/argo"
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

# The module from the proxy, its hash checked against sum.golang.org.
download() {
  cd "$WORK"
  go mod download -json "$PEER_MODULE@$PEER_VERSION" > download.json
  grep -q '"Error"' download.json && { cat download.json; return 1; }
  return 0
}
module_facts() {
  dir="$(sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p' "$WORK/download.json")"
  sum="$(sed -n 's/^\s*"Sum": "\(.*\)",$/\1/p' "$WORK/download.json")"
  modsum="$(sed -n 's/^\s*"GoModSum": "\(.*\)",$/\1/p' "$WORK/download.json")"
}
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
# The peer's repository has workflow/executor/osspecific/signal_linux.go as a symlink to
# signal_darwin.go; module zips leave symlinks out, so the module from the proxy does not build
# cmd/argoexec for Linux ("undefined: Setpgid"), and go refuses overlays of the module cache.
# argoexec (and the CLI) build from a copy of the verified module with the link's target under
# its name, through a replace in a second wrapper (the controller builds from the module itself).
exec_wrapper() {
  rm -rf "$WORK/exec" && mkdir -p "$WORK/exec"
  cp -r "$dir" "$WORK/exec/peer" && chmod -R u+w "$WORK/exec/peer"
  local os="$WORK/exec/peer/workflow/executor/osspecific"
  [[ -f "$os/signal_linux.go" ]] || cp "$os/signal_darwin.go" "$os/signal_linux.go"
  cp "$WORK/go.mod" "$WORK/go.sum" "$WORK/exec/"
  printf '\nreplace %s => ./peer\n' "$PEER_MODULE" >> "$WORK/exec/go.mod"
}
ldflags="-s -w -X $PEER_MODULE.version=$PEER_VERSION -X $PEER_MODULE.gitTreeState=clean"

# The CLI (cmd/argo) embeds the peer's UI (ui/dist/app), which the module from the proxy does not
# carry (the peer's release builds it; it is not committed): it builds from the same copy as
# argoexec, with a one-line placeholder page in its place. The CLI never serves the UI. Only what
# the CLI needs is built: not the controller nor argoexec.
if [[ "$MODE" == "--cli" ]]; then
  if [[ ! -x "$CLI" ]]; then
    command -v go >/dev/null || { log "go is not installed (need Go >= 1.24)"; exit 1; }
    mkdir -p "$WORK" "$(dirname "$CLI")"
    renice -n 15 $$ >/dev/null
    log "building $PEER_MODULE@$PEER_VERSION cmd/argo into $BIN (cold build: several minutes)"
    [[ -f "$WORK/download.json" ]] || step download download
    module_facts
    [[ -f "$WORK/go.sum" ]] || step wrapper wrapper
    [[ -f "$WORK/exec/go.mod" ]] || step exec-wrapper exec_wrapper
    cli_placeholder() {
      mkdir -p "$WORK/exec/peer/ui/dist/app"
      echo '<!doctype html><title>argo CLI build: no UI</title>' > "$WORK/exec/peer/ui/dist/app/index.html"
    }
    step cli-placeholder cli_placeholder
    step build-cli bash -c "cd '$WORK/exec' && go build -trimpath -ldflags '$ldflags' -o '$CLI.tmp' '$PEER_MODULE/cmd/argo'"
    mv "$CLI.tmp" "$CLI"
  fi
  echo "$CLI"
  exit 0
fi

if [[ ! -x "$OUT" || ! -x "$EXEC" ]]; then
  command -v go >/dev/null || { log "go is not installed (need Go >= 1.24)"; exit 1; }
  mkdir -p "$WORK" "$(dirname "$OUT")"
  renice -n 15 $$ >/dev/null # the machine is shared: the build (and every step, inherited) yields to others
  log "building $PEER_MODULE@$PEER_VERSION cmd/workflow-controller and cmd/argoexec into $BIN (cold build: several minutes)"
  step download download
  module_facts
  step wrapper wrapper
  step dependencies bash -c "cd '$WORK' && go list -deps '$PEER_MODULE/cmd/workflow-controller' '$PEER_MODULE/cmd/argoexec' > deps.txt"
  step verify bash -c "cd '$WORK' && go mod verify"
  step build bash -c "cd '$WORK' && go build -trimpath -ldflags '$ldflags' -o '$OUT.tmp' '$PEER_MODULE/cmd/workflow-controller'"
  step exec-wrapper exec_wrapper
  step build-argoexec bash -c "cd '$WORK/exec' && go build -trimpath -ldflags '$ldflags' -o '$EXEC.tmp' '$PEER_MODULE/cmd/argoexec'"
  mv "$OUT.tmp" "$OUT"
  mv "$EXEC.tmp" "$EXEC"
  log "built $OUT and $EXEC (step timings: $WORK/timings.txt)"
fi

# The executor's image: /bin/argoexec as entrypoint, PATH set (the peer's pods run `argoexec init`),
# a world-writable /tmp; nothing else — the binary is static (CGO_ENABLED=0).
exec_image() {
  local w="$WORK/exec-image"
  rm -rf "$w" && mkdir -p "$w/rootfs/bin" "$w/rootfs/tmp" "$(dirname "$EXEC_IMAGE")"
  chmod 1777 "$w/rootfs/tmp"
  cp "$EXEC" "$w/rootfs/bin/argoexec"
  umoci init --layout "$w/layout"
  umoci new --image "$w/layout:$PEER_VERSION"
  umoci insert --image "$w/layout:$PEER_VERSION" "$w/rootfs" /
  umoci config --image "$w/layout:$PEER_VERSION" --config.entrypoint argoexec \
    --config.env PATH=/usr/local/bin:/usr/bin:/bin --os linux --architecture amd64
  umoci gc --layout "$w/layout"
  tar -C "$w/layout" -cf "$EXEC_IMAGE.tmp" .
  mv "$EXEC_IMAGE.tmp" "$EXEC_IMAGE"
  rm -rf "$w"
}
if [[ "$MODE" == "--exec-image" ]]; then
  if [[ ! -f "$EXEC_IMAGE" || "$EXEC" -nt "$EXEC_IMAGE" ]]; then
    command -v umoci >/dev/null || { log "no umoci (apt-get install umoci)"; exit 1; }
    mkdir -p "$WORK"
    step exec-image exec_image
  fi
  echo "$EXEC_IMAGE"
  exit 0
fi
if [[ "$MODE" == "--print" ]]; then echo "$OUT"; else log "$OUT and $EXEC are up to date"; fi
