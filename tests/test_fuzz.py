"""Property-based robustness tests (hypothesis) of the project's promise: bad input always gets
the documented status code and a message naming the API, the argument and the values; it never
raises, never crashes the process and never writes outside the memory a call may write.

1. Phase 1 of every operator with random tensors (rank, dims, dtype, format, strides, offset and a
   device pointer that is valid, null, host memory, freed, too small, or a destroyed tensor) and a
   random dim; a successful phase 1 is run and must write only its out view (self for the
   in-place op).
2. A valid phase 1 with random misuse at phase 2 (workspace pointer and size, executor reused,
   destroyed, of another operator, repeatable, stream null or destroyed): the exact code the docs'
   check order gives, and no stray write.
3. The runtime as a hypothesis state machine (malloc/free, memcpy/memset sync and async, streams,
   events) against a Python model of device and host memory.
4. aclnnSoftmax on random strided views (positive, negative, zero strides; offsets, also
   negative) against a float64 softmax of NumPy's ``as_strided`` view of the same storage.

Variants of 1 with negative view dims and with extreme int64 strides/offsets run as their own
tests, next to minimal repros of what they found (negative dims, a view whose kernel writes
outside the bytes phase 1 checked, a workspace size beyond uint64_t). Calls that make the
emulator touch freed device memory as host memory run in a subprocess
(``test_freed_device_pointer_is_not_host_memory``), as they crash the interpreter.

Every test is deterministic (``derandomize=True``) and keeps tensors tiny.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import view_element_indices
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)
from opinfo import OP_DB
from tensorspec import dense_strides

from aclnn_py import acl, aclnn

H2H, H2D, D2H, D2D, DEFAULT, H2B2D = range(6)

PHASE1_CODES = {0, 161001, 161002, 561003, 561103}
PHASE2_CODES = {0, 161001, 161002, 361001}
RUNTIME_CODES = {0, 100000, 100002, 100003, 100006, 100008, 100037, 107000, 107001, 107002,
                 107006, 107016, 107017, 207000, 207001, 207002, 507006, 507013, 507015}

# bytes per element as docs/dtypes.md documents them (sub-byte types: one byte)
ITEMSIZE = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1, 13: 1,
            16: 8, 17: 16, 27: 2, 29: 1, 30: 1, 33: 4, 34: 1, 35: 1, 36: 1, 37: 1, 38: 1,
            39: 1, 40: 1, 41: 1}
ALL_DTYPES = sorted(int(v) for v in aclnn.aclDataType)
ALL_FORMATS = sorted(int(v) for v in aclnn.aclFormat)
F32, F16, F64, BF16, I32 = (int(aclnn.ACL_FLOAT), int(aclnn.ACL_FLOAT16), int(aclnn.ACL_DOUBLE),
                            int(aclnn.ACL_BF16), int(aclnn.ACL_INT32))
ND = int(aclnn.ACL_FORMAT_ND)


def fuzz_settings(n: int, **kw):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), **kw)


# ------------------------------------------------------------------------------ operators ----

# From the operator table (tests/opinfo.py): params: CANN argument order of phase 1; writes: what
# phase 2 may write; empty_skips: tensors whose emptiness makes the op succeed with no work (the
# docs' empty-tensor shortcut).
OPS = {op.name: dict(params=op.params, writes=(op.out,), empty_skips=op.empty_skips)
       for op in OP_DB}


def tensor_names(op: str) -> tuple:
    return tuple(p for p in OPS[op]["params"] if p != "dim")


def phase1(op: str):
    return getattr(aclnn, f"aclnn{op}GetWorkspaceSize")


def phase2(op: str):
    return getattr(aclnn, f"aclnn{op}")


def take_msg() -> str | None:
    return acl.get_recent_err_msg()


def assert_message(ret: int, api: str, names=()) -> None:
    """A failing call left a message naming the API and the code (and an argument)."""
    msg = take_msg()
    assert isinstance(msg, str) and msg, f"{api} returned {ret} but left no message"
    assert api in msg and str(ret) in msg, f"{api} -> {ret}: message {msg!r}"
    if names:
        assert any(n.lower() in msg.lower() for n in names), (
            f"{api} -> {ret}: the message names none of {names}: {msg!r}")


# --------------------------------------------------------------------- memory bookkeeping ----


class Arena:
    """Device allocations (each filled with its own sentinel byte), host buffers and tensors made
    by one example; ``check`` compares every live allocation with its sentinel outside what the
    call may write."""

    def __init__(self):
        self.allocs: dict[int, tuple[int, int]] = {}  # base -> (size, sentinel byte)
        self.hosts: list[np.ndarray] = []
        self.tensors: list = []
        self._fill = 0x11

    def malloc(self, size: int) -> int:
        ptr, ret = acl.rt.malloc(size, 0)
        assert ret == 0 and ptr, take_msg()
        self._fill = (self._fill * 7 + 0x23) & 0xFF or 0x3C
        assert acl.rt.memset(ptr, size, self._fill, size) == 0, take_msg()
        self.allocs[ptr] = (size, self._fill)
        return ptr

    def free(self, ptr: int) -> None:
        assert acl.rt.free(ptr) == 0, take_msg()
        del self.allocs[ptr]

    def host(self, size: int) -> int:
        a = np.zeros(max(size, 1), dtype=np.uint8)
        self.hosts.append(a)
        return acl.util.numpy_to_ptr(a)

    def read(self, ptr: int, size: int) -> np.ndarray:
        out = np.empty(size, dtype=np.uint8)
        assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), size, ptr, size, D2H) == 0, take_msg()
        return out

    def check(self, allowed: list[tuple[int, int]], what: str) -> None:
        """allowed: (address, nbytes) chunks the call may have written."""
        starts = np.array([a for a, _ in allowed], dtype=np.int64)
        ends = starts + np.array([n for _, n in allowed], dtype=np.int64)
        for base, (size, fill) in self.allocs.items():
            got = self.read(base, size)
            diff = np.zeros(size + 1, dtype=np.int64)
            np.add.at(diff, np.clip(starts - base, 0, size), 1)
            np.add.at(diff, np.clip(ends - base, 0, size), -1)
            mask = np.cumsum(diff)[:size] > 0
            bad = np.flatnonzero((got != fill) & ~mask)
            assert bad.size == 0, (
                f"{what}: stray write into allocation 0x{base:x} ({size} bytes, sentinel "
                f"0x{fill:02x}) at byte offsets {bad[:8].tolist()} (values "
                f"{got[bad[:8]].tolist()})")

    def release(self) -> None:
        for t in self.tensors:
            aclnn.aclDestroyTensor(t)
        for base in list(self.allocs):
            self.free(base)
        self.tensors.clear()
        self.hosts.clear()
        take_msg()


def view_chunks(data: int, shape, strides, offset: int, itemsize: int) -> list:
    """(address, nbytes) of every element of a non-empty view."""
    idx = view_element_indices(list(shape), list(strides), offset).ravel()
    return [(data + int(e) * itemsize, itemsize) for e in np.unique(idx)]


@pytest.fixture(scope="module")
def fuzz_stream():
    """Device 0 set in this thread for the whole module, and one explicit stream."""
    assert acl.rt.set_device(0) == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    yield s
    assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.reset_device(0) == 0
    take_msg()


# ------------------------------------------------------- 1. phase 1 with random arguments ----


def _valid(op) -> tuple:
    ins, outs = op.valid_dtypes()
    return [int(d) for d in ins], None if outs is None else [int(d) for d in outs]


# (input dtypes, out dtypes) phase 1 accepts on every SoC (None: out has self's dtype)
VALID_DTYPES = {op.name: _valid(op) for op in OP_DB}


PTR_KINDS = ("valid",) * 20 + ("null", "host", "freed", "small", "destroyed", "misaligned")
EXTREMES = (-(1 << 63), -(1 << 62), -(1 << 40), 1 << 40, 1 << 62, (1 << 63) - 1)  # int64 values


@st.composite
def shapes(draw, allow_negative: bool, max_rank: int = 9):
    rank = draw(st.one_of(st.integers(0, 4), st.integers(0, max_rank)))
    dims, prod = [], 1
    for _ in range(rank):
        if allow_negative and draw(st.integers(0, 3)) == 0:
            d = draw(st.integers(-3, -1))
        elif draw(st.integers(0, 14)) == 0:
            d = 0
        else:
            d = draw(st.integers(1, 4 if prod <= 64 else 1))
        prod *= max(d, 1)
        dims.append(d)
    return dims


@st.composite
def tensor_specs(draw, base_shape, base_dtype, base_fmt, allow_negative, extreme=False):
    if draw(st.integers(0, 19)) == 0:
        return None
    shape = list(base_shape) if draw(st.integers(0, 7)) else draw(shapes(allow_negative))
    dtype = base_dtype if draw(st.integers(0, 5)) else draw(st.sampled_from(ALL_DTYPES))
    fmt = base_fmt if draw(st.integers(0, 7)) else draw(st.sampled_from(ALL_FORMATS))
    if draw(st.booleans()):
        strides = None
    else:
        strides = [draw(st.integers(-6, 6)) if not extreme or draw(st.integers(0, 3))
                   else draw(st.sampled_from(EXTREMES)) for _ in shape]
    offset = (draw(st.integers(-8, 8)) if not extreme or draw(st.integers(0, 2))
              else draw(st.sampled_from(EXTREMES)))
    return dict(shape=shape, dtype=dtype, fmt=fmt, strides=strides,
                offset=offset, ptr=draw(st.sampled_from(PTR_KINDS)),
                slack_lo=draw(st.integers(0, 12)), slack_hi=draw(st.integers(0, 12)))


@st.composite
def phase1_cases(draw, op: str, allow_negative: bool, extreme: bool = False):
    """Mostly a call phase 1 accepts, with each aspect of each tensor sometimes randomised, so
    that both the checks and phase 2 on odd (but valid) views get exercised."""
    base_shape = draw(shapes(allow_negative))
    valid_in = VALID_DTYPES[op][0] + [BF16]
    base_dtype = draw(st.sampled_from(valid_in)) if draw(st.integers(0, 3)) else draw(
        st.sampled_from(ALL_DTYPES))
    base_fmt = ND if draw(st.integers(0, 3)) else draw(st.sampled_from(ALL_FORMATS))
    specs = {n: draw(tensor_specs(base_shape, base_dtype, base_fmt, allow_negative, extreme))
             for n in tensor_names(op)}
    n = max(len(base_shape), 1)
    dim = draw(st.integers(-n, n - 1)) if draw(st.integers(0, 3)) else draw(
        st.integers(-12, 12))
    return specs, dim


def view_extent(shape, strides, offset) -> tuple[int, int]:
    """(lowest, highest) element index of a non-empty view, in exact integers."""
    lo = offset + sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = offset + sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    return lo, hi


def build_tensor(arena: Arena, spec: dict, freed: list):
    """(aclTensor, data, kind) for a spec; the allocation of a 'freed' spec is queued in
    ``freed``. kind is the spec's pointer kind, or 'unfit' when the view cannot lie in any
    allocation (negative dims, or extreme strides/offsets)."""
    shape, isz = spec["shape"], ITEMSIZE.get(spec["dtype"], 1)
    strides = spec["strides"] if spec["strides"] is not None else dense_strides(shape)
    kind = spec["ptr"]
    lo, nbytes = 0, 64  # empty or unfit views: a small buffer
    if all(d > 0 for d in shape):
        lo, hi = view_extent(shape, strides, spec["offset"])
        nbytes = (hi - lo + 1) * isz
        if nbytes > 1 << 20:
            lo, nbytes = 0, 64
            kind = "unfit" if kind in ("valid", "small", "freed", "misaligned") else kind
    elif any(d < 0 for d in shape):
        kind = "unfit" if kind in ("valid", "small", "freed", "misaligned") else kind
    slack_lo, slack_hi = spec["slack_lo"], spec["slack_hi"]
    # a valid view starts on an element boundary (allocations are 64-byte aligned); a
    # 'misaligned' one starts one byte past it (CANN requires aligned tensor data)
    if kind == "misaligned" and isz == 1:
        kind = "valid"  # every address is aligned for 1-byte elements
    slack_lo = -(-slack_lo // isz) * isz + (1 if kind == "misaligned" else 0)
    if kind == "null":
        data = 0
    elif kind == "host":
        data = arena.host(slack_lo + nbytes + slack_hi) + slack_lo - lo * isz
    elif kind == "small":  # the view's last byte lies just past the allocation
        slack_lo = max(slack_lo, 1)
        data = arena.malloc(slack_lo + nbytes - 1) + slack_lo - lo * isz
    else:
        base = arena.malloc(slack_lo + nbytes + slack_hi)
        data = base + slack_lo - lo * isz
        if kind == "freed":
            freed.append(base)
    if not 0 <= data < 1 << 64:  # an extreme offset: no pointer puts that view in memory
        data = arena.malloc(64)
        kind = "unfit" if kind in ("valid", "small", "freed", "misaligned") else kind
    t = aclnn.aclCreateTensor(shape, spec["dtype"], spec["strides"], spec["offset"], spec["fmt"],
                              [max(nbytes // isz, 1)], data)
    assert t is not None, take_msg()
    if kind == "destroyed":
        assert aclnn.aclDestroyTensor(t) == 0
    else:
        arena.tensors.append(t)
    return t, data, kind


def run_phase1_case(op: str, specs: dict, dim: int, stream: int) -> None:
    api = f"aclnn{op}GetWorkspaceSize"
    arena, freed = Arena(), []
    try:
        built = {n: (None, 0, None) if s is None else build_tensor(arena, s, freed)
                 for n, s in specs.items()}
        kinds = {n: b[2] for n, b in built.items()}
        for base in freed:  # after every allocation, so no later one can reuse the address
            arena.free(base)
        take_msg()
        args = [dim if p == "dim" else built[p][0] for p in OPS[op]["params"]]
        result = phase1(op)(*args)  # no exception of any kind: every argument is well typed
        assert isinstance(result, tuple) and len(result) == 3, result
        ws, ex, ret = result
        assert ret in PHASE1_CODES, f"{api} returned undocumented {ret}: {take_msg()}"

        present = [s for s in specs.values() if s is not None]
        has_null = len(present) < len(specs)
        if has_null:
            assert ret == 161001, f"a None tensor must give 161001, got {ret}: {take_msg()}"
        else:
            assert ret != 161001, f"161001 without a None tensor: {take_msg()}"
        if "destroyed" in kinds.values():
            assert ret != 0, "phase 1 accepted a destroyed tensor"

        if ret != 0:
            assert ws == 0 and ex is None, (ws, ex)
            assert_message(ret, api, OPS[op]["params"] if ret in (161001, 161002) else ())
            return
        assert ex is not None and isinstance(ws, int) and ws >= 0, (ws, ex)

        def empty(s):
            return any(d == 0 for d in s["shape"])

        skipped = any(empty(specs[n]) for n in OPS[op]["empty_skips"])
        if not skipped:
            # the op will touch every tensor: each view must be real device memory
            for name, s in specs.items():
                assert kinds[name] == "valid", (
                    f"{api} accepted tensor {name} ({kinds[name]}: view dims {s['shape']}, "
                    f"strides {s['strides']}, offset {s['offset']})")

        wsp = arena.malloc(ws + 64) if ws else 0  # 64 tail bytes that must stay untouched
        ret2 = phase2(op)(wsp, ws, ex, stream)
        assert ret2 == 0, f"aclnn{op} -> {ret2}: {take_msg()}"
        ret3 = acl.rt.synchronize_stream(stream)
        assert ret3 == 0, f"synchronize after aclnn{op} -> {ret3}: {take_msg()}"

        allowed = [(wsp, ws)] if ws else []
        if not skipped:
            for name in OPS[op]["writes"]:
                s, data = specs[name], built[name][1]
                strides = s["strides"] if s["strides"] is not None else dense_strides(s["shape"])
                allowed += view_chunks(data, s["shape"], strides, s["offset"],
                                       ITEMSIZE.get(s["dtype"], 1))
        arena.check(allowed, f"aclnn{op}")
    finally:
        arena.release()


@pytest.mark.parametrize("op", list(OPS))
@fuzz_settings(450)
@given(data=st.data())
def test_phase1_random_arguments(op, fuzz_stream, data):
    specs, dim = data.draw(phase1_cases(op, allow_negative=False), label="specs, dim")
    run_phase1_case(op, specs, dim, fuzz_stream)


@fuzz_settings(80)
@given(data=st.data())
def test_phase1_random_arguments_with_negative_dims(fuzz_stream, data):
    """The same with view dims that are occasionally negative (aclCreateTensor does not check
    them, so phase 1 must: a negative dim describes no view inside any allocation)."""
    op = data.draw(st.sampled_from(list(OPS)), label="op")
    specs, dim = data.draw(phase1_cases(op, allow_negative=True), label="specs, dim")
    run_phase1_case(op, specs, dim, fuzz_stream)


@fuzz_settings(80)
@given(data=st.data())
def test_phase1_random_arguments_with_extreme_strides_and_offsets(fuzz_stream, data):
    """The same with int64 strides and offsets far from any allocation (±2**40, ±2**62, the
    int64 limits): a C caller can pass them, so phase 1 must answer with a code."""
    op = data.draw(st.sampled_from(list(OPS)), label="op")
    specs, dim = data.draw(phase1_cases(op, allow_negative=False, extreme=True),
                           label="specs, dim")
    run_phase1_case(op, specs, dim, fuzz_stream)


@pytest.mark.parametrize("dims", [[-1], [2, -1]])
@pytest.mark.parametrize("op", list(OPS))
def test_negative_view_dim_is_rejected(op, dims, fuzz_stream):
    """Minimal repro of what the negative-dims fuzz finds: 161002 and a message, no exception
    and no plan over a negative element count."""
    arena = Arena()
    try:
        p = arena.malloc(64)
        names = tensor_names(op)
        ts = [aclnn.aclCreateTensor(dims, F32, None, 0, ND, dims, p) for _ in names]
        arena.tensors += ts
        built = dict(zip(names, ts))
        args = [0 if n == "dim" else built[n] for n in OPS[op]["params"]]
        ws, ex, ret = phase1(op)(*args)
        assert (ws, ex, ret) == (0, None, 161002)
        assert_message(ret, f"aclnn{op}GetWorkspaceSize", names)
    finally:
        arena.release()


def test_negative_dims_cannot_write_outside_the_checked_bytes(fuzz_stream):
    """View [5, -1, -1], strides [1, -1, 1]: the emulator's extent check sees one element
    (element 2), the layout counts as contiguous and numel is 5, so the kernel writes 5 elements
    from element 0 straight into out. Phase 1 must reject it (161002); it must not write 16
    bytes around the 4 it checked."""
    arena = Arena()
    try:
        src, dst = arena.malloc(64), arena.malloc(64)
        dims, strides = [5, -1, -1], [1, -1, 1]
        x = aclnn.aclCreateTensor(dims, F32, strides, 0, ND, [5], src + 8)
        y = aclnn.aclCreateTensor(dims, F32, strides, 0, ND, [5], dst + 8)
        arena.tensors += [x, y]
        ws, ex, ret = aclnn.aclnnHardsigmoidGetWorkspaceSize(x, y)
        if ret == 0:  # show what the accepted view does: the bytes checked are dst+16..dst+20
            assert aclnn.aclnnHardsigmoid(arena.malloc(ws) if ws else None, ws, ex,
                                          fuzz_stream) == 0
            assert acl.rt.synchronize_stream(fuzz_stream) == 0
            arena.check([(dst + 16, 4)], "aclnnHardsigmoid on view [5, -1, -1]")
        assert (ws, ex, ret) == (0, None, 161002)
        assert_message(ret, "aclnnHardsigmoidGetWorkspaceSize", ("self", "out"))
    finally:
        arena.release()


@pytest.mark.parametrize("dims", [[1 << 31, 1 << 31], [1 << 62, 4], [(1 << 63) - 1] * 2])
def test_huge_broadcast_view_workspace_is_expressible(dims, fuzz_stream):
    """A stride-0 view of one element with a huge shape: phase 1 plans a Contiguous copy into
    the workspace. workspaceSize is a uint64_t out-parameter, so phase 1 must not return a size
    of 2**64 or more; and phase 2 given that size must return a code, not raise."""
    arena = Arena()
    try:
        p = arena.malloc(64)
        x = aclnn.aclCreateTensor(dims, F32, [0] * len(dims), 0, ND, [1], p)
        y = aclnn.aclCreateTensor(dims, F32, [0] * len(dims), 0, ND, [1], p + 16)
        arena.tensors += [x, y]
        ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(x, -1, y)
        assert ret in PHASE1_CODES
        if ret:
            assert_message(ret, "aclnnSoftmaxGetWorkspaceSize")
            return
        assert 0 <= ws < 1 << 64, f"workspace size {ws} does not fit uint64_t"
        got = aclnn.aclnnSoftmax(arena.malloc(64), ws, ex, fuzz_stream)
        assert got == 161002, take_msg()  # a 64-byte allocation cannot hold that workspace
        arena.check([], "aclnnSoftmax with a rejected workspace")
    finally:
        arena.release()


# --------------------------------------------------- 2. a valid phase 1, misused phase 2 ----

def aliases(shape, strides) -> bool:
    """Two indices of the view reach one element (by enumeration: the definition)."""
    offsets = {sum(i * s for i, s in zip(idx, strides))
               for idx in itertools.product(*(range(d) for d in shape))}
    return len(offsets) < math.prod(shape)


@st.composite
def valid_calls(draw):
    op = draw(st.sampled_from(list(OPS)))
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    in_dts, out_dts = VALID_DTYPES[op]
    dt = draw(st.sampled_from(in_dts))
    specs = {}
    for name in tensor_names(op):
        if name == "out" and out_dts is not None:
            tdt = draw(st.sampled_from(out_dts))
        elif op == "HardsigmoidBackward" and name != "out":
            tdt = draw(st.sampled_from(in_dts))
        else:
            tdt = dt
        strides = None if draw(st.booleans()) else [draw(st.integers(-4, 4)) for _ in shape]
        if name in OPS[op]["writes"] and strides is not None and aliases(shape, strides):
            strides = None  # an output whose elements alias is refused (161002)
        specs[name] = dict(shape=list(shape), dtype=tdt, fmt=ND, strides=strides,
                           offset=draw(st.integers(-4, 4)), ptr="valid",
                           slack_lo=draw(st.sampled_from([0, 4, 8])), slack_hi=0)
    dim = draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    return op, specs, dim


@fuzz_settings(300)
@given(call=valid_calls(),
       ws_kind=st.sampled_from(["exact", "big", "none", "small", "host", "freed"]),
       size_kind=st.sampled_from(["need", "need", "zero", "less", "more", "huge"]),
       action=st.sampled_from(["once", "twice", "destroy_first", "repeatable_twice",
                               "none_executor", "wrong_op"]),
       stream_kind=st.sampled_from(["explicit", "explicit", "null", "destroyed"]),
       data=st.data())
def test_phase2_misuse(fuzz_stream, call, ws_kind, size_kind, action, stream_kind, data):
    op, specs, dim = call
    arena, freed = Arena(), []
    try:
        built = {n: build_tensor(arena, s, freed) for n, s in specs.items()}
        args = [dim if p == "dim" else built[p][0] for p in OPS[op]["params"]]
        need, ex, ret = phase1(op)(*args)
        assert ret == 0, f"a valid aclnn{op}GetWorkspaceSize returned {ret}: {take_msg()}"

        # the workspace pointer and the size passed
        alloc = 0
        if ws_kind in ("exact", "big", "small"):
            alloc = {"exact": max(need, 1), "big": need + 256, "small": max(need - 1, 1)}[ws_kind]
            wsp = arena.malloc(alloc)
        elif ws_kind == "host":
            wsp = arena.host(need + 256)
        elif ws_kind == "freed":
            wsp = arena.malloc(need + 256)
            arena.free(wsp)
        else:
            wsp = None
        ws_size = {"need": need, "zero": 0, "more": need + data.draw(st.integers(1, 300)),
                   "less": need - data.draw(st.integers(1, max(need, 1))) if need else 0,
                   "huge": (1 << 64) - 1}[size_kind]
        if stream_kind == "explicit":
            stream, stream_ok = fuzz_stream, True
        elif stream_kind == "null":
            stream, stream_ok = None, True
        else:
            stream, r = acl.rt.create_stream()
            assert r == 0 and acl.rt.destroy_stream(stream) == 0
            stream_ok = False
        note(f"need={need} ws={ws_kind}:{ws_size} action={action} stream={stream_kind}")

        def expected(state: str, wrong_op: bool = False) -> int:
            """The docs' phase-2 check order (two_phase_api.md, 'Phase 2 only binds')."""
            if state in ("none", "consumed", "destroyed"):
                return 161001
            if wrong_op:
                return 161002
            if ws_size > 0 and not wsp:
                return 161001
            if ws_size < need:
                return 161002
            if ws_size > 0 and not (ws_kind in ("exact", "big", "small") and ws_size <= alloc):
                return 161002
            if not stream_ok:
                return 361001
            return 0

        other = next(o for o in OPS if o != op)
        ran = False

        def launch(which: str, executor, want: int) -> None:
            nonlocal ran
            got = phase2(which)(wsp, ws_size, executor, stream)
            assert got in PHASE2_CODES, f"aclnn{which} returned undocumented {got}: {take_msg()}"
            assert got == want, f"aclnn{which} -> {got}, expected {want}: {take_msg()}"
            if got:
                assert_message(got, f"aclnn{which}")
            ran = ran or got == 0

        if action == "once":
            launch(op, ex, expected("ready"))
        elif action == "twice":
            launch(op, ex, expected("ready"))
            launch(op, ex, expected("consumed"))
        elif action == "destroy_first":
            assert aclnn.aclDestroyAclOpExecutor(ex) == 0
            launch(op, ex, expected("destroyed"))
        elif action == "repeatable_twice":
            assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
            launch(op, ex, expected("ready"))
            launch(op, ex, expected("ready"))
            assert aclnn.aclDestroyAclOpExecutor(ex) == 0
        elif action == "none_executor":
            launch(op, None, expected("none"))
            assert aclnn.aclDestroyAclOpExecutor(ex) == 0
        else:
            launch(other, ex, expected("ready", wrong_op=True))
            launch(op, ex, expected("consumed"))

        for s in ([stream] if stream_ok else []) + [None]:
            r = acl.rt.synchronize_stream(s)
            assert r == 0, f"synchronize -> {r}: {take_msg()}"
        allowed = []
        if ran:
            if need and ws_kind in ("exact", "big", "small"):
                allowed.append((wsp, need))
            for name in OPS[op]["writes"]:
                s, d = specs[name], built[name][1]
                strides = s["strides"] if s["strides"] is not None else dense_strides(s["shape"])
                allowed += view_chunks(d, s["shape"], strides, s["offset"], ITEMSIZE[s["dtype"]])
        arena.check(allowed, f"aclnn{op} ({action})")
    finally:
        arena.release()


# ------------------------------------------------------------- 3. runtime state machine ----

HOST_SIZE = 2048
# A pointer/handle nothing holds, used when every destroyed one was reused by the allocator (so
# that the outcome, and hence the strategy, stays deterministic). Only passed where the call
# checks device memory or looks the handle up.
NEVER_ALLOCATED = 0x1000
MAX_COUNT = 600


_NO_STREAM = object()  # conflicts(): no stream key is excluded


class RuntimeMachine(RuleBasedStateMachine):
    """Random acl.rt call sequences against a model.

    Model: the bytes of every live allocation and host buffer, and the async copies/memsets
    still pending, applied in enqueue order when the streams are drained. To keep the model
    exact the machine (a) drains before a synchronous call or a free that touches memory a
    pending task touches and (b) orders an async task after an overlapping task of another
    stream with an event (record + stream_wait_event), which the runtime must honour.
    Freed pointers are only passed where the call checks device memory; where a call treats a
    non-device pointer as host memory see test_freed_device_pointer_is_not_host_memory."""

    def __init__(self):
        super().__init__()
        assert acl.rt.set_device(0) == 0
        take_msg()
        from aclnn_py import config

        enabled, byte = config.poison()
        self.poison = byte if enabled else None
        self.dev: dict[int, bytearray] = {}  # live allocations: base -> model bytes
        self.freed: list[int] = []
        self.freed_sizes: dict[int, int] = {}  # freed base -> size
        self.host_arrays = []
        self.host: dict[int, bytearray] = {}  # host buffer base -> model bytes
        for i in range(2):
            a = (np.arange(HOST_SIZE) * (i + 3) % 251).astype(np.uint8)
            self.host_arrays.append(a)
            self.host[acl.util.numpy_to_ptr(a)] = bytearray(a.tobytes())
        hp, ret = acl.rt.malloc_host(HOST_SIZE)
        assert ret == 0
        assert acl.rt.memset(hp, HOST_SIZE, 0x5A, HOST_SIZE) == 0
        self.host_pinned = hp
        self.host[hp] = bytearray([0x5A] * HOST_SIZE)
        self.streams: list[int] = []  # live explicit streams
        self.dead_streams: list[int] = []
        self.events: dict[int, dict] = {}  # live events -> {"recorded": bool, "synced": bool}
        self.dead_events: list[int] = []
        self.pending: list[tuple] = []  # (stream key, regions, apply)
        self.steps_since_check = 0

    @initialize(data=st.data())
    def start(self, data):
        """A few allocations, a stream and an event, so that most rules have something to use."""
        for _ in range(data.draw(st.integers(1, 4), label="allocations")):
            size = data.draw(st.integers(1, 512), label="size")
            ptr, _ = self.call("aclrtMalloc", acl.rt.malloc(size, 0), 0)
            if self.poison is None:
                assert acl.rt.memset(ptr, size, 0, size) == 0
            self.dev[ptr] = bytearray([self.poison or 0] * size)
        self.create_stream()
        self.create_event()

    # ---- helpers

    def call(self, api: str, result, want):
        """Check one call's code against the prediction and the docs; returns the result."""
        self.steps_since_check += 1
        ret = result[-1] if isinstance(result, tuple) else result
        assert isinstance(ret, int) and ret in RUNTIME_CODES, f"{api} returned {result!r}"
        if isinstance(want, int):
            want = {want}
        assert ret in want, f"{api} -> {ret}, expected {sorted(want)}: {take_msg()}"
        if ret:
            assert_message(ret, api)
        return result

    def find_dev(self, ptr):
        for base, m in self.dev.items():
            if base <= ptr < base + len(m):
                return base
        return None

    def in_device(self, ptr):
        """Device memory by address, as docs/reliability.md defines it: a live allocation or
        one this model freed (the emulator never hands a freed address out again soon)."""
        if self.find_dev(ptr) is not None:
            return True
        return any(base <= ptr < base + size for base, size in self.freed_sizes.items())

    def find_host(self, ptr):
        for base, m in self.host.items():
            if base <= ptr < base + len(m):
                return base
        return None

    def region(self, ptr, count):
        base = self.find_dev(ptr)
        if base is None:
            base = self.find_host(ptr)
        return (base, ptr - base, ptr - base + count)

    def buf(self, base):
        return self.dev[base] if base in self.dev else self.host[base]

    def live_stream_key(self, s):
        return s if s in self.streams else None if s is None else "dead"

    def drain(self):
        for s in self.streams + [None]:
            self.call("aclrtSynchronizeStream", acl.rt.synchronize_stream(s), 0)
        for _, _, apply in self.pending:
            apply()
        self.pending.clear()
        for ev in self.events.values():
            ev["synced"] = ev["recorded"]

    def overlaps(self, regions, pending_regions):
        return any(a[0] == b[0] and a[1] < b[2] and b[1] < a[2]
                   for a in regions for b in pending_regions)

    def conflicts(self, regions, other_than=_NO_STREAM):
        return [p for p in self.pending if p[0] != other_than and self.overlaps(regions, p[1])]

    # ---- pointer strategies

    @staticmethod
    def pick(data, seq, label: str):
        """An element of seq, or None. Always one draw of the same shape, whatever seq holds:
        which addresses the C allocator reuses must not change the strategy's structure."""
        i = data.draw(st.integers(0, 63), label=label)
        return seq[i % len(seq)] if seq else None

    def draw_ptr(self, data, role: str, count: int):
        """A pointer for one side of a call. role: 'device' (checked as device memory), 'host'
        (used as host memory: only our host buffers), 'either' (decided from the pointer)."""
        kinds = ["dev"] * 6 + ["partial", "host", "zero"]
        if role == "device":
            kinds.append("freed")
        kind = data.draw(st.sampled_from(kinds), label=f"{role} ptr")
        if kind in ("dev", "partial") and self.dev:
            base = self.pick(data, list(self.dev), "alloc")
            size = len(self.dev[base])
            if kind == "dev":
                off = data.draw(st.integers(0, max(size - count, 0)), label="off")
            else:
                off = data.draw(st.integers(min(max(size - count + 1, 0), size - 1), size - 1),
                                label="off")
            return base + off
        if kind == "freed":
            stale = [p for p in self.freed if self.find_dev(p) is None]
            return self.pick(data, stale, "freed") or NEVER_ALLOCATED
        if kind == "zero":
            return data.draw(st.sampled_from([0, None]), label="null")
        base = self.pick(data, list(self.host), "host")
        return base + data.draw(st.integers(0, HOST_SIZE - count), label="hoff")

    def draw_stream(self, data):
        """None (the default stream), a live explicit stream, or a destroyed one."""
        cat = data.draw(st.sampled_from([0, 0, 1, 1, 1, 2]), label="stream kind")
        if cat == 1:
            return self.pick(data, self.streams, "stream")
        if cat == 2:
            return self.pick(data, [s for s in self.dead_streams if s not in self.streams],
                             "dead stream") or NEVER_ALLOCATED
        return None

    def draw_event(self, data):
        """0, a live event, or a destroyed one."""
        cat = data.draw(st.sampled_from([0, 1, 1, 1, 1, 2]), label="event kind")
        if cat == 1:
            return self.pick(data, list(self.events), "event") or 0
        if cat == 2:
            return self.pick(data, [e for e in self.dead_events if e not in self.events],
                             "dead event") or NEVER_ALLOCATED
        return 0

    # ---- prediction

    def predict_copy(self, dst, dest_max, src, count, kind, is_async, stream):
        """(code, (dst region, src region) or None) per runtime.md's memcpy check order."""
        dst, src = dst or 0, src or 0
        if count == 0:
            return 0, None
        if dst == 0 or src == 0 or kind not in range(6):
            return 100000, None
        if count > dest_max % (1 << 64):  # size_t: a negative destMax wraps (aclnn_py.cint)
            return 107000, None
        sides = {H2H: (False, False), H2D: (True, False), D2H: (False, True),
                 D2D: (True, True), H2B2D: (True, False)}
        if kind == DEFAULT:  # decided by address range: freed device memory is device memory
            dst_dev, src_dev = self.in_device(dst), self.in_device(src)
        else:
            dst_dev, src_dev = sides[kind]
        for ptr, on_dev in ((dst, dst_dev), (src, src_dev)):
            base = self.find_dev(ptr)
            if on_dev:
                if base is None:  # host memory 107016; device memory in no live allocation 107000
                    return (107000 if self.in_device(ptr) else 107016), None
                if ptr + count > base + len(self.dev[base]):
                    return 107000, None
            elif self.in_device(ptr):
                return 107016, None
        if is_async:
            if not dst_dev and not src_dev:
                return 207000, None
            if self.live_stream_key(stream) == "dead":
                return 107017, None
        return 0, (self.region(dst, count), self.region(src, count))

    def predict_memset(self, ptr, max_count, count, device_only, stream=None):
        ptr = ptr or 0
        if count == 0:
            return 0, None
        if ptr == 0:
            return 100000, None
        if count > max_count % (1 << 64):  # size_t: a negative maxCount wraps
            return 107000, None
        base = self.find_dev(ptr)
        if base is not None:
            if ptr + count > base + len(self.dev[base]):
                return 107000, None
        elif self.in_device(ptr):  # freed device memory is still device memory: 107000
            return 107000, None
        elif device_only:
            return 107016, None
        if device_only and self.live_stream_key(stream) == "dead":
            return 107017, None
        return 0, self.region(ptr, count)

    def copy_effect(self, dreg, sreg):
        def apply():
            data = bytes(self.buf(sreg[0])[sreg[1]:sreg[2]])
            self.buf(dreg[0])[dreg[1]:dreg[2]] = data
        return apply

    def set_effect(self, reg, value):
        def apply():
            self.buf(reg[0])[reg[1]:reg[2]] = bytes([value & 0xFF]) * (reg[2] - reg[1])
        return apply

    def order_after(self, regions, stream):
        """Make ``stream`` wait for every other stream's pending task that overlaps."""
        for key in {p[0] for p in self.conflicts(regions, other_than=stream)}:
            if key == "dead" or key not in self.streams + [None]:
                continue  # destroyed streams have drained already
            ev, ret = acl.rt.create_event()
            assert ret == 0
            self.call("aclrtRecordEvent", acl.rt.record_event(ev, key), 0)
            self.call("aclrtStreamWaitEvent", acl.rt.stream_wait_event(stream, ev), 0)
            self.call("aclrtDestroyEvent", acl.rt.destroy_event(ev), 0)  # safe while pending

    # ---- rules: memory

    @precondition(lambda self: len(self.dev) < 10)
    @rule(data=st.data())
    def malloc(self, data):
        size = data.draw(st.one_of(st.integers(1, 512), st.sampled_from(
            [0, -1, 1 << 62, (1 << 64) - 1])), label="size")
        policy = data.draw(st.sampled_from([int(p) for p in acl.aclrtMemMallocPolicy]))
        # size_t: -1 wraps to 2**64 - 1, beyond any limit (aclnn_py.cint)
        want = 100000 if size == 0 else 207001 if size % (1 << 64) > (1 << 40) else 0
        ptr, ret = self.call("aclrtMalloc", acl.rt.malloc(size, policy), want)
        if ret:
            assert ptr == 0
            return
        assert ptr and ptr % 64 == 0, hex(ptr)
        assert self.find_dev(ptr) is None and self.find_host(ptr) is None, "overlapping alloc"
        if self.poison is None:
            assert acl.rt.memset(ptr, size, 0, size) == 0
        self.dev[ptr] = bytearray([self.poison or 0] * size)

    @rule(data=st.data())
    def free(self, data):
        kind = data.draw(st.sampled_from(["live", "live", "double", "interior", "host", "zero"]))
        ptr = 0
        if kind == "live":
            ptr = self.pick(data, list(self.dev), "alloc") or 0
        elif kind == "double":
            ptr = self.pick(data, [p for p in self.freed if self.find_dev(p) is None],
                            "freed") or NEVER_ALLOCATED
        elif kind == "interior":
            base = self.pick(data, [b for b, m in self.dev.items() if len(m) > 1], "alloc")
            if base is not None:
                ptr = base + data.draw(st.integers(1, len(self.dev[base]) - 1))
        elif kind == "host":
            ptr = self.pick(data, list(self.host), "host")
        if ptr in self.dev and self.conflicts([(ptr, 0, len(self.dev[ptr]))]):
            self.drain()  # a free racing a pending task is a fault at synchronize, not here
        want = 100000 if ptr == 0 else 0 if ptr in self.dev else 207002
        self.call("aclrtFree", acl.rt.free(ptr), want)
        if want == 0:
            self.freed_sizes[ptr] = len(self.dev.pop(ptr))
            self.freed.append(ptr)

    def do_memcpy(self, data, is_async: bool):
        kind = data.draw(st.sampled_from([H2D, D2H, D2D, DEFAULT] * 4 + [H2H, H2B2D, 6, -1]),
                         label="kind")
        count = data.draw(st.one_of(st.integers(0, 64), st.integers(0, MAX_COUNT)), label="n")
        if kind not in range(6):
            roles = ("device", "device")
        else:
            roles = {H2H: ("host", "host"), H2D: ("device", "host"), D2H: ("host", "device"),
                     D2D: ("device", "device"), DEFAULT: ("either", "either"),
                     H2B2D: ("device", "host")}[kind]
        dst = self.draw_ptr(data, roles[0], count)
        src = self.draw_ptr(data, roles[1], count)
        dest_max = count + data.draw(st.integers(-4, 64), label="slack")
        stream = self.draw_stream(data) if is_async else None
        want, regs = self.predict_copy(dst, dest_max, src, count, kind, is_async, stream)
        if regs and not is_async and self.conflicts(list(regs)):
            self.drain()
        if regs and is_async:
            self.order_after(list(regs), stream)
        if is_async:
            got = acl.rt.memcpy_async(dst, dest_max, src, count, kind, stream)
            self.call("aclrtMemcpyAsync", got, want)
        else:
            self.call("aclrtMemcpy", acl.rt.memcpy(dst, dest_max, src, count, kind), want)
        if regs:
            effect = self.copy_effect(regs[0], regs[1])
            if is_async:
                self.pending.append((stream, list(regs), effect))
            else:
                effect()

    def do_memset(self, data, is_async: bool):
        count = data.draw(st.one_of(st.integers(0, 64), st.integers(0, MAX_COUNT)), label="n")
        ptr = self.draw_ptr(data, "device" if is_async else "either", count)
        max_count = count + data.draw(st.integers(-4, 64), label="slack")
        value = data.draw(st.integers(-300, 300), label="value")
        stream = self.draw_stream(data) if is_async else None
        want, reg = self.predict_memset(ptr, max_count, count, is_async, stream)
        if reg and not is_async and self.conflicts([reg]):
            self.drain()
        if reg and is_async:
            self.order_after([reg], stream)
        if is_async:
            got = acl.rt.memset_async(ptr, max_count, value, count, stream)
            self.call("aclrtMemsetAsync", got, want)
        else:
            self.call("aclrtMemset", acl.rt.memset(ptr, max_count, value, count), want)
        if reg:
            effect = self.set_effect(reg, value)
            if is_async:
                self.pending.append((stream, [reg], effect))
            else:
                effect()

    @rule(attr=st.integers(-2, 20))
    def get_mem_info(self, attr):
        free, total, ret = self.call("aclrtGetMemInfo", acl.rt.get_mem_info(attr),
                                     0 if 0 <= attr <= 17 else 100000)
        if ret == 0:
            assert 0 <= free <= total

    # async rules twice: hypothesis picks rules uniformly, and async work is what needs testing
    @rule(data=st.data())
    def memcpy(self, data):
        self.do_memcpy(data, False)

    @rule(data=st.data())
    def memcpy_async(self, data):
        self.do_memcpy(data, True)

    @rule(data=st.data())
    def memcpy_async_again(self, data):
        self.do_memcpy(data, True)

    @rule(data=st.data())
    def memset(self, data):
        self.do_memset(data, False)

    @rule(data=st.data())
    def memset_async(self, data):
        self.do_memset(data, True)

    @rule(data=st.data())
    def memset_async_again(self, data):
        self.do_memset(data, True)

    @precondition(lambda self: any(r[0] in self.dev for p in self.pending for r in p[1]))
    @rule(data=st.data(), what=st.sampled_from(["memset", "copy_into", "copy_from"]))
    def async_over_pending(self, data, what):
        """Async work on another stream over device memory a pending task uses: the machine
        orders it after that task with an event, and the runtime must honour the wait."""
        key, regions, _ = [p for p in self.pending if any(r[0] in self.dev for r in p[1])][-1]
        base, lo, hi = next(r for r in regions if r[0] in self.dev)
        others = [s for s in [None] + self.streams if s != key]
        stream = self.pick(data, others, "other stream") if others else key
        ptr, count = base + lo, hi - lo
        if what == "memset":
            value = data.draw(st.integers(0, 255), label="value")
            want, reg = self.predict_memset(ptr, count, count, True, stream)
            regs = [reg]
        else:
            other = self.pick(data, list(self.dev), "alloc")
            off = data.draw(st.integers(0, max(len(self.dev[other]) - count, 0)), label="off")
            dst, src = (ptr, other + off) if what == "copy_into" else (other + off, ptr)
            want, regs = self.predict_copy(dst, count, src, count, D2D, True, stream)
        if regs and regs[0] is not None:
            self.order_after(list(regs), stream)
        if what == "memset":
            got = acl.rt.memset_async(ptr, count, value, count, stream)
            self.call("aclrtMemsetAsync", got, want)
            if reg:
                self.pending.append((stream, [reg], self.set_effect(reg, value)))
        else:
            got = acl.rt.memcpy_async(dst, count, src, count, D2D, stream)
            self.call("aclrtMemcpyAsync", got, want)
            if regs:
                self.pending.append((stream, list(regs), self.copy_effect(regs[0], regs[1])))

    @precondition(lambda self: self.steps_since_check >= 10)
    @rule()
    def check_memory(self):
        self.steps_since_check = 0
        self.drain()
        for base, m in self.dev.items():
            got = np.empty(len(m), dtype=np.uint8)
            self.call("aclrtMemcpy", acl.rt.memcpy(acl.util.numpy_to_ptr(got), len(m), base,
                                                   len(m), D2H), 0)
            want = np.frombuffer(bytes(m), dtype=np.uint8)
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, (f"device 0x{base:x} ({len(m)} bytes) differs from the model "
                                   f"at {bad[:8].tolist()}: {got[bad[:8]]} != {want[bad[:8]]}")
        for base, m in self.host.items():
            if base == self.host_pinned:
                got = np.frombuffer(acl.util.ptr_to_bytes(base, HOST_SIZE), dtype=np.uint8)
            else:
                got = next(a for a in self.host_arrays if acl.util.numpy_to_ptr(a) == base)
            bad = np.flatnonzero(got != np.frombuffer(bytes(m), dtype=np.uint8))
            assert bad.size == 0, f"host buffer 0x{base:x} differs from the model at {bad[:8]}"

    # ---- rules: streams and events

    @precondition(lambda self: len(self.streams) < 3)
    @rule()
    def create_stream(self):
        s, _ = self.call("aclrtCreateStream", acl.rt.create_stream(), 0)
        assert s and s not in self.streams
        self.streams.append(s)  # the address may be a destroyed stream's: draw_stream knows

    @rule(data=st.data())
    def destroy_stream(self, data):
        null = data.draw(st.sampled_from([None, 0]), label="null stream")
        s = self.draw_stream(data)
        s = null if s is None else s
        want = 100000 if not s else 0 if s in self.streams else 107017
        self.call("aclrtDestroyStream", acl.rt.destroy_stream(s), want)
        if want == 0:
            self.streams.remove(s)
            self.dead_streams.append(s)
            self.pending = [("dead" if p[0] == s else p[0], p[1], p[2]) for p in self.pending]
            for ev in self.events.values():
                if ev.get("stream") == s:
                    ev["synced"] = ev["recorded"]

    @rule(data=st.data())
    def synchronize_stream(self, data):
        s = self.draw_stream(data)
        want = 107017 if self.live_stream_key(s) == "dead" else 0
        self.call("aclrtSynchronizeStream", acl.rt.synchronize_stream(s), want)
        if want == 0:
            for ev in self.events.values():
                if ev["recorded"] and ev.get("stream") == s:
                    ev["synced"] = True

    @rule()
    def synchronize_device(self):
        self.call("aclrtSynchronizeDevice", acl.rt.synchronize_device(), 0)

    @precondition(lambda self: len(self.events) < 4)
    @rule()
    def create_event(self):
        ev, _ = self.call("aclrtCreateEvent", acl.rt.create_event(), 0)
        assert ev and ev not in self.events
        self.events[ev] = {"recorded": False, "synced": False}

    def event_code(self, ev):
        return 100000 if not ev else 0 if ev in self.events else 107017

    @rule(data=st.data())
    def destroy_event(self, data):
        ev = self.draw_event(data)
        want = self.event_code(ev)
        self.call("aclrtDestroyEvent", acl.rt.destroy_event(ev), want)
        if want == 0:
            del self.events[ev]
            self.dead_events.append(ev)

    @rule(data=st.data(), wait=st.booleans())
    def record_or_wait(self, data, wait):
        ev, s = self.draw_event(data), self.draw_stream(data)
        want = self.event_code(ev)
        if want == 0 and self.live_stream_key(s) == "dead":
            want = 107017
        if wait:
            self.call("aclrtStreamWaitEvent", acl.rt.stream_wait_event(s, ev), want)
        else:
            self.call("aclrtRecordEvent", acl.rt.record_event(ev, s), want)
            if want == 0:
                self.events[ev].update(recorded=True, synced=False, stream=s)

    @rule(data=st.data())
    def query_or_synchronize_event(self, data):
        ev = self.draw_event(data)
        want = self.event_code(ev)
        status, _ = self.call("aclrtQueryEventStatus", acl.rt.query_event_status(ev), want)
        if want == 0 and not self.events[ev]["recorded"]:
            assert status == 0, "an event never recorded reads as complete"
        self.call("aclrtSynchronizeEvent", acl.rt.synchronize_event(ev), want)
        if want == 0 and self.events[ev]["recorded"]:
            self.events[ev]["synced"] = True
            status, _ = self.call("aclrtQueryEventStatus", acl.rt.query_event_status(ev), 0)
            assert status == 1, "synchronize_event returned before the record completed"

    @rule(data=st.data())
    def elapsed_time(self, data):
        a, b = self.draw_event(data), self.draw_event(data)
        want = self.event_code(a) or self.event_code(b)
        if want == 0:
            ea, eb = self.events[a], self.events[b]
            if not (ea["recorded"] and eb["recorded"]):
                want = 107006
            elif ea["synced"] and eb["synced"]:
                want = 0
            else:
                want = {0, 507006}
        ms, _ = self.call("aclrtEventElapsedTime", acl.rt.event_elapsed_time(a, b), want)
        assert isinstance(ms, float) and math.isfinite(ms)

    def teardown(self):
        try:
            self.check_memory()
        finally:
            for ev in list(self.events):
                acl.rt.destroy_event(ev)
            for s in self.streams:
                acl.rt.destroy_stream(s)
            for base in list(self.dev):
                acl.rt.free(base)
            acl.rt.free_host(self.host_pinned)
            acl.rt.reset_device(0)
            take_msg()


def test_runtime_state_machine():
    run_state_machine_as_test(
        RuntimeMachine, settings=fuzz_settings(100, stateful_step_count=50))


def _freed_script(call: str, size: int) -> str:
    return textwrap.dedent(f"""
        import numpy as np
        from aclnn_py import acl
        acl.rt.set_device(0)
        n = {size}
        d, _ = acl.rt.malloc(n, 0)
        p, _ = acl.rt.malloc(n, 0)
        h = np.zeros(n, dtype=np.uint8)
        hp = acl.util.numpy_to_ptr(h)
        assert acl.rt.free(p) == 0
        ret = {call}
        print("RET", ret, flush=True)
        for _ in range(200):  # give a corrupted heap the chance to show itself
            q, _ = acl.rt.malloc(n, 0)
            acl.rt.free(q)
        acl.rt.free(d)
        acl.rt.reset_device(0)
    """)


@pytest.mark.parametrize("call,size", [
    ("acl.rt.memset(p, n, 0x41, n)", 1 << 20),
    ("acl.rt.memset(p, n, 0x41, n)", 256),
    ("acl.rt.memcpy(p, n, d, n, acl.ACL_MEMCPY_DEVICE_TO_HOST)", 1 << 20),
    ("acl.rt.memcpy(d, n, p, n, acl.ACL_MEMCPY_HOST_TO_DEVICE)", 1 << 20),
    ("acl.rt.memcpy(p, n, hp, n, acl.ACL_MEMCPY_DEFAULT)", 1 << 20),
], ids=["memset-1MiB", "memset-256B", "d2h-dst-1MiB", "h2d-src-1MiB", "default-dst-1MiB"])
def test_freed_device_pointer_is_not_host_memory(call, size, tmp_path):
    """A device pointer freed by acl.rt.free, passed where the call decides or assumes host
    memory, must get a code (the emulator's promise where CANN is undefined), not make the
    emulator read or write freed memory. Runs in a subprocess: the bug this found segfaults."""
    # cwd outside the source tree: `python -c` puts the cwd first on sys.path, and the source
    # tree holds no compiled core when the package is installed non-editable (as in CI)
    proc = subprocess.run([sys.executable, "-c", _freed_script(call, size)],
                          capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert proc.returncode == 0, (
        f"{call} on a freed {size}-byte device allocation killed the process "
        f"(exit {proc.returncode}): {proc.stdout[-300:]} {proc.stderr[-300:]}")
    ret = int(proc.stdout.split("RET")[1].split()[0])
    assert ret != 0 and ret in RUNTIME_CODES, (
        f"{call} on a freed device allocation returned {ret}: it read or wrote freed memory")


# ------------------------------------------------ 4. strided views vs NumPy as_strided ----


def ref_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    a = x.astype(np.float64)
    if a.ndim == 0:
        return np.ones_like(a)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@st.composite
def strided_views(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    strides = [draw(st.integers(-5, 5)) for _ in shape]
    # element 0 of the view sits at storage index `first`; the view spans [first+lo, first+hi]
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    pad_lo, pad_hi = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    first = pad_lo - lo
    n = first + hi + pad_hi + 1
    # the tensor's data pointer is storage element `base`; offset = first - base may be < 0
    base = draw(st.integers(0, n - 1))
    scale = draw(st.sampled_from([1.0, 5.0, 30.0]))
    dim = draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    return shape, strides, first, base, n, scale, dim, seed


@fuzz_settings(300)
@given(view=strided_views())
def test_strided_softmax_matches_numpy_as_strided(fuzz_stream, view):
    shape, strides, first, base, n, scale, dim, seed = view
    storage = np.random.default_rng(seed).uniform(-scale, scale, n).astype(np.float32)
    arena = Arena()
    try:
        p = arena.malloc(storage.nbytes)
        assert acl.rt.memcpy(p, storage.nbytes, acl.util.numpy_to_ptr(storage), storage.nbytes,
                             H2D) == 0
        x = aclnn.aclCreateTensor(shape, F32, strides, first - base, ND, [n], p + 4 * base)
        q = arena.malloc(4 * max(math.prod(shape), 1))
        y = aclnn.aclCreateTensor(shape, F32, None, 0, ND, shape, q)
        arena.tensors += [x, y]
        ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(x, dim, y)
        assert ret == 0, take_msg()
        wsp = arena.malloc(ws) if ws else None
        assert aclnn.aclnnSoftmax(wsp, ws, ex, fuzz_stream) == 0, take_msg()
        assert acl.rt.synchronize_stream(fuzz_stream) == 0, take_msg()
        got = np.empty(shape, dtype=np.float32)
        assert acl.rt.memcpy(acl.util.numpy_to_ptr(got), got.nbytes, q, got.nbytes, D2H) == 0
        view_values = np.lib.stride_tricks.as_strided(
            storage[first:], shape=shape, strides=[4 * s for s in strides])
        want = ref_softmax(view_values, dim)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        # the input storage is intact
        assert np.array_equal(arena.read(p, storage.nbytes), storage.view(np.uint8))
    finally:
        arena.release()
