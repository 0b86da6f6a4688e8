#!/usr/bin/env bash
# Figures of a VRM character (docs/PERFORMANCE.md, "VRM characters"), under Xvfb with openbox
# and xcompmgr (Mesa's software GL): the main character drawn, and the pet (kai) either drawn
# or wearing a ~10 MB VRM model (tests/e2e/make_big_vrm.py: the VRM specification's sample with
# its three textures replaced by 934 px noise PNGs, kept as they are by import). Per run:
#   open → drawn   from kai's window being mapped to the first screen capture of it that shows
#                  the character (over 3 % of the pixels where it stands differ from the
#                  capture made when the window was mapped), polled with ImageMagick's `import`
#                  and `compare` (each poll ~100-200 ms under load: the resolution)
#   PSS            summed over the app and its descendants (WebKit's processes) after IDLE s
# and the VRM pet's cost over the drawn one. Prints figures; judges nothing.
#
# Usage: tests/e2e/vrm_figures.sh [runs=3] [idle-seconds=20]
# Env: YUI_APP_BIN (default target/debug/yui-app), YUI_BIN (target/debug/yui), DISPLAY_NUM (97),
#      SIZE_MB (10).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-3}"
IDLE="${2:-20}"
APP="${YUI_APP_BIN:-target/debug/yui-app}"
CLI="${YUI_BIN:-target/debug/yui}"
export DISPLAY=":${DISPLAY_NUM:-97}"
PIDS=()
WORK="$(mktemp -d -t yui-vrm-figures-XXXXXX)"
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
for f in "$APP" "$CLI"; do [ -x "$f" ] || { echo "vrm_figures: $f is not built" >&2; exit 1; }; done
[ -f ui/vendor/vrm.js ] || { echo "vrm_figures: ui/vendor/vrm.js is missing (scripts/vendor-ui.sh)" >&2; exit 1; }

MODEL="$WORK/big.vrm"
python3 tests/e2e/make_big_vrm.py crates/yui-core/tests/fixtures/vrm/expressions_isBinary_Overrides.vrm "$MODEL" "${SIZE_MB:-10}"

Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & PIDS+=($!)
for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X${DISPLAY#:}" ] && break; sleep 0.1; done
openbox >/dev/null 2>&1 & PIDS+=($!)
xcompmgr >/dev/null 2>&1 & PIDS+=($!)
sleep 1

descendants() { local p=$1; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do descendants "$c"; done; }
pss_kib() { local sum=0 v; for p in $(descendants "$1"); do
    v=$(awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null || echo 0); sum=$((sum + ${v:-0})); done; echo "$sum"; }
now_ms() { date +%s%3N; }

# One run: KIND is drawn or vrm. Prints "KIND open→drawn MS PSS MIB".
run() {
  local kind=$1 data="$WORK/data-$1-$RANDOM"
  mkdir -p "$data"
  if [ "$kind" = vrm ]; then
    "$CLI" --data-dir "$data" look set --preset kai --vrm "$MODEL" >/dev/null
  else
    "$CLI" --data-dir "$data" preset list >/dev/null
  fi
  YUI_DATA_DIR="$data" "$APP" >"$WORK/app-$kind.log" 2>&1 & local pid=$!
  local t0 win="" geo="" opened="" drawn="" deadline
  deadline=$(( $(now_ms) + 60000 ))
  # kai's window, once mapped.
  while [ -z "$opened" ] && [ "$(now_ms)" -lt "$deadline" ]; do
    # (awk reads to the end: an early exit would fail the pipe under pipefail)
    win=$(xwininfo -root -tree 2>/dev/null | awk '/"YUI — Kai"/ && !w {w=$1} END {print w}') || true
    if [ -n "$win" ] && [ "$(xwininfo -id "$win" 2>/dev/null | grep -c 'IsViewable' || true)" -gt 0 ]; then opened=$(now_ms); fi
    [ -n "$opened" ] || sleep 0.02
  done
  [ -n "$opened" ] || { echo "vrm_figures: kai's window never opened ($kind)" >&2; kill "$pid"; return 1; }
  geo=$(xwininfo -id "$win" | awk '/Absolute upper-left X/ {x=$4} /Absolute upper-left Y/ {y=$4} /Width:/ {w=$2} /Height:/ {h=$2} END {print w"x"h"+"x"+"y}')
  # Where the character is drawn: the lower 60 % of the window (the bubble is above), 150 px
  # from its left (the main window may be beside it on the right).
  local crop
  crop=$(xwininfo -id "$win" | awk '/Absolute upper-left X/ {x=$4} /Absolute upper-left Y/ {y=$4} /Height:/ {h=$2} END {printf "150x%d+%d+%d", h*0.6, x+10, y+h*0.4}')
  local ref="" px ch="${crop#150x}"
  ch="${ch%%+*}"
  while [ -z "$drawn" ] && [ "$(now_ms)" -lt "$deadline" ]; do
    import -silent -window root -crop "$crop" +repage "$WORK/shot.png" 2>/dev/null || continue
    # The first capture (the window just mapped, nothing painted yet) is the reference; drawn:
    # over 3 % of the pixels differ from it (the sample model is grey on the grey desktop).
    if [ -z "$ref" ]; then ref="$WORK/ref.png"; cp "$WORK/shot.png" "$ref"; continue; fi
    px=$(compare -metric AE -fuzz 3% "$ref" "$WORK/shot.png" null: 2>&1 | awk '{print int($1)}') || true
    if [ "${px:-0}" -gt $(( 150 * ch * 3 / 100 )) ] 2>/dev/null; then drawn=$(now_ms); fi
  done
  sleep "$IDLE"
  local kib; kib=$(pss_kib "$pid")
  printf '%-6s window %-12s open → drawn %5s ms   PSS %6.1f MiB\n' "$kind" "$geo" "$(( ${drawn:-0} - opened ))" "$(echo "$kib/1024" | bc -l)"
  echo "$kind $(( ${drawn:-0} - opened )) $kib" >>"$WORK/results"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

for _ in $(seq 1 "$RUNS"); do run drawn; run vrm; done
awk '{n[$1]++; ms[$1]+=$2; kib[$1]+=$3} END {
  for (k in n) printf "mean %-6s open → drawn %5.0f ms   PSS %6.1f MiB   (%d runs)\n", k, ms[k]/n[k], kib[k]/n[k]/1024, n[k];
  if (n["vrm"] && n["drawn"]) printf "the VRM pet costs %.1f MiB more than the drawn one\n", (kib["vrm"]/n["vrm"] - kib["drawn"]/n["drawn"])/1024 }' "$WORK/results"
