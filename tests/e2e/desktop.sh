# Sourced by the measuring scripts (drag_cpu.sh, idle_cpu.sh, paint_cost.sh, scripts/footprint.sh):
# a desktop as users have it (Xvfb + openbox + xcompmgr for transparency) and tauri-driver, all
# stopped when the script exits. Needs DISPLAY_NUM set; sets DISPLAY, LOG_DIR, PIDS and
# XVFB_PID / OPENBOX_PID / XCOMPMGR_PID.
#   start_desktop NAME [WxH]   (default 1920x1080; NAME prefixes the messages and the log dir)
#   start_driver PORT          (WebKitWebDriver on PORT+1; sets TAURI_DRIVER_URL)
export DISPLAY=":${DISPLAY_NUM:?DISPLAY_NUM must be set}"
PIDS=()
desktop_cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done; }
trap desktop_cleanup EXIT

start_desktop() {
  local name=$1 size=${2:-1920x1080}
  LOG_DIR="$(mktemp -d -t "yui-$name-XXXXXX")"
  Xvfb "$DISPLAY" -screen 0 "${size}x24" -nolisten tcp >"$LOG_DIR/xvfb.log" 2>&1 &
  XVFB_PID=$!
  PIDS+=("$XVFB_PID")
  for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X${DISPLAY_NUM}" ] && break; sleep 0.1; done
  sleep 0.3
  if ! kill -0 "$XVFB_PID" 2>/dev/null; then
    echo "$name: Xvfb did not start on $DISPLAY (try DISPLAY_NUM=<free number>)" >&2
    cat "$LOG_DIR/xvfb.log" >&2
    exit 1
  fi
  openbox >"$LOG_DIR/openbox.log" 2>&1 &
  OPENBOX_PID=$!
  PIDS+=("$OPENBOX_PID")
  sleep 1
  xcompmgr >"$LOG_DIR/xcompmgr.log" 2>&1 &
  XCOMPMGR_PID=$!
  PIDS+=("$XCOMPMGR_PID")
}

start_driver() {
  local port=$1 driver
  driver="${TAURI_DRIVER:-$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")}"
  export TAURI_DRIVER_URL="http://127.0.0.1:${port}"
  NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none "$driver" --port "$port" --native-port "$((port + 1))" \
    >"$LOG_DIR/tauri-driver.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
}
