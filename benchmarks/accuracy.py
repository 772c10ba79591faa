"""Each accumulation mode's measured error, against float64, through the functional layer.

    python benchmarks/accuracy.py [--rows N]

For float16 and bfloat16, the four softmax-family operators, the bench's three layouts (scaled
down: rows of 4096, a middle axis of 4096 with 16 columns, 16 a-rows over dim 0) and inputs of
three scales (normal with sigma 0.5, 3 and 12, so that exps span the whole float32 range), it
prints the largest error of the strict and the relaxed results:

- forward: in ulp of the output dtype at the float64 result's magnitude (docs/onednn.md);
- backward: in units of 2^-10 * max|term| of the output's slice (the terms g*y and sum(g*y)*y,
  or g and sum(g)*exp(y)), together with the largest error in ulp of the result, since the
  contract is "2 ulp, or within 2^-10 of the largest term where the result cancels".

The float64 references are written here from the formulas (log-softmax's log-sum-exp with the max
terms counted, not summed, so that a dominant element's tiny outputs are right), never from the
emulator. docs/onednn.md quotes a run of this script.
"""

from __future__ import annotations

import argparse

import ml_dtypes
import numpy as np

from aclnn_py import functional as F

DTYPES = {"float16": (np.dtype(np.float16), 10, -14), "bfloat16": (np.dtype(ml_dtypes.bfloat16),
                                                                    7, -126)}


def ulp(ref, dt_name):
    _, mant, emin = DTYPES[dt_name]
    a = np.abs(np.where(np.isfinite(ref), ref, 1.0))
    return 2.0 ** (np.floor(np.log2(np.maximum(a, 2.0 ** emin))) - mant)


def ref_softmax(x, dim, log):
    x = x.astype(np.float64)
    m = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - m)
    if not log:
        return e / np.sum(e, axis=dim, keepdims=True)
    top = x == m
    k = np.sum(top, axis=dim, keepdims=True)
    rest = np.sum(np.where(top, 0.0, e), axis=dim, keepdims=True)
    return (x - m) - (np.log(k) + np.log1p(rest / k))


def layouts(rows):
    return [("rows", (rows, 4096), 1), ("middle", (8, 4096, 16), 1), ("dim 0", (16, 2000, 60), 0)]


def measure(rows):
    out = []
    rng = np.random.default_rng(0)
    for dname, (dt, _, _) in DTYPES.items():
        for lname, shape, dim in layouts(rows):
            worst: dict = {}
            for sigma in (0.5, 3.0, 12.0):
                x = (rng.standard_normal(shape) * sigma).astype(dt)
                g = rng.standard_normal(shape).astype(dt)
                for mode in ("strict", "relaxed"):
                    for log in (False, True):
                        fn = F.log_softmax if log else F.softmax
                        got = fn(x, dim, accumulation=mode).astype(np.float64)
                        ref = ref_softmax(x, dim, log)
                        e = float(np.max(np.abs(got - ref) / ulp(ref, dname)))
                        key = (mode, "log_softmax" if log else "softmax")
                        worst[key] = max(worst.get(key, 0.0), e)
                    y = F.softmax(x, dim)
                    ly = F.log_softmax(x, dim)
                    g64, y64, ly64 = (a.astype(np.float64) for a in (g, y, ly))
                    s = np.sum(g64 * y64, axis=dim, keepdims=True)
                    terms = {"softmax_backward": (g64 * y64 - s * y64,
                                                  np.abs(g64 * y64), np.abs(s * y64))}
                    sl = np.sum(g64, axis=dim, keepdims=True)
                    terms["log_softmax_backward"] = (g64 - sl * np.exp(ly64), np.abs(g64),
                                                     np.abs(sl * np.exp(ly64)))
                    for name, (ref, t1, t2) in terms.items():
                        fn = getattr(F, name)
                        got = fn(g, ly if name.startswith("log") else y, dim,
                                 accumulation=mode).astype(np.float64)
                        top = np.maximum(np.max(t1, axis=dim, keepdims=True),
                                         np.max(t2, axis=dim, keepdims=True))
                        err = np.abs(got - ref)
                        units = float(np.max(err / (2.0 ** -10 * top)))
                        # the contract: 2 ulp, or within 2^-10 of the largest term
                        within = float(np.max(err / np.maximum(2 * ulp(ref, dname),
                                                               2.0 ** -10 * top)))
                        key = (mode, name)
                        u, w = worst.get(key, (0.0, 0.0))
                        worst[key] = (max(u, units), max(w, within))
            out.append((dname, lname, worst))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=256, help="rows of the row layout")
    args = ap.parse_args(argv)
    ops = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward")
    print(f"{'dtype':9} {'layout':7} {'operator':21} {'strict':>16} {'relaxed':>16}")
    print("forward: max ulp; backward: max units of 2^-10*max|term| (max fraction of the "
          "contract's bound)")
    for dname, lname, worst in measure(args.rows):
        for op in ops:
            cells = []
            for mode in ("strict", "relaxed"):
                v = worst[(mode, op)]
                cells.append(f"{v:.2f}" if not isinstance(v, tuple) else f"{v[0]:.2f} ({v[1]:.2f})")
            print(f"{dname:9} {lname:7} {op:21} {cells[0]:>16} {cells[1]:>16}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
