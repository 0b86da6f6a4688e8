#!/usr/bin/env bash
# Run tests/ui/sprites_check.html (sprite sets on the character) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-sprites.sh   (PORT overrides the local server's port, default 8772)
PORT="${PORT:-8772}" exec bash "$(dirname "$0")/run-page.sh" sprites_check.html 15000
