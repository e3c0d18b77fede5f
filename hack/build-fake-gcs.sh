#!/usr/bin/env bash
# Builds fake-gcs-server (a GCS-compatible object store emulator) from the Go module proxy into
# the cache outside the repo, for the vendorCObject artifact tests. A finished binary is reused; a
# failure names the step and shows the end of its log.
#
#   hack/build-fake-gcs.sh            build if missing
#   hack/build-fake-gcs.sh --print    print the binary's path (builds first if needed)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), FAKE_GCS_VERSION (a module version).
set -euo pipefail

FAKE_GCS_VERSION="${FAKE_GCS_VERSION:-v1.56.1}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
BIN="$CACHE/bin/fake-gcs-server-$FAKE_GCS_VERSION"
WORK="$CACHE/build/fake-gcs-server"
PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1

log() { if [[ $PRINT == 1 ]]; then echo "[fake-gcs] $*" >&2; else echo "[fake-gcs] $*"; fi; }

if [[ -x "$BIN/fake-gcs-server" ]]; then
  if [[ $PRINT == 1 ]]; then echo "$BIN/fake-gcs-server"; else log "binary present in $BIN (reused)"; fi
  exit 0
fi
command -v go >/dev/null || { echo "[fake-gcs] go is not installed (need Go >= 1.24)" >&2; exit 1; }
mkdir -p "$BIN" "$WORK"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$WORK/bin"
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
t0=$SECONDS
log "building github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION (a cold build takes a minute or two) ..."
if ! go install "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION" >"$WORK/build.log" 2>&1; then
  echo "[fake-gcs] step 'go install fake-gcs-server' failed; the last lines of $WORK/build.log:" >&2
  tail -n 30 "$WORK/build.log" >&2
  exit 1
fi
mv "$WORK/bin/fake-gcs-server" "$BIN/fake-gcs-server"
log "built in $((SECONDS - t0))s: $BIN/fake-gcs-server"
if [[ $PRINT == 1 ]]; then echo "$BIN/fake-gcs-server"; fi
