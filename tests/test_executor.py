"""Executor lifetime and the second phase (CANN nnopbase), with aclnnSoftmaxBackward.

Codes: phase 2 with a null or consumed executor -> 161001; workspaceSize > 0 with a null
workspace -> 161001 (and a single-use executor is gone); a workspace smaller than phase 1 asked
for -> 161002 (the emulator's check); aclDestroyAclOpExecutor / aclSetAclOpExecutorRepeatable
with NULL -> 561103 and with a freed executor -> 561000 (bad magic); aclSet{Input,Output}TensorAddr
with an index out of range or on a non-repeatable executor -> 161002. Results are always checked
against the independent golden (tests/golden.py).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import golden
import numpy as np
import pytest
from conftest import H2D

from aclnn_py import acl, aclnn

API2 = "aclnnSoftmaxBackward"
NULLPTR, INVALID, INNER, INNER_NULLPTR = 161001, 161002, 561000, 561103
F32 = np.dtype(np.float32)
SENTINEL = 0x7E


def named(msg: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", msg) is not None


def expect_message(api: str, code: int, *words: str) -> str:
    msg = acl.get_recent_err_msg()
    assert msg, f"{api} returned {code} without a message"
    assert api in msg and str(code) in msg, msg
    for w in words:
        assert named(msg, w), f"message does not name {w!r}: {msg}"
    return msg


class Problem:
    """gradOutput, output and out on the device, and the golden answer for them."""

    def __init__(self, dev, shape=(3, 5), dim=-1, dtype=F32, out_dtype=F32, seed=0):
        self.dev, self.shape, self.dim = dev, shape, dim
        self.dtype, self.out_dtype = np.dtype(dtype), np.dtype(out_dtype)
        self.rng = np.random.default_rng(seed)
        self.g, self.y = self.new_data()
        self.g_ptr, self.g_t = dev.tensor(self.g)
        self.y_ptr, self.y_t = dev.tensor(self.y)
        self.out_ptr, self.out_t = self.new_out()

    def new_data(self):
        g = self.rng.uniform(-2, 2, self.shape).astype(self.dtype)
        y = self.rng.uniform(-1, 1, self.shape).astype(self.dtype)
        return g, y

    def new_out(self):
        from conftest import DTYPE_OF

        nbytes = int(np.prod(self.shape)) * self.out_dtype.itemsize
        ptr = self.dev.malloc(nbytes)
        self.dev.fill(ptr, nbytes, SENTINEL)
        shape = list(self.shape)
        t = aclnn.aclCreateTensor(shape, DTYPE_OF[self.out_dtype], None, 0,
                                  aclnn.ACL_FORMAT_ND, shape, ptr)
        return ptr, t

    @property
    def out_nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.out_dtype.itemsize

    def phase1(self):
        ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(self.g_t, self.y_t, self.dim,
                                                                 self.out_t)
        assert ret == 0, acl.get_recent_err_msg()
        return ws, ex

    def upload(self, ptr, array):
        assert acl.rt.memcpy(ptr, array.nbytes, acl.util.numpy_to_ptr(array), array.nbytes,
                             H2D) == 0

    def result(self, ptr=None):
        return self.dev.download(self.out_ptr if ptr is None else ptr, self.shape,
                                 self.out_dtype)

    def untouched(self, ptr=None) -> bool:
        raw = self.dev.download(self.out_ptr if ptr is None else ptr, (self.out_nbytes,),
                                np.uint8)
        return bool((raw == SENTINEL).all())

    def check(self, got, g=None, y=None):
        g = self.g if g is None else g
        y = self.y if y is None else y
        golden.assert_close(got, golden.softmax_backward(g, y, self.dim),
                            golden.basis(self.dtype, self.out_dtype), backward=True)


def _ws(dev, size):
    return dev.malloc(size) if size else 0


# ---------------------------------------------------------------------- single use ----


def test_single_use_executor_is_consumed_by_phase2(dev, stream):
    p = Problem(dev)
    ws, ex = p.phase1()
    assert ws == 0
    assert aclnn.aclnnSoftmaxBackward(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    p.check(p.result())
    assert acl.get_recent_err_msg() is None
    dev.fill(p.out_ptr, p.out_nbytes, SENTINEL)
    assert aclnn.aclnnSoftmaxBackward(0, ws, ex, stream) == NULLPTR
    expect_message(API2, NULLPTR)
    assert acl.rt.synchronize_stream(stream) == 0
    assert p.untouched(), "the rejected second run wrote into out"
    # the freed executor is not a valid handle for the meta API either (bad magic: 561000)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == INNER
    expect_message("aclSetAclOpExecutorRepeatable", INNER)
    assert aclnn.aclDestroyAclOpExecutor(ex) == INNER
    expect_message("aclDestroyAclOpExecutor", INNER)


# ---------------------------------------------------------------------- repeatable ----


def test_repeatable_executor_runs_until_destroyed(dev, stream):
    p = Problem(dev, shape=(4, 6), dim=0)
    ws, ex = p.phase1()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    for _ in range(3):
        # new input values in the same buffers each time, and a fresh sentinel in out
        p.g, p.y = p.new_data()
        p.upload(p.g_ptr, p.g)
        p.upload(p.y_ptr, p.y)
        dev.fill(p.out_ptr, p.out_nbytes, SENTINEL)
        assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == 0, \
            acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(stream) == 0
        p.check(p.result())
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    assert acl.get_recent_err_msg() is None
    assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == NULLPTR
    expect_message(API2, NULLPTR)
    assert aclnn.aclDestroyAclOpExecutor(ex) == INNER
    expect_message("aclDestroyAclOpExecutor", INNER)


def test_repeatable_executor_with_workspace(dev, stream):
    p = Problem(dev, shape=(6, 7), dim=1, out_dtype=np.float64)
    ws, ex = p.phase1()
    assert ws > 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    wsp = dev.malloc(ws)
    for _ in range(3):
        p.g, p.y = p.new_data()
        p.upload(p.g_ptr, p.g)
        p.upload(p.y_ptr, p.y)
        assert aclnn.aclnnSoftmaxBackward(wsp, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        p.check(p.result())
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


@pytest.mark.parametrize("call", ["aclDestroyAclOpExecutor", "aclSetAclOpExecutorRepeatable"])
def test_meta_api_null_executor(call):
    assert getattr(aclnn, call)(None) == INNER_NULLPTR
    expect_message(call, INNER_NULLPTR)


# ------------------------------------------------------------- rebinding addresses ----


@dataclass(frozen=True)
class Rebind:
    inputs: tuple  # input indices to move to new buffers (0 = gradOutput, 1 = output)
    output: bool  # move out (output index 0) to a new buffer

    @property
    def id(self) -> str:
        parts = [f"aclSetInputTensorAddr({i})" for i in self.inputs]
        if self.output:
            parts.append("aclSetOutputTensorAddr(0)")
        return " + ".join(parts)


REBINDS = [Rebind((0,), False), Rebind((1,), False), Rebind((), True), Rebind((0, 1), True),
           Rebind((1, 0), False)]


@pytest.mark.parametrize("case", REBINDS, ids=lambda c: c.id)
def test_rebind_addresses_of_a_repeatable_executor(case: Rebind, dev, stream):
    p = Problem(dev, shape=(5, 4), dim=1)
    ws, ex = p.phase1()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    p.check(p.result())

    g2, y2 = p.new_data()
    g, y = p.g, p.y
    old = {0: p.g_ptr, 1: p.y_ptr}
    for i in case.inputs:
        arr = g2 if i == 0 else y2
        ptr = dev.upload(arr)
        t = p.g_t if i == 0 else p.y_t
        assert aclnn.aclSetInputTensorAddr(ex, i, t, ptr) == 0, acl.get_recent_err_msg()
        if i == 0:
            g = g2
        else:
            y = y2
        # the old buffer is not read any more: poison it with NaN
        dev.fill(old[i], arr.nbytes, 0xFF)
    old_out = p.out_ptr
    dev.fill(old_out, p.out_nbytes, SENTINEL)
    new_out = old_out
    if case.output:
        new_out = dev.malloc(p.out_nbytes)
        dev.fill(new_out, p.out_nbytes, SENTINEL)
        assert aclnn.aclSetOutputTensorAddr(ex, 0, p.out_t, new_out) == 0
    for _ in range(2):
        assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == 0, \
            acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(stream) == 0
        p.check(p.result(new_out), g, y)
    if case.output:
        assert p.untouched(old_out), "the old out buffer was written after rebinding"
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_rebound_executor_does_not_need_the_old_buffers(dev, stream):
    p = Problem(dev, shape=(3, 8), dim=-1)
    ws, ex = p.phase1()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    g2, y2 = p.new_data()
    new = [dev.upload(g2), dev.upload(y2), dev.malloc(p.out_nbytes)]
    assert aclnn.aclSetInputTensorAddr(ex, 0, p.g_t, new[0]) == 0
    assert aclnn.aclSetInputTensorAddr(ex, 1, p.y_t, new[1]) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 0, p.out_t, new[2]) == 0
    for ptr in (p.g_ptr, p.y_ptr, p.out_ptr):
        assert acl.rt.free(ptr) == 0
        dev.ptrs.remove(ptr)
    assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == 0, \
        acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    p.check(p.result(new[2]), g2, y2)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


@dataclass(frozen=True)
class BadSet:
    call: str
    index: int
    repeatable: bool
    code: int

    @property
    def id(self) -> str:
        rep = "repeatable" if self.repeatable else "single-use"
        return f"{self.call}(<{rep} executor>, {self.index}, ...) -> {self.code}"


BAD_SETS = [
    BadSet("aclSetInputTensorAddr", 2, True, INVALID),
    BadSet("aclSetInputTensorAddr", 100, True, INVALID),
    BadSet("aclSetInputTensorAddr", -1, True, INVALID),  # SIZE_MAX as a size_t
    BadSet("aclSetOutputTensorAddr", 1, True, INVALID),
    BadSet("aclSetOutputTensorAddr", -1, True, INVALID),
    BadSet("aclSetInputTensorAddr", 0, False, INVALID),
    BadSet("aclSetInputTensorAddr", 1, False, INVALID),
    BadSet("aclSetOutputTensorAddr", 0, False, INVALID),
]


@pytest.mark.parametrize("case", BAD_SETS, ids=lambda c: c.id)
def test_set_tensor_addr_errors(case: BadSet, dev, stream):
    p = Problem(dev)
    ws, ex = p.phase1()
    if case.repeatable:
        assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    new = dev.malloc(p.out_nbytes)
    dev.fill(new, p.out_nbytes, 0xFF)
    ret = getattr(aclnn, case.call)(ex, case.index, p.g_t, new)
    assert ret == case.code
    expect_message(case.call, case.code)
    # the executor is unchanged: it still runs on the original buffers
    assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    p.check(p.result())
    if case.repeatable:
        assert aclnn.aclDestroyAclOpExecutor(ex) == 0


@pytest.mark.parametrize("call", ["aclSetInputTensorAddr", "aclSetOutputTensorAddr"])
def test_set_tensor_addr_null_handles(call, dev, stream):
    p = Problem(dev)
    ws, ex = p.phase1()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    ptr = dev.malloc(p.out_nbytes)
    assert getattr(aclnn, call)(None, 0, p.out_t, ptr) == INNER_NULLPTR
    expect_message(call, INNER_NULLPTR)
    assert getattr(aclnn, call)(ex, 0, None, ptr) == INNER_NULLPTR
    expect_message(call, INNER_NULLPTR)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


# ---------------------------------------------------------------- phase-2 arguments ----


def test_phase2_null_executor(stream):
    assert aclnn.aclnnSoftmaxBackward(0, 0, None, stream) == NULLPTR
    expect_message(API2, NULLPTR, "executor")


def test_phase2_null_workspace_with_nonzero_size(dev, stream):
    p = Problem(dev, out_dtype=np.float64)  # FLOAT kernel output + Cast: workspace > 0
    ws, ex = p.phase1()
    assert ws > 0
    assert aclnn.aclnnSoftmaxBackward(0, ws, ex, stream) == NULLPTR
    expect_message(API2, NULLPTR, "workspace")
    # CANN deletes a single-use executor on this error: it cannot be run afterwards
    assert aclnn.aclnnSoftmaxBackward(dev.malloc(ws), ws, ex, stream) == NULLPTR
    expect_message(API2, NULLPTR)
    assert acl.rt.synchronize_stream(stream) == 0
    assert p.untouched()


def test_phase2_workspace_size_smaller_than_asked(dev, stream):
    p = Problem(dev, out_dtype=np.float64)
    ws, ex = p.phase1()
    assert ws > 0
    assert aclnn.aclnnSoftmaxBackward(dev.malloc(ws - 1), ws - 1, ex, stream) == INVALID
    expect_message(API2, INVALID, str(ws))
    assert acl.rt.synchronize_stream(stream) == 0
    assert p.untouched()


def test_phase2_workspace_buffer_smaller_than_its_size(dev, stream):
    p = Problem(dev, shape=(16, 16), out_dtype=np.float64)
    ws, ex = p.phase1()
    assert ws > 64
    assert aclnn.aclnnSoftmaxBackward(dev.malloc(ws // 2), ws, ex, stream) == INVALID
    expect_message(API2, INVALID, "workspace")
    assert acl.rt.synchronize_stream(stream) == 0
    assert p.untouched()


@pytest.mark.parametrize("extra", [1, 4096])
def test_phase2_larger_workspace_is_fine(extra, dev, stream):
    p = Problem(dev, out_dtype=np.float64)
    ws, ex = p.phase1()
    assert aclnn.aclnnSoftmaxBackward(dev.malloc(ws + extra), ws + extra, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    p.check(p.result())


@pytest.mark.parametrize("null_stream", [None, 0], ids=["stream=None", "stream=0"])
def test_phase2_null_stream_is_the_default_stream(null_stream, dev, stream):
    """stream None/0 = the current context's default stream: synchronizing that stream is
    enough to see the result. (The explicit stream is kept busy, so a phase 2 that wrongly
    used it would not be finished when the default stream is synchronized.)"""
    from aclnn_py.runtime.core import ffi, lib

    task = ffi.new("emu_task[1]")
    task[0].type = lib.EMU_TASK_SLEEP
    task[0].n = 100000  # µs
    lib.emu_stream_submit(stream, task, 1, 0, ffi.NULL, 0)
    p = Problem(dev, shape=(64, 33), dim=0)
    ws, ex = p.phase1()
    assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, null_stream) == 0, \
        acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(null_stream) == 0
    p.check(p.result())


# ---------------------------------------------------------------------------- asynchrony ----


def test_phase2_only_enqueues(dev, stream):
    n = 4096
    rng = np.random.default_rng(11)
    g = rng.random((n, n), dtype=np.float32) - 0.5
    y = rng.random((n, n), dtype=np.float32)
    _, g_t = dev.tensor(g)
    _, y_t = dev.tensor(y)
    out_ptr = dev.malloc(g.nbytes)
    out_t = aclnn.aclCreateTensor([n, n], aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, [n, n],
                                  out_ptr)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g_t, y_t, -1, out_t)
    assert ret == 0
    wsp = _ws(dev, ws)
    # With 2 cores the kernel's threads can preempt the caller right after the enqueue, so a
    # single timing is noisy: a repeatable executor gets up to 5 tries, one of which must show
    # phase 2 returning long before the work is done. A synchronous phase 2 fails every try.
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    timings = []
    for _ in range(5):
        dev.fill(out_ptr, g.nbytes, 0xFF)
        t0 = time.perf_counter()
        assert aclnn.aclnnSoftmaxBackward(wsp, ws, ex, stream) == 0
        t1 = time.perf_counter()
        assert acl.rt.synchronize_stream(stream) == 0
        t2 = time.perf_counter()
        timings.append((t1 - t0, t2 - t1))
        if t1 - t0 < 0.25 * (t2 - t1):
            break
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    phase2, sync = timings[-1]
    assert phase2 < 0.25 * sync, "phase 2 vs synchronize (ms): " + ", ".join(
        f"{a * 1e3:.2f}/{b * 1e3:.2f}" for a, b in timings)
    got = dev.download(out_ptr, (n, n), np.float32)
    rows = np.r_[0, 1, rng.integers(0, n, 30), n - 1]
    golden.assert_close(got[rows], golden.softmax_backward(g[rows], y[rows], -1), F32,
                        backward=True)


@pytest.mark.parametrize("victim", ["gradOutput", "output", "out"])
def test_fault_at_run_time_is_reported_by_synchronize(victim, dev, stream):
    """Memory freed after phase 2 but before the stream reaches the kernel: phase 2 returns 0,
    the fault surfaces at synchronize as 507015 naming the operator and the tensor."""
    from aclnn_py.runtime.core import ffi, lib

    p = Problem(dev, shape=(8, 8))
    ws, ex = p.phase1()
    task = ffi.new("emu_task[1]")
    task[0].type = lib.EMU_TASK_SLEEP
    task[0].n = 200000  # µs: holds the stream while the buffer is freed
    lib.emu_stream_submit(stream, task, 1, 0, ffi.NULL, 0)
    assert aclnn.aclnnSoftmaxBackward(_ws(dev, ws), ws, ex, stream) == 0
    ptr = {"gradOutput": p.g_ptr, "output": p.y_ptr, "out": p.out_ptr}[victim]
    assert acl.rt.free(ptr) == 0
    dev.ptrs.remove(ptr)
    assert acl.rt.synchronize_stream(stream) == 507015
    msg = expect_message("aclrtSynchronizeStream", 507015)
    assert "aclnnSoftmaxBackward" in msg, msg
    assert named(msg, victim), f"message does not name {victim!r}: {msg}"


def test_phase2_workspace_size_larger_than_its_allocation(dev, stream):
    """The workspace allocation must hold the workspaceSize the caller passes."""
    p = Problem(dev, shape=(16, 16), out_dtype=np.float64)
    ws, ex = p.phase1()
    assert aclnn.aclnnSoftmaxBackward(dev.malloc(ws), ws + 4096, ex, stream) == INVALID
    expect_message(API2, INVALID, "workspace")
    assert p.untouched()


def test_phase2_wrong_operator_consumes_a_single_use_executor(dev, stream):
    """Phase 2 of another operator rejects the executor (161002) and, as every phase-2
    rejection of a single-use executor, consumes it."""
    p = Problem(dev)
    ws, ex = p.phase1()
    assert aclnn.aclnnLogSoftmaxBackward(0, ws, ex, stream) == INVALID
    expect_message("aclnnLogSoftmaxBackward", INVALID, "aclnnSoftmaxBackwardGetWorkspaceSize")
    assert aclnn.aclnnSoftmaxBackward(0, ws, ex, stream) == NULLPTR
    expect_message(API2, NULLPTR, "consumed")
    assert p.untouched()


def test_rebinding_an_inplace_tensor_moves_input_and_output(dev, stream):
    """aclnnInplaceHardsigmoid binds self as input 0 and output 0; re-binding the input moves
    both, so the result lands in the new buffer (golden: clip(x/6 + 1/2, 0, 1))."""
    a = np.array([-4.0, 0.0, 4.0], np.float32)
    b = np.array([3.0, -3.0, 1.5], np.float32)
    a_ptr, t = dev.tensor(a)
    b_ptr = dev.upload(b)
    ws, ex, ret = aclnn.aclnnInplaceHardsigmoidGetWorkspaceSize(t)
    assert ret == 0 and ws == 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnInplaceHardsigmoid(0, 0, ex, stream) == 0
    assert aclnn.aclSetInputTensorAddr(ex, 0, t, b_ptr) == 0
    assert aclnn.aclnnInplaceHardsigmoid(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    expect = np.clip(np.float64(b) / 6 + 0.5, 0, 1)
    np.testing.assert_allclose(dev.download(b_ptr, (3,), np.float32), expect, rtol=1e-6)
    np.testing.assert_allclose(dev.download(a_ptr, (3,), np.float32), [0.0, 0.5, 1.0],
                               rtol=1e-6)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_phase1_rejects_a_tensor_not_aligned_to_its_elements(device, dev):
    """CANN requires aligned tensor data; a float view starting 2 bytes into an allocation is
    161002 naming the tensor (the kernels must never see a misaligned element)."""
    ptr = dev.malloc(64)
    shape = [2, 3]
    x = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape,
                              ptr + 2)
    y = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape,
                              dev.malloc(64))
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(x, 1, y)
    assert (ws, ex, ret) == (0, None, INVALID)
    expect_message("aclnnSoftmaxGetWorkspaceSize", INVALID, "self", "aligned")


def test_phase2_rejects_a_misaligned_workspace(dev, stream):
    p = Problem(dev, shape=(4, 4), out_dtype=np.float64)
    ws, ex = p.phase1()
    assert ws > 0
    base = dev.malloc(ws + 64)
    assert aclnn.aclnnSoftmaxBackward(base + 4, ws, ex, stream) == INVALID
    expect_message(API2, INVALID, "workspace", "aligned")
    assert p.untouched()


# ------------------------------------------------------- phase 1 after an earlier success ----
# Phase 1 keeps the plans of earlier successful calls by descriptor (aclnn_py.ops); a call with
# the same descriptors must still find everything that depends on addresses and handle state.


def test_phase1_again_finds_a_freed_tensor(dev, stream):
    p = Problem(dev, shape=(4, 6))
    p.phase1()
    assert acl.rt.free(p.y_ptr) == 0
    dev.ptrs.remove(p.y_ptr)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(p.g_t, p.y_t, -1, p.out_t)
    assert (ws, ex, ret) == (0, None, INVALID)
    expect_message(API2 + "GetWorkspaceSize", INVALID, "output")


def test_phase1_again_finds_a_destroyed_tensor(dev, stream):
    p = Problem(dev, shape=(4, 6))
    p.phase1()
    assert aclnn.aclDestroyTensor(p.out_t) == 0
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(p.g_t, p.y_t, -1, p.out_t)
    assert (ws, ex, ret) == (0, None, INVALID)
    assert "destroyed" in expect_message(API2 + "GetWorkspaceSize", INVALID, "out")


def test_phase1_again_finds_a_partial_overlap(dev, stream):
    """The same descriptors, but out now starts one row into gradOutput's buffer."""
    p = Problem(dev, shape=(4, 6))
    p.phase1()
    big = dev.malloc(2 * p.g.nbytes)
    shape = list(p.shape)
    g2 = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, big)
    o2 = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape,
                               big + 6 * 4)
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g2, p.y_t, -1, o2)
    assert (ws, ex, ret) == (0, None, INVALID)
    assert "overlap" in expect_message(API2 + "GetWorkspaceSize", INVALID, "gradOutput", "out")


def test_phase1_again_runs_at_the_new_addresses(dev, stream):
    """Two problems with the same descriptors share a plan; each executor writes its own out,
    with its own data, and the results match the golden."""
    a, b = Problem(dev, shape=(5, 7), seed=1), Problem(dev, shape=(5, 7), seed=2)
    for p in (a, b):
        ws, ex = p.phase1()
        assert ws == 0
        assert aclnn.aclnnSoftmaxBackward(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    a.check(a.result())
    b.check(b.result())


def test_phase1_again_with_a_workspace_plan(dev, stream):
    """A strided out (ViewCopy through the workspace): the second call at other addresses asks
    for the same workspace and computes the right result."""
    for seed in (3, 4):
        p = Problem(dev, shape=(3, 8), seed=seed)
        storage = np.full((3, 16), 0, np.float32)
        optr, out_t = dev.view(storage, (3, 8), (16, 2))
        ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(p.g_t, p.y_t, -1, out_t)
        assert ret == 0 and ws > 0, acl.get_recent_err_msg()
        wsp = _ws(dev, ws)
        assert aclnn.aclnnSoftmaxBackward(wsp, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        got = dev.download(optr, (3, 16), np.float32)[:, ::2]
        p.check(got)


def test_free_epoch_moves_at_every_free(dev, stream):
    """Phase 1 reuses the address checks of an earlier call only while no free happened since
    (aclnn_py.runtime.free_epoch): every free must move it, a malloc need not."""
    from aclnn_py import runtime as rt

    before = rt.free_epoch()
    ptr = dev.malloc(256)
    assert rt.free_epoch() == before
    assert acl.rt.free(ptr) == 0
    dev.ptrs.remove(ptr)
    assert rt.free_epoch() == before + 1


def test_phase1_again_after_a_free_elsewhere_still_passes(dev, stream):
    """A free of an unrelated buffer moves the epoch: phase 1 checks the addresses again and
    still succeeds, and the launch computes the right result."""
    p = Problem(dev, shape=(2, 9), seed=5)
    p.phase1()
    other = dev.malloc(64)
    assert acl.rt.free(other) == 0
    dev.ptrs.remove(other)
    ws, ex = p.phase1()
    assert aclnn.aclnnSoftmaxBackward(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    p.check(p.result())
