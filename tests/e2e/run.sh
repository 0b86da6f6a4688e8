#!/usr/bin/env bash
# End-to-end tests of the real YUI app: starts Xvfb, a window manager and tauri-driver, builds the
# app, runs `cargo test --workspace --test e2e -- --ignored` (the one-instance test apart, under
# dbus-run-session), and cleans up whatever it started.
#
# Needs: Xvfb, openbox (optional), WebKitWebDriver (webkit2gtk-driver), tauri-driver
# (`cargo install tauri-driver --locked`), and the Tauri build deps (libwebkit2gtk-4.1-dev, ...).
# Usage: tests/e2e/run.sh [TEST_NAME_FILTER...] (passed to the test binary; none runs every test).
# Env: YUI_APP_BIN (the app to test, e.g. target/release/yui-app; default the debug build); DISPLAY_NUM (default 99); DRIVER_PORT (default 4444; WebKitWebDriver gets DRIVER_PORT+1); E2E_SCREENSHOT=path.png to capture the screen (two characters,
# the main one answering in its bubble) during the chat test, e.g. E2E_SCREENSHOT=docs/img/screenshot.png.
set -euo pipefail

cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-99}"
DRIVER_PORT="${DRIVER_PORT:-4444}"
export TAURI_DRIVER_URL="http://127.0.0.1:${DRIVER_PORT}"
export DISPLAY=":${DISPLAY_NUM}"
# tauri-driver: the prebuilt one scripts/dev.sh installs from npm (scripts/tools), else one on PATH
# or in ~/.cargo/bin (`cargo install tauri-driver --locked`).
TOOLS_BIN="$PWD/scripts/tools/node_modules/.bin"
if [ -z "${TAURI_DRIVER:-}" ]; then
  if [ -x "$TOOLS_BIN/tauri-driver" ]; then TAURI_DRIVER="$TOOLS_BIN/tauri-driver"
  else TAURI_DRIVER="$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")"; fi
fi
LOG_DIR="$(mktemp -d -t yui-e2e-XXXXXX)"
PIDS=()

cleanup() {
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

echo "e2e: starting Xvfb on $DISPLAY (logs in $LOG_DIR)"
Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >"$LOG_DIR/xvfb.log" 2>&1 &
XVFB_PID=$!
PIDS+=("$XVFB_PID")
for _ in $(seq 1 50); do
  [ -e "/tmp/.X11-unix/X${DISPLAY_NUM}" ] && break
  sleep 0.1
done
sleep 0.3
# Our Xvfb must be the one serving the display (not a leftover server on the same number).
if ! kill -0 "$XVFB_PID" 2>/dev/null || [ ! -e "/tmp/.X11-unix/X${DISPLAY_NUM}" ]; then
  echo "e2e: Xvfb did not start on $DISPLAY (try DISPLAY_NUM=<free number>)" >&2
  cat "$LOG_DIR/xvfb.log" >&2
  exit 1
fi

if command -v openbox >/dev/null; then
  openbox >"$LOG_DIR/openbox.log" 2>&1 &
  PIDS+=($!)
fi
if command -v xcompmgr >/dev/null; then
  # A compositor, so transparent character windows are transparent.
  xcompmgr >"$LOG_DIR/xcompmgr.log" 2>&1 &
  PIDS+=($!)
fi

# No session bus here: keep WebKit and the keyring from trying to reach one. (The one-instance
# test gets a bus of its own below; every test's app has its own data dir, so its own
# one-instance name, and never hands over to a YUI on the desktop's bus.)
export NO_AT_BRIDGE=1
# A config folder of the suite's own: the autostart test writes an autostart entry, and no test
# reads the user's client-tools.json.
export XDG_CONFIG_HOME="$LOG_DIR/config"
mkdir -p "$XDG_CONFIG_HOME"
# First run looks for local model servers on fixed ports: probe none, so what happens to run on
# this machine does not change the tests (set YUI_DISCOVER_PORTS to probe some).
export YUI_DISCOVER_PORTS="${YUI_DISCOVER_PORTS-none}"
# Audio: a PulseAudio of the suite's own (its own runtime dir) with a null sink whose monitor is
# the default source, so what a test plays into the sink is what the app's microphone hears
# (voice_listen.rs). Apps and tools find it through PULSE_SERVER.
if command -v pulseaudio >/dev/null; then
  mkdir -p "$LOG_DIR/pulse-rt" "$LOG_DIR/pulse-home"
  XDG_RUNTIME_DIR="$LOG_DIR/pulse-rt" HOME="$LOG_DIR/pulse-home" pulseaudio --daemonize=no -n \
    --exit-idle-time=-1 --disable-shm=yes --load="module-null-sink sink_name=yuisink" \
    --load="module-native-protocol-unix auth-anonymous=1" >"$LOG_DIR/pulse.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -S "$LOG_DIR/pulse-rt/pulse/native" ] && break; sleep 0.1; done
  export PULSE_SERVER="unix:$LOG_DIR/pulse-rt/pulse/native"
  pactl set-default-sink yuisink && pactl set-default-source yuisink.monitor ||
    echo "e2e: the suite's PulseAudio did not start (log: $LOG_DIR/pulse.log)" >&2
fi
"$TAURI_DRIVER" --port "$DRIVER_PORT" --native-port "$((DRIVER_PORT + 1))" >"$LOG_DIR/tauri-driver.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do
  (exec 3<>/dev/tcp/127.0.0.1/"$DRIVER_PORT") 2>/dev/null && break
  sleep 0.1
done

echo "e2e: running"
status=0
if [ -n "${E2E_SCREENSHOT:-}" ]; then
  mkdir -p "$(dirname "$E2E_SCREENSHOT")"
  export YUI_E2E_SCREENSHOT="$(cd "$(dirname "$E2E_SCREENSHOT")" && pwd)/$(basename "$E2E_SCREENSHOT")"
fi
export YUI_APP_BIN="${YUI_APP_BIN:-$PWD/target/debug/yui-app}"
cargo test --workspace --locked --test e2e -- --ignored --test-threads=1 --skip single_instance "$@" || status=$?
# One instance: its app claims a name on the D-Bus session bus, so it runs apart, on a private
# bus (dbus-run-session), after the rest; with filters, only when one names it.
run_single=1
if [ $# -gt 0 ]; then
  run_single=0
  for f in "$@"; do case "single_instance::a_second_launch_brings_the_running_app_forward_and_exits" in *"$f"*) run_single=1 ;; esac; done
fi
if [ "$run_single" = 1 ] && [ "$status" -eq 0 ]; then
  command -v dbus-run-session >/dev/null || { echo "e2e: dbus-run-session is missing (apt install dbus-bin)" >&2; exit 1; }
  echo "e2e: one instance, on a private session bus"
  dbus-run-session -- cargo test --workspace --locked --test e2e -- --ignored --test-threads=1 single_instance || status=$?
fi
if [ -n "${YUI_E2E_SCREENSHOT:-}" ] && [ -f "$YUI_E2E_SCREENSHOT" ] && command -v convert >/dev/null; then
  # The characters stand at the bottom right: keep that corner of the 1280x800 screen.
  convert "$YUI_E2E_SCREENSHOT" -gravity SouthEast -crop 640x440+0+0 +repage "$YUI_E2E_SCREENSHOT"
  echo "e2e: screenshot in $YUI_E2E_SCREENSHOT"
fi
if [ "$status" -ne 0 ]; then
  echo "e2e: FAILED; tauri-driver log:" >&2
  tail -n 50 "$LOG_DIR/tauri-driver.log" >&2 || true
fi
exit "$status"
