#!/usr/bin/env bash
# Run tests/ui/vrm_motions_check.html (Settings → Characters: a VRM character's .vrma motions and
# the characters' size) in headless Chromium; fail unless it reports PASS.
# Usage: tests/ui/check-vrm-motions.sh   (PORT overrides the local server's port, default 8783)
PORT="${PORT:-8783}" exec bash "$(dirname "$0")/run-page.sh" vrm_motions_check.html 20000
