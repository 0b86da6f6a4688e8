#!/usr/bin/env python3
"""What a WebKit web process keeps alive, by C++ class (its vtable), between two snapshots.

Run the app with `Malloc=1` (WebKit's own allocators then call glibc's malloc), so every
object lands in glibc's main arena, `[heap]`. `snap` reads that arena from /proc/PID/mem (root,
no need to stop the process) and walks its chunks; `diff` prints, for the chunks in use, the
sizes and the vtables (library + offset: the library has no symbols, but the offset names one
class across snapshots) that grew. Found the renderers WebKit 2.50 kept of every face YUI
replaced (docs/PERFORMANCE.md, "Faces drawn once").

  tests/e2e/webheap.py snap PID OUT      # OUT.json, OUT.raw, OUT.maps
  tests/e2e/webheap.py diff BEFORE AFTER [N]
"""
import collections
import json
import struct
import sys


def chunks(data):
    """(offset, size, in use) of every chunk of a glibc heap image."""
    out, off = [], 0
    while off + 16 <= len(data):
        size = struct.unpack_from("<Q", data, off + 8)[0] & ~7
        if size < 16 or off + size > len(data):
            break
        out.append([off, size, True])
        off += size
    # A chunk is free when the next one's PREV_INUSE bit is clear (tcache and fastbin chunks
    # count as in use: at most a few per size).
    for i in range(len(out) - 1):
        out[i][2] = bool(struct.unpack_from("<Q", data, out[i + 1][0] + 8)[0] & 1)
    return out


def snap(pid, out):
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    heap = next(line for line in maps if line.endswith("[heap]"))
    lo, hi = (int(x, 16) for x in heap.split()[0].split("-"))
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(lo)
        data = mem.read(hi - lo)
    open(out + ".raw", "wb").write(data)
    open(out + ".maps", "w").write("\n".join(maps))
    used = [c for c in chunks(data) if c[2]]
    json.dump({"lo": lo, "len": len(data)}, open(out + ".json", "w"))
    print(f"heap {len(data) >> 10} KiB, in use {sum(c[1] for c in used) >> 10} KiB "
          f"in {len(used)} chunks")


def census(path):
    """Chunks in use by size, and by (vtable, size) where the first word points into a library."""
    data = open(path + ".raw", "rb").read()
    maps = []
    for line in open(path + ".maps"):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if len(f) > 5 and ".so" in f[5]:
            maps.append((lo, hi, int(f[2], 16), f[5].rsplit("/", 1)[-1]))
    by_size, by_class = collections.Counter(), collections.Counter()
    for off, size, used in chunks(data):
        if not used:
            continue
        by_size[size] += 1
        word = struct.unpack_from("<Q", data, off + 16)[0] if size >= 24 else 0
        for lo, hi, foff, name in maps:
            if lo <= word < hi:
                by_class[(f"{name}+{word - lo + foff:#x}", size)] += 1
                break
    return by_size, by_class


def diff(before, after, n):
    (s0, c0), (s1, c1) = census(before), census(after)
    grew = sorted(((s1[k] - s0[k]) * k, k, s1[k] - s0[k]) for k in s1 | s0)
    print(f"in use: {sum(k * v for k, v in s0.items()) >> 10} -> "
          f"{sum(k * v for k, v in s1.items()) >> 10} KiB; sizes that grew most:")
    for total, size, count in reversed(grew[-n:]):
        print(f"  {size:8d} B  {count:+7d}  {total / 1024:+9.1f} KiB")
    print("classes (vtable) that grew most:")
    for (vt, size), count in sorted(c1.items(), key=lambda kv: c0[kv[0]] - kv[1])[:n]:
        print(f"  {count - c0[(vt, size)]:+7d}  ({count} now)  {size:5d} B  {vt}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "snap":
        snap(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "diff":
        diff(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 12)
    else:
        sys.exit(__doc__)
