"""aclnn_py.functional (docs/dtypes.md): softmax, softmax_backward, log_softmax,
log_softmax_backward, hardsigmoid and hardsigmoid_backward, driven by the operator table
(tests/opinfo.py: each operator's ``functional`` record).

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

import builtins
from dataclasses import dataclass
from typing import Callable, Optional

import ml_dtypes
import numpy as np
import pytest
from opinfo import FLOATS, FUNCTIONAL, OPS, FnError, OpInfo, bf16, dname, f16, f32, f64

import aclnn_py
from aclnn_py import acl
from aclnn_py import functional as F

FNS = {op.functional.name: op for op in FUNCTIONAL}


def fn_of(op: OpInfo) -> Callable:
    return getattr(F, op.functional.name)


def call(op: OpInfo, arrays: dict, dim=None, **kw):
    """F.<fn>(*arrays in order[, dim], **kw); ``arrays`` keyed by the Python names."""
    args = [arrays[n] for n in op.functional.args]
    if op.has_dim:
        args.append(dim)
    return fn_of(op)(*args, **kw)


def cann(op: OpInfo, arrays: dict) -> dict:
    """The arrays keyed by the CANN argument they feed."""
    return dict(zip(op.functional.cann, (arrays[n] for n in op.functional.args)))


def default_out(arrays: dict) -> np.dtype:
    """docs/dtypes.md: the input dtype; for two inputs of different dtypes the promoted dtype
    (data_type_utils.h: float16 with bfloat16 -> float32, anything with float64 -> float64)."""
    dts = {np.dtype(a.dtype) for a in arrays.values()}
    if len(dts) == 1:
        return dts.pop()
    return f64 if f64 in dts else f32


def make_inputs(op: OpInfo, shape, dtypes, seed: int) -> dict:
    """Random arrays in the table's ranges, keyed by the Python names."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, cname, dt in zip(op.functional.args, op.functional.cann, dtypes):
        out[name] = np.asarray(rng.uniform(*op.ranges[cname], shape)).astype(dt)
    return out


def compare(op: OpInfo, got, arrays, dim, out_dtype, what="", **attrs) -> None:
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == np.dtype(out_dtype), f"{what}: dtype {got.dtype} != {out_dtype}"
    first = next(iter(arrays.values()))
    assert got.shape == first.shape
    op.assert_matches(got, cann(op, arrays), dim, out_dtype, what, **attrs)


def n_in(op: OpInfo) -> int:
    return len(op.functional.args)


# ------------------------------------------------------------------- dtypes x out_dtype ----


@dataclass(frozen=True)
class DtCase:
    op: str
    dtypes: tuple
    out_dtype: Optional[np.dtype]
    shape: tuple
    dim: Optional[int]

    @property
    def id(self) -> str:
        op = OPS[self.op]
        parts = [f"{n}:{dname(d)}{list(self.shape)}"
                 for n, d in zip(op.functional.args, self.dtypes)]
        if op.has_dim:
            parts.append(str(self.dim))
        parts.append(f"out_dtype={dname(self.out_dtype)}")
        return f"F.{op.functional.name}({', '.join(parts)})"


DIM_SHAPES = (((4, 7), -1), ((3, 5, 2), 1), ((6,), 0), ((2, 1, 2, 1, 2, 1, 2, 2), -8))
HS_SHAPES = ((4, 7), (3, 5, 2), (6,), (2, 1, 2, 1, 2, 1, 2, 2))
# with the default out_dtype only: 4-D, 8-D along the last dim, a long axis
EXTRA_DIM_SHAPES = (((2, 3, 4, 5), 0), ((2, 3, 4, 5), -2), ((2, 1, 2, 1, 2, 1, 2, 2), 7),
                    ((1000,), 0))
EXTRA_HS_SHAPES = ((2, 3, 4, 5), (1000,))
DT_CASES = []
for _op in FUNCTIONAL:
    for _dt in _op.functional.dtypes:
        _ins = (_dt,) * n_in(_op)
        for _odt in (None,) + _op.functional.dtypes:
            if _op.has_dim:
                DT_CASES += [DtCase(_op.name, _ins, _odt, s, d) for s, d in DIM_SHAPES]
            else:
                DT_CASES += [DtCase(_op.name, _ins, _odt, s, None) for s in HS_SHAPES]
        if _op.has_dim:
            DT_CASES += [DtCase(_op.name, _ins, None, s, d) for s, d in EXTRA_DIM_SHAPES]
        else:
            DT_CASES += [DtCase(_op.name, _ins, None, s, None) for s in EXTRA_HS_SHAPES]
# hardsigmoid_backward with mixed input dtypes (promoted)
for _g, _x in ((f16, bf16), (bf16, f16), (f32, f16), (f16, f64), (f64, bf16), (bf16, f32)):
    for _odt in (None,) + FLOATS:
        DT_CASES.append(DtCase("HardsigmoidBackward", (_g, _x), _odt, (5, 6), None))


@pytest.mark.parametrize("case", DT_CASES, ids=lambda c: c.id)
def test_dtypes_and_out_dtype(case: DtCase):
    op = OPS[case.op]
    arrays = make_inputs(op, case.shape, case.dtypes, seed=len(case.id))
    kw = {} if case.out_dtype is None else {"out_dtype": case.out_dtype}
    got = call(op, arrays, case.dim, **kw)
    out_dtype = default_out(arrays) if case.out_dtype is None else case.out_dtype
    compare(op, got, arrays, case.dim, out_dtype, case.id)
    assert acl.get_recent_err_msg() is None


@pytest.mark.parametrize("shape", [(9, 11), (5, 9)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("op", FUNCTIONAL,
                         ids=lambda o: f"F.{o.functional.name}(float64) is computed in float64")
def test_float64_precision(op: OpInfo, shape):
    """The float64 tolerance (rtol 1e-10) catches any float32 shortcut."""
    arrays = make_inputs(op, shape, (f64,) * n_in(op), seed=5)
    got = call(op, arrays, -1)
    compare(op, got, arrays, -1, f64, op.functional.name)


@pytest.mark.parametrize("out_dtype", [np.float16, "float32", np.dtype(np.float64),
                                       ml_dtypes.bfloat16, "bfloat16"],
                         ids=["np.float16", "'float32'", "np.dtype(float64)",
                              "ml_dtypes.bfloat16", "'bfloat16'"])
@pytest.mark.parametrize("op", FUNCTIONAL, ids=lambda o: o.functional.name)
def test_out_dtype_spellings(op: OpInfo, out_dtype):
    arrays = make_inputs(op, (3, 4), (f32,) * n_in(op), seed=6)
    got = call(op, arrays, 1, out_dtype=out_dtype)
    compare(op, got, arrays, 1, np.dtype(out_dtype), op.functional.name)


@pytest.mark.parametrize("op", [o for o in FUNCTIONAL if o.has_dim],
                         ids=lambda o: f"F.{o.functional.name}(..., np.int64(-2)) is dim 0")
def test_numpy_integer_dim(op: OpInfo):
    """dim is positional and a NumPy integer works like a Python int."""
    arrays = make_inputs(op, (3, 4), (f32,) * n_in(op), seed=8)
    got = call(op, arrays, np.int64(-2))
    compare(op, got, arrays, 0, f32, op.functional.name)


@pytest.mark.parametrize("op", [o for o in FUNCTIONAL if o.functional.int32],
                         ids=lambda o: f"F.{o.functional.name}(int32) is int32")
def test_int32_in_int32_out(op: OpInfo):
    """docs/dtypes.md: int32 hardsigmoid keeps int32 (clip(x/6 + 1/2) truncated)."""
    xi = np.array([-4, 2, 3, 5], np.int32)
    got = call(op, {op.functional.args[0]: xi})
    assert got.dtype == np.int32 and got.tolist() == [0, 0, 1, 1]
    op.assert_matches(got, {op.functional.cann[0]: xi}, None, np.int32)


# -------------------------------------------------------------------------- alpha / beta ----


@dataclass(frozen=True)
class AbCase:
    op: str
    dtype: np.dtype
    alpha: float
    beta: float
    out_dtype: Optional[np.dtype] = None

    @property
    def id(self) -> str:
        op = OPS[self.op]
        parts = [f"{n}:{dname(self.dtype)}[41]" for n in op.functional.args]
        parts += [f"alpha={self.alpha!r}", f"beta={self.beta!r}"]
        if self.out_dtype is not None:
            parts.append(f"out_dtype={dname(self.out_dtype)}")
        return f"F.{op.functional.name}({', '.join(parts)})"


AB_CASES = [AbCase(op.name, dt, a, b, odt)
            for op in FUNCTIONAL if op.functional.alpha_beta
            for dt in FLOATS
            for a, b in ((0.2, 0.5), (0.5, 0.0), (1.0, 0.25), (0.1, 0.3), (1 / 6, 0.5), (2, 1))
            for odt in (None, f64)]


@pytest.mark.parametrize("case", AB_CASES, ids=lambda c: c.id)
def test_alpha_beta(case: AbCase):
    op = OPS[case.op]
    x = np.linspace(-6.0, 6.0, 41).astype(case.dtype)  # includes the boundaries of most cases
    arrays = {"x": x} if n_in(op) == 1 else \
        {"grad_output": np.linspace(2.0, -1.0, 41).astype(case.dtype), "x": x}
    kw = {"alpha": case.alpha, "beta": case.beta}
    if case.out_dtype is not None:
        kw["out_dtype"] = case.out_dtype
    got = call(op, arrays, **kw)
    out_dtype = case.dtype if case.out_dtype is None else case.out_dtype
    compare(op, got, arrays, None, out_dtype, case.id, alpha=case.alpha, beta=case.beta)


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
    """Without alpha/beta the functional layer is aclnnHardsigmoid: alpha 1/6, beta 0.5 (the
    table's attributes), the float32 mask (x = nextafter(3, 0) is blocked in float32)."""
    attrs = {a.name: a.default for a in OPS["Hardsigmoid"].attrs}
    assert attrs == {"alpha": 1 / 6, "beta": 0.5}
    x = np.array([-3.0, 3.0, np.nextafter(np.float32(3), np.float32(0)), 1.0], np.float32)
    g = np.ones(4, np.float32)
    got = F.hardsigmoid_backward(g, x)
    assert got[:3].tolist() == [0.0, 0.0, 0.0]
    assert got[3] == np.float32(1.0) * np.float32(attrs["alpha"])
    np.testing.assert_allclose(F.hardsigmoid(x)[[0, 1, 3]], [0.0, 1.0, 4 / 6], rtol=1e-6)


# ------------------------------------------------------------------ non-contiguous arrays ----


@dataclass(frozen=True)
class ViewCase:
    op: str
    text: str
    view: Callable  # base (12x12) array -> view
    dim: Optional[int]
    dtype: np.dtype

    @property
    def id(self) -> str:
        op = OPS[self.op]
        args = ", ".join(f"{n}{self.text}" for n in op.functional.args)
        d = f", {self.dim}" if op.has_dim else ""
        return f"F.{op.functional.name}({args}{d}) [{dname(self.dtype)}]"


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
    ("broadcast_to(a[:, :1], (12,5))", lambda a: np.broadcast_to(a[:, :1], (12, 5)), 1),
]
VIEW_CASES = [ViewCase(op.name, t, v, d if op.has_dim else None, dt)
              for op in FUNCTIONAL for dt in op.functional.dtypes for t, v, d in _VIEWS
              if op.has_dim or d in (0, None) or t != ".T"]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c.id)
def test_non_contiguous_inputs(case: ViewCase):
    op = OPS[case.op]
    base = make_inputs(op, (12, 12), (case.dtype,) * n_in(op), seed=len(case.id))
    arrays = {n: case.view(a) for n, a in base.items()}
    before = {n: a.copy() for n, a in arrays.items()}
    got = call(op, arrays, case.dim)
    compare(op, got, arrays, case.dim, case.dtype, case.id)
    for n, a in arrays.items():
        assert np.array_equal(a, before[n], equal_nan=True), f"input {n} was modified"


@pytest.mark.parametrize("op", [o for o in FUNCTIONAL if n_in(o) == 2],
                         ids=lambda o: o.functional.name)
def test_mixed_layouts(op: OpInfo):
    """The two inputs of a backward op may have different layouts."""
    first, second = op.functional.args
    a = make_inputs(op, (6, 8), (f32, f32), seed=1)
    b = make_inputs(op, (8, 6), (f32, f32), seed=2)
    arrays = {first: a[first], second: b[second].T}
    got = call(op, arrays, 0)
    compare(op, got, arrays, 0, f32, op.functional.name)


# ------------------------------------------------------------------------------- errors ----

ERRORS = [(op, e) for op in FUNCTIONAL for e in op.functional.errors]


def exc_type(name: str) -> type:
    return getattr(aclnn_py, name, None) or getattr(builtins, name)


def err_id(e: FnError) -> str:
    return f"{e.text} raises {e.exc}" + (f" {e.code}" if e.code else "")


@pytest.mark.parametrize("op,case", ERRORS, ids=[err_id(e) for _, e in ERRORS])
def test_errors(op: OpInfo, case: FnError):
    exc = exc_type(case.exc)
    args, kwargs = case.args()
    with pytest.raises(exc) as info:
        fn_of(op)(*args, **kwargs)
    err = info.value
    if issubclass(exc, aclnn_py.AclnnError):
        assert type(err) is not aclnn_py.AclnnError, "AclnnError is never raised directly"
        assert isinstance(err, aclnn_py.AclnnError) and isinstance(err, ValueError)
        assert err.code == case.code
        assert str(case.code) in str(err)
        assert err.message and str(case.code) in err.message
        if case.word:
            assert case.word.lower() in str(err).lower(), str(err)
    assert acl.get_recent_err_msg() is None, "the exception must consume the recent message"


@pytest.mark.parametrize("op", FUNCTIONAL, ids=lambda o: o.functional.name)
def test_no_device_memory_leaks(op: OpInfo):
    """Successful calls (strided inputs, a cast) and failing ones free what they allocate."""
    from aclnn_py.runtime.core import lib

    arrays = make_inputs(op, (4, 5), (f32,) * n_in(op), seed=9)
    bad = next(e for e in op.functional.errors if e.exc == "AclnnParamError")
    before = lib.emu_mem_count()
    call(op, arrays, 1)
    call(op, {n: a.T.copy().T for n, a in arrays.items()}, 0, out_dtype=np.float64)
    call(op, {n: a[:, ::2] for n, a in arrays.items()}, 1, out_dtype=np.float16)
    args, kwargs = bad.args()
    with pytest.raises(aclnn_py.AclnnParamError):
        fn_of(op)(*args, **kwargs)
    assert lib.emu_mem_count() == before


# ------------------------------------------------------------------------ empty and 0-d ----


@dataclass(frozen=True)
class EmptyCase:
    op: str
    shape: tuple
    dim: Optional[int]
    out_dtype: Optional[np.dtype]

    @property
    def id(self) -> str:
        op = OPS[self.op]
        args = ", ".join(f"{n}:float32{list(self.shape)}" for n in op.functional.args)
        d = f", {self.dim}" if op.has_dim else ""
        return f"F.{op.functional.name}({args}{d}, out_dtype={dname(self.out_dtype)})"


EMPTY_CASES = [EmptyCase(op.name, s, d if op.has_dim else None, odt)
               for op in FUNCTIONAL
               for s, d in (((2, 0), 1), ((2, 0), 0), ((0,), 0), ((0, 3, 4), -1), ((3, 0), 0))
               for odt in (None, f64, bf16, f16)
               if op.has_dim or d != 0 or s == (0,)]


@pytest.mark.parametrize("case", EMPTY_CASES, ids=lambda c: c.id)
def test_empty_arrays(case: EmptyCase):
    op = OPS[case.op]
    arrays = {n: np.zeros(case.shape, np.float32) for n in op.functional.args}
    kw = {} if case.out_dtype is None else {"out_dtype": case.out_dtype}
    got = call(op, arrays, case.dim, **kw)
    assert isinstance(got, np.ndarray)
    assert got.shape == case.shape
    assert got.dtype == np.dtype(case.out_dtype or np.float32)


# 0-d: a 0-d tensor is a row of one (CANN docs), so softmax = 1 and log_softmax = 0
ZERO_D = [(op, values, dim, expected, exact) for op in FUNCTIONAL
          for values, dim, expected, exact in op.functional.zero_d]




def zero_d_id(op: OpInfo, values: dict, dim, expected) -> str:
    args = ", ".join(f"{k}={v}" for k, v in values.items())
    return f"F.{op.functional.name}({args}{'' if dim is None else f', {dim}'}) == {expected}"


@pytest.mark.parametrize("dtype", FLOATS, ids=dname)
@pytest.mark.parametrize("op,values,dim,expected,exact", ZERO_D,
                         ids=[zero_d_id(o, v, d, e) for o, v, d, e, _ in ZERO_D])
def test_zero_d_arrays(op: OpInfo, values, dim, expected, exact, dtype):
    arrays = {k: np.array(v, dtype=dtype) for k, v in values.items()}
    got = call(op, arrays, dim)
    assert got.shape == () and got.dtype == dtype
    ref = op.reference(cann(op, arrays), dim, np.dtype(dtype))
    if exact:
        assert float(ref) == expected, "case design: the golden disagrees"
        assert float(got) == expected, f"{op.functional.name}: {float(got)} != {expected}"
        return
    tol = {f16: 1e-3, bf16: 8e-3, f32: 1e-6, f64: 1e-12}[np.dtype(dtype)]
    assert abs(float(got) - expected) <= tol, f"{op.functional.name}: {float(got)} != {expected}"
    assert abs(float(ref) - expected) <= tol, "case design: the golden disagrees"


@pytest.mark.parametrize("op", FUNCTIONAL, ids=lambda o: o.functional.name)
def test_result_is_a_fresh_array(op: OpInfo):
    """NumPy in, NumPy out: the result never shares memory with an input."""
    arrays = make_inputs(op, (2, 3), (f32,) * n_in(op), seed=7)
    got = call(op, arrays, 1)
    assert isinstance(got, np.ndarray)
    assert not any(np.shares_memory(got, a) for a in arrays.values())


def test_every_functional_is_in_the_table():
    """Every public operator function of aclnn_py.functional has a table entry (and only
    InplaceHardsigmoid has none: NumPy arrays are never changed in place)."""
    assert set(FNS) == {"softmax", "softmax_backward", "log_softmax", "log_softmax_backward",
                        "hardsigmoid", "hardsigmoid_backward"}
    assert all(callable(getattr(F, name)) for name in FNS)
    assert {op.name for op in OPS.values() if op.functional is None} == {"InplaceHardsigmoid"}
