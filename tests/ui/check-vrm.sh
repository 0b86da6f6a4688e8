#!/usr/bin/env bash
# Run tests/ui/vrm_check.html (the VRM character: render on demand, emotions, hidden, asleep) in
# headless Chromium on software WebGL2; fail unless it reports PASS. Needs ui/vendor/vrm.js
# (scripts/vendor-ui.sh). Usage: tests/ui/check-vrm.sh   (PORT: the server's port, default 8779)
#
# Headless Chromium's virtual time does not wait for its GPU process: while SwiftShader compiles
# the model's shaders the page looks idle and the budget can run out before the model is on
# screen ("RUNNING: loading"). Only that is tried again (up to 3 times); any FAIL fails at once.
for attempt in 1 2 3; do
  out="$(PORT="${PORT:-8779}" bash "$(dirname "$0")/run-page.sh" vrm_check.html 60000)" && { echo "$out"; exit 0; }
  [[ "$out" == "RUNNING: loading" || "$out" == "RUNNING: importing" ]] || { echo "$out"; exit 1; }
  echo "check-vrm: the budget ran out while the model loaded (attempt $attempt); again" >&2
done
echo "$out"
exit 1
