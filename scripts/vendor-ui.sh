#!/usr/bin/env bash
# The UI's vendored browser modules (ui/vendor/, not committed): three.js, its glTF loader,
# three-vrm and three-vrm-animation from the npm registry (scripts/ui-vendor/package.json, exact versions, its lock),
# tree-shaken and minified by esbuild into one ES module, ui/vendor/vrm.js, that only VRM
# character windows import (docs/vrm.md). Nothing is fetched at run time. scripts/dev.sh runs
# this before every build: Tauri embeds ui/ into the app when it compiles.
# Idempotent: does nothing when ui/vendor/vrm.js is newer than the lock and the entry.
set -euo pipefail
cd "$(dirname "$0")/.."
src=scripts/ui-vendor
out=ui/vendor/vrm.js
if [ -f "$out" ] && [ "$out" -nt "$src/package-lock.json" ] && [ "$out" -nt "$src/vrm-entry.js" ]; then
  exit 0
fi
if [ ! -f "$src/node_modules/.package-lock.json" ] || [ "$src/package-lock.json" -nt "$src/node_modules/.package-lock.json" ]; then
  (cd "$src" && npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p ui/vendor
"$src/node_modules/.bin/esbuild" "$src/vrm-entry.js" --bundle --format=esm --minify \
  --target=safari16 --legal-comments=eof --log-level=warning --outfile="$out"
for lic in three/LICENSE @pixiv/three-vrm/LICENSE @pixiv/three-vrm-animation/LICENSE; do
  [ -f "$src/node_modules/$lic" ] && cp "$src/node_modules/$lic" "ui/vendor/LICENSE.$(basename "$(dirname "$lic")")"
done
