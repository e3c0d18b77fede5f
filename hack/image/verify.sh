#!/usr/bin/env bash
# Checks the plugflow image the way a node would run it, without a container engine: unpacks the
# OCI archive with umoci, checks its config, then runs inside its root filesystem (own mount and
# PID namespaces, /dev and /proc mounted, chroot, uid/gid 65532 like manifests/) what pods run:
#   plugflow --help, plugflow executor --help           the CLI starts (controller/server/agent entry)
#   every module of dist/ imports                       nothing needed was trimmed from node_modules
#   plugflow executor install /var/run/plugflow         the init container copies the emissary
#   /var/run/plugflow/emissary -- node -e …             the main container's wrapper runs a step
#   plugflow executor wait                              the wait container reports exit code + output
# and, when `make test-images` has built them, that the test images run as 65532 and that the
# emissary copied from the plugflow image runs a step in the shell image (as in a real step pod).
#
#   hack/image/verify.sh [ARCHIVE]      default out/image/plugflow.oci.tar (make image-verify)
# Needs root (chroot, mounts) and umoci.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARCHIVE="${1:-${IMAGE_OUT:-$ROOT/out/image}/plugflow.oci.tar}"
TAG="image-verify"
WORK="$(mktemp -d /tmp/plugflow-image-verify.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=lib.sh
source "$ROOT/hack/image/lib.sh"

[[ -f "$ARCHIVE" ]] || { log "$ARCHIVE is missing; build it with: make image"; exit 1; }
[[ $(id -u) == 0 ]] || { log "needs root (chroot and mounts); run it as root"; exit 1; }
need_tools umoci:umoci unshare:util-linux
T0=$SECONDS
fail() { echo "[$TAG] FAIL: $*" >&2; exit 1; }

# unpack ARCHIVE DIR: the archive's only image, unpacked as a runtime bundle in DIR.
unpack() {
  mkdir -p "$2/layout"
  tar -xf "$1" -C "$2/layout"
  local ref; ref="$(node -p "require('$2/layout/index.json').manifests[0].annotations['org.opencontainers.image.ref.name']")"
  umoci unpack --image "$2/layout:$ref" "$2/bundle"
  # What a pod's shared emptyDir and the kubelet's mounts provide.
  mkdir -p "$2/bundle/rootfs/var/run/plugflow" "$2/bundle/rootfs/proc" "$2/bundle/rootfs/dev" "$2/bundle/rootfs/work"
  chown 65532:65532 "$2/bundle/rootfs/var/run/plugflow" "$2/bundle/rootfs/work"
}
step unpack unpack "$ARCHIVE" "$WORK"
R="$WORK/bundle/rootfs"
log "unpacked: $(du -sh "$R" | cut -f1) ($(du -sh "$R/app/node_modules" | cut -f1) of it node_modules)"

# The runtime config umoci derived from the image config.
node -e "
const c = require('$WORK/bundle/config.json'), p = c.process, want = (ok, what) => { if (!ok) { console.error('[$TAG] FAIL: ' + what); process.exit(1); } };
want(p.args[0] === 'plugflow', 'entrypoint is plugflow, got ' + JSON.stringify(p.args));
want(p.user.uid === 65532 && p.user.gid === 65532, 'user is 65532:65532, got ' + JSON.stringify(p.user));
want(p.cwd === '/app', 'working directory is /app, got ' + p.cwd);
want(p.env.includes('PATH=/usr/local/bin:/usr/bin:/bin'), 'PATH is set, got ' + p.env);
" || exit 1
log "config: entrypoint plugflow, user 65532:65532, workdir /app, PATH set"

# in_image [NAME=VALUE...] CMD...: runs CMD inside the image at $R as uid 65532 with the image's
# environment plus the NAME=VALUE pairs (the image has no env(1)).
in_image() {
  unshare --mount --pid --fork --propagation private -- bash -c '
    set -e; R="$1"; shift
    mount --rbind /dev "$R/dev"; mount -t proc proc "$R/proc"
    vars=(); while [[ "${1:-}" == [A-Z_]*=* ]]; do vars+=("$1"); shift; done
    exec env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/nonroot NODE_ENV=production "${vars[@]}" \
      /usr/sbin/chroot --userspec=65532:65532 "$R" "$@"' in-image "$R" "$@"
}

check() { # check NAME EXPECTED-TEXT CMD...: runs CMD in the image; its output must hold EXPECTED-TEXT.
  local name="$1" want="$2"; shift 2
  local out rc=0
  out="$(in_image "$@" 2>&1)" || rc=$?
  [[ $rc == 0 && "$out" == *"$want"* ]] || fail "$name: exit $rc, expected output containing '$want', got: $(tail -n 15 <<<"$out")"
  log "ok: $name"
}

t=$SECONDS
check "plugflow --help" "Usage: plugflow" plugflow --help
check "plugflow executor --help" "install" plugflow executor --help
check "every dist module imports" "imported" /usr/bin/node --input-type=module -e "
  import { readdirSync } from 'node:fs';
  const files = readdirSync('/app/dist', { recursive: true }).filter((f) => f.endsWith('.js') && !/^cli\/(main|pod-side-main)\.js$/.test(f) && !f.startsWith('ui/'));
  for (const f of files) await import('/app/dist/' + f);
  console.log('imported', files.length);"
check "the web UI's bundle (dist/ui, served by the server)" "ui bundle" /usr/bin/node -e \
  "for (const f of ['index.html', 'app.js', 'app.css']) require('fs').statSync('/app/dist/ui/' + f); console.log('ui bundle')"
check "executor install (init container)" "installed /var/run/plugflow/emissary" plugflow executor install /var/run/plugflow
OUTPUTS='[{"name":"answer","path":"/work/answer"}]'
check "emissary runs the main command" "hello from main" PLUGFLOW_OUTPUTS="$OUTPUTS" /var/run/plugflow/emissary -- \
  /usr/bin/node -e "require('fs').writeFileSync('/work/answer', '42'); console.log('hello from main')"
check "executor wait (wait container) reports the output" '"42"' PLUGFLOW_OUTPUTS="$OUTPUTS" \
  plugflow executor wait --termination-log /var/run/plugflow/termination-log

# The images only tests use, when built.
OUT_DIR="$(dirname "$ARCHIVE")"
if [[ -f "$OUT_DIR/python.oci.tar" ]]; then
  step unpack-python unpack "$OUT_DIR/python.oci.tar" "$WORK/python"
  R="$WORK/python/bundle/rootfs"
  check "python image: the example plugin server's modules" "python ok" python3 -c 'import http.server, json, ssl; print("python ok")'
else
  log "skipped the python image: $OUT_DIR/python.oci.tar is missing (make test-images builds it)"
fi
if [[ -f "$OUT_DIR/shell.oci.tar" ]]; then
  step unpack-shell unpack "$OUT_DIR/shell.oci.tar" "$WORK/shell"
  R="$WORK/shell/bundle/rootfs"
  # The init container's copy, in the shell image's shared volume: the static emissary runs there.
  cp -p "$WORK/bundle/rootfs/var/run/plugflow/emissary" "$R/var/run/plugflow/emissary"
  check "shell image: the emissary runs a shell step" "hello from busybox" PLUGFLOW_OUTPUTS='[{"name":"n","path":"/work/n"}]' \
    /var/run/plugflow/emissary -- sh -c 'id -u > /work/n; echo hello from busybox'
  [[ "$(cat "$R/var/run/plugflow/outputs/n" 2>/dev/null)" == 65532 ]] || fail "shell image: the emissary did not copy the output n (want 65532)"
  log "ok: shell image: the step ran as 65532 and its output was collected"
else
  log "skipped the shell image: $OUT_DIR/shell.oci.tar is missing (make test-images builds it)"
fi
log "all checks passed in $((SECONDS - t))s (whole run $((SECONDS - T0))s)"
