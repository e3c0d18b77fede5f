#!/usr/bin/env bash
# Installs plugflow's production dependencies (package-lock.json, no devDependencies, no install
# scripts) into DIR/node_modules and removes what never runs here: type declarations, source maps,
# markdown, packages' own test suites (test/, tests/, __tests__/ beside a package.json) and native
# prebuilds for other platforms (Bare runtime addons for android, darwin, win32, …).
# Shared by `make image` and the Dockerfile.
#
#   hack/image/node-modules.sh REPO_DIR DIR
set -euo pipefail
REPO="$1" DIR="$2"
mkdir -p "$DIR"
cp "$REPO/package.json" "$REPO/package-lock.json" "$DIR/"
(cd "$DIR" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund)
find "$DIR/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
  -o -name '*.map' -o -iname '*.md' -o -iname '*.markdown' \) -delete
find "$DIR/node_modules" -type d \( -name test -o -name tests -o -name __tests__ \) -prune -print0 \
  | while IFS= read -r -d '' d; do if [[ -f "$d/../package.json" ]]; then rm -rf "$d"; fi; done
platform="$(node -p 'process.platform + "-" + process.arch')"
find "$DIR/node_modules" -mindepth 2 -type d -path '*/prebuilds/*' -prune ! -name "$platform" -exec rm -rf {} +
rm -f "$DIR/node_modules/.package-lock.json" "$DIR/package.json" "$DIR/package-lock.json"
