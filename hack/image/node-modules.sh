#!/usr/bin/env bash
# Installs plugflow's production dependencies (package-lock.json, no devDependencies, no install
# scripts) into DIR/node_modules and removes what only editors, compilers and readers use (type
# declarations, source maps, markdown). Shared by `make image` and the Dockerfile.
#
#   hack/image/node-modules.sh REPO_DIR DIR
set -euo pipefail
REPO="$1" DIR="$2"
mkdir -p "$DIR"
cp "$REPO/package.json" "$REPO/package-lock.json" "$DIR/"
(cd "$DIR" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund)
find "$DIR/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
  -o -name '*.map' -o -iname '*.md' -o -iname '*.markdown' \) -delete
rm -f "$DIR/node_modules/.package-lock.json" "$DIR/package.json" "$DIR/package-lock.json"
