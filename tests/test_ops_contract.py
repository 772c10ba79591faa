"""Phase-1 contract of the seven operators, driven by the operator table (tests/opinfo.py):
every check in CANN's order with its code, the messages, the empty-tensor rules, the
SoC-dependent dtype lists, the workspace sizes, Python type errors, the emulator's memory checks
(after CANN's), and phase 2's check of the executor's operator.

Expected codes come from CANN's ops-nn op_api (CANN's CheckParams, in code order), CANN's unit
tests (test_aclnn_*.cpp) and CANN's operator docs; messages from docs/runtime.md. Every
successful non-empty case is also run and compared with the independent float64 golden
(tests/golden.py); every successful empty case must write nothing.

Case ids read as one-line reproductions, e.g.
``ACLNN_EMU_SOC=Ascend910A aclnnLogSoftmax(self=FLOAT[2,3], dim=1, out=BF16[2,3]) -> 161002 [out]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pytest
from conftest import NUMPY_OF, read_view, view_byte_mask
from opinfo import (
    ACL_NAME,
    CLASS_SOC,
    DEFAULT_SOC,
    INVALID,
    NO_KERNEL,
    NULLPTR,
    OK,
    OP_DB,
    OPS,
    S23,
    SOC_CLASSES,
    Case,
    OpInfo,
    soc_class,
)
from tensorspec import BF16, BOOL, F16, F32, F64, I8, I32, I64, ND, T, build, logical, numel

from aclnn_py import acl, aclnn

SENTINEL = 0x5A


def phase1(op: OpInfo, *args):
    return getattr(aclnn, op.api1)(*args)


def phase2(op: OpInfo, *args):
    return getattr(aclnn, op.api)(*args)


# ------------------------------------------------------------------------------ the runner ----


def named(msg: str, arg: str) -> bool:
    """``arg`` appears in ``msg`` as a whole word ("out" does not match inside "gradOutput")."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(arg)}(?![A-Za-z0-9_])", msg,
                     re.IGNORECASE) is not None


def assert_message(api: str, code: int, arg=None, absent=(), has=(), lacks=()) -> str:
    msg = acl.get_recent_err_msg()
    assert msg, f"no recent error message after code {code}"
    assert api in msg, f"message does not name {api}: {msg}"
    assert str(code) in msg, msg
    if arg:
        assert named(msg, arg), f"message does not name {arg!r}: {msg}"
    for other in absent:
        assert not named(msg, other), f"message names {other!r} (expected only {arg!r}): {msg}"
    for pattern in has:
        assert re.search(pattern, msg), f"message does not match {pattern!r}: {msg}"
    for pattern in lacks:
        assert not re.search(pattern, msg), f"message matches {pattern!r}: {msg}"
    assert acl.get_recent_err_msg() is None, "get_recent_err_msg must clear on read"
    return msg


def set_soc(monkeypatch, soc: Optional[str]) -> None:
    if soc is None:
        monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    else:
        monkeypatch.setenv("ACLNN_EMU_SOC", soc)
    assert acl.get_soc_name() == (soc or DEFAULT_SOC)


def outer_bytes(spec: T) -> int:
    return max(spec.storage_elems() * np.dtype(NUMPY_OF[spec.dtype]).itemsize, 1)


def build_args(dev, op: OpInfo, case_args, rng):
    """(built tensors by name, the phase-1 argument tuple)."""
    lo, hi = op.contract_range
    built = {p: build(dev, a, rng, lo, hi) for p, a in zip(op.params, case_args) if p != "dim"}
    args = tuple(a if p == "dim" else built[p][0] for p, a in zip(op.params, case_args))
    return built, args


def run_and_check(dev, stream, op: OpInfo, case_args, built, ws, ex):
    """Phase 2 + synchronize; the out view must match the golden and every byte of out's
    buffer outside the view must be unchanged. Empty cases must write nothing at all (also when
    a tensor's data address is null: nothing is read or written)."""
    specs = dict(zip(op.params, case_args))
    out_spec = specs[op.out]
    _, _, out_ptr = built[op.out]
    total = outer_bytes(out_spec)
    if out_ptr and out_spec.empty:
        dev.fill(out_ptr, total, SENTINEL)
    before = dev.download(out_ptr, (total,), np.uint8) if out_ptr else None
    wsp = dev.malloc(ws) if ws else 0
    assert phase2(op, wsp, ws, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    after = dev.download(out_ptr, (total,), np.uint8) if out_ptr else None
    assert acl.get_recent_err_msg() is None, "a successful run left an error message"
    tensors = [a for a in case_args if isinstance(a, T)]
    if any(t.empty for t in tensors):
        assert ws == 0, "an empty-tensor executor needs no workspace"
        if out_ptr:
            assert np.array_equal(before, after), "phase 2 of an empty-tensor executor wrote"
        return
    odt = NUMPY_OF[out_spec.dtype]
    got = read_view(after[:out_spec.storage_elems() * np.dtype(odt).itemsize].view(odt),
                    out_spec.shape, out_spec.view_strides, out_spec.offset)
    inputs = {p: logical(specs[p], built[p][1]) for p in op.inputs}
    op.assert_matches(got, inputs, specs.get("dim"), odt)
    mask = view_byte_mask(total, out_spec.shape, out_spec.view_strides, out_spec.offset,
                          np.dtype(odt).itemsize)
    assert np.array_equal(before[~mask], after[~mask]), "bytes outside out's view changed"


def check_status(op: OpInfo, case: Case, dev, stream, monkeypatch, seed: int) -> None:
    set_soc(monkeypatch, case.soc)
    built, args = build_args(dev, op, case.args, np.random.default_rng(seed))
    result = phase1(op, *args)
    assert isinstance(result, tuple) and len(result) == 3
    ws, ex, ret = result
    assert ret == case.code, acl.get_recent_err_msg()
    if case.code:
        assert (ws, ex) == (0, None), "a failure returns the null forms (0, None, code)"
        assert_message(op.api1, case.code, case.arg, case.absent, case.has, case.lacks)
        return
    assert acl.get_recent_err_msg() is None, "a successful call left an error message"
    assert isinstance(ex, aclnn.aclOpExecutor)
    assert isinstance(ws, int) and ws >= 0
    run_and_check(dev, stream, op, case.args, built, ws, ex)


# ---------------------------------------------------------------- the table's status cases ----

STATUS = [(OPS[c.op], c) for op in OP_DB for c in op.status_inputs]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op,case", STATUS, ids=[c.id for _, c in STATUS])
def test_status(op: OpInfo, case: Case, dev, stream, monkeypatch):
    check_status(op, case, dev, stream, monkeypatch, len(case.id))


def test_case_table_covers_every_operator():
    """Every operator has status, workspace, numerics, reference and example inputs; no id is
    repeated and no call appears twice."""
    assert [op.name for op in OP_DB] == list(OPS)
    for op in OP_DB:
        assert op.status_inputs and op.workspace_inputs and op.examples, op.name
        assert all(c.op == op.name for c in op.status_inputs + op.workspace_inputs), op.name
        assert op.samples() and op.references(), op.name
        assert set(op.ranges) == set(op.inputs), op.name
    ids = [c.id for _, c in STATUS]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    keys = [c.key for _, c in STATUS]
    dups = {k for k in keys if keys.count(k) > 1}
    assert not dups, f"the same call twice: {sorted(dups)[:3]}"


# ----------------------------------------------------- the dtype table, per SoC class ----

ALL_DTYPES = (F32, F16, BF16, F64, I32, I64, I8, BOOL)


@dataclass(frozen=True)
class DtypeCase:
    op: str
    soc_class: str
    dtype: int

    @property
    def soc(self) -> str:
        return CLASS_SOC[self.soc_class]

    def expected(self) -> tuple:
        """(code, argument named, message pattern) from the table: a dtype outside the list is
        161002 naming dtype_arg (bf16_arg for the BF16 rule); a listed one succeeds, or gets
        561003 where the class has no kernel (after the parameter checks)."""
        op = OPS[self.op]
        if op.accepted(self.dtype, self.soc):
            return (OK if op.has_kernel(self.soc) else NO_KERNEL), None, None
        if self.dtype == BF16 and op.accepted(BF16):  # listed on A2/A3 only
            return INVALID, op.bf16_arg, "BF16|BFLOAT16"
        return INVALID, op.dtype_arg, re.escape(ACL_NAME[self.dtype])

    @property
    def id(self) -> str:
        op = OPS[self.op]
        parts = ", ".join(f"{p}=1" if p == "dim" else f"{p}={ACL_NAME[self.dtype]}[2,3]"
                          for p in op.params)
        code, arg, _ = self.expected()
        return (f"ACLNN_EMU_SOC={self.soc} ({self.soc_class}) {op.api1}({parts}) -> {code}"
                + (f" [{arg}]" if arg else ""))


DTYPE_CASES = [DtypeCase(op.name, c, d) for op in OP_DB for c in SOC_CLASSES
               for d in ALL_DTYPES]


@pytest.mark.parametrize("case", DTYPE_CASES, ids=lambda c: c.id)
def test_dtype_table(case: DtypeCase, dev, stream, monkeypatch):
    """Every tensor of one dtype, on one SoC of each class: the table's dtype list decides."""
    op = OPS[case.op]
    code, arg, pattern = case.expected()
    args = tuple(1 if p == "dim" else T(S23, case.dtype) for p in op.params)
    check_status(op, Case(op.name, args, code, arg, has=(pattern,) if pattern else (),
                          soc=case.soc), dev, stream, monkeypatch, 7)


# ------------------------------------------------------------------------------ workspace ----

WORKSPACE = [(OPS[c.op], c) for op in OP_DB for c in op.workspace_inputs]


@pytest.mark.parametrize("op,case", WORKSPACE, ids=[c.id for _, c in WORKSPACE])
def test_workspace_size(op: OpInfo, case, dev, stream):
    built, args = build_args(dev, op, case.args, np.random.default_rng(11))
    ws, ex, ret = phase1(op, *args)
    assert ret == 0, acl.get_recent_err_msg()
    assert ws == case.expected
    run_and_check(dev, stream, op, case.args, built, ws, ex)  # and that workspace suffices


# ----------------------------------------------------------- phase 2: the executor's op ----


def valid_args(op: OpInfo) -> tuple:
    return tuple(1 if p == "dim" else T(S23) for p in op.params)


PAIRS = [(a, b) for a in OP_DB for b in OP_DB if a is not b]


@pytest.mark.parametrize("built_by,run_by", PAIRS,
                         ids=[f"executor of {a.api1} passed to {b.api} -> 161002"
                              for a, b in PAIRS])
def test_phase2_rejects_an_executor_of_another_operator(built_by, run_by, dev, stream):
    built, args = build_args(dev, built_by, valid_args(built_by), np.random.default_rng(12))
    ws, ex, ret = phase1(built_by, *args)
    assert ret == 0, acl.get_recent_err_msg()
    wsp = dev.malloc(ws) if ws else 0
    assert phase2(run_by, wsp, ws, ex, stream) == INVALID
    msg = acl.get_recent_err_msg()
    assert msg and run_by.api in msg and "161002" in msg and built_by.api in msg, msg
    # docs/return_codes.md: a single-use executor is consumed also when phase 2 rejects it
    assert phase2(built_by, wsp, ws, ex, stream) == NULLPTR
    assert "consumed" in (acl.get_recent_err_msg() or "")


@pytest.mark.parametrize("op", OP_DB, ids=lambda o: f"{o.api}(0, 0, None, stream) -> 161001")
def test_phase2_null_executor(op: OpInfo, stream):
    assert phase2(op, 0, 0, None, stream) == NULLPTR
    msg = acl.get_recent_err_msg()
    assert msg and op.api in msg and "161001" in msg and "executor" in msg, msg


# --------------------------------------------------------------------- Python type errors ----

# a wrongly typed Python value for one argument (the others valid): TypeError, not a code
DIM_TYPE_ERRORS = (("'1'", "1"), ("b'1'", b"1"), ("[1]", [1]), ("None", None),
                   ("aclTensor", "<tensor>"))
TENSOR_TYPE_ERRORS = (("[[0.0]*3]*2", [[0.0] * 3] * 2), ("[1.0, 2.0]", [1.0, 2.0]),
                      ("[0.0]", [0.0]), ("np.zeros((2,3))", np.zeros(S23, np.float32)),
                      ("'out'", "out"))
TYPE_ERRORS = [(op, p, text, value) for op in OP_DB for p in op.params
               for text, value in (DIM_TYPE_ERRORS if p == "dim" else TENSOR_TYPE_ERRORS)]


@pytest.mark.parametrize("op,param,text,value", TYPE_ERRORS,
                         ids=[f"{o.api1}({p}={t}) raises TypeError"
                              for o, p, t, _ in TYPE_ERRORS])
def test_python_type_errors(op: OpInfo, param, text, value, dev, stream):
    built, args = build_args(dev, op, valid_args(op), np.random.default_rng(3))
    if isinstance(value, str) and value == "<tensor>":
        value = next(b[0] for b in built.values())
    args = tuple(value if p == param else a for p, a in zip(op.params, args))
    with pytest.raises(TypeError):
        phase1(op, *args)


@pytest.mark.parametrize("op", [o for o in OP_DB if o.has_dim],
                         ids=lambda o: f"{o.api1}(dim=np.int64(-2)) is dim 0")
def test_numpy_integer_dim_is_an_int(op: OpInfo, dev, stream):
    """A NumPy integer is an integer (C could take it): accepted like a Python int."""
    specs = valid_args(op)
    built, args = build_args(dev, op, specs, np.random.default_rng(4))
    args = tuple(np.int64(-2) if p == "dim" else a for p, a in zip(op.params, args))
    ws, ex, ret = phase1(op, *args)
    assert ret == 0, acl.get_recent_err_msg()
    run_and_check(dev, stream, op, tuple(0 if p == "dim" else s
                                         for p, s in zip(op.params, specs)), built, ws, ex)


# ------------------------------------------------- the emulator's checks (after CANN's) ----

FAULTS = ("short", "offset", "before", "null", "freed", "destroyed")


@dataclass(frozen=True)
class MemCase:
    op: str
    what: str  # which tensor is bad
    fault: str  # "short" (allocation too small), "offset", "before", "null", "freed",
    # "destroyed"; "fits": a valid view that ends exactly at the allocation's end

    @property
    def code(self) -> int:
        return OK if self.fault == "fits" else INVALID

    @property
    def id(self) -> str:
        return f"{OPS[self.op].api1}: {self.what}:{self.fault} -> {self.code}"


MEM_CASES = [MemCase(op.name, w, f) for op in OP_DB for w in op.tensors for f in FAULTS]
MEM_CASES += [MemCase(op.name, w, "fits") for op in OP_DB
              for w in dict.fromkeys((op.inputs[0], op.out))]


def bad_tensor(dev, fault: str, shape=S23, dtype=F32):
    """(tensor, expected byte range or None). 'fits' is a valid view ending at the last byte."""
    item = np.dtype(NUMPY_OF[dtype]).itemsize
    n = numel(shape)
    host = np.random.default_rng(5).uniform(-1, 1, n + 8).astype(NUMPY_OF[dtype])
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
    op = OPS[case.op]
    built, args = build_args(dev, op, valid_args(op), np.random.default_rng(6))
    bad, byte_range = bad_tensor(dev, case.fault)
    args = tuple(bad if p == case.what else a for p, a in zip(op.params, args))
    ws, ex, ret = phase1(op, *args)
    assert ret == case.code, acl.get_recent_err_msg()
    if case.code == OK:
        assert acl.get_recent_err_msg() is None
        wsp = dev.malloc(ws) if ws else 0
        assert phase2(op, wsp, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
        return
    assert (ws, ex) == (0, None)
    msg = assert_message(op.api1, case.code, case.what)
    if byte_range is not None:
        for b in byte_range:
            assert hex(b) in msg.lower() or str(b) in msg, \
                f"message does not give the byte range bound {hex(b)}: {msg}"


def _cann_rejects(op: OpInfo):
    """(argument tuple with a placeholder for the first input, the argument CANN names): a call
    CANN's checks reject whatever the first input's memory (a bad dim, or out's shape)."""
    if op.has_dim:
        return tuple(5 if p == "dim" else T(S23) for p in op.params), "dim"
    if "out" in op.params:
        return tuple(T((3, 2)) if p == "out" else T(S23) for p in op.params), "out"
    return None


CANN_FIRST = [(op, f) for op in OP_DB if _cann_rejects(op) for f in
              ("null", "freed", "destroyed", "short")]


@pytest.mark.parametrize("op,fault", CANN_FIRST,
                         ids=[f"{o.api1}: {o.inputs[0]}:{f}, CANN rejects "
                              f"{_cann_rejects(o)[1]} first -> 161002" for o, f in CANN_FIRST])
def test_cann_checks_come_before_the_emulators(op: OpInfo, fault, dev, stream):
    """A CANN rejection is reported even when the first input's memory is also bad."""
    specs, arg = _cann_rejects(op)
    built, args = build_args(dev, op, specs, np.random.default_rng(7))
    bad, _ = bad_tensor(dev, fault)
    args = tuple(bad if p == op.inputs[0] else a for p, a in zip(op.params, args))
    ws, ex, ret = phase1(op, *args)
    assert (ws, ex, ret) == (0, None, INVALID)
    assert_message(op.api1, INVALID, arg)


@pytest.mark.parametrize("op", [o for o in OP_DB if "out" in o.params],
                         ids=lambda o: f"{o.api1}({o.inputs[0]}=destroyed, out=None) -> 161001")
def test_null_check_comes_before_destroyed_check(op: OpInfo, dev, stream):
    built, args = build_args(dev, op, valid_args(op), np.random.default_rng(8))
    bad, _ = bad_tensor(dev, "destroyed")
    args = tuple(bad if p == op.inputs[0] else None if p == "out" else a
                 for p, a in zip(op.params, args))
    ws, ex, ret = phase1(op, *args)
    assert (ws, ex, ret) == (0, None, NULLPTR)
    assert_message(op.api1, NULLPTR, "out")


def test_soc_classes_of_the_tests():
    """The SoCs the table's cases set belong to the classes they stand for."""
    assert soc_class(None) == soc_class(DEFAULT_SOC) == "A2"
    assert {soc_class(s) for s in CLASS_SOC.values()} == set(SOC_CLASSES)
    for _, case in STATUS:
        soc_class(case.soc)  # a known class
