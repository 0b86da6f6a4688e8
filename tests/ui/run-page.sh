#!/usr/bin/env bash
# Serve the repo on 127.0.0.1:$PORT and load tests/ui/PAGE in headless Chromium; print the
# page's <pre id="result"> and fail unless it starts with PASS. The check-*.sh scripts call this.
# Usage: tests/ui/run-page.sh PAGE BUDGET_MS   (PORT: the server's port; needs python3, chromium)
set -euo pipefail
page="$1"
budget="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
port="${PORT:?PORT must be set}"
[[ "$port" =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || { echo "PORT=$port is not a TCP port" >&2; exit 2; }
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$root" >/dev/null 2>&1 &
server=$!
trap 'kill "$server"' EXIT
# Wait for the server (up to 5 s) rather than guess how long it takes to start.
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
# Headless Chromium's virtual time does not wait for its GPU process: while SwiftShader compiles
# shaders on a loaded machine the page looks idle, its timers run ahead, and the budget can run
# out before the page is done (it still says "RUNNING…"). Only that is tried again, with twice
# the budget (3 tries); a FAIL fails at once.
for attempt in 1 2 3; do
  out="$(chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --virtual-time-budget="$budget" --dump-dom "http://127.0.0.1:$port/tests/ui/$page" 2>/dev/null)" || true
  result="$(printf '%s' "$out" | sed -n 's/.*<pre id="result">\([^<]*\)<\/pre>.*/\1/p')"
  [[ ( "$result" == RUNNING* || -z "$result" ) && $attempt -lt 3 ]] || break
  echo "$page: the budget ran out at \"${result:-no result}\" (try $attempt of 3); again with $((budget * 2)) ms" >&2
  budget=$((budget * 2))
done
echo "${result:-no result}"
[[ "$result" == PASS* ]]
