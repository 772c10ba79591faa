"""oneDNN's softmax attributes in the functional layer (docs/onednn.md): int8 / uint8 data, src and
dst scales, eltwise and binary post-ops, inf_as_zero, and the accumulation modes.

Every expected value comes from a float64 NumPy reference written here from oneDNN's documented
formulas and benchdnn's reference order (softmax value -> * src_scale -> post-ops in order ->
* (1 / dst_scale) -> round half to even and saturate for int8), never from the emulator. The
problems follow benchdnn's softmax CI inputs (tests/benchdnn/inputs/softmax/test_softmax_ci):
shapes_ci, axes 0 and 1, scales src:common:64 + dst:common:0.5, post-ops {none,
add:f32:per_oc, mul:f32:per_tensor, linear:0.5:2}.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import aclnn_py
from aclnn_py import functional as F

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, U8 = np.dtype(np.int8), np.dtype(np.uint8)
FLOATS = (F32, F16, BF16, F64)

# --------------------------------------------------------------- float64 references ----

SQRT_2_PI = math.sqrt(2.0 / math.pi)


def ref_softmax(x, dim: int, log: bool, inf_as_zero: bool = False) -> np.ndarray:
    """oneDNN's softmax_accurate / softmax_log over ``dim`` in float64 (integer x as its plain
    value). softmax_inf_as_zero: a slice of all -inf gives 0."""
    x = np.asarray(x).astype(np.float64)
    if x.ndim == 0:
        x = x.reshape(1)
        return ref_softmax(x, 0, log, inf_as_zero).reshape(())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(x, axis=dim, keepdims=True)
        e = np.exp(x - m)
        s = np.sum(e, axis=dim, keepdims=True)
        if log:
            # log(sum) = log(k) + log1p(rest / k) with k the elements at the max: log(s) of an
            # s = 1 + 1e-14 would lose the tiny outputs of a dominant element's log-softmax
            top = x == m
            k = np.sum(top, axis=dim, keepdims=True)
            rest = np.sum(np.where(top, 0.0, e), axis=dim, keepdims=True)
            lse = np.where(k > 0, np.log(np.maximum(k, 1)) + np.log1p(rest / np.maximum(k, 1)),
                           np.log(s))
            d = (x - m) - lse
        else:
            d = e / s
    if inf_as_zero and not log:
        all_ninf = np.all(x == -np.inf, axis=dim, keepdims=True)
        d = np.where(all_ninf, 0.0, d)
    return d


def ref_eltwise(alg: str, d: np.ndarray, a: float, b: float) -> np.ndarray:
    """oneDNN's forward eltwise formulas (its eltwise primitive's documentation)."""
    with np.errstate(all="ignore"):
        if alg == "relu":
            return np.where(d > 0, d, a * d)
        if alg == "linear":
            return a * d + b
        if alg == "clip":  # oneDNN: s = s > alpha ? s : alpha; s > beta ? beta : s
            s = np.where(d > a, d, a)
            return np.where(s > b, b, s)
        if alg == "clip_v2":  # oneDNN: s = s > alpha ? s : alpha; s < beta ? s : beta
            s = np.where(d > a, d, a)
            return np.where(s < b, s, b)
        if alg == "tanh":
            return np.tanh(d)
        if alg == "logistic":
            return 1.0 / (1.0 + np.exp(-d))
        if alg == "exp":
            return np.exp(d)
        if alg == "log":
            return np.log(d)
        if alg == "abs":
            return np.abs(d)
        if alg == "square":
            return d * d
        if alg == "sqrt":
            return np.sqrt(d)
        if alg == "swish":
            return d / (1.0 + np.exp(-a * d))
        if alg == "gelu_erf":
            from math import erf
            return 0.5 * d * (1.0 + np.vectorize(erf)(d / math.sqrt(2.0)))
        if alg == "gelu_tanh":
            return 0.5 * d * (1.0 + np.tanh(SQRT_2_PI * (d + 0.044715 * d ** 3)))
        if alg == "elu":
            return np.where(d > 0, d, a * (np.exp(d) - 1.0))
        if alg == "hardsigmoid":
            return np.maximum(0.0, np.minimum(1.0, a * d + b))
        if alg == "hardswish":
            return d * np.maximum(0.0, np.minimum(1.0, a * d + b))
        if alg == "mish":
            return d * np.tanh(np.log1p(np.exp(d)))
        if alg == "pow":
            return a * np.power(d, b)
        if alg == "round":
            return np.round(d)  # half to even
        if alg == "soft_relu":
            return np.logaddexp(0.0, a * d) / a
    raise AssertionError(alg)


def ref_binary(alg: str, d: np.ndarray, s1: np.ndarray) -> np.ndarray:
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           # oneDNN's MAX2 / MIN2 (a > b ? a : b): a NaN d gives src1
           "max": lambda a, b: np.where(a > b, a, b), "min": lambda a, b: np.where(a < b, a, b),
           "ge": np.greater_equal, "gt": np.greater,
           "le": np.less_equal, "lt": np.less, "eq": np.equal, "ne": np.not_equal}
    with np.errstate(all="ignore"):
        return ops[alg](d, s1).astype(np.float64)


def ref_forward(x, dim, log=False, src_scale=1.0, dst_scale=1.0, post_ops=(),
                inf_as_zero=False) -> np.ndarray:
    """benchdnn's order, in float64: softmax, * src_scale, post-ops, * (1 / dst_scale). The
    scales and post-op parameters are rounded to float32 first, as oneDNN stores them."""
    d = ref_softmax(x, dim, log, inf_as_zero)
    d = d * float(np.float32(src_scale))
    for p in post_ops:
        alg = p.alg.replace("eltwise_", "").replace("binary_", "")
        if isinstance(p, F.Eltwise):
            d = ref_eltwise(alg, d, float(np.float32(p.alpha)), float(np.float32(p.beta)))
        else:
            d = ref_binary(alg, d, np.asarray(p.src1).astype(np.float32).astype(np.float64))
    return d * (1.0 / float(np.float32(dst_scale)))


def to_int(v: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Round half to even and saturate to dt's range (NaN -> 0)."""
    info = np.iinfo(dt)
    v = np.where(np.isnan(v), 0.0, v)
    return np.clip(np.round(v), info.min, info.max)


def assert_int_close(got, ref, dt, what=""):
    """Integer outputs: at most 1 off the float64 reference rounded and saturated, and exact
    wherever the reference is not within 1e-3 of a rounding boundary (x.5)."""
    got = np.asarray(got).astype(np.float64)
    want = to_int(ref, dt)
    diff = np.abs(got - want)
    assert diff.max(initial=0) <= 1, f"{what}: max |diff| {diff.max()}"
    r = np.where(np.isnan(ref), 0.0, ref)
    near_tie = np.abs(np.abs(r - np.floor(r)) - 0.5) < 1e-3
    bad = (diff > 0) & ~near_tie
    assert not bad.any(), (f"{what}: {int(bad.sum())} outputs off by 1 away from a tie, e.g. "
                           f"got {got[bad][:4]} want {want[bad][:4]} from {r[bad][:4]}")


def assert_float_close(got, ref, dt, what="", rel=None, loose=False):
    """Float outputs: within a few ulp of dt (float32 compute: at least 2^-21 relative) of the
    float64 reference; NaN where NaN. ``loose`` (after post-ops, which may cancel): the same
    relative bound plus that much of the largest |ref| as an absolute term."""
    got = np.asarray(got).astype(np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN pattern differs"
    inf = np.isinf(ref)
    assert np.array_equal(got[inf], ref[inf]), f"{what}: infinities differ"
    fin = ~nan & ~inf
    if rel is None:
        eps = {F32: 2.0 ** -23, F16: 2.0 ** -10, BF16: 2.0 ** -7, F64: 2.0 ** -23}[np.dtype(dt)]
        rel = 4 * max(eps, 2.0 ** -21)
    top = max(1e-30, float(np.max(np.abs(ref[fin]), initial=0.0)))
    err = np.abs(got[fin] - ref[fin])
    bound = rel * np.abs(ref[fin]) + (rel * top if loose else 1e-37)
    assert (err <= bound).all(), (f"{what}: max error {np.max(err - bound):.3g} above the "
                                  f"bound; worst got {got[fin][np.argmax(err - bound)]} ref "
                                  f"{ref[fin][np.argmax(err - bound)]}")


def check(got, ref, dt, what="", loose=True):
    dt = np.dtype(dt)
    assert got.dtype == dt, f"{what}: dtype {got.dtype} != {dt}"
    if dt.kind in "iu":
        assert_int_close(got, ref, dt, what)
    else:
        assert_float_close(got, ref, dt, what, loose=loose)


def data(shape, dt, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dt)
    return (rng.standard_normal(shape) * 3).astype(dt)


# ----------------------------------------------------------- benchdnn's int8 problems ----

SHAPES_CI = [(16, 16), (255, 10), (2, 19, 17, 13), (1, 27, 2, 12)]


def per_oc(shape) -> np.ndarray:
    """benchdnn's per_oc binary src1: one value per channel (dim 1), broadcast elsewhere."""
    s1 = [1] * len(shape)
    s1[1] = shape[1]
    return np.linspace(-0.75, 1.25, shape[1]).astype(np.float32).reshape(s1)


def benchdnn_post_ops(kind, shape):
    if kind == "":
        return []
    if kind == "add:f32:per_oc":
        return [F.Binary("add", per_oc(shape))]
    if kind == "mul:f32:per_tensor":
        return [F.Binary("mul", np.full([1] * len(shape), 1.5, np.float32))]
    return [F.Eltwise("linear", 0.5, 2.0)]


@pytest.mark.parametrize("sdt", [F32, BF16, F16, I8, U8], ids=str)
@pytest.mark.parametrize("ddt", [I8, U8], ids=str)
@pytest.mark.parametrize("post", ["", "add:f32:per_oc", "mul:f32:per_tensor", "linear:0.5:2"])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "logsoftmax"])
def test_benchdnn_int8_destinations(sdt, ddt, post, log):
    """FWD_I {f32,bf16,f16,s8,u8} -> {s8,u8}, scales src:common:64 + dst:common:0.5."""
    fn = F.log_softmax if log else F.softmax
    for k, shape in enumerate(SHAPES_CI):
        x = data(shape, sdt, seed=k)
        for dim in (0, 1):
            posts = benchdnn_post_ops(post, shape)
            got = fn(x, dim, out_dtype=ddt, src_scale=64, dst_scale=0.5, post_ops=posts)
            ref = ref_forward(x, dim, log, 64.0, 0.5, posts)
            check(got, ref, ddt, f"{sdt}->{ddt} {shape} dim {dim} {post}")


@pytest.mark.parametrize("sdt", [I8, U8], ids=str)
@pytest.mark.parametrize("ddt", [F32, BF16, F16], ids=str)
@pytest.mark.parametrize("post", ["", "add:f32:per_oc", "mul:f32:per_tensor", "linear:0.5:2"])
def test_benchdnn_int8_sources(sdt, ddt, post):
    """FWD_I {s8,u8} -> {f32,bf16,f16}, scale src:common:64."""
    for log in (False, True):
        fn = F.log_softmax if log else F.softmax
        for k, shape in enumerate(SHAPES_CI):
            x = data(shape, sdt, seed=10 + k)
            posts = benchdnn_post_ops(post, shape)
            got = fn(x, 1, out_dtype=ddt, src_scale=64, post_ops=posts)
            check(got, ref_forward(x, 1, log, 64.0, 1.0, posts), ddt,
                  f"{sdt}->{ddt} {shape} {post} log={log}")


def test_int8_default_out_dtype_is_the_input_dtype():
    x = data((4, 7), I8, 3)
    got = F.softmax(x, -1, dst_scale=1 / 127)
    assert got.dtype == I8
    assert got.max() > 10
    check(got, ref_forward(x, -1, dst_scale=1 / 127), I8)


def test_int8_saturates_and_rounds_half_to_even():
    # a row of two equal values: softmax 0.5 each; * 5 -> 2.5 -> 2 (even), * 7 -> 3.5 -> 4
    x = np.zeros((1, 2), np.int8)
    assert F.softmax(x, 1, out_dtype=np.int8, src_scale=5).tolist() == [[2, 2]]
    assert F.softmax(x, 1, out_dtype=np.int8, src_scale=7).tolist() == [[4, 4]]
    # saturation at both ends
    assert F.softmax(x, 1, out_dtype=np.int8, src_scale=1000).tolist() == [[127, 127]]
    assert F.softmax(x, 1, out_dtype=np.int8, src_scale=-1000).tolist() == [[-128, -128]]
    assert F.softmax(x, 1, out_dtype=np.uint8, src_scale=-1000).tolist() == [[0, 0]]
    assert F.softmax(x, 1, out_dtype=np.uint8, src_scale=1000).tolist() == [[255, 255]]
    # NaN (a row with a NaN) stored as an integer: 0
    nan_row = np.array([[np.nan, 1.0]], np.float32)
    assert F.softmax(nan_row, 1, out_dtype=np.uint8, src_scale=100).tolist() == [[0, 0]]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("ddt", [F32, F64, I8], ids=str)
def test_layouts_and_strided_inputs(dt, ddt):
    """Rows, a middle axis, axis 0, long rows, a 0-d tensor and a strided (transposed) input."""
    cases = [((3, 5000), 1), ((4, 9, 33), 1), ((7, 300), 0), ((2, 3, 4, 5), 3), ((), 0),
             ((1, 20000), -1), ((0, 5), 1)]
    for shape, dim in cases:
        x = data(shape, dt, 5)
        posts = [F.Eltwise("linear", 3.0, -1.0)]
        got = F.softmax(x, dim, out_dtype=ddt, src_scale=2.0, dst_scale=0.25, post_ops=posts)
        check(got, ref_forward(x, dim, False, 2.0, 0.25, posts), ddt, f"{shape} dim {dim}")
    x = data((40, 30), dt, 6).T  # non-contiguous
    got = F.log_softmax(x, 0, out_dtype=ddt, src_scale=1.5, dst_scale=0.5)
    check(got, ref_forward(x, 0, True, 1.5, 0.5), ddt, "transposed")


# ------------------------------------------------------------------------- post-ops ----

ELTWISE_CASES = [
    ("relu", 0.1, 0.0), ("linear", 0.5, 2.0), ("clip", 0.02, 0.3), ("clip_v2", 0.02, 0.3),
    ("tanh", 0.0, 0.0), ("logistic", 0.0, 0.0), ("exp", 0.0, 0.0), ("log", 0.0, 0.0),
    ("abs", 0.0, 0.0), ("square", 0.0, 0.0), ("sqrt", 0.0, 0.0), ("swish", 1.5, 0.0),
    ("gelu_erf", 0.0, 0.0), ("gelu_tanh", 0.0, 0.0), ("elu", 0.7, 0.0),
    ("hardsigmoid", 1.0 / 6.0, 0.5), ("hardswish", 1.0 / 6.0, 0.5), ("mish", 0.0, 0.0),
    ("pow", 2.0, 1.5), ("round", 0.0, 0.0), ("soft_relu", 2.0, 0.0),
]


@pytest.mark.parametrize("alg,alpha,beta", ELTWISE_CASES, ids=[c[0] for c in ELTWISE_CASES])
@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_every_eltwise_post_op(alg, alpha, beta, dt):
    """Each oneDNN eltwise algorithm after softmax (values in (0, 1], scaled to (0, 8]) and after
    log-softmax (negative values), and after a linear that spreads values over both signs."""
    x = data((6, 50), dt, 7)
    posts = [F.Eltwise(alg, alpha, beta)]
    got = F.softmax(x, 1, src_scale=8.0, post_ops=posts)
    check(got, ref_forward(x, 1, False, 8.0, 1.0, posts), dt, f"softmax {alg}")
    if alg not in ("log", "sqrt", "pow"):  # defined for negative inputs
        got = F.log_softmax(x, 1, post_ops=posts)
        check(got, ref_forward(x, 1, True, 1.0, 1.0, posts), dt, f"log_softmax {alg}")
        spread = [F.Eltwise("linear", 40.0, -3.0), F.Eltwise(alg, alpha, beta)]
        got = F.softmax(x, 1, post_ops=spread)
        check(got, ref_forward(x, 1, False, 1.0, 1.0, spread), dt, f"spread {alg}")


BINARY_ALGS = ["add", "sub", "mul", "div", "max", "min", "ge", "gt", "le", "lt", "eq", "ne"]


@pytest.mark.parametrize("alg", BINARY_ALGS)
def test_every_binary_post_op_and_broadcast(alg):
    """Each binary algorithm with src1 per tensor, per channel, per spatial slice and full, and
    a Python scalar."""
    shape = (2, 3, 4, 5)
    x = data(shape, F32, 8)
    rng = np.random.default_rng(9)
    for s1_shape in [(1, 1, 1, 1), (1, 3, 1, 1), (2, 1, 4, 1), (1, 1, 1, 5), shape]:
        s1 = rng.uniform(0.05, 0.4, s1_shape).astype(np.float32)
        for dim in (1, 3):
            posts = [F.Binary(alg, s1)]
            got = F.softmax(x, dim, post_ops=posts)
            check(got, ref_forward(x, dim, False, 1.0, 1.0, posts), F32,
                  f"{alg} src1 {s1_shape} dim {dim}")
    posts = [F.Binary(alg, 0.25)]
    got = F.softmax(x, 2, post_ops=posts)
    check(got, ref_forward(x, 2, False, 1.0, 1.0, posts), F32, f"{alg} scalar")


def test_comparisons_give_one_and_zero():
    x = np.log(np.array([[1.0, 1.0, 2.0]], np.float32))  # softmax: 0.25 0.25 0.5
    got = F.softmax(x, 1, post_ops=[F.Binary("ge", 0.5)])
    assert got.tolist() == [[0.0, 0.0, 1.0]]
    got = F.softmax(x, 1, post_ops=[F.Binary("eq", np.float32(0.25))])
    assert got.tolist() == [[1.0, 1.0, 0.0]]


def test_post_ops_in_order_and_onednn_spellings():
    """Several post-ops apply in order (linear then relu differs from relu then linear), with
    src1 of other dtypes read as float32 and oneDNN's eltwise_ / binary_ spellings."""
    x = data((5, 8), F32, 11)
    a = [F.Eltwise("eltwise_linear", 4.0, -0.5), F.Eltwise("relu", 0.0)]
    b = [F.Eltwise("relu", 0.0), F.Eltwise("linear", 4.0, -0.5)]
    ga, gb = F.softmax(x, 1, post_ops=a), F.softmax(x, 1, post_ops=b)
    check(ga, ref_forward(x, 1, post_ops=a), F32)
    check(gb, ref_forward(x, 1, post_ops=b), F32)
    assert not np.array_equal(ga, gb)
    s1 = np.arange(8, dtype=np.int8).reshape(1, 8)
    posts = [F.Binary("binary_mul", s1), F.Binary("sub", np.float16(0.5)),
             F.Eltwise("abs"), F.Binary("max", np.full((5, 1), 0.75))]
    check(F.softmax(x, 1, post_ops=posts), ref_forward(x, 1, post_ops=posts), F32)


# ------------------------------------------------------------------------ inf_as_zero ----

def test_inf_as_zero():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0], [1.0, 2.0, 3.0]],
                 np.float32)
    plain = F.softmax(x, 1)
    assert np.isnan(plain[0]).all()
    got = F.softmax(x, 1, inf_as_zero=True)
    assert got[0].tolist() == [0.0, 0.0, 0.0]
    check(got, ref_forward(x, 1, inf_as_zero=True), F32)
    # the zero goes through the post-ops and scales like any value
    got = F.softmax(x, 1, inf_as_zero=True, post_ops=[F.Eltwise("linear", 1.0, 0.5)],
                    out_dtype=np.int8, dst_scale=0.25)
    check(got, ref_forward(x, 1, inf_as_zero=True, dst_scale=0.25,
                           post_ops=[F.Eltwise("linear", 1.0, 0.5)]), I8)
    assert got[0].tolist() == [2, 2, 2]
    # columns (inner > 1) and bfloat16 / float16
    for dt in (BF16, F16):
        col = np.full((3, 4, 2), -np.inf, dt)
        col[:, :, 1] = np.arange(12, dtype=np.float32).reshape(3, 4).astype(dt)
        got = F.softmax(col, 1, inf_as_zero=True)
        assert (got[:, :, 0].astype(np.float32) == 0).all()
        check(got, ref_forward(col, 1, inf_as_zero=True), dt)
    # +inf or NaN in a slice still gives NaN
    y = F.softmax(np.array([[np.inf, 0.0], [np.nan, 0.0]], np.float32), 1, inf_as_zero=True)
    assert np.isnan(y).all()


# ------------------------------------------------------------------ argument errors ----

def _raises(match, **kw):
    x = data((4, 6), F32, 12)
    with pytest.raises(aclnn_py.AclnnParamError, match=match) as info:
        F.softmax(x, 1, **kw)
    assert info.value.code == 161002
    assert isinstance(info.value, ValueError)


def test_bad_attributes_name_the_argument_and_the_rule():
    _raises(r"post_ops\[1\]: unknown algorithm 'gelu'.*gelu_erf",
            post_ops=[F.Eltwise("relu"), F.Eltwise("gelu")])
    _raises(r"post_ops\[0\]: unknown algorithm 'pow'.*add", post_ops=[F.Binary("pow", 1.0)])
    _raises(r"post_ops\[2\]: str is not a post-op", post_ops=[F.Eltwise("abs"),
                                                               F.Eltwise("abs"), "relu"])
    _raises(r"post_ops\[0\]: src1 of shape \(3, 6\) does not broadcast to dst of shape "
            r"\(4, 6\): dimension 0 is 3, must be 1 or 4",
            post_ops=[F.Binary("add", np.ones((3, 6)))])
    _raises(r"post_ops\[0\]: src1 of shape \(6,\) does not broadcast.*same rank \(2\)",
            post_ops=[F.Binary("add", np.ones(6))])
    _raises(r"post_ops\[0\]: src1 of dtype complex", post_ops=[F.Binary("add", 1j)])
    _raises(r"post_ops must be a list or tuple", post_ops={"relu": 1})
    _raises(r"9 post-ops given; the emulator applies at most 8",
            post_ops=[F.Eltwise("abs")] * 9)
    _raises(r"soft_relu needs alpha != 0", post_ops=[F.Eltwise("soft_relu")])
    _raises(r"dst_scale must be a finite number other than 0.*got 0.0", dst_scale=0)
    _raises(r"src_scale must be a finite number.*inf", src_scale=math.inf)
    _raises(r"src_scale = 1e\+300 does not fit float32", src_scale=1e300)
    _raises(r"accumulation='fast' is not an accumulation mode.*'strict', 'relaxed', 'any'",
            accumulation="fast")
    with pytest.raises(TypeError, match="post_ops\\[0\\].alpha must be a number"):
        F.softmax(data((2, 2), F32), 1, post_ops=[F.Eltwise("relu", "0.1")])
    with pytest.raises(TypeError, match="inf_as_zero must be a bool"):
        F.softmax(data((2, 2), F32), 1, inf_as_zero=1)
    with pytest.raises(TypeError, match="src_scale must be a number"):
        F.softmax(data((2, 2), F32), 1, src_scale="2")


def test_backward_operators_are_float_only():
    g = data((3, 4), I8)
    for fn in (F.softmax_backward, F.log_softmax_backward):
        with pytest.raises(aclnn_py.AclnnParamError, match="not implemented for INT8"):
            fn(g, g, 1)
        with pytest.raises(TypeError):
            fn(data((3, 4), F32), data((3, 4), F32), 1, post_ops=[])


def test_out_dtype_int8_only_for_the_forward_operators():
    x = data((3, 4), F32)
    with pytest.raises(aclnn_py.AclnnParamError, match="out_dtype INT8 is neither"):
        F.softmax_backward(x, x, 1, out_dtype=np.int8)
    with pytest.raises(aclnn_py.AclnnParamError, match="out_dtype INT32 is neither"):
        F.softmax(x, 1, out_dtype=np.int32)


def test_defaults_keep_the_plain_kernels_bits():
    """No attribute (or neutral ones) plans exactly as before: the same bits as a call without
    them, for every float dtype."""
    for dt in FLOATS:
        x = data((8, 300), dt, 13)
        for fn in (F.softmax, F.log_softmax):
            plain = fn(x, 1)
            same = fn(x, 1, accumulation="strict", src_scale=1.0, dst_scale=1.0, post_ops=[])
            assert plain.tobytes() == same.tobytes()


def test_softmax_core_is_accurate_without_post_ops():
    """With scales alone the softmax values keep float32's relative accuracy, down to the
    smallest outputs (no absolute slack)."""
    x = (data((16, 700), F32, 14) * 8).astype(np.float32)
    for log in (False, True):
        fn = F.log_softmax if log else F.softmax
        got = fn(x, 1, src_scale=2.0, dst_scale=4.0).astype(np.float64)
        ref = ref_forward(x, 1, log, 2.0, 4.0)
        if log:  # a few ulp of the values, or of max|x - max| for outputs near 0
            bound = 4 * 2.0 ** -23 * (np.abs(ref) + 0.5 * np.abs(x - x.max(1, keepdims=True)))
        else:  # exp(x - max) with x - max rounded to float32: |x - max| * 2^-24 relative, and
            # the sum's and quotient's few ulp (the strict softmax reaches 17.5 ulp the same way)
            v = np.maximum(ref * 2.0, 1e-300)
            bound = (4.0 + np.abs(np.log(v))) * 2.0 ** -23 * ref + 1e-44
        assert (np.abs(got - ref) <= bound).all(), f"log={log}"
        got = fn(x, 0, out_dtype=F64, src_scale=2.0)
        assert_float_close(got, ref_forward(x, 0, log, 2.0), F64, rel=1e-13)


# --------------------------------------------------------------- accumulation modes ----

def ulp(ref: np.ndarray, dt) -> np.ndarray:
    """The spacing of dt's values at each |ref| (subnormal spacing below the normal range)."""
    dt = np.dtype(dt)
    mant, emin = {F16: (10, -14), BF16: (7, -126)}[dt]
    a = np.abs(np.where(np.isfinite(ref), ref, 1.0))
    e = np.floor(np.log2(np.maximum(a, 2.0 ** emin)))
    return 2.0 ** (e - mant)


def relaxed_inputs(dt, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * rng.choice([0.5, 3.0, 12.0], size=shape[:1] + (1,) *
                                                 (len(shape) - 1))
    return x.astype(dt)


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
@pytest.mark.parametrize("mode", ["relaxed", "any"])
def test_relaxed_forward_within_two_ulp(dt, mode):
    for shape, dim in [((64, 1000), 1), ((8, 300, 20), 1), ((30, 4000), 0), ((3, 5), 1)]:
        x = relaxed_inputs(dt, shape, 15)
        for log in (False, True):
            fn = F.log_softmax if log else F.softmax
            got = fn(x, dim, accumulation=mode).astype(np.float64)
            ref = ref_softmax(x, dim, log)
            err = np.abs(got - ref) / ulp(ref, dt)
            assert err.max() <= 2.0, f"{shape} dim {dim} log={log}: {err.max():.2f} ulp"


def assert_backward_bound(got, ref, top, dt, what):
    """Each output within 2 ulp of dt of its float64 result or, where the result cancels toward
    zero, within 2^-10 of the largest |term| of its slice (a correctly rounded bfloat16 result
    can be half an ulp, 2^-9 relative, off: the ulp term covers it)."""
    bound = np.maximum(2.0 * ulp(ref, dt), 2.0 ** -10 * top)
    err = np.abs(got - ref)
    assert (err <= bound).all(), f"{what}: worst {np.max(err / bound):.2f}x the bound"


@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_relaxed_backward_within_bound(dt):
    for shape, dim in [((64, 1000), 1), ((8, 300, 20), 1), ((30, 4000), 0)]:
        y = F.softmax(relaxed_inputs(dt, shape, 16), dim)
        g = relaxed_inputs(dt, shape, 17)
        got = F.softmax_backward(g, y, dim, accumulation="relaxed").astype(np.float64)
        g64, y64 = g.astype(np.float64), y.astype(np.float64)
        s = np.sum(g64 * y64, axis=dim, keepdims=True)
        ref = g64 * y64 - s * y64
        top = np.maximum(np.max(np.abs(g64 * y64), axis=dim, keepdims=True),
                         np.max(np.abs(s * y64), axis=dim, keepdims=True))
        assert_backward_bound(got, ref, top, dt, f"softmax_backward {shape}")
        ly = F.log_softmax(relaxed_inputs(dt, shape, 18), dim)
        got = F.log_softmax_backward(g, ly, dim, accumulation="relaxed").astype(np.float64)
        s = np.sum(g64, axis=dim, keepdims=True)
        e = np.exp(ly.astype(np.float64))
        ref = g64 - s * e
        top = np.maximum(np.max(np.abs(g64), axis=dim, keepdims=True),
                         np.max(np.abs(s * e), axis=dim, keepdims=True))
        assert_backward_bound(got, ref, top, dt, f"log_softmax_backward {shape}")


def test_relaxed_keeps_float32_float64_and_mixed_dtypes_strict():
    """relaxed changes only float16 / bfloat16 kernels writing their own dtype: float32 and
    float64 (and a float16 softmax into float32) keep the strict bits."""
    for dt, out in [(F32, None), (F64, None), (F16, F32), (BF16, F64)]:
        x = data((16, 500), dt, 19)
        for fn in (F.softmax, F.log_softmax):
            a = fn(x, 1, out_dtype=out)
            b = fn(x, 1, out_dtype=out, accumulation="relaxed")
            assert a.tobytes() == b.tobytes(), (dt, out, fn.__name__)
        g = data((16, 500), dt, 20)
        a = F.softmax_backward(g, x, 1, out_dtype=out)
        b = F.softmax_backward(g, x, 1, out_dtype=out, accumulation="any")
        assert a.tobytes() == b.tobytes()


def test_functional_keyword_not_the_environment(monkeypatch):
    """The functional layer's calls follow accumulation= (default strict), not
    ACLNN_EMU_ACCUMULATION, which is the aclnn API's switch."""
    x = data((32, 1000), F16, 21)
    strict = F.softmax(x, 1)
    monkeypatch.setenv("ACLNN_EMU_ACCUMULATION", "relaxed")
    assert F.softmax(x, 1).tobytes() == strict.tobytes()
    monkeypatch.setenv("ACLNN_EMU_ACCUMULATION", "bogus")
    assert F.softmax(x, 1).tobytes() == strict.tobytes()


def _aclnn_softmax(dt, shape, x_host):
    """aclnnSoftmax through the two phases; (executor's recorded mode, result, ret)."""
    from aclnn_py import acl, aclnn

    acl.rt.set_device(0)
    nbytes = x_host.nbytes
    xp, _ = acl.rt.malloc(nbytes, 0)
    op, _ = acl.rt.malloc(nbytes, 0)
    try:
        acl.rt.memcpy(xp, nbytes, acl.util.numpy_to_ptr(x_host), nbytes, 1)
        code = {F16: aclnn.ACL_FLOAT16, BF16: aclnn.ACL_BF16}[np.dtype(dt)]
        xt = aclnn.aclCreateTensor(list(shape), code, None, 0, aclnn.ACL_FORMAT_ND,
                                   list(shape), xp)
        ot = aclnn.aclCreateTensor(list(shape), code, None, 0, aclnn.ACL_FORMAT_ND,
                                   list(shape), op)
        ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, -1, ot)
        if ret:
            return None, None, ret
        mode = ex.accumulation
        assert aclnn.aclnnSoftmax(0, 0, ex, 0) == 0
        assert acl.rt.synchronize_stream(0) == 0
        out = np.empty_like(x_host)
        acl.rt.memcpy(acl.util.numpy_to_ptr(out), nbytes, op, nbytes, 2)
        aclnn.aclDestroyTensor(xt)
        aclnn.aclDestroyTensor(ot)
        return mode, out, 0
    finally:
        acl.rt.free(xp)
        acl.rt.free(op)
        acl.rt.reset_device(0)  # balance the set_device: later tests expect no context


def test_aclnn_api_records_the_environment_mode_at_phase_1(monkeypatch):
    from aclnn_py import acl

    x = data((16, 2048), F16, 22)
    ref = ref_softmax(x, 1, False)
    for value, mode in [("", "strict"), ("relaxed", "relaxed"), (" ANY ", "any"),
                        ("strict", "strict")]:
        monkeypatch.setenv("ACLNN_EMU_ACCUMULATION", value)
        got_mode, out, ret = _aclnn_softmax(F16, x.shape, x)
        assert ret == 0 and got_mode == mode
        err = np.abs(out.astype(np.float64) - ref) / ulp(ref, F16)
        assert err.max() <= 2.0
    monkeypatch.setenv("ACLNN_EMU_ACCUMULATION", "fast")
    _, _, ret = _aclnn_softmax(F16, x.shape, x)
    assert ret == 561000  # ACLNN_ERR_INNER: a bad configuration value at phase 1
    msg = acl.get_recent_err_msg()
    assert "ACLNN_EMU_ACCUMULATION='fast'" in msg and "strict, relaxed, any" in msg


def test_explain_and_env_show_the_mode(monkeypatch):
    import json

    from click.testing import CliRunner

    from aclnn_py.cli import main

    monkeypatch.setenv("ACLNN_EMU_ACCUMULATION", "relaxed")
    res = CliRunner().invoke(main, ["explain", "softmax", "--shape", "4,8", "--dtype",
                                    "float16", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["accumulation"] == "relaxed"
    assert "accumulation=relaxed" in out["steps"][0]
    res = CliRunner().invoke(main, ["explain", "softmax", "--shape", "4,8", "--dtype",
                                    "float16", "--out-dtype", "float32"])
    assert "accumulation: relaxed" in res.output and "stays strict" in res.output
    res = CliRunner().invoke(main, ["env", "--json"])
    assert json.loads(res.output)["accumulation"]["value"] == "relaxed"
    monkeypatch.setenv("ACLNN_EMU_ACCUMULATION", "loose")
    res = CliRunner().invoke(main, ["env"])
    assert res.exit_code == 1 and "ACLNN_EMU_ACCUMULATION='loose'" in res.output


# ---------------------------------------------------------------------- concurrency ----

def test_threads_with_different_attributes_at_once():
    """Threads calling with different post-ops, src1 data and modes at once (plans shared by
    descriptor, src1 in each call's own workspace) each get their own reference's result."""
    import threading

    errors: list = []

    def worker(k: int) -> None:
        try:
            rng = np.random.default_rng(100 + k)
            for _ in range(15):
                x = rng.standard_normal((6, 40)).astype(np.float32)
                s1 = rng.uniform(0.1, 0.5, (1, 40)).astype(np.float32)
                posts = [F.Binary("add", s1), F.Eltwise("linear", 1.0 + k, 0.0)]
                got = F.softmax(x, 1, post_ops=posts, out_dtype=np.int8, dst_scale=0.02)
                check(got, ref_forward(x, 1, False, 1.0, 0.02, posts), I8, f"thread {k}")
                h = x.astype(np.float16)
                r = F.softmax(h, 1, accumulation="relaxed" if k % 2 else "strict")
                ref = ref_softmax(h, 1, False)
                assert (np.abs(r.astype(np.float64) - ref) / ulp(ref, F16)).max() <= 2.0
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_nan_through_clip_and_max_as_onednn():
    """oneDNN's clip and clip_v2 both turn NaN into alpha (their formulas test d > alpha first);
    its max / min (MAX2 / MIN2) give src1 for a NaN d."""
    x = np.array([[np.nan, 0.0], [0.0, 0.0]], np.float32)  # row 0: NaN, row 1: 0.5 0.5
    got = F.softmax(x, 1, post_ops=[F.Eltwise("clip", 0.1, 0.4)])
    assert got.tolist() == [[np.float32(0.1)] * 2, [np.float32(0.4)] * 2]
    for dt in (np.float32, F64, F16):  # the float32 and the float64 kernels
        got = F.softmax(x.astype(dt), 1, post_ops=[F.Eltwise("clip_v2", 0.125, 0.375)])
        assert got.astype(np.float64).tolist() == [[0.125] * 2, [0.375] * 2]
        got = F.log_softmax(x.astype(dt), 1, post_ops=[F.Eltwise("eltwise_clip_v2", -1, 0)])
        assert got[0].astype(np.float64).tolist() == [-1.0, -1.0]
        assert np.allclose(got[1].astype(np.float64), -np.log(2), rtol=1e-3)
    # the one forward difference, the sign of a zero at the beta side: d = +0 (linear 0, 0),
    # beta = -0: clip gives t (t > beta is false), clip_v2 gives beta (t < beta is false)
    z = np.zeros((1, 1), np.float32)
    for alg, neg in (("clip", False), ("clip_v2", True)):
        got = F.softmax(z, 1, post_ops=[F.Eltwise("linear", 0.0, 0.0), F.Eltwise(alg, -1, -0.0)])
        assert got[0, 0] == 0 and bool(np.signbit(got[0, 0])) is neg, alg
    got = F.softmax(x, 1, post_ops=[F.Binary("max", 0.25)])
    assert got.tolist() == [[0.25, 0.25], [0.5, 0.5]]
    got = F.softmax(x, 1, post_ops=[F.Binary("min", 0.25)])
    assert got.tolist() == [[0.25, 0.25], [0.25, 0.25]]
    for dt in (F64, F16):
        got = F.softmax(x.astype(dt), 1, post_ops=[F.Eltwise("clip", 0.125, 0.375)])
        assert got.astype(np.float64).tolist() == [[0.125] * 2, [0.375] * 2]


def test_docs_examples_run():
    """docs/onednn.md's Python examples run as written, and say what they claim."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "onednn.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/onednn.md", "exec"), namespace)
    assert namespace["q"].dtype == np.int8 and namespace["m"].tolist() == [[0.0, 0.0]]
    assert namespace["y"].dtype == np.float32 and namespace["h"].dtype == np.float16
