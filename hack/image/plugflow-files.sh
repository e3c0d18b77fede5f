# Sourced by hack/image/build.sh for the `plugflow` image: stages its own files in $APP and adds
# them as the image's second layer. The Dockerfile makes the same tree; keep the two in step.
#
#   /app/{package.json,bin/,dist/,crds/,proto/,node_modules/}   the CLI; production dependencies only
#   /app/examples/plugins/*/main.js                       the TypeScript example plugins, compiled
#   /usr/local/bin/plugflow                               launcher on PATH (hack/image/plugflow)
#   /usr/local/bin/plugflow-emissary                      static Go emissary; `plugflow executor
#                                                         install` copies it (src/pods/layout.ts
#                                                         DEFAULT_EMISSARY_SOURCE)
#   /etc/passwd, /etc/group, /home/nonroot                the non-root user 65532 of manifests/

need_tools go:golang-go npm:npm

emissary() {
  local bin; bin="$(bash "$ROOT/hack/build-emissary.sh" --print)"
  install -D -m 0755 "$bin" "$APP/usr/local/bin/plugflow-emissary"
}
FIX="the emissary builds with: cd emissary && CGO_ENABLED=0 go build ./... — fix what it reports, then make image" \
  step emissary emissary

compile() {
  mkdir -p "$APP/app"
  (cd "$ROOT" && npx tsc -p tsconfig.build.json --outDir "$APP/app/dist" --sourceMap false)
  # The web UI the server serves (src/server/routes/ui.ts finds it at dist/ui).
  (cd "$ROOT" && npx tsx hack/build-ui.ts --out "$APP/app/dist/ui")
  cp "$ROOT/package.json" "$APP/app/package.json"
  # The whole bin/ directory: plugflow.js imports its siblings (early-signals.js).
  mkdir -p "$APP/app/bin" && install -m 0755 "$ROOT"/bin/*.js "$APP/app/bin/"
  cp -r "$ROOT/crds" "$APP/app/crds"
  # The artifact driver protocol: the init and wait containers load it at run time (src/artifacts/plugin-driver.ts).
  cp -r "$ROOT/proto" "$APP/app/proto"
  # The TypeScript example plugins, runnable with node (they import `plugflow/sdk`, see package.json exports).
  (cd "$ROOT" && npx tsx "$HERE/compile-examples.ts" "$APP/app")
  install -D -m 0755 "$HERE/plugflow" "$APP/usr/local/bin/plugflow"
}
FIX="the TypeScript must compile: run make build (or make lint) and fix what it reports, then make image" \
  step compile compile

# Production dependencies from the lock file (hack/image/node-modules.sh), cached by it.
prod_modules() {
  local key; key="$(cat "$ROOT/package.json" "$ROOT/package-lock.json" "$HERE/node-modules.sh" | sha256sum | cut -c1-16)"
  local dir="$CACHE/node-modules-$key"
  if [[ ! -d "$dir/node_modules" ]]; then
    rm -rf "$dir.tmp"
    bash "$HERE/node-modules.sh" "$ROOT" "$dir.tmp"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  cp -a "$dir/node_modules" "$APP/app/node_modules"
}
FIX="npm must reach its registry (or have the packages in ~/.npm); retry with: make image" \
  step node-modules prod_modules

app_layer() {
  mkdir -p "$APP/etc" "$APP/home/nonroot"
  cp "$HERE/passwd" "$HERE/group" "$APP/etc/"
  chown 65532:65532 "$APP/home/nonroot" && chmod 0700 "$APP/home/nonroot"
  chown -R 0:0 "$APP/app" "$APP/usr" && chmod -R u+rwX,go+rX,go-w "$APP/app"
  find "$APP" -exec touch -h -d "@$SDE" {} +
  umoci insert --image "$IMG" --history.created "$CREATED" --history.created_by "hack/image/plugflow-files.sh" "$APP" /
}
step app-layer app_layer
