#!/usr/bin/env bash
# What one paint of a character window costs (docs/PERFORMANCE.md, "Idle CPU"): the release app
# with main + 2 pets, every character asleep (so nothing else paints), then tests/e2e/paint_cost.py
# changes the main window 200 times at 10 Hz from inside the page (the blink frame, the eyes'
# inline transform, a 1-pixel div's colour) and prints the CPU per change of each process over a
# quiet window. Needs tauri-driver and python3. Usage: tests/e2e/paint_cost.sh [app binary]
# (default target/release/yui-app, built first). Env: DISPLAY_NUM (65), DRIVER_PORT (4465), N, RATE.
# Not part of CI: a script you run and report.
set -euo pipefail
cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-65}"
DRIVER_PORT="${DRIVER_PORT:-4465}"
export DISPLAY=":${DISPLAY_NUM}"
APP="${1:-}"
if [ -z "$APP" ]; then
  cargo build --release -p yui-app --bin yui-app
  APP="$PWD/target/release/yui-app"
fi
cargo build -p yui-cli --bin yui >/dev/null 2>&1
YUI_CLI="$PWD/target/debug/yui"
TAURI_DRIVER="${TAURI_DRIVER:-$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")}"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
Xvfb "$DISPLAY" -screen 0 1920x1080x24 -nolisten tcp >/dev/null 2>&1 & PIDS+=($!)
sleep 1
openbox >/dev/null 2>&1 & PIDS+=($!)
sleep 1
xcompmgr >/dev/null 2>&1 & PIDS+=($!)
NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none "$TAURI_DRIVER" --port "$DRIVER_PORT" --native-port "$((DRIVER_PORT + 1))" >/dev/null 2>&1 & PIDS+=($!)
data=$(mktemp -d -t yui-paint-XXXXXX)
"$YUI_CLI" --data-dir "$data" preset add Mio --open >/dev/null
"$YUI_CLI" --data-dir "$data" settings set yui.sleep '{"after_minutes":1}' >/dev/null
"$YUI_CLI" --data-dir "$data" settings set yui.first_run '{"done":true}' >/dev/null
# The display has to be idle past the minute by the time the app has settled (20 s in the probe).
sleep 45
DRIVER="http://127.0.0.1:${DRIVER_PORT}" python3 tests/e2e/paint_cost.py "$APP" "$data"
rm -rf "$data"
