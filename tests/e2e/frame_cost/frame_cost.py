#!/usr/bin/env python3
"""What one frame of a transparent WebKitGTK window costs, outside YUI (run by frame_cost.sh).

For each configuration (environment assignments, e.g. "WEBKIT_SKIA_ENABLE_CPU_RENDERING=1") and
each change, window.c shows a page that makes the change N times at RATE Hz after a settle; the
CPU ticks of the window's process tree (per thread) during the changes, minus an equally long
quiet stretch after them, divided by N, is the cost of one change. Pages: `shapes`, a small SVG
figure; `character`, YUI's own character (ui/character) with its ambient motions held off.
Changes: `px` (a 1-pixel div's colour: a frame with next to nothing painted), `layer` (the
transform of a `will-change` div: a frame with nothing painted), `blink`, `breathe`, `sway` (the
character's ambient frames). `GHOST=1` instead checks whether what moved leaves pixels behind.
Args: WINDOW_BINARY UI_DIR CONFIG... Env: N (100), RATE (10), CHANGES, PAGES, TOP (threads shown)."""
import atexit, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from proctree import thread_ticks  # noqa: E402

HZ = os.sysconf("SC_CLK_TCK")
WINDOW, UI = sys.argv[1], os.path.abspath(sys.argv[2])
CONFIGS = sys.argv[3:] or [""]
N, RATE = int(os.environ.get("N", "100")), float(os.environ.get("RATE", "10"))
SETTLE = 8
TMP = tempfile.mkdtemp(prefix="yui-frame-cost-")
atexit.register(shutil.rmtree, TMP, True)

SHAPES = """<svg width=200 height=280 viewBox="0 0 200 280"><g class=yui-whole><ellipse cx=100 cy=200 rx=60 ry=70 fill="#c8a"/>
<circle cx=100 cy=110 r=60 fill="#fdb"/><path d="M40 100 Q100 20 160 100 L160 70 Q100 0 40 70Z" fill="#533"/>
<g class=eyes style="transform-origin:100px 120px"><ellipse cx=78 cy=120 rx=7 ry=11 fill="#222"/><ellipse cx=122 cy=120 rx=7 ry=11 fill="#222"/></g>
<path d="M88 150 Q100 160 112 150" stroke="#a44" fill=none stroke-width=3/></g></svg><script>window.root = null;</script>"""
CHARACTER = f"""<link rel=stylesheet href="file://{UI}/character/character.css"><div id=c style="width:220px;height:300px"></div>
<script type=module>
import {{ createCharacter }} from 'file://{UI}/character/character.js';
const ch = createCharacter(document.getElementById('c'), {{ palette: 'rose', size: 200 }});
ch.setCrowd(1e6); // no ambient motion of its own while we measure
window.root = document.querySelector('.yui-char');
</script>"""
PAGES = {"shapes": SHAPES, "character": CHARACTER}
FRAME = "f = (i) => {{ if (root) root.dataset.frame = (i % 2) ? '' : '{}'; else document.querySelector('{}').style.transform = (i % 2) ? '' : '{}'; }};"
CHANGES = {
    "px": "const d = document.createElement('div'); d.style.cssText = 'position:absolute;left:0;top:0;width:1px;height:1px'; document.body.appendChild(d); f = (i) => { d.style.background = (i % 2) ? 'red' : 'blue'; };",
    "layer": "const d = document.createElement('div'); d.style.cssText = 'position:absolute;left:60px;top:80px;width:40px;height:12px;background:#333;will-change:transform'; document.body.appendChild(d); f = (i) => { d.style.transform = (i % 2) ? '' : 'scaleY(0.1)'; };",
    "blink": FRAME.format("blink-shut", ".eyes", "scaleY(0.1)"),
    "breathe": FRAME.format("breathe-2", ".yui-whole", "scale(1.012,1.025)"),
    "sway": FRAME.format("sway-l", ".yui-whole", "rotate(-3deg)"),
}

def ticks(pid):
    return thread_ticks(pid, lambda p, comm: "web" if "WebProces" in comm else "ui" if p == pid else comm)

def launch(page, body_js, config):
    path = os.path.join(TMP, "page.html")
    with open(path, "w") as f:
        f.write(f"<!doctype html><html><body style='margin:0;background:transparent'>{PAGES[page]}<script>{body_js}</script></body></html>")
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in config.split())
    return subprocess.Popen([WINDOW, path], env=env, stderr=subprocess.DEVNULL)

def cost(page, change, config):
    js = f"let f; setTimeout(() => {{ {CHANGES[change]} let i = 0; const id = setInterval(() => {{ f(i); if (++i >= {N}) clearInterval(id); }}, {1000 / RATE}); }}, {SETTLE * 1000});"
    p = launch(page, js, config)
    try:
        secs = N / RATE + 0.3
        time.sleep(SETTLE)
        a = ticks(p.pid); time.sleep(secs); b = ticks(p.pid)
        time.sleep(1)
        c = ticks(p.pid); time.sleep(secs); d = ticks(p.pid)
    finally:
        p.terminate(); p.wait()
    per = {k: ((b.get(k, 0) - a.get(k, 0)) - (d.get(k, 0) - c.get(k, 0))) * 1000 / HZ / N for k in set(b) | set(d)}
    return sum(per.values()), sorted(per.items(), key=lambda kv: -kv[1])

def ghost(config):
    """A red disc moves right, then shrinks: count the red pixels left on screen (one small disc,
    ~650, is right; ~15,000 means the old discs stayed)."""
    js = "const d = document.createElement('div'); d.style.cssText = 'position:absolute;left:20px;top:20px;width:100px;height:100px;background:red;border-radius:50%'; document.body.appendChild(d); setTimeout(() => { d.style.left = '110px'; }, 3000); setTimeout(() => { d.style.transform = 'scale(0.3)'; }, 4000);"
    p = launch("shapes", "document.querySelector('svg').remove();" + js, config)
    try:
        time.sleep(6)
        shot = os.path.join(TMP, "ghost.png")
        subprocess.run(["/usr/bin/import", "-window", "root", shot], check=True)
    finally:
        p.terminate(); p.wait()
    txt = subprocess.run(["/usr/bin/convert", shot, "-depth", "8", "txt:-"], capture_output=True, text=True, check=True).stdout
    # Red or nearly (a ghost under a faint view background is e.g. (252,0,0)).
    def red(line):
        rgb = line.split("(", 1)[1].split(")", 1)[0].split(",")[:3] if "(" in line else []
        return len(rgb) == 3 and float(rgb[0]) >= 200 and float(rgb[1]) <= 60 and float(rgb[2]) <= 60
    return sum(1 for line in txt.splitlines()[1:] if red(line))

if os.environ.get("GHOST") == "1":
    for config in CONFIGS:
        print(f"{config or '(as is)':48s} red pixels left on screen: {ghost(config)}", flush=True)
    sys.exit(0)
pages = os.environ.get("PAGES", "shapes character").split()
changes = os.environ.get("CHANGES", "px layer blink sway").split()
top = int(os.environ.get("TOP", "4"))
print(f"{N} changes at {RATE:g} Hz each; CPU ms per change over a quiet stretch as long, per thread (ui = the window's process, web = WebKitWebProcess)")
for config in CONFIGS:
    for page in pages:
        for change in changes:
            total, per = cost(page, change, config)
            threads = ", ".join(f"{k} {v:.1f}" for k, v in per[:top])
            print(f"{config or '(as is)':40s} {page:9s} {change:7s} {total:5.1f} ms  ({threads})", flush=True)
