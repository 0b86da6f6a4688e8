#!/usr/bin/env bash
# CPU of the whole release app (yui-app and its WebKit processes) around the avatar, for
# docs/PERFORMANCE.md ("Avatar"): idle with the character standing (60 s), sitting still on
# another app's window (60 s), and while that window is dragged (10 s, a move every 16 ms), per
# process and in total, as % of one core. The X server, window manager and compositor are shown
# in brackets for context (they are not the app).
#
# Starts Xvfb 1920x1080 + openbox + xcompmgr + tauri-driver, builds the release app and the
# measuring program (crates/yui-x11/benches/app_drag.rs), and runs it RUNS times (a fresh app and data dir
# each). The character gets on the window through a scripted model backend calling
# `body_action sit_on_window`; the run fails if it did not end on the dragged window's top edge.
#
# Usage: tests/e2e/drag_cpu.sh    Env: DISPLAY_NUM (default 96), DRIVER_PORT (default 4496),
# RUNS (default 1), YUI_DRAG_IDLE_SECS (60), YUI_DRAG_SECS (10), YUI_DRAG_SETTLE_SECS (20),
# YUI_APP_BIN (another build of the app to measure, e.g. a copy of an earlier release binary).
# Takes about 3 minutes a run after the build. Not part of CI: a script you run and report.
set -euo pipefail
cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-96}"
DRIVER_PORT="${DRIVER_PORT:-4496}"
. tests/e2e/desktop.sh

# A release build needs room: keep 10 GB free on the disk.
free_kib=$(df -Pk . | awk 'NR == 2 {print $4}')
if [ "$free_kib" -lt $((10 * 1024 * 1024)) ]; then
  echo "drag_cpu: less than 10 GB free here ($((free_kib / 1024 / 1024)) GB): not building" >&2
  exit 1
fi
echo "drag_cpu: building the release app and the measuring program"
cargo build --release -p yui-app --bin yui-app
# With the app selected too, its dependencies keep the release build's features (fewer rebuilds).
cargo bench -p yui-app -p yui-x11 --bench app_drag --no-run
BENCH=$(cargo bench -p yui-app -p yui-x11 --bench app_drag --no-run 2>&1 | sed -n 's/.*Executable .* (\(.*\))$/\1/p')
[ -x "$BENCH" ] || { echo "drag_cpu: the measuring program was not built" >&2; exit 1; }

start_desktop drag-cpu
export NO_AT_BRIDGE=1
export YUI_DISCOVER_PORTS=none
start_driver "$DRIVER_PORT"

export YUI_APP_BIN="${YUI_APP_BIN:-$PWD/target/release/yui-app}"
export YUI_DRAG_CONTEXT="Xvfb=$XVFB_PID openbox=$OPENBOX_PID xcompmgr=$XCOMPMGR_PID"
for run in $(seq 1 "${RUNS:-1}"); do
  echo "drag_cpu: run $run at $(date -u +%H:%M:%S) UTC; load before:$(uptime | sed 's/.*load average://')"
  "$BENCH"
  echo "drag_cpu: load after:$(uptime | sed 's/.*load average://')"
done
