#!/usr/bin/env bash
# The workspace's tests (what `cargo test --workspace` runs: every test binary, then the doc
# tests), with the test binaries side by side in lanes instead of one after the other.
#
# Why: `cargo test` runs one binary at a time, and most of a binary's time is waiting (real
# servers, processes, timeouts, Xvfb), not CPU: yui-core's 519 tests take 304 s in all, 154 s on
# 2 threads and about 95 s of CPU. On the 2-core CI machine, lanes and 4 test threads a binary
# took the phase from 278 s to about 130 s (docs/PERFORMANCE.md, "fourth pass").
# Not cargo-nextest: it runs each test in a process of its own, and tests that share a display
# or a device take an in-process lock to run one at a time (crates/yui-x11/tests/support).
#
#   scripts/test-lanes.sh [FILTER]     (FILTER is passed to every test binary, as with cargo test)
# Env: TEST_LANES (default 3) binaries at once; RUST_TEST_THREADS (default 4) threads in each.
# Each binary runs in its package's directory with a temp dir of its own (a test that counts the
# files under TMPDIR must not see another binary's). Exit 1 if any failed; the failed ones'
# whole output is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
LANES=${TEST_LANES:-3}
export RUST_TEST_THREADS=${RUST_TEST_THREADS:-4}
out=$(mktemp -d -t yui-test-lanes-XXXXXX)
trap 'rm -rf "$out"' EXIT

# The binaries cargo would run, from its own build messages: path, package dir, target name.
cargo test --workspace --locked --no-run --message-format=json 2>"$out/build.log" |
  python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        pkg = os.path.dirname(m["manifest_path"])
        print("\t".join([m["executable"], pkg, os.path.basename(pkg) + "/" + m["target"]["name"]]))
' >"$out/list" || { cat "$out/build.log" >&2; exit 1; }
[ -s "$out/list" ] || { echo "test-lanes: cargo listed no test binary" >&2; exit 1; }

# The long binaries (the crates' integration suites) first, so no lane ends with one alone.
awk -F'\t' '$3 ~ /\/integration$/ { print; next } { rest = rest $0 "\n" } END { printf "%s", rest }' "$out/list" >"$out/order"

run_one() {
  local exe=$1 dir=$2 name=$3 log tmp t0 rc=0
  # A log of its own: two targets of one package may share a name (a lib and a bin).
  log=$(mktemp "$out/log-XXXXXX")
  tmp=$(mktemp -d -t yui-tests-XXXXXX)
  t0=$(date +%s)
  (cd "$dir" && TMPDIR="$tmp" CARGO_MANIFEST_DIR="$dir" "$exe" "${FILTER[@]}") >"$log" 2>&1 || rc=$?
  rm -rf "$tmp"
  if [ "$rc" = 0 ]; then
    printf 'ok      %-34s %4s s  %s\n' "$name" "$(($(date +%s) - t0))" "$(grep -m1 '^test result:' "$log" || true)"
  else
    printf 'FAILED  %-34s %4s s  (exit %s)\n' "$name" "$(($(date +%s) - t0))" "$rc"
    printf '%s\t%s\n' "$name" "$log" >>"$out/failed"
  fi
}
FILTER=("$@")
# A lane reads one line at a time under a lock, so lanes never take the same binary.
next() { flock "$out/order.lock" bash -c 'l=$(head -1 "$0"); [ -n "$l" ] || exit 1; sed -i 1d "$0"; printf "%s\n" "$l"' "$out/order"; }
lane() {
  local line exe dir name
  while line=$(next); do
    IFS=$'\t' read -r exe dir name <<<"$line"
    run_one "$exe" "$dir" "$name"
  done
}
t0=$(date +%s)
pids=()
for _ in $(seq 1 "$LANES"); do
  lane &
  pids+=($!)
done
# The doc tests beside the lanes (rustdoc compiles them; none are run by the binaries above).
if ! cargo test --workspace --locked --doc "$@" >"$out/doc.log" 2>&1; then
  echo "FAILED  doc tests" && printf 'doc tests\t%s\n' "$out/doc.log" >>"$out/failed"
else
  echo "ok      doc tests"
fi
for p in "${pids[@]}"; do wait "$p"; done
echo "test-lanes: $(wc -l <"$out/list") test binaries in $LANES lanes, $RUST_TEST_THREADS threads each: $(($(date +%s) - t0)) s"
if [ -s "$out/failed" ]; then
  while IFS=$'\t' read -r name log; do
    printf '\n==> %s\n' "$name"
    cat "$log"
  done <"$out/failed"
  echo "test-lanes: $(wc -l <"$out/failed") failed: $(cut -f1 "$out/failed" | tr '\n' ' ')" >&2
  exit 1
fi
