"""CPU ticks of a process and everything it started, from /proc (shared by paint_cost.py and
frame_cost/frame_cost.py)."""
import os


def tree(pid):
    """`pid` and its descendants."""
    out = [pid]
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            for c in open(f"/proc/{pid}/task/{t}/children").read().split():
                out += tree(int(c))
        except OSError:
            pass
    return out


def _stat_ticks(path):
    s = open(path).read()
    f = s[s.rindex(")") + 2:].split()
    return int(f[11]) + int(f[12])  # utime + stime


def ticks(pid):
    """{"comm pid": ticks} for each process of the tree."""
    per = {}
    for p in tree(pid):
        try:
            per[open(f"/proc/{p}/comm").read().strip() + f" {p}"] = _stat_ticks(f"/proc/{p}/stat")
        except OSError:
            pass
    return per


def thread_ticks(pid, name):
    """{"name(process):thread": ticks} for each thread of the tree; `name(pid, comm)` names a process."""
    per = {}
    for p in tree(pid):
        try:
            proc = name(p, open(f"/proc/{p}/comm").read().strip())
            for t in os.listdir(f"/proc/{p}/task"):
                k = proc + ":" + open(f"/proc/{p}/task/{t}/comm").read().strip()
                per[k] = per.get(k, 0) + _stat_ticks(f"/proc/{p}/task/{t}/stat")
        except OSError:
            pass
    return per
