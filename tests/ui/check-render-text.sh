#!/usr/bin/env bash
# Run tests/ui/render_text_check.html (model text with markup and script renders as text) for the
# character window and the phone in headless Chromium; fail unless both report PASS.
# Usage: tests/ui/check-render-text.sh   (PORT overrides the local server's port, default 8773)
set -euo pipefail
dir="$(dirname "$0")"
PORT="${PORT:-8773}" bash "$dir/run-page.sh" "render_text_check.html?page=character" 5000
PORT="${PORT:-8773}" bash "$dir/run-page.sh" "render_text_check.html?page=phone" 5000
