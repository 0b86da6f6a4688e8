#!/usr/bin/env bash
# Run tests/ui/shortcut_check.html (Settings → Voice's push-to-talk shortcut: the keys the
# desktop bound, read again after a rebinding) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-shortcut.sh   (PORT overrides the local server's port, default 8783)
set -euo pipefail
PORT="${PORT:-8783}" bash "$(dirname "$0")/run-page.sh" shortcut_check.html 5000
