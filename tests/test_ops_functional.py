"""aclnn_py.functional: softmax, log_softmax, log_softmax_backward, hardsigmoid and
hardsigmoid_backward (docs/dtypes.md).

The functional layer accepts the union of what CANN and oneDNN accept: float64 for every op, any
of the four float dtypes as out_dtype for every op (hardsigmoid too), and alpha/beta for both
hard-sigmoid ops. Results are compared with the independent float64 golden (tests/golden.py)
with the tolerance of the lower precision of the input and out dtypes (PyTorch/oneDNN). The
golden follows CANN's pipelines (CANN docs): log_softmax computes in out's dtype;
hard-sigmoid evaluates alpha*x + beta in float32 (float64 for float64 inputs).

Case ids read as one-line reproductions, e.g. ``F.log_softmax(x:bfloat16[3, 5, 2], 1,
out_dtype=float64)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import golden
import ml_dtypes
import numpy as np
import pytest

import aclnn_py
from aclnn_py import acl
from aclnn_py import functional as F

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
FLOATS = (F16, F32, F64, BF16)
HS_DEFAULT = (1 / 6, 0.5)


def dname(dt) -> str:
    return "default" if dt is None else np.dtype(dt).name


# ------------------------------------------------------------------------------ functions ----


@dataclass(frozen=True)
class Fn:
    name: str
    inputs: tuple  # argument names, in order
    has_dim: bool
    backward: bool
    hs: bool  # takes alpha/beta

    @property
    def func(self) -> Callable:
        return getattr(F, self.name)

    def call(self, arrays, dim=None, **kw):
        args = [arrays[n] for n in self.inputs]
        if self.has_dim:
            args.append(dim)
        return self.func(*args, **kw)


FNS = {
    "softmax": Fn("softmax", ("x",), True, False, False),
    "log_softmax": Fn("log_softmax", ("x",), True, False, False),
    "log_softmax_backward": Fn("log_softmax_backward", ("grad_output", "output"), True, True,
                               False),
    "hardsigmoid": Fn("hardsigmoid", ("x",), False, False, True),
    "hardsigmoid_backward": Fn("hardsigmoid_backward", ("grad_output", "x"), False, True, True),
}


def default_out(fn: str, arrays: dict) -> np.dtype:
    """docs/dtypes.md: the input dtype; for hardsigmoid_backward the promoted dtype of its inputs
    (data_type_utils.h: float16 with bfloat16 -> float32, anything with float64 -> float64)."""
    dts = {np.dtype(a.dtype) for a in arrays.values()}
    if len(dts) == 1:
        return dts.pop()
    return F64 if F64 in dts else F32


def reference(fn: str, arrays: dict, dim, out_dtype, alpha=1 / 6, beta=0.5) -> np.ndarray:
    if fn == "softmax":
        return golden.softmax(arrays["x"], dim)
    if fn == "log_softmax":  # x is cast to out_dtype first and computed there
        return golden.log_softmax(golden.round_to(arrays["x"], out_dtype), dim)
    if fn == "log_softmax_backward":
        return golden.log_softmax_backward(arrays["grad_output"], arrays["output"], dim)
    if fn == "hardsigmoid":
        x = arrays["x"]
        return golden.hardsigmoid(x, alpha, beta, compute=golden.compute_dtype(x.dtype))
    if fn == "hardsigmoid_backward":
        g, x = arrays["grad_output"], arrays["x"]
        return golden.hardsigmoid_backward(g, x, alpha, beta,
                                           compute=golden.compute_dtype(g.dtype, x.dtype))
    raise AssertionError(fn)


def make_inputs(fn: str, shape, dtypes, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for name, dt in zip(FNS[fn].inputs, dtypes):
        if name == "output":
            a = rng.uniform(-4.0, 0.0, shape)
        elif name == "grad_output":
            a = rng.uniform(-2.0, 2.0, shape)
        elif FNS[fn].hs:
            a = rng.uniform(-4.5, 4.5, shape)
        else:
            a = rng.uniform(-5.0, 5.0, shape)
        out[name] = np.asarray(a).astype(dt)
    return out


def compare(fn: str, got, arrays, dim, out_dtype, what="", alpha=1 / 6, beta=0.5) -> None:
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == np.dtype(out_dtype), f"{what}: dtype {got.dtype} != {out_dtype}"
    first = next(iter(arrays.values()))
    assert got.shape == first.shape
    ref = reference(fn, arrays, dim, np.dtype(out_dtype), alpha, beta)
    basis = golden.basis(*[a.dtype for a in arrays.values()], out_dtype)
    golden.assert_close(got, ref, basis, backward=FNS[fn].backward, what=what)


def _fmt_args(fn: str, arrays: dict, dim, extra: str = "") -> str:
    parts = [f"{n}:{dname(a.dtype)}{list(a.shape)}" for n, a in arrays.items()]
    if FNS[fn].has_dim:
        parts.append(str(dim))
    if extra:
        parts.append(extra)
    return f"F.{fn}({', '.join(parts)})"


# ------------------------------------------------------------------- dtypes x out_dtype ----


@dataclass(frozen=True)
class DtCase:
    fn: str
    dtypes: tuple
    out_dtype: Optional[np.dtype]
    shape: tuple
    dim: Optional[int]

    @property
    def id(self) -> str:
        parts = [f"{n}:{dname(d)}{list(self.shape)}" for n, d in zip(FNS[self.fn].inputs,
                                                                       self.dtypes)]
        if FNS[self.fn].has_dim:
            parts.append(str(self.dim))
        parts.append(f"out_dtype={dname(self.out_dtype)}")
        return f"F.{self.fn}({', '.join(parts)})"


DIM_SHAPES = (((4, 7), -1), ((3, 5, 2), 1), ((6,), 0), ((2, 1, 2, 1, 2, 1, 2, 2), -8))
HS_SHAPES = ((4, 7), (3, 5, 2), (6,), (2, 1, 2, 1, 2, 1, 2, 2))
DT_CASES = []
for _fn, _f in FNS.items():
    for _dt in FLOATS:
        for _odt in (None,) + FLOATS:
            if _f.has_dim:
                DT_CASES += [DtCase(_fn, (_dt,) * len(_f.inputs), _odt, s, d)
                             for s, d in DIM_SHAPES]
            else:
                DT_CASES += [DtCase(_fn, (_dt,) * len(_f.inputs), _odt, s, None)
                             for s in HS_SHAPES]
# hardsigmoid_backward with mixed input dtypes (promoted)
for _g, _x in ((F16, BF16), (BF16, F16), (F32, F16), (F16, F64), (F64, BF16), (BF16, F32)):
    for _odt in (None,) + FLOATS:
        DT_CASES.append(DtCase("hardsigmoid_backward", (_g, _x), _odt, (5, 6), None))


@pytest.mark.parametrize("case", DT_CASES, ids=lambda c: c.id)
def test_dtypes_and_out_dtype(case: DtCase):
    arrays = make_inputs(case.fn, case.shape, case.dtypes, seed=len(case.id))
    kw = {} if case.out_dtype is None else {"out_dtype": case.out_dtype}
    got = FNS[case.fn].call(arrays, case.dim, **kw)
    out_dtype = default_out(case.fn, arrays) if case.out_dtype is None else case.out_dtype
    compare(case.fn, got, arrays, case.dim, out_dtype, case.id)
    assert acl.get_recent_err_msg() is None


@pytest.mark.parametrize("fn", list(FNS), ids=lambda f: f"F.{f}(float64) is computed in float64")
def test_float64_precision(fn):
    """The float64 tolerance (rtol 1e-10) catches any float32 shortcut."""
    arrays = make_inputs(fn, (9, 11), (F64,) * len(FNS[fn].inputs), seed=5)
    got = FNS[fn].call(arrays, -1)
    compare(fn, got, arrays, -1, F64, fn)


@pytest.mark.parametrize("out_dtype", [np.float16, "float32", np.dtype(np.float64),
                                       ml_dtypes.bfloat16, "bfloat16"],
                         ids=["np.float16", "'float32'", "np.dtype(float64)",
                              "ml_dtypes.bfloat16", "'bfloat16'"])
@pytest.mark.parametrize("fn", list(FNS))
def test_out_dtype_spellings(fn, out_dtype):
    arrays = make_inputs(fn, (3, 4), (F32,) * len(FNS[fn].inputs), seed=6)
    got = FNS[fn].call(arrays, 1, out_dtype=out_dtype)
    compare(fn, got, arrays, 1, np.dtype(out_dtype), fn)


# -------------------------------------------------------------------------- alpha / beta ----


@dataclass(frozen=True)
class AbCase:
    fn: str
    dtype: np.dtype
    alpha: float
    beta: float
    out_dtype: Optional[np.dtype] = None

    @property
    def id(self) -> str:
        names = FNS[self.fn].inputs
        parts = [f"{n}:{dname(self.dtype)}[41]" for n in names]
        parts += [f"alpha={self.alpha!r}", f"beta={self.beta!r}"]
        if self.out_dtype is not None:
            parts.append(f"out_dtype={dname(self.out_dtype)}")
        return f"F.{self.fn}({', '.join(parts)})"


AB_CASES = [AbCase(fn, dt, a, b, odt)
            for fn in ("hardsigmoid", "hardsigmoid_backward")
            for dt in FLOATS
            for a, b in ((0.2, 0.5), (0.5, 0.0), (1.0, 0.25), (0.1, 0.3), (1 / 6, 0.5), (2, 1))
            for odt in (None, F64)]


@pytest.mark.parametrize("case", AB_CASES, ids=lambda c: c.id)
def test_alpha_beta(case: AbCase):
    x = np.linspace(-6.0, 6.0, 41).astype(case.dtype)  # includes the boundaries of most cases
    arrays = {"x": x} if case.fn == "hardsigmoid" else \
        {"grad_output": np.linspace(2.0, -1.0, 41).astype(case.dtype), "x": x}
    kw = {"alpha": case.alpha, "beta": case.beta}
    if case.out_dtype is not None:
        kw["out_dtype"] = case.out_dtype
    got = FNS[case.fn].call(arrays, **kw)
    out_dtype = case.dtype if case.out_dtype is None else case.out_dtype
    compare(case.fn, got, arrays, None, out_dtype, case.id, case.alpha, case.beta)


@pytest.mark.parametrize("dt", FLOATS, ids=dname)
def test_alpha_beta_boundaries(dt):
    """alpha=0.2, beta=0.5: the mask 0 < 0.2x + 0.5 < 1 is open, so x = -2.5 and x = 2.5
    (exact in every float dtype, and exactly on the boundary in float32 and float64) give 0."""
    x = np.array([-2.5, 2.5, -2.0, 0.0, 2.0, -3.0, 3.0], dtype=dt)
    g = np.full(7, 1.5, dtype=dt)
    got = F.hardsigmoid_backward(g, x, alpha=0.2, beta=0.5).astype(np.float64)
    assert got[0] == 0 and got[1] == 0, f"boundary points must be blocked: {got}"
    np.testing.assert_allclose(got[2:5], [0.3] * 3, rtol=8e-3)
    assert got[5] == 0 and got[6] == 0
    fwd = F.hardsigmoid(x, alpha=0.2, beta=0.5).astype(np.float64)
    np.testing.assert_allclose(fwd, [0, 1, 0.1, 0.5, 0.9, 0, 1], rtol=8e-3, atol=1e-7)


def test_default_alpha_beta_are_cann_values():
    """Without alpha/beta the functional layer is aclnnHardsigmoid: alpha 1/6, beta 0.5, the
    float32 mask (x = nextafter(3, 0) is blocked in float32)."""
    x = np.array([-3.0, 3.0, np.nextafter(np.float32(3), np.float32(0)), 1.0], np.float32)
    g = np.ones(4, np.float32)
    got = F.hardsigmoid_backward(g, x)
    assert got[:3].tolist() == [0.0, 0.0, 0.0]
    assert got[3] == np.float32(1.0) * np.float32(1 / 6)
    np.testing.assert_allclose(F.hardsigmoid(x)[[0, 1, 3]], [0.0, 1.0, 4 / 6], rtol=1e-6)


# ------------------------------------------------------------------ non-contiguous arrays ----


@dataclass(frozen=True)
class ViewCase:
    fn: str
    text: str
    view: Callable  # base (12x12) array -> view
    dim: Optional[int]
    dtype: np.dtype

    @property
    def id(self) -> str:
        args = ", ".join(f"{n}{self.text}" for n in FNS[self.fn].inputs)
        d = f", {self.dim}" if FNS[self.fn].has_dim else ""
        return f"F.{self.fn}({args}{d}) [{dname(self.dtype)}]"


_VIEWS = [
    (".T", lambda a: a.T, 0),
    (".T", lambda a: a.T, -1),
    ("[::-1]", lambda a: a[::-1], 0),
    ("[:, ::-1]", lambda a: a[:, ::-1], 1),
    ("[::-2, ::3]", lambda a: a[::-2, ::3], 1),
    ("[1:, 2:]", lambda a: a[1:, 2:], 0),
    ("[:, ::2]", lambda a: a[:, ::2], -1),
    ("[::2].T[::-1]", lambda a: a[::2].T[::-1], 1),
    (".reshape(6,2,12).transpose(2,0,1)", lambda a: a.reshape(6, 2, 12).transpose(2, 0, 1), 1),
    ("[3]", lambda a: a[3], 0),
    ("[:, 5]", lambda a: a[:, 5], 0),
    ("[2, 3, ...] (0-d view)", lambda a: a[2, 3, ...], 0),
    ("broadcast_to(a[0], (4,12))", lambda a: np.broadcast_to(a[0], (4, 12)), 0),
]
VIEW_CASES = [ViewCase(fn, t, v, d if FNS[fn].has_dim else None, dt)
              for fn in FNS for dt in FLOATS for t, v, d in _VIEWS
              if FNS[fn].has_dim or d in (0, None) or t != ".T"]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c.id)
def test_non_contiguous_inputs(case: ViewCase):
    base = make_inputs(case.fn, (12, 12), (case.dtype,) * len(FNS[case.fn].inputs),
                       seed=len(case.id))
    arrays = {n: case.view(a) for n, a in base.items()}
    before = {n: a.copy() for n, a in arrays.items()}
    got = FNS[case.fn].call(arrays, case.dim)
    compare(case.fn, got, arrays, case.dim, case.dtype, case.id)
    for n, a in arrays.items():
        assert np.array_equal(a, before[n], equal_nan=True), f"input {n} was modified"


@pytest.mark.parametrize("fn", ["log_softmax_backward", "hardsigmoid_backward"])
def test_mixed_layouts(fn):
    """The two inputs of a backward op may have different layouts."""
    a = make_inputs(fn, (6, 8), (F32, F32), seed=1)
    b = make_inputs(fn, (8, 6), (F32, F32), seed=2)
    second = FNS[fn].inputs[1]
    arrays = {FNS[fn].inputs[0]: a[FNS[fn].inputs[0]], second: b[second].T}
    got = FNS[fn].call(arrays, 0)
    compare(fn, got, arrays, 0, F32, fn)


# ------------------------------------------------------------------------------- errors ----


@dataclass(frozen=True)
class ErrCase:
    text: str  # the call, as a reproduction
    call: Callable
    exc: type
    code: Optional[int] = None
    word: Optional[str] = None  # must appear in the exception's message

    @property
    def id(self) -> str:
        return f"{self.text} raises {self.exc.__name__}" + (f" {self.code}" if self.code else "")


_x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
_y = np.linspace(-3, -1, 6, dtype=np.float32).reshape(2, 3)
P = aclnn_py.AclnnParamError
ERR_CASES = [
    ErrCase("F.softmax(x[2,3], 2)", lambda: F.softmax(_x, 2), P, 161002, "dim"),
    ErrCase("F.softmax(x[2,3], -3)", lambda: F.softmax(_x, -3), P, 161002, "dim"),
    ErrCase("F.softmax(x0d, 1)", lambda: F.softmax(np.ones((), F32), 1), P, 161002, "dim"),
    ErrCase("F.softmax(x 9-D, 0)", lambda: F.softmax(np.ones((1,) * 9, F32), 0), P, 161002),
    ErrCase("F.softmax(x int64, 0)", lambda: F.softmax(np.ones((2, 3), np.int64), 0), P,
            161002, "self"),
    ErrCase("F.softmax(x, 0, out_dtype=int32)", lambda: F.softmax(_x, 0, out_dtype=np.int32),
            P, 161002, "out"),
    ErrCase("F.log_softmax(x[2,3], 2)", lambda: F.log_softmax(_x, 2), P, 161002, "dim"),
    ErrCase("F.log_softmax(x[2,3], -3)", lambda: F.log_softmax(_x, -3), P, 161002, "dim"),
    ErrCase("F.log_softmax(x int32, 2) (dim is checked first)",
            lambda: F.log_softmax(np.ones((2, 3), np.int32), 2), P, 161002, "dim"),
    ErrCase("F.log_softmax(x, 0, out_dtype=int32)",
            lambda: F.log_softmax(_x, 0, out_dtype=np.int32), P, 161002, "out"),
    ErrCase("F.log_softmax_backward(g[2,3], y[2,3], 5)",
            lambda: F.log_softmax_backward(_x, _y, 5), P, 161002, "dim"),
    ErrCase("F.log_softmax_backward(g[2,3], y[2,4], 1)",
            lambda: F.log_softmax_backward(_x, np.zeros((2, 4), F32), 1), P, 161002, "output"),
    ErrCase("F.log_softmax_backward(g[2,3], y[2,4], 7) (shape before dim)",
            lambda: F.log_softmax_backward(_x, np.zeros((2, 4), F32), 7), P, 161002, "output"),
    ErrCase("F.log_softmax_backward(g float32, y float16, 1)",
            lambda: F.log_softmax_backward(_x, _y.astype(F16), 1), P, 161002),
    ErrCase("F.hardsigmoid(x int64)", lambda: F.hardsigmoid(np.ones((2, 3), np.int64)), P,
            161002, "self"),
    ErrCase("F.hardsigmoid(x 9-D)", lambda: F.hardsigmoid(np.ones((1,) * 9, F32)), P, 161002),
    ErrCase("F.hardsigmoid(x, out_dtype=int64)",
            lambda: F.hardsigmoid(_x, out_dtype=np.int64), P, 161002, "out"),
    ErrCase("F.hardsigmoid_backward(g[2,3], x[2,4])",
            lambda: F.hardsigmoid_backward(_x, np.zeros((2, 4), F32)), P, 161002),
    ErrCase("F.hardsigmoid_backward(g, x, out_dtype=int32)",
            lambda: F.hardsigmoid_backward(_x, _y, out_dtype=np.int32), P, 161002, "out"),
    ErrCase("F.hardsigmoid_backward(g int32, x)",
            lambda: F.hardsigmoid_backward(np.ones((2, 3), np.int32), _y), P, 161002,
            "gradOutput"),
    # Python type errors
    ErrCase("F.softmax('abc', 0)", lambda: F.softmax("abc", 0), TypeError),
    ErrCase("F.softmax(None, 0)", lambda: F.softmax(None, 0), TypeError),
    ErrCase("F.softmax({}, 0)", lambda: F.softmax({}, 0), TypeError),
    ErrCase("F.softmax(x, 1.0)", lambda: F.softmax(_x, 1.0), TypeError),
    ErrCase("F.softmax(x, '1')", lambda: F.softmax(_x, "1"), TypeError),
    ErrCase("F.log_softmax(object(), 0)", lambda: F.log_softmax(object(), 0), TypeError),
    ErrCase("F.log_softmax(x, None)", lambda: F.log_softmax(_x, None), TypeError),
    ErrCase("F.log_softmax_backward(g, 'y', 0)", lambda: F.log_softmax_backward(_x, "y", 0),
            TypeError),
    ErrCase("F.hardsigmoid(x, alpha='0.2')", lambda: F.hardsigmoid(_x, alpha="0.2"), TypeError),
    ErrCase("F.hardsigmoid(x, beta=None)", lambda: F.hardsigmoid(_x, beta=None), TypeError),
    ErrCase("F.hardsigmoid(x, alpha=[0.2])", lambda: F.hardsigmoid(_x, alpha=[0.2]), TypeError),
    ErrCase("F.hardsigmoid(x, alpha=1j)", lambda: F.hardsigmoid(_x, alpha=1j), TypeError),
    ErrCase("F.hardsigmoid(None)", lambda: F.hardsigmoid(None), TypeError),
    ErrCase("F.hardsigmoid({'x': 1})", lambda: F.hardsigmoid({"x": 1}), TypeError),
    ErrCase("F.hardsigmoid_backward(g, x, alpha='a')",
            lambda: F.hardsigmoid_backward(_x, _y, alpha="a"), TypeError),
    ErrCase("F.hardsigmoid_backward(g, x, beta=object())",
            lambda: F.hardsigmoid_backward(_x, _y, beta=object()), TypeError),
    ErrCase("F.hardsigmoid_backward(None, x)", lambda: F.hardsigmoid_backward(None, _y),
            TypeError),
    ErrCase("F.hardsigmoid_backward(g, object())",
            lambda: F.hardsigmoid_backward(_x, object()), TypeError),
    ErrCase("F.softmax(x, 0, out_dtype='not a dtype')",
            lambda: F.softmax(_x, 0, out_dtype="not a dtype"), TypeError),
    ErrCase("F.hardsigmoid(x, out_dtype='nope')", lambda: F.hardsigmoid(_x, out_dtype="nope"),
            TypeError),
]


@pytest.mark.parametrize("case", ERR_CASES, ids=lambda c: c.id)
def test_errors(case: ErrCase):
    with pytest.raises(case.exc) as info:
        case.call()
    err = info.value
    if issubclass(case.exc, aclnn_py.AclnnError):
        assert type(err) is not aclnn_py.AclnnError, "AclnnError is never raised directly"
        assert isinstance(err, aclnn_py.AclnnError) and isinstance(err, ValueError)
        assert err.code == case.code
        assert str(case.code) in str(err)
        assert err.message and str(case.code) in err.message
        if case.word:
            assert case.word.lower() in str(err).lower(), str(err)
    assert acl.get_recent_err_msg() is None, "the exception must consume the recent message"


def test_no_device_memory_leaks():
    from aclnn_py._C import lib

    x = np.linspace(-4, 4, 20, dtype=np.float32).reshape(4, 5)
    before = lib.emu_mem_count()
    F.softmax(x.T, 0, out_dtype=np.float16)
    F.log_softmax(x, 1, out_dtype=np.float64)
    F.log_softmax_backward(x, -np.abs(x), 0)
    F.hardsigmoid(x[:, ::2], alpha=0.3)
    F.hardsigmoid_backward(x, x.T.copy().T, out_dtype=np.float64)
    for call in (lambda: F.softmax(x, 9), lambda: F.log_softmax(x, 9),
                 lambda: F.log_softmax_backward(x, x[:, :4], 1),
                 lambda: F.hardsigmoid(x, out_dtype=np.int64),
                 lambda: F.hardsigmoid_backward(x, x[:3])):
        with pytest.raises(aclnn_py.AclnnParamError):
            call()
    assert lib.emu_mem_count() == before


# ------------------------------------------------------------------------ empty and 0-d ----


@dataclass(frozen=True)
class EmptyCase:
    fn: str
    shape: tuple
    dim: Optional[int]
    out_dtype: Optional[np.dtype]

    @property
    def id(self) -> str:
        args = ", ".join(f"{n}:float32{list(self.shape)}" for n in FNS[self.fn].inputs)
        d = f", {self.dim}" if FNS[self.fn].has_dim else ""
        return f"F.{self.fn}({args}{d}, out_dtype={dname(self.out_dtype)})"


EMPTY_CASES = [EmptyCase(fn, s, d if FNS[fn].has_dim else None, odt)
               for fn in FNS
               for s, d in (((2, 0), 1), ((2, 0), 0), ((0,), 0), ((0, 3, 4), -1))
               for odt in (None, F64, BF16)
               if FNS[fn].has_dim or d != 0 or s == (0,)]


@pytest.mark.parametrize("case", EMPTY_CASES, ids=lambda c: c.id)
def test_empty_arrays(case: EmptyCase):
    arrays = {n: np.zeros(case.shape, np.float32) for n in FNS[case.fn].inputs}
    kw = {} if case.out_dtype is None else {"out_dtype": case.out_dtype}
    got = FNS[case.fn].call(arrays, case.dim, **kw)
    assert isinstance(got, np.ndarray)
    assert got.shape == case.shape
    assert got.dtype == np.dtype(case.out_dtype or np.float32)


# 0-d: a 0-d tensor is a row of one (CANN docs), so softmax = 1 and log_softmax = 0
ZERO_D = [
    ("softmax", {"x": 2.75}, 0, 1.0),
    ("softmax", {"x": -100.0}, -1, 1.0),
    ("log_softmax", {"x": 2.75}, 0, 0.0),
    ("log_softmax", {"x": -100.0}, -1, 0.0),
    ("log_softmax_backward", {"grad_output": 1.5, "output": 0.0}, 0, 0.0),  # 1.5 - 1.5*e^0
    ("log_softmax_backward", {"grad_output": 1.5, "output": -np.inf}, -1, 1.5),
    ("hardsigmoid", {"x": 1.5}, None, 0.75),
    ("hardsigmoid", {"x": -4.0}, None, 0.0),
    ("hardsigmoid_backward", {"grad_output": 1.5, "x": 1.5}, None, 0.25),
    ("hardsigmoid_backward", {"grad_output": 1.5, "x": 3.0}, None, 0.0),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=dname)
@pytest.mark.parametrize("fn,values,dim,expected", ZERO_D,
                         ids=[f"F.{f}({', '.join(f'{k}={v}' for k, v in vals.items())}"
                              f"{'' if d is None else f', {d}'}) == {e}"
                              for f, vals, d, e in ZERO_D])
def test_zero_d_arrays(fn, values, dim, expected, dtype):
    arrays = {k: np.array(v, dtype=dtype) for k, v in values.items()}
    got = FNS[fn].call(arrays, dim)
    assert got.shape == () and got.dtype == dtype
    tol = {F16: 1e-3, BF16: 8e-3, F32: 1e-6, F64: 1e-12}[np.dtype(dtype)]
    assert abs(float(got) - expected) <= tol, f"{fn}: {float(got)} != {expected}"
    ref = reference(fn, arrays, dim, np.dtype(dtype))
    assert abs(float(ref) - expected) <= tol, "case design: the golden disagrees"


@pytest.mark.parametrize("fn", list(FNS))
def test_result_is_a_fresh_array(fn):
    """NumPy in, NumPy out: the result never shares memory with an input."""
    arrays = make_inputs(fn, (2, 3), (F32,) * len(FNS[fn].inputs), seed=7)
    got = FNS[fn].call(arrays, 1)
    assert isinstance(got, np.ndarray)
    assert not any(np.shares_memory(got, a) for a in arrays.values())
