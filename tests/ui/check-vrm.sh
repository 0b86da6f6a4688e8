#!/usr/bin/env bash
# Run tests/ui/vrm_check.html (the VRM character: render on demand, emotions, hidden, asleep) in
# headless Chromium on software WebGL2; fail unless it reports PASS. Needs ui/vendor/vrm.js
# (scripts/vendor-ui.sh). A budget that runs out while SwiftShader works is tried again by
# run-page.sh. Usage: tests/ui/check-vrm.sh   (PORT: the server's port, default 8779)
PORT="${PORT:-8779}" exec bash "$(dirname "$0")/run-page.sh" vrm_check.html 120000
