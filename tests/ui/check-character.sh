#!/usr/bin/env bash
# Run tests/ui/character_check.html (the built-in character) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-character.sh   (PORT overrides the local server's port, default 8771)
PORT="${PORT:-8771}" exec bash "$(dirname "$0")/run-page.sh" character_check.html 20000
