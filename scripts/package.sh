#!/usr/bin/env bash
# YUI's Linux packages with Tauri's bundler (docs/packaging.md). Called by `scripts/dev.sh package`
# (release) and `scripts/dev.sh test` (a .deb of the debug build it already has).
#   scripts/package.sh [--debug] [--bundles deb,rpm] [--no-engine]
#     (default) build the release app and CLI once, then bundle a .deb and an .rpm
#     --debug   bundle the debug build already in target/debug (no compile; CI)
#     --bundles the formats (deb, rpm; appimage only where the machine can download Tauri's
#               AppImage tools while bundling, which these machines cannot)
#     --no-engine  leave the built-in model's engine out (CI's quick package check); by default
#               scripts/build-engine.sh builds it (once; cached) and it goes to /usr/lib/yui/engine
# Prints each package's path and size. The Tauri CLI comes prebuilt from npm (scripts/tools).
set -euo pipefail
cd "$(dirname "$0")/.."

# ---- Package dependencies ---------------------------------------------------------------------
# Tauri's bundler adds the .deb's library dependencies itself: libwebkit2gtk-4.1-0, libgtk-3-0,
# and libayatana-appindicator3-1 for the tray. The .rpm gets none by itself: they are named here.
# Debian names first, then the RPM (Fedora) names of the same packages.
# libgomp1 / libgomp: the built-in engine's threads (llama.cpp's OpenMP build).
DEB_DEPENDS=(libdbus-1-3 libgomp1)
DEB_RECOMMENDS=(speech-dispatcher)
RPM_DEPENDS=(webkit2gtk4.1 gtk3 libayatana-appindicator-gtk3 dbus-libs libgomp)
RPM_RECOMMENDS=(speech-dispatcher)
# VOICE: the voice work's runtime packages go here (both lists of a format: a package the app
# cannot start without in *_DEPENDS, one a feature uses when present in *_RECOMMENDS).
DEB_DEPENDS+=()
DEB_RECOMMENDS+=()
RPM_DEPENDS+=()
RPM_RECOMMENDS+=()
# ------------------------------------------------------------------------------------------------

profile=release
bundles=deb,rpm
engine=1
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=debug ;;
    --bundles) bundles=$2; shift ;;
    --no-engine) engine=0 ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done

# The Tauri CLI, prebuilt (npm's @tauri-apps/cli, pinned in scripts/tools/package.json).
TOOLS=scripts/tools
if [ ! -x "$TOOLS/node_modules/.bin/tauri" ]; then
  command -v npm >/dev/null || { echo "package: npm is missing (scripts/dev.sh installs it)" >&2; exit 1; }
  npm install --prefix "$TOOLS" --no-package-lock --no-audit --no-fund --loglevel=error
fi
TAURI="$TOOLS/node_modules/.bin/tauri"

target=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
if [ "$profile" = release ]; then
  echo "==> cargo build --release (yui-app and the yui CLI)" >&2
  cargo build --release --locked -p yui-app -p yui-cli --bin yui-app --bin yui
fi
for bin in yui-app yui; do
  [ -x "$target/$profile/$bin" ] || { echo "package: $target/$profile/$bin is missing (build it first)" >&2; exit 1; }
done

# The built-in model's engine (docs/built-in-model.md): llama-server and its libraries, one
# folder, installed as /usr/lib/yui/engine (where model::engine finds it from /usr/bin).
files=("\"/usr/bin/yui\": \"$target/$profile/yui\"")
if [ "$engine" = 1 ]; then
  echo "==> the built-in engine (scripts/build-engine.sh)" >&2
  engine_dir=$(bash scripts/build-engine.sh | tail -1)
  [ -x "$engine_dir/llama-server" ] || { echo "package: no engine in '$engine_dir'" >&2; exit 1; }
  files+=("\"/usr/lib/yui/engine\": \"$engine_dir\"")
fi
files_json="{$(IFS=,; echo "${files[*]}")}"

json_list() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@"; }
# Merged over tauri.conf.json: the dependencies above and the CLI of the chosen build.
overlay=$(cat <<EOF
{"bundle": {"linux": {
  "deb": {"depends": $(json_list "${DEB_DEPENDS[@]}"), "recommends": $(json_list "${DEB_RECOMMENDS[@]}"),
          "files": $files_json},
  "rpm": {"depends": $(json_list "${RPM_DEPENDS[@]}"), "recommends": $(json_list "${RPM_RECOMMENDS[@]}"),
          "files": $files_json}
}}}
EOF
)
args=(bundle --bundles "$bundles" --config "$overlay")
if [ "$profile" = debug ]; then args+=(--debug); fi
echo "==> tauri ${args[*]:0:3} ($profile)" >&2
# The bundler reads the target folder from cargo, and the app's version from Cargo.toml.
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
CARGO_TARGET_DIR="$target" "$TAURI" "${args[@]}" >&2
for f in "$target/$profile"/bundle/{deb/*.deb,rpm/*.rpm,appimage/*.AppImage}; do
  [ -f "$f" ] || continue
  # Only this run's packages (an older version's file may still lie there).
  [ "$f" -nt "$stamp" ] || continue
  printf '%s\t%s\n' "$f" "$(du -h "$f" | cut -f1)"
done
