#!/usr/bin/env python3
"""Write a large PNG character card and a full SillyTavern expression pack beside it, for
tests/e2e/measure.sh (the memory of a character imported from a card with its pack).

Usage: make_card.py OUT_DIR  ->  OUT_DIR/Seraphina.png (1024x1536, a chara_card_v2 chunk) and
OUT_DIR/Seraphina/<label>.png for SillyTavern's 28 labels (832x1216, about 0.8 MB each, like a
real pack's illustrations). Standard library only."""
import base64, json, os, struct, sys, zlib

LABELS = ("admiration amusement anger annoyance approval caring confusion curiosity desire "
          "disappointment disapproval disgust embarrassment excitement fear gratitude grief joy love "
          "nervousness neutral optimism pride realization relief remorse sadness surprise").split()


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(w, h, seed, extra=b""):
    """An RGB image: a smooth gradient with a band of noise (so it compresses like a picture)."""
    rows = []
    for y in range(h):
        if (y + seed) % 4 == 0:
            rows.append(b"\0" + os.urandom(w * 3))
        else:
            v = (y * 255 // h + seed * 9) % 256
            rows.append(b"\0" + bytes((v, 255 - v, (v + 80) % 256)) * w)
    raw = zlib.compress(b"".join(rows), 6)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + extra + chunk(b"IEND", b"")


def main(out):
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Seraphina", "description": "{{char}} guards a forest glade.", "personality": "kind"}}
    text = b"chara\0" + base64.b64encode(json.dumps(card).encode())
    os.makedirs(os.path.join(out, "Seraphina"), exist_ok=True)
    with open(os.path.join(out, "Seraphina.png"), "wb") as f:
        f.write(png(1024, 1536, 0, chunk(b"tEXt", text)))
    for i, label in enumerate(LABELS):
        with open(os.path.join(out, "Seraphina", f"{label}.png"), "wb") as f:
            f.write(png(832, 1216, i + 1))


if __name__ == "__main__":
    main(sys.argv[1])
