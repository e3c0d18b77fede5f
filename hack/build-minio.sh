#!/usr/bin/env bash
# Builds MinIO (an S3-compatible object store) from the Go module proxy into the cache outside
# the repo, for the artifact tests and `plugflow dev`. Re-running is cheap: a finished binary is
# reused. A failure names the step and shows the end of its log.
#
#   hack/build-minio.sh            build if missing
#   hack/build-minio.sh --print    print the binary's path (builds first if needed)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), MINIO_VERSION (a module version).
set -euo pipefail

MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
BIN="$CACHE/bin/minio-$MINIO_VERSION"
WORK="$CACHE/build/minio"
PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1

log() { if [[ $PRINT == 1 ]]; then echo "[minio] $*" >&2; else echo "[minio] $*"; fi; }

if [[ -x "$BIN/minio" ]]; then
  if [[ $PRINT == 1 ]]; then echo "$BIN/minio"; else log "binary present in $BIN (reused)"; fi
  exit 0
fi
command -v go >/dev/null || { echo "[minio] go is not installed (need Go >= 1.25)" >&2; exit 1; }
mkdir -p "$BIN" "$WORK"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$WORK/bin"
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
t0=$SECONDS
log "building github.com/minio/minio@$MINIO_VERSION (a cold build takes a few minutes) ..."
if ! go install "github.com/minio/minio@$MINIO_VERSION" >"$WORK/build.log" 2>&1; then
  echo "[minio] step 'go install minio' failed; the last lines of $WORK/build.log:" >&2
  tail -n 30 "$WORK/build.log" >&2
  echo "[minio] retry with: hack/build-minio.sh" >&2
  exit 1
fi
mv "$WORK/bin/minio" "$BIN/minio"
log "built in $((SECONDS - t0))s: $BIN/minio"
if [[ $PRINT == 1 ]]; then echo "$BIN/minio"; fi
