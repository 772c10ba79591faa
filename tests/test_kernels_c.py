"""The C kernels (csrc/kernels) seen directly through the compiled core, below the runtime.

- The float32 exp / log of csrc/kernels/vecmath.h against libm over every float32 input
  (tests/c/ulp_exp_log.c, built with the core's compiler and flags): the error figures stated in
  vecmath.h must be the measured ones.
- The reference kernels (csrc/kernels/reference.c) against NumPy float64 goldens written here, so
  the oracle is itself checked; then the fast kernels against the reference kernels over shapes
  that take every path of softmax.c, all dtypes and special values, with the error bounds stated
  per dtype below.
- Floating-point contraction: the kernel files that rely on separately rounded multiply and add
  switch contraction off themselves (tests/c/fp_contract.c, built with FMA and contraction
  asked for).
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from aclnn_py._emu import ffi, lib
from cbuild import load_build_module

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
TESTS_C = Path(__file__).resolve().parent / "c"

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
FLOATS = (F32, F16, BF16, F64)
CODE = {F32: 0, F16: 1, I32: 3, F64: 11, BF16: 27}  # CANN aclDataType values
NAME = {F32: "float32", F16: "float16", BF16: "bfloat16", F64: "float64", I32: "int32"}
# significand bits (with the implicit one) and least normal exponent, for ulp()
FORMAT = {F32: (24, -126), F16: (11, -14), BF16: (8, -126), F64: (53, -1022)}


BUILD = load_build_module()


def _compiler() -> list[str]:
    cc = BUILD.c_compiler()
    if shutil.which(cc[0]) is None:
        pytest.skip(f"no C compiler: {cc[0]!r} (the compiler that builds aclnn_py's core, "
                    "$CC or the interpreter's CC) is not on PATH")
    return cc


def _compile(out: Path, sources: list[Path], flags: list[str]) -> Path:
    cmd = [*_compiler(), *flags, f"-I{CSRC / 'include'}", f"-I{CSRC / 'kernels'}",
           *map(str, sources), "-o", str(out), *BUILD.link_args("")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    return out


def _ptr(a: np.ndarray):
    return ffi.from_buffer(a)


# ---------------------------------------------------------------------- exp / log ulp ----

def _claims() -> dict[str, float]:
    """The max errors vecmath.h states for aclk_exp_f32 and aclk_log_f32."""
    text = (CSRC / "kernels" / "vecmath.h").read_text(encoding="utf-8")
    out = {}
    for fn in ("exp", "log"):
        m = re.search(rf"aclk_{fn}_f32:.*?max error ([0-9.]+) ulp", text, re.S)
        assert m, f"vecmath.h states no max error for aclk_{fn}_f32"
        out[fn] = float(m.group(1))
    return out


def test_exp_log_ulp_over_every_float32(tmp_path):
    """Every float32 input (exp: all but NaN/inf, which are checked as specials; log: every
    positive normal, its stated domain, plus NaN and +inf) against libm in double; and
    aclk_exp_neg_f32 and the array form aclk_vexp_sub1_f32 (whose blocks of arguments in
    [-86, 0] take aclk_exp_neg_normal_f32) equal to aclk_exp_f32 bit for bit on every x <= 0,
    the array forms also on blocks holding NaNs, -inf and arguments below -86. The stated
    figure must be the measured one rounded up to 4 decimals (a stale or loose claim fails), and
    within docs/architecture.md's "<= 1 ulp"."""
    # isa.c (and the conversion tables it picks from): the level the loops run at
    sources = [TESTS_C / "ulp_exp_log.c", CSRC / "kernels" / "isa.c", CSRC / "kernels" / "cvt.c"]
    exe = _compile(tmp_path / "ulp_exp_log", sources, BUILD.compile_args(""))
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, f"special values wrong:\n{res.stdout}{res.stderr}"
    got = {}
    neg = None
    for line in res.stdout.splitlines():
        n = re.match(r"exp_neg mismatches=(\d+) checked=(\d+)$", line)
        if n:
            neg = (int(n.group(1)), int(n.group(2)))
            continue
        m = re.match(r"(exp|log) max_ulp=([0-9.]+|inf) at=(0x[0-9a-f]+) \((\S+)\) "
                     r"checked=(\d+) specials_bad=(\d+)$", line)
        assert m, f"unexpected output line: {line!r}"
        got[m.group(1)] = (float(m.group(2)), m.group(3), m.group(4), int(m.group(5)),
                           int(m.group(6)))
    assert set(got) == {"exp", "log"}, res.stdout
    # softmax's exp for arguments <= 0 returns aclk_exp_f32's bits on every negative float32
    # (2^31 - 2^23 of them: all but the NaN and -inf patterns, which are specials)
    assert neg == (0, 2**31 - 2**23), f"aclk_exp_neg_f32 vs aclk_exp_f32: {neg}\n{res.stdout}"
    # exp: all 2^32 patterns but the 2^24 with exponent 255; log: 254 exponents x 2^23
    assert got["exp"][3] == 2**32 - 2**24 and got["log"][3] == 254 * 2**23
    claims = _claims()
    for fn, (err, bits, x, _, bad) in got.items():
        assert bad == 0
        assert err <= claims[fn], (
            f"aclk_{fn}_f32: measured max error {err:.6f} ulp at x = {x} ({bits}) exceeds the "
            f"{claims[fn]} ulp stated in vecmath.h")
        assert claims[fn] - err < 1e-4, (
            f"aclk_{fn}_f32: vecmath.h states {claims[fn]} ulp, measured {err:.6f}: update it")
        assert err <= 1.0


# ------------------------------------------------------------------ numerics helpers ----

U24, U53 = 2.0**-24, 2.0**-53


def ulp(v: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Spacing of dt's numbers at |v| (the subnormal spacing below the normal range)."""
    p, emin = FORMAT[dt]
    a = np.abs(np.asarray(v, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        _, e = np.frexp(np.where(np.isfinite(a), a, 0.0))
    e = np.maximum(np.where(a > 0, e - 1, emin), emin)
    return np.ldexp(1.0, (e - (p - 1)).astype(np.int64))


def widen(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def fin(a: np.ndarray) -> np.ndarray:
    """|a| where finite, else 0 (terms of a bound that multiply an exact zero)."""
    return np.where(np.isfinite(a), np.abs(a), 0.0)


def assert_within(got: np.ndarray, ref: np.ndarray, bound: np.ndarray, what: str) -> None:
    """NaN where ref is NaN, the same infinities, and |got - ref| <= bound elsewhere."""
    g, r = widen(got).ravel(), widen(ref).ravel()
    b = np.broadcast_to(bound, np.shape(ref)).ravel()
    nan_g, nan_r = np.isnan(g), np.isnan(r)
    assert np.array_equal(nan_g, nan_r), (
        f"{what}: NaN positions differ at {np.flatnonzero(nan_g != nan_r)[:5].tolist()}: "
        f"got {g[nan_g != nan_r][:5]}, ref {r[nan_g != nan_r][:5]}")
    inf = np.isinf(r) | np.isinf(g)
    assert np.array_equal(g[inf], r[inf]), (
        f"{what}: infinities differ at {np.flatnonzero(inf)[:5].tolist()}: "
        f"got {g[inf][:5]}, ref {r[inf][:5]}")
    ok = np.isfinite(r) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        bad = ok & (np.abs(g - r) > b)
    if bad.any():
        i = np.flatnonzero(bad)
        j = i[np.argmax(np.abs(g - r)[i] / b[i])]
        raise AssertionError(
            f"{what}: {i.size} elements beyond the bound; worst at flat index {j}: got "
            f"{g[j]!r}, ref {r[j]!r}, |diff| {abs(g[j] - r[j]):.3g} > bound {b[j]:.3g}")


def softmax_terms(x: np.ndarray):
    """Float64 quantities of the softmax family for x of shape (outer, axis, inner)."""
    with np.errstate(all="ignore"):
        m = np.max(np.where(np.isnan(x), -np.inf, x), axis=1, keepdims=True)  # skips NaN
        d = x - m
        e = np.exp(d)
        s = e.sum(axis=1, keepdims=True)
        w = np.where(e > 0, e * fin(d), 0.0).sum(axis=1, keepdims=True) / s
    return d, e, s, w


def golden_fwd(x: np.ndarray, lg: int) -> np.ndarray:
    """y = exp(x - m) / sum exp(x - m), or (x - m) - log(sum exp(x - m)); m = max(x) without
    NaNs (PyTorch / CANN: a NaN, +inf or an all -inf row gives NaN)."""
    d, e, s, _ = softmax_terms(x)
    with np.errstate(all="ignore"):
        return d - np.log(s) if lg else e / s


def golden_bwd(g: np.ndarray, y: np.ndarray, lg: int) -> np.ndarray:
    """softmax: g*y - sum(g*y)*y; log-softmax: g - exp(y)*sum(g) (CANN / PyTorch)."""
    with np.errstate(all="ignore"):
        if lg:
            return g - np.exp(y) * g.sum(axis=1, keepdims=True)
        return g * y - (g * y).sum(axis=1, keepdims=True) * y


def bound_fwd(x: np.ndarray, golden: np.ndarray, lg: int, u: float, tiny: float) -> np.ndarray:
    """Error bound of a softmax-family forward result computed with unit roundoff u (exp and log
    within 1 ulp = 2u relative, x - m rounded once: u|x-m|; the sum of exps accumulated in
    float64 in any order, then rounded; the final division or subtraction rounded) against the
    exact one: softmax relative u*(8 + |x-m| + W) + axis*2^-52, W = sum(e*|x-m|)/sum(e) (the
    sum's error from the exps' arguments); log-softmax absolute
    u*(2|x-m| + 2|y| + 3|log s| + 4 + W) + axis*2^-52; plus 4 * the compute dtype's least
    subnormal (exps that underflow)."""
    d, _, s, w = softmax_terms(x)
    axis = x.shape[1]
    with np.errstate(all="ignore"):
        if lg:
            b = u * (2 * fin(d) + 2 * fin(golden) + 3 * fin(np.log(s)) + 4 + w) + axis * 2.0**-52
        else:
            b = fin(golden) * (u * (8 + fin(d) + w) + axis * 2.0**-52)
    return b + 4 * tiny


def bound_bwd(g: np.ndarray, y: np.ndarray, golden: np.ndarray, lg: int, u: float,
              tiny: float) -> np.ndarray:
    """Error bound of a backward result computed with unit roundoff u, the sum accumulated in
    that precision in any order (so up to axis*u*sum|terms|): softmax
    u*(2|g y| + 2|s y| + |out|) + |y|*(axis*u*sum|g y| + u|s|); log-softmax
    u*(|g| + 4 e^y |s| + |out|) + e^y * axis*u*sum|g|; plus 4 least subnormals."""
    axis = g.shape[1]
    with np.errstate(all="ignore"):
        if lg:
            s = g.sum(axis=1, keepdims=True)
            ey = np.exp(y)
            b = (u * (fin(g) + 4 * ey * fin(s) + fin(golden))
                 + ey * axis * u * fin(g).sum(axis=1, keepdims=True))
        else:
            gy = g * y
            s = gy.sum(axis=1, keepdims=True)
            b = (u * (2 * fin(gy) + 2 * fin(s) * fin(y) + fin(golden))
                 + fin(y) * (axis * u * fin(gy).sum(axis=1, keepdims=True) + u * fin(s)))
    return b + 4 * tiny


def narrow_slack(got: np.ndarray, ref: np.ndarray, dt: np.dtype) -> np.ndarray:
    """One ulp of the output dtype, 0 for float64: each side rounded its own value (NumPy /
    ml_dtypes round float64 to bfloat16 through float32, which can also be one ulp off)."""
    if dt == F64:
        return np.zeros(np.shape(ref))
    return np.maximum(ulp(widen(ref), dt), ulp(widen(got), dt))


# Shapes (outer, axis, inner) that take every path of softmax.c: axis 1; the small-slab batch
# (forward axis*inner <= 128, backward <= 16); rows (inner 1, forward axis > 32, backward > 12),
# rows longer than one 512-element segment and longer than the 8192-float row buffer; column
# blocks with one and several segments; inner > 512 (several column blocks).
SHAPES = [
    (1, 1, 1), (3, 1, 1), (1, 1, 7), (4, 1, 5),
    (1, 2, 1), (7, 3, 1), (5, 12, 1), (6, 13, 1), (3, 17, 3), (40, 3, 5), (64, 5, 2),
    (4, 32, 1), (3, 33, 1), (2, 100, 1), (3, 127, 1), (2, 129, 1),
    (2, 513, 1), (1, 5000, 1), (1, 9000, 1),
    (9, 4, 4), (5, 8, 16), (3, 40, 13), (2, 600, 7), (1, 130, 9),
    (2, 3, 700), (2, 5, 513), (1, 2, 1100),
    (1, 300, 600),  # 16-bit column blocks narrower than 512 (axis x width <= 65536)
    (1, 16, 5000),  # column blocks wider than 512 (a short axis): 4096 columns, then 904
    (2, 700, 100),  # whole slabs of 70000 elements (> 65536): exps kept in a 1 MB buffer
]


def special_rows(x: np.ndarray) -> np.ndarray:
    """Rows (along the axis) with +inf, -inf, NaN, all -inf and all but one -inf, cycling over
    outer x inner; x has shape (outer, axis, inner) and at least 3 elements per row."""
    x = x.copy()
    rows = [(o, i) for o in range(x.shape[0]) for i in range(x.shape[2])]
    for k, (o, i) in enumerate(rows):
        r = x[o, :, i]
        kind = k % 6
        if kind == 1:
            r[1] = np.inf
        elif kind == 2:
            r[0] = -np.inf
            r[-1] = -np.inf
        elif kind == 3:
            r[len(r) // 2] = np.nan
        elif kind == 4:
            r[:] = -np.inf
        elif kind == 5:
            r[:] = -np.inf
            r[-1] = 0.5
    return x


SPECIAL_SHAPES = [(6, 9, 1), (2, 9, 3), (6, 40, 1), (3, 600, 1), (2, 20, 9), (12, 3, 1)]


def _fwd_inputs(dt: np.dtype):
    """(name, x in dt, special) cases over SHAPES and SPECIAL_SHAPES."""
    rng = np.random.default_rng(7)
    for shape in SHAPES:
        for scale in (1.0, 30.0):
            yield (f"{shape} N(0,{scale:g})",
                   (rng.standard_normal(shape) * scale).astype(dt), False)
    for shape in SPECIAL_SHAPES:
        yield f"{shape} specials", special_rows(rng.standard_normal(shape) * 5).astype(dt), True


def _bwd_inputs(dt: np.dtype, lg: int):
    """(name, grad, y, special): y a softmax / log-softmax output (as the operator gets it),
    grad N(0,1); special cases add NaN / +-inf to grad and take y of rows with specials."""
    rng = np.random.default_rng(11)
    for name, x, special in _fwd_inputs(dt):
        y = golden_fwd(widen(x), lg).astype(dt)
        g = rng.standard_normal(x.shape).astype(dt)
        if special:
            gf = g.reshape(-1)
            gf[::7] = np.nan
            gf[3::11] = np.inf
            gf[5::13] = -np.inf
        yield name, g, y, special


def run_fwd(fn, x: np.ndarray, lg: int) -> np.ndarray:
    y = np.empty_like(x)
    o, a, i = x.shape
    assert fn(CODE[x.dtype], _ptr(x), _ptr(y), o, a, i, lg) == 0
    return y


def run_bwd(fn, g: np.ndarray, y: np.ndarray, lg: int) -> np.ndarray:
    out = np.empty_like(g)
    o, a, i = g.shape
    assert fn(CODE[g.dtype], _ptr(g), _ptr(y), _ptr(out), o, a, i, lg) == 0
    return out


def _id(dt, lg, direction):
    return f"{direction}-{'log_softmax' if lg else 'softmax'}-{NAME[dt]}"


CASES = [(dt, lg) for dt in FLOATS for lg in (0, 1)]


# -------------------------------------------------------- reference kernels vs NumPy ----

@pytest.mark.parametrize("dt,lg", CASES, ids=[_id(d, g, "fwd") for d, g in CASES])
def test_reference_softmax_fwd_matches_numpy(dt, lg):
    """The reference computes in float64 and rounds once: within float64 rounding of the golden
    (sums in another order), then one ulp of the output dtype."""
    for name, x, _ in _fwd_inputs(dt):
        xw = widen(x)
        gold = golden_fwd(xw, lg)
        got = run_fwd(lib.aclk_ref_softmax_fwd, x, lg)
        gold_dt = gold.astype(dt)
        b = bound_fwd(xw, gold, lg, U53, 2.0**-1074) + narrow_slack(got, gold_dt, dt)
        assert_within(got, gold_dt, b, f"aclk_ref_softmax_fwd {NAME[dt]} log={lg} {name}")


@pytest.mark.parametrize("dt,lg", CASES, ids=[_id(d, g, "bwd") for d, g in CASES])
def test_reference_softmax_bwd_matches_numpy(dt, lg):
    for name, g, y, _ in _bwd_inputs(dt, lg):
        gw, yw = widen(g), widen(y)
        gold = golden_bwd(gw, yw, lg)
        got = run_bwd(lib.aclk_ref_softmax_bwd, g, y, lg)
        gold_dt = gold.astype(dt)
        b = bound_bwd(gw, yw, gold, lg, U53, 2.0**-1074) + narrow_slack(got, gold_dt, dt)
        assert_within(got, gold_dt, b, f"aclk_ref_softmax_bwd {NAME[dt]} log={lg} {name}")


def test_reference_softmax_in_place():
    """Outputs may alias inputs, as the fast kernels allow."""
    x = np.random.default_rng(3).standard_normal((3, 50, 4)).astype(np.float32)
    for lg in (0, 1):
        y = run_fwd(lib.aclk_ref_softmax_fwd, x, lg)
        xi = x.copy()
        assert lib.aclk_ref_softmax_fwd(0, _ptr(xi), _ptr(xi), 3, 50, 4, lg) == 0
        assert np.array_equal(xi, y)
        g = x[::-1].copy()
        out = run_bwd(lib.aclk_ref_softmax_bwd, g, y, lg)
        for alias in ("grad", "y"):
            gi, yi = g.copy(), y.copy()
            dst = gi if alias == "grad" else yi
            assert lib.aclk_ref_softmax_bwd(0, _ptr(gi), _ptr(yi), _ptr(dst), 3, 50, 4, lg) == 0
            assert np.array_equal(dst, out), alias


@pytest.mark.parametrize("dt", FLOATS, ids=[NAME[d] for d in FLOATS])
def test_fast_softmax_in_place(dt):
    """The fast kernels with the output in an input's buffer give the bits they give out of
    place: rows (short, long, longer than the row buffer), column blocks and small slabs;
    float32 rows write a separate output directly (no staging buffer), so this is where an
    aliased output must not take that path."""
    rng = np.random.default_rng(11)
    for shape in [(5, 100, 1), (2, 5000, 1), (1, 9000, 1), (3, 40, 13), (2, 3, 700), (9, 4, 4)]:
        x = (rng.standard_normal(shape) * 4).astype(dt)
        g = rng.standard_normal(shape).astype(dt)
        o, a, i = shape
        for lg in (0, 1):
            y = run_fwd(lib.aclk_softmax_fwd, x, lg)
            xi = x.copy()
            assert lib.aclk_softmax_fwd(CODE[dt], _ptr(xi), _ptr(xi), o, a, i, lg) == 0
            assert xi.tobytes() == y.tobytes(), (shape, lg, "fwd")
            out = run_bwd(lib.aclk_softmax_bwd, g, y, lg)
            for alias in ("grad", "y"):
                gi, yi = g.copy(), y.copy()
                dst = gi if alias == "grad" else yi
                rc = lib.aclk_softmax_bwd(CODE[dt], _ptr(gi), _ptr(yi), _ptr(dst), o, a, i, lg)
                assert rc == 0
                assert dst.tobytes() == out.tobytes(), (shape, lg, alias)


HS_PARAMS = [(1 / 6, 0.5), (0.2, 0.5), (-0.3, 0.1), (1e-3, 0.0), (2.0, -1.0)]


def hs_inputs(dt: np.dtype) -> np.ndarray:
    """Every bit pattern for the 16-bit types; for float32 / float64 a dense grid over the
    active range, the boundary points, specials and random bit patterns; int32 extremes."""
    rng = np.random.default_rng(5)
    if dt in (F16, BF16):
        return np.arange(65536, dtype=np.uint16).view(dt)
    if dt == I32:
        edge = np.array([-2**31, -2**31 + 1, 2**31 - 1, 2**31 - 2], dtype=np.int64)
        return np.concatenate([np.arange(-40, 41), edge,
                               rng.integers(-2**31, 2**31, 1000)]).astype(np.int32)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 2.5, -2.5, 5.0, -5.0, 500.0]
    grid = np.linspace(-6, 6, 200001)
    if dt == F32:
        near = np.array([np.nextafter(np.float32(v), np.float32(d))
                         for v in (3, -3, 2.5, -2.5, 5, -5) for d in (-np.inf, np.inf)], F32)
        bits = rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32).view(F32)
        return np.concatenate([np.array(specials, F32), grid.astype(F32), near, bits])
    bits = rng.integers(0, 2**63, 200000, dtype=np.uint64).view(F64)
    return np.concatenate([np.array(specials, F64), grid, bits])


def hs_golden(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """CANN's Hardsigmoid: l = x*alpha + beta as a rounded multiply then a rounded add, in
    float32 for float32 / float16 / bfloat16 / int32 (alpha, beta rounded to float32), in float64
    for float64; y = 0 if l <= 0, 1 if l >= 1, else l (NaN stays NaN); int32 truncated."""
    ct = F64 if x.dtype == F64 else F32
    with np.errstate(all="ignore"):
        lin = np.multiply(x.astype(ct), ct.type(alpha), dtype=ct)
        lin = np.add(lin, ct.type(beta), dtype=ct)
        y = np.where(lin <= 0, ct.type(0), np.where(lin >= 1, ct.type(1), lin)).astype(ct)
    if x.dtype == I32:
        return np.trunc(y).astype(I32)
    return y.astype(x.dtype)


def hsb_golden(g: np.ndarray, x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """grad*alpha where 0 < l < 1 (l as in hs_golden), else 0: a select."""
    ct = F64 if x.dtype == F64 else F32
    with np.errstate(all="ignore"):
        lin = np.multiply(x.astype(ct), ct.type(alpha), dtype=ct)
        lin = np.add(lin, ct.type(beta), dtype=ct)
        act = np.multiply(g.astype(ct), ct.type(alpha), dtype=ct)
        out = np.where((lin > 0) & (lin < 1), act, ct.type(0)).astype(ct)
    return out.astype(x.dtype)


def assert_same_bits(got: np.ndarray, ref: np.ndarray, what: str) -> None:
    """Bit for bit, except that any NaN matches any NaN."""
    assert got.dtype == ref.dtype and got.shape == ref.shape
    if got.dtype.kind == "i":
        bad = got != ref
    else:
        gi = got.view(f"u{got.dtype.itemsize}")
        ri = ref.view(f"u{ref.dtype.itemsize}")
        nan_g, nan_r = np.isnan(widen(got)), np.isnan(widen(ref))
        bad = (nan_g != nan_r) | (~nan_g & (gi != ri))
    if bad.any():
        i = np.flatnonzero(bad)
        raise AssertionError(f"{what}: {i.size} elements differ, first at {i[0]}: "
                             f"got {got.ravel()[i[0]]!r}, expected {ref.ravel()[i[0]]!r}")


def run_hs(fn, x, alpha, beta):
    y = np.empty_like(x)
    assert fn(CODE[x.dtype], _ptr(x), _ptr(y), x.size, alpha, beta) == 0
    return y


def run_hsb(fn, g, x, alpha, beta):
    out = np.empty_like(g)
    assert fn(CODE[x.dtype], _ptr(g), _ptr(x), _ptr(out), x.size, alpha, beta) == 0
    return out


def _hs_grad(x: np.ndarray) -> np.ndarray:
    g = np.random.default_rng(9).standard_normal(x.size).astype(x.dtype)
    g[::97] = np.nan
    g[5::101] = np.inf
    return g


@pytest.mark.parametrize("dt", [F32, F16, BF16, I32, F64], ids=lambda d: NAME[d])
def test_reference_hardsigmoid_matches_numpy(dt):
    """Bit for bit: the operator is defined as float32 (float64) arithmetic, which NumPy does
    with the same roundings."""
    x = hs_inputs(dt)
    for alpha, beta in HS_PARAMS:
        what = f"{NAME[dt]} alpha={alpha} beta={beta}"
        assert_same_bits(run_hs(lib.aclk_ref_hardsigmoid_fwd, x, alpha, beta),
                         hs_golden(x, alpha, beta), f"aclk_ref_hardsigmoid_fwd {what}")
        if dt != I32:
            g = _hs_grad(x)
            assert_same_bits(run_hsb(lib.aclk_ref_hardsigmoid_bwd, g, x, alpha, beta),
                             hsb_golden(g, x, alpha, beta), f"aclk_ref_hardsigmoid_bwd {what}")


# -------------------------------------------------------- fast kernels vs reference ----

COMPUTE_U = {F32: U24, F16: U24, BF16: U24, F64: U53}
COMPUTE_TINY = {F32: 2.0**-149, F16: 2.0**-149, BF16: 2.0**-149, F64: 2.0**-1074}


@pytest.mark.parametrize("dt,lg", CASES, ids=[_id(d, g, "fwd") for d, g in CASES])
def test_fast_softmax_fwd_matches_reference(dt, lg):
    """Bounds per dtype (bound_fwd): float32 / float16 / bfloat16 compute in float32
    (u = 2^-24), float64 in float64 (u = 2^-53); float16 / bfloat16 results may further differ
    by one ulp of the output dtype (the fast kernel rounds a float32 value, the reference a
    float64 one). The reference's own error is below float64 rounding (checked above)."""
    for name, x, _ in _fwd_inputs(dt):
        xw = widen(x)
        ref = run_fwd(lib.aclk_ref_softmax_fwd, x, lg)
        got = run_fwd(lib.aclk_softmax_fwd, x, lg)
        b = (bound_fwd(xw, golden_fwd(xw, lg), lg, COMPUTE_U[dt], COMPUTE_TINY[dt])
             + narrow_slack(got, ref, dt))
        assert_within(got, ref, b, f"aclk_softmax_fwd {NAME[dt]} log={lg} {name}")


@pytest.mark.parametrize("dt,lg", CASES, ids=[_id(d, g, "bwd") for d, g in CASES])
def test_fast_softmax_bwd_matches_reference(dt, lg):
    """Bounds per dtype as for the forward pass (bound_bwd: the fast kernel's sums are float32
    for the 32-bit types, float64 for float64)."""
    for name, g, y, _ in _bwd_inputs(dt, lg):
        gw, yw = widen(g), widen(y)
        ref = run_bwd(lib.aclk_ref_softmax_bwd, g, y, lg)
        got = run_bwd(lib.aclk_softmax_bwd, g, y, lg)
        b = (bound_bwd(gw, yw, golden_bwd(gw, yw, lg), lg, COMPUTE_U[dt], COMPUTE_TINY[dt])
             + narrow_slack(got, ref, dt))
        assert_within(got, ref, b, f"aclk_softmax_bwd {NAME[dt]} log={lg} {name}")


@pytest.mark.parametrize("dt", [F32, F16, BF16, I32, F64], ids=lambda d: NAME[d])
def test_fast_hardsigmoid_matches_reference(dt):
    """Bit for bit (both compute the operator's float32 / float64 definition)."""
    x = hs_inputs(dt)
    for alpha, beta in HS_PARAMS:
        what = f"{NAME[dt]} alpha={alpha} beta={beta}"
        assert_same_bits(run_hs(lib.aclk_hardsigmoid_fwd, x, alpha, beta),
                         run_hs(lib.aclk_ref_hardsigmoid_fwd, x, alpha, beta),
                         f"aclk_hardsigmoid_fwd {what}")
        if dt != I32:
            g = _hs_grad(x)
            assert_same_bits(run_hsb(lib.aclk_hardsigmoid_bwd, g, x, alpha, beta),
                             run_hsb(lib.aclk_ref_hardsigmoid_bwd, g, x, alpha, beta),
                             f"aclk_hardsigmoid_bwd {what}")


def _impl(ptr) -> str | None:
    return None if ptr == ffi.NULL else ffi.string(ptr).decode()


def test_entry_points_pick_fast_kernels_and_reject_other_dtypes():
    """The fast-vs-reference tests above compare two different implementations: every
    supported dtype runs a fast kernel, not the reference at the end of the list. A dtype no
    implementation takes is -1 from the entry point and from the reference alike."""
    for dt in FLOATS:
        want = "float64" if dt == F64 else "float32"
        for shape in [(1, 1, 1), (2, 9000, 1), (3, 5, 700)]:
            assert _impl(lib.aclk_softmax_fwd_impl(CODE[dt], *shape)) == want
            assert _impl(lib.aclk_softmax_bwd_impl(CODE[dt], *shape)) == want
        assert _impl(lib.aclk_hardsigmoid_fwd_impl(CODE[dt], 10)) == "vector"
        assert _impl(lib.aclk_hardsigmoid_bwd_impl(CODE[dt], 10)) == "vector"
    assert _impl(lib.aclk_hardsigmoid_fwd_impl(CODE[I32], 10)) == "vector"
    assert _impl(lib.aclk_hardsigmoid_bwd_impl(CODE[I32], 10)) is None
    buf = np.zeros(8, np.float32)
    p = _ptr(buf)
    for code in (CODE[I32], 2, 9, 12, -1):  # int32, int8, int64, uint8, invalid
        assert _impl(lib.aclk_softmax_fwd_impl(code, 1, 2, 1)) is None
        assert _impl(lib.aclk_softmax_bwd_impl(code, 1, 2, 1)) is None
        for fn in (lib.aclk_softmax_fwd, lib.aclk_ref_softmax_fwd):
            assert fn(code, p, p, 1, 2, 1, 0) == -1
        for fn in (lib.aclk_softmax_bwd, lib.aclk_ref_softmax_bwd):
            assert fn(code, p, p, p, 1, 2, 1, 0) == -1
    for code in (2, 9, 12, -1):
        assert _impl(lib.aclk_hardsigmoid_fwd_impl(code, 2)) is None
        for fn in (lib.aclk_hardsigmoid_fwd, lib.aclk_ref_hardsigmoid_fwd):
            assert fn(code, p, p, 2, 1 / 6, 0.5) == -1
    for code in (CODE[I32], 2, -1):
        for fn in (lib.aclk_hardsigmoid_bwd, lib.aclk_ref_hardsigmoid_bwd):
            assert fn(code, p, p, p, 2, 1 / 6, 0.5) == -1
    # empty extents: nothing to do, success
    assert lib.aclk_softmax_fwd(CODE[F32], p, p, 0, 5, 1, 0) == 0
    assert lib.aclk_softmax_bwd(CODE[F32], p, p, p, 3, 0, 1, 1) == 0


# ------------------------------------------------------------------- contraction ----

def _has_fma() -> bool:
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(line.startswith("flags") and " fma" in line for line in cpuinfo.splitlines())


# float32 inputs where x*alpha + beta differs between two roundings and one fused
# multiply-add: forward values with alpha = 1/6, beta = 1/2 (x = nextafter(-3, 0) among them),
# and the backward mask with alpha = 0.2, beta = 0.5 at x = nextafter(2.5, 0), where two
# roundings give l = 1 (blocked) and a fused multiply-add l = 1 - 2^-24 (active).
FMA_POINTS = [float.fromhex(h) for h in (
    "-0x1.7ffffep+1", "-0x1.50a3d2p+1", "-0x1.2147a4p+1", "-0x1.e3d6f2p+0", "-0x1.851e9ep+0",
    "-0x1.fffff4p-1", "-0x1.428f44p-1", "-0x1.0a3d36p-2", "0x1.c2908ep-4", "0x1.eb8582p-2",
    "0x1.b33366p-1", "0x1.38521p+0", "0x1.3ffffep+1")]


def test_contraction_off_in_the_kernel_files(tmp_path):
    """softmax.c (its exp/log and the bit-identical target clones), hardsigmoid.c and
    reference.c (x*alpha + beta as two roundings, as CANN computes it) switch contraction off
    with a pragma at their top. Built here with FMA instructions allowed and contraction asked
    for, they must give the bits of the normal build, and hard sigmoid the NumPy float32
    golden; built the same way with the pragmas removed, they must not (so FMA really was used:
    without the pragmas both fail). Built for the baseline ISA without clones (exp's explicit
    fmaf then goes through libm) they must give the same bits as well."""
    if not _has_fma():
        pytest.skip("needs an x86-64 CPU with FMA to run code compiled with -mfma")
    cc = _compiler()
    version = subprocess.run([*cc, "--version"], capture_output=True, text=True).stdout
    # clang's -ffp-contract=fast overrides pragmas by design; fast-honor-pragmas does not
    contract = "-ffp-contract=fast-honor-pragmas" if "clang" in version else "-ffp-contract=fast"
    flags = [f for f in BUILD.compile_args("") if not f.startswith("-O")]
    flags += ["-O2", "-mavx2", "-mfma", contract, "-DACLK_NO_CLONES"]
    kernels = ["softmax.c", "hardsigmoid.c", "reference.c"]
    stripped = tmp_path / "stripped"
    stripped.mkdir()
    for k in kernels:
        text = (CSRC / "kernels" / k).read_text(encoding="utf-8")
        assert "fp-contract=off" in text, f"{k} does not switch contraction off"
        text = re.sub(r"^#pragma (GCC optimize|STDC FP_CONTRACT).*$", "", text, flags=re.M)
        (stripped / k).write_text(text, encoding="utf-8")
    driver = TESTS_C / "fp_contract.c"
    jobs = {}
    # and the baseline: no -m flags, no clones (SSE2 on x86-64; exp's fmaf through libm)
    baseline = [f for f in BUILD.compile_args("") if not f.startswith("-O")]
    baseline += ["-O2", "-DACLK_NO_CLONES"]
    for variant, srcdir, vflags in (("pragmas", CSRC / "kernels", flags),
                                    ("stripped", stripped, flags),
                                    ("baseline", CSRC / "kernels", baseline)):
        exe = tmp_path / f"fp_contract_{variant}"
        # the other kernel files and the thread pool, compiled as they are (no contraction
        # in their arithmetic that these outputs depend on)
        support = [p for p in sorted((CSRC / "kernels").glob("*.c")) if p.name not in kernels]
        support.append(CSRC / "runtime" / "pool.c")
        cmd = [*cc, *vflags, f"-I{CSRC / 'include'}", f"-I{CSRC / 'kernels'}", str(driver),
               *(str(srcdir / k) for k in kernels), *map(str, support), "-o", str(exe),
               *BUILD.link_args("")]
        jobs[variant] = (exe, cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                    stderr=subprocess.PIPE, text=True))
    for _exe, cmd, proc in jobs.values():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{err}"

    rng = np.random.default_rng(13)
    outer, axis, inner = 4, 64, 3
    n = outer * axis * inner
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[: len(FMA_POINTS)] = np.array(FMA_POINTS, dtype=np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    g[: len(FMA_POINTS)] = 1.0
    (tmp_path / "in.bin").write_bytes(np.concatenate([x, g]).tobytes())

    # the normal build (the core as installed) and the goldens
    x3, g3 = x.reshape(outer, axis, inner), g.reshape(outer, axis, inner)
    sm, lsm = run_fwd(lib.aclk_softmax_fwd, x3, 0), run_fwd(lib.aclk_softmax_fwd, x3, 1)
    expected = [sm, lsm, run_bwd(lib.aclk_softmax_bwd, g3, sm, 0),
                run_bwd(lib.aclk_softmax_bwd, g3, lsm, 1)]
    expected = [e.reshape(-1) for e in expected]
    for alpha, beta in ((1 / 6, 0.5), (0.2, 0.5)):
        expected += [hs_golden(x, alpha, beta), hsb_golden(g, x, alpha, beta)]
    expected += [hs_golden(x, 1 / 6, 0.5), hsb_golden(g, x, 0.2, 0.5)]
    names = ["softmax.c: softmax", "softmax.c: log_softmax", "softmax.c: softmax_bwd",
             "softmax.c: log_softmax_bwd", "hardsigmoid.c: fwd(1/6, 1/2)",
             "hardsigmoid.c: bwd(1/6, 1/2)", "hardsigmoid.c: fwd(0.2, 0.5)",
             "hardsigmoid.c: bwd(0.2, 0.5)", "reference.c: hardsigmoid fwd(1/6, 1/2)",
             "reference.c: hardsigmoid bwd(0.2, 0.5)"]

    outs = {}
    for variant, (exe, _, _) in jobs.items():
        res = subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin"),
                              str(outer), str(axis), str(inner)], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0, res.stderr
        outs[variant] = np.fromfile(tmp_path / "out.bin", dtype=np.float32).reshape(-1, n)
    assert len(outs["pragmas"]) == len(names)
    for name, want, got in zip(names, expected, outs["pragmas"]):
        assert_same_bits(got, want, f"{name} built with -mfma {contract}")
    for name, want, got in zip(names, expected, outs["baseline"]):
        assert_same_bits(got, want, f"{name} built for the baseline ISA without clones")
    changed = {name.split(":")[0] for name, want, got in zip(names, expected, outs["stripped"])
               if not np.array_equal(got.view(np.uint32), want.view(np.uint32))}
    assert changed == {"softmax.c", "hardsigmoid.c", "reference.c"}, (
        f"without their pragmas only {sorted(changed)} give other bits in the FMA build: this "
        "test would not notice contraction in the others")


# ------------------------------------------------------------- strided copy, threads ----

def _view_args(v: np.ndarray):
    """(pointer to element [0,...,0], strides in elements) of a NumPy view."""
    assert all(s % v.itemsize == 0 for s in v.strides)
    return (ffi.cast("void *", v.__array_interface__["data"][0]),
            [s // v.itemsize for s in v.strides])


def _strided_copy(dst: np.ndarray, src: np.ndarray) -> None:
    assert dst.shape == src.shape and dst.dtype == src.dtype
    sp, ss = _view_args(src)
    dp, ds = _view_args(dst)
    assert lib.aclk_strided_copy(src.itemsize, src.ndim, list(src.shape), sp, ss, dp, ds) == 0


STRIDED_DST_BUF = np.zeros((1000, 1400), np.float32)


def _copy_cases():
    """(name, dst view, src view): large enough to be split over threads (the parallel paths of
    copy.c), plus one contiguous copy above half of a 32 MiB cache (non-temporal stores) and an
    overlapping one (which must stay a memmove)."""
    rng = np.random.default_rng(21)
    a = rng.standard_normal((1000, 700)).astype(np.float32)
    yield "contiguous f32 20 MB", np.empty(5_000_003, np.float32), \
        rng.standard_normal(5_000_003).astype(np.float32)
    buf = np.zeros(300_001, np.int16)
    yield "contiguous i16 misaligned", buf[1:], rng.integers(-9, 9, 300_000).astype(np.int16)
    yield "transpose f32", np.empty((700, 1000), np.float32), a.T
    b = rng.standard_normal((64, 50, 80))
    yield "permute f64", np.empty((80, 64, 50)), b.transpose(2, 0, 1)
    yield "broadcast rows", np.empty((1000, 300), np.float32), \
        np.broadcast_to(rng.standard_normal(300).astype(np.float32), (1000, 300))
    yield "negative strides", np.empty((500, 350), np.float32), a[::-2, ::-2]
    STRIDED_DST_BUF[:] = 0
    yield "strided dst", STRIDED_DST_BUF[:, ::2], a
    yield "bytes", np.empty((400, 1000), np.uint8), \
        rng.integers(0, 255, (1000, 400), dtype=np.uint8).T
    yield "short rows", np.empty((200_000, 3), np.int32), \
        rng.integers(0, 9, (3, 200_000), dtype=np.int32).T


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_strided_copy_split_over_threads(threads):
    before = lib.aclk_num_threads()
    lib.aclk_set_num_threads(threads)
    try:
        for name, dst, src in _copy_cases():
            want = np.ascontiguousarray(src)
            _strided_copy(dst, src)
            got = np.ascontiguousarray(dst)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), name
        assert not STRIDED_DST_BUF[:, 1::2].any()  # the columns between stay untouched
        # overlapping views of one buffer: memmove semantics, whichever way they overlap
        for shift in (1, -1):
            buf = np.arange(400_000, dtype=np.int32)
            want = buf.copy()
            if shift > 0:
                want[1:] = buf[:-1].copy()
                _strided_copy(buf[1:], buf[:-1])
            else:
                want[:-1] = buf[1:].copy()
                _strided_copy(buf[:-1], buf[1:])
            assert np.array_equal(buf, want), shift
    finally:
        lib.aclk_set_num_threads(before)
