"""The C API's launch latency beside the Python API's (docs/c_api.md, docs/performance.md).

    python benchmarks/capi_latency.py [--reps N] [--runs R] [--fresh | --toolkit DIR]

Builds the toolkit (``aclnn-py toolkit``; ``--fresh`` builds one in a temporary
XDG_CACHE_HOME instead of reusing the cached one; ``--toolkit DIR`` uses the one at DIR, e.g.
another version's, for a before / after comparison), compiles ``capi_latency.cpp`` against it,
and times an 8-element float32 aclnnSoftmaxBackward on the default stream:

- phase 1 + phase 2 + synchronize: a single-use executor from scratch to a finished result;
- relaunch + synchronize: aclnnSoftmaxBackward on a repeatable executor, then
  aclrtSynchronizeStream (a training step's loop);
- phase 1 + phase 2 + synchronize on new tensors: the three tensors created before and
  destroyed after each call, so that the C API's phase 1 never finds an entry and runs in
  Python (a program that makes its tensors per call pays this);
- and, for the Python API only, phase 1 alone (the C API answers this loop's phase 1 in C from
  the second call on, docs/c_api.md "Fast paths": the Python API's phase 1 is what the C row
  would cost without that).

Each run starts the C++ program once (which times ``--rounds`` rounds of N iterations each and
checks its result against a float64 golden) and times the same two loops through the Python
API in this process, interleaved, so both see the same machine. The table gives, per row, the
median and the minimum over all rounds of all runs of the per-round mean of the elapsed time,
and the median of the calling thread's CPU time (which a busy machine inflates less: it leaves
out the time the thread waited for a core). On a shared machine the numbers move with what else
runs: quote the medians with the minimums, and rerun.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROWS = ("full", "relaunch", "fresh", "full cpu", "relaunch cpu", "fresh cpu")


def build_program(toolkit: Path, out: Path) -> Path:
    from aclnn_py.toolkit.build import compiler

    inc = toolkit / "include"
    cmd = [*compiler(), "-O2", "-std=c++11", str(HERE / "capi_latency.cpp"), f"-I{inc}",
           f"-I{inc / 'aclnnop'}", f"-L{toolkit / 'lib64'}", "-lopapi", "-lascendcl",
           "-lnnopbase", f"-Wl,-rpath,{toolkit / 'lib64'}", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"compiling capi_latency.cpp failed:\n{proc.stderr}")
    return out


def run_c(exe: Path, reps: int, rounds: int, env: dict) -> dict:
    proc = subprocess.run([str(exe), str(reps), str(rounds)], capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode:
        sys.exit(f"capi_latency failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    rows: dict = {k: [] for k in ROWS}
    for line in proc.stdout.splitlines():
        key, *values = line.split()
        if key in ("full", "relaunch", "fresh"):
            rows[key].append(float(values[0]))
            rows[key + " cpu"].append(float(values[1]))
    return rows


class PythonLoops:
    """The same two loops through the Python API, on the default stream (0)."""

    def __init__(self) -> None:
        from aclnn_py import acl, aclnn

        self.acl, self.aclnn = acl, aclnn
        assert acl.init(None) == 0 and acl.rt.set_device(0) == 0
        n = 8
        g = (0.25 * np.arange(n) - 1.0).astype(np.float32)
        y = (np.arange(1, n + 1) / 36.0).astype(np.float32)
        self.ptrs = []
        for host in (g, y, np.zeros(n, np.float32)):
            p, ret = acl.rt.malloc(host.nbytes, 0)
            assert ret == 0
            assert acl.rt.memcpy(p, host.nbytes, acl.util.numpy_to_ptr(host), host.nbytes,
                                 1) == 0
            self.ptrs.append(p)
        self.tensors = [aclnn.aclCreateTensor([n], aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND,
                                              [n], p) for p in self.ptrs]
        tg, ty, to = self.tensors
        _, self.rep, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to)
        assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(self.rep) == 0

    def round(self, reps: int) -> tuple[float, ...]:
        phase1 = self.aclnn.aclnnSoftmaxBackwardGetWorkspaceSize
        phase2 = self.aclnn.aclnnSoftmaxBackward
        sync = self.acl.rt.synchronize_stream
        tg, ty, to = self.tensors
        rep = self.rep
        clock, cpu = time.perf_counter_ns, time.thread_time_ns
        t0, c0 = clock(), cpu()
        for _ in range(reps):
            ws, ex, _ = phase1(tg, ty, -1, to)
            phase2(None, ws, ex, 0)
            sync(0)
        t1, c1 = clock(), cpu()
        for _ in range(reps):
            phase2(None, 0, rep, 0)
            sync(0)
        t2, c2 = clock(), cpu()
        for _ in range(reps):
            phase1(tg, ty, -1, to)
        t3, c3 = clock(), cpu()
        create, destroy = self.aclnn.aclCreateTensor, self.aclnn.aclDestroyTensor
        fmt, dt, n = self.aclnn.ACL_FORMAT_ND, self.aclnn.ACL_FLOAT, 8
        fresh = max(reps // 4, 1)
        for _ in range(fresh):
            fg, fy, fo = (create([n], dt, None, 0, fmt, [n], p) for p in self.ptrs)
            ws, ex, _ = phase1(fg, fy, -1, fo)
            phase2(None, ws, ex, 0)
            sync(0)
            destroy(fg)
            destroy(fy)
            destroy(fo)
        t4, c4 = clock(), cpu()
        us, fus = reps * 1e3, fresh * 1e3
        return ((t1 - t0) / us, (t2 - t1) / us, (t4 - t3) / fus, (c1 - c0) / us,
                (c2 - c1) / us, (c4 - c3) / fus, (t3 - t2) / us, (c3 - c2) / us)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="iterations per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per run")
    parser.add_argument("--runs", type=int, default=3, help="runs (C program starts)")
    parser.add_argument("--fresh", action="store_true",
                        help="build the toolkit in a temporary XDG_CACHE_HOME")
    parser.add_argument("--toolkit", type=Path, default=None, metavar="DIR",
                        help="use the toolkit at DIR instead of building one")
    args = parser.parse_args()

    from aclnn_py.toolkit import ensure_toolkit

    with tempfile.TemporaryDirectory(prefix="capi-latency-") as tmp:
        root = Path(tmp) / "xdg" / "aclnn-py" if args.fresh else None
        t0 = time.monotonic()
        toolkit = args.toolkit.resolve() if args.toolkit else ensure_toolkit(root=root)
        built = time.monotonic() - t0
        exe = build_program(toolkit, Path(tmp) / "capi_latency")
        env = dict(os.environ, LD_LIBRARY_PATH=str(toolkit / "lib64"))
        py = PythonLoops()
        py.round(args.reps)  # warm-up
        c_rows: dict = {k: [] for k in ROWS}
        py_rows: dict = {k: [] for k in (*ROWS, "phase1", "phase1 cpu")}
        for _ in range(args.runs):
            got = run_c(exe, args.reps, args.rounds, env)
            for key in c_rows:
                c_rows[key] += got[key]
            for _ in range(args.rounds):
                for key, value in zip((*ROWS, "phase1", "phase1 cpu"), py.round(args.reps)):
                    py_rows[key].append(value)
    how = "given" if args.toolkit else "built" if built > 0.5 else "cached"
    print(f"toolkit: {toolkit} ({how})")
    print(f"8-element float32 aclnnSoftmaxBackward on the default stream: {args.runs} runs x "
          f"{args.rounds} rounds x {args.reps} iterations; per-round means, us per iteration")
    print(f"{'':32s} {'C median':>8s} {'C min':>6s} {'C cpu':>6s} {'Py median':>9s} "
          f"{'Py min':>6s} {'Py cpu':>6s} {'target':>6s}")
    for key, name, target in (("full", "phase 1 + phase 2 + synchronize", 8.0),
                              ("relaunch", "relaunch + synchronize", 2.0),
                              ("fresh", "the same on new tensors", None)):
        c, p = c_rows[key], py_rows[key]
        c_cpu, p_cpu = c_rows[key + " cpu"], py_rows[key + " cpu"]
        print(f"{name:32s} {statistics.median(c):8.2f} {min(c):6.2f} "
              f"{statistics.median(c_cpu):6.2f} {statistics.median(p):9.2f} {min(p):6.2f} "
              f"{statistics.median(p_cpu):6.2f} {'-' if target is None else target:>6}")
    p, p_cpu = py_rows["phase1"], py_rows["phase1 cpu"]
    print(f"{'Python API phase 1 alone':32s} {'':8s} {'':6s} {'':6s} "
          f"{statistics.median(p):9.2f} {min(p):6.2f} {statistics.median(p_cpu):6.2f}")
    print("From C, phase 1 (from its second call on the same tensors), phase 2 and synchronize "
          "run without the interpreter (docs/c_api.md, \"Fast paths\"); on new tensors "
          "(aclCreateTensor / aclDestroyTensor counted in the row) phase 1 runs in Python.")


if __name__ == "__main__":
    main()
