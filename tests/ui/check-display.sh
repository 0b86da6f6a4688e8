#!/usr/bin/env bash
# Run tests/ui/display_check.html (Settings → General's "Windows": the display backend chosen at
# start, why, the note, and yui.display.backend) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-display.sh   (PORT overrides the local server's port, default 8776)
set -euo pipefail
PORT="${PORT:-8776}" bash "$(dirname "$0")/run-page.sh" display_check.html 5000
