#!/usr/bin/env python3
"""Per-paint cost of a character window (run by tests/e2e/paint_cost.sh): with every character
asleep (nothing plays), change the main window N times at RATE Hz from inside the page, five
ways (two of them a `will-change` layer's transform or opacity: a frame with nothing painted),
and count the CPU ticks of the app's process tree against the same time with no change.
Args: the app binary, its data dir. Env: DRIVER (tauri-driver's URL), N, RATE."""
import json, os, subprocess, sys, time, urllib.request

from proctree import ticks

DRIVER = os.environ.get("DRIVER", "http://127.0.0.1:4465")
APP, DATA = sys.argv[1], sys.argv[2]
N, RATE = int(os.environ.get("N", "200")), float(os.environ.get("RATE", "10"))

def req(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(DRIVER + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(r, timeout=120) as f:
        return json.loads(f.read())["value"]

sid = req("POST", "/session", {"capabilities": {"alwaysMatch": {"tauri:options": {"application": APP, "args": ["--data-dir", DATA]}}}})["sessionId"]
try:
    time.sleep(20)
    app = int(subprocess.check_output(["pgrep", "-n", "-f", APP]).split()[0])
    for h in req("GET", f"/session/{sid}/window/handles"):
        req("POST", f"/session/{sid}/window", {"handle": h})
        label = req("POST", f"/session/{sid}/execute/sync", {"script": "return window.__TAURI__ ? window.__TAURI__.window.getCurrentWindow().label : null", "args": []})
        if label == "main":
            break
    asleep = req("POST", f"/session/{sid}/execute/sync", {"script": "return document.querySelector('#character .yui-char')?.dataset.asleep", "args": []})
    print("main asleep:", asleep)
    hz = os.sysconf("SC_CLK_TCK")
    secs = N / RATE
    VARIANTS = {
      "quiet": None,
      "root data-frame (blink)": "const c = document.querySelector('#character .yui-char'); const f = (i) => { c.dataset.frame = (i % 2) ? '' : 'blink-shut'; };",
      "eyes inline transform": "const e = document.querySelector('#character .yui-face .eyes'); const f = (i) => { e.style.transform = (i % 2) ? '' : 'scaleY(0.1)'; };",
      "layer transform (no paint)": "let d = document.getElementById('pl'); if (!d) { d = document.createElement('div'); d.id = 'pl'; d.style.cssText = 'position:absolute;left:60px;top:80px;width:40px;height:12px;background:#333;will-change:transform'; document.body.appendChild(d); } const f = (i) => { d.style.transform = (i % 2) ? '' : 'scaleY(0.1)'; };",
      "layer opacity (no paint)": "let d = document.getElementById('po'); if (!d) { d = document.createElement('div'); d.id = 'po'; d.style.cssText = 'position:absolute;left:60px;top:100px;width:40px;height:12px;background:#333;will-change:opacity'; document.body.appendChild(d); } const f = (i) => { d.style.opacity = (i % 2) ? '1' : '0'; };",
      "1px div colour": "let d = document.getElementById('pp'); if (!d) { d = document.createElement('div'); d.id = 'pp'; d.style.cssText = 'position:absolute;left:0;top:0;width:1px;height:1px'; document.body.appendChild(d); } const f = (i) => { d.style.background = (i % 2) ? 'red' : 'blue'; };",
    }
    hz = os.sysconf("SC_CLK_TCK")
    secs = N / RATE
    res = {}
    for name, js in VARIANTS.items():
        t0 = ticks(app)
        if js:
            req("POST", f"/session/{sid}/execute/sync", {"script": js + f" let i = 0; const id = setInterval(() => {{ f(i); if (++i >= {N}) clearInterval(id); }}, {1000 / RATE}); return 1;", "args": []})
        time.sleep(secs + 0.5)
        t1 = ticks(app)
        res[name] = {k: (t1.get(k, 0) - t0.get(k, 0)) * 1000 / hz for k in t1}
    q = res["quiet"]
    print(f"{N} changes at {RATE} Hz over {secs:.0f} s each")
    for name, r in res.items():
        parts = ", ".join(f"{k.split()[0]} {(r[k] - q.get(k, 0)) / N:.2f}" for k in sorted(r) if "Network" not in k)
        print(f"  {name:26s} total {sum(r.values()):6.0f} ms; per change over quiet: {(sum(r.values()) - sum(q.values())) / N:.2f} ms ({parts})")
finally:
    req("DELETE", f"/session/{sid}")
