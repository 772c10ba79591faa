"""Launch-path benchmark: what one small operator call costs on the host, phase by phase.

    python benchmarks/launch.py [--reps N] [--rounds R] [--stream created|default]

An 8-element float32 aclnnSoftmaxBackward (the size of CANN's example) on a stream made with
aclrtCreateStream (``--stream created``, the default) or on the current context's default
stream, passed as 0 (``--stream default``; None takes the same path):

- phase 1: aclnnSoftmaxBackwardGetWorkspaceSize with descriptors it has seen before;
- phase 1 + 2 + synchronize: a single-use executor from scratch to a finished result;
- repeatable 2 + synchronize: aclnnSoftmaxBackward on a repeatable executor, then
  aclrtSynchronizeStream (the loop of a training step);
- synchronize alone, on an idle stream.

``--stream both`` runs every row on both streams, interleaved round by round.

Baselines measured in the same run: the C core's own launch + synchronize of the same task
templates called straight through cffi (the floor the Python layer adds to), and one trivial
cffi call. Each figure is the median over R rounds of the per-call mean of N calls, and the
median of all single calls; ratios are against the C floor. Timings on a shared virtual machine
vary by run: on the 2-core machines we measured on, even pure-Python phase 1 took 6 µs or 10 µs
depending on what the host ran beside the idle second core. Compare ratios, and rerun.
``--pin CPU`` pins the calling thread (not the stream's worker) to one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from aclnn_py import acl, aclnn, runtime
from aclnn_py.runtime import launch as rt_launch
from aclnn_py.runtime.core import ffi, lib


def per_call_us(fn, reps: int, rounds: int) -> tuple[float, float]:
    """(median of the per-round means, median of single calls), in microseconds. A single
    call's time includes one perf_counter_ns pair (the "timer" row)."""
    means, calls = [], []
    clock = time.perf_counter_ns
    for _ in range(rounds):
        t0 = clock()
        for _ in range(reps):
            fn()
        means.append((clock() - t0) / reps / 1e3)
        for _ in range(reps):
            a = clock()
            fn()
            calls.append(clock() - a)
    return statistics.median(means), statistics.median(calls) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pin", type=int, default=None, metavar="CPU",
                        help="pin the calling thread to this core (after the stream exists)")
    parser.add_argument("--stream", choices=("created", "default", "both"), default="created",
                        help="the stream phase 2 and synchronize get: one from "
                             "aclrtCreateStream, or 0 (the default stream); both: each row "
                             "on each, interleaved")
    args = parser.parse_args()

    assert acl.init(None) == 0 and acl.rt.set_device(0) == 0
    created, ret = acl.rt.create_stream()
    assert ret == 0
    n, nbytes = 8, 32
    ptrs = []
    for seed in range(3):
        p, ret = acl.rt.malloc(nbytes, 0)
        assert ret == 0
        host = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
        assert acl.rt.memcpy(p, nbytes, acl.util.numpy_to_ptr(host), nbytes, 1) == 0
        ptrs.append(p)
    grad, out_y, out = (aclnn.aclCreateTensor([n], aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND,
                                              [n], p) for p in ptrs)
    if args.pin is not None:  # the worker thread exists already and keeps every core
        os.sched_setaffinity(0, {args.pin})
    phase1 = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize
    _, ex, ret = phase1(grad, out_y, -1, out)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    null = ffi.NULL
    bases, nslots = ex.bases, ex.ws_slot + 1

    def rows_for(stream: int, c_stream: int) -> list:
        def p1():
            phase1(grad, out_y, -1, out)

        def full():
            _, e, _ = phase1(grad, out_y, -1, out)
            aclnn.aclnnSoftmaxBackward(None, 0, e, stream)
            acl.rt.synchronize_stream(stream)

        def repeat():
            aclnn.aclnnSoftmaxBackward(None, 0, ex, stream)
            acl.rt.synchronize_stream(stream)

        def sync():
            acl.rt.synchronize_stream(stream)

        def c_floor():
            rt_launch.launch(c_stream, ex.templates, ex.ntasks, bases, nslots, 0)
            lib.emu_stream_synchronize(c_stream, null, 0)

        def trivial():
            lib.emu_stream_pending(c_stream)

        return [("phase 1 (GetWorkspaceSize)", p1), ("phase 1 + phase 2 + synchronize", full),
                ("repeatable phase 2 + synchronize", repeat),
                ("synchronize (idle stream)", sync),
                ("baseline: C launch + synchronize", c_floor),
                ("baseline: one cffi call", trivial), ("timer (empty call)", lambda: None)]

    default_handle = runtime.current().default_stream.handle  # type: ignore[union-attr]
    kinds = ["created", "default"] if args.stream == "both" else [args.stream]
    table = {k: rows_for(created if k == "created" else 0,
                         created if k == "created" else default_handle) for k in kinds}
    for rows in table.values():
        for _, fn in rows:  # warm up
            fn()
    results: dict = {k: {name: ([], []) for name, _ in rows} for k, rows in table.items()}
    for _ in range(args.rounds):  # rounds interleaved across the streams and the rows
        for k, rows in table.items():
            for name, fn in rows:
                mean, single = per_call_us(fn, args.reps, 1)
                results[k][name][0].append(mean)
                results[k][name][1].append(single)
    print(f"8-element float32 aclnnSoftmaxBackward: medians of {args.rounds} rounds x "
          f"{args.reps} calls (mean per round), and of each round's single-call median")
    for k in kinds:
        res = {name: (statistics.median(m), statistics.median(c))
               for name, (m, c) in results[k].items()}
        floor = res["baseline: C launch + synchronize"][0]
        what = "aclrtCreateStream's" if k == "created" else "the default (0)"
        print(f"\nstream: {k} ({what})")
        print(f"{'':36s} {'us/call':>8s} {'single':>8s} {'/ C floor':>10s}")
        for name, (mean, single) in res.items():
            print(f"{name:36s} {mean:8.2f} {single:8.2f} {mean / floor:10.1f}")
    stream = created
    acl.rt.destroy_stream(stream)
    for p in ptrs:
        acl.rt.free(p)
    acl.rt.reset_device(0)
    acl.finalize()


if __name__ == "__main__":
    main()
