#!/usr/bin/env bash
# Run tests/ui/expression_check.html (the settings Expression panel) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-expression.sh   (PORT overrides the local server's port, default 8774)
PORT="${PORT:-8774}" exec bash "$(dirname "$0")/run-page.sh" expression_check.html 15000
