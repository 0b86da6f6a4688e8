#!/usr/bin/env bash
# How long the app takes to start: from launching `yui-app` to both characters' windows ("YUI —
# Yui" and "YUI — Kai") mapped on an Xvfb display, RUNS times, with the config folder CONFIG
# (for example one whose mcp.json names three MCP servers) and with an empty one, alternating, so
# both see the same machine. Prints each run and the median of each. A figure for
# docs/PERFORMANCE.md, not a CI step.
#
# Usage: scripts/start-time.sh [RUNS] [CONFIG_DIR]   (default 5; no CONFIG_DIR: empty only)
# Env: YUI_APP_BIN (default target/debug/yui-app), DISPLAY_NUM (default 97).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"
CONFIG="${2:-}"
APP="${YUI_APP_BIN:-$PWD/target/debug/yui-app}"
export DISPLAY=":${DISPLAY_NUM:-97}"
[ -x "$APP" ] || { echo "start-time: no app at $APP (cargo build -p yui-app)" >&2; exit 1; }
work="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
openbox >/dev/null 2>&1 &
PIDS+=($!)
mkdir -p "$work/empty"
export NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none

both_mapped() {
  local tree
  tree="$(xwininfo -root -tree 2>/dev/null)"
  grep -q '"YUI — Yui"' <<<"$tree" && grep -q '"YUI — Kai"' <<<"$tree"
}

# One launch with config folder $1 (its data dir $2): milliseconds until both windows.
one() {
  local start now app
  start=$(date +%s%N)
  YUI_CONFIG_DIR="$1" YUI_DATA_DIR="$2" "$APP" >"$work/app.log" 2>&1 &
  app=$!
  while ! both_mapped; do
    if ! kill -0 "$app" 2>/dev/null; then echo "start-time: the app exited (see $work/app.log)" >&2; return 1; fi
    now=$(date +%s%N)
    if [ $(((now - start) / 1000000)) -gt 60000 ]; then echo "start-time: no windows in 60 s" >&2; return 1; fi
    sleep 0.02
  done
  now=$(date +%s%N)
  echo $(((now - start) / 1000000))
  # Let the servers (if any) start as they would, then stop the app and its children.
  sleep 2
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
  while both_mapped; do sleep 0.05; done
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

# A first launch makes each data dir (first run), kept out of the figures.
one "$work/empty" "$work/data-empty" >/dev/null
[ -n "$CONFIG" ] && one "$CONFIG" "$work/data-config" >/dev/null
: >"$work/empty.ms"
: >"$work/config.ms"
for i in $(seq 1 "$RUNS"); do
  e=$(one "$work/empty" "$work/data-empty")
  echo "run $i: no config ${e} ms"
  echo "$e" >>"$work/empty.ms"
  if [ -n "$CONFIG" ]; then
    c=$(one "$CONFIG" "$work/data-config")
    echo "run $i: $CONFIG ${c} ms"
    echo "$c" >>"$work/config.ms"
  fi
done
echo "start-time: median, no config: $(median <"$work/empty.ms") ms; load:$(uptime | sed 's/.*load average://')"
[ -n "$CONFIG" ] && echo "start-time: median, $CONFIG: $(median <"$work/config.ms") ms"
exit 0
