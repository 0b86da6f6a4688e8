#!/usr/bin/env bash
# The README's first command on a fresh machine: a clean clone of a commit inside a freshly
# debootstrapped Debian 12 root (made as scripts/fresh-test.sh makes it: the machine's toolchains,
# nothing else), `scripts/dev.sh run` on an Xvfb display of the host, until the characters'
# windows are there; then a message is typed to Yui (a click on her, the text, Enter: xdotool)
# and the script waits for her answer in her history. She answers through
# whatever dev.sh set up: a model server, else the built-in engine with the catalog's model, else
# (no way to the download host) the package registry's small model.
# Not part of CI (it downloads a base system, the packages and the crates, and makes two release
# builds: about half an hour on 2 cores); run it and write the figures into docs/PERFORMANCE.md.
#   scripts/fresh-run.sh [REV]            (as root; REV defaults to HEAD)
# Env: DISPLAY_NUM (default 171) for the Xvfb; FRESH_ROOT (default /var/tmp/yui-fresh-run, made
# anew); FRESH_MIRROR; FRESH_KEEP=1 keeps the root; FRESH_NICE (default 0); FRESH_WAIT (default
# 5400: on 2 cores under load the two release builds took over an hour) seconds for the windows to come; FRESH_SHOT=path.png a screenshot after the answer.
# Logs: /tmp/fresh-run.log (dev.sh run and the app).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse --verify "${1:-HEAD}^{commit}")
ROOT=${FRESH_ROOT:-/var/tmp/yui-fresh-run}
DISPLAY_NUM=${DISPLAY_NUM:-171}
FRESH_NAME=fresh-run
for tool in Xvfb xwininfo xdotool python3; do
  command -v "$tool" >/dev/null || { echo "fresh-run: $tool is missing (apt-get install xvfb x11-utils xdotool python3)" >&2; exit 1; }
done
# shellcheck source=scripts/lib/fresh-root.sh
. scripts/lib/fresh-root.sh
trap fresh_cleanup EXIT
if [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ]; then echo "fresh-run: display :$DISPLAY_NUM is taken (set DISPLAY_NUM)" >&2; exit 1; fi
fresh_debootstrap
fresh_machine
# The host's X server socket: the app inside the root draws on the host's Xvfb.
bind /tmp/.X11-unix /tmp/.X11-unix
Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >/tmp/fresh-run-xvfb.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done

t0=$(now)
say "scripts/dev.sh run on :$DISPLAY_NUM (log: /tmp/fresh-run.log)"
in_machine DISPLAY=":$DISPLAY_NUM" nice -n "${FRESH_NICE:-0}" \
  bash -c 'cd /root/yui && exec bash scripts/dev.sh run' >/tmp/fresh-run.log 2>&1 &
run_pid=$!
PIDS+=("$run_pid")
windows() { xwininfo -display ":$DISPLAY_NUM" -root -tree 2>/dev/null | grep -c '"YUI — \(Yui\|Kai\)"' || true; }
deadline=$(($(now) + ${FRESH_WAIT:-5400}))
until [ "$(windows)" -ge 2 ]; do
  kill -0 "$run_pid" 2>/dev/null || { tail -40 /tmp/fresh-run.log >&2; fail "scripts/dev.sh run ended before the windows came"; }
  [ "$(now)" -lt "$deadline" ] || { tail -40 /tmp/fresh-run.log >&2; fail "no character window after ${FRESH_WAIT:-5400} s"; }
  sleep 5
done
t_windows=$(($(now) - t0))
say "the windows \"YUI — Yui\" and \"YUI — Kai\" after ${t_windows} s ($((t_windows / 60)) min $((t_windows % 60)) s)"
grep -E '^(==>|dev:).*(model|engine)|the built-in engine|no model server' /tmp/fresh-run.log | sed 's/^/fresh-run:   /' >&2 || true

# Yui is spoken to as a user would: a click on her opens her chat input, a message is typed and
# sent (xdotool on the host's display). The quiet hours do not matter to a typed message.
yui() { in_machine /root/yui/target/release/yui "$@"; }
# Only what is said after this counts (a first-run greeting may already be in her history).
last_id=$(yui transcript --preset yui --limit 1 | python3 -c 'import json,sys; print(max([json.loads(l)["id"] for l in sys.stdin if l.strip()] or [0]))') ||
  fail "yui transcript --preset yui"
lines() {
  yui transcript --preset yui 2>/dev/null | LAST_ID="$last_id" ROLE="$1" python3 -c '
import json, os, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("id", 0) > int(os.environ["LAST_ID"]) and m.get("role") == os.environ["ROLE"] and (m.get("text") or "").strip():
        print(m["text"].strip().replace("\n", " "))
        break
' || true
}
message="Hi Yui! What can you do?"
export DISPLAY=":$DISPLAY_NUM"
wid=$(xdotool search --name "^YUI — Yui$" | head -1)
[ -n "$wid" ] || fail "no window YUI — Yui"
eval "$(xdotool getwindowgeometry --shell "$wid")"
t1=$(now)
# The middle of her drawing, a little below the window's centre (the bubble sits above her).
xdotool mousemove --window "$wid" $((WIDTH / 2)) $((HEIGHT * 2 / 3)) click 1
sleep 1
xdotool windowfocus "$wid" 2>/dev/null || true
xdotool type --delay 30 "$message"
xdotool key Return
said=""
for _ in $(seq 1 20); do
  said=$(lines user)
  [ -n "$said" ] && break
  sleep 1
done
if [ -n "$said" ]; then
  say "typed to Yui: $said"
  how="a typed message"
else
  # The click did not reach her input (no window manager to focus it, a look drawn elsewhere):
  # the same question as an event of another program, said as such.
  say "the typed message did not reach Yui's history in 20 s; asking through \`yui event\` instead"
  yui settings set yui.proactive.quiet_hours null >/dev/null || fail "yui settings set yui.proactive.quiet_hours null"
  out=$(yui event --preset yui --importance high --text "The user says: $message") || fail "yui event: $out"
  case "$out" in *'"went"'*) ;; *) fail "the app did not take the turn: $out" ;; esac
  how="yui event"
fi
answer=""
until [ -n "$answer" ]; do
  [ "$(($(now) - t1))" -lt 300 ] || { tail -30 /tmp/fresh-run.log >&2; fail "Yui did not answer within 300 s"; }
  sleep 2
  answer=$(lines assistant)
done
t_answer=$(($(now) - t1))
say "Yui answered ($how) after ${t_answer} s: $answer"
if [ -n "${FRESH_SHOT:-}" ] && command -v import >/dev/null; then
  import -display ":$DISPLAY_NUM" -window root "$FRESH_SHOT" && say "screenshot: $FRESH_SHOT"
fi
say "ok: from a fresh Debian 12 to a character that answers in $(($(now) - t0)) s (windows ${t_windows} s, answer ${t_answer} s), load $(cut -d' ' -f1-3 /proc/loadavg)"
