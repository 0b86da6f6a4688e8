#!/usr/bin/env bash
# Install a YUI .deb on a fresh Debian 12 root, as a user with a new machine would, and start it.
# Not part of CI (it downloads a Debian base system and the app's libraries: minutes); run it
# before a release and write the figures into docs/packaging.md.
#   scripts/fresh-debian.sh PATH.deb       (as root: debootstrap and chroot need it)
# Steps: debootstrap a minimal bookworm, then inside it
# `apt-get install ./YUI_*.deb` resolving the package's Depends from the archive, `yui --version`,
# `yui doctor --help`, and the installed yui-app on an Xvfb display of the host (its socket bound
# into the root) until the windows "YUI — Yui" and "YUI — Kai" are there; a screenshot of them.
# Prints what was downloaded and installed, and the times.
# Env: DISPLAY_NUM (default 99) for the Xvfb; FRESH_ROOT (default /var/tmp/yui-fresh-debian, made
# anew each run); FRESH_MIRROR (default http://deb.debian.org/debian); FRESH_KEEP=1 keeps the root afterwards; FRESH_SHOT=path.png for the screenshot.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(realpath "${1:?usage: scripts/fresh-debian.sh PATH.deb}")
for tool in debootstrap Xvfb xwininfo; do
  command -v "$tool" >/dev/null || { echo "fresh-debian: $tool is missing (apt-get install debootstrap xvfb x11-utils)" >&2; exit 1; }
done
ROOT=${FRESH_ROOT:-/var/tmp/yui-fresh-debian}
DISPLAY_NUM=${DISPLAY_NUM:-99}
FRESH_NAME=fresh-debian
# shellcheck source=scripts/lib/fresh-root.sh
. scripts/lib/fresh-root.sh
trap fresh_cleanup EXIT
fresh_debootstrap
# The host's X server socket: the app inside the root draws on the host's Xvfb.
bind /tmp/.X11-unix /tmp/.X11-unix
cp "$deb" "$ROOT/root/"
debname=$(basename "$deb")

t0=$(now)
say "apt-get update; apt-get install ./$debname (its Depends from the archive)"
in_root apt-get update -qq >/dev/null
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "/root/$debname" \
  >/tmp/yui-fresh-apt.log 2>&1 || { tail -30 /tmp/yui-fresh-apt.log >&2; fail "apt-get install ./$debname (log: /tmp/yui-fresh-apt.log)"; }
t_apt=$(($(now) - t0))
grep -E '^(Need to get|After this operation)' /tmp/yui-fresh-apt.log | sed 's/^/fresh-debian:   /' >&2 || true
newly=$(grep -oE '[0-9]+ newly installed' /tmp/yui-fresh-apt.log || true)
say "installed in ${t_apt} s: ${newly:-? newly installed} packages"
pkg=$(dpkg-deb -f "$deb" Package)
in_root dpkg-query -W -f='${Status} ${Version}\n' "$pkg" | grep -q "install ok installed" || fail "$pkg is not installed"
# What Recommends would add (not installed above: a user's apt installs them by default).
say "Recommends (not installed here): $(dpkg-deb -f "$deb" Recommends)"

want=$(dpkg-deb -f "$deb" Version)
out=$(in_root /usr/bin/yui --version) || fail "yui --version"
[ "$out" = "yui $want" ] || fail "yui --version said '$out', the package is $want"
say "yui --version: $out"
in_root /usr/bin/yui doctor --help >/dev/null || fail "yui doctor --help"
say "yui doctor --help: ok"
# Every library the binaries link is there (the package's Depends were enough).
missing=$(in_root ldd /usr/bin/yui-app /usr/bin/yui | grep 'not found' || true)
[ -z "$missing" ] || fail "libraries missing in the fresh root: $missing"
say "ldd yui-app, yui: every library found"

# The app: an Xvfb of the host, the app inside the root with a data folder of its own.
if [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ]; then fail "display :$DISPLAY_NUM is taken (set DISPLAY_NUM)"; fi
Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/tmp/yui-fresh-xvfb.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done
if command -v openbox >/dev/null; then DISPLAY=":$DISPLAY_NUM" openbox >/dev/null 2>&1 & PIDS+=($!); fi
if command -v xcompmgr >/dev/null; then DISPLAY=":$DISPLAY_NUM" xcompmgr >/dev/null 2>&1 & PIDS+=($!); fi
t0=$(now)
chroot "$ROOT" env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 DISPLAY=":$DISPLAY_NUM" NO_AT_BRIDGE=1 \
  YUI_DISCOVER_PORTS=none DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent \
  /usr/bin/yui-app --data-dir /root/yui-data >/tmp/yui-fresh-app.log 2>&1 &
app=$!
PIDS+=("$app")
seen=""
for _ in $(seq 1 900); do
  kill -0 "$app" 2>/dev/null || { tail -20 /tmp/yui-fresh-app.log >&2; fail "yui-app exited"; }
  tree=$(DISPLAY=":$DISPLAY_NUM" xwininfo -root -tree 2>/dev/null || true)
  if grep -q '"YUI — Yui"' <<<"$tree" && grep -q '"YUI — Kai"' <<<"$tree"; then seen=1; break; fi
  sleep 0.1
done
[ -n "$seen" ] || { tail -20 /tmp/yui-fresh-app.log >&2; fail "no character windows within 90 s"; }
say "yui-app: the windows \"YUI — Yui\" and \"YUI — Kai\" after $(($(now) - t0)) s"
if [ -n "${FRESH_SHOT:-}" ] && command -v import >/dev/null; then
  sleep 3 # the characters' first frames
  DISPLAY=":$DISPLAY_NUM" import -window root "$FRESH_SHOT" && say "screenshot: $FRESH_SHOT"
fi
kill "$app"; wait "$app" 2>/dev/null || true
[ -f "$ROOT/root/yui-data/yui.sqlite3" ] || fail "the app made no database in its data folder"
say "the app's database: $ROOT/root/yui-data/yui.sqlite3"
say "ok (debootstrap ${t_boot} s, apt-get install ${t_apt} s; root $(du -sm --one-file-system "$ROOT" | cut -f1) MiB)"
