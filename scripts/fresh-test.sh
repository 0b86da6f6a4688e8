#!/usr/bin/env bash
# The README's test command on a fresh machine: a clean clone of a commit, run with
# `scripts/dev.sh test` inside a freshly debootstrapped Debian 12 root, as a new user (root, as
# CI) would. The root gets what a new machine of this project's kind has before anything runs
# (/work/.library/env: Rust by rustup with nightly beside stable, CPython by pyenv, gcc, git,
# curl, Node.js 20 with npm): the host's toolchains are bound into it (Node.js is installed from
# the machine's own package); its cargo registry, apt packages and everything else start empty.
# Not part of CI (it downloads a
# base system, ~1 GB of packages and the crates); run it to measure the fresh-machine figure of
# issue 35 and write it into docs/PERFORMANCE.md.
#   scripts/fresh-test.sh [REV]            (as root; REV defaults to HEAD)
# Prints dev.sh's phase table and the total. Env: DISPLAY_NUM (default 170) and DRIVER_PORT
# (default 4740): the root shares the host's network, so its X servers and drivers need numbers
# nobody else on the machine uses; FRESH_ROOT (default /var/tmp/yui-fresh-test, made anew);
# FRESH_MIRROR; FRESH_KEEP=1 keeps the root; FRESH_NICE (default 0) runs the test command at
# that niceness (e.g. -10 on a machine others share, so the figure is closer to an idle one).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse --verify "${1:-HEAD}^{commit}")
ROOT=${FRESH_ROOT:-/var/tmp/yui-fresh-test}
DISPLAY_NUM=${DISPLAY_NUM:-170}
DRIVER_PORT=${DRIVER_PORT:-4740}
FRESH_NAME=fresh-test
# shellcheck source=scripts/lib/fresh-root.sh
. scripts/lib/fresh-root.sh
trap fresh_cleanup EXIT
fresh_debootstrap
fresh_machine

t0=$(now)
say "scripts/dev.sh test (log: /tmp/fresh-test.log)"
rc=0
in_machine DISPLAY_NUM="$DISPLAY_NUM" DRIVER_PORT="$DRIVER_PORT" \
  nice -n "${FRESH_NICE:-0}" bash -c 'cd /root/yui && bash .ci/run' >/tmp/fresh-test.log 2>&1 || rc=$?
total=$(($(now) - t0))
# dev.sh's own phase table (printed at the end, also on failure).
sed -n '/phase times/,$p' /tmp/fresh-test.log >&2 || true
[ "$rc" = 0 ] || { tail -40 /tmp/fresh-test.log >&2; fail "scripts/dev.sh test exited $rc after ${total} s"; }
say "ok: scripts/dev.sh test on a fresh Debian 12 in ${total} s ($((total / 60)) min $((total % 60)) s), load $(cut -d' ' -f1-3 /proc/loadavg)"
