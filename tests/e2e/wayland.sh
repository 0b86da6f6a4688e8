#!/usr/bin/env bash
# The real app in Wayland sessions on real headless compositors from Debian's packages (issue 45,
# docs/wayland.md): sway (wlroots: the overlay layer) and weston with Xwayland (no layer shell).
# For each: the backend choice is logged, the characters appear where they were saved, stay
# above a normal window, follow a drag (sway: a virtual pointer) that starts on them and not one
# that starts beside them (click-through), come back there after a restart,
# and the other kind's saved places are left exactly as they were. On sway a scripted model
# drives look and body_action in the running app (tests/e2e/wayland_tools.sh). Screenshots go to $YUI_WAYLAND_SHOTS (docs/img/ when set so): the two sessions and the click-through.
#
# sway refuses to run as root: as root (CI) the compositors run as a plain user made here
# (yui-wayland-test); the app and the checks run as the caller. Xwayland admits root through
# `xhost +si:localuser:root`, said by that user.
#
#   bash tests/e2e/wayland.sh     (builds the tests' build first; YUI_APP/YUI_CLI: use those)
#   YUI_WAYLAND_SHOTS=docs/img bash tests/e2e/wayland.sh     (and keep the two screenshots)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
APP=${YUI_APP:-$ROOT/target/debug/yui-app}
CLI=${YUI_CLI:-$ROOT/target/debug/yui}
SHOTS=${YUI_WAYLAND_SHOTS:-}
# The app, the CLI and the virtual pointer (the user's mouse on sway:
# crates/yui-wayland/examples/pointer.rs) from the tests' build, as tests/e2e/run.sh takes the
# app: `cargo build -p …` would unify features differently and build ~30 crates again.
nice -n 10 cargo test --workspace --locked --no-run --quiet || exit 1
POINTER=$ROOT/target/debug/examples/pointer
WORK=$(mktemp -d /tmp/yui-wayland.XXXXXX)
chmod 755 "$WORK"
WL_WORK=$WORK
. tests/e2e/wayland_session.sh
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  wl_cleanup
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

wait_for() { wl_wait "$@"; }

# The colour of pixel (x, y) of a PNG as "r,g,b".
pixel() { convert "$1" -format "%[fx:int(255*p{$2,$3}.r)],%[fx:int(255*p{$2,$3}.g)],%[fx:int(255*p{$2,$3}.b)]" info:-; }
# A character's face: light skin, (255,230,216) in the built-in drawing.
is_face() {
  local c; c=$(pixel "$1" "$2" "$3")
  IFS=, read -r r g b <<<"$c"
  [ "$r" -ge 230 ] && [ "$g" -ge 200 ] && [ "$b" -ge 180 ] && [ "$r" -gt "$b" ] || {
    echo "     pixel ($2,$3) of $(basename "$1") is $c, not a face" >&2; return 1; }
}
# Whether at least two characters' faces (thousands of skin-coloured pixels) are on a screenshot.
faces_shown() {
  local n; n=$(convert "$1" -fuzz 3% +transparent 'rgb(255,230,216)' -alpha extract -format '%[fx:int(mean*w*h)]' info:)
  [ "$n" -gt 3000 ] || { echo "     $(basename "$1") has $n face pixels" >&2; return 1; }
}
not_face() { ! is_face "$@" 2>/dev/null; }
differs() { [ "$(pixel "$1" "$3" "$4")" != "$(pixel "$2" "$3" "$4")" ]; }

APP_PID=
# start_app DATA_DIR ENV...: the app in the session the ENV names, until its choice is logged
# and its windows had time to paint.
start_app() {
  local data=$1; shift
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$WORK/home" LANG=C.UTF-8 \
    YUI_DATA_DIR="$data" "$@" "$APP" >"$data.out" 2>&1 &
  APP_PID=$!
  PIDS+=("$APP_PID")
  wait_for 30 grep -q "display backend" "$data"/logs/yui.log* || { bad "the app started"; cat "$data.out"; return 1; }
  sleep 6
}
stop_app() {
  kill -TERM "$APP_PID" 2>/dev/null
  wait "$APP_PID" 2>/dev/null
}
places() { "$CLI" --data-dir "$1" settings get yui.display.places | jq -cS ".\"$2\""; }
seed() { "$CLI" --data-dir "$1" settings set yui.display.places "$2" >/dev/null; }

mkdir -p "$WORK/home"
XW_SEED='{"outputs":{"XWAYLAND0":{"yui":[400,200],"kai":[760,330]}},"last":{"yui":"XWAYLAND0","kai":"XWAYLAND0"}}'
LS_SEED='{"outputs":{"HEADLESS-1":{"yui":[200,150],"kai":[620,380]}},"last":{"yui":"HEADLESS-1","kai":"HEADLESS-1"}}'

# ---------------------------------------------------------------- sway: the overlay layer
echo "# sway (headless, wlroots): native Wayland windows on the overlay layer"
start_sway || bad "sway started"
sway_shot() { env "${SWAY_ENV[@]}" grim "$WORK/$1"; }

D=$WORK/data-sway
mkdir -p "$D"
"$CLI" --data-dir "$D" settings get yui.display.backend >/dev/null
seed "$D" "{\"xwayland\":$XW_SEED,\"layer-shell\":$LS_SEED}"
# Push-to-talk with a global shortcut: no client may grab keys here, so the portal is asked (this
# session has no bus, so none answers: crates/yui-wayland/tests/portal.rs asks the real one).
"$CLI" --data-dir "$D" settings set yui.voice.listen '{"mode":"push_to_talk","shortcut":"Ctrl+Alt+Space"}' >/dev/null
start_app "$D" "${SWAY_ENV[@]}"
check "sway: the choice is logged (overlay layer, and why)" \
  grep -q 'display backend: Native Wayland windows on the overlay layer backend="layer-shell" setting="auto" reason=the compositor offers the overlay layer (zwlr_layer_shell_v1) outputs=\["HEADLESS-1 1280x720+0+0"\]' "$D"/logs/yui.log*
wait_for 10 grep -q "the shortcut Ctrl+Alt+Space cannot be used" "$D"/logs/yui.log*
check "sway: the shortcut goes to the shortcuts portal, and its absence is one plain line" \
  grep -q "the shortcut Ctrl+Alt+Space cannot be used: there is no session bus to reach a global shortcuts portal" "$D"/logs/yui.log*
check "sway: no XWayland note in the bubble (none is due)" \
  test "$("$CLI" --data-dir "$D" settings get yui.display.noted | jq -c .)" = "[]"
check "sway: the characters are layer surfaces, not toplevels" \
  bash -c "! env ${SWAY_ENV[*]} SWAYSOCK=\$(ls $SWAY_RT/sway-ipc.*.sock) swaymsg -t get_tree | grep -q YUI"
sway_shot sway-1.png
check "sway: yui appears where saved (200,150 on HEADLESS-1)" is_face "$WORK/sway-1.png" 310 350
check "sway: kai appears where saved (620,380)" is_face "$WORK/sway-1.png" 705 532
check "sway: the default row is empty (yui is not laid out afresh)" not_face "$WORK/sway-1.png" 1130 560
env "${SWAY_ENV[@]}" weston-terminal --fullscreen --shell=/bin/cat >/dev/null 2>&1 &
NORMAL=$!
PIDS+=("$NORMAL")
sleep 2
sway_shot sway-2.png
check "sway: a normal window covers the desktop" differs "$WORK/sway-1.png" "$WORK/sway-2.png" 640 60
check "sway: yui stays above it" is_face "$WORK/sway-2.png" 310 350
check "sway: kai stays above it" is_face "$WORK/sway-2.png" 705 532
[ -n "$SHOTS" ] && cp "$WORK/sway-2.png" "$SHOTS/wayland-sway.png"
# A drag: the mouse takes yui by her dress and moves her 300 px right; she follows the pointer
# (the margins move) and her place on HEADLESS-1 is saved where she was let go.
env "${SWAY_ENV[@]}" "$POINTER" drag 310 400 610 400
sleep 1
sway_shot sway-drag.png
check "sway: a drag moves yui (margins)" is_face "$WORK/sway-drag.png" 610 350
check "sway: the drag leaves her old place" not_face "$WORK/sway-drag.png" 310 350
check "sway: where the drag ended is saved for HEADLESS-1" \
  test "$(places "$D" layer-shell | jq -c '.outputs["HEADLESS-1"].yui')" = "[500,150]"
stop_app
start_app "$D" "${SWAY_ENV[@]}"
sway_shot sway-3.png
check "sway: after a restart yui is back where she was dragged" is_face "$WORK/sway-3.png" 610 350
check "sway: after a restart kai is back where saved" is_face "$WORK/sway-3.png" 705 532
# Click-through (docs/avatar.md): the window takes presses only where it draws, so a drag that
# starts beside yui, on her window's empty lower-left side (8 px in, 200 down; the character's
# box begins 26 px in), goes to the terminal below and leaves her where she is.
env "${SWAY_ENV[@]}" "$POINTER" drag 508 350 808 350
sleep 1
sway_shot sway-through.png
check "sway: a drag beside yui, on her window's empty side, does not move her" \
  is_face "$WORK/sway-through.png" 610 350
check "sway: ... nor does she follow the pointer" not_face "$WORK/sway-through.png" 910 350
check "sway: ... the terminal below got the drag (its selection shows across the line)" \
  differs "$WORK/sway-3.png" "$WORK/sway-through.png" 100 341
[ -n "$SHOTS" ] && cp "$WORK/sway-through.png" "$SHOTS/click-through-sway.png"
check "sway: the input regions were set without an error" \
  bash -c "! grep -q \"cannot set the window's input region\" $D/logs/yui.log*"
stop_app
kill -TERM "$NORMAL" 2>/dev/null
check "sway: XWayland's places untouched" test "$(places "$D" xwayland)" = "$(jq -cS . <<<"$XW_SEED")"
check "sway: nothing but the drag was saved (kai's place as seeded)" \
  test "$(places "$D" layer-shell)" = "$(jq -cS '.outputs["HEADLESS-1"].yui = [500,150]' <<<"$LS_SEED")"
# The model's look and body_action in the running app, on the same sway.
. tests/e2e/wayland_tools.sh

# ---------------------------------------------------------------- weston: XWayland
echo "# weston (headless) with Xwayland: no overlay layer, so XWayland"
start_weston || bad "weston started"
weston_shot() {
  (cd "$WORK" && rm -f wayland-screenshot-*.png && env "${WESTON_ENV[@]}" weston-screenshooter >/dev/null 2>&1 &&
    mv wayland-screenshot-*.png "$1")
}
D2=$WORK/data-weston
mkdir -p "$D2"
"$CLI" --data-dir "$D2" settings get yui.display.backend >/dev/null
seed "$D2" "{\"xwayland\":$XW_SEED,\"layer-shell\":$LS_SEED}"
start_app "$D2" "${WESTON_ENV[@]}"
check "weston: the choice is logged (XWayland, and why)" \
  grep -q 'display backend: XWayland (X11 windows in the Wayland session) backend="xwayland" setting="auto" reason=the compositor offers no overlay layer (zwlr_layer_shell_v1)' "$D2"/logs/yui.log*
check "weston: the note about native Wayland windows is logged" \
  grep -q 'the characters cannot sit on or look at windows of native Wayland apps' "$D2"/logs/yui.log*
check "weston: the note went to the main character's bubble once, and is remembered" \
  test "$("$CLI" --data-dir "$D2" settings get yui.display.noted | jq -c .)" = '["xwayland"]'
weston_shot weston-1.png
# weston's own X window manager neither places a mapped X11 window where its client asks nor
# keeps one above (it frames every X11 window at its own place; GNOME's Mutter and KWin do both):
# what it does is reported, not asserted (docs/wayland.md). What YUI controls is asserted.
note() { echo "note - $1: $("$2" "${@:3}" 2>/dev/null && echo yes || echo no)"; }
note "weston: yui at its saved place (400,200)" is_face "$WORK/weston-1.png" 510 400
note "weston: kai at its saved place (760,330)" is_face "$WORK/weston-1.png" 845 482
check "weston: the characters are on screen (their faces' pixels)" faces_shown "$WORK/weston-1.png"
env "${WESTON_ENV[@]}" weston-terminal --fullscreen --shell=/bin/cat >/dev/null 2>&1 &
NORMAL=$!
PIDS+=("$NORMAL")
sleep 2
weston_shot weston-2.png
[ -n "$SHOTS" ] && cp "$WORK/weston-1.png" "$SHOTS/wayland-weston-xwayland.png"
note "weston: yui above a fullscreen normal window" is_face "$WORK/weston-2.png" 510 400
stop_app
check "weston: nothing the window manager did was saved as the user's place" \
  test "$(places "$D2" xwayland)" = "$(jq -cS . <<<"$XW_SEED")"
start_app "$D2" "${WESTON_ENV[@]}"
weston_shot weston-3.png
note "weston: after a restart yui at its saved place" is_face "$WORK/weston-3.png" 510 400
stop_app
kill -TERM "$NORMAL" 2>/dev/null
check "weston: the places survive a restart untouched" test "$(places "$D2" xwayland)" = "$(jq -cS . <<<"$XW_SEED")"
check "weston: the overlay layer's places untouched" test "$(places "$D2" layer-shell)" = "$(jq -cS . <<<"$LS_SEED")"

echo "wayland: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
