#!/usr/bin/env bash
# Run tests/ui/lipsync_check.html (the mouth following a voice clip's envelope) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-lipsync.sh   (PORT overrides the local server's port, default 8779)
PORT="${PORT:-8779}" exec bash "$(dirname "$0")/run-page.sh" lipsync_check.html 15000
