#!/usr/bin/env bash
# End-to-end tests of the real YUI app: starts Xvfb, a window manager and tauri-driver (one set per
# lane), builds the app, runs the ignored tests of `cargo test --workspace --test e2e` (the
# one-instance test under dbus-run-session), and cleans up whatever it started.
#
# Needs: Xvfb, openbox (optional), WebKitWebDriver (webkit2gtk-driver), pulseaudio + pulseaudio-utils
# (a null sink for the voice test), tauri-driver
# (`cargo install tauri-driver --locked`), and the Tauri build deps (libwebkit2gtk-4.1-dev, ...).
# Usage: tests/e2e/run.sh [TEST_NAME_FILTER...] (passed to the test binary, one lane; none runs
# every test, in E2E_LANES lanes side by side, default 4).
# Env: YUI_APP_BIN (the app to test, e.g. target/release/yui-app; default the debug build); DISPLAY_NUM (default 99; lane N uses DISPLAY_NUM+2N); DRIVER_PORT (default 4444; WebKitWebDriver gets DRIVER_PORT+1; lane N DRIVER_PORT+2N); E2E_SCREENSHOT=path.png to capture the screen (two characters,
# the main one answering in its bubble) during the chat test, e.g. E2E_SCREENSHOT=docs/img/screenshot.png.
set -euo pipefail

cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-99}"
DRIVER_PORT="${DRIVER_PORT:-4444}"
# tauri-driver: the prebuilt one scripts/dev.sh installs from npm (scripts/tools), else one on PATH
# or in ~/.cargo/bin (`cargo install tauri-driver --locked`).
TOOLS_BIN="$PWD/scripts/tools/node_modules/.bin"
if [ -z "${TAURI_DRIVER:-}" ]; then
  if [ -x "$TOOLS_BIN/tauri-driver" ]; then TAURI_DRIVER="$TOOLS_BIN/tauri-driver"
  else TAURI_DRIVER="$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")"; fi
fi
LOG_DIR="$(mktemp -d -t yui-e2e-XXXXXX)"
PIDS=()
. tests/e2e/pulse.sh

cleanup() {
  # Children first: tauri-driver's WebKitWebDriver outlives it and would keep its port.
  for pid in "${PIDS[@]}"; do pkill -TERM -P "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

for tool in Xvfb WebKitWebDriver; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (apt install xvfb webkit2gtk-driver)" >&2; exit 1; }
done
[ -x "$TAURI_DRIVER" ] || { echo "e2e: tauri-driver is missing (scripts/dev.sh test installs it; or cargo install tauri-driver --locked)" >&2; exit 1; }

# Built with the whole workspace's features, as `cargo test --workspace` builds them: the app
# binary and the test then come from the build the unit tests already made (with `-p yui-app`,
# feature unification differs and ~30 crates, the app and yui-core among them, built again).
echo "e2e: building the app and the tests"
cargo test --workspace --locked --test e2e --no-run

# One lane: an Xvfb, a window manager, a compositor and a tauri-driver of its own. Lane N is on
# display DISPLAY_NUM+2N with tauri-driver on DRIVER_PORT+2N (WebKitWebDriver on the next port),
# and its own config folder; start_lane sets LANE_ENV to the environment its tests run in.
start_lane() {
  local n=$1 disp port log xvfb
  disp=$((DISPLAY_NUM + 2 * n))
  port=$((DRIVER_PORT + 2 * n))
  log="$LOG_DIR/lane$n"
  mkdir -p "$log/config"
  echo "e2e: lane $n: Xvfb on :$disp, tauri-driver on $port (logs in $log)"
  Xvfb ":$disp" -screen 0 1280x800x24 -nolisten tcp >"$log/xvfb.log" 2>&1 &
  xvfb=$!
  PIDS+=("$xvfb")
  for _ in $(seq 1 50); do
    [ -e "/tmp/.X11-unix/X${disp}" ] && break
    sleep 0.1
  done
  sleep 0.3
  # Our Xvfb must be the one serving the display (not a leftover server on the same number).
  if ! kill -0 "$xvfb" 2>/dev/null || [ ! -e "/tmp/.X11-unix/X${disp}" ]; then
    echo "e2e: Xvfb did not start on :$disp (try DISPLAY_NUM=<free number>)" >&2
    cat "$log/xvfb.log" >&2
    exit 1
  fi
  if command -v openbox >/dev/null; then
    DISPLAY=":$disp" openbox >"$log/openbox.log" 2>&1 &
    PIDS+=($!)
  fi
  if command -v xcompmgr >/dev/null; then
    # A compositor, so transparent character windows are transparent.
    DISPLAY=":$disp" xcompmgr >"$log/xcompmgr.log" 2>&1 &
    PIDS+=($!)
  fi
  # Audio: a PulseAudio of the lane's own (its own runtime dir) with a null sink whose monitor is
  # the default source, so what a test plays into the sink is what its app's microphone hears
  # (voice_listen.rs), and lanes never hear each other. Apps and tools find it by PULSE_SERVER.
  start_pulse "$log"
  local audio=("${PULSE_ENV[@]}")
  if command -v pulseaudio >/dev/null && [ ${#audio[@]} = 0 ]; then
    echo "e2e: lane $n: its PulseAudio did not start (log: $log/pulse.log)" >&2
  fi
  # The app inherits tauri-driver's environment (not the test's): the lane's display and config.
  env "${audio[@]}" DISPLAY=":$disp" XDG_CONFIG_HOME="$log/config" "$TAURI_DRIVER" --port "$port" --native-port "$((port + 1))" >"$log/tauri-driver.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.1
  done
  # The autostart test writes an autostart entry in the config folder, and no test reads the
  # user's client-tools.json.
  LANE_ENV=(DISPLAY=":$disp" TAURI_DRIVER_URL="http://127.0.0.1:$port" XDG_CONFIG_HOME="$log/config" "${audio[@]}")
}

# No session bus here: keep WebKit and the keyring from trying to reach one. (The one-instance
# test gets a bus of its own below; every test's app has its own data dir, so its own
# one-instance name, and never hands over to a YUI on the desktop's bus.)
export NO_AT_BRIDGE=1
# First run looks for local model servers on fixed ports: probe none, so what happens to run on
# this machine does not change the tests (set YUI_DISCOVER_PORTS to probe some).
export YUI_DISCOVER_PORTS="${YUI_DISCOVER_PORTS-none}"
# A PulseAudio of the suite's own with a null sink (its monitor is the default source), so the
# voice test plays and records real audio with no sound card (tests/e2e/voice.rs). Every app
# the suite starts inherits PULSE_SERVER; with the voice off (the default) none opens a device.
if command -v pulseaudio >/dev/null; then
  PULSE_RT="$LOG_DIR/pulse"
  mkdir -p "$PULSE_RT/home"
  XDG_RUNTIME_DIR="$PULSE_RT" HOME="$PULSE_RT/home" pulseaudio --daemonize=no -n --exit-idle-time=-1 \
    --disable-shm=yes "--load=module-null-sink sink_name=yuisink" \
    "--load=module-native-protocol-unix auth-anonymous=1 socket=$PULSE_RT/native" >"$LOG_DIR/pulse.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do [ -S "$PULSE_RT/native" ] && break; sleep 0.1; done
  export PULSE_SERVER="unix:$PULSE_RT/native"
  pactl set-default-sink yuisink && pactl set-default-source yuisink.monitor \
    || echo "e2e: the PulseAudio null sink did not start (see $LOG_DIR/pulse.log)" >&2
else
  echo "e2e: pulseaudio is missing (apt install pulseaudio pulseaudio-utils): the voice test will fail" >&2
fi
if [ -n "${E2E_SCREENSHOT:-}" ]; then
  mkdir -p "$(dirname "$E2E_SCREENSHOT")"
  export YUI_E2E_SCREENSHOT="$(cd "$(dirname "$E2E_SCREENSHOT")" && pwd)/$(basename "$E2E_SCREENSHOT")"
fi
export YUI_APP_BIN="${YUI_APP_BIN:-$PWD/target/debug/yui-app}"
status=0
SINGLE=single_instance::a_second_launch_brings_the_running_app_forward_and_exits

if [ $# -eq 0 ] && [ "${E2E_LANES:-4}" -gt 1 ]; then
  # The whole suite in E2E_LANES lanes (default 4) side by side: the tests mostly wait (on the app's
  # start, timers, a minute of no input), so lanes overlap the waits. The tests add up to ~710 s;
  # the memory soak (~165 s) alone fills one lane and is the floor.
  # Each test runs alone in its own process (`--exact`), taken by the next free lane from one
  # queue, slowest first (E2E_SLOW), then the rest in the binary's order.
  bin=$(cargo test --workspace --locked --test e2e --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m["target"]["name"]=="e2e" and m.get("executable"): print(m["executable"])')
  [ -x "$bin" ] || { echo "e2e: the test binary was not found" >&2; exit 1; }
  "$bin" --ignored --list --format terse | sed -n 's/: test$//p' >"$LOG_DIR/all"
  # The slowest tests first, so no lane is left with a long one at the end (seconds, measured:
  # docs/PERFORMANCE.md "CI time").
  E2E_SLOW=(memory::memory_stays_flat vrm::at_rest presence:: reminders:: firstrun:: crash::kill_9 vrm:: typing:: conversation:: cue_latency::)
  : >"$LOG_DIR/queue"
  for pat in "${E2E_SLOW[@]}"; do grep -F "$pat" "$LOG_DIR/all" >>"$LOG_DIR/queue" || true; done
  grep -vxF -f "$LOG_DIR/queue" "$LOG_DIR/all" >>"$LOG_DIR/queue" || true
  # Each test once: the patterns overlap (`vrm::` also matches `vrm::at_rest…`, which ran twice
  # and took a lane for another 80–136 s).
  awk '!seen[$0]++' "$LOG_DIR/queue" >"$LOG_DIR/queue.once" && mv "$LOG_DIR/queue.once" "$LOG_DIR/queue"
  total=$(wc -l <"$LOG_DIR/queue")
  echo 0 >"$LOG_DIR/next"
  # The next test of the queue, for whichever lane asks first (a counter under flock).
  take() {
    local n
    exec 9>>"$LOG_DIR/next.lock"
    flock 9
    n=$(cat "$LOG_DIR/next")
    echo $((n + 1)) >"$LOG_DIR/next"
    flock -u 9
    sed -n "$((n + 1))p" "$LOG_DIR/queue"
  }
  lane() {
    local n=$1 t name t0 rc
    shift
    while t=$(take) && [ -n "$t" ]; do
      name=${t//::/_}
      t0=$(date +%s)
      rc=0
      if [ "$t" = "$SINGLE" ]; then
        # One instance: its app claims a name on the D-Bus session bus: a private bus of its own.
        env "$@" dbus-run-session -- "$bin" --ignored --exact "$t" >"$LOG_DIR/t-$name.log" 2>&1 || rc=$?
      else
        env "$@" "$bin" --ignored --exact "$t" >"$LOG_DIR/t-$name.log" 2>&1 || rc=$?
      fi
      if [ "$rc" = 0 ]; then r=ok; else r=FAILED; echo "$t" >>"$LOG_DIR/failed"; fi
      printf 'test %s ... %s (lane %s, %s s)\n' "$t" "$r" "$n" "$(($(date +%s) - t0))"
    done
  }
  command -v dbus-run-session >/dev/null || { echo "e2e: dbus-run-session is missing (apt install dbus-daemon)" >&2; exit 1; }
  lanes=${E2E_LANES:-4}
  lane_pids=()
  for n in $(seq 0 $((lanes - 1))); do
    start_lane "$n"
    lane "$n" "${LANE_ENV[@]}" &
    lane_pids+=($!)
  done
  echo "e2e: running $total tests in $lanes lanes"
  for pid in "${lane_pids[@]}"; do wait "$pid" || status=1; done
  failed=0
  if [ -f "$LOG_DIR/failed" ]; then
    failed=$(wc -l <"$LOG_DIR/failed")
    while read -r t; do
      echo "---- $t ----" >&2
      tail -n 60 "$LOG_DIR/t-${t//::/_}.log" >&2
    done <"$LOG_DIR/failed"
    status=1
  fi
  echo "e2e: $((total - failed)) passed, $failed failed"
else
  # Filtered runs (or E2E_LANES=1): one lane, the test binary's own filters and flags.
  start_lane 0
  export "${LANE_ENV[@]}"
  echo "e2e: running"
  cargo test --workspace --locked --test e2e -- --ignored --test-threads=1 --skip single_instance "$@" || status=$?
  # One instance: its app claims a name on the D-Bus session bus, so it runs apart, on a private
  # bus (dbus-run-session), after the rest; with filters, only when one names it.
  run_single=1
  if [ $# -gt 0 ]; then
    run_single=0
    for f in "$@"; do case "$SINGLE" in *"$f"*) run_single=1 ;; esac; done
  fi
  if [ "$run_single" = 1 ] && [ "$status" -eq 0 ]; then
    command -v dbus-run-session >/dev/null || { echo "e2e: dbus-run-session is missing (apt install dbus-daemon)" >&2; exit 1; }
    echo "e2e: one instance, on a private session bus"
    dbus-run-session -- cargo test --workspace --locked --test e2e -- --ignored --test-threads=1 single_instance || status=$?
  fi
fi
if [ -n "${YUI_E2E_SCREENSHOT:-}" ] && [ -f "$YUI_E2E_SCREENSHOT" ] && command -v convert >/dev/null; then
  # The characters stand at the bottom right: keep that corner of the 1280x800 screen.
  convert "$YUI_E2E_SCREENSHOT" -gravity SouthEast -crop 640x440+0+0 +repage "$YUI_E2E_SCREENSHOT"
  echo "e2e: screenshot in $YUI_E2E_SCREENSHOT"
fi
if [ "$status" -ne 0 ]; then
  for f in "$LOG_DIR"/lane*/tauri-driver.log; do
    echo "e2e: FAILED; $f:" >&2
    tail -n 30 "$f" >&2 || true
  done
fi
exit "$status"
