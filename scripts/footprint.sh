#!/usr/bin/env bash
# The memory soak of the whole app (issue 14, "Memory flat"; docs/PERFORMANCE.md, "Memory soak"):
# the app with main + 2 pets (Yui, Kai and Mio) on a fresh data dir; PSS / RSS of every process of
# its tree (yui-app, WebKitWebProcess, WebKitNetworkProcess) and idle CPU over a 60 s window at
# start, after IDLE seconds idle and after TURNS scripted turns (typed into the three chat
# windows as a user types: XTest clicks and key presses on the display; the scripted backend
# answers with speech, a generate_express cue and a rate_relation call); the growth of the app's
# own memory (anon + shmem PSS) per phase against 5 MiB; then a second launch
# with Mio closed for the third character's cost (against 40 MiB). Checks that every turn ended
# and that the store holds them all. Exits 1 when a check fails.
#
# Starts Xvfb 1920x1080 + openbox + xcompmgr + tauri-driver, builds the app (release unless
# --debug) and the measuring program (crates/yui-x11/benches/footprint.rs, over tests/e2e/soak.rs)
# and runs it. Not part of CI (CI runs the short e2e test tests/e2e/memory.rs): a script you run
# and report. The full run takes about 1 h 20 min.
#
# Usage: scripts/footprint.sh [--debug] [--short] [--idle SECS] [--turns N]
#   --debug   the debug build (app and measuring program)
#   --short   CI-like lengths: 120 s idle, 100 turns, 10 s CPU windows
# Env: DISPLAY_NUM (default 94), DRIVER_PORT (default 4494; WebKitWebDriver gets +1),
# YUI_SOAK_IDLE_SECS (3600), YUI_SOAK_TURNS (500), YUI_SOAK_WINDOW_SECS (60),
# YUI_SOAK_SETTLE_SECS (30), YUI_SOAK_EXTRA=0 (no second launch), YUI_SOAK_SMAPS=1 (the web
# process's growth by mapping), YUI_SOAK_EVERY_SAMPLE=1 (a line after every turn, per process),
# YUI_SOAK_INPUT=webdriver|page (send-keys, or a scripted submit, instead of key presses: for
# comparison), YUI_SOAK_LEAK_KIB=N (keep N KiB a turn alive in the page on purpose: the growth
# check must fail), YUI_APP_BIN (another build of the app, e.g. a copy of the binary a run
# measured: then the app is not built). Experiments: YUI_SOAK_SLEEP_MINUTES=N (`yui.sleep` after
# N minutes, 0 never; e.g. 1 with --idle 100 to see the turns after a sleep quickly),
# YUI_SOAK_PAUSE=EVERY:SECS (idle SECS s before every EVERY-th turn: does each wake cost?),
# YUI_SOAK_START_JS (a script run once in each page before the start checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=release
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) PROFILE=debug ;;
    --short) export YUI_SOAK_IDLE_SECS="${YUI_SOAK_IDLE_SECS:-120}" YUI_SOAK_TURNS="${YUI_SOAK_TURNS:-100}" \
               YUI_SOAK_WINDOW_SECS="${YUI_SOAK_WINDOW_SECS:-10}" ;;
    --idle) export YUI_SOAK_IDLE_SECS="$2"; shift ;;
    --turns) export YUI_SOAK_TURNS="$2"; shift ;;
    *) echo "footprint: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
  shift
done
DISPLAY_NUM="${DISPLAY_NUM:-94}"
DRIVER_PORT="${DRIVER_PORT:-4494}"
. tests/e2e/desktop.sh

if [ "$PROFILE" = release ]; then
  # A release build needs room: keep 10 GB free on the disk.
  free_kib=$(df -Pk . | awk 'NR == 2 {print $4}')
  if [ "$free_kib" -lt $((10 * 1024 * 1024)) ]; then
    echo "footprint: less than 10 GB free here ($((free_kib / 1024 / 1024)) GB): not building" >&2
    exit 1
  fi
  echo "footprint: building the release app and the measuring program"
  [ -n "${YUI_APP_BIN:-}" ] || cargo build --release -p yui-app --bin yui-app
  # With the app selected too, its dependencies keep the release build's features (fewer rebuilds).
  BUILD=(cargo bench -p yui-app -p yui-x11 --bench footprint --no-run)
else
  echo "footprint: building the debug app and the measuring program"
  [ -n "${YUI_APP_BIN:-}" ] || cargo build -p yui-app --bin yui-app
  BUILD=(cargo test -p yui-app -p yui-x11 --bench footprint --no-run)
fi
"${BUILD[@]}"
BENCH=$("${BUILD[@]}" 2>&1 | sed -n 's/.*Executable .* (\(.*\))$/\1/p')
[ -x "$BENCH" ] || { echo "footprint: the measuring program was not built" >&2; exit 1; }

start_desktop footprint
export NO_AT_BRIDGE=1
export YUI_DISCOVER_PORTS=none
start_driver "$DRIVER_PORT"

export YUI_APP_BIN="${YUI_APP_BIN:-$PWD/target/$PROFILE/yui-app}"
export YUI_SOAK_CONTEXT="Xvfb=$XVFB_PID openbox=$OPENBOX_PID xcompmgr=$XCOMPMGR_PID"
echo "footprint: start at $(date -u +%H:%M:%S) UTC; load:$(uptime | sed 's/.*load average://'); $(nproc) cores"
status=0
"$BENCH" || status=$?
echo "footprint: end at $(date -u +%H:%M:%S) UTC; load:$(uptime | sed 's/.*load average://')"
[ "$status" -eq 0 ] || { echo "footprint: FAILED; tauri-driver log:" >&2; tail -n 30 "$LOG_DIR/tauri-driver.log" >&2; }
exit "$status"
