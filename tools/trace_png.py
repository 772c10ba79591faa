"""Render an ACLNN_EMU_TRACE file (Chrome / Perfetto JSON) as a timeline PNG with matplotlib.

    python tools/trace_png.py TRACE.json OUT.png     # any trace
    python tools/trace_png.py --demo OUT.png         # trace the two-stream demo, then render it

One row per track: the host threads (API calls) on top, then each stream (its tasks); an arrow
from each API call to the task it enqueued, and from an event record to the wait it releases.
The demo is the program of docs/diagnostics.md ("Trace"): a softmax on one stream, an event,
and a softmax backward plus a copy on a second stream that waits for it. docs/trace.png was made
with ``--demo``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

DEMO = r'''
import numpy as np
from aclnn_py import acl, aclnn

acl.init()
acl.rt.set_device(0)
compute, _ = acl.rt.create_stream()
copy, _ = acl.rt.create_stream()
ready, _ = acl.rt.create_event()
shape = [256, 1024]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
n = x.nbytes

def tensor(ptr):
    return aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, ptr)

px, py, pg, pz = (acl.rt.malloc(n, 0)[0] for _ in range(4))
acl.rt.memcpy(px, n, acl.util.numpy_to_ptr(x), n, acl.ACL_MEMCPY_HOST_TO_DEVICE)
acl.rt.memset_async(pg, n, 0, n, copy)
for step in range(3):
    ws, ex, _ = aclnn.aclnnSoftmaxGetWorkspaceSize(tensor(px), 1, tensor(py))
    aclnn.aclnnSoftmax(0, 0, ex, compute)                 # y = softmax(x) on `compute`
    acl.rt.record_event(ready, compute)
    acl.rt.stream_wait_event(copy, ready)                 # `copy` waits for y
    ws, ex, _ = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(tensor(pg), tensor(py), 1, tensor(pz))
    aclnn.aclnnSoftmaxBackward(0, 0, ex, copy)
    acl.rt.memcpy_async(px, n, pz, n, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, copy)
    acl.rt.record_event(ready, copy)
    acl.rt.stream_wait_event(compute, ready)              # the next softmax waits for x
acl.rt.synchronize_stream(copy)
for p in (px, py, pg, pz):
    acl.rt.free(p)
acl.rt.destroy_event(ready)
acl.rt.destroy_stream(compute)
acl.rt.destroy_stream(copy)
acl.rt.reset_device(0)
acl.finalize()
'''

COLORS = {"api": "#7f9fbf", "kernel": "#e07b39", "memcpy": "#4daf4a", "memset": "#984ea3",
          "record": "#c0c0c0", "wait": "#d9d9d9", "reset": "#d9d9d9"}


def run_demo(path: str) -> None:
    env = dict(os.environ, ACLNN_EMU_TRACE=path)
    subprocess.run([sys.executable, "-c", DEMO], env=env, cwd=tempfile.gettempdir(), check=True)


def render(trace_path: str, png_path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(trace_path, encoding="utf-8") as fh:
        events = json.load(fh)["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    host = sorted({(e["pid"], e["tid"]) for e in spans if e["cat"] == "api"})
    streams = sorted({(e["pid"], e["tid"]) for e in spans if e["cat"] == "task"})
    rows = {track: i for i, track in enumerate(host + streams)}
    tasks = [e for e in spans if e["cat"] == "task"]
    # from shortly before the first task (aclInit and the set-up before it are left out)
    t0 = min(e["ts"] for e in tasks) - 1000 if tasks else min(e["ts"] for e in spans)
    spans = [e for e in spans if e["ts"] + e["dur"] >= t0]
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.7 * len(rows)))
    for e in spans:
        y = rows[(e["pid"], e["tid"])]
        kind = "api" if e["cat"] == "api" else e["args"].get("task", "kernel")
        ax.broken_barh([((e["ts"] - t0) / 1000, max(e["dur"] / 1000, 0.002))], (y - 0.35, 0.7),
                       facecolors=COLORS.get(kind, "#999999"), edgecolors="black",
                       linewidth=0.3)
    starts = {(e["cat"], e["id"]): e for e in events if e["ph"] == "s"}
    for f in (e for e in events if e["ph"] == "f"):
        s = starts.get((f["cat"], f["id"]))
        if (s is None or s["ts"] < t0 or (s["pid"], s["tid"]) not in rows
                or (f["pid"], f["tid"]) not in rows):
            continue
        ax.annotate("", xy=((f["ts"] - t0) / 1000, rows[(f["pid"], f["tid"])] - 0.35),
                    xytext=((s["ts"] - t0) / 1000, rows[(s["pid"], s["tid"])] + 0.35),
                    arrowprops={"arrowstyle": "->", "lw": 0.5,
                                "color": "#555555" if f["cat"] == "enqueue" else "#c0392b"})
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([names.get(t, str(t)) for t in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    handles = [matplotlib.patches.Patch(color=c, label=k) for k, c in COLORS.items()
               if k not in ("reset",)]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.25),
              ncol=len(handles), fontsize=8, frameon=False)
    ax.set_title("ACLNN_EMU_TRACE: API calls (host thread) and tasks (one row per stream); "
                 "arrows: enqueue (grey), event record → wait (red)", fontsize=9)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--demo":
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "demo.json")
            run_demo(trace)
            render(trace, argv[1])
        return 0
    if len(argv) == 2:
        render(argv[0], argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
