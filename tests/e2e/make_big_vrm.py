#!/usr/bin/env python3
"""A VRM model of about SIZE MB for load and memory figures (tests/e2e/vrm_figures.sh): a VRM
file's embedded PNG textures replaced by noise PNGs (incompressible, so the file has the size
a textured model of that size has) no wider than 1024 px, so import keeps them as they are and
the window loads the whole file. Only the standard library.

Usage: make_big_vrm.py IN.vrm OUT.vrm [SIZE_MB=10]
"""
import json
import os
import struct
import sys
import zlib


def png(width, height):
    """An RGBA PNG of noise (stored with zlib level 1: noise does not compress)."""
    rows = b"".join(b"\x00" + os.urandom(width * 4) for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))


def main():
    src, out = sys.argv[1], sys.argv[2]
    target = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    data = open(src, "rb").read()
    jlen = struct.unpack("<I", data[12:16])[0]
    doc = json.loads(data[20:20 + jlen])
    at = 20 + jlen
    blen = struct.unpack("<I", data[at:at + 4])[0]
    bin_ = data[at + 8:at + 8 + blen]
    image_views = {img["bufferView"]: i for i, img in enumerate(doc.get("images", []))}
    if not image_views:
        sys.exit(f"{src} has no embedded images to replace")
    # Each image gets an equal share of the bytes: side = sqrt(share / 4), at most 1024.
    share = target * 1024 * 1024 / len(image_views)
    side = min(1024, int((share / 4) ** 0.5))
    views = doc["bufferViews"]
    out_bin = bytearray()
    for i, v in enumerate(views):
        part = png(side, side) if i in image_views else bin_[v.get("byteOffset", 0):v.get("byteOffset", 0) + v["byteLength"]]
        while len(out_bin) % 4:
            out_bin += b"\x00"
        v["byteOffset"] = len(out_bin)
        v["byteLength"] = len(part)
        out_bin += part
    while len(out_bin) % 4:
        out_bin += b"\x00"
    doc["buffers"][0]["byteLength"] = len(out_bin)
    js = json.dumps(doc, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 4)
    total = 12 + 8 + len(js) + 8 + len(out_bin)
    with open(out, "wb") as f:
        f.write(b"glTF" + struct.pack("<II", 2, total))
        f.write(struct.pack("<I", len(js)) + b"JSON" + js)
        f.write(struct.pack("<I", len(out_bin)) + b"BIN\x00" + out_bin)
    print(f"{out}: {total / 1024 / 1024:.1f} MB, {len(image_views)} textures of {side}x{side}")


if __name__ == "__main__":
    main()
