#!/usr/bin/env bash
# Crash safety of the real app: kill -9 of yui-app at N random points while it writes (relation
# writes and transcript writes), each followed by integrity_check, the accepted-ratings check and
# a clean restart (tests/e2e/crash.rs). Runs under Xvfb through tests/e2e/run.sh.
#
# Usage: scripts/crash.sh [N] [SEED]   (N default 100; SEED replays a run's kill points)
# Env: DISPLAY_NUM, DRIVER_PORT as for tests/e2e/run.sh. The CLI's fast version (100 kills of
# `yui converse`, in CI): cargo test -p yui-cli --test integration crash_cli:: -- --nocapture
set -euo pipefail
cd "$(dirname "$0")/.."
export YUI_CRASH_N="${1:-100}"
[ -n "${2:-}" ] && export YUI_CRASH_SEED="$2"
exec bash tests/e2e/run.sh kill_9_of_the_app --nocapture
