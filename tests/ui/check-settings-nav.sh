#!/usr/bin/env bash
# Run tests/ui/settings_nav_check.html (the settings window's section list) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-settings-nav.sh   (PORT overrides the local server's port, default 8776)
PORT="${PORT:-8776}" exec bash "$(dirname "$0")/run-page.sh" settings_nav_check.html 15000
