"""aclnn_py.functional.softmax_backward and the exception helpers (docs/dtypes.md).

The functional layer accepts float16/float32/float64/bfloat16 inputs and any of them as
out_dtype, runs CANN's checks (161002 -> AclnnParamError) and returns NumPy arrays. Results are
compared with the independent float64 golden (tests/golden.py) with the tolerance of the lower
precision of input and out.
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


def dname(dt) -> str:
    return "default" if dt is None else np.dtype(dt).name


def inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    g = np.asarray(rng.uniform(-2, 2, shape)).astype(dtype)
    y = np.asarray(rng.uniform(-1, 1, shape)).astype(dtype)
    return g, y


# ------------------------------------------------------------------- dtypes x out_dtype ----


@dataclass(frozen=True)
class DtCase:
    dtype: np.dtype
    out_dtype: Optional[np.dtype]
    shape: tuple
    dim: int

    @property
    def id(self) -> str:
        return (f"F.softmax_backward(g:{dname(self.dtype)}{list(self.shape)}, y, "
                f"dim={self.dim}, out_dtype={dname(self.out_dtype)})")


DT_CASES = [DtCase(dt, odt, s, d)
            for dt in FLOATS
            for odt in (None,) + FLOATS
            for s, d in (((4, 7), -1), ((3, 5, 2), 1), ((6,), 0))]
DT_CASES += [DtCase(dt, None, s, d) for dt in FLOATS
             for s, d in (((2, 3, 4, 5), 0), ((2, 3, 4, 5), -2), ((2, 1, 2, 1, 2, 1, 2, 2), 7),
                          ((2, 1, 2, 1, 2, 1, 2, 2), -8), ((1000,), 0))]


@pytest.mark.parametrize("case", DT_CASES, ids=lambda c: c.id)
def test_dtypes_and_out_dtype(case: DtCase):
    g, y = inputs(case.shape, case.dtype, seed=len(case.id))
    kwargs = {} if case.out_dtype is None else {"out_dtype": case.out_dtype}
    got = F.softmax_backward(g, y, case.dim, **kwargs)
    out_dtype = case.dtype if case.out_dtype is None else case.out_dtype
    assert isinstance(got, np.ndarray)
    assert got.dtype == out_dtype and got.shape == case.shape
    ref = golden.softmax_backward(g, y, case.dim)
    golden.assert_close(got, ref, golden.basis(case.dtype, out_dtype), backward=True,
                        what=case.id)


@pytest.mark.parametrize("out_dtype", [np.float16, "float32", np.dtype(np.float64),
                                       ml_dtypes.bfloat16],
                         ids=["np.float16", "'float32'", "np.dtype(float64)",
                              "ml_dtypes.bfloat16"])
def test_out_dtype_spellings(out_dtype):
    g, y = inputs((3, 4), F32)
    got = F.softmax_backward(g, y, 1, out_dtype=out_dtype)
    assert got.dtype == np.dtype(out_dtype)
    golden.assert_close(got, golden.softmax_backward(g, y, 1), golden.basis(F32, out_dtype),
                        backward=True)


def test_float64_is_computed_in_float64():
    """float64 (extended list) keeps float64 precision: the f64 tolerance is 1e-10."""
    g, y = inputs((5, 9), F64, seed=3)
    got = F.softmax_backward(g, y, -1)
    assert got.dtype == F64
    golden.assert_close(got, golden.softmax_backward(g, y, -1), F64, backward=True)


# ------------------------------------------------------------------ non-contiguous arrays ----


@dataclass(frozen=True)
class ViewCase:
    name: str
    view: Callable  # base array -> view
    dim: int
    dtype: np.dtype = F32

    @property
    def id(self) -> str:
        return f"F.softmax_backward(g{self.name}, y{self.name}, dim={self.dim}) " \
               f"[{dname(self.dtype)}]"


VIEW_CASES = []
for _dt in FLOATS:
    VIEW_CASES += [
        ViewCase(".T", lambda a: a.T, 0, _dt),
        ViewCase(".T", lambda a: a.T, -1, _dt),
        ViewCase("[::-1]", lambda a: a[::-1], 0, _dt),
        ViewCase("[:, ::-1]", lambda a: a[:, ::-1], 1, _dt),
        ViewCase("[::-2, ::3]", lambda a: a[::-2, ::3], 1, _dt),
        ViewCase("[1:, 2:]", lambda a: a[1:, 2:], 0, _dt),
        ViewCase("[:, ::2]", lambda a: a[:, ::2], -1, _dt),
        ViewCase("[::2].T[::-1]", lambda a: a[::2].T[::-1], 1, _dt),
        ViewCase(".reshape(6,2,12).transpose(2,0,1)", lambda a: a.reshape(6, 2, 12)
                 .transpose(2, 0, 1), 1, _dt),
        ViewCase("[3]", lambda a: a[3], 0, _dt),
        ViewCase("[:, 5]", lambda a: a[:, 5], 0, _dt),
        ViewCase("[2, 3] (0-d view)", lambda a: a[2, 3, ...], 0, _dt),
    ]
VIEW_CASES += [
    ViewCase("broadcast_to(a[0], (4,12))", lambda a: np.broadcast_to(a[0], (4, 12)), 0),
    ViewCase("broadcast_to(a[:, :1], (12,5))", lambda a: np.broadcast_to(a[:, :1], (12, 5)),
             1),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c.id)
def test_non_contiguous_inputs(case: ViewCase):
    base_g, base_y = inputs((12, 12), case.dtype, seed=len(case.id))
    g, y = case.view(base_g), case.view(base_y)
    g_before, y_before = g.copy(), y.copy()
    got = F.softmax_backward(g, y, case.dim)
    assert got.shape == g.shape and got.dtype == case.dtype
    golden.assert_close(got, golden.softmax_backward(g, y, case.dim),
                        golden.basis(case.dtype), backward=True, what=case.id)
    assert np.array_equal(g, g_before) and np.array_equal(y, y_before), "inputs modified"


def test_mixed_layouts():
    """gradOutput and output may have different layouts."""
    g, _ = inputs((6, 8), F32, seed=1)
    _, y = inputs((8, 6), F32, seed=2)
    got = F.softmax_backward(g, y.T, 0)
    golden.assert_close(got, golden.softmax_backward(g, y.T, 0), F32, backward=True)


# ------------------------------------------------------------------------------- errors ----


@dataclass(frozen=True)
class ErrCase:
    text: str
    args: Callable
    exc: type
    code: Optional[int] = None
    word: Optional[str] = None  # must appear in the exception's message

    @property
    def id(self) -> str:
        return f"F.softmax_backward({self.text}) raises {self.exc.__name__}"


_g, _y = inputs((2, 3), F32)
ERR_CASES = [
    ErrCase("g[2,3], y[2,4], 1", lambda: (_g, np.zeros((2, 4), F32), 1),
            aclnn_py.AclnnParamError, 161002, "output"),
    ErrCase("g[2,3], y[3,2], 0", lambda: (_g, _y.T.copy(), 0), aclnn_py.AclnnParamError, 161002,
            "output"),
    ErrCase("g[2,3], y[2,3], 2", lambda: (_g, _y, 2), aclnn_py.AclnnParamError, 161002, "dim"),
    ErrCase("g[2,3], y[2,3], -3", lambda: (_g, _y, -3), aclnn_py.AclnnParamError, 161002,
            "dim"),
    ErrCase("g0d, y0d, 1", lambda: (np.float32(1.0) * np.ones((), F32), np.ones((), F32), 1),
            aclnn_py.AclnnParamError, 161002, "dim"),
    ErrCase("9-D, 0", lambda: (np.ones((1,) * 9, F32), np.ones((1,) * 9, F32), 0),
            aclnn_py.AclnnParamError, 161002),
    ErrCase("g float32, y float16", lambda: (_g, _y.astype(F16), 1), aclnn_py.AclnnParamError,
            161002, "output"),
    ErrCase("g int64, y int64", lambda: (np.ones((2, 3), np.int64), np.ones((2, 3), np.int64), 1),
            aclnn_py.AclnnParamError, 161002, "gradOutput"),
    ErrCase("g int32, y int32", lambda: (np.ones((2, 3), np.int32), np.ones((2, 3), np.int32), 1),
            aclnn_py.AclnnParamError, 161002, "gradOutput"),
    ErrCase("g float32, y int64", lambda: (_g, np.ones((2, 3), np.int64), 1),
            aclnn_py.AclnnParamError, 161002, "output"),
    ErrCase("'abc', y, 1", lambda: ("abc", _y, 1), TypeError),
    ErrCase("None, y, 1", lambda: (None, _y, 1), TypeError),
    ErrCase("g, {}, 1", lambda: (_g, {}, 1), TypeError),
    ErrCase("g, object(), 1", lambda: (_g, object(), 1), TypeError),
    ErrCase("g, y, '1'", lambda: (_g, _y, "1"), TypeError),
    ErrCase("g, y, 1.0", lambda: (_g, _y, 1.0), TypeError),
    ErrCase("g, y, None", lambda: (_g, _y, None), TypeError),
]


@pytest.mark.parametrize("case", ERR_CASES, ids=lambda c: c.id)
def test_errors(case: ErrCase):
    with pytest.raises(case.exc) as info:
        F.softmax_backward(*case.args())
    err = info.value
    if issubclass(case.exc, aclnn_py.AclnnError):
        assert type(err) is not aclnn_py.AclnnError
        assert isinstance(err, ValueError)
        assert err.code == case.code
        assert str(case.code) in str(err)
        if case.word:
            assert case.word.lower() in str(err).lower(), str(err)
    assert acl.get_recent_err_msg() is None, "the exception must consume the recent message"


def test_bad_out_dtype_is_a_type_error():
    g, y = inputs((2, 3), F32)
    with pytest.raises(TypeError):
        F.softmax_backward(g, y, 1, out_dtype="not a dtype")


def test_dim_is_keyword_free_and_numpy_ints_work():
    g, y = inputs((3, 4), F32)
    got = F.softmax_backward(g, y, np.int64(-2))
    golden.assert_close(got, golden.softmax_backward(g, y, 0), F32, backward=True)


def test_no_device_memory_leaks():
    from aclnn_py._C import lib

    g, y = inputs((4, 5), F32)
    before = lib.emu_mem_count()
    F.softmax_backward(g, y, 1)
    F.softmax_backward(g.T, y.T, 0, out_dtype=np.float64)
    with pytest.raises(aclnn_py.AclnnParamError):
        F.softmax_backward(g, y, 7)
    with pytest.raises(aclnn_py.AclnnParamError):
        F.softmax_backward(g, y[:, :4], 1)
    assert lib.emu_mem_count() == before


# ------------------------------------------------------------------------ empty and 0-d ----


@pytest.mark.parametrize("shape,dim,out_dtype", [
    ((2, 0), 1, None), ((2, 0), 0, None), ((0,), 0, None), ((0, 3, 4), -1, None),
    ((2, 0), 1, np.float64), ((3, 0), 0, ml_dtypes.bfloat16), ((0,), 0, np.float16),
], ids=lambda v: repr(v))
def test_empty_arrays(shape, dim, out_dtype):
    g = np.zeros(shape, np.float32)
    got = F.softmax_backward(g, g.copy(), dim, out_dtype=out_dtype)
    assert got.shape == shape
    assert got.dtype == np.dtype(out_dtype or np.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=dname)
@pytest.mark.parametrize("dim", [0, -1])
def test_zero_d_arrays(dtype, dim):
    g = np.array(1.5, dtype=dtype)
    y = np.array(0.25, dtype=dtype)
    got = F.softmax_backward(g, y, dim)
    assert got.shape == () and got.dtype == dtype
    ref = golden.softmax_backward(g, y, dim)  # g*y - (g*y)*y = 0.28125, exact in all four
    assert float(ref) == 0.28125
    assert float(got) == 0.28125


# --------------------------------------------------------------------------- check() ----


@pytest.mark.parametrize("code,cls,builtin", [
    (161001, aclnn_py.AclnnNullPointerError, ValueError),
    (161002, aclnn_py.AclnnParamError, ValueError),
    (561103, aclnn_py.AclnnInternalError, RuntimeError),
    (561000, aclnn_py.AclnnInternalError, RuntimeError),
    (507015, aclnn_py.AclnnRuntimeError, RuntimeError),
    (207001, aclnn_py.AclnnRuntimeError, RuntimeError),
    (361001, aclnn_py.AclnnRuntimeError, RuntimeError),
], ids=lambda v: v if isinstance(v, int) else v.__name__)
def test_check_raises_the_family_subclass(code, cls, builtin):
    with pytest.raises(cls) as info:
        aclnn_py.check(code)
    err = info.value
    assert type(err) is not aclnn_py.AclnnError, "AclnnError is never raised directly"
    assert isinstance(err, aclnn_py.AclnnError) and isinstance(err, builtin)
    assert err.code == code


def test_check_success_returns_none():
    assert aclnn_py.check(0) is None


def test_check_attaches_the_recent_message():
    from aclnn_py import aclnn

    assert aclnn.aclDestroyAclOpExecutor(None) == 561103
    with pytest.raises(aclnn_py.AclnnInternalError) as info:
        aclnn_py.check(561103, api="aclDestroyAclOpExecutor")
    assert "aclDestroyAclOpExecutor" in str(info.value)
    assert info.value.message and "561103" in info.value.message
    assert acl.get_recent_err_msg() is None


def test_hierarchy():
    assert issubclass(aclnn_py.AclnnParamError, ValueError)
    assert issubclass(aclnn_py.AclnnNullPointerError, aclnn_py.AclnnError)
    assert issubclass(aclnn_py.AclnnRuntimeError, RuntimeError)
    assert issubclass(aclnn_py.AclnnInternalError, RuntimeError)
    for cls in (aclnn_py.AclnnParamError, aclnn_py.AclnnNullPointerError,
                aclnn_py.AclnnRuntimeError, aclnn_py.AclnnInternalError):
        assert issubclass(cls, aclnn_py.AclnnError)


@pytest.mark.parametrize("out_dtype", [np.int32, np.int8, np.int64])
def test_out_dtype_must_be_float_or_the_input_dtype(out_dtype):
    """docs/dtypes.md: out_dtype is one of the four float dtypes (int32 hardsigmoid keeps int32)."""
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    with pytest.raises(aclnn_py.AclnnParamError) as info:
        F.hardsigmoid(x, out_dtype=out_dtype)
    assert info.value.code == 161002 and "out_dtype" in str(info.value)
    xi = np.array([-4, 2, 3, 5], np.int32)
    got = F.hardsigmoid(xi)  # int32 in, int32 out: clip(x/6 + 1/2) truncated
    assert got.dtype == np.int32 and got.tolist() == [0, 0, 1, 1]


def test_private_streams_of_finished_threads_are_released():
    """Each thread's functional calls run on a private stream, released when the thread ends."""
    import threading

    from aclnn_py import runtime

    before = len(runtime.S.streams)
    x = np.ones((2, 3), np.float32)
    results = []

    def work():
        results.append(F.softmax(x, 1))

    for _ in range(8):
        th = threading.Thread(target=work)
        th.start()
        th.join()
    assert len(results) == 8
    np.testing.assert_allclose(results[-1], np.full((2, 3), 1 / 3), rtol=1e-6)
    assert len(runtime.S.streams) <= before + 1
