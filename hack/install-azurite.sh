#!/usr/bin/env bash
# Installs Azurite (the Azure Blob Storage emulator) from the npm registry into the cache outside
# the repo, for the vendorB artifact tests. Kept out of package.json: its server dependencies
# (database drivers, an ORM) are no part of plugflow. A finished install is reused; a failure
# names the step and shows the end of its log.
#
#   hack/install-azurite.sh            install if missing
#   hack/install-azurite.sh --print    print the path of its blob server script (installs first)
#
# Environment: PLUGFLOW_CACHE (default ~/.cache/plugflow), AZURITE_VERSION.
set -euo pipefail

AZURITE_VERSION="${AZURITE_VERSION:-3.35.0}"
CACHE="${PLUGFLOW_CACHE:-$HOME/.cache/plugflow}"
DIR="$CACHE/azurite-$AZURITE_VERSION"
MAIN="$DIR/node_modules/azurite/dist/src/blob/main.js"
PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1

log() { if [[ $PRINT == 1 ]]; then echo "[azurite] $*" >&2; else echo "[azurite] $*"; fi; }

if [[ -f "$MAIN" && -f "$DIR/.complete" ]]; then
  if [[ $PRINT == 1 ]]; then echo "$MAIN"; else log "present in $DIR (reused)"; fi
  exit 0
fi
mkdir -p "$DIR"
t0=$SECONDS
log "installing azurite@$AZURITE_VERSION from the npm registry ..."
if ! npm install --prefix "$DIR" --no-save --no-audit --no-fund --omit=dev --ignore-scripts "azurite@$AZURITE_VERSION" >"$DIR/install.log" 2>&1; then
  echo "[azurite] step 'npm install azurite' failed; the last lines of $DIR/install.log:" >&2
  tail -n 30 "$DIR/install.log" >&2
  exit 1
fi
[[ -f "$MAIN" ]] || { echo "[azurite] step 'check' failed: $MAIN is missing after the install" >&2; exit 1; }
touch "$DIR/.complete"
log "installed in $((SECONDS - t0))s: $MAIN"
if [[ $PRINT == 1 ]]; then echo "$MAIN"; fi
