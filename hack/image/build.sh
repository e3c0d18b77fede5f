#!/usr/bin/env bash
# Builds one of plugflow's images as an OCI archive without a container engine: a minimal Debian
# root filesystem (hack/image/base-rootfs.sh, cached) as the first layer, the image's own files as
# the second, assembled with umoci. `make image` builds `plugflow`; `make test-images` builds the
# images only tests use.
#
#   hack/image/build.sh plugflow   controller, server, agent, init and wait containers (manifests/)
#   hack/image/build.sh python     Python 3 for the example plugins' servers (examples/plugins/hello)
#   hack/image/build.sh shell      busybox (sh and the usual tools) for step pods in tests
#
# Output: $IMAGE_OUT/<name>.oci.tar (default out/image/), tagged inside with the image's tag
# (plugflow: the version in package.json). Push it with skopeo (see README "Release").
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), IMAGE_OUT, DEBIAN_SUITE (trixie),
# DEBIAN_MIRROR, SOURCE_DATE_EPOCH (default: the last commit's date), IMAGE_REFRESH=1 (rebuild
# the cached Debian layer, e.g. to pick up security updates).
set -euo pipefail
umask 022

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/hack/image"
NAME="${1:?usage: hack/image/build.sh plugflow|python|shell}"
SUITE="${DEBIAN_SUITE:-trixie}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}/image"
OUT_DIR="${IMAGE_OUT:-$ROOT/out/image}"
TAG="image:$NAME"
WORK="$CACHE/work-$NAME"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# Debian packages of each image (their dependencies come along) and the image's tag and config.
# Debian 12's nodejs is 18; trixie's is 20 (package.json needs >= 20).
case "$NAME" in
  plugflow) PACKAGES=nodejs,ca-certificates; TAG_NAME="$(node -p "require('$ROOT/package.json').version")" ;;
  python) PACKAGES=python3,ca-certificates; TAG_NAME=3 ;;
  shell) PACKAGES=busybox-static; TAG_NAME=latest ;;
  *) echo "unknown image '$NAME' (plugflow, python or shell)" >&2; exit 2 ;;
esac

# Root keeps the layers' owners right (root's files, 65532's home) without a fake-root layer.
[[ $(id -u) == 0 ]] || { log "needs root: the layers must hold files owned by root and by 65532"; exit 1; }
T0=$SECONDS
rm -rf "$WORK" && mkdir -p "$WORK" "$OUT_DIR"
need_tools mmdebstrap:mmdebstrap umoci:umoci
SDE="$(source_date_epoch)"
CREATED="$(date -u -d "@$SDE" +%Y-%m-%dT%H:%M:%SZ)"
log "building $NAME:$TAG_NAME from Debian $SUITE ($PACKAGES), dated $CREATED"

# --- Layer 1: the Debian root filesystem, cached as a one-layer OCI layout keyed by what makes it.
key="$(printf '%s\n' "$SUITE" "$PACKAGES" "${DEBIAN_MIRROR:-}" | cat - "$HERE/base-rootfs.sh" | sha256sum | cut -c1-16)"
BASE="$CACHE/base-$NAME-$key"
[[ "${IMAGE_REFRESH:-0}" == 1 ]] && rm -rf "$BASE"
if [[ -f "$BASE/done" ]]; then
  log "Debian layer reused from $BASE ($(wc -l < "$BASE/packages.txt") packages; IMAGE_REFRESH=1 rebuilds it)"
else
  rm -rf "$BASE" "$WORK/base"
  FIX="the Debian mirror must be reachable (DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}); retry with: make image" \
    step debian-rootfs bash "$HERE/base-rootfs.sh" "$SUITE" "$PACKAGES" "$WORK/base"
  base_layer() {
    local created; created="$(date -u -d "@$(find "$WORK/base/rootfs" -printf '%T@\n' | sort -n | tail -1 | cut -d. -f1)" +%Y-%m-%dT%H:%M:%SZ)"
    umoci init --layout "$WORK/base/layout"
    umoci new --image "$WORK/base/layout:base"
    umoci insert --image "$WORK/base/layout:base" --history.created "$created" \
      --history.created_by "hack/image/base-rootfs.sh $SUITE $PACKAGES" "$WORK/base/rootfs" /
    mkdir -p "$BASE" && cp -a "$WORK/base/layout" "$WORK/base/packages.txt" "$BASE/" && touch "$BASE/done"
  }
  step debian-layer base_layer
fi
cp -a "$BASE/layout" "$WORK/layout"
IMG="$WORK/layout:$TAG_NAME"
step tag umoci tag --image "$WORK/layout:base" "$TAG_NAME"

# --- Layer 2 (plugflow only): its own files, staged in $WORK/app (mapped onto /).
APP="$WORK/app"
ENTRYPOINT=() CMD=() USER_ID="" WORKDIR=/
case "$NAME" in
  plugflow)
    # shellcheck source=plugflow-files.sh
    source "$HERE/plugflow-files.sh"
    ENTRYPOINT=(plugflow) CMD=(--help) USER_ID=65532:65532 WORKDIR=/app ;;
  python) CMD=(python3) USER_ID=65532:65532 ;;
  shell) CMD=(sh) USER_ID=65532:65532 ;;
esac

# --- The image config, one archive.
configure() {
  local args=(--image "$IMG" --created "$CREATED" --history.created "$CREATED" --history.created_by "hack/image/build.sh $NAME"
    --config.env PATH=/usr/local/bin:/usr/bin:/bin --config.workingdir "$WORKDIR" --config.user "$USER_ID"
    --config.label "org.opencontainers.image.title=$NAME" --config.label "org.opencontainers.image.version=$TAG_NAME"
    --config.label "org.opencontainers.image.created=$CREATED")
  local a
  [[ $NAME == plugflow ]] && args+=(--config.env NODE_ENV=production --config.env HOME=/home/nonroot)
  for a in "${ENTRYPOINT[@]}"; do args+=(--config.entrypoint "$a"); done
  for a in "${CMD[@]}"; do args+=(--config.cmd "$a"); done
  umoci config "${args[@]}"
  umoci rm --image "$WORK/layout:base"
  umoci gc --layout "$WORK/layout"
  # An oci-archive is the layout in a plain tar; fixed order, owners and dates keep it identical.
  find "$WORK/layout" -exec touch -h -d "@$SDE" {} +
  tar --sort=name --mtime="@$SDE" --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$WORK/layout" -cf "$OUT_DIR/$NAME.oci.tar.tmp" .
  mv "$OUT_DIR/$NAME.oci.tar.tmp" "$OUT_DIR/$NAME.oci.tar"
}
step config-and-archive configure

manifest="$(node -e "const i=require('$WORK/layout/index.json');console.log(i.manifests[0].digest)")"
size() { du -sh --apparent-size "$1" | cut -f1; }
unpacked="$(node -e "
const fs=require('fs');const b=(d)=>'$WORK/layout/blobs/sha256/'+d.slice(7);
const m=JSON.parse(fs.readFileSync(b('$manifest')));
console.log(m.layers.length, (m.layers.reduce((n,l)=>n+l.size,0)/1048576).toFixed(1))")"
cp "$BASE/packages.txt" "$OUT_DIR/$NAME.packages.txt"
log "$OUT_DIR/$NAME.oci.tar: $(size "$OUT_DIR/$NAME.oci.tar"), ${unpacked% *} layers of ${unpacked#* } MiB compressed, manifest $manifest"
log "Debian packages in it: $OUT_DIR/$NAME.packages.txt; done in $((SECONDS - T0))s"
rm -rf "$WORK"
