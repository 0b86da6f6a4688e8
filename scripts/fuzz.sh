#!/usr/bin/env bash
# The cargo-fuzz targets of fuzz/ (docs/FUZZING.md). Needs the nightly toolchain and cargo-fuzz
# (scripts/dev.sh installs both).
#   scripts/fuzz.sh smoke [targets...]        build every target (one unoptimized build), run each
#                                             SMOKE_SECS (default 20) seconds, two at a time
#                                             (FUZZ_JOBS); fails on any crash (CI)
#   scripts/fuzz.sh long [secs] [targets...]  run each for secs (default 1800) and print a table
#                                             of target / executions / seconds / crashes
#   scripts/fuzz.sh build                     build every target as `smoke` does, run none
#                                             (CI builds early, runs after the unit tests)
#   scripts/fuzz.sh list                      the target names
# New inputs go to fuzz/corpus/<target>/ (not committed), read together with the committed seeds
# in fuzz/seeds/<target>/. A crash leaves its input in fuzz/artifacts/<target>/ and the run's
# log in fuzz/logs/<target>.log; reproduce with
#   cargo +nightly fuzz run -s none <target> fuzz/artifacts/<target>/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# No sanitizer: the code under test is safe Rust, so what we hunt is panics, overflows (debug
# assertions are on), hangs and runaway memory, none of which needs ASan; and the build is
# shorter without it. `long` builds optimized (more executions per second); `smoke` builds with
# --dev: a cold optimized build of yui-core's dependency tree costs ~24 CPU-minutes, too much for
# CI's time limit (docs/FUZZING.md has the figures).
BUILD=(-s none)
# Inputs up to 64 KiB (a long streamed reply), 10 s per input is a hang, 2 GiB is runaway memory.
RUN_FLAGS=(-max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

all_targets() { cargo +nightly fuzz list; }

# run_one <target> <secs>: prints "target execs secs crashes" on stdout, the log to fuzz/logs.
run_one() {
  local t=$1 secs=$2 log start end execs crashes before after rc=0
  mkdir -p "fuzz/corpus/$t" "fuzz/seeds/$t" "fuzz/regressions/$t" "fuzz/artifacts/$t" fuzz/logs
  log="fuzz/logs/$t.log"
  before=$(find "fuzz/artifacts/$t" -type f | wc -l)
  start=$(date +%s)
  cargo +nightly fuzz run "${BUILD[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" "fuzz/regressions/$t" -- \
    "${RUN_FLAGS[@]}" -max_total_time="$secs" >"$log" 2>&1 || rc=$?
  end=$(date +%s)
  after=$(find "fuzz/artifacts/$t" -type f | wc -l)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$((after - before))
  if [ "$rc" != 0 ] && [ "$crashes" = 0 ]; then crashes="rc=$rc"; fi
  # The targets' temp stores (<temp>/yui-fuzz-<pid>): libFuzzer exits without destructors.
  local d
  for d in "${TMPDIR:-/tmp}"/yui-fuzz-*; do
    [ -d "$d" ] && ! kill -0 "${d##*-}" 2>/dev/null && rm -rf "$d"
  done
  printf '%s %s %s %s\n' "$t" "${execs:-?}" "$((end - start))" "$crashes"
}

table() {
  printf '%-18s %14s %8s %8s\n' target executions seconds crashes
  while read -r t e s c; do printf '%-18s %14s %8s %8s\n' "$t" "$e" "$s" "$c"; done
}

cmd=${1:-}
shift || true
case "$cmd" in
  list) all_targets ;;
  build) cargo +nightly fuzz build "${BUILD[@]}" --dev ;;
  smoke | long)
    if [ "$cmd" = smoke ]; then
      secs=${SMOKE_SECS:-20}
      BUILD+=(--dev)
    else
      secs=1800
      if [[ ${1:-} =~ ^[0-9]+$ ]]; then secs=$1; shift; fi
    fi
    if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(all_targets); fi
    t0=$(date +%s)
    echo "==> cargo fuzz build (all targets, one build)" >&2
    cargo +nightly fuzz build "${BUILD[@]}"
    echo "==> built in $(($(date +%s) - t0)) s; running ${#targets[@]} targets for ${secs} s each" >&2
    # JOBS targets at a time (the smoke: 2, one per core; libFuzzer runs on one thread).
    jobs=${FUZZ_JOBS:-1}
    if [ "$cmd" = smoke ]; then jobs=${FUZZ_JOBS:-2}; fi
    rowdir=$(mktemp -d)
    i=0
    for t in "${targets[@]}"; do
      (run_one "$t" "$secs" >"$rowdir/$(printf '%03d' "$i")") &
      i=$((i + 1))
      if [ $((i % jobs)) = 0 ]; then wait; fi
    done
    wait
    rows=()
    for f in "$rowdir"/*; do
      row=$(cat "$f")
      echo "$row" >&2
      rows+=("$row")
    done
    rm -rf "$rowdir"
    printf '%s\n' "${rows[@]}" | table
    echo "total $(($(date +%s) - t0)) s" >&2
    failed=0
    for r in "${rows[@]}"; do
      c=${r##* }
      if [ "$c" != 0 ]; then
        failed=1
        echo "crash in ${r%% *}: see fuzz/logs/${r%% *}.log and fuzz/artifacts/${r%% *}/" >&2
      fi
    done
    exit "$failed"
    ;;
  *)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
