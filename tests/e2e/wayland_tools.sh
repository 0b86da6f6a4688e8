# Sourced by tests/e2e/wayland.sh on its running headless sway (SWAY_ENV, start_app, check…):
# the model's avatar tools in the running app on the overlay layer (issue 45, docs/wayland.md).
# A scripted model (crates/yui-testkit/examples/tool_model.rs, Chat Completions on 127.0.0.1)
# asks for one tool call per turn; each turn is started through the app's inbox (`yui event`,
# high importance, so no budget or cooldown holds it), and the script reads the result the app
# sent back in the model's next request, byte for byte against /work/shared/spec/client-tools.md's
# strings, and where the character's layer surface went in sway's own pixels (grim). `look at:
# screen` goes through the real xdg-desktop-portal with xdg-desktop-portal-wlr and PipeWire on a
# private session bus, as crates/yui-wayland/tests/portal.rs runs them.

TOOL_MODEL=$ROOT/target/debug/examples/tool_model
MODEL=$WORK/model
BUS=$WORK/bus

# Whether a character's face (skin-coloured pixels of the built-in drawing) shows in the
# 220×300 window whose top-left corner is at (x, y) of a screenshot: `face_in IMG X Y`, in
# logical pixels; the screenshot's pixels are $SCALE times as many (grim shoots at the output's
# scale).
SCALE=1
face_in() {
  local s=$SCALE n
  n=$(convert "$1" -crop "$((220 * s))x$((300 * s))+$(($2 * s))+$(($3 * s))" +repage -fuzz 3% \
    +transparent 'rgb(255,230,216)' -alpha extract -format '%[fx:int(mean*w*h)]' info:)
  [ "$n" -gt $((400 * s * s)) ] || { echo "     $(basename "$1") has $n face pixels at ($2,$3)" >&2; return 1; }
}
no_face_in() { ! face_in "$@" 2>/dev/null; }
# shown_at IMG X Y: sway's screen (shot to IMG) shows a face at (x, y) within 30 s: a window's
# first paint may take that long on a busy machine.
shown_at() {
  local until=$((SECONDS + 30))
  while sway_shot "$1" && ! face_in "$WORK/$1" "$2" "$3" 2>/dev/null; do
    [ "$SECONDS" -lt "$until" ] || { face_in "$WORK/$1" "$2" "$3"; return 1; }
    sleep 1
  done
}

# call WORDS: hand yui the event "CALL WORDS", wait for the model's next request carrying the
# call's result, and print that result (the tool message's content) to $WORK/result.
CALLS=0
call() {
  CALLS=$((CALLS + 1))
  local before; before=$(ls "$MODEL" | grep -c '^req-')
  : >"$WORK/result"
  "$CLI" --data-dir "$D3" event --preset yui --importance high --text "CALL $*" >"$WORK/event.out" 2>&1 || {
    echo "     yui event: $(cat "$WORK/event.out")" >&2; return 1; }
  # The answered request: its last assistant message asked for the call, and a tool message
  # answers it. (The call's id is call_<n>, n the request that asked.)
  local n=$before f
  local until=$((SECONDS + 40))
  while [ "$SECONDS" -lt "$until" ]; do
    f=$MODEL/req-$((n + 1)).json
    if [ -s "$f" ]; then
      n=$((n + 1))
      jq -r '.messages as $m | ($m | map(select(.role == "assistant" and .tool_calls)) | last
        | .tool_calls[0].id) as $id | [$m[] | select(.role == "tool" and .tool_call_id == $id)]
        | last | .content // empty' "$f" >"$WORK/result"
      [ -s "$WORK/result" ] && { cp "$f" "$WORK/answered.json"; return 0; }
    else
      sleep 0.2
    fi
  done
  echo "     no result came back for CALL $* (yui event: $(cat "$WORK/event.out"))" >&2
  return 1
}
# answers EXPECTED WORDS: the call's result is EXPECTED, byte for byte.
answers() { local want=$1; shift; call "$@" && result_is "$want"; }
result_is() { [ "$(cat "$WORK/result")" = "$1" ] || { echo "     result: $(cat "$WORK/result")" >&2; return 1; }; }

echo "# sway: the model's tools in the running app (a scripted model, the real screenshot portal)"
D3=$WORK/data-tools
mkdir -p "$D3" "$MODEL"
"$TOOL_MODEL" "$MODEL" 2>"$MODEL.err" &
PIDS+=($!)
wait_for 10 test -s "$MODEL/url" || bad "the scripted model started"
"$CLI" --data-dir "$D3" backend set --base-url "$(cat "$MODEL/url")" --model fake-model \
  --transport chat_completions >/dev/null
# The time of day holds no turn and starts none (quiet hours, morning, night); nobody types, so
# the characters must not fall asleep.
for k in yui.proactive.quiet_hours yui.proactive.morning yui.proactive.night; do
  "$CLI" --data-dir "$D3" settings set "$k" null >/dev/null
done
"$CLI" --data-dir "$D3" settings set yui.sleep '{"after_minutes":0}' >/dev/null
seed "$D3" "{\"layer-shell\":$LS_SEED}"

# The session bus and the desktop's portals in sway's session (as tests/portal.rs starts them).
dbus-daemon --session --nofork --nopidfile --address="unix:path=$BUS" >/dev/null 2>&1 &
PIDS+=($!)
wait_for 10 test -S "$BUS" || bad "the session bus started"
PORTAL_ENV=(XDG_RUNTIME_DIR="$SWAY_RT" WAYLAND_DISPLAY=wayland-1 DBUS_SESSION_BUS_ADDRESS="unix:path=$BUS"
  XDG_CURRENT_DESKTOP=sway)
for p in /usr/bin/pipewire /usr/libexec/xdg-desktop-portal-wlr /usr/libexec/xdg-desktop-portal; do
  env -i PATH=/usr/local/bin:/usr/bin:/bin "${PORTAL_ENV[@]}" "$p" >/dev/null 2>"$WORK/$(basename "$p").log" &
  PIDS+=($!)
  sleep 0.5 # each needs the one before it (the wlroots backend connects to PipeWire at start)
done

start_app "$D3" "${SWAY_ENV[@]}" DBUS_SESSION_BUS_ADDRESS="unix:path=$BUS"
check "sway tools: yui starts where saved (200,150)" shown_at tools-0.png 200 150

check "sway tools: look at: perch_targets is answered" call look at=perch_targets
check "sway tools: ... no window is seen on the overlay layer, the reason and the outputs are said" \
  test "$(jq -cS . "$WORK/result")" = "$(jq -cS . <<<'{"supported":false,"reason":"Wayland shows YUI no other app'"'"'s windows: the body can move to the named spots of each display and to the user'"'"'s places, not sit on or peek around windows","windows":[],"monitors":[{"monitor":1,"name":"HEADLESS-1"}]}')"
check "sway tools: look at: body is the live state" call look at=body
check "sway tools: ... live, standing" test "$(jq -c '[.live, .state]' "$WORK/result")" = '[true,"standing"]'
check "sway tools: body_action sit_on_window is answered" call body_action action=sit_on_window app=firefox
check "sway tools: ... not_found (no window is seen here)" result_is "not_found"
check "sway tools: body_action move_to top-right is answered" call body_action action=move_to spot=top-right
check "sway tools: ... ok" result_is "ok"
sway_shot tools-1.png
# top-right of the 1280×720 output: x = 1280 - 220 - 16, y = 16 (geometry's SPOT_MARGIN).
check "sway tools: ... the layer surface went to the output's top-right (1044,16)" face_in "$WORK/tools-1.png" 1044 16
check "sway tools: ... and left where it was" no_face_in "$WORK/tools-1.png" 200 150
check "sway tools: body_action move_to an unknown spot: not_found" \
  answers 'not_found' body_action action=move_to spot=nowhere
check "sway tools: body_action move_to monitor 2 (there is one): error: invalid field monitor" \
  answers 'error: invalid field monitor' body_action action=move_to spot=center monitor=2
check "sway tools: body_action go_to_bed: ok" \
  answers 'ok' body_action action=go_to_bed
sway_shot tools-2.png
# No bed saved: the first output's bottom-left, x = 16, y = 720 - 300.
check "sway tools: ... the layer surface went to the bottom-left (16,420)" face_in "$WORK/tools-2.png" 16 420
check "sway tools: ... and left the top-right" no_face_in "$WORK/tools-2.png" 1044 16

check "sway tools: look at: screen while capture is off: error: screen capture is off" \
  answers 'error: screen capture is off' look at=screen
"$CLI" --data-dir "$D3" settings set yui.screen '{"enabled":true}' >/dev/null
check "sway tools: look at: screen on is answered through the portal" call look at=screen
check "sway tools: ... screenshot of display 1, the image in the next user message" \
  result_is "screenshot of display 1
[the image follows in the next user message]"
jq -r '[.messages[] | select(.role == "user") | .content | arrays | .[] | .image_url.url // empty] | last' \
  "$WORK/answered.json" | sed 's/^data:[^,]*,//' | base64 -d >"$WORK/look.img" 2>/dev/null
check "sway tools: ... the image is the whole 1280×720 display" \
  test "$(identify -format '%wx%h' "$WORK/look.img" 2>/dev/null)" = "1280x720"
check "sway tools: ... sway's own pixels (its background)" \
  test "$(pixel "$WORK/look.img" 640 60 | awk -F, '{print ($1>55&&$1<71&&$2>55&&$2<71&&$3>55&&$3<71)}')" = 1
check "sway tools: ... without yui: YUI's own windows are hidden for the capture" \
  no_face_in "$WORK/look.img" 16 420
check "sway tools: ... nor kai" no_face_in "$WORK/look.img" 620 380
sleep 1
sway_shot tools-3.png
check "sway tools: ... and shown again where they were" face_in "$WORK/tools-3.png" 16 420
check "sway tools: look at: screen monitor 2: error: invalid field monitor" \
  answers 'error: invalid field monitor' look at=screen monitor=2
stop_app
check "sway tools: the body's moves were not saved as the user's places" \
  test "$(places "$D3" layer-shell)" = "$(jq -cS . <<<"$LS_SEED")"

# ---------------------------------------------------------------- the same output at scale 2
# Places and the body's moves are logical pixels (the margins on the output): on a scale-2
# output of 2560×1440 physical pixels (1280×720 logical) a place saved at (200,150) is drawn at
# (400,300) of the screenshot, and top-right is still (1044,16).
echo "# sway, HEADLESS-1 at scale 2: places and moves in logical pixels"
env "${SWAY_ENV[@]}" SWAYSOCK="$(ls "$SWAY_RT"/sway-ipc.*.sock)" \
  swaymsg output HEADLESS-1 resolution 2560x1440 scale 2 >/dev/null
seed "$D3" "{\"layer-shell\":$LS_SEED}"
start_app "$D3" "${SWAY_ENV[@]}" DBUS_SESSION_BUS_ADDRESS="unix:path=$BUS"
SCALE=2
check "sway scale 2: yui appears where saved (200,150 logical)" shown_at scale-0.png 200 150
check "sway scale 2: the probe names the output in logical pixels" \
  grep -q 'outputs=\["HEADLESS-1 1280x720+0+0"\]' "$D3"/logs/yui.log*
check "sway scale 2: the screenshot has the output's physical pixels" \
  test "$(identify -format '%wx%h' "$WORK/scale-0.png")" = "2560x1440"
check "sway scale 2: kai appears where saved (620,380 logical)" face_in "$WORK/scale-0.png" 620 380
check "sway scale 2: body_action move_to top-right: ok" answers 'ok' body_action action=move_to spot=top-right
sway_shot scale-1.png
check "sway scale 2: ... the layer surface went to top-right in logical pixels (1044,16)" \
  face_in "$WORK/scale-1.png" 1044 16
check "sway scale 2: ... and left its place" no_face_in "$WORK/scale-1.png" 200 150
check "sway scale 2: body_action go_to_bed: ok" answers 'ok' body_action action=go_to_bed
sway_shot scale-2.png
check "sway scale 2: ... bottom-left in logical pixels (16,420)" face_in "$WORK/scale-2.png" 16 420
stop_app
SCALE=1
check "sway scale 2: the places were not touched" test "$(places "$D3" layer-shell)" = "$(jq -cS . <<<"$LS_SEED")"
