"""aclnnSoftmaxBackwardGetWorkspaceSize / aclnnSoftmaxBackward: the status-code contract and the
workspace size.

Expected codes come from CANN's ops-nn op_api (CANN's check order and the rows of
CANN's own unit test test_aclnn_softmax_backward.cpp); messages from
docs/runtime.md. Every successful case is also run and its numbers compared with the
independent float64 golden (tests/golden.py).

Each case id reads as a one-line reproduction:
``grad=FLOAT[2,3] output=FLOAT[2,3] dim=1 out=DOUBLE[2,3] -> 0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import golden
import numpy as np
import pytest
from conftest import view_byte_mask
from tensorspec import (
    BF16,
    DT_NAME,
    F16,
    F32,
    F64,
    I32,
    I64,
    NC,
    NCHW,
    ND,
    NHWC,
    T,
    align,
    build,
    logical,
    np_dtype,
    numel,
)

from aclnn_py import acl, aclnn

API1 = "aclnnSoftmaxBackwardGetWorkspaceSize"

OK, NULLPTR, INVALID = 0, 161001, 161002

def named(msg: str, arg: str) -> bool:
    """``arg`` appears in ``msg`` as a whole word ("out" does not match inside "gradOutput")."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(arg)}(?![A-Za-z0-9_])", msg,
                     re.IGNORECASE) is not None


def assert_message(code: int, arg: Optional[str], absent=()) -> str:
    msg = acl.get_recent_err_msg()
    assert msg, f"no recent error message after code {code}"
    assert API1 in msg, msg
    assert str(code) in msg, msg
    if arg:
        assert named(msg, arg), f"message does not name {arg!r}: {msg}"
    for other in absent:
        assert not named(msg, other), f"message names {other!r} (expected only {arg!r}): {msg}"
    return msg


def phase2(dev, ws_size, executor, stream) -> int:
    ws = dev.malloc(ws_size) if ws_size else 0
    return aclnn.aclnnSoftmaxBackward(ws, ws_size, executor, stream)


def run_and_compare(dev, stream, g_spec, y_spec, out_spec, dim, ws, ex, g_host, y_host,
                    out_ptr):
    """Run phase 2 and compare out's view with the golden; every byte of out's storage outside
    the view must be unchanged."""
    itemsize = np.dtype(np_dtype(out_spec.dtype)).itemsize
    total = out_spec.storage_elems() * itemsize
    before = dev.download(out_ptr, (total,), np.uint8)
    assert phase2(dev, ws, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    after = dev.download(out_ptr, (total,), np.uint8)
    got = logical(out_spec, after.view(np_dtype(out_spec.dtype)))
    g, y = logical(g_spec, g_host), logical(y_spec, y_host)
    ref = golden.softmax_backward(g, y, dim)
    golden.assert_close(got, ref, golden.basis(np_dtype(g_spec.dtype), np_dtype(out_spec.dtype)),
                        backward=True, what=f"dim={dim}")
    outside = ~view_byte_mask(total, out_spec.shape, out_spec.view_strides, out_spec.offset,
                              itemsize)
    assert np.array_equal(before[outside], after[outside]), "bytes outside out's view changed"


@dataclass(frozen=True)
class Case:
    grad: Optional[T]
    output: Optional[T]
    dim: int
    out: Optional[T]
    code: int
    arg: Optional[str] = None  # the argument the message must name
    absent: tuple = ()  # arguments the message must not name
    note: str = ""

    @property
    def id(self) -> str:
        s = f"grad={self.grad!r} output={self.output!r} dim={self.dim} out={self.out!r} " \
            f"-> {self.code}"
        if self.arg:
            s += f" [{self.arg}]"
        if self.note:
            s += f" ({self.note})"
        return s


S23 = (2, 3)
S8 = (2, 1, 2, 1, 2, 1, 2, 2)
S9 = (2, 1, 1, 1, 1, 1, 1, 1, 2)


def same(shape, dtype=F32, dim=1, out_dtype=None, code=OK, arg=None, note="", **kw):
    return Case(T(shape, dtype, **kw), T(shape, dtype, **kw), dim,
                T(shape, dtype if out_dtype is None else out_dtype, **kw), code, arg, (), note)


CASES = [
    # --- CANN UT rows (CANN's operator docs "UT expectations") ---
    same(S23, F32, 1, note="fp32 normal"),
    same(S23, F32, 0),
    same(S23, F32, -1),
    same(S23, F32, -2),
    same(S23, F16, 1, note="fp16 normal"),
    same((4, 2), F32, 0, note="CANN example shape"),
    same(S23, F64, 1, code=INVALID, arg="gradOutput", note="DOUBLE inputs"),
    Case(T(S23, F32), T(S23, F64), 1, T(S23, F32), INVALID, "output",
         note="gradOutput FLOAT + output DOUBLE"),
    Case(T(S23, F32), T(S23, F16), 1, T(S23, F32), INVALID, "output",
         note="output FLOAT16 + gradOutput FLOAT"),
    Case(T(S23, F16), T(S23, F32), 1, T(S23, F16), INVALID, "output"),
    Case(T(S23, F32), T(S23, BF16), 1, T(S23, F32), INVALID, "output"),
    Case(T((2, 4)), T((2, 3)), 1, T((2, 4)), INVALID, "output", note="shape {2,4} vs {2,3}"),
    Case(T(S23), T(S23), 1, T((3, 2)), INVALID, "out", note="out shape differs"),
    Case(T(S23), T(S23), 1, T((2, 3, 1)), INVALID, "out", note="out rank differs"),
    Case(T(S23), T(S23), 1, T((6,)), INVALID, "out", note="same numel, other shape"),
    Case(T(()), T(()), 0, T((1,)), INVALID, "out", note="{} vs {1} differ"),
    Case(T((1,)), T(()), 0, T((1,)), INVALID, "output", note="{1} vs {}"),
    same(S8, F32, 7, note="8-D dim 7"),
    same(S8, F32, -8, note="8-D dim -8"),
    same(S8, F32, 0),
    same(S8, F16, 3),
    same(S8, F32, 8, code=INVALID, arg="dim", note="8-D dim 8"),
    same(S8, F32, -9, code=INVALID, arg="dim", note="8-D dim -9"),
    same(S9, F32, 0, code=INVALID, arg="gradOutput", note="9-D: rank check"),
    same(S9, F32, 8, code=INVALID, arg="gradOutput", note="9-D dim 8: in range, rank fails"),
    same(S9, F32, 9, code=INVALID, arg="dim", note="9-D dim 9: dim check comes first"),
    same(S9, F32, -10, code=INVALID, arg="dim", note="9-D dim -10: dim check comes first"),
    same((), F32, 0, note="0-d dim 0"),
    same((), F32, -1, note="0-d dim -1"),
    same((), F16, 0),
    same((), F32, 1, code=INVALID, arg="dim", note="0-d dim 1"),
    same((), F32, -2, code=INVALID, arg="dim", note="0-d dim -2"),
    same((5,), F32, 1, code=INVALID, arg="dim"),
    same((5,), F32, -2, code=INVALID, arg="dim"),
    same((5,), F32, -1),
    same(S23, F32, 2, code=INVALID, arg="dim"),
    same(S23, F32, -3, code=INVALID, arg="dim"),
    same(S23, F32, 1 << 40, code=INVALID, arg="dim", note="huge dim"),
    same(S23, F32, -(1 << 63), code=INVALID, arg="dim", note="INT64_MIN dim"),
    # non-contiguous inputs, as in CANN's UT: shape {5,4}, strides {1,5}, storage {4,5}
    Case(T((5, 4), F32, (1, 5), (4, 5)), T((5, 4), F32, (1, 5), (4, 5)), 1, T((5, 4)), OK,
         note="UT non-contiguous"),
    Case(T((5, 4), F32, (1, 5), (4, 5)), T((5, 4), F32, (1, 5), (4, 5)), 0, T((5, 4)), OK),
    Case(T((5, 4), F16, (1, 5), (4, 5)), T((5, 4)), 1, T((5, 4)), INVALID, "output",
         note="non-contiguous does not skip dtype checks"),
    # out dtype is not checked: the result is cast to it
    same(S23, F32, 1, out_dtype=F64, note="out DOUBLE"),
    same(S23, F32, 1, out_dtype=F16, note="out FLOAT16"),
    same(S23, F32, 1, out_dtype=BF16, note="out BF16"),
    same(S23, F16, 0, out_dtype=F32),
    same(S23, F16, 1, out_dtype=F64),
    same(S23, F16, 1, out_dtype=BF16),
    same(S23, BF16, 1, note="BF16 on the default (A2) SoC"),
    same(S23, BF16, 0, out_dtype=F32),
    same(S23, BF16, 1, out_dtype=F16),
    same(S23, BF16, 1, out_dtype=F64),
    # no format check (CANN UT: NHWC inputs and out return SUCCESS)
    same((1, 2, 3, 4), F32, 3, fmt=NHWC, note="NHWC"),
    same((1, 2, 3, 4), F16, 1, fmt=NHWC),
    Case(T((1, 2, 3, 4), F32, fmt=NCHW), T((1, 2, 3, 4), F32, fmt=NHWC), -1,
         T((1, 2, 3, 4), F32), OK, note="mixed formats"),
    Case(T(S23, fmt=NC), T(S23), 1, T(S23, fmt=NC), OK),
    # unsupported input dtypes
    same(S23, I32, 1, code=INVALID, arg="gradOutput"),
    same(S23, I64, 1, code=INVALID, arg="gradOutput"),
    # CANN's check order: null -> empty exit -> dtype -> dim -> rank -> shapes
    Case(T(S23, F64), T(S23, F64), 5, T((7,)), INVALID, "gradOutput",
         note="dtype is checked before dim and shape"),
    Case(T(S23, F32), T(S23, F64), 5, T((7,)), INVALID, "output",
         note="dtype is checked before dim and shape"),
    Case(T((2, 4)), T(S23), 2, T((7,)), INVALID, "dim", note="dim is checked before shape"),
    Case(T(S23), T(S23), 5, T((7,)), INVALID, "dim", note="dim is checked before out shape"),
    Case(T(S9), T((2,)), 0, T((2,)), INVALID, "gradOutput",
         note="rank is checked before shape"),
]

EMPTY_CASES = [
    Case(T((2, 0)), T((2, 0)), 1, T(S23), OK, note="CANN UT case_016: out shape mismatch"),
    Case(T((2, 0)), T((2, 0)), 0, T((2, 0)), OK),
    Case(T((0,)), T((0,)), 0, T((0,)), OK),
    Case(T((2, 0), F64), T((2, 0), F64), 1, T((2, 0), F64), OK,
         note="DOUBLE: empty exit comes before dtype checks"),
    Case(T((2, 0), I32), T((2, 0), F16), 1, T((5,), I64), OK, note="every later check skipped"),
    Case(T((2, 0)), T((2, 0)), 7, T((2, 0)), OK, note="dim out of range skipped"),
    Case(T((2, 0)), T((2, 0)), -100, T((2, 0)), OK, note="dim out of range skipped"),
    Case(T((0, 1, 1, 1, 1, 1, 1, 1, 1)), T((0, 1, 1, 1, 1, 1, 1, 1, 1)), 0, T((1,)), OK,
         note="9-D skipped"),
    Case(T((2, 0)), T(S23), 1, T(S23), OK, note="only gradOutput empty"),
    Case(T(S23), T((3, 0)), 1, T(S23), OK, note="only output empty"),
    Case(T(S23, F64), T((0, 3), F64), 1, T(S23, F64), OK, note="only output empty, DOUBLE"),
    Case(T((2, 0), null_data=True), T((2, 0), null_data=True), 1, T((2, 0), null_data=True),
         OK, note="null addresses of empty tensors are never read"),
]

NULL_CASES = [
    Case(None, T(S23), 1, T(S23), NULLPTR, "gradOutput"),
    Case(T(S23), None, 1, T(S23), NULLPTR, "output"),
    Case(T(S23), T(S23), 1, None, NULLPTR, "out"),
    Case(None, None, 1, T(S23), NULLPTR, "gradOutput", ("output",)),
    Case(None, T(S23), 1, None, NULLPTR, "gradOutput", ("out",)),
    Case(T(S23), None, 1, None, NULLPTR, "output", ("out",)),
    Case(None, None, 1, None, NULLPTR, "gradOutput", ("output", "out")),
    Case(None, T((2, 0)), 1, T((2, 0)), NULLPTR, "gradOutput",
         note="null is checked before the empty exit"),
    Case(T((2, 0)), T((2, 0)), 1, None, NULLPTR, "out",
         note="null is checked before the empty exit"),
    Case(None, T(S23, F64), 99, T((7,)), NULLPTR, "gradOutput",
         note="null is checked before everything else"),
    Case(T(S23, F64), T(S23, F64), 99, None, NULLPTR, "out",
         note="null is checked before everything else"),
]


@pytest.mark.parametrize("case", CASES + NULL_CASES, ids=lambda c: c.id)
def test_status(case: Case, dev, stream):
    rng = np.random.default_rng(0)
    g, g_host, _ = build(dev, case.grad, rng)
    y, y_host, _ = build(dev, case.output, rng)
    out, _, out_ptr = build(dev, case.out, rng)
    result = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, case.dim, out)
    assert isinstance(result, tuple) and len(result) == 3
    ws, ex, ret = result
    assert ret == case.code, acl.get_recent_err_msg()
    if case.code:
        assert (ws, ex) == (0, None), "failure must return the null forms (0, None, code)"
        assert_message(case.code, case.arg, case.absent)
        assert acl.get_recent_err_msg() is None, "get_recent_err_msg must clear on read"
        return
    assert acl.get_recent_err_msg() is None, "a successful call left an error message"
    assert isinstance(ex, aclnn.aclOpExecutor)
    assert isinstance(ws, int) and ws >= 0
    run_and_compare(dev, stream, case.grad, case.output, case.out, case.dim, ws, ex, g_host,
                    y_host, out_ptr)


@pytest.mark.parametrize("case", EMPTY_CASES, ids=lambda c: c.id)
def test_empty_tensors_succeed_and_write_nothing(case: Case, dev, stream):
    rng = np.random.default_rng(1)
    g, _, _ = build(dev, case.grad, rng)
    y, _, _ = build(dev, case.output, rng)
    out, _, out_ptr = build(dev, case.out, rng)
    if out_ptr:  # pre-fill out's buffer with a sentinel
        n = max(case.out.storage_elems() * np.dtype(np_dtype(case.out.dtype)).itemsize, 1)
        dev.fill(out_ptr, n, 0x5A)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, case.dim, out)
    assert ret == OK, acl.get_recent_err_msg()
    assert ws == 0
    assert isinstance(ex, aclnn.aclOpExecutor)
    assert aclnn.aclnnSoftmaxBackward(0, 0, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    if out_ptr:
        n = max(case.out.storage_elems() * np.dtype(np_dtype(case.out.dtype)).itemsize, 1)
        assert (dev.download(out_ptr, (n,), np.uint8) == 0x5A).all(), "phase 2 wrote into out"
    assert acl.get_recent_err_msg() is None


# ------------------------------------------------------------------------------ SoC / BF16 ----


@dataclass(frozen=True)
class SocCase:
    soc: Optional[str]  # None: ACLNN_EMU_SOC unset (the default, an Atlas A2 SoC)
    dtype: int
    out_dtype: int
    code: int

    @property
    def id(self) -> str:
        soc = self.soc or "default"
        return (f"ACLNN_EMU_SOC={soc} grad=output={DT_NAME[self.dtype]}[2,3] "
                f"out={DT_NAME[self.out_dtype]}[2,3] -> {self.code}")


SOC_CASES = [
    SocCase(None, BF16, BF16, OK),
    SocCase("Ascend910B4", BF16, BF16, OK),
    SocCase("Ascend910B1", BF16, F32, OK),
    SocCase("Ascend910_9392", BF16, BF16, OK),
    SocCase("Ascend910A", BF16, BF16, INVALID),
    SocCase("Ascend910A", BF16, F32, INVALID),
    SocCase("Ascend310P3", BF16, BF16, INVALID),
    SocCase("Ascend310P3", BF16, F16, INVALID),
    SocCase("Ascend910A", F32, F32, OK),
    SocCase("Ascend910A", F16, F16, OK),
    SocCase("Ascend310P3", F32, F32, OK),
    SocCase("Ascend310P3", F16, F32, OK),
]


@pytest.mark.parametrize("case", SOC_CASES, ids=lambda c: c.id)
def test_bf16_depends_on_soc(case: SocCase, dev, stream, monkeypatch):
    if case.soc is None:
        monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    else:
        monkeypatch.setenv("ACLNN_EMU_SOC", case.soc)
    assert acl.get_soc_name() == (case.soc or "Ascend910B4")
    rng = np.random.default_rng(2)
    spec, out_spec = T(S23, case.dtype), T(S23, case.out_dtype)
    g, g_host, _ = build(dev, spec, rng)
    y, y_host, _ = build(dev, spec, rng)
    out, _, out_ptr = build(dev, out_spec, rng)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, 1, out)
    assert ret == case.code, acl.get_recent_err_msg()
    if case.code:
        assert (ws, ex) == (0, None)
        msg = assert_message(case.code, "gradOutput")
        assert re.search(r"BF16|BFLOAT16", msg), msg
        return
    run_and_compare(dev, stream, spec, spec, out_spec, 1, ws, ex, g_host, y_host, out_ptr)


# --------------------------------------------------------------------- Python type errors ----


def _t(dev):
    return build(dev, T(S23), np.random.default_rng(3))[0]


TYPE_ERRORS = [
    ("dim='1'", lambda g, y, o: (g, y, "1", o)),
    ("dim=b'1'", lambda g, y, o: (g, y, b"1", o)),
    ("dim=[1]", lambda g, y, o: (g, y, [1], o)),
    ("dim=None", lambda g, y, o: (g, y, None, o)),
    ("dim=aclTensor", lambda g, y, o: (g, y, o, o)),
    ("gradOutput=[[0.0]*3]*2", lambda g, y, o: ([[0.0] * 3] * 2, y, 1, o)),
    ("output=[1.0, 2.0]", lambda g, y, o: (g, [1.0, 2.0], 1, o)),
    ("out=[0.0]", lambda g, y, o: (g, y, 1, [0.0])),
    ("gradOutput=np.zeros((2,3))", lambda g, y, o: (np.zeros(S23, np.float32), y, 1, o)),
    ("out='out'", lambda g, y, o: (g, y, 1, "out")),
]


@pytest.mark.parametrize("make_args", [m for _, m in TYPE_ERRORS],
                         ids=[f"aclnnSoftmaxBackwardGetWorkspaceSize({d}) raises TypeError"
                              for d, _ in TYPE_ERRORS])
def test_python_type_errors(make_args, dev, stream):
    g, y, o = _t(dev), _t(dev), _t(dev)
    with pytest.raises(TypeError):
        aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(*make_args(g, y, o))


def test_numpy_integer_dim_is_an_int(dev, stream):
    """A NumPy integer is an integer (C could take it): accepted like a Python int."""
    rng = np.random.default_rng(4)
    spec = T(S23)
    g, gh, _ = build(dev, spec, rng)
    y, yh, _ = build(dev, spec, rng)
    out, _, out_ptr = build(dev, spec, rng)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, np.int64(-2), out)
    assert ret == 0, acl.get_recent_err_msg()
    run_and_compare(dev, stream, spec, spec, spec, 0, ws, ex, gh, yh, out_ptr)


# ------------------------------------------------- the emulator's checks (after CANN's) ----


ARGS = ("gradOutput", "output", "out")


@dataclass(frozen=True)
class MemCase:
    what: str  # which tensor is bad
    fault: str  # "short" (allocation too small), "offset", "before", "null", "freed", "destroyed"
    code: int = INVALID
    dim: int = 1

    @property
    def id(self) -> str:
        return f"{self.what}:{self.fault} dim={self.dim} -> {self.code}"


MEM_CASES = [MemCase(w, f) for w in ARGS
             for f in ("short", "offset", "before", "null", "freed", "destroyed")]
MEM_CASES += [
    MemCase("gradOutput", "fits"),  # a view that ends exactly at the allocation's end is fine
    MemCase("out", "fits"),
]


def _bad_tensor(dev, fault: str, shape=S23, dtype=F32):
    """(tensor, expected byte range or None). 'fits' is a valid view ending at the last byte."""
    item = np.dtype(np_dtype(dtype)).itemsize
    n = numel(shape)
    host = np.random.default_rng(5).uniform(-1, 1, n + 8).astype(np_dtype(dtype))
    if fault in ("short", "fits"):
        nbytes = n * item - (item if fault == "short" else 0)  # one element too few
        ptr = dev.malloc(nbytes)
        assert acl.rt.memcpy(ptr, nbytes, acl.util.numpy_to_ptr(host), nbytes,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        t = aclnn.aclCreateTensor(list(shape), dtype, None, 0, ND, list(shape), ptr)
        return t, (ptr, ptr + n * item)
    if fault == "offset":  # the storage is big enough for the view, but the offset pushes it out
        ptr = dev.upload(host[:n])
        t = aclnn.aclCreateTensor(list(shape), dtype, None, 2, ND, [n], ptr)
        return t, (ptr + 2 * item, ptr + (n + 2) * item)
    if fault == "before":  # a negative offset starts the view before the allocation
        ptr = dev.upload(host[:n])
        t = aclnn.aclCreateTensor(list(shape), dtype, None, -1, ND, [n], ptr)
        return t, (ptr - item, ptr + (n - 1) * item)
    if fault == "null":
        return aclnn.aclCreateTensor(list(shape), dtype, None, 0, ND, list(shape), 0), None
    if fault == "freed":
        ptr, ret = acl.rt.malloc(n * item, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0
        t = aclnn.aclCreateTensor(list(shape), dtype, None, 0, ND, list(shape), ptr)
        assert acl.rt.free(ptr) == 0
        return t, None
    if fault == "destroyed":
        ptr = dev.upload(host[:n])
        t = aclnn.aclCreateTensor(list(shape), dtype, None, 0, ND, list(shape), ptr)
        assert aclnn.aclDestroyTensor(t) == 0
        return t, None
    raise AssertionError(fault)


@pytest.mark.parametrize("case", MEM_CASES, ids=lambda c: c.id)
def test_emulator_memory_checks(case: MemCase, dev, stream):
    rng = np.random.default_rng(6)
    specs = {a: T(S23) for a in ARGS}
    built = {a: build(dev, specs[a], rng) for a in ARGS}
    tensors = {a: built[a][0] for a in ARGS}
    bad, byte_range = _bad_tensor(dev, case.fault)
    tensors[case.what] = bad
    fault = case.fault
    code = OK if fault == "fits" else case.code
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(
        tensors["gradOutput"], tensors["output"], case.dim, tensors["out"])
    assert ret == code, acl.get_recent_err_msg()
    if code == OK:
        assert acl.get_recent_err_msg() is None
        ws_ptr = dev.malloc(ws) if ws else 0
        assert aclnn.aclnnSoftmaxBackward(ws_ptr, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
        return
    assert (ws, ex) == (0, None)
    msg = assert_message(code, case.what)
    if byte_range is not None:
        for b in byte_range:
            assert hex(b) in msg.lower() or str(b) in msg, \
                f"message does not give the byte range bound {hex(b)}: {msg}"


@pytest.mark.parametrize("fault", ["null", "freed", "destroyed", "short"])
def test_cann_checks_come_before_the_emulators(fault, dev, stream):
    """A bad dim is reported even when gradOutput's memory is also bad (CANN checks first)."""
    rng = np.random.default_rng(7)
    y, _, _ = build(dev, T(S23), rng)
    out, _, _ = build(dev, T(S23), rng)
    bad, _ = _bad_tensor(dev, fault)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(bad, y, 5, out)
    assert (ws, ex, ret) == (0, None, INVALID)
    assert_message(INVALID, "dim")


def test_null_check_comes_before_destroyed_check(dev, stream):
    rng = np.random.default_rng(8)
    bad, _ = _bad_tensor(dev, "destroyed")
    y, _, _ = build(dev, T(S23), rng)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(bad, y, 1, None)
    assert (ws, ex, ret) == (0, None, NULLPTR)
    assert_message(NULLPTR, "out")


# ------------------------------------------------------------------------------ workspace ----


@dataclass(frozen=True)
class WsCase:
    grad: T
    output: T
    out: T
    dim: int
    expected: int  # computed from CANN's rule in the table below, not by the code under test
    why: str

    @property
    def id(self) -> str:
        return (f"grad={self.grad!r} output={self.output!r} dim={self.dim} out={self.out!r} "
                f"-> ws {self.expected} ({self.why})")


def _tr(shape, dtype=F32):
    """A transposed (column-major) view of ``shape`` over a dense storage of the reverse."""
    rows, cols = shape
    return T(shape, dtype, (1, rows), (cols, rows))


def _strided_out(shape, dtype=F32):
    """Every other element of a dense buffer twice as long: a non-contiguous out."""
    rows, cols = shape
    return T(shape, dtype, (2 * cols, 2), (2 * rows * cols,))


W1 = (8, 31)  # 248 elements: 992 FLOAT bytes, exactly 1024 with the 32 extra bytes
W2 = (16, 16)  # 256 elements: 1024 FLOAT bytes -> 1536 (the +32 crosses a 512 boundary)
W3 = (40, 30)  # 1200 elements
WS_CASES = []
for _s in (W1, W2, W3):
    _n = numel(_s)
    WS_CASES += [
        WsCase(T(_s), T(_s), T(_s), 1, 0, "all contiguous FLOAT: kernel writes into out"),
        WsCase(T(_s, F16), T(_s, F16), T(_s, F16), 0, 0, "all contiguous FLOAT16"),
        WsCase(T(_s), T(_s), T(_s, F64), 1, align(_n * 4),
               "FLOAT kernel output, then Cast into out"),
        WsCase(T(_s, F16), T(_s, F16), T(_s, F32), 1, align(_n * 2),
               "FLOAT16 kernel output, then Cast into out"),
        WsCase(_tr(_s), T(_s), T(_s), 1, align(_n * 4), "contiguous copy of gradOutput"),
        WsCase(T(_s, F16), _tr(_s, F16), T(_s, F16), 0, align(_n * 2),
               "contiguous copy of output"),
        WsCase(_tr(_s), _tr(_s), T(_s), 1, 2 * align(_n * 4),
               "contiguous copies of both inputs (both live during the kernel)"),
        WsCase(T(_s), T(_s), _strided_out(_s), 1, align(_n * 4),
               "kernel output, then ViewCopy into the strided out"),
        WsCase(T(_s, BF16), T(_s, BF16), _strided_out(_s, BF16), 1, align(_n * 2),
               "kernel output, then ViewCopy into the strided out"),
        WsCase(_tr(_s), T(_s), T(_s, F64), 1, 2 * align(_n * 4),
               "contiguous copy of gradOutput + FLOAT kernel output (kernel reads the copy)"),
        WsCase(T(_s), T(_s), _strided_out(_s, F64), 1, align(_n * 4) + align(_n * 8),
               "FLOAT kernel output + DOUBLE cast result, then ViewCopy"),
    ]


@pytest.mark.parametrize("case", WS_CASES, ids=lambda c: c.id)
def test_workspace_size(case: WsCase, dev, stream):
    rng = np.random.default_rng(9)
    g, gh, _ = build(dev, case.grad, rng)
    y, yh, _ = build(dev, case.output, rng)
    out, _, out_ptr = build(dev, case.out, rng)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, case.dim, out)
    assert ret == 0, acl.get_recent_err_msg()
    assert ws == case.expected
    # and the run with exactly that workspace is right
    run_and_compare(dev, stream, case.grad, case.output, case.out, case.dim, ws, ex, gh, yh,
                    out_ptr)


def test_message_format_names_api_code_and_values(dev, stream):
    """docs/runtime.md: the API name, the code, and a sentence naming the argument with the actual
    and expected values."""
    rng = np.random.default_rng(10)
    g, _, _ = build(dev, T(S8), rng)
    y, _, _ = build(dev, T(S8), rng)
    out, _, _ = build(dev, T(S8), rng)
    assert aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, 8, out)[2] == INVALID
    msg = assert_message(INVALID, "dim")
    assert re.search(r"(?<![\d-])8(?!\d)", msg) and "-8" in msg and re.search(r"(?<!-)7", msg), \
        f"message lacks the actual dim 8 and the range [-8, 7]: {msg}"
    g, _, _ = build(dev, T(S23, F64), rng)
    y, _, _ = build(dev, T(S23, F64), rng)
    out, _, _ = build(dev, T(S23, F64), rng)
    assert aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, 1, out)[2] == INVALID
    msg = assert_message(INVALID, "gradOutput")
    assert "DOUBLE" in msg and "FLOAT16" in msg, f"message lacks actual/allowed dtypes: {msg}"
    g, _, _ = build(dev, T((2, 4)), rng)
    y, _, _ = build(dev, T((2, 3)), rng)
    out, _, _ = build(dev, T((2, 4)), rng)
    assert aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g, y, 1, out)[2] == INVALID
    msg = assert_message(INVALID, "output")
    assert re.search(r"2,\s*4", msg) and re.search(r"2,\s*3", msg), \
        f"message lacks both shapes: {msg}"
