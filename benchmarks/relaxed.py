"""The relaxed softmax kernels against the strict ones and the hard-sigmoid floor.

    PYTHONPATH=. python benchmarks/relaxed.py [--reps N] [--threads T] [--op OP] [--dtype DT]
                                             [--shape O,A,I] [--hot] [--evict MIB]

For each operator x {float16, bfloat16} x shape, the kernels are called straight through cffi
on the same buffers, in turn (the order rotates every round), each call after a read and write
of twice the last-level cache, as ``aclnn-py bench``'s cold rows (``--evict MIB``: that many MiB
instead; ``--hot``: none; a smaller eviction can leave a line's arrays in a large L3):
  - strict:  lib.aclk_softmax_fwd / aclk_softmax_bwd
  - relaxed: lib.aclk_softmax_fwd_relaxed / aclk_softmax_bwd_relaxed
  - floor:   the faster (by median) of two same-footprint streaming operations, as in
             ``aclnn-py bench``: lib.aclk_hardsigmoid_fwd(dtype, x, out, n, 1/6, 0.5) or
             lib.aclk_floor_copy(out, x, bytes) for the forward operators,
             lib.aclk_hardsigmoid_bwd(dtype, g, y, out, n, 1/6, 0.5) or
             lib.aclk_floor_add(g, y, out, bytes) for the backward ones
             (the same bytes read and written as the operator, one cheap elementwise pass)
The table gives medians in ms, the ratios relaxed/floor, strict/floor, relaxed/strict, the
median over the rounds of each round's relaxed/floor ("pair": the calls of a round run
back-to-back, so a stretch in which other processes slow the machine moves both alike), the
issue's target for relaxed/floor, and the relaxed output's largest error against a float64
NumPy reference computed from the same 16-bit inputs: forward in ulp of the output dtype (at
the reference's binade, subnormals included), backward in units of EPS * max|term| of the
slice (terms g*y and sum(g*y)*y, or g and sum(g)*exp(y); EPS 2^-10 for float16, 2^-7 for
bfloat16, whose own output rounding exceeds 2^-10). The bounds: 2 ulp forward, 1 unit backward.

Shapes (outer, axis, inner): (4096, 4096) over dim -1 = (4096, 4096, 1); (64, 4096, 64) over
dim 1 = (64, 4096, 64); (16, 1000, 1000) over dim 0 = (1, 16, 1000000).
"""

from __future__ import annotations

import argparse
import statistics
import time

import ml_dtypes
import numpy as np

from aclnn_py.runtime.core import ffi, lib

DTYPES = {"float16": (1, np.float16), "bfloat16": (27, ml_dtypes.bfloat16)}
OPS = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward")
SHAPES = ((4096, 4096, 1), (64, 4096, 64), (1, 16, 1000000))
# the backward bound per dtype: 2^-10 max|term| (aclnn_emu.h) for float16; bfloat16's own output
# rounding is up to 2^-8 of an output near max|term|, so it is held to 2^-7 (tests alike)
EPS_BWD = {"float16": 2.0**-10, "bfloat16": 2.0**-7}
TARGET = {"softmax": 1.5, "log_softmax": 1.8, "softmax_backward": 1.3,
          "log_softmax_backward": 1.3}


def ulp(ref: np.ndarray, dt) -> np.ndarray:
    """The ulp of dt at each float64 value's binade (subnormals: the smallest step)."""
    fi = ml_dtypes.finfo(dt)
    e = np.floor(np.log2(np.maximum(np.abs(ref), float(fi.smallest_normal))))
    return np.exp2(e - fi.nmant)


def ref_fwd(x: np.ndarray, lg: int) -> np.ndarray:
    """softmax / log_softmax over axis 1 of a (outer, axis, inner) float64 array"""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(x, axis=1, keepdims=True)
        d = x - m
        e = np.exp(d)
        if not lg:
            return e / np.sum(e, axis=1, keepdims=True)
        # log(sum) as log(k) + log1p(s/k), k the max terms (d == 0) and s the others' sum:
        # log(1 + s) in float64 loses s's digits when s < ~1e-12 (a dominant element)
        k = np.sum(d == 0, axis=1, keepdims=True)
        s = np.sum(np.where(d == 0, 0.0, e), axis=1, keepdims=True)
        return d - (np.log(k) + np.log1p(s / k))


def ref_bwd(g: np.ndarray, y: np.ndarray, lg: int) -> tuple[np.ndarray, np.ndarray]:
    """(out, max|term|): the float64 result and max|term| per slice, broadcast"""
    with np.errstate(invalid="ignore", over="ignore"):
        if lg:
            s = np.sum(g, axis=1, keepdims=True)
            t1, t2 = g, s * np.exp(y)
            out = np.where(np.isneginf(y), g, t1 - t2)
        else:
            s = np.sum(g * y, axis=1, keepdims=True)
            t1, t2 = g * y, s * y
            out = t1 - t2
        sc = np.maximum(np.nanmax(np.abs(t1), axis=1, keepdims=True),
                        np.nanmax(np.abs(t2), axis=1, keepdims=True))
    return out, np.broadcast_to(sc, out.shape)


def err_fwd(out16: np.ndarray, ref: np.ndarray, dt) -> float:
    got = out16.astype(np.float64)
    fin = np.isfinite(ref)
    same_special = (np.isnan(got) & np.isnan(ref)) | (got == ref)
    if not np.all(same_special[~fin]):
        return float("inf")
    if not fin.any():
        return 0.0
    return float(np.max(np.abs(got[fin] - ref[fin]) / ulp(ref[fin], dt)))


def err_bwd(out16: np.ndarray, ref: np.ndarray, sc: np.ndarray) -> float:
    got = out16.astype(np.float64)
    fin = np.isfinite(ref)
    if not np.all((np.isnan(got) & np.isnan(ref))[~fin] | (got == ref)[~fin]):
        return float("inf")
    if not fin.any():
        return 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.abs(got[fin] - ref[fin]) / sc[fin]
    e = np.where(np.abs(got[fin] - ref[fin]) == 0, 0.0, e)
    return float(np.max(e))


def run_line(op, dname, shape, arrays, reps, junk):
    code, dt = DTYPES[dname]
    P = ffi.from_buffer
    o, a, i = shape
    n = o * a * i
    x, g, y, yl = (P(arrays[k]) for k in ("x", "g", "y", "yl"))
    outs = {k: np.empty_like(arrays["x"]) for k in ("strict", "relaxed", "floor", "memop")}
    po = {k: P(v) for k, v in outs.items()}
    lg = int(op.startswith("log"))
    yy = yl if lg else y
    if op.endswith("backward"):
        fns = {"strict": lambda: lib.aclk_softmax_bwd(code, g, yy, po["strict"], o, a, i, lg),
               "relaxed": lambda: lib.aclk_softmax_bwd_relaxed(code, g, yy, po["relaxed"],
                                                               o, a, i, lg),
               "floor": lambda: lib.aclk_hardsigmoid_bwd(code, g, yy, po["floor"], n,
                                                         1 / 6, 0.5),
               "memop": lambda: lib.aclk_floor_add(g, yy, po["memop"], 2 * n)}
    else:
        fns = {"strict": lambda: lib.aclk_softmax_fwd(code, x, po["strict"], o, a, i, lg),
               "relaxed": lambda: lib.aclk_softmax_fwd_relaxed(code, x, po["relaxed"],
                                                               o, a, i, lg),
               "floor": lambda: lib.aclk_hardsigmoid_fwd(code, x, po["floor"], n, 1 / 6, 0.5),
               "memop": lambda: lib.aclk_floor_copy(po["memop"], x, 2 * n)}
    names = list(fns)
    for k in names[:3]:
        if fns[k]() != 0:
            raise SystemExit(f"{k} {op} {dname} {shape}: the kernel returned nonzero")
    times = {k: [] for k in names}
    for r in range(reps):
        order = names[r % 4:] + names[:r % 4]
        if r % 2:
            order.reverse()
        for k in order:
            if junk is not None:
                np.add(junk, 1, out=junk)
            t0 = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    use = "floor" if med["floor"] <= med["memop"] else "memop"
    pair = statistics.median(r / f for r, f in zip(times["relaxed"], times[use]))
    med["floor"] = med.pop(use)
    # accuracy of the relaxed output against float64 NumPy
    if op.endswith("backward"):
        ref, sc = ref_bwd(arrays["g"].astype(np.float64).reshape(shape),
                          arrays["yl" if lg else "y"].astype(np.float64).reshape(shape), lg)
        err = err_bwd(outs["relaxed"].reshape(shape), ref, sc * EPS_BWD[dname])
    else:
        ref = ref_fwd(arrays["x"].astype(np.float64).reshape(shape), lg)
        err = err_fwd(outs["relaxed"].reshape(shape), ref, dt)
    return med, pair, err


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=9, help="calls of each kernel per line (9)")
    ap.add_argument("--threads", type=int, default=2, help="kernel threads (2)")
    ap.add_argument("--op", action="append", choices=OPS, help="repeatable; default: all four")
    ap.add_argument("--dtype", action="append", choices=sorted(DTYPES),
                    help="repeatable; default: both")
    ap.add_argument("--shape", action="append",
                    help="outer,axis,inner; repeatable; default: the three bench shapes")
    ap.add_argument("--hot", action="store_true", help="no eviction between calls")
    ap.add_argument("--evict", type=int, default=0,
                    help="MiB read and written before each call (default: twice the LLC)")
    args = ap.parse_args(argv)
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shape] if args.shape else SHAPES
    lib.aclk_set_num_threads(args.threads)
    llc = int(lib.aclk_llc_bytes())
    evict = args.evict << 20 if args.evict else (2 * llc if llc else 64 << 20)
    junk = None if args.hot else np.zeros(evict, np.uint8)
    isa = ffi.string(lib.aclk_isa_name()).decode()
    print(f"ISA {isa}, {args.threads} threads, "
          f"{'hot' if args.hot else f'cold ({len(junk) >> 20} MiB evicted)'}, "
          f"medians of {args.reps} calls each; err: ulp (fwd) / "
          f"EPS max|term| (bwd; EPS 2^-10 float16, 2^-7 bfloat16)")
    print(f"{'operator':21s} {'dtype':8s} {'shape':17s} {'strict':>7s} {'relaxed':>7s} "
          f"{'floor':>7s} {'rel/fl':>6s} {'str/fl':>6s} {'rel/str':>7s} {'pair':>5s} "
          f"{'target':>6s} {'err':>5s}")
    rng = np.random.default_rng(1)
    for dname in args.dtype or list(DTYPES):
        code, dt = DTYPES[dname]
        for shape in shapes:
            n = shape[0] * shape[1] * shape[2]
            arrays = {"x": rng.standard_normal(n).astype(dt),
                      "g": rng.standard_normal(n).astype(dt)}
            for k, lg in (("y", 0), ("yl", 1)):
                arrays[k] = np.empty_like(arrays["x"])
                lib.aclk_softmax_fwd(code, ffi.from_buffer(arrays["x"]),
                                     ffi.from_buffer(arrays[k]), *shape, lg)
            for op in args.op or OPS:
                med, pair, err = run_line(op, dname, shape, arrays, args.reps, junk)
                r, s, f = med["relaxed"], med["strict"], med["floor"]
                ok = "ok" if r / f <= TARGET[op] else "MISS"
                print(f"{op:21s} {dname:8s} {str(shape):17s} {s:7.2f} {r:7.2f} {f:7.2f} "
                      f"{r / f:6.2f} {s / f:6.2f} {r / s:7.2f} {pair:5.2f} "
                      f"{TARGET[op]:4.1f}{ok:>3s}{err:6.2f}", flush=True)


if __name__ == "__main__":
    main()
