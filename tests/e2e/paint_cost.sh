#!/usr/bin/env bash
# What one paint of a character window costs (docs/PERFORMANCE.md, "Idle CPU"): the release app
# with main + 2 pets, every character asleep (so nothing else paints), then tests/e2e/paint_cost.py
# changes the main window 200 times at 10 Hz from inside the page (the blink frame, the eyes'
# inline transform, a `will-change` layer's transform and opacity, a 1-pixel div's colour) and
# prints the CPU per change of each process over a quiet window. Needs tauri-driver and python3.
# Usage: tests/e2e/paint_cost.sh [app binary] (default target/release/yui-app, built first).
# Env: DISPLAY_NUM (65), DRIVER_PORT (4465), N, RATE.
# Not part of CI: a script you run and report.
set -euo pipefail
cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-65}"
DRIVER_PORT="${DRIVER_PORT:-4465}"
. tests/e2e/desktop.sh
APP="${1:-}"
if [ -z "$APP" ]; then
  cargo build --release -p yui-app --bin yui-app
  APP="$PWD/target/release/yui-app"
fi
cargo build -p yui-cli --bin yui >/dev/null 2>&1
YUI_CLI="$PWD/target/debug/yui"
start_desktop paint-cost
start_driver "$DRIVER_PORT"
data=$(mktemp -d -t yui-paint-XXXXXX)
"$YUI_CLI" --data-dir "$data" preset add Mio --open >/dev/null
"$YUI_CLI" --data-dir "$data" settings set yui.sleep '{"after_minutes":1}' >/dev/null
"$YUI_CLI" --data-dir "$data" settings set yui.first_run '{"done":true}' >/dev/null
# The display has to be idle past the minute by the time the app has settled (20 s in the probe).
sleep 45
DRIVER="$TAURI_DRIVER_URL" python3 tests/e2e/paint_cost.py "$APP" "$data"
rm -rf "$data"
