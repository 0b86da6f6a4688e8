#!/usr/bin/env bash
# Check a YUI package as a user gets it, then remove it (the user's data left where it was).
#   scripts/check-package.sh PATH.deb   install it with dpkg, check what it holds and its Depends,
#                                       start the installed yui-app under Xvfb and wait for its two
#                                       characters' windows, run the installed `yui --version` and
#                                       `yui doctor --help`, then `dpkg -r`  (as root, or sudo)
#   scripts/check-package.sh PATH.rpm   the same for the .rpm, on this Debian machine: its
#                                       requirements and payload read with rpm and rpm2cpio, then
#                                       `rpm -i` into a scratch root with a database of its own
#                                       (--root, --dbpath; --nodeps: the requirements are Fedora's
#                                       names, checked by name, while this host's libraries serve
#                                       the binaries), the same runs of the installed binaries,
#                                       then `rpm -e`  (needs apt-get install rpm cpio)
# Both check the built-in model's engine in /usr/lib/yui/engine: its files, `llama-server
# --version` and the CPU backend it loads, and, when the tests' GGUF is there (scripts/dev.sh
# deps), a real turn of the installed `yui` on it with no setting: the engine found beside the
# program. `--no-engine` (second argument) checks a package made with `package.sh --no-engine`.
# Env: DISPLAY_NUM (default 99) for its Xvfb. The .deb mode refuses to run where the package is
# already installed (it would remove the user's copy at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:?usage: scripts/check-package.sh PATH.deb|PATH.rpm [--no-engine]}
want_engine=1
[ "${2:-}" = --no-engine ] && want_engine=0
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
DISPLAY_NUM="${DISPLAY_NUM:-99}"
say() { printf 'check-package: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
want_version=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="yui-app"))')

WORK=$(mktemp -d -t yui-pkgcheck-XXXXXX)
PIDS=()
installed=0
uninstall() { :; }
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$installed" = 1 ]; then uninstall >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# check_installed PREFIX: the installed files under PREFIX (/ for the .deb), the CLI's runs, and
# the installed app under Xvfb showing both characters, with a data and config folder of the
# check's own (left in $WORK/data, to see that removing the package keeps it).
check_installed() {
  local root=${1%/} f out
  for f in /usr/bin/yui-app /usr/bin/yui /usr/share/applications/YUI.desktop; do
    [ -e "$root$f" ] || fail "$f is not installed"
  done
  grep -q '^Exec=yui-app' "$root/usr/share/applications/YUI.desktop" || fail "the desktop entry does not start yui-app"
  ls "$root"/usr/share/icons/hicolor/*/apps/yui-app.png >/dev/null 2>&1 || fail "no icons"

  out=$("$root/usr/bin/yui" --version) || fail "yui --version"
  [ "$out" = "yui $want_version" ] || fail "yui --version said '$out'"
  say "yui --version: $out"
  "$root/usr/bin/yui" doctor --help >/dev/null || fail "yui doctor --help"
  say "yui doctor --help: ok"

  check_engine "$root"

  Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
  local xvfb=$!
  PIDS+=("$xvfb")
  for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done
  kill -0 "$xvfb" 2>/dev/null || { cat "$WORK/xvfb.log" >&2; fail "Xvfb did not start on :$DISPLAY_NUM (set DISPLAY_NUM)"; }
  if command -v openbox >/dev/null; then DISPLAY=":$DISPLAY_NUM" openbox >/dev/null 2>&1 & PIDS+=($!); fi
  local t0 app seen="" tree
  t0=$(date +%s)
  # No session bus (an address leading nowhere): a YUI on the desktop's bus must not take the launch.
  env DBUS_SESSION_BUS_ADDRESS="unix:path=$WORK/no-session-bus" DISPLAY=":$DISPLAY_NUM" NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none \
    XDG_CONFIG_HOME="$WORK/config" "$root/usr/bin/yui-app" --data-dir "$WORK/data" >"$WORK/app.log" 2>&1 &
  app=$!
  PIDS+=("$app")
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
}

# check_engine PREFIX: the bundled llama-server starts, loads a CPU backend, and serves a turn of
# the installed `yui` that was told nothing about where it is.
check_engine() {
  local root=${1%/} dir out gguf=crates/yui-core/tests/fixtures/models/SmolLM2-135M-Instruct.Q4_1.gguf
  dir=$root/usr/lib/yui/engine
  if [ "$want_engine" = 0 ]; then
    [ ! -e "$dir" ] || fail "--no-engine, but the package has $dir"
    say "engine: left out (--no-engine)"
    return
  fi
  [ -x "$dir/llama-server" ] || fail "$dir/llama-server is not installed"
  ls "$dir"/libggml-cpu-*.so >/dev/null 2>&1 || fail "no CPU backend in $dir"
  out=$("$dir/llama-server" --version 2>&1) || { echo "$out" >&2; fail "llama-server --version"; }
  say "engine: $(head -1 <<<"$out"), $(du -sh "$dir" | cut -f1) in $dir"
  if [ ! -f "$gguf" ]; then
    say "engine: no model run (the tests' GGUF is absent: scripts/dev.sh deps)"
    return
  fi
  # Started on the GGUF: which CPU backend ggml chose for this machine (the one it mapped).
  local port pid backend="" data=$WORK/engine-data t0
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$dir/llama-server" -m "$gguf" --host 127.0.0.1 --port "$port" -t 1 -c 512 >"$WORK/engine.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { tail -5 "$WORK/engine.log" >&2; fail "llama-server exited on the GGUF"; }
    sleep 0.2
  done
  backend=$(grep -o 'libggml-cpu-[a-z0-9_]*\.so' "/proc/$pid/maps" | sort -u | head -1 || true)
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  [ -n "$backend" ] || fail "llama-server loaded no CPU backend"
  say "engine: started on the GGUF, CPU backend $backend"
  t0=$(date +%s)
  # As installed: /usr/bin/yui finds /usr/lib/yui/engine by itself (no engine_path, a PATH without
  # any other llama-server).
  env -u YUI_ENGINE_DIR PATH=/usr/bin:/bin "$root/usr/bin/yui" --data-dir "$data" model add "$gguf" --name smollm2 >/dev/null ||
    fail "yui model add"
  env -u YUI_ENGINE_DIR PATH=/usr/bin:/bin "$root/usr/bin/yui" --data-dir "$data" model use smollm2 >/dev/null || fail "yui model use"
  "$root/usr/bin/yui" --data-dir "$data" backend set --max-output-tokens 12 >/dev/null || fail "yui backend set"
  out=$(env -u YUI_ENGINE_DIR PATH=/usr/bin:/bin \
    "$root/usr/bin/yui" --data-dir "$data" turn --message "Say hello." 2>"$WORK/turn.err") ||
    { tail -5 "$WORK/turn.err" >&2; fail "a turn on the bundled engine"; }
  tail -1 <<<"$out" | python3 -c 'import json,sys; e=json.load(sys.stdin); sys.exit(e["type"]!="turn_end" or e["status"]!="ok")' || { echo "$out" | tail -3 >&2; fail "the turn on the bundled engine did not end ok"; }
  say "engine: a turn of the installed yui on the bundled engine answered in $(($(date +%s) - t0)) s"
}

case "$deb" in
  *.rpm)
    rpm_file=$(realpath "$deb")
    for tool in rpm rpm2cpio cpio; do
      command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install rpm cpio)"
    done
    read -r name version < <(rpm -qp --queryformat '%{NAME} %{VERSION}\n' "$rpm_file")
    say "$rpm_file: package $name $version, $(du -h "$rpm_file" | cut -f1)"
    [ "$version" = "$want_version" ] || fail "version $version, the workspace says $want_version"
    requires=$(rpm -qpR "$rpm_file" | grep -v '^rpmlib(' | sort -u)
    say "Requires: $(tr '\n' ' ' <<<"$requires")"
    say "Recommends: $(rpm -qp --recommends "$rpm_file" | tr '\n' ' ')"
    for dep in webkit2gtk4.1 gtk3 libayatana-appindicator-gtk3 dbus-libs; do
      grep -qx "$dep" <<<"$requires" || fail "Requires lacks $dep"
    done
    if [ "$want_engine" = 1 ]; then grep -qx libgomp <<<"$requires" || fail "Requires lacks libgomp (the engine's)"; fi
    rpm -qp --recommends "$rpm_file" | grep -qx speech-dispatcher || fail "Recommends lacks speech-dispatcher"
    scripts=$(rpm -qp --scripts "$rpm_file")
    say "scriptlets: ${scripts:-none}"
    # The payload as rpm2cpio unpacks it: the same files as the header lists.
    mkdir -p "$WORK/cpio"
    # rpm2cpio exits 1 on Tauri's .rpm although it writes the whole archive: the rpm crate
    # leaves out the header's archive size, which rpm2cpio compares with what it copied. So its
    # status is not read; cpio's is, and the file list below is checked against the header.
    (cd "$WORK/cpio" && { rpm2cpio "$rpm_file" || true; } | cpio -idm --quiet) || fail "the payload does not unpack (rpm2cpio | cpio)"
    [ "$(rpm -qp --qf '%{LONGARCHIVESIZE}' "$rpm_file")" = "(none)" ] && say "the header gives no archive size (rpm2cpio exits 1 for that alone)"
    (cd "$WORK/cpio" && find . -type f -o -type l | sed 's/^\.//' | sort) >"$WORK/payload"
    rpm -qpl "$rpm_file" | sort >"$WORK/listed"
    comm -23 "$WORK/payload" "$WORK/listed" | grep . && fail "payload files the header does not list"
    comm -13 "$WORK/payload" "$WORK/listed" | grep . && fail "header files missing from the payload"
    say "payload: $(wc -l <"$WORK/payload") files, $(du -sh "$WORK/cpio" | cut -f1) unpacked, all listed in the header"
    cmp -s "$WORK/cpio/usr/bin/yui" "$(dirname "$rpm_file")/../../yui" 2>/dev/null && say "payload's yui is the build's"
    rm -rf "$WORK/cpio"
    # Installed for real into a scratch root, with an rpm database of its own.
    ROOT=$WORK/root
    mkdir -p "$ROOT"
    uninstall() { rpm -e --root "$ROOT" --dbpath /rpmdb --nodeps "$name"; }
    say "rpm -i --root $ROOT --dbpath /rpmdb --nodeps"
    installed=1
    rpm -i --root "$ROOT" --dbpath /rpmdb --nodeps "$rpm_file" >"$WORK/rpm.log" 2>&1 || { cat "$WORK/rpm.log" >&2; fail "rpm -i"; }
    rpm -q --root "$ROOT" --dbpath /rpmdb "$name" >&2 || fail "rpm -q does not know $name"
    rpm -V --root "$ROOT" --dbpath /rpmdb --nodeps "$name" >&2 || fail "rpm -V: the installed files differ from the package"
    say "rpm -V: the installed files are the package's"
    check_installed "$ROOT"
    say "rpm -e"
    uninstall >"$WORK/rpm.log" 2>&1 || { cat "$WORK/rpm.log" >&2; fail "rpm -e"; }
    installed=0
    [ ! -e "$ROOT/usr/bin/yui-app" ] && [ ! -e "$ROOT/usr/bin/yui" ] || fail "files left after rpm -e"
    [ -f "$WORK/data/yui.sqlite3" ] || fail "removing the package touched the user's data"
    say "ok"
    exit 0
    ;;
esac

pkg=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
say "$deb: package $pkg $version, $(du -h "$deb" | cut -f1)"
[ "$version" = "$want_version" ] || fail "version $version, the workspace says $want_version"
say "Depends: $(dpkg-deb -f "$deb" Depends)"
say "Recommends: $(dpkg-deb -f "$deb" Recommends)"
for dep in libwebkit2gtk-4.1-0 libayatana-appindicator3-1; do
  dpkg-deb -f "$deb" Depends | grep -q "$dep" || fail "Depends lacks $dep"
done
if [ "$want_engine" = 1 ]; then
  dpkg-deb -f "$deb" Depends | grep -q libgomp1 || fail "Depends lacks libgomp1 (the engine's)"
fi
dpkg-deb -f "$deb" Recommends | grep -q speech-dispatcher || fail "Recommends lacks speech-dispatcher"
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
  fail "$pkg is installed on this machine already: not touching it (remove it first)"
fi

uninstall() { $SUDO dpkg -r "$pkg"; }
say "dpkg -i"
installed=1
$SUDO dpkg -i "$deb" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i"; }
check_installed /

say "dpkg -r"
$SUDO dpkg -r "$pkg" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -r"; }
installed=0
[ ! -e /usr/bin/yui-app ] && [ ! -e /usr/bin/yui ] || fail "files left after dpkg -r"
[ -f "$WORK/data/yui.sqlite3" ] || fail "removing the package touched the user's data"

say "ok"
