"""The relaxed softmax kernels (csrc/kernels/softmax_relaxed.c) against float64 NumPy.

Called straight through cffi. The reference is written from the formulas on the same 16-bit
inputs, never from a kernel:
  - forward (softmax, log_softmax): every output within 2 ulp of its dtype at the float64
    result's binade (subnormals: the smallest step); where the float64 result rounds to +-inf in
    the dtype, the output may be that infinity;
  - backward: |out - ref| <= EPS[dtype] * max|term| over the output's slice, the terms g*y and
    sum(g*y)*y (softmax_backward) or g and sum(g)*exp(y) (log_softmax_backward).
    EPS is 2^-10 for float16, as aclnn_emu.h states. For bfloat16 2^-10 cannot be met by any
    kernel that rounds its output to bfloat16 (half an ulp of an output near max|term| is up to
    2^-8 of it; the strict kernels measure 4-7 units of 2^-10 on random data), so bfloat16 is
    held to 2^-7, the same multiple of its own precision (8 bits against float16's 11).
Special values as the strict kernels; identical bits for 1 and 2 threads; every ISA level the
CPU has (a subprocess each, ACLNN_EMU_ISA) meets the same bounds.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aclnn_py.runtime.core import ffi, lib

DT = {"float16": (1, np.float16), "bfloat16": (27, ml_dtypes.bfloat16)}
EPS_BWD = {"float16": 2.0**-10, "bfloat16": 2.0**-7}
LEVELS = ("generic", "avx2", "avx512")


# ------------------------------------------------------------------------ kernels ----

def fwd(dname: str, x: np.ndarray, lg: int) -> np.ndarray:
    code, _ = DT[dname]
    o, a, i = x.shape
    y = np.full_like(x, np.nan)
    assert lib.aclk_softmax_fwd_relaxed(code, ffi.from_buffer(x), ffi.from_buffer(y),
                                        o, a, i, lg) == 0
    return y


def bwd(dname: str, g: np.ndarray, y: np.ndarray, lg: int) -> np.ndarray:
    code, _ = DT[dname]
    o, a, i = g.shape
    out = np.full_like(g, np.nan)
    assert lib.aclk_softmax_bwd_relaxed(code, ffi.from_buffer(g), ffi.from_buffer(y),
                                        ffi.from_buffer(out), o, a, i, lg) == 0
    return out


# ---------------------------------------------------------------------- reference ----

def ref_fwd(x: np.ndarray, lg: int) -> np.ndarray:
    x = x.astype(np.float64)
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


def ref_bwd(g: np.ndarray, y: np.ndarray, lg: int):
    g, y = g.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if lg:
            s = np.sum(g, axis=1, keepdims=True)
            t1, t2 = g, s * np.exp(y)
        else:
            s = np.sum(g * y, axis=1, keepdims=True)
            t1, t2 = g * y, s * y
        out = t1 - t2
        big = np.maximum(np.max(np.abs(t1), axis=1, keepdims=True),
                         np.max(np.abs(t2), axis=1, keepdims=True))
    return out, np.broadcast_to(big, out.shape)


def ulp(ref: np.ndarray, dt) -> np.ndarray:
    fi = ml_dtypes.finfo(dt)
    e = np.floor(np.log2(np.maximum(np.abs(ref), float(fi.smallest_normal))))
    return np.exp2(e - fi.nmant)


def fwd_err(dname: str, got: np.ndarray, ref: np.ndarray) -> float:
    """the largest error in ulp; inf for a wrong special value"""
    dt = DT[dname][1]
    got = got.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = ref.astype(dt).astype(np.float64)
    nan = np.isnan(ref)
    if not np.array_equal(np.isnan(got), nan):
        return float("inf")
    inf_ok = np.isinf(got) & (got == rounded)
    chk = ~nan & ~inf_ok
    if np.isinf(got[chk]).any() or np.isinf(ref[chk]).any():
        return float("inf")
    if not chk.any():
        return 0.0
    return float(np.max(np.abs(got[chk] - ref[chk]) / ulp(ref[chk], dt)))


def bwd_err(dname: str, got: np.ndarray, ref: np.ndarray, big: np.ndarray) -> float:
    """the largest error in units of EPS * max|term|; inf for a wrong special value"""
    got = got.astype(np.float64)
    nan = np.isnan(ref)
    if not np.array_equal(np.isnan(got), nan):
        return float("inf")
    fin = ~nan
    if not fin.any():
        return 0.0
    diff = np.abs(got[fin] - ref[fin])
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.where(diff == 0, 0.0, diff / (big[fin] * EPS_BWD[dname]))
    return float(np.max(e))


def check_fwd(dname: str, x: np.ndarray, what: str) -> None:
    for lg in (0, 1):
        err = fwd_err(dname, fwd(dname, x, lg), ref_fwd(x, lg))
        assert err <= 2.0, f"{what} {dname} {'log_softmax' if lg else 'softmax'}: {err} ulp"


def check_bwd(dname: str, g: np.ndarray, x: np.ndarray, what: str) -> None:
    dt = DT[dname][1]
    for lg in (0, 1):
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            y = ref_fwd(x, lg).astype(dt)  # a forward output, from NumPy
        ref, big = ref_bwd(g, y, lg)
        err = bwd_err(dname, bwd(dname, g, y, lg), ref, big)
        name = "log_softmax_backward" if lg else "softmax_backward"
        assert err <= 1.0, f"{what} {dname} {name}: {err} x {EPS_BWD[dname]} max|term|"


# ------------------------------------------------------------------------ data ----

SHAPES = [(7, 1, 1), (9, 2, 1), (5, 3, 1), (6, 31, 1), (3, 4096, 1), (2, 20000, 1),
          (2, 1560, 1), (1, 8200, 1), (3, 31, 5), (2, 4096, 3), (2, 40, 64), (1, 16, 2500),
          (2, 3, 1100), (1, 2, 17)]


def data(dname: str, shape, scale: str, rng) -> np.ndarray:
    dt = DT[dname][1]
    if scale == "wide":
        lim = 60000.0 if dname == "float16" else 1e30
        v = rng.uniform(-lim, lim, size=shape)
    else:
        v = rng.normal(0.0, {"n1": 1.0, "n8": 8.0}[scale], size=shape)
    return v.astype(dt)


def random_cases(dname: str, rng, shapes=SHAPES, scales=("n1", "n8", "wide")):
    for shape in shapes:
        for scale in scales:
            yield shape, scale, data(dname, shape, scale, rng), data(dname, shape, "n1", rng)


def special_cases(dname: str):
    """(what, x) with x of shape (rows, axis, 1) and (1, axis, rows): each row a case"""
    dt = DT[dname][1]
    n = 40
    base = np.linspace(-3.0, 2.0, n)

    def row(**at):  # base with the given elements set ({index list or slice: value})
        r = base.copy()
        for where, v in at.get("set", ()):
            r[where] = v
        return r

    rows = [
        row(set=[(5, np.nan)]),                             # NaN -> all NaN
        row(set=[(7, np.inf)]),                             # +inf -> all NaN
        np.full(n, -np.inf),                                # all -inf -> NaN
        row(set=[(slice(None, None, 3), -np.inf)]),         # -inf elements -> 0 / -inf
        np.where(np.isin(np.arange(n), [1, 9, 30]), 4.0, -20.0),  # ties at the max
        np.where(np.arange(n) == 11, 5.0, -30.0),           # one dominant element
        row(set=[(3, -np.nan)]),                            # negative NaN
        np.full(n, 2.0),                                    # all equal
        row(set=[(0, np.nan), (1, np.inf), (2, -np.inf)]),
        np.where(np.arange(n) == 4, 0.0, -4.0),             # log-softmax rows: sum 1.7
        np.where(np.isin(np.arange(n), [2, 3]), 0.0, -30.0),  # sum 2 + 38 e^-30
    ]
    x = np.array(rows).astype(dt)
    return x


def running_max_cases(dname: str, rng) -> np.ndarray:
    """(1, 1000, 72): columns over an axis of several of the forward column blocks' sub-blocks
    (whose running max rises from one to the next: the sums rescaled), with special values and
    max ties in different sub-blocks; the columns a 4-vector strip and a remainder wide"""
    dt = DT[dname][1]
    n, big = 1000, (60000.0 if dname == "float16" else 1e30)
    cols = [np.linspace(-20.0, 20.0, n), np.linspace(20.0, -20.0, n), np.linspace(0.0, 3.0, n),
            np.linspace(-big, big, n), rng.normal(0.0, 8.0, n),
            np.where(np.arange(n) < 500, -np.inf, rng.normal(0.0, 1.0, n)),
            np.full(n, -np.inf), np.where(np.arange(n) == 999, 5.0, -30.0),
            np.where(np.isin(np.arange(n), [10, 500, 990]), 4.0, -20.0)]
    for at, v in ((700, np.nan), (600, np.inf), (300, -np.nan), (999, np.nan)):
        c = rng.normal(0.0, 1.0, n)
        c[at] = v
        cols.append(c)
    c = rng.normal(0.0, 1.0, n)
    c[rng.integers(0, n, 50)] = -np.inf
    cols.append(c)
    x = rng.normal(0.0, 1.0, (n, 72))
    x[:, :len(cols)] = np.array(cols).T
    x[:, 64:64 + len(cols) - 8] = np.array(cols[8:]).T  # some in the remainder columns too
    return x[None].astype(dt)


# ------------------------------------------------------------------ the checks ----

def check_all(dname: str, seed: int = 0, shapes=SHAPES) -> None:
    """the bounds on random data and special values (also run per ISA level)"""
    rng = np.random.default_rng(seed)
    for shape, scale, x, g in random_cases(dname, rng, shapes):
        check_fwd(dname, x, f"{shape} {scale}")
        check_bwd(dname, g, x, f"{shape} {scale}")
    xs = special_cases(dname)
    # the first 16 of each special row (all its special elements) over a short axis: the
    # short-axis column path, its column vectors in pairs, alone and partial (44 columns)
    short = np.tile(np.ascontiguousarray(xs[:, :16].T), (1, 4))[None, :, :]
    for x in (xs[:, :, None], np.ascontiguousarray(xs.T)[None, :, :], short):
        check_fwd(dname, np.ascontiguousarray(x), f"special {x.shape}")
        g = data(dname, x.shape, "n1", rng)
        check_bwd(dname, g, np.ascontiguousarray(x), f"special {x.shape}")


@pytest.mark.parametrize("dname", sorted(DT))
def test_bounds_random_and_special(dname):
    check_all(dname)


def check_running_max(dname: str) -> None:
    x = running_max_cases(dname, np.random.default_rng(11))
    check_fwd(dname, x, "running max")
    check_bwd(dname, data(dname, x.shape, "n1", np.random.default_rng(12)), x, "running max")


@pytest.mark.parametrize("dname", sorted(DT))
def test_running_max_columns(dname):
    check_running_max(dname)


@pytest.mark.parametrize("dname", sorted(DT))
def test_special_values_exact(dname):
    """the special outputs themselves, row by row"""
    dt = DT[dname][1]
    xs = special_cases(dname)
    for x in (xs[:, :, None], np.ascontiguousarray(xs.T)[None, :, :]):
        x = np.ascontiguousarray(x)
        sm, ls = fwd(dname, x, 0).astype(np.float64), fwd(dname, x, 1).astype(np.float64)
        rows = lambda v: v[:, :, 0] if v.shape[2] == 1 else v[0].T  # noqa: E731
        sm, ls = rows(sm), rows(ls)
        for k in (0, 1, 2, 6, 8):
            assert np.isnan(sm[k]).all() and np.isnan(ls[k]).all(), k
        ninf = np.isneginf(rows(x.astype(np.float64))[3])
        assert (sm[3][ninf] == 0).all() and np.isneginf(ls[3][ninf]).all()
        assert np.isfinite(sm[3][~ninf]).all() and np.isfinite(ls[3][~ninf]).all()
        ties = sm[4] == sm[4].max()
        assert ties.sum() == 3
        assert abs(ls[5][11] - (-np.log1p(39 * np.exp(-35.0)))) <= 2 * float(ulp(
            np.array([np.log1p(39 * np.exp(-35.0))]), dt)[0])
        # log_softmax_backward where y = -inf: out = g
        y = ls.astype(dt)[3][None, :, None]
        g = data(dname, y.shape, "n1", np.random.default_rng(3))
        out = bwd(dname, g, np.ascontiguousarray(y), 1)
        m = np.isneginf(y.astype(np.float64))
        assert np.array_equal(out[m].astype(np.float64), g[m].astype(np.float64))


@pytest.mark.parametrize("dname", sorted(DT))
def test_zero_size_and_other_dtypes(dname):
    code, dt = DT[dname]
    x = np.ones(8, dtype=dt)
    y = np.full_like(x, 7)
    p = ffi.from_buffer
    for shape in ((0, 4, 1), (2, 0, 1), (2, 4, 0)):
        assert lib.aclk_softmax_fwd_relaxed(code, p(x), p(y), *shape, 0) == 0
        assert lib.aclk_softmax_bwd_relaxed(code, p(x), p(x), p(y), *shape, 1) == 0
    assert (y.astype(np.float64) == 7).all()
    f = np.ones(8, dtype=np.float32)
    for other in (0, 11, 3):
        assert lib.aclk_softmax_fwd_relaxed(other, p(f), p(f), 1, 8, 1, 0) == -1
        assert lib.aclk_softmax_bwd_relaxed(other, p(f), p(f), p(f), 1, 8, 1, 0) == -1


@pytest.mark.parametrize("dname", sorted(DT))
def test_same_bits_for_1_and_2_threads(dname):
    rng = np.random.default_rng(5)
    before = lib.aclk_num_threads()
    try:
        for shape in ((64, 4096, 1), (8, 512, 64), (1, 16, 70000), (300, 31, 1)):
            x, g = data(dname, shape, "n8", rng), data(dname, shape, "n1", rng)
            res = []
            for t in (1, 2):
                lib.aclk_set_num_threads(t)
                res.append([fwd(dname, x, 0), fwd(dname, x, 1),
                            bwd(dname, g, x, 0), bwd(dname, g, x, 1)])
            for a, b in zip(*res):
                assert a.tobytes() == b.tobytes(), shape
    finally:
        lib.aclk_set_num_threads(before)


def check_nan_beside_far(dname: str) -> None:
    """A far argument (-20000) with a NaN one vector (8 or 16 lanes) further along, in the same
    lane: a level's check of whether its fast exp may run must still see the far one (a min of
    the two vectors returns the NaN there). Forward: columns 3 and 11 (and 19) of a column
    block, the NaN columns' outputs NaN, the others within the bound; log_softmax_backward: y
    given, in a column block and in rows."""
    dt = DT[dname][1]
    rng = np.random.default_rng(21)
    x = rng.normal(0.0, 1.0, size=(1, 64, 48))
    x[0, 10, 3] = -20000.0
    x[0, 10, 11] = x[0, 10, 19] = np.nan
    x = x.astype(dt)
    check_fwd(dname, x, "NaN beside a far value")
    g = data(dname, x.shape, "n1", rng)
    # log_softmax_backward (the one with an exp): out = g - sum(g)*exp(y), the NaN elements NaN
    for y in (x, np.ascontiguousarray(x.transpose(2, 1, 0))):  # columns, then rows
        gg = np.ascontiguousarray(g.reshape(y.shape))
        g64, y64 = gg.astype(np.float64), y.astype(np.float64)
        t2 = np.sum(g64, axis=1, keepdims=True) * np.exp(y64)
        ref = g64 - t2
        big = np.maximum(np.nanmax(np.abs(g64), axis=1, keepdims=True),
                         np.nanmax(np.abs(t2), axis=1, keepdims=True))
        got = bwd(dname, gg, y, 1).astype(np.float64)
        nan = np.isnan(y64)
        assert np.isnan(got[nan]).all(), f"{dname} {y.shape}: a NaN y's output is not NaN"
        err = np.abs(got - ref)[~nan] / np.broadcast_to(big * EPS_BWD[dname], ref.shape)[~nan]
        assert np.max(err) <= 1.0, f"NaN beside a far value {dname} {y.shape}: {np.max(err)}"


@pytest.mark.parametrize("dname", sorted(DT))
def test_nan_beside_far_value(dname):
    check_nan_beside_far(dname)


def check_fast_exp_fallback(dname: str) -> None:
    """log_softmax_backward's fast exp (the AVX2 level) is tried first and checked after (the
    running min and max of y), a part with a y outside its range computed again with the
    clamped exp, and the rest of the chunk with it: the outputs of the other slices keep the
    same bits as in a call without the far ones, and those beside a far y meet the bound.
    Rows of 3 pieces (the far y in the second), column blocks and short-axis pairs; chunks of
    3 slices, every third with a far y (-200, or 95: above the range)."""
    dt = DT[dname][1]
    rng = np.random.default_rng(31)
    for shape, at in (((48, 2500, 1), (1500, 0)), ((48, 40, 64), (20, 37)),
                      ((48, 16, 48), (9, 20))):
        x = rng.normal(0.0, 1.0, size=shape)
        xm = x - x.max(axis=1, keepdims=True)
        y = (xm - np.log(np.exp(xm).sum(axis=1, keepdims=True))).astype(dt)
        g = data(dname, shape, "n1", rng)
        far = np.arange(shape[0]) % 3 == 1
        y[far, at[0], at[1]] = np.where(np.arange(far.sum()) % 2 == 0, -200.0, 95.0).astype(dt)
        out = bwd(dname, g, y, 1)
        near = ~far
        alone = bwd(dname, np.ascontiguousarray(g[near]), np.ascontiguousarray(y[near]), 1)
        assert out[near].tobytes() == alone.tobytes(), f"{dname} {shape}"
        low = np.flatnonzero(far)[::2]  # the -200 slices
        ref, big = ref_bwd(g[low], y[low], 1)
        err = bwd_err(dname, out[low], ref, big)
        assert err <= 1.0, f"far y {dname} {shape}: {err} x {EPS_BWD[dname]} max|term|"


@pytest.mark.parametrize("dname", sorted(DT))
def test_fast_exp_fallback(dname):
    check_fast_exp_fallback(dname)


ISA_CODE = """
import sys
sys.path.insert(0, sys.argv[1])
from aclnn_py.runtime.core import ffi, lib
import test_relaxed_kernels as t
print(ffi.string(lib.aclk_isa_name()).decode())
shapes = [(5, 3, 1), (6, 31, 1), (2, 4096, 1), (1, 20000, 1), (3, 31, 5), (2, 40, 64),
          (1, 16, 1100), (2, 3, 1100)]
for d in ("float16", "bfloat16"):
    t.check_all(d, seed=7, shapes=shapes)
    t.check_running_max(d)
    t.check_nan_beside_far(d)
    t.check_fast_exp_fallback(d)
print("ok")
"""


def test_every_isa_level_meets_the_bounds():
    env0 = dict(os.environ)
    env0.pop("ACLNN_EMU_ISA", None)
    here = str(Path(__file__).resolve().parent)
    seen = []
    for level in LEVELS:
        env = dict(env0, ACLNN_EMU_ISA=level)
        res = subprocess.run([sys.executable, "-c", ISA_CODE, here], env=env, text=True,
                             capture_output=True, timeout=300, cwd=tempfile.gettempdir())
        assert res.returncode == 0, f"ACLNN_EMU_ISA={level}:\n{res.stdout}\n{res.stderr}"
        got, status = res.stdout.split()[:2]
        assert status == "ok"
        if got != level:  # the CPU lacks this level: it ran the best it has
            continue
        seen.append(level)
    assert "generic" in seen


NT_ROWS_CODE = """
import hashlib
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from aclnn_py.runtime.core import ffi, lib
import test_relaxed_kernels as t
print(ffi.string(lib.aclk_isa_name()).decode())
rng = np.random.default_rng(37)
# (rows, row length, the output's start in elements past a 64-byte boundary): rows of 4100
# start at every 8 bytes of a line, rows of 8200 (their exps computed again) every 16
for rows, m, off in ((2100, 4100, 0), (2100, 4100, 1), (1030, 8200, 0)):
    for d in ("float16", "bfloat16"):
        code, dt = t.DT[d]
        x = (rng.standard_normal(rows * m) * 4.0).astype(dt)
        buf = np.empty(rows * m + 64, dtype=dt)
        at = (-buf.ctypes.data // 2) % 32 + off
        y = buf[at:at + rows * m]
        for lg in (0, 1):
            assert lib.aclk_softmax_fwd_relaxed(code, ffi.from_buffer(x), ffi.from_buffer(y),
                                                rows, m, 1, lg) == 0
            print(rows, m, off, d, lg, hashlib.sha256(y.tobytes()).hexdigest())
"""


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="streaming stores are the x86 vector levels'")
def test_relaxed_nt_same_bytes_rows():
    """The forward rows' outputs have the same bytes whether they are streamed (an output above
    half the last-level cache: ACLNN_EMU_LLC=32M makes these 17 MB ones streamed) or stored
    normally, at each vector level the CPU has: rows whose length is not a multiple of 32
    (each row's output starting at another place in its 64-byte line), softmax rows that keep
    their exps and longer ones that compute them again, float16 and bfloat16, softmax and
    log_softmax."""
    env0 = dict(os.environ)
    env0.pop("ACLNN_EMU_LLC", None)
    here = str(Path(__file__).resolve().parent)
    for level in ("avx2", "avx512"):
        outs = []
        for llc in (None, "32M"):
            env = dict(env0, ACLNN_EMU_ISA=level)
            if llc:
                env["ACLNN_EMU_LLC"] = llc
            res = subprocess.run([sys.executable, "-c", NT_ROWS_CODE, here], env=env, text=True,
                                 capture_output=True, timeout=300, cwd=tempfile.gettempdir())
            assert res.returncode == 0, f"{level} LLC={llc}:\n{res.stdout}\n{res.stderr}"
            outs.append(res.stdout.splitlines())
        if outs[0][0] != level:  # the CPU lacks this level
            continue
        assert len(outs[0]) == 1 + 3 * 2 * 2
        for a, b in zip(*outs):
            assert a == b, f"{level}: normal stores {a} / streamed {b}"


NT_SMALL_CODE = """
import hashlib
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from aclnn_py.runtime.core import ffi, lib
import test_relaxed_kernels as t
print(ffi.string(lib.aclk_isa_name()).decode())
rng = np.random.default_rng(11)
# (shape, output offset in elements from a 64-byte boundary): on a line (streamed from
# registers) and off it (stored normally), a last block narrower than the others (600000 %
# 1024 columns), short axes, an odd inner
cases = [((1, 16, 600000), 0), ((1, 16, 600000), 1), ((2, 7, 40000), 0), ((3, 3, 4160), 0),
         ((2, 5, 4160), 17), ((2, 16, 4001), 0)]
for d in ("float16", "bfloat16"):
    code, dt = t.DT[d]
    for shape, off in cases:
        x = t.data(d, shape, "n8", rng)
        x.reshape(-1)[::997] = -np.inf
        n = x.size
        for lg in (0, 1):
            buf = np.full(n + 64, np.nan, dtype=dt)
            o = off + -buf.ctypes.data % 64 // 2
            y = buf[o:o + n]
            assert lib.aclk_softmax_fwd_relaxed(code, ffi.from_buffer(x), ffi.from_buffer(y),
                                                *shape, lg) == 0
            rest = np.concatenate([buf[:o], buf[o + n:]]).astype(np.float32)
            assert np.isnan(rest).all(), "written outside the output"
            print(d, shape, off, lg, hashlib.sha256(y.tobytes()).hexdigest())
"""


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="streaming stores are the x86 vector levels'")
def test_relaxed_nt_same_bytes_small():
    """The short-axis forward blocks stream whole lines from registers when the output is
    streamed (larger than half the LLC) and every block's a-rows start on a line: the bytes
    are those of normal stores at each vector level, on a line and off it. ACLNN_EMU_LLC
    (read when the core loads) set to 64G (no output streams), 32M (the (16, 600000) outputs,
    19 MB, stream) and 64K (every output above 32 KiB streams); a subprocess each."""
    env0 = dict(os.environ)
    here = str(Path(__file__).resolve().parent)
    for level in ("avx2", "avx512"):
        outs = {}
        for llc in ("64G", "32M", "64K"):
            env = dict(env0, ACLNN_EMU_ISA=level, ACLNN_EMU_LLC=llc)
            res = subprocess.run([sys.executable, "-c", NT_SMALL_CODE, here], env=env, text=True,
                                 capture_output=True, timeout=300, cwd=tempfile.gettempdir())
            assert res.returncode == 0, f"{level} {llc}:\n{res.stdout}\n{res.stderr}"
            outs[llc] = res.stdout.splitlines()
        if outs["64G"][0] != level:  # the CPU lacks this level
            continue
        assert len(outs["64G"]) == 1 + 2 * 6 * 2
        for llc in ("32M", "64K"):
            for a, b in zip(outs["64G"], outs[llc]):
                assert a == b, f"ACLNN_EMU_ISA={level} ACLNN_EMU_LLC={llc}: {b} against {a}"


NT_BWD_CODE = """
import hashlib
import sys
import ml_dtypes
import numpy as np
from aclnn_py.runtime.core import ffi, lib
print(ffi.string(lib.aclk_isa_name()).decode())
P = ffi.from_buffer
rng = np.random.default_rng(37)
for code, dt in ((1, np.float16), (27, ml_dtypes.bfloat16)):
    # outputs of 17.3 MB: rows, dim 1 of (33, 4096, 64), dim 0 of a 16-long axis
    for shape in ((2112, 4096, 1), (33, 4096, 64), (1, 16, 540000)):
        n = shape[0] * shape[1] * shape[2]
        g = rng.normal(0.0, 1.0, size=n).astype(dt)
        for lg in (0, 1):
            y = (-rng.exponential(3.0, size=n) if lg else rng.random(n)).astype(dt)
            # far y (-200, 95) and a NaN in some slices: the fast exp's fallback, NaN outputs
            y[n // 3], y[n // 2], y[2 * n // 3] = -200.0, 95.0, np.nan
            for off in (0, 8):  # the output 64-byte aligned, then 16 bytes past a line
                buf = np.empty(n + 64, dtype=dt)
                k = (-buf.ctypes.data % 64) // 2 + off
                out = buf[k:k + n]
                rc = lib.aclk_softmax_bwd_relaxed(code, P(g), P(y), P(out), *shape, lg)
                assert rc == 0
                print(code, shape, lg, off, hashlib.sha256(out.tobytes()).hexdigest())
"""


@pytest.mark.skipif(not any(m in platform.machine().lower() for m in ("x86", "amd64")),
                    reason="streamed stores are made at the x86 vector levels only")
def test_relaxed_nt_same_bytes_bwd():
    """Relaxed backward outputs above 16 MiB have the same bytes whether they are streamed
    (ACLNN_EMU_LLC=32M: outputs above 16 MiB take non-temporal stores) or stored normally
    (ACLNN_EMU_LLC=4G), at each vector level the CPU has: rows, dim 1 and a short dim 0,
    float16 and bfloat16, the output aligned to a line and 16 bytes past one, with far and NaN
    y among the values."""
    env0 = dict(os.environ)
    env0.pop("ACLNN_EMU_ISA", None)
    for level in ("avx2", "avx512"):
        outs = []
        for llc in ("4G", "32M"):
            env = dict(env0, ACLNN_EMU_ISA=level, ACLNN_EMU_LLC=llc)
            res = subprocess.run([sys.executable, "-c", NT_BWD_CODE], env=env, text=True,
                                 capture_output=True, timeout=300, cwd=tempfile.gettempdir())
            assert res.returncode == 0, f"{level} {llc}:\n{res.stdout}\n{res.stderr}"
            outs.append(res.stdout.splitlines())
        if outs[0][0] != level:  # the CPU lacks this level
            continue
        assert len(outs[0]) == 1 + 2 * 3 * 2 * 2
        for a, b in zip(*outs):
            assert a == b, f"{level}: normal stores {a}, streamed {b}"


NT_FCOL_CODE = """
import hashlib
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from aclnn_py.runtime.core import ffi, lib
import test_relaxed_kernels as t
print(ffi.string(lib.aclk_isa_name()).decode())
if sys.argv[2] == "bounds":  # small outputs streamed too (ACLNN_EMU_LLC=64K): the bounds
    shapes = [(3, 31, 5), (2, 300, 100), (2, 40, 64), (1, 500, 1100), (1, 16, 2500)]
    for d in ("float16", "bfloat16"):
        t.check_all(d, seed=11, shapes=shapes)
        t.check_running_max(d)
    print("ok")
    sys.exit(0)
rng = np.random.default_rng(3)
shape = (32, 4097, 64)  # 16.0 MiB and a little more of output: streamed at ACLNN_EMU_LLC=32M
n = shape[0] * shape[1] * shape[2]
for d in ("float16", "bfloat16"):
    code, dt = t.DT[d]
    x = (rng.standard_normal(n, dtype=np.float32) * 4).astype(dt).reshape(shape)
    x[0, 5, 3], x[1, :, 7], x[2, 100, 9], x[3, :, 8] = np.nan, -np.inf, np.inf, 2.0
    buf = np.empty(n + 64, dt)
    for lg in (0, 1):
        for off in (0, 8):  # the output on a 64-byte boundary, and 16 bytes past one
            s = (-buf.ctypes.data % 64) // 2 + off
            y = buf[s:s + n]
            assert lib.aclk_softmax_fwd_relaxed(code, ffi.from_buffer(x), ffi.from_buffer(y),
                                                *shape, lg) == 0
            print(d, lg, off, hashlib.sha256(y.tobytes()).hexdigest())
"""


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="no streaming stores off x86 (the generic level stores normally)")
def test_relaxed_nt_same_bytes_fcol():
    """The forward column blocks stream an output above half the LLC (ACLNN_EMU_LLC=32M: this
    one) and store a smaller one normally (64G): the same bytes either way, at each vector
    level the CPU has (the generic level never streams), wherever the output starts; and the
    bounds hold when every output is streamed (64K), heads and tails of a-rows included."""
    env0 = {k: v for k, v in os.environ.items() if k not in ("ACLNN_EMU_ISA", "ACLNN_EMU_LLC")}
    here = str(Path(__file__).resolve().parent)

    def run(level: str, llc: str, what: str) -> tuple[str, list[str]]:
        env = dict(env0, ACLNN_EMU_ISA=level, ACLNN_EMU_LLC=llc)
        res = subprocess.run([sys.executable, "-c", NT_FCOL_CODE, here, what], env=env,
                             text=True, capture_output=True, timeout=300,
                             cwd=tempfile.gettempdir())
        assert res.returncode == 0, f"{level} {llc}:\n{res.stdout}\n{res.stderr}"
        lines = res.stdout.splitlines()
        return lines[0], lines[1:]

    ran = 0
    for level in ("avx2", "avx512"):
        got, ok = run(level, "64K", "bounds")
        if got != level:  # the CPU lacks this level
            continue
        assert ok == ["ok"]
        streamed, normal = run(level, "32M", "bytes")[1], run(level, "64G", "bytes")[1]
        assert len(streamed) == 8 and streamed == normal, level
        ran += 1
    if not ran:
        pytest.skip("no vector level on this CPU: nothing is streamed")
