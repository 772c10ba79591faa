"""The diagnostics (docs/diagnostics.md): the race, init and leak checkers of ACLNN_EMU_CHECK, the
Chrome / Perfetto trace of ACLNN_EMU_TRACE, and the API log of ASCEND_GLOBAL_LOG_LEVEL.

The expected reports follow from the program order alone (which call comes first, which event
orders what), never from how the streams happened to run; the codes are CANN's task-fault codes
(507015 ACL_ERROR_RT_AICORE_EXCEPTION for an operator's task, 507013 ACL_ERROR_RT_SYS_DMA for a
copy) as the docs assign them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py import acl, aclnn, diagnostics
from aclnn_py import runtime as rt

H2D = acl.ACL_MEMCPY_HOST_TO_DEVICE
D2H = acl.ACL_MEMCPY_DEVICE_TO_HOST
D2D = acl.ACL_MEMCPY_DEVICE_TO_DEVICE
AICORE = 507015  # ACL_ERROR_RT_AICORE_EXCEPTION
DMA = 507013  # ACL_ERROR_RT_SYS_DMA
ENV = ("ACLNN_EMU_CHECK", "ACLNN_EMU_TRACE", "ACLNN_EMU_TRACE_EVENTS",
       "ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_SLOG_PRINT_TO_STDOUT", "ACL_LAUNCH_BLOCKING",
       "ASCEND_LAUNCH_BLOCKING")
THIS = os.path.abspath(__file__)


def line() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


@pytest.fixture
def diag(monkeypatch):
    """enable(**env): set diagnostics variables and apply them (as acl.init does); everything
    is switched off again at teardown, so the wrappers are gone for the next test."""
    for key in ENV:
        monkeypatch.delenv(key, raising=False)

    def enable(**env):
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        diagnostics.refresh()

    yield enable
    for key in ENV:
        monkeypatch.delenv(key, raising=False)
    diagnostics.refresh()
    assert not diagnostics.wrap.installed()


@pytest.fixture
def two_streams():
    assert acl.rt.set_device(0) == 0
    s1, r1 = acl.rt.create_stream()
    s2, r2 = acl.rt.create_stream()
    assert r1 == r2 == 0
    yield s1, s2
    for s in (s1, s2):
        acl.rt.destroy_stream(s)
    acl.rt.reset_device(0)
    acl.get_recent_err_msg()


def buffer(data: np.ndarray | None = None, nbytes: int = 0) -> int:
    """A device allocation, filled from ``data`` when given (synchronous copy)."""
    n = data.nbytes if data is not None else nbytes
    ptr, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    if data is not None:
        assert acl.rt.memcpy(ptr, n, acl.util.numpy_to_ptr(data), n, H2D) == 0
    return ptr


def tensor(ptr: int, shape) -> aclnn.aclTensor:
    return aclnn.aclCreateTensor(list(shape), aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND,
                                 list(shape), ptr)


def softmax(x_ptr: int, y_ptr: int, shape, stream) -> None:
    """aclnnSoftmax of the float32 tensor at x_ptr into y_ptr, enqueued on ``stream``."""
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(tensor(x_ptr, shape), 1, tensor(y_ptr, shape))
    assert ret == 0 and ws == 0
    assert aclnn.aclnnSoftmax(0, 0, ex, stream) == 0


def finish_unseen(stream) -> None:
    """Wait for ``stream`` with the runtime's own function, which the diagnostics do not see:
    the run is ordered (no real data race between the emulator's threads, which
    ThreadSanitizer would report), the program still is not."""
    assert rt.synchronize_stream(stream) == 0


def report(text: str, kind: str) -> list[str]:
    return [m for m in text.splitlines() if f"ACLNN_EMU_CHECK: {kind}:" in m]


X = np.arange(8, dtype=np.float32).reshape(2, 4)


# ------------------------------------------------------------------------------------ race ----


def test_two_streams_without_an_event_race(diag, two_streams):
    """A kernel on s1 writes y; a copy on s2 reads y with nothing ordering them: the next
    synchronize returns 507013 (the later access is a copy) and names both operations, both
    streams and the bytes."""
    diag(ACLNN_EMU_CHECK="race")
    s1, s2 = two_streams
    x, y, z = buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    finish_unseen(s1)
    at_copy = line() + 1
    assert acl.rt.memcpy_async(z, X.nbytes, y, X.nbytes, D2D, s2) == 0
    assert acl.rt.synchronize_stream(s1) == DMA  # the first synchronize reports it
    msg = acl.get_recent_err_msg()
    (race,) = report(msg, "race")
    assert "aclrtMemcpyAsync reads 'src'" in race and f"stream 0x{s2:x}" in race
    assert "aclnnSoftmax step SoftmaxV2 writes 'out'" in race and f"stream 0x{s1:x}" in race
    # where each was called: the first frame outside aclnn_py (here, the helper's launch)
    assert f"{THIS}:{at_copy} in test_two_streams" in race
    assert re.search(rf"{re.escape(THIS)}:\d+ in softmax\)", race)
    assert f"bytes [0x{y:x}, 0x{y + X.nbytes:x}) (offsets 0..{X.nbytes} of the {X.nbytes}-byte " \
           f"device allocation 0x{y:x}" in race
    assert acl.rt.synchronize_stream(s2) == 0  # reported once
    assert acl.get_recent_err_msg() is None
    for p in (x, y, z):
        assert acl.rt.free(p) == 0


def test_a_kernel_reading_a_copy_of_another_stream_gets_the_operator_code(diag, two_streams):
    diag(ACLNN_EMU_CHECK="race")
    s1, s2 = two_streams
    x, staging, y = buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    assert acl.rt.memcpy_async(staging, X.nbytes, x, X.nbytes, D2D, s1) == 0
    finish_unseen(s1)
    softmax(staging, y, X.shape, s2)
    assert acl.rt.synchronize_device() == AICORE
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert "aclnnSoftmax step SoftmaxV2 reads 'self'" in race
    assert "aclrtMemcpyAsync writes 'dst'" in race
    assert f"[0x{staging:x}, 0x{staging + X.nbytes:x})" in race


def test_an_event_wait_orders_the_streams(diag, two_streams):
    diag(ACLNN_EMU_CHECK="race,init")
    s1, s2 = two_streams
    ev, ret = acl.rt.create_event()
    assert ret == 0
    x, y, z = buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    assert acl.rt.memcpy_async(z, X.nbytes, y, X.nbytes, D2D, s2) == 0
    # and s1 may overwrite x only after s2 is done with z's source... x is read by s1 only:
    # host reads z after synchronizing s2, which waited for s1
    assert acl.rt.synchronize_stream(s2) == 0
    out = np.empty_like(X)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), X.nbytes, z, X.nbytes, D2H) == 0
    assert acl.rt.synchronize_device() == 0
    assert acl.get_recent_err_msg() is None
    e = np.exp(X - X.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-6)
    assert acl.rt.destroy_event(ev) == 0


def test_a_record_on_the_wrong_stream_does_not_order(diag, two_streams):
    """The event is recorded on s2 (before its copy), not after s1's kernel: still a race."""
    diag(ACLNN_EMU_CHECK="race")
    s1, s2 = two_streams
    ev, _ = acl.rt.create_event()
    x, y, z = buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    finish_unseen(s1)
    assert acl.rt.record_event(ev, s2) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    assert acl.rt.memcpy_async(z, X.nbytes, y, X.nbytes, D2D, s2) == 0
    assert acl.rt.synchronize_event(ev) == DMA
    assert report(acl.get_recent_err_msg(), "race")
    acl.rt.destroy_event(ev)


# ------------------------------------------------------------- race: custom operators ----

ADD_R = {"op": "AddCustomR", "input_desc": [
    {"name": "x", "param_type": "required", "type": ["float"]},
    {"name": "y", "param_type": "required", "type": ["float"]}],
    "output_desc": [{"name": "z", "param_type": "required", "type": ["float"]}]}


@pytest.fixture(params=["load_first", "check_first"])
def custom_add(request, diag):
    """enable(**env) as diag, with the custom operator AddCustomR (a NumPy x + y kernel)
    loaded before the checkers start (their wrappers find it) or after (custom.load hands it to
    them); unloaded at teardown, before the checkers stop."""
    from aclnn_py import custom

    def load():
        custom.load([ADD_R], {"AddCustomR": lambda x, y, z: np.add(x, y, out=z)})

    def enable(**env):
        if request.param == "check_first":
            diag(**env)
            load()
        else:
            load()
            diag(**env)

    yield enable
    custom.unload("AddCustomR")
    assert not hasattr(aclnn, "aclnnAddCustomR")


def add_custom(x_ptr: int, y_ptr: int, z_ptr: int, shape, stream) -> None:
    t = [tensor(p, shape) for p in (x_ptr, y_ptr, z_ptr)]
    ws, ex, ret = aclnn.aclnnAddCustomRGetWorkspaceSize(*t)
    assert ret == 0 and ws == 0
    assert aclnn.aclnnAddCustomR(0, 0, ex, stream) == 0


def test_a_custom_kernel_writing_what_another_stream_reads_races(custom_add, two_streams):
    """A custom operator's kernel is a task that writes its output: a softmax on another stream
    reading that output with no event between is a race, reported at the next synchronize with
    the operator code 507015 (the later access is an operator's task), naming the kernel's
    operator, its output and both streams (before: custom kernels' accesses were invisible)."""
    custom_add(ACLNN_EMU_CHECK="race")
    s1, s2 = two_streams
    x, y, z, out = buffer(X), buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    add_custom(x, y, z, X.shape, s1)
    finish_unseen(s1)
    softmax(z, out, X.shape, s2)
    assert acl.rt.synchronize_stream(s2) == AICORE
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert "aclnnSoftmax step SoftmaxV2 reads 'self'" in race and f"stream 0x{s2:x}" in race
    assert "aclnnAddCustomR step AddCustomR writes 'out'" in race and f"stream 0x{s1:x}" in race
    assert f"bytes [0x{z:x}, 0x{z + X.nbytes:x})" in race
    # and a copy reading it on s2 gets the copy code
    assert acl.rt.memcpy_async(out, X.nbytes, z, X.nbytes, D2D, s2) == 0
    assert acl.rt.synchronize_stream(s2) == DMA
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert "aclrtMemcpyAsync reads 'src'" in race and "AddCustomR writes 'out'" in race
    for p in (x, y, z, out):
        assert acl.rt.free(p) == 0


def test_an_event_orders_a_custom_kernel_before_another_stream(custom_add, two_streams):
    """The same with aclrtRecordEvent after the kernel and aclrtStreamWaitEvent before the
    read: no report, and the data is the float64 golden's."""
    custom_add(ACLNN_EMU_CHECK="race,init")
    s1, s2 = two_streams
    ev, ret = acl.rt.create_event()
    assert ret == 0
    x, y, z, out = buffer(X), buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    add_custom(x, y, z, X.shape, s1)
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    softmax(z, out, X.shape, s2)
    assert acl.rt.synchronize_stream(s2) == 0
    assert acl.rt.synchronize_device() == 0
    assert acl.get_recent_err_msg() is None
    host = np.empty_like(X)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), X.nbytes, out, X.nbytes, D2H) == 0
    e = np.exp(2.0 * X.astype(np.float64))
    np.testing.assert_allclose(host, e / e.sum(1, keepdims=True), rtol=1e-6)
    assert acl.rt.destroy_event(ev) == 0
    for p in (x, y, z, out):
        assert acl.rt.free(p) == 0


def test_a_custom_kernel_reading_what_another_stream_writes_races(custom_add, two_streams):
    """A copy on s1 writes x, the kernel on s2 reads it with nothing between: reported with
    507015 (the later access is the kernel), naming its input; and the init checker sees the
    kernel read bytes nothing wrote."""
    custom_add(ACLNN_EMU_CHECK="race,init")
    s1, s2 = two_streams
    src, x, y, z = buffer(X), buffer(nbytes=X.nbytes), buffer(X), buffer(nbytes=X.nbytes)
    assert acl.rt.memcpy_async(x, X.nbytes, src, X.nbytes, D2D, s1) == 0
    finish_unseen(s1)
    add_custom(x, y, z, X.shape, s2)
    assert acl.rt.synchronize_stream(s2) == AICORE
    msg = acl.get_recent_err_msg()
    (race,) = report(msg, "race")
    assert "aclnnAddCustomR step AddCustomR reads 'x'" in race and f"stream 0x{s2:x}" in race
    assert "aclrtMemcpyAsync writes 'dst'" in race and f"stream 0x{s1:x}" in race
    assert acl.rt.synchronize_device() == 0
    fresh = buffer(nbytes=X.nbytes)
    add_custom(fresh, y, z, X.shape, s2)
    assert acl.rt.synchronize_stream(s2) == AICORE
    (init,) = report(acl.get_recent_err_msg(), "init")
    assert "aclnnAddCustomR step AddCustomR reads 'x'" in init
    for p in (src, x, y, z, fresh):
        assert acl.rt.free(p) == 0


def test_a_host_copy_of_bytes_a_queued_task_writes_races(diag, two_streams):
    """aclrtMemcpy D2H of y right after the launch, without a synchronize."""
    diag(ACLNN_EMU_CHECK="race")
    s1, _ = two_streams
    x, y = buffer(X), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    finish_unseen(s1)
    out = np.empty_like(X)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), X.nbytes, y, X.nbytes, D2H) == 0
    at_copy = line() - 1
    assert acl.rt.synchronize_stream(s1) == DMA
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert "aclrtMemcpy reads 'src' on the host" in race and f"{THIS}:{at_copy}" in race
    assert "aclnnSoftmax step SoftmaxV2 writes 'out'" in race
    # synchronized first: ordered
    softmax(x, y, X.shape, s1)
    assert acl.rt.synchronize_stream(s1) == 0
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), X.nbytes, y, X.nbytes, D2H) == 0
    assert acl.rt.synchronize_stream(s1) == 0


@pytest.mark.parametrize("wait", ["stream_query", "query_event", "event_with_timeout",
                                  "device_with_timeout"])
def test_queries_and_timed_waits_that_complete_order_the_host(diag, two_streams, wait):
    """aclrtStreamQuery / aclrtQueryEvent answering COMPLETE, and the *WithTimeout synchronizes
    that do not time out, order the host after the tasks, as a synchronize does."""
    diag(ACLNN_EMU_CHECK="race")
    s1, _ = two_streams
    ev, _ = acl.rt.create_event()
    x, y = buffer(X), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    assert acl.rt.record_event(ev, s1) == 0
    if wait == "stream_query":
        while acl.rt.stream_query(s1) != (0, 0):  # ACL_STREAM_STATUS_COMPLETE
            pass
    elif wait == "query_event":
        while acl.rt.query_event(ev) != (0, 0):  # ACL_EVENT_STATUS_COMPLETE
            pass
    elif wait == "event_with_timeout":
        assert acl.rt.synchronize_event_with_timeout(ev, 60_000) == 0
    else:
        assert acl.rt.synchronize_device_with_timeout(60_000) == 0
    assert acl.rt.memset(y, X.nbytes, 0, X.nbytes) == 0  # the host overwrites y: ordered
    assert acl.rt.synchronize_device() == 0
    assert acl.get_recent_err_msg() is None
    acl.rt.destroy_event(ev)


def test_query_event_status_complete_orders_the_host(diag, two_streams):
    diag(ACLNN_EMU_CHECK="race")
    s1, _ = two_streams
    ev, _ = acl.rt.create_event()
    x, y = buffer(X), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    assert acl.rt.record_event(ev, s1) == 0
    while acl.rt.query_event_status(ev) != (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0):
        pass
    assert acl.rt.memset(y, X.nbytes, 0, X.nbytes) == 0  # the host overwrites y: ordered
    assert acl.rt.synchronize_device() == 0
    acl.rt.destroy_event(ev)


def test_freeing_memory_a_queued_task_uses_races(diag, two_streams, sleep_on):
    diag(ACLNN_EMU_CHECK="race")
    s1, _ = two_streams
    x, y = buffer(X), buffer(nbytes=X.nbytes)
    sleep_on(s1, 20000)  # the kernel is still queued when y is freed (it faults: 507015)
    softmax(x, y, X.shape, s1)
    assert acl.rt.free(y) == 0
    assert acl.rt.synchronize_stream(s1) == AICORE
    msgs = acl.get_recent_err_msg()
    (race,) = report(msgs, "race")
    assert "aclrtFree frees 'devPtr' on the host" in race and "writes 'out'" in race


def test_launch_blocking_orders_like_a_synchronize(diag, two_streams):
    diag(ACLNN_EMU_CHECK="race", ACL_LAUNCH_BLOCKING="1")
    s1, _ = two_streams
    x, y = buffer(X), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    out = np.empty_like(X)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), X.nbytes, y, X.nbytes, D2H) == 0
    assert acl.rt.synchronize_stream(s1) == 0


def _softmax_into_view(x_ptr: int, x_shape, out_ptr: int, strides, offset: int, storage,
                       stream) -> int:
    """aclnnSoftmax (dim 1) of the float32 tensor at x_ptr into a strided view of out_ptr,
    enqueued on ``stream`` with a workspace of its own; returns the workspace."""
    xt = tensor(x_ptr, x_shape)
    ot = aclnn.aclCreateTensor(list(x_shape), aclnn.ACL_FLOAT, list(strides), offset,
                               aclnn.ACL_FORMAT_ND, list(storage), out_ptr)
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, ot)
    assert ret == 0 and ws > 0  # the kernel writes the workspace, a ViewCopy step the view
    w = buffer(nbytes=ws)
    assert aclnn.aclnnSoftmax(w, ws, ex, stream) == 0
    return w


def _softmax64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_disjoint_interleaved_strided_writes_do_not_race(diag):
    """Issue 22, 1: two streams write the even and the odd columns of one allocation (views of
    stride 2 whose spans overlap, whose elements do not); a third stream waits for both through
    events and copies the whole: no race, every synchronize returns 0, and the result is the
    two softmaxes interleaved."""
    diag(ACLNN_EMU_CHECK="race,init")
    assert acl.rt.set_device(0) == 0
    (sa, _), (sb, _), (sc, _) = (acl.rt.create_stream() for _ in range(3))
    (ea, _), (eb, _) = acl.rt.create_event(), acl.rt.create_event()
    rows, cols = 6, 16
    xa = np.linspace(-3, 3, rows * cols, dtype=np.float32).reshape(rows, cols)
    xb = np.cos(np.arange(rows * cols, dtype=np.float32)).reshape(rows, cols)
    pa, pb = buffer(xa), buffer(xb)
    out, z = buffer(nbytes=2 * xa.nbytes), buffer(nbytes=2 * xa.nbytes)
    storage = (rows, 2 * cols)
    wa = _softmax_into_view(pa, xa.shape, out, (2 * cols, 2), 0, storage, sa)  # even columns
    assert acl.rt.record_event(ea, sa) == 0
    wb = _softmax_into_view(pb, xb.shape, out, (2 * cols, 2), 1, storage, sb)  # odd columns
    assert acl.rt.record_event(eb, sb) == 0
    assert acl.rt.stream_wait_event(sc, ea) == 0 and acl.rt.stream_wait_event(sc, eb) == 0
    assert acl.rt.memcpy_async(z, 2 * xa.nbytes, out, 2 * xa.nbytes, D2D, sc) == 0
    for s in (sc, sa, sb):
        assert acl.rt.synchronize_stream(s) == 0
    assert acl.get_recent_err_msg() is None
    got = np.empty((rows, 2 * cols), np.float32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(got), got.nbytes, z, got.nbytes, D2H) == 0
    assert acl.rt.synchronize_device() == 0 and acl.get_recent_err_msg() is None
    np.testing.assert_allclose(got[:, 0::2], _softmax64(xa), rtol=1e-6)
    np.testing.assert_allclose(got[:, 1::2], _softmax64(xb), rtol=1e-6)
    for p in (pa, pb, out, z, wa, wb):
        assert acl.rt.free(p) == 0
    for ev in (ea, eb):
        assert acl.rt.destroy_event(ev) == 0
    for s in (sa, sb, sc):
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.reset_device(0) == 0


def test_overlapping_strided_writes_still_race(diag):
    """The same with views that do share elements: stream A writes the even columns 0..2c-2,
    stream B the even columns 2..2c-2 (offset 2, one column fewer), unordered: a race, 507015
    (the later access is an operator's ViewCopy), naming both ViewCopy steps. And a copy that
    waits only for A reads B's odd columns unordered: a race between a strided write and a
    contiguous read, 507013."""
    diag(ACLNN_EMU_CHECK="race")
    assert acl.rt.set_device(0) == 0
    (sa, _), (sb, _), (sc, _) = (acl.rt.create_stream() for _ in range(3))
    ea, _ = acl.rt.create_event()
    rows, cols = 4, 8
    xa = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    xb = xa[:, 1:].copy()
    pa, pb = buffer(xa), buffer(xb)
    out, z = buffer(nbytes=2 * xa.nbytes), buffer(nbytes=2 * xa.nbytes)
    storage = (rows, 2 * cols)
    wa = _softmax_into_view(pa, xa.shape, out, (2 * cols, 2), 0, storage, sa)
    wb = _softmax_into_view(pb, xb.shape, out, (2 * cols, 2), 2, storage, sb)
    assert acl.rt.synchronize_stream(sb) == AICORE
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert race.count("aclnnSoftmax step ViewCopy writes 'out'") == 2
    assert f"stream 0x{sa:x}" in race and f"stream 0x{sb:x}" in race and "strided views" in race
    assert acl.rt.synchronize_device() == 0
    # B's odd columns, A waited for, B not: the copy of the whole races with B only
    wb2 = _softmax_into_view(pa, xa.shape, out, (2 * cols, 2), 1, storage, sb)
    wa2 = _softmax_into_view(pa, xa.shape, out, (2 * cols, 2), 0, storage, sa)
    assert acl.rt.record_event(ea, sa) == 0
    assert acl.rt.stream_wait_event(sc, ea) == 0
    assert acl.rt.memcpy_async(z, 2 * xa.nbytes, out, 2 * xa.nbytes, D2D, sc) == 0
    assert acl.rt.synchronize_stream(sc) == DMA
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert "aclrtMemcpyAsync reads 'src'" in race and f"stream 0x{sb:x}" in race
    assert f"stream 0x{sa:x}" not in race
    assert acl.rt.synchronize_device() == 0
    for p in (pa, pb, out, z, wa, wb, wa2, wb2):
        assert acl.rt.free(p) == 0
    assert acl.rt.destroy_event(ea) == 0
    for s in (sa, sb, sc):
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.reset_device(0) == 0


def _hardsigmoid_into_view(x_ptr: int, shape, out_ptr: int, strides, offset: int, storage,
                           stream) -> int:
    """aclnnHardsigmoid of the float32 tensor at x_ptr into a strided view of out_ptr on
    ``stream``; returns its workspace (0 when it needs none)."""
    ot = aclnn.aclCreateTensor(list(shape), aclnn.ACL_FLOAT, list(strides), offset,
                               aclnn.ACL_FORMAT_ND, list(storage), out_ptr)
    ws, ex, ret = aclnn.aclnnHardsigmoidGetWorkspaceSize(tensor(x_ptr, shape), ot)
    assert ret == 0, acl.get_recent_err_msg()
    w = buffer(nbytes=ws) if ws else 0
    assert aclnn.aclnnHardsigmoid(w, ws, ex, stream) == 0
    return w


def test_random_strided_writes_race_exactly_when_their_elements_meet(diag):
    """Two unordered streams write random 2-D strided views (positive strides, no element
    written twice by one view) of one allocation: the synchronize reports a race (507015) when
    the two views share an element by NumPy's count, and returns 0 otherwise."""
    assert acl.rt.set_device(0) == 0
    (sa, _), (sb, _) = acl.rt.create_stream(), acl.rt.create_stream()
    rng = np.random.default_rng(2022)
    x = buffer(np.linspace(-4, 4, 64, dtype=np.float32))
    seen = {True: 0, False: 0}
    while min(seen.values()) < 12:
        views = []
        while len(views) < 2:
            shape = tuple(int(v) for v in rng.integers(1, 5, 2))
            strides = tuple(int(v) for v in rng.integers(1, 9, 2))
            offset = int(rng.integers(0, 8))
            elems = offset + (np.indices(shape).reshape(2, -1).T * strides).sum(1)
            if len(set(elems.tolist())) == elems.size:  # not self-overlapping
                views.append((shape, strides, offset, set(elems.tolist())))
        meet = bool(views[0][3] & views[1][3])
        n = 1 + max(max(v[3]) for v in views)
        diag(ACLNN_EMU_CHECK="")  # a fresh checker: each pair of places is reported once
        diag(ACLNN_EMU_CHECK="race")
        out = buffer(nbytes=4 * n)
        assert acl.rt.memset(out, 4 * n, 0, 4 * n) == 0
        ws = [_hardsigmoid_into_view(x, shape, out, strides, offset, (n,), s)
              for (shape, strides, offset, _), s in zip(views, (sa, sb))]
        code = acl.rt.synchronize_device()
        msg = acl.get_recent_err_msg()
        assert code == (AICORE if meet else 0), (views, msg)
        assert bool(report(msg or "", "race")) == meet
        seen[meet] += 1
        for p in (out, *ws):
            if p:
                assert acl.rt.free(p) == 0
    assert acl.rt.free(x) == 0
    for s in (sa, sb):
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.reset_device(0) == 0


def test_many_strided_writers_keep_the_shadow_bounded(diag):
    """80 streams each write one column of an (8, 80) matrix, each synchronized by the host
    before the next: nothing races, and the interval keeps at most MAX_ENTRIES accesses (those
    ordered before the host are dropped). Then two unsynchronized streams write the same column:
    still reported."""
    diag(ACLNN_EMU_CHECK="race,init")
    from aclnn_py.diagnostics.checks import MAX_ENTRIES

    checker = diagnostics.wrap.active().checker
    assert acl.rt.set_device(0) == 0
    rows, cols = 8, 80
    x = buffer(np.ones(rows, np.float32))
    out = buffer(nbytes=4 * rows * cols)
    keep = []
    for c in range(cols):
        s, _ = acl.rt.create_stream()
        keep.append(s)
        w = _hardsigmoid_into_view(x, (rows, 1), out, (cols, 1), c, (rows, cols), s)
        assert acl.rt.synchronize_stream(s) == 0, acl.get_recent_err_msg()
        if w:
            assert acl.rt.free(w) == 0
    sh = checker.shadows[out]
    assert max(len(w) + len(r) for w, r in sh.states) <= MAX_ENTRIES + 1
    ws = [_hardsigmoid_into_view(x, (rows, 1), out, (cols, 1), 5, (rows, cols), s)
          for s in keep[:2]]
    assert acl.rt.synchronize_device() == AICORE
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert f"stream 0x{keep[0]:x}" in race and f"stream 0x{keep[1]:x}" in race
    for p in (x, out, *ws):
        if p:
            assert acl.rt.free(p) == 0
    for s in keep:
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.reset_device(0) == 0


def _bytes_of(start: int, shape, strides, size: int) -> set:
    """Every byte of a view, by brute force (the reference for strided.meets)."""
    idx = np.indices(shape).reshape(len(shape), -1).T if shape else np.zeros((1, 0), int)
    firsts = start + (idx * np.asarray(strides, dtype=np.int64)).sum(1) * size
    return {int(b) for f in firsts for b in range(f, f + size)}


def test_strided_meets_matches_the_exact_byte_sets():
    """strided.meets against the brute-force byte sets of random views (2-D and 3-D, strides
    that interleave, nest, overlap, or are negative or zero), clipped to random intervals; with
    the budget exhausted, the answer may only err towards "they meet"."""
    from aclnn_py.diagnostics import strided

    rng = np.random.default_rng(22)
    checked = exact_disjoint = 0
    for _ in range(3000):
        views = []
        for _ in range(2):
            nd = int(rng.integers(1, 4))
            shape = tuple(int(v) for v in rng.integers(1, 5, nd))
            strides = tuple(int(v) for v in rng.integers(-6, 7, nd))
            size = 4
            lo = sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
            start = int(rng.integers(0, 12)) * 2 - lo * size  # the lowest byte is >= 0
            views.append((start, shape, strides, size))
        sets, placed = [], []
        for start, shape, strides, size in views:
            sets.append(_bytes_of(start, shape, strides, size))
            p = strided.pattern(shape, strides, size)
            first = min(sets[-1])
            if p is None:
                assert sets[-1] == set(range(first, max(sets[-1]) + 1))
            else:
                assert first + strided.extent(*p) == max(sets[-1]) + 1
            placed.append(None if p is None else (first, *p))
        s = int(rng.integers(0, 40))
        e = s + int(rng.integers(1, 80))
        clip = set(range(s, e))
        a, b = (clip if placed[i] is None else sets[i] & clip for i in (0, 1))
        truth = bool(a & b)
        assert strided.meets(placed[0], placed[1], s, e) == truth, (views, s, e)
        assert strided.meets(placed[0], placed[1], s, e, budget=1) in (truth, True)
        checked += 1
        exact_disjoint += not truth
    assert checked == 3000 and exact_disjoint > 300  # both answers were exercised
    # the case, large: even and odd columns of a 4096 x 4096 float32 matrix answer at
    # once (the congruence test), without enumerating 8 M elements
    even = (0, *strided.pattern((4096, 2048), (4096, 2), 4))
    odd = (4, *strided.pattern((4096, 2048), (4096, 2), 4))
    assert not strided.meets(even, odd, 0, 4096 * 4096 * 4, budget=1)
    assert strided.meets(even, (8, *strided.pattern((4096, 2047), (4096, 2), 4)), 0, 1 << 26)


def test_the_race_checker_forgets_destroyed_streams(diag):
    """Issue 22, 2: create stream / memset_async / synchronize / destroy, 3000 times under the
    race checker: the host's clock keeps no entry per destroyed stream (the cost of a call
    does not grow with the streams a program ever made), the shadows hold a bounded number of
    accesses, and a race on a stream that lives through it all is still reported."""
    diag(ACLNN_EMU_CHECK="race,init")
    from aclnn_py.diagnostics.checks import SWEEP

    checker = diagnostics.wrap.active().checker
    assert acl.rt.set_device(0) == 0
    keep, _ = acl.rt.create_stream()
    a, b = buffer(nbytes=4096), buffer(nbytes=4096)
    assert acl.rt.memset_async(b, 4096, 7, 4096, keep) == 0  # keep's write of b: not waited for
    sizes = []
    for i in range(3000):
        s, ret = acl.rt.create_stream()
        assert ret == 0
        assert acl.rt.memset_async(a, 4096, i & 0xFF, 4096, s) == 0
        assert acl.rt.synchronize_stream(s) == 0
        assert acl.rt.destroy_stream(s) == 0
        sizes.append(len(checker.host) + sum(len(vc) for vc in checker.streams.values()))
    assert max(sizes) <= 8, max(sizes)  # the host, keep, the default stream: no history
    assert len(checker.retired) <= SWEEP
    entries = sum(len(w) + len(r) for sh in checker.shadows.values() for w, r in sh.states)
    assert entries <= 8, entries
    host = np.empty(4096, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4096, a, 4096, D2H) == 0  # ordered
    assert np.all(host == 2999 & 0xFF)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4096, b, 4096, D2H) == 0  # not ordered
    assert acl.rt.synchronize_stream(keep) == DMA
    (race,) = report(acl.get_recent_err_msg(), "race")
    assert "aclrtMemcpy reads 'src' on the host" in race and f"stream 0x{keep:x}" in race
    for p in (a, b):
        assert acl.rt.free(p) == 0
    assert acl.rt.destroy_stream(keep) == 0
    assert acl.rt.reset_device(0) == 0


# ------------------------------------------------------------------------------------ init ----


def test_reading_a_fresh_allocation_is_reported(diag, two_streams):
    diag(ACLNN_EMU_CHECK="init")
    s1, _ = two_streams
    (fresh, _), at_alloc = acl.rt.malloc(64, 0), line()
    y = buffer(nbytes=X.nbytes)
    host = np.empty(16, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), 16, fresh + 16, 16, D2H) == 0
    softmax(fresh, y, X.shape, s1)  # reads bytes 0..32 of the same allocation
    assert acl.rt.synchronize_stream(s1) == DMA  # the first report is the host copy's
    msgs = report(acl.get_recent_err_msg(), "init")
    assert len(msgs) == 2
    copy = next(m for m in msgs if "aclrtMemcpy reads 'src'" in m)
    assert f"[0x{fresh + 16:x}, 0x{fresh + 32:x}) (offsets 16..32 of the 64-byte" in copy
    assert f"allocated by aclrtMalloc at {THIS}:{at_alloc}" in copy
    kernel = next(m for m in msgs if "aclnnSoftmax step SoftmaxV2 reads 'self'" in m)
    assert f"[0x{fresh:x}, 0x{fresh + 32:x})" in kernel


def test_written_bytes_are_clean(diag, two_streams):
    diag(ACLNN_EMU_CHECK="init")
    s1, _ = two_streams
    a, y = buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    assert acl.rt.memset(a, X.nbytes, 0, X.nbytes) == 0
    softmax(a, y, X.shape, s1)  # writes y
    assert acl.rt.synchronize_stream(s1) == 0
    out = np.empty_like(X)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), X.nbytes, y, X.nbytes, D2H) == 0
    np.testing.assert_allclose(out, np.full_like(X, 0.25))
    b = buffer(nbytes=64)
    assert acl.rt.memset_async(b, 64, 1, 32, s1) == 0  # half of it
    assert acl.rt.memcpy_async(a, 32, b, 32, D2D, s1) == 0
    assert acl.rt.synchronize_stream(s1) == 0
    assert acl.rt.memcpy_async(a, 32, b + 16, 32, D2D, s1) == 0  # 16 bytes past the fill
    assert acl.rt.synchronize_stream(s1) == DMA
    (msg,) = report(acl.get_recent_err_msg(), "init")
    assert f"[0x{b + 32:x}, 0x{b + 48:x})" in msg


# ------------------------------------------------------------------------------------ leak ----


def test_leaks_are_listed_with_where_they_were_made(diag, acl_uninitialized, caplog):
    diag(ACLNN_EMU_CHECK="leak")
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    (ptr, _), at_malloc = acl.rt.malloc(64, 0), line()
    (stream, _), at_stream = acl.rt.create_stream(), line()
    (event, _), at_event = acl.rt.create_event(), line()
    (host, _), at_host = acl.rt.malloc_host(32), line()
    x, y = buffer(X), buffer(nbytes=X.nbytes)
    tx, ty = tensor(x, X.shape), tensor(y, X.shape)
    (_, ex, _), at_ex = aclnn.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty), line()
    freed, _ = acl.rt.malloc(64, 0)
    assert acl.rt.free(freed) == 0 and acl.rt.free(x) == 0 and acl.rt.free(y) == 0
    with caplog.at_level(logging.WARNING, logger="aclnn_py"):
        assert acl.rt.reset_device(0) == 0
        device_report = caplog.text
        caplog.clear()
        assert acl.finalize() == 0
        final_report = caplog.text
    assert "at aclrtResetDevice(0), 2 object(s)" in device_report
    assert f"device memory 0x{ptr:x} (64 bytes) from aclrtMalloc at {THIS}:{at_malloc}" \
        in device_report
    assert f"stream 0x{stream:x} from aclrtCreateStream at {THIS}:{at_stream}" in device_report
    assert f"0x{freed:x}" not in device_report
    assert "at aclFinalize, 3 object(s)" in final_report
    assert f"event 0x{event:x} from aclrtCreateEvent at {THIS}:{at_event}" in final_report
    assert f"host memory 0x{host:x} (32 bytes) from aclrtMallocHost at {THIS}:{at_host}" \
        in final_report
    assert (f"executor of aclnnSoftmax (single-use, never launched nor destroyed) from "
            f"aclnnSoftmaxGetWorkspaceSize at {THIS}:{at_ex}") in final_report
    assert all(r.levelno == logging.WARNING and r.name == "aclnn_py.check"
               for r in caplog.records)
    del ex
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_event(event) == 0


def test_a_clean_program_leaks_nothing(diag, acl_uninitialized, caplog):
    diag(ACLNN_EMU_CHECK="leak,race,init")
    with caplog.at_level(logging.WARNING, logger="aclnn_py"):
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        s, _ = acl.rt.create_stream()
        x, y = buffer(X), buffer(nbytes=X.nbytes)
        ws, ex, _ = aclnn.aclnnSoftmaxGetWorkspaceSize(tensor(x, X.shape), 1, tensor(y, X.shape))
        assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
        for _ in range(3):
            assert aclnn.aclnnSoftmax(0, 0, ex, s) == 0
        assert acl.rt.synchronize_stream(s) == 0
        assert aclnn.aclDestroyAclOpExecutor(ex) == 0
        assert acl.rt.free(x) == 0 and acl.rt.free(y) == 0
        assert acl.rt.destroy_stream(s) == 0
        assert acl.rt.reset_device(0) == 0
        assert acl.finalize() == 0
    assert caplog.text == ""


# ---------------------------------------------------------------------- off by default ----


def test_everything_is_off_by_default(diag, two_streams):
    """No variable set: the public functions are the runtime's own, and a racy program gets no
    report."""
    diag()
    assert not diagnostics.wrap.installed()
    assert acl.rt.memcpy is rt.memcpy and acl.rt.synchronize_stream is rt.synchronize_stream
    assert aclnn.aclnnSoftmax is aclnn_py.aclnn._ops.aclnnSoftmax
    s1, s2 = two_streams
    x, y, z = buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    softmax(x, y, X.shape, s1)
    finish_unseen(s1)
    assert acl.rt.memcpy_async(z, X.nbytes, y, X.nbytes, D2D, s2) == 0
    assert acl.rt.synchronize_device() == 0


def test_an_unknown_checker_is_an_error_listing_the_known_ones(diag, acl_uninitialized):
    diag(ACLNN_EMU_CHECK="race,deadlock")
    assert acl.init() == acl.ACL_ERROR_INVALID_PARAM
    msg = acl.get_recent_err_msg()
    assert "ACLNN_EMU_CHECK" in msg and "['deadlock']" in msg
    assert "['init', 'leak', 'race']" in msg


def test_a_stream_destroyed_by_another_thread_while_checking(diag, caplog):
    """One thread copies and synchronizes on a stream that another thread destroys: the calls
    return 0 or 107017, the checkers keep working, nothing raises."""
    diag(ACLNN_EMU_CHECK="race,init,leak")
    assert acl.rt.set_device(0) == 0
    ctx, _ = acl.rt.get_context()
    a, b = buffer(nbytes=4096), buffer(nbytes=4096)
    assert acl.rt.memset(a, 4096, 0, 4096) == 0
    errors: list = []
    for _ in range(20):
        s, _ = acl.rt.create_stream()
        ev, _ = acl.rt.create_event()
        go = threading.Barrier(2)

        def user(stream=s, event=ev, go=go):
            try:
                acl.rt.set_context(ctx)
                go.wait()
                for _ in range(30):
                    codes = {acl.rt.memcpy_async(b, 4096, a, 4096, D2D, stream),
                             acl.rt.record_event(event, stream),
                             acl.rt.stream_wait_event(stream, event),
                             acl.rt.synchronize_stream(stream),
                             acl.rt.synchronize_event(event)}
                    assert codes <= {0, 107017}, codes
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        t = threading.Thread(target=user)
        t.start()
        go.wait()
        assert acl.rt.destroy_stream(s) == 0
        assert acl.rt.destroy_event(ev) == 0
        t.join()
    assert not errors, errors
    assert not [r for r in caplog.records if "internal error" in r.getMessage()]
    assert acl.rt.free(a) == 0 and acl.rt.free(b) == 0
    assert acl.rt.reset_device(0) == 0
    acl.get_recent_err_msg()


# ----------------------------------------------------------------------------------- trace ----


def _trace_program(path: str) -> None:
    """Two streams: a kernel on s1, recorded; s2 waits for it and copies the result; both
    synchronized; then aclFinalize writes the trace."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    x, y, z = buffer(X), buffer(nbytes=X.nbytes), buffer(nbytes=X.nbytes)
    for _ in range(3):
        softmax(x, y, X.shape, s1)
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    assert acl.rt.memcpy_async(z, X.nbytes, y, X.nbytes, D2D, s2) == 0
    assert acl.rt.synchronize_stream(s2) == 0
    assert acl.rt.synchronize_stream(s1) == 0
    for p in (x, y, z):
        acl.rt.free(p)
    acl.rt.destroy_event(ev)
    acl.rt.destroy_stream(s1)
    acl.rt.destroy_stream(s2)
    acl.rt.reset_device(0)
    assert acl.finalize() == 0


def test_trace_structure(diag, acl_uninitialized, tmp_path):
    path = str(tmp_path / "trace.json")
    diag(ACLNN_EMU_TRACE=path)
    _trace_program(path)
    doc = json.loads(open(path, encoding="utf-8").read())
    events = doc["traceEvents"]
    assert all({"ph", "pid", "tid"} <= set(e) for e in events)
    pid, tid = os.getpid(), threading.get_native_id()
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[(pid, tid)].startswith("MainThread")
    api = [e for e in events if e["ph"] == "X" and e["cat"] == "api"]
    assert [e["name"] for e in api][:3] == ["aclInit", "aclrtSetDevice", "aclrtCreateStream"]
    assert {(e["pid"], e["tid"]) for e in api} == {(pid, tid)}
    copy = next(e for e in api if e["name"] == "aclrtMemcpyAsync")
    assert copy["args"] == {"ret": 0, "bytes": X.nbytes}
    tasks = [e for e in events if e["ph"] == "X" and e["cat"] == "task"]
    tracks = {}
    for e in tasks:
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    assert len(tracks) == 2  # one per stream, in the device's pseudo-process
    assert {p for p, _ in tracks} == {diagnostics.trace.DEVICE_PID}
    kernel_track = next(t for t in tracks.values() if t[0]["name"].startswith("aclnnSoftmax"))
    assert [e["name"] for e in kernel_track] == ["aclnnSoftmax: SoftmaxV2"] * 3 + [
        "aclrtRecordEvent: Record"]
    copy_track = next(t for t in tracks.values() if t is not kernel_track)
    assert [e["name"] for e in copy_track] == ["aclrtStreamWaitEvent: Wait",
                                               "aclrtMemcpyAsync: Memcpy"]
    assert copy_track[1]["args"]["bytes"] == X.nbytes
    for track in tracks.values():  # a stream runs its tasks one at a time, in order
        for a, b in zip(track, track[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-3
        assert all(names[(e["pid"], e["tid"])].startswith("stream 0x") for e in track)
    # every task follows its enqueue, which lies inside the API call that made it
    starts = {e["id"]: e for e in events if e["ph"] == "s" and e["cat"] == "enqueue"}
    ends = {e["id"]: e for e in events if e["ph"] == "f" and e["cat"] == "enqueue"}
    assert len(starts) == len(ends) == len(tasks) == 6
    for fid, s in starts.items():
        f = ends[fid]
        task = next(e for e in tasks if (e["pid"], e["tid"], e["ts"]) == (f["pid"], f["tid"],
                                                                           f["ts"]))
        assert s["ts"] <= task["ts"]
        call = [c for c in api if c["ts"] <= s["ts"] <= c["ts"] + c["dur"]]
        assert len(call) == 1 and task["name"].startswith(call[0]["name"])
    # the record and the wait are joined by a flow
    (rec,) = [e for e in events if e["ph"] == "s" and e["cat"] == "event"]
    (wait,) = [e for e in events if e["ph"] == "f" and e["cat"] == "event"]
    assert rec["id"] == wait["id"] and (rec["tid"], wait["tid"]) == (kernel_track[0]["tid"],
                                                                      copy_track[0]["tid"])


def test_aclnn_py_run_trace_option(tmp_path):
    """`aclnn-py run NAME --trace FILE` in a child interpreter: the file is complete JSON."""
    path = str(tmp_path / "run.json")
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    done = subprocess.run([sys.executable, "-m", "aclnn_py", "run", "softmax_backward",
                           "--trace", path], cwd=tempfile.gettempdir(), env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = json.loads(open(path, encoding="utf-8").read())["traceEvents"]
    names = [e["name"] for e in events if e["ph"] == "X"]
    assert "aclnnSoftmaxBackward" in names and "aclnnSoftmaxBackward: SoftmaxGrad" in names
    assert names.count("aclFinalize") == 1


TRACE_LOAD = r'''
import gc, json, sys, tracemalloc
import numpy as np
from aclnn_py import acl, aclnn, diagnostics
launches = int(sys.argv[1])
assert acl.init() == 0 and acl.rt.set_device(0) == 0
s, _ = acl.rt.create_stream()
X = np.arange(8, dtype=np.float32).reshape(2, 4)
x, _ = acl.rt.malloc(32, 0)
y, _ = acl.rt.malloc(32, 0)
acl.rt.memcpy(x, 32, acl.util.numpy_to_ptr(X), 32, 1)
t = [aclnn.aclCreateTensor([2, 4], aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, [2, 4], p)
     for p in (x, y)]
tracemalloc.start()
used = []
for i in range(launches):
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(t[0], 1, t[1])
    assert ret == 0 and aclnn.aclnnSoftmax(0, 0, ex, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    if i + 1 in (launches // 2, launches):
        gc.collect()
        used.append(tracemalloc.get_traced_memory()[0])
tracer = diagnostics.wrap.active().tracer
print(json.dumps({"used": used, "kept": [len(tracer.calls), len(tracer.tasks)]}))
acl.rt.destroy_stream(s)
acl.rt.reset_device(0)
assert acl.finalize() == 0
'''


def test_the_trace_is_bounded_and_says_what_it_dropped(tmp_path):
    """Issue 22, 4: 4000 launches (3 API calls and one task each) with ACLNN_EMU_TRACE_EVENTS=
    1000 keep 1000 API calls and 1000 tasks, the newest; the memory the trace holds does not grow
    between 2000 and 4000 launches; the file reports as dropped exactly what the same program
    traced with room for everything has beyond 1000 (otherData and a "trace truncated" event)."""
    def run(name: str, keep: int) -> tuple[dict, dict]:
        path = str(tmp_path / f"{name}.json")
        env = {k: v for k, v in os.environ.items() if k not in ENV}
        env.update(ACLNN_EMU_TRACE=path, ACLNN_EMU_TRACE_EVENTS=str(keep))
        done = subprocess.run([sys.executable, "-c", TRACE_LOAD, "4000"], env=env,
                              cwd=tempfile.gettempdir(), capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), json.loads(open(path, encoding="utf-8").read())

    full_out, full = run("full", 100_000)
    out, doc = run("bounded", 1000)
    assert full["otherData"]["dropped_api_calls"] == full["otherData"]["dropped_tasks"] == 0
    assert not [e for e in full["traceEvents"] if e["name"] == "trace truncated"]
    full_api = [e for e in full["traceEvents"] if e["ph"] == "X" and e["cat"] == "api"]
    full_tasks = [e for e in full["traceEvents"] if e["ph"] == "X" and e["cat"] == "task"]
    assert len(full_tasks) >= 4000 and len(full_api) >= 3 * 4000
    assert full_out["kept"] == [len(full_api) - 3, len(full_tasks)]  # 3 calls after the print

    assert out["kept"] == [1000, 1000]
    half, end = out["used"]
    assert end - half < 64 * 1024, out["used"]  # flat (unbounded: ~0.9 KiB per launch)
    assert full_out["used"][1] - full_out["used"][0] > 1000 * 512  # the reference does grow
    api = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "api"]
    tasks = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "task"]
    assert len(api) == len(tasks) == 1000
    # the newest are kept
    assert [e["name"] for e in api[-5:]] == ["aclnnSoftmax", "aclrtSynchronizeStream",
                                             "aclrtDestroyStream", "aclrtResetDevice",
                                             "aclFinalize"]
    other = doc["otherData"]
    assert other["dropped_api_calls"] == len(full_api) - 1000
    assert other["dropped_tasks"] == len(full_tasks) - 1000
    assert other["kept_per_kind"] == 1000
    (mark,) = [e for e in doc["traceEvents"] if e["name"] == "trace truncated"]
    assert mark["ph"] == "i" and mark["s"] == "g"
    assert {k: mark["args"][k] for k in other if k in mark["args"]} == \
        {k: v for k, v in other.items() if k != "producer"}
    assert mark["ts"] <= min(e["ts"] for e in api + tasks)


def test_a_bad_trace_capacity_is_refused_by_init(diag, acl_uninitialized):
    for bad in ("0", "-3", "many", str((1 << 26) + 1)):
        diag(ACLNN_EMU_TRACE_EVENTS=bad)
        assert acl.init() == acl.ACL_ERROR_INVALID_PARAM
        msg = acl.get_recent_err_msg()
        assert "ACLNN_EMU_TRACE_EVENTS" in msg and bad in msg, msg


# ------------------------------------------------------------------------------------ logs ----


def test_log_level_debug_logs_every_call(diag, caplog):
    diag(ASCEND_GLOBAL_LOG_LEVEL="0")
    with caplog.at_level(logging.DEBUG, logger="aclnn_py"):
        assert acl.rt.set_device(0) == 0
        ptr, ret = acl.rt.malloc(64, 0)
        assert acl.rt.free(ptr) == 0
        assert acl.rt.free(ptr) == 207002
        acl.rt.reset_device(0)
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "aclnn_py.api"]
    assert ("DEBUG", "aclrtSetDevice(device_id=0) -> 0") in records
    assert ("DEBUG", f"aclrtMalloc(size=64, policy=0) -> ({ptr:#x}, 0)") in records
    level, text = records[-2]
    assert level == "ERROR" and text.startswith(f"aclrtFree(dev_ptr={ptr:#x}) -> 207002: ")
    assert "double free" in text
    assert acl.get_recent_err_msg() is not None  # the log left the message in place


def test_the_log_names_descriptor_calls_in_c_and_their_values_are_not_failures(diag, caplog):
    diag(ASCEND_GLOBAL_LOG_LEVEL="0")
    with caplog.at_level(logging.DEBUG, logger="aclnn_py"):
        desc = acl.create_tensor_desc(acl.ACL_FLOAT, [2, 3], acl.ACL_FORMAT_ND)
        assert acl.get_tensor_desc_size(desc) == 24
        assert acl.get_tensor_desc_dim_v2(desc, 7)[1] == 100000
        acl.destroy_tensor_desc(desc)
        assert acl.rt.get_last_error(0) == 100000
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "aclnn_py.api"]
    assert ("DEBUG", f"aclGetTensorDescSize(desc={desc:#x}) -> 24") in records
    assert ("DEBUG", "aclrtGetLastError(level=0) -> 100000") in records
    errors = [text for level, text in records if level == "ERROR"]
    assert len(errors) == 1 and errors[0].startswith("aclGetTensorDescDimV2(")
    acl.get_recent_err_msg()


def test_log_level_error_logs_failures_only(diag, caplog):
    diag(ASCEND_GLOBAL_LOG_LEVEL="3")
    with caplog.at_level(logging.DEBUG, logger="aclnn_py"):
        assert acl.rt.get_device_count() == (1, 0)
        assert acl.rt.set_device(7) == 107001
        with pytest.raises(TypeError):
            acl.rt.malloc(1.5, 0)
    records = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert len(records) == 2 and all(level == "ERROR" for level, _ in records)
    assert records[0][1].startswith("aclrtSetDevice(device_id=7) -> 107001: ")
    assert records[1][1].startswith("aclrtMalloc(size=1.5, policy=0) raised TypeError")
    acl.get_recent_err_msg()


def test_log_level_null_installs_nothing(diag):
    diag(ASCEND_GLOBAL_LOG_LEVEL="4")
    assert not diagnostics.wrap.installed()
    assert acl.rt.malloc is rt.malloc


def test_print_to_stdout(diag, capsys):
    diag(ASCEND_GLOBAL_LOG_LEVEL="1", ASCEND_SLOG_PRINT_TO_STDOUT="1")
    assert acl.rt.get_device_count() == (1, 0)
    assert acl.rt.set_device(99) == 107001
    acl.get_recent_err_msg()
    out = capsys.readouterr().out.splitlines()
    assert re.match(r"\[INFO\] ACLNN\(\d+,.*aclnn_py\.api: aclrtGetDeviceCount\(\) -> \(1, 0\)$",
                    out[0]), out
    assert out[1].startswith("[ERROR] ") and "aclrtSetDevice(device_id=99) -> 107001" in out[1]


def test_a_bad_log_level_is_refused_by_init(diag, acl_uninitialized):
    diag(ASCEND_GLOBAL_LOG_LEVEL="verbose")
    assert acl.init() == acl.ACL_ERROR_INVALID_PARAM
    assert "ASCEND_GLOBAL_LOG_LEVEL='verbose'" in acl.get_recent_err_msg()


FORK_PROGRAM = r'''
import os, sys, warnings
# Python >= 3.12 warns at os.fork() in any process with more than one thread; this one has
# NumPy's (OpenBLAS) and its streams' workers, as a CUDA program has its own. That is Python's
# caution about fork() in general, not a report of the emulator's: that one warning is
# ignored, anything else on stderr fails the test.
warnings.filterwarnings("ignore", category=DeprecationWarning,
                        message=r"This process \(pid=\d+\) is multi-threaded, use of fork\(\)")
import numpy as np
from aclnn_py import acl
acl.init()
acl.rt.set_device(0)
s, _ = acl.rt.create_stream()
a, _ = acl.rt.malloc(4096, 0)
acl.rt.memset_async(a, 4096, 1, 4096, s)
pid = os.fork()
if pid == 0:  # the child starts afresh: its own device memory, no report about the parent's
    acl.rt.set_device(0)
    s2, _ = acl.rt.create_stream()
    b, _ = acl.rt.malloc(4096, 0)
    acl.rt.memset(b, 4096, 0, 4096)
    host = np.empty(4096, np.uint8)
    acl.rt.memcpy_async(acl.util.numpy_to_ptr(host), 4096, b, 4096, 2, s2)
    code = acl.rt.synchronize_stream(s2)
    acl.rt.free(b)
    acl.rt.destroy_stream(s2)
    acl.rt.reset_device(0)
    sys.exit(0 if code == 0 and host.sum() == 0 else 3)
_, status = os.waitpid(pid, 0)
assert acl.rt.synchronize_stream(s) == 0
acl.rt.free(a)
acl.rt.destroy_stream(s)
acl.rt.reset_device(0)
acl.finalize()
sys.exit(os.waitstatus_to_exitcode(status))
'''


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() only")
def test_fork_with_diagnostics_on(tmp_path):
    """A child forked while the checkers and the trace are on works, reports nothing, and
    leaves the parent's trace file to the parent."""
    path = str(tmp_path / "fork.json")
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    env.update(ACLNN_EMU_CHECK="race,init,leak", ACLNN_EMU_TRACE=path)
    done = subprocess.run([sys.executable, "-c", FORK_PROGRAM], cwd=tempfile.gettempdir(),
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    events = json.loads(open(path, encoding="utf-8").read())["traceEvents"]
    parent = events[0]["pid"]  # the host's process_name record comes first
    api = [e for e in events if e["ph"] == "X" and e["cat"] == "api"]
    assert {e["pid"] for e in api} == {parent}
    assert [e["name"] for e in api].count("aclFinalize") == 1
    assert not any(e["name"].startswith("aclrtMemcpyAsync") for e in events if e["ph"] == "X")
