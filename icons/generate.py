#!/usr/bin/env python3
"""Generate YUI's PNG icons (app, tray) with the standard library only: no PIL, no assets.

A rose round face with two eyes and a smile, anti-aliased by 4x4 supersampling.
Run: python3 icons/generate.py   (writes next to this script)
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"32x32.png": 32, "128x128.png": 128, "128x128@2x.png": 256, "icon.png": 512, "tray.png": 64}

FACE = (0xF4, 0x8F, 0xB1)
HAIR = (0x5B, 0x3A, 0x6E)
EYE = (0x2B, 0x1B, 0x33)
CHEEK = (0xFF, 0x6F, 0x91)


def shade(x, y):
    """Colour (r,g,b,a) of the unit-square point (x,y), y down."""
    cx, cy = 0.5, 0.53
    d = math.hypot(x - cx, y - cy)
    if d > 0.46:
        return (0, 0, 0, 0)
    # hair cap: the upper part of the circle
    if y < 0.36 + 0.06 * math.cos((x - 0.5) * 9):
        return HAIR + (255,)
    for ex in (0.36, 0.64):
        if ((x - ex) / 0.05) ** 2 + ((y - 0.55) / 0.08) ** 2 <= 1:
            return EYE + (255,)
        if ((x - ex + (0.03 if ex < 0.5 else -0.03)) / 0.06) ** 2 + ((y - 0.68) / 0.035) ** 2 <= 1:
            return CHEEK + (255,)
    # smile: an arc under the eyes
    sd = math.hypot(x - 0.5, y - 0.62)
    if 0.10 <= sd <= 0.13 and y > 0.68:
        return EYE + (255,)
    return FACE + (255,)


def render(n, ss=4):
    rows = []
    for j in range(n):
        row = bytearray([0])  # filter type 0
        for i in range(n):
            acc = [0, 0, 0, 0]
            for sj in range(ss):
                for si in range(ss):
                    r, g, b, a = shade((i + (si + 0.5) / ss) / n, (j + (sj + 0.5) / ss) / n)
                    acc[0] += r * a
                    acc[1] += g * a
                    acc[2] += b * a
                    acc[3] += a
            a = acc[3]
            if a == 0:
                row += bytes(4)
            else:
                row += bytes([acc[0] // a, acc[1] // a, acc[2] // a, a // (ss * ss)])
        rows.append(bytes(row))
    return b"".join(rows)


def png(n, raw):
    def chunk(tag, data):
        c = tag + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", n, n, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    for name, n in SIZES.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(png(n, render(n, 4 if n <= 256 else 2)))
        print("wrote", name)
