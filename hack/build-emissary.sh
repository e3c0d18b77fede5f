#!/usr/bin/env bash
# Builds the emissary (emissary/, a static Go binary that wraps the main container and the
# sidecars of a step pod) into the cache, named after a hash of its sources so that an edit
# yields a new binary and an unchanged tree reuses the old one.
#
#   hack/build-emissary.sh            build if missing, print nothing but progress
#   hack/build-emissary.sh --print    print the binary's path (builds first if needed)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/emissary"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1

log() { echo "[emissary] $*" >&2; }

hash="$(cd "$SRC" && find . -maxdepth 1 -type f \( -name '*.go' -o -name 'go.mod' \) ! -name '*_test.go' -print0 \
  | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
out="$CACHE/bin/emissary-$hash"
if [[ ! -x "$out" ]]; then
  command -v go >/dev/null || { log "go is not installed; the local pod runner needs it to build $SRC"; exit 1; }
  mkdir -p "$CACHE/bin"
  log "building $out"
  (cd "$SRC" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags '-s -w' -o "$out.tmp.$$" .)
  mv "$out.tmp.$$" "$out"
fi
if [[ $PRINT == 1 ]]; then echo "$out"; else log "$out is up to date"; fi
