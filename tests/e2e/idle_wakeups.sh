#!/usr/bin/env bash
# Wake-ups of the idle app (issue 46): main + 2 pets on a fresh data dir, microphone off, every
# character window hidden (iconified), then asleep (the user idle past `yui.sleep`). Counts each
# thread's voluntary context switches (each is the thread going to sleep after it woke) over
# WAKE_SECS per state, and FAILS (exit 1) when a thread of the app's own process woke more often
# than about once a second (more than WAKE_SECS * 1.2 times). Wake-ups, not CPU time: a loaded
# machine makes a wake-up cost more, not happen more often, so load cannot flake it. The WebKit
# processes' threads are printed too, not judged (their timers are WebKit's own).
#
# Starts Xvfb 1920x1080 + openbox + xcompmgr like idle_cpu.sh. Env: DISPLAY_NUM (default 62),
# WAKE_SECS (30), SETTLE_SECS (20), YUI_APP_BIN (default: the debug build, built here),
# STATES (default "hidden asleep"; "awake" is printed, not judged: the ambient motions paint),
# PROACTIVE (on | off: every character's proactive switch, docs/proactive.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-62}"
. tests/e2e/desktop.sh
WAKE_SECS="${WAKE_SECS:-30}"
SETTLE_SECS="${SETTLE_SECS:-20}"
STATES="${STATES:-hidden asleep}"

if [ -z "${YUI_APP_BIN:-}" ]; then
  cargo build -p yui-app --bin yui-app
  YUI_APP_BIN="$PWD/target/debug/yui-app"
fi
cargo build -p yui-cli --bin yui >/dev/null 2>&1
YUI_CLI="$PWD/target/debug/yui"
cargo build -p yui-x11 --example iconify >/dev/null 2>&1
ICONIFY="$PWD/target/debug/examples/iconify"

start_desktop idle-wakeups

descendants() { local p=$1; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do descendants "$c"; done; }
# "pid/tid process thread switches" for every thread of the app's tree.
switches() {
  local p t
  for p in $(descendants "$1"); do
    for t in /proc/"$p"/task/*; do
      printf '%s %s %s %s\n' "$p/${t##*/}" "$(tr ' ' '_' <"/proc/$p/comm" 2>/dev/null || echo '?')" \
        "$(tr ' ' '_' <"$t/comm" 2>/dev/null || echo '?')" \
        "$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status" 2>/dev/null || echo 0)"
    done
  done
}
FAILED=0
# One state: wake-ups per thread over WAKE_SECS, the busiest first; judged when $2 is "judge".
count() {
  local name=$1 judge=$2 before after
  before=$(switches "$APP")
  sleep "$WAKE_SECS"
  after=$(switches "$APP")
  echo "== $name: wake-ups in $WAKE_SECS s, per thread (app pid $APP)"
  local out
  out=$(awk -v secs="$WAKE_SECS" -v app="$APP" -v judge="$judge" '
    NR == FNR { b[$1] = $4; next }
    { d = $4 - ($1 in b ? b[$1] : 0); split($1, id, "/")
      if (d > 0) printf "  %6d  %5.2f/s  %-16s %-24s %s\n", d, d / secs, $2, $3, $1
      if (judge == "judge" && id[1] == app && d > secs * 1.2) bad = 1 }
    END { exit bad }' <(echo "$before") <(echo "$after")) || { FAILED=1; echo "$out" | sort -rn; echo "   FAIL: a thread of the app woke more than about once a second"; return; }
  echo "$out" | sort -rn
}

data=$(mktemp -d -t yui-wake-data-XXXXXX)
"$YUI_CLI" --data-dir "$data" preset add Mio --open >/dev/null
"$YUI_CLI" --data-dir "$data" settings set yui.sleep '{"after_minutes":0}' >/dev/null
# PROACTIVE=off: no character speaks up on its own (docs/proactive.md), to compare the idle cost.
if [ "${PROACTIVE:-on}" = off ]; then
  "$YUI_CLI" --data-dir "$data" settings set yui.proactive.characters '{"yui":false,"kai":false,"mio":false}' >/dev/null
fi
env NO_AT_BRIDGE=1 YUI_DISCOVER_PORTS=none YUI_DATA_DIR="$data" "$YUI_APP_BIN" >"$LOG_DIR/app.log" 2>&1 &
APP=$!
PIDS+=("$APP")
sleep "$SETTLE_SECS"
echo "idle_wakeups: $(descendants "$APP" | wc -l) processes; app $YUI_APP_BIN"
for s in $STATES; do
  case $s in
    awake) count "awake (ambient motions on; not judged)" no ;;
    hidden)
      echo "idle_wakeups: hid $("$ICONIFY" "$APP") windows"
      sleep 5
      count "hidden (every character window unmapped)" judge
      echo "idle_wakeups: showed $("$ICONIFY" "$APP" --restore) windows again"
      sleep 5 ;;
    asleep)
      "$YUI_CLI" --data-dir "$data" settings set yui.sleep '{"after_minutes":1}' >/dev/null
      for _ in $(seq 1 70); do grep -q "the user is away" "$data"/logs/* 2>/dev/null && break; sleep 1; done
      grep -q "the user is away" "$data"/logs/* 2>/dev/null || echo "idle_wakeups: the characters did not fall asleep" >&2
      sleep 5
      count "asleep (no input for over a minute)" judge ;;
  esac
done
echo "logs: $LOG_DIR"
rm -rf "$data"
exit "$FAILED"
