#!/usr/bin/env bash
# Builds a store server the artifact tests (and `plugflow dev`) run, from the Go module proxy into
# the cache outside the repo. Re-running is cheap: a finished binary is reused. A failure names the
# step and shows the end of its log.
#
#   hack/build-store-server.sh minio              MinIO, an S3-compatible object store
#   hack/build-store-server.sh fake-gcs-server    fake-gcs-server, a GCS emulator
#   hack/build-store-server.sh registry           the CNCF distribution registry, an OCI image registry
#   hack/build-store-server.sh nats-server        nats-server with JetStream, the durable event bus
#   hack/build-store-server.sh NAME --print       print the binary's path (builds first if needed)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow); MINIO_VERSION, FAKE_GCS_VERSION, REGISTRY_VERSION,
# NATS_SERVER_VERSION (module versions).
set -euo pipefail

NAME="${1:?usage: hack/build-store-server.sh minio|fake-gcs-server|registry|nats-server [--print]}"
case "$NAME" in
  minio) MODULE=github.com/minio/minio VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}" ;;
  fake-gcs-server) MODULE=github.com/fsouza/fake-gcs-server VERSION="${FAKE_GCS_VERSION:-v1.56.1}" ;;
  registry) MODULE=github.com/distribution/distribution/v3/cmd/registry VERSION="${REGISTRY_VERSION:-v3.0.0}" ;;
  nats-server) MODULE=github.com/nats-io/nats-server/v2 VERSION="${NATS_SERVER_VERSION:-v2.15.2}" ;;
  *) echo "[store-server] unknown server '$NAME' (minio, fake-gcs-server, registry or nats-server)" >&2; exit 2 ;;
esac
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
BIN="$CACHE/bin/$NAME-$VERSION"
WORK="$CACHE/build/$NAME"
PRINT=0
[[ "${2:-}" == "--print" ]] && PRINT=1

log() { if [[ $PRINT == 1 ]]; then echo "[$NAME] $*" >&2; else echo "[$NAME] $*"; fi; }

if [[ -x "$BIN/$NAME" ]]; then
  if [[ $PRINT == 1 ]]; then echo "$BIN/$NAME"; else log "binary present in $BIN (reused)"; fi
  exit 0
fi
command -v go >/dev/null || { echo "[$NAME] go is not installed (need Go >= 1.25)" >&2; exit 1; }
mkdir -p "$BIN" "$WORK"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$WORK/bin"
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
t0=$SECONDS
log "building $MODULE@$VERSION (a cold build takes a few minutes) ..."
if ! go install "$MODULE@$VERSION" >"$WORK/build.log" 2>&1; then
  echo "[$NAME] step 'go install $NAME' failed; the last lines of $WORK/build.log:" >&2
  tail -n 30 "$WORK/build.log" >&2
  echo "[$NAME] retry with: hack/build-store-server.sh $NAME" >&2
  exit 1
fi
mv "$WORK/bin/$NAME" "$BIN/$NAME"
log "built in $((SECONDS - t0))s: $BIN/$NAME"
if [[ $PRINT == 1 ]]; then echo "$BIN/$NAME"; fi
