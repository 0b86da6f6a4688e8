# Shared by scripts/fresh-debian.sh and scripts/fresh-test.sh (sourced, not run): a minimal
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
