#!/usr/bin/env bash
# Check a YUI .deb as a user gets it: install it with dpkg, check what it holds, start the
# installed yui-app under Xvfb and wait for its two characters' windows, run the installed
# `yui --version` and `yui doctor --help`, then remove the package (data left where it was).
#   scripts/check-package.sh PATH.deb      (as root, or through sudo)
# Env: DISPLAY_NUM (default 99) for its Xvfb. Refuses to run where the package is already
# installed (it would remove the user's copy at the end).
# An .rpm beside it is read with `rpm` when that is installed (its files and requirements).
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:?usage: scripts/check-package.sh PATH.deb}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
DISPLAY_NUM="${DISPLAY_NUM:-99}"
say() { printf 'check-package: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

pkg=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
want_version=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="yui-app"))')
say "$deb: package $pkg $version, $(du -h "$deb" | cut -f1)"
[ "$version" = "$want_version" ] || fail "version $version, the workspace says $want_version"
say "Depends: $(dpkg-deb -f "$deb" Depends)"
say "Recommends: $(dpkg-deb -f "$deb" Recommends)"
for dep in libwebkit2gtk-4.1-0 libayatana-appindicator3-1; do
  dpkg-deb -f "$deb" Depends | grep -q "$dep" || fail "Depends lacks $dep"
done
dpkg-deb -f "$deb" Recommends | grep -q speech-dispatcher || fail "Recommends lacks speech-dispatcher"
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
  fail "$pkg is installed on this machine already: not touching it (remove it first)"
fi

WORK=$(mktemp -d -t yui-pkgcheck-XXXXXX)
PIDS=()
installed=0
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$installed" = 1 ]; then $SUDO dpkg -r "$pkg" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

say "dpkg -i"
installed=1
$SUDO dpkg -i "$deb" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i"; }
for f in /usr/bin/yui-app /usr/bin/yui /usr/share/applications/YUI.desktop; do
  [ -e "$f" ] || fail "$f is not installed"
done
grep -q '^Exec=yui-app' /usr/share/applications/YUI.desktop || fail "the desktop entry does not start yui-app"
ls /usr/share/icons/hicolor/*/apps/yui-app.png >/dev/null 2>&1 || fail "no icons"

out=$(/usr/bin/yui --version) || fail "yui --version"
[ "$out" = "yui $want_version" ] || fail "yui --version said '$out'"
say "yui --version: $out"
/usr/bin/yui doctor --help >/dev/null || fail "yui doctor --help"
say "yui doctor --help: ok"

# The installed app on a display of its own, with a data and config folder of this check's.
Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done
kill -0 "${PIDS[0]}" 2>/dev/null || { cat "$WORK/xvfb.log" >&2; fail "Xvfb did not start on :$DISPLAY_NUM (set DISPLAY_NUM)"; }
if command -v openbox >/dev/null; then DISPLAY=":$DISPLAY_NUM" openbox >/dev/null 2>&1 & PIDS+=($!); fi
t0=$(date +%s)
# No session bus (an address leading nowhere): a YUI on the desktop's bus must not take the launch.
env DBUS_SESSION_BUS_ADDRESS="unix:path=$WORK/no-session-bus" DISPLAY=":$DISPLAY_NUM" NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none \
  XDG_CONFIG_HOME="$WORK/config" /usr/bin/yui-app --data-dir "$WORK/data" >"$WORK/app.log" 2>&1 &
app=$!
PIDS+=("$app")
seen=""
for _ in $(seq 1 600); do
  kill -0 "$app" 2>/dev/null || { tail -20 "$WORK/app.log" >&2; fail "yui-app exited"; }
  tree=$(DISPLAY=":$DISPLAY_NUM" xwininfo -root -tree 2>/dev/null || true)
  if grep -q '"YUI — Yui"' <<<"$tree" && grep -q '"YUI — Kai"' <<<"$tree"; then seen=1; break; fi
  sleep 0.1
done
[ -n "$seen" ] || { tail -20 "$WORK/app.log" >&2; fail "no character windows within 60 s"; }
say "yui-app: both characters' windows after $(($(date +%s) - t0)) s"
kill "$app"
wait "$app" 2>/dev/null || true
[ -f "$WORK/data/yui.sqlite3" ] || fail "the app made no database in its data folder"

say "dpkg -r"
$SUDO dpkg -r "$pkg" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -r"; }
installed=0
[ ! -e /usr/bin/yui-app ] && [ ! -e /usr/bin/yui ] || fail "files left after dpkg -r"
[ -f "$WORK/data/yui.sqlite3" ] || fail "removing the package touched the user's data"

rpm_file=$(ls "$(dirname "$deb")"/../rpm/*.rpm 2>/dev/null | head -1 || true)
if [ -n "$rpm_file" ] && command -v rpm >/dev/null; then
  say "$rpm_file: $(du -h "$rpm_file" | cut -f1)"
  rpm -qp --queryformat '%{NAME} %{VERSION}\n' "$rpm_file" >&2
  say "rpm requires: $(rpm -qpR "$rpm_file" 2>/dev/null | grep -v '^rpmlib' | tr '\n' ' ')"
  say "rpm recommends: $(rpm -qp --recommends "$rpm_file" 2>/dev/null | tr '\n' ' ')"
  rpm -qpl "$rpm_file" 2>/dev/null | grep -qx /usr/bin/yui || fail "the .rpm lacks /usr/bin/yui"
fi
say "ok"
