#!/usr/bin/env bash
# Loads the node's images into containerd's Kubernetes namespace from OCI archives — no registry:
#   localhost/plugflow-pause:1   the pod sandbox (hack/node/pause, built here with Go and umoci)
#   plugflow/plugflow:<version>  `make image`  (what manifests/install.yaml runs)
#   plugflow/shell:latest        `make test-images`, also tagged alpine:3.20, busybox, busybox:1.36
#   plugflow/python:3            `make test-images`, also tagged python:3.11-alpine, python:3.12-alpine
# The aliases let the examples' step and plugin images resolve on a node that cannot pull: they are
# Debian busybox and Python, not Alpine — enough for the examples' shell one-liners and python3 -c.
# Images whose archive is missing are skipped with a line that says how to build them.
#
#   hack/node/images.sh pause     build out/image/pause.oci.tar (needs go, umoci)
#   hack/node/images.sh import [N]   import every archive present into node N's containerd (default:
#                                    every node's; each node has its own image store)
set -euo pipefail
# shellcheck source=config.sh
source "$(dirname "${BASH_SOURCE[0]}")/config.sh"
mkdir -p "$WORK"

build_pause() {
  local w="$NODE_DIR/build-pause"
  rm -rf "$w" && mkdir -p "$w" "$IMAGE_DIR"
  (cd "$ROOT/hack/node/pause" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags '-s -w' -o "$w/pause" .)
  umoci init --layout "$w/layout"
  umoci new --image "$w/layout:1"
  mkdir -p "$w/rootfs" && cp "$w/pause" "$w/rootfs/pause"
  umoci insert --image "$w/layout:1" "$w/rootfs" /
  umoci config --image "$w/layout:1" --config.entrypoint /pause --config.user 65535:65535 --os linux --architecture amd64
  umoci gc --layout "$w/layout"
  tar -C "$w/layout" -cf "$IMAGE_DIR/pause.oci.tar" .
  rm -rf "$w"
}

# import ARCHIVE BASE-NAME [ALIAS...]: the archive's one ref (its tag) becomes BASE-NAME:tag.
import_one() {
  local archive="$IMAGE_DIR/$1.oci.tar" base="$2"; shift 2
  if [[ ! -f "$archive" ]]; then
    log "skipped $base: $archive is missing (build it: $( [[ $base == *plugflow/plugflow ]] && echo 'make image' || echo 'make test-images'))"
    return 0
  fi
  local out ref
  out="$(ctr -a "$SOCK" -n k8s.io images import --base-name "$base" "$archive")"
  ref="$(echo "$out" | awk '/^unpacking /{print $2}' | head -1)"
  [[ -n "$ref" ]] || { echo "$out"; log "importing $archive gave no image named $base:<tag>"; return 1; }
  local alias
  for alias in "$@"; do ctr -a "$SOCK" -n k8s.io images tag --force "$ref" "$alias" >/dev/null; done
  log "$NODE: imported $ref${*:+ (also as $*)}"
}

import_all() {
  import_one pause localhost/plugflow-pause
  import_one plugflow docker.io/plugflow/plugflow
  import_one shell docker.io/plugflow/shell docker.io/library/alpine:3.20 docker.io/library/busybox:latest docker.io/library/busybox:1.36
  import_one python docker.io/plugflow/python docker.io/library/python:3.11-alpine docker.io/library/python:3.12-alpine
}

case "${1:-}" in
  pause) FIX="the pause image needs go and umoci (apt-get install umoci)" step pause-image build_pause ;;
  import)
    for n in ${2:-$(seq "$NODE_COUNT")}; do
      NODE="$(node_name "$n")" SOCK="$(node_sock "$n")" import_all
    done ;;
  *) echo "usage: hack/node/images.sh pause|import" >&2; exit 2 ;;
esac
