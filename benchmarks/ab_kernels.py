"""Two builds of the C core compared call by call in one process: is a kernel change faster?

    python benchmarks/ab_kernels.py OLD NEW [--shape O,A,I] [--dtype DT] [--op OP] [--reps N]
                                    [--threads T] [--hot] [--relaxed]

OLD and NEW are compiled libraries (``aclnn_py/_emu*.so`` of two checkouts, each built with
``python setup.py build_ext --inplace``). Both are loaded side by side (each has its own kernel
pool) and the softmax-family kernels are called straight through cffi on the same arrays,
OLD and NEW in turn (ABAB, then BABA, ...), 64 MiB written between calls so that each starts
with cold caches (``--hot``: nothing written between calls, for small shapes whose data stays
in cache). The table gives the median time of each and NEW / OLD.

Why not two runs of ``aclnn-py bench``: on the shared 2-core virtual machines this project is
measured on, the same build's median moves by up to 20 % between runs a minute apart, which
hides the 5-15 % a kernel change is usually worth. Called in turn, the two builds see the same
machine: one build against a copy of itself gives 0.97-1.03 on most lines, with the odd line
at 0.91, and a line can stay off by 10-15 % for a whole process (one measured 0.82 twice and
0.96 the third time): repeat a line that decides something, in a new process.

``--cpu-time`` (with ``--threads 1``, where the kernel runs on the calling thread) times each
call by that thread's CPU time instead of the wall clock: the time the scheduler gives to other
jobs is left out, so on a loaded machine a build against itself stays within a few per cent
where wall-clock lines move by 10-20 %. Memory stalls still count (they are CPU time).

``--align 64`` puts every array at a 64-byte aligned address, as the runtime's aclrtMalloc
(and so ``aclnn-py bench``) gives them; without it the arrays are NumPy's own, whose large
allocations start 16 bytes past a page: a kernel whose streamed-store path wants whole
64-byte lines then takes its unaligned path.

``--relaxed`` calls the relaxed-accumulation kernels (``aclk_softmax_fwd_relaxed`` /
``aclk_softmax_bwd_relaxed``, float16 and bfloat16 only) instead of the strict ones.

The shape is (outer, axis, inner): the operator reduces over the middle axis of a contiguous
[outer][axis][inner] tensor (``4096,4096,1`` is dim -1 of a 4096 x 4096 matrix; ``1,16,1000000``
is dim 0 of a 16 x 1000 x 1000 tensor).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time

import ml_dtypes
import numpy as np

DTYPES = {"float32": 0, "float16": 1, "bfloat16": 27}
OPS = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward")


def load(path: str, tag: str):
    """The compiled library at path as a module of its own (a second dlopen of another file)."""
    spec = importlib.util.spec_from_file_location(f"_ab_{tag}._emu", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a loadable extension module")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def np_dtype(name: str):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def empty(n: int, dt, align: int) -> np.ndarray:
    """n elements of dt, at an address that is a multiple of align (0: NumPy's own)"""
    if align <= 0:
        return np.empty(n, dtype=dt)
    size = np.dtype(dt).itemsize
    buf = np.empty(n * size + align, dtype=np.uint8)
    off = -buf.ctypes.data % align
    return buf[off:off + n * size].view(dt)


def call(mod, op: str, code: int, arrays: dict, shape: tuple[int, int, int],
         relaxed: bool = False):
    """A zero-argument function running op once with mod's kernels (relaxed: the
    relaxed-accumulation ones)."""
    P, lib = mod.ffi.from_buffer, mod.lib
    x, g, y, yl, out = (P(arrays[k]) for k in ("x", "g", "y", "yl", "out"))
    o, a, i = shape
    fwd = lib.aclk_softmax_fwd_relaxed if relaxed else lib.aclk_softmax_fwd
    bwd = lib.aclk_softmax_bwd_relaxed if relaxed else lib.aclk_softmax_bwd
    if op == "softmax":
        return lambda: fwd(code, x, out, o, a, i, 0)
    if op == "log_softmax":
        return lambda: fwd(code, x, out, o, a, i, 1)
    if op == "softmax_backward":
        return lambda: bwd(code, g, y, out, o, a, i, 0)
    return lambda: bwd(code, g, yl, out, o, a, i, 1)


def compare(old, new, shape, dtypes, ops, reps: int, junk_bytes: int = 64 << 20,
            relaxed: bool = False, cpu_time: bool = False, align: int = 0):
    """Rows (dtype, op, old ms, new ms, new / old); cpu_time: the calling thread's CPU time
    (time.thread_time) instead of the wall clock."""
    clock = time.thread_time if cpu_time else time.perf_counter
    n = shape[0] * shape[1] * shape[2]
    junk = np.ones(junk_bytes // 8) if junk_bytes > 0 else None
    rng = np.random.default_rng(1)
    rows = []
    for dname in dtypes:
        code, dt = DTYPES[dname], np_dtype(dname)
        arrays = {k: empty(n, dt, align) for k in ("x", "g", "y", "yl", "out")}
        arrays["x"][:] = rng.standard_normal(n).astype(dt)
        arrays["g"][:] = rng.standard_normal(n).astype(dt)
        P = old.ffi.from_buffer
        for k, lg in (("y", 0), ("yl", 1)):
            rc = old.lib.aclk_softmax_fwd(code, P(arrays["x"]), P(arrays[k]), *shape, lg)
            if rc != 0:
                raise SystemExit(f"aclk_softmax_fwd({dname}, {shape}) returned {rc}")
        for op in ops:
            fns = (call(old, op, code, arrays, shape, relaxed),
                   call(new, op, code, arrays, shape, relaxed))
            for fn in fns:
                fn()  # warm-up: scratch, pool, and (hot) the data in cache
            times: tuple[list[float], list[float]] = ([], [])
            for r in range(reps):
                for k in ((0, 1) if r % 2 == 0 else (1, 0)):
                    if junk is not None:
                        junk += 1.0
                    t0 = clock()
                    rc = fns[k]()
                    times[k].append(clock() - t0)
                    if rc != 0:
                        raise SystemExit(f"{op} {dname} {shape}: the kernel returned {rc}")
            a, b = (statistics.median(t) * 1e3 for t in times)
            rows.append((dname, op, a, b, b / a))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the baseline build's compiled library (.so)")
    ap.add_argument("new", help="the changed build's compiled library (.so)")
    ap.add_argument("--shape", default="4096,4096,1", help="outer,axis,inner (default 4096,4096,1)")
    ap.add_argument("--dtype", action="append", choices=sorted(DTYPES),
                    help="repeatable; default: all three")
    ap.add_argument("--op", action="append", choices=OPS, help="repeatable; default: all four")
    ap.add_argument("--reps", type=int, default=15, help="calls of each build per line (15)")
    ap.add_argument("--threads", type=int, default=2, help="kernel threads of both (2)")
    ap.add_argument("--hot", action="store_true",
                    help="write nothing between calls (default: 64 MiB, cold caches)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time by the calling thread's CPU time (needs --threads 1)")
    ap.add_argument("--relaxed", action="store_true",
                    help="the relaxed-accumulation kernels (float16 / bfloat16)")
    ap.add_argument("--evict", type=int, default=64,
                    help="MiB written between calls when cold (64; use twice the LLC where the "
                         "data would otherwise stay in it)")
    ap.add_argument("--align", type=int, default=0,
                    help="bytes every array's address is a multiple of (64: as aclrtMalloc's; "
                         "default: NumPy's own)")
    args = ap.parse_args(argv)
    try:
        shape = tuple(int(v) for v in args.shape.split(","))
    except ValueError:
        ap.error(f"--shape: expected three integers outer,axis,inner, got {args.shape!r}")
    if len(shape) != 3 or min(shape) < 1:
        ap.error(f"--shape: expected three integers >= 1, got {args.shape!r}")
    if args.reps < 1 or args.threads < 1:
        ap.error(f"--reps and --threads must be >= 1, got {args.reps} and {args.threads}")
    if args.align < 0 or args.align & (args.align - 1):
        ap.error(f"--align: expected 0 or a power of two, got {args.align}")
    if args.cpu_time and args.threads != 1:
        ap.error(f"--cpu-time: the kernel must run on the calling thread, so --threads must be 1,"
                 f" got {args.threads}")
    old, new = load(args.old, "old"), load(args.new, "new")
    for mod in (old, new):
        mod.lib.aclk_set_num_threads(args.threads)
    if args.relaxed and not args.dtype:
        args.dtype = ["float16", "bfloat16"]
    if args.relaxed and "float32" in args.dtype:
        ap.error("--relaxed: the relaxed kernels take float16 and bfloat16 only, got float32")
    cache = "hot" if args.hot else f"cold ({args.evict} MiB written)"
    if args.align:
        cache += f", arrays {args.align}-byte aligned"
    clock = ", CPU time" if args.cpu_time else ""
    print(f"shape {shape}, {args.threads} threads, {cache}{clock}, medians of {args.reps} calls"
          " each")
    print(f"{'dtype':9s} {'operator':21s} {'old ms':>8s} {'new ms':>8s} {'new/old':>8s}")
    for dname, op, a, b, ratio in compare(old, new, shape, args.dtype or list(DTYPES),
                                          args.op or list(OPS), args.reps,
                                          0 if args.hot else args.evict << 20, args.relaxed,
                                          args.cpu_time, args.align):
        print(f"{dname:9s} {op:21s} {a:8.3f} {b:8.3f} {ratio:8.3f}", flush=True)


if __name__ == "__main__":
    main()
