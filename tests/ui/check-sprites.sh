#!/usr/bin/env bash
# Run tests/ui/sprites_check.html (sprite sets on the character) in headless Chromium; fail
# unless it reports PASS. Usage: tests/ui/check-sprites.sh   (needs python3 and chromium)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
port="${PORT:-8772}"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$root" >/dev/null 2>&1 &
server=$!
trap 'kill "$server"' EXIT
sleep 0.5
out="$(chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --virtual-time-budget=15000 --dump-dom "http://127.0.0.1:$port/tests/ui/sprites_check.html" 2>/dev/null)"
result="$(printf '%s' "$out" | sed -n 's/.*<pre id="result">\([^<]*\)<\/pre>.*/\1/p')"
echo "${result:-no result}"
[[ "$result" == PASS* ]]
