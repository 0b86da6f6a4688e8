# Shared by scripts/fresh-debian.sh, fresh-test.sh and fresh-run.sh (sourced, not run): a minimal
# Debian 12 root made with debootstrap, the mounts a program inside it needs, and their cleanup.
# The caller sets ROOT and may set FRESH_MIRROR and FRESH_KEEP=1 (keep the root afterwards).
SUITE=bookworm
MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian}
MOUNTS=()
PIDS=()
say() { printf '%s: %s\n' "$FRESH_NAME" "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
now() { date +%s; }
fresh_cleanup() {
  local pid i
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  # Whatever still runs inside the root (a test's server, a driver whose parent died) goes too:
  # it would hold its ports (the host's network) into the next run.
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTS[$i]}" 2>/dev/null || true; done
  if [ "${FRESH_KEEP:-0}" != 1 ] && [ -d "$ROOT" ]; then rm -rf --one-file-system "$ROOT"; fi
}
bind() {
  if [ -d "$1" ]; then mkdir -p "$ROOT$2"; else mkdir -p "$(dirname "$ROOT$2")"; touch "$ROOT$2"; fi
  mount --bind "$1" "$ROOT$2"
  MOUNTS+=("$ROOT$2")
}
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
# debootstrap a minbase root into $ROOT (made anew); sets t_boot, base_pkgs, base_size.
fresh_debootstrap() {
  [ "$(id -u)" = 0 ] || { echo "$FRESH_NAME: run as root (debootstrap, chroot, mount)" >&2; exit 1; }
  command -v debootstrap >/dev/null || fail "debootstrap is missing (apt-get install debootstrap)"
  if [ -d "$ROOT" ]; then rm -rf --one-file-system "$ROOT"; fi
  local t0
  t0=$(now)
  say "debootstrap --variant=minbase $SUITE from $MIRROR into $ROOT"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"/tmp/$FRESH_NAME-debootstrap.log" 2>&1 ||
    { tail -20 "/tmp/$FRESH_NAME-debootstrap.log" >&2; fail "debootstrap (log: /tmp/$FRESH_NAME-debootstrap.log)"; }
  t_boot=$(($(now) - t0))
  base_pkgs=$(in_root dpkg-query -W -f='.\n' | wc -l)
  base_size=$(du -sm --one-file-system "$ROOT" | cut -f1)
  say "base system: $base_pkgs packages, $base_size MiB, ${t_boot} s"
  mount -t proc proc "$ROOT/proc"; MOUNTS+=("$ROOT/proc")
  bind /dev /dev
  bind /sys /sys
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
}
# A fresh machine of this project's kind (/work/.library/env): shared memory and ptys (WebKit,
# Chromium, dpkg), git, curl and gcc, the machine's egress CA and registry settings, its Node.js
# and npm, its Rust (rustup) and CPython (pyenv) toolchains bound in; then a clean clone of the
# commit $rev at /root/yui. Everything else (crates, apt packages) starts empty.
fresh_machine() {
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
}
# Run a command in the root as root with the machine's toolchains on PATH, from /root/yui.
in_machine() {
  chroot "$ROOT" env -i PATH=/root/.cargo/bin:/root/.pyenv/shims:/root/.pyenv/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYENV_ROOT=/root/.pyenv HOME=/root LANG=C.UTF-8 USER=root \
    $(env | grep -E '^[A-Z_0-9]*(CA_CERTS|CA_BUNDLE|CAINFO|SSL_CERT_[A-Z]*|_CERT|SSL_ROOTS_FILE_PATH)=' | tr '\n' ' ') \
    "$@"
}
