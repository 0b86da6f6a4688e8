#!/usr/bin/env bash
# Idle CPU of the whole release app (docs/PERFORMANCE.md, "Idle CPU"): main + 2 pets on a fresh
# data dir, standing idle with their ambient motions, as % of one core over a window of
# IDLE_SECS, per process and per thread (so it says where the cycles go), then the same with
# every character window hidden (iconified, as the tray's Show/Hide all unmaps them) and asleep
# (the user idle past `yui.sleep`).
#
# Starts Xvfb 1920x1080 + openbox + xcompmgr (the transparency path users have), builds the
# release app, and prints one table per state. Env: DISPLAY_NUM (default 60), IDLE_SECS (60),
# SETTLE_SECS (20), YUI_APP_BIN (another build to measure), STATES (default "awake hidden
# asleep", in that order), and anything the app reads (e.g. WEBKIT_DISABLE_COMPOSITING_MODE
# to compare WebKit's modes), IDLE_VRM=1.0|0.x (the main character a VRM model),
# IDLE_LISTEN=hands_free|push_to_talk (the microphone in that mode,
# on a PulseAudio null sink of the run's own whose monitor is the default source: a silent
# microphone, so the characters idle while voice activity listens),
# IDLE_SESSION=x11|sway|weston (default x11): sway is a headless wlroots session (the characters on
# the overlay layer), weston a headless one with Xwayland (the characters through XWayland), from
# tests/e2e/wayland_session.sh; there only the awake state is measured (hiding uses X11's iconify,
# and Wayland sessions give YUI no idle time to fall asleep on), IDLE_CLICK_THROUGH=off (the
# windows take clicks everywhere, to compare: docs/avatar.md, "Click-through"; each state also
# counts the input regions the windows set while it was measured), IDLE_PROACTIVE=off (every
# character's proactive switch and every trigger off; default: the defaults, proactive on) and
# IDLE_AWARE=on (both awareness switches on). Not part of CI: a script you run and report.
set -euo pipefail
cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-60}"
. tests/e2e/desktop.sh
. tests/e2e/pulse.sh
IDLE_SECS="${IDLE_SECS:-60}"
SETTLE_SECS="${SETTLE_SECS:-20}"
STATES="${STATES:-awake hidden asleep}"
HZ=$(getconf CLK_TCK)

if [ -z "${YUI_APP_BIN:-}" ]; then
  cargo build --release -p yui-app --bin yui-app
  YUI_APP_BIN="$PWD/target/release/yui-app"
fi
cargo build -p yui-cli --bin yui >/dev/null 2>&1
YUI_CLI="$PWD/target/debug/yui"
cargo build -p yui-x11 --example iconify >/dev/null 2>&1
ICONIFY="$PWD/target/debug/examples/iconify"

IDLE_SESSION="${IDLE_SESSION:-x11}"
SESSION_ENV=()
case $IDLE_SESSION in
  x11) start_desktop idle-cpu ;;
  sway | weston)
    LOG_DIR="$(mktemp -d -t "yui-idle-cpu-XXXXXX")"
    chmod 755 "$LOG_DIR"
    WL_WORK=$LOG_DIR
    . tests/e2e/wayland_session.sh
    trap 'wl_cleanup; desktop_cleanup' EXIT
    STATES=awake
    if [ "$IDLE_SESSION" = sway ]; then start_sway; SESSION_ENV=(-u DISPLAY "${SWAY_ENV[@]}")
    else start_weston; SESSION_ENV=("${WESTON_ENV[@]}"); fi ;;
  *) echo "idle_cpu: IDLE_SESSION is x11, sway or weston" >&2; exit 2 ;;
esac

descendants() { local p=$1; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do descendants "$c"; done; }
# "pid/tid comm ticks" for every thread of the app's tree.
thread_ticks() {
  local p t
  for p in $(descendants "$1"); do
    for t in /proc/"$p"/task/*; do
      awk -v id="$p/${t##*/}" -v pc="$(cat /proc/"$p"/comm 2>/dev/null)" \
        '{ sub(/^[^)]*\) /, ""); print id, pc, $12 + $13 }' "$t"/stat 2>/dev/null |
        sed "s/^/$(tr ' ' '_' <"$t"/comm 2>/dev/null || echo '?') /" || true
    done
  done
}
# One state: ticks over IDLE_SECS per thread, summed per process, printed as % of one core.
measure() {
  local name=$1 pid=$2 before after r0
  r0=$(regions)
  before=$(thread_ticks "$pid")
  sleep "$IDLE_SECS"
  after=$(thread_ticks "$pid")
  echo "== $name: $IDLE_SECS s, load$(uptime | sed 's/.*load average://'); input regions set: $(($(regions) - r0)) (click-through ${IDLE_CLICK_THROUGH:-on}; $(regions) since start)"
  # join on pid/tid: threads born during the window count from 0.
  awk -v hz="$HZ" -v secs="$IDLE_SECS" '
    NR == FNR { b[$2] = $4; next }
    { d = $4 - ($2 in b ? b[$2] : 0); split($2, id, "/"); proc[$3 " " id[1]] += d; total += d
      if (d > 0) thr[$3 " " id[1] " " $1] += d }
    END {
      for (p in proc) printf "  %-32s %6.2f %%\n", p, proc[p] * 100 / hz / secs
      printf "  %-32s %6.2f %%\n", "total", total * 100 / hz / secs
      for (t in thr) printf "    thread %-40s %6.2f %%\n", t, thr[t] * 100 / hz / secs
    }' <(echo "$before") <(echo "$after") | sort -k1,1 -s
}

data=$(mktemp -d -t yui-idle-data-XXXXXX)
"$YUI_CLI" --data-dir "$data" preset add Mio --open >/dev/null
# IDLE_VRM=1.0|0.x: the main character wears a generated VRM model (docs/vrm.md), the pets stay
# drawn.
if [ -n "${IDLE_VRM:-}" ]; then
  cargo run -q -p yui-testkit --example vrm_fixture -- "$data/fixture.vrm" "$IDLE_VRM" >/dev/null
  "$YUI_CLI" --data-dir "$data" look set --preset yui --vrm "$data/fixture.vrm" >/dev/null
fi
if [ "${IDLE_CLICK_THROUGH:-on}" = off ]; then
  "$YUI_CLI" --data-dir "$data" settings set yui.click_through '{"enabled":false}' >/dev/null
fi
# Awake first: no sleep while the awake figure is measured (nobody touches this display).
"$YUI_CLI" --data-dir "$data" settings set yui.sleep '{"after_minutes":0}' >/dev/null
if [ "${IDLE_PROACTIVE:-}" = off ]; then
  "$YUI_CLI" --data-dir "$data" settings set yui.proactive.characters '{"yui":false,"kai":false,"mio":false}' >/dev/null
  "$YUI_CLI" --data-dir "$data" settings set yui.proactive.triggers '{"back":false,"morning":false,"night":false,"perch":false,"events":false}' >/dev/null
fi
if [ "${IDLE_AWARE:-}" = on ]; then
  "$YUI_CLI" --data-dir "$data" settings set yui.awareness.active_app '{"enabled":true}' >/dev/null
  "$YUI_CLI" --data-dir "$data" settings set yui.awareness.now_playing '{"enabled":true}' >/dev/null
fi
PULSE_ENV=()
if [ -n "${IDLE_LISTEN:-}" ]; then
  start_pulse "$LOG_DIR"
  [ ${#PULSE_ENV[@]} -gt 0 ] || { echo "idle_cpu: PulseAudio did not start (log: $LOG_DIR/pulse.log)" >&2; exit 1; }
  "$YUI_CLI" --data-dir "$data" settings set yui.voice.listen "{\"mode\":\"$IDLE_LISTEN\"}" >/dev/null
fi
# The input regions' log lines (debug), counted per state.
regions() { cat "$data"/logs/* 2>/dev/null | grep -c "input region" || true; }
env "${SESSION_ENV[@]}" "${PULSE_ENV[@]}" YUI_LOG="${YUI_LOG:-info,yui_app::windows::input_region=debug}" NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none YUI_DATA_DIR="$data" "$YUI_APP_BIN" >"$LOG_DIR/app.log" 2>&1 &
APP=$!
PIDS+=("$APP")
sleep "$SETTLE_SECS"
echo "idle_cpu: $(descendants "$APP" | wc -l) processes; session $IDLE_SESSION ($(grep -ho 'display backend: [^=]*backend="[a-z-]*"' "$data"/logs/* 2>/dev/null | head -1)); app $YUI_APP_BIN; WEBKIT_DISABLE_COMPOSITING_MODE=${WEBKIT_DISABLE_COMPOSITING_MODE:-unset}; microphone ${IDLE_LISTEN:-off}; proactive ${IDLE_PROACTIVE:-on}; awareness ${IDLE_AWARE:-off}"
for s in $STATES; do
  case $s in
    awake) measure "awake (ambient motions on)" "$APP" ;;
    hidden)
      # Every character window iconified (unmapped, as Show/Hide all does), then shown again.
      echo "idle_cpu: hid $("$ICONIFY" "$APP") windows"
      sleep 5
      measure "hidden (every character window unmapped)" "$APP"
      echo "idle_cpu: showed $("$ICONIFY" "$APP" --restore) windows again"
      sleep 5 ;;
    asleep)
      # Nobody has touched this display since it started, so with the shortest threshold (one
      # minute) the characters fall asleep at the app's next check (within a minute).
      "$YUI_CLI" --data-dir "$data" settings set yui.sleep '{"after_minutes":1}' >/dev/null
      for _ in $(seq 1 70); do grep -q "the user is away" "$data"/logs/* 2>/dev/null && break; sleep 1; done
      grep -q "the user is away" "$data"/logs/* 2>/dev/null || echo "idle_cpu: the characters did not fall asleep" >&2
      sleep 5
      measure "asleep (no input for over a minute)" "$APP" ;;
  esac
done
echo "logs: $LOG_DIR"
rm -rf "$data"
