#!/usr/bin/env bash
# What a frame of a transparent WebKitGTK window costs with no YUI in it (docs/PERFORMANCE.md,
# "Idle CPU"): builds tests/e2e/frame_cost/window.c (a bare window like a character window),
# starts Xvfb + openbox + xcompmgr, and runs frame_cost.py for each configuration given, e.g.
#   tests/e2e/frame_cost.sh "" WEBKIT_SKIA_ENABLE_CPU_RENDERING=1 WEBKIT_DISABLE_COMPOSITING_MODE=1
# ("" = WebKit as it comes; window.c also reads W, H, BG_ALPHA, FEATURES). GHOST=1 checks for
# pixels left behind instead. Env: DISPLAY_NUM (66), N, RATE, PAGES, CHANGES, TOP (frame_cost.py's
# head lists them). Needs gcc, libwebkit2gtk-4.1-dev, python3, imagemagick. Not part of CI: a script you run and report.
set -euo pipefail
cd "$(dirname "$0")/../.."
DISPLAY_NUM="${DISPLAY_NUM:-66}"
. tests/e2e/desktop.sh
start_desktop frame-cost 1280x800
bin="$LOG_DIR/window"
# shellcheck disable=SC2046 # pkg-config's flags are meant to split
gcc -O2 -o "$bin" tests/e2e/frame_cost/window.c $(pkg-config --cflags --libs webkit2gtk-4.1)
python3 tests/e2e/frame_cost/frame_cost.py "$bin" ui "$@"
