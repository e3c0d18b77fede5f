#!/usr/bin/env bash
# A Python virtual environment with the peer's Python SDK (Hera, from PyPI, pinned below) in the
# cache, for test/hera-client.test.ts. Re-running is cheap: a finished environment is reused.
# Prints the environment's python on its last line.
#
#   hack/hera-venv.sh
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), HERA_VERSION (default 7.1.0).
set -euo pipefail
HERA_VERSION="${HERA_VERSION:-7.1.0}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
VENV="$CACHE/python/hera-$HERA_VERSION"
log() { echo "[hera] $*" >&2; }
if [[ ! -x "$VENV/bin/python" || ! -f "$VENV/.complete" ]]; then
  command -v python3 >/dev/null || { log "python3 is not installed"; exit 1; }
  t0=$SECONDS
  rm -rf "$VENV" && mkdir -p "$(dirname "$VENV")"
  if ! python3 -m venv "$VENV" >&2; then
    log "step 'venv' failed: python3 -m venv (Debian: apt-get install python3-venv)"
    exit 1
  fi
  if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check "hera==$HERA_VERSION" >&2; then
    log "step 'pip install hera==$HERA_VERSION' failed (PyPI reachable?)"
    exit 1
  fi
  touch "$VENV/.complete"
  log "hera $HERA_VERSION installed in $VENV in $((SECONDS - t0))s"
fi
echo "$VENV/bin/python"
