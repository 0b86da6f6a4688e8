#!/usr/bin/env bash
# Run tests/ui/outline_check.html (where a character window draws, for click-through:
# ui/character/outline.js) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-outline.sh   (PORT overrides the local server's port, default 8781)
PORT="${PORT:-8781}" exec bash "$(dirname "$0")/run-page.sh" outline_check.html 15000
