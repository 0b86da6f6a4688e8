# Sourced by tests/e2e/wayland.sh and idle_cpu.sh (IDLE_SESSION=sway|weston): a headless Wayland
# session from Debian's packages, stopped when the script exits. sway refuses to run as root, so
# as root (CI) the compositors run as the plain user yui-wayland-test (made here when missing),
# each with a runtime directory of its own under WL_WORK; the caller stays root and may open
# their sockets (Xwayland admits root through `xhost +si:localuser:root`, said by that user).
#   start_sway            sets SWAY_ENV (XDG_RUNTIME_DIR=… WAYLAND_DISPLAY=…) and SWAY_RT
#   start_weston          weston with Xwayland; sets WESTON_ENV (… DISPLAY=:N) and WESTON_RT
# Needs WL_WORK (a folder); appends to WL_PIDS.
WL_USER=yui-wayland-test
WL_PIDS=()
wl_cleanup() {
  local p
  # runuser does not pass a TERM on to its child: the compositor is told itself.
  for p in "${WL_PIDS[@]}"; do pkill -TERM -P "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
  sleep 1
  for p in "${WL_PIDS[@]}"; do pkill -KILL -P "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  return 0
}
wl_as_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u "$WL_USER" -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ] && ! id -u "$WL_USER" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$WL_USER"
fi
wl_runtime_dir() {
  local d=$WL_WORK/$1
  mkdir -p "$d" && chmod 700 "$d"
  if [ "$(id -u)" = 0 ]; then chown "$WL_USER" "$d"; fi
  echo "$d"
}
wl_wait() { # seconds, command...
  local n=$(($1 * 10)); shift
  while ! "$@" 2>/dev/null; do
    n=$((n - 1)); [ "$n" -gt 0 ] || return 1
    sleep 0.1
  done
}
start_sway() {
  SWAY_RT=$(wl_runtime_dir sway-rt)
  printf 'output HEADLESS-1 resolution 1280x720 position 0 0\noutput * bg #3f3f3f solid_color\n' >"$WL_WORK/sway.conf"
  chmod 644 "$WL_WORK/sway.conf"
  wl_as_user env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$SWAY_RT" WLR_BACKENDS=headless \
    WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 sway -c "$WL_WORK/sway.conf" >"$WL_WORK/sway.log" 2>&1 &
  WL_PIDS+=($!)
  wl_wait 15 test -S "$SWAY_RT/wayland-1" || { cat "$WL_WORK/sway.log" >&2; return 1; }
  SWAY_ENV=(XDG_RUNTIME_DIR="$SWAY_RT" WAYLAND_DISPLAY=wayland-1)
}
start_weston() {
  WESTON_RT=$(wl_runtime_dir weston-rt)
  wl_as_user env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$WESTON_RT" weston --backend=headless-backend.so \
    --use-pixman --idle-time=0 --width=1280 --height=720 --socket=wayland-y --xwayland --debug \
    >"$WL_WORK/weston.log" 2>&1 &
  WL_PIDS+=($!)
  wl_wait 15 grep -q "listening on display" "$WL_WORK/weston.log" || { cat "$WL_WORK/weston.log" >&2; return 1; }
  local xd
  xd=$(sed -n 's/.*listening on display \(:[0-9]*\).*/\1/p' "$WL_WORK/weston.log" | head -1)
  wl_as_user env DISPLAY="$xd" xhost +si:localuser:root >/dev/null
  WESTON_ENV=(XDG_RUNTIME_DIR="$WESTON_RT" WAYLAND_DISPLAY=wayland-y DISPLAY="$xd")
}
