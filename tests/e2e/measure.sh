#!/usr/bin/env bash
# Idle memory of YUI vs a bare Tauri app showing the same windows (main 220x300 + one pet),
# under Xvfb: PSS summed over the app process and all its descendants (WebKit web and network
# processes included), read from /proc/<pid>/smaps_rollup after the app has idled.
#
# Usage: tests/e2e/measure.sh [idle-seconds]   (default 20). Prints one line per run, in MiB:
#   bare-tauri  the baseline (two windows, each in its own WebKit web process: WebKitGTK's default)
#   yui         main + one pet (the pet is a related view of main: one shared web process)
#   yui-main    main alone (kai closed), so yui - yui-main is the cost of one extra character
#   yui-card    main + a character imported from a card with its expression pack (kai closed)
set -euo pipefail
cd "$(dirname "$0")/../.."
IDLE="${1:-20}"
DISPLAY_NUM="${DISPLAY_NUM:-98}"
export DISPLAY=":${DISPLAY_NUM}"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

cargo build -p yui-app --bin yui-app --example bare-tauri >/dev/null
cargo build -p yui-cli --bin yui >/dev/null

Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & PIDS+=($!)
sleep 1
openbox >/dev/null 2>&1 & PIDS+=($!)
xcompmgr >/dev/null 2>&1 & PIDS+=($!)

descendants() { local p=$1; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do descendants "$c"; done; }
pss_kib() { local sum=0; for p in $(descendants "$1"); do
    v=$(awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null || echo 0); sum=$((sum + ${v:-0})); done; echo "$sum"; }
detail() { for p in $(descendants "$1"); do
    printf '    %-28s %6d KiB\n' "$(cat /proc/"$p"/comm)" "$(awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null || echo 0)"; done; }
cpu_ticks() { local sum=0; for p in $(descendants "$1"); do
    v=$(awk '{print $14+$15}' /proc/"$p"/stat 2>/dev/null || echo 0); sum=$((sum + ${v:-0})); done; echo "$sum"; }

measure() { # name, setup (a shell snippet run with $data set, or ""), command...
  local name=$1 setup=$2; shift 2
  local data; data=$(mktemp -d)
  [ -n "$setup" ] && eval "$setup"
  YUI_DATA_DIR="$data" "$@" >/dev/null 2>&1 & local pid=$!
  sleep "$IDLE"
  local t0; t0=$(cpu_ticks "$pid"); sleep 10; local t1; t1=$(cpu_ticks "$pid")
  local kib; kib=$(pss_kib "$pid")
  local hz; hz=$(getconf CLK_TCK)
  printf '%-12s PSS %6.1f MiB  processes %d  idle CPU %5.1f%% (10 s)\n' "$name" "$(echo "$kib/1024" | bc -l)" \
    "$(descendants "$pid" | wc -l)" "$(echo "($t1-$t0)*100/$hz/10" | bc -l)"
  detail "$pid"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}

# PSS splits shared pages among every process mapping them, so figures move with whatever else
# runs; RUNS=n repeats the three runs (interleaved) to see the spread.
for _ in $(seq 1 "${RUNS:-1}"); do
  measure "bare-tauri" "" target/debug/examples/bare-tauri
  measure "yui" "" target/debug/yui-app
  measure "yui-main" 'target/debug/yui --data-dir "$data" preset close kai >/dev/null' target/debug/yui-app
  # main + a character imported from a large PNG card with a full 28-image SillyTavern pack
  # beside it (make_card.py): yui-card - yui-main is what such a character costs.
  measure "yui-card" 'target/debug/yui --data-dir "$data" preset close kai >/dev/null
    python3 tests/e2e/make_card.py "$data/cards"
    target/debug/yui --data-dir "$data" preset import "$data/cards/Seraphina.png" --open >/dev/null' target/debug/yui-app
done
