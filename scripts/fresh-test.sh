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
# What a fresh machine's test run needs besides the base system: shared memory and ptys (WebKit,
# Chromium, sudo-less apt's dpkg), and the tools to fetch the code.
mkdir -p "$ROOT/dev/shm" "$ROOT/dev/pts"
mount -t tmpfs -o mode=1777 shm "$ROOT/dev/shm"; MOUNTS+=("$ROOT/dev/shm")
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$ROOT/dev/pts"; MOUNTS+=("$ROOT/dev/pts")
in_root apt-get update -qq >/dev/null
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  git curl ca-certificates gcc g++ make libc6-dev >/tmp/fresh-test-pre.log 2>&1 ||
  { tail -20 /tmp/fresh-test-pre.log >&2; fail "apt-get install git curl gcc"; }
# The machine's own trust and registry settings: its egress proxy's CA certificates (every
# registry is reached through it), npm's and pip's configuration.
cp /usr/local/share/ca-certificates/* "$ROOT/usr/local/share/ca-certificates/" 2>/dev/null || true
in_root update-ca-certificates >/dev/null 2>&1 || fail "update-ca-certificates"
for f in /root/.npmrc /etc/pip.conf; do [ -f "$f" ] && cp "$f" "$ROOT$f"; done
# The machine's Node.js and npm: its nodejs package (NodeSource's Node.js 20), repacked from this
# machine's dpkg database once (kept in FRESH_CACHE), then its upgraded npm laid over the
# package's, as the machine has them. Without them dev.sh installs Debian's nodejs and npm
# (~400 packages, 200 s) that the real machine never needs.
FRESH_CACHE=${FRESH_CACHE:-/var/tmp/yui-fresh-cache}
if [ ! -f "$FRESH_CACHE/nodejs.deb" ]; then
  command -v dpkg-repack >/dev/null || fail "dpkg-repack is missing (apt install dpkg-repack)"
  mkdir -p "$FRESH_CACHE"
  (cd "$FRESH_CACHE" && dpkg-repack nodejs >/dev/null 2>&1 && mv nodejs_*.deb nodejs.deb) ||
    fail "dpkg-repack nodejs"
fi
cp "$FRESH_CACHE/nodejs.deb" "$ROOT/tmp/nodejs.deb"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/nodejs.deb \
  >/tmp/fresh-test-node.log 2>&1 || { tail -20 /tmp/fresh-test-node.log >&2; fail "install the machine's nodejs"; }
rm -rf "$ROOT/usr/lib/node_modules/npm" && cp -a /usr/lib/node_modules/npm "$ROOT/usr/lib/node_modules/"
say "the machine's Node.js $(in_root node --version) and npm $(in_root npm --version)"
mkdir -p "$ROOT/opt/wheels"
# The machine's preinstalled toolchains (no registry here serves rustup).
for d in /root/.rustup /root/.cargo/bin /root/.pyenv; do
  [ -d "$d" ] || fail "$d is missing on this machine"
  bind "$d" "$d"
done
git clone -q --no-local . "$ROOT/root/yui"
git -C "$ROOT/root/yui" checkout -q --detach "$rev"
say "clean clone of $(git log -1 --format='%h %s' "$rev")"

t0=$(now)
say "scripts/dev.sh test (log: /tmp/fresh-test.log)"
rc=0
chroot "$ROOT" env -i PATH=/root/.cargo/bin:/root/.pyenv/shims:/root/.pyenv/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  PYENV_ROOT=/root/.pyenv HOME=/root LANG=C.UTF-8 USER=root \
  $(env | grep -E '^[A-Z_0-9]*(CA_CERTS|CA_BUNDLE|CAINFO|SSL_CERT_[A-Z]*|_CERT|SSL_ROOTS_FILE_PATH)=' | tr '\n' ' ') \
  DISPLAY_NUM="$DISPLAY_NUM" DRIVER_PORT="$DRIVER_PORT" \
  nice -n "${FRESH_NICE:-0}" bash -c 'cd /root/yui && bash .ci/run' >/tmp/fresh-test.log 2>&1 || rc=$?
total=$(($(now) - t0))
# dev.sh's own phase table (printed at the end, also on failure).
sed -n '/phase times/,$p' /tmp/fresh-test.log >&2 || true
[ "$rc" = 0 ] || { tail -40 /tmp/fresh-test.log >&2; fail "scripts/dev.sh test exited $rc after ${total} s"; }
say "ok: scripts/dev.sh test on a fresh Debian 12 in ${total} s ($((total / 60)) min $((total % 60)) s), load $(cut -d' ' -f1-3 /proc/loadavg)"
