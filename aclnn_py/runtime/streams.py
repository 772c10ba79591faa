"""Streams: create, destroy, synchronize, submit tasks; the functional layer's private streams.

A stream is a C worker thread running its tasks in FIFO order (csrc/runtime/stream.c); the
handle is what users hold. The semantics follow CANN's aclrtCreateStream /
aclrtSynchronizeStream documentation; docs/runtime.md describes the emulator's.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from .. import config
from ..enums import TaskType
from ..status import aclError as E
from ..status import record
from .core import ffi, last_c_msg, lib, msg_text, new_msg
from .state import Context, S, Stream, current, current_default_stream, lookup, ptr, require_int

# ------------------------------------------------------------- calls from a host kernel ----


def refuse_in_kernel(api: str) -> int:
    """0, or a recorded 207000 ACL_ERROR_RT_FEATURE_NOT_SUPPORT when the calling thread is
    running a custom operator's kernel (a stream's host task, runtime.host): ``api`` waits for
    streams (or destroys what a running task uses), which a kernel cannot do without a deadlock:
    its own stream waits for the kernel, and another stream's task may wait for the device
    memory table the kernel holds (behind a free that waits for the kernel). The C core refuses
    the waits themselves too; this refuses before the runtime's state changes."""
    h = lib.emu_host_task_stream()
    if not h:
        return 0
    return record(api, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                  f"called from a custom operator's kernel, which runs as a task of stream "
                  f"0x{h:x}: a kernel cannot wait for streams or destroy runtime objects (its "
                  "own stream waits for the kernel, and another stream may wait for the device "
                  "memory the kernel holds); call it on the host instead (on the device, a "
                  "kernel cannot call the runtime at all)")


# ---------------------------------------------------------------------- C stream handles ----


def open_stream(device: int, context: Context, is_default: bool = False) -> Optional[Stream]:
    """Start a C stream on ``device`` and register it (the caller holds S.lock); None when no
    worker thread or handle is left."""
    sh = lib.emu_stream_create(device)
    if not sh:
        return None
    st = Stream(handle=sh, device=device, context=context, is_default=is_default)
    S.streams[sh] = st
    return st


# ------------------------------------------------------------------------------ streams ----


def create_stream() -> tuple[int, int]:
    """aclrtCreateStream: ``(stream, ret)``: a new stream (a worker thread running its tasks in
    FIFO order) in the current context. ret 107002 without a current context; 207008 when no
    worker thread could start. docs/runtime.md "Streams"."""
    return _create_stream("aclrtCreateStream")


# aclrtCreateStreamWithConfig's flags (#define in CANN's acl_rt.h; pyACL takes them as ints)
STREAM_FLAGS = {"ACL_STREAM_FAST_LAUNCH": 0x1, "ACL_STREAM_FAST_SYNC": 0x2,
                "ACL_STREAM_PERSISTENT": 0x4, "ACL_STREAM_HUGE": 0x8,
                "ACL_STREAM_CPU_SCHEDULE": 0x10, "ACL_STREAM_DEVICE_USE_ONLY": 0x20}


def create_stream_with_config(priority, flag) -> tuple[int, int]:
    """aclrtCreateStreamWithConfig: ``(stream, ret)``, as create_stream. ``priority`` (uint32;
    CANN clamps it to [0, 7]) and ``flag`` (a bitwise OR of ACL_STREAM_FAST_LAUNCH 0x1,
    ACL_STREAM_FAST_SYNC 0x2, ...; CANN makes a plain stream for other values) change nothing
    in the emulator, whose streams all launch and synchronize alike. ret 100000 for a value
    outside uint32; 107002 without a current context; 207008 when no worker thread could start.
    docs/pyacl.md."""
    api = "aclrtCreateStreamWithConfig"
    for name, value in (("priority", priority), ("flag", flag)):
        v = require_int(api, name, value, ctype="uint32")
        if not 0 <= v < 1 << 32:
            return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                             f"{name} {v} is outside uint32_t [0, 2**32)")
    return _create_stream(api)


def _create_stream(api: str) -> tuple[int, int]:
    with S.lock:
        ctx = current()
        if ctx is None:
            return 0, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                             "no current context: call aclrtSetDevice first")
        st = open_stream(ctx.device, ctx)
        if st is None:
            return 0, record(api, E.ACL_ERROR_RT_NO_STREAM_RESOURCE, "could not start a stream")
        ctx.streams.append(st)
        return st.handle, 0


def resolve_stream(api: str, stream) -> tuple[Optional[Stream], int]:
    """A live stream for a handle; None/0 means the current context's default stream."""
    if ptr(stream) == 0:
        ctx = current()
        if ctx is None:
            return None, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                                "stream is null (the default stream) but this thread has no "
                                "current context: call aclrtSetDevice first")
        return ctx.default_stream, 0
    return lookup(api, "stream", stream, S.streams)


def destroy_stream(stream) -> int:
    """aclrtDestroyStream: let the stream's queued tasks finish, then destroy it. Returns 0;
    100000 for null or a default stream; 107017 for a handle that is not a live stream; 207000
    from a custom operator's kernel (refuse_in_kernel)."""
    api = "aclrtDestroyStream"
    ret = refuse_in_kernel(api)
    if ret:
        return ret
    with S.lock:
        if ptr(stream) == 0:
            return record(api, E.ACL_ERROR_INVALID_PARAM, "stream is null")
        st, ret = resolve_stream(api, stream)
        if ret:
            return ret
        assert st is not None
        if st.is_default:
            return record(api, E.ACL_ERROR_INVALID_PARAM,
                          f"stream 0x{st.handle:x} is a default stream; it belongs to its context")
        del S.streams[st.handle]
        if st in st.context.streams:
            st.context.streams.remove(st)
    # drains outside the lock: other threads may go on. The C handle is invalid from here on;
    # a call that already holds the stream finishes on live memory.
    lib.emu_stream_destroy(st.handle)
    return 0


def _collect_fault(api: str, code: int, buf) -> int:
    if code:
        record(api, code, f"a task failed on the stream: {msg_text(buf)}")
    return code


def _stream_gone(api: str, st: Stream) -> int:
    return record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                  f"stream 0x{st.handle:x} was destroyed by another thread during the call")


def _wait_stream(api: str, st: Stream) -> int:
    """Wait for every task queued on ``st``; 0, or its first fault recorded under ``api``."""
    code = lib.emu_stream_synchronize(st.handle, ffi.NULL, 0)
    if code:
        if code == E.ACL_ERROR_RT_INVALID_HANDLE:
            return _stream_gone(api, st)
        if code == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT:  # from a kernel: nothing waited for
            return refuse_in_kernel(api) or record(api, code, last_c_msg())
        record(api, code, f"a task failed on the stream: {last_c_msg()}")
    return code


def synchronize_stream(stream) -> int:
    """aclrtSynchronizeStream: wait for every task enqueued on the stream so far (null: the
    current context's default stream). Returns 0, or the first task fault since the last
    synchronize (507013 copy, 507015 operator) with its message; 107017 / 107002 for a bad
    stream; 207000 from a custom operator's kernel (refuse_in_kernel)."""
    api = "aclrtSynchronizeStream"
    # a live explicit stream, or the live current context's default one: no lock (the C core
    # holds its own reference for the call, and answers 107017 if another thread destroys the
    # stream meanwhile) and no message buffer
    if type(stream) is int:
        st = S.streams.get(stream) if stream else current_default_stream()
    else:
        st = current_default_stream() if stream is None else None
    if st is None:
        ret = refuse_in_kernel(api)  # (a live stream's refusal comes from the C core)
        if ret:
            return ret
        with S.lock:
            st, ret = resolve_stream(api, stream)
        if ret:
            return ret
        assert st is not None
    return _wait_stream(api, st)


def check_timeout(api: str, timeout) -> int:
    """A *WithTimeout call's ``timeout``: -1 (wait forever) or milliseconds in [1, 2**31);
    0 or 100000 with a message."""
    timeout = require_int(api, "timeout", timeout, ctype="int32")
    if timeout != -1 and not 0 < timeout < 1 << 31:
        return record(api, E.ACL_ERROR_INVALID_PARAM,
                      f"timeout {timeout} must be -1 (wait forever) or a number of milliseconds "
                      "in [1, 2**31)")
    return 0


def poll(done, deadline: float) -> bool:
    """Poll ``done()`` until it is true (True) or ``deadline`` (time.monotonic) passes (False),
    sleeping 50 us doubling to 2 ms in between."""
    pause = 50e-6
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 2e-3)
    return True


def _wait_marked(api: str, st: Stream, deadline: float, timeout: int) -> int:
    """Wait until the tasks enqueued on ``st`` before now have run, up to ``deadline``: a
    record task marks their end. 0; 507046 on the deadline; the submit's code."""
    ev = lib.emu_event_create()
    if not ev:
        return record(api, E.ACL_ERROR_RT_NO_EVENT_RESOURCE, "out of host memory")
    try:
        tasks, t = new_task(api, "Record", TaskType.EVENT_RECORD)
        t.event = ev
        code = submit(api, st, tasks, 1)
        if code:
            return code
        if not poll(lambda: lib.emu_event_status(ev) == _C_EVENT_COMPLETE, deadline):
            return record(api, E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                          f"stream 0x{st.handle:x}: its tasks did not finish within "
                          f"{timeout} ms (they keep running)")
        return 0
    finally:
        lib.emu_event_destroy(ev)


def synchronize_stream_with_timeout(stream, timeout) -> int:
    """aclrtSynchronizeStreamWithTimeout: synchronize_stream, giving up after ``timeout``
    milliseconds (-1: wait forever). Returns 0 or the first task fault, as synchronize_stream;
    507046 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when the tasks enqueued before the call have not
    all finished in time (they keep running); 100000 for a timeout that is neither -1 nor in
    [1, 2**31); 107017 / 107002 for a bad stream; 207000 from a custom operator's kernel.
    docs/pyacl.md."""
    api = "aclrtSynchronizeStreamWithTimeout"
    ret = check_timeout(api, timeout) or refuse_in_kernel(api)
    if ret:
        return ret
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return ret
    assert st is not None
    if timeout != -1:
        code = _wait_marked(api, st, time.monotonic() + timeout / 1000.0, timeout)
        if code:
            return code
    return _wait_stream(api, st)


def synchronize_device_with_timeout(timeout) -> int:
    """aclrtSynchronizeDeviceWithTimeout: synchronize_device, giving up after ``timeout``
    milliseconds (-1: wait forever). 507046 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT (CANN's code for
    this call too) when the device's streams have not all run their tasks in time (they keep
    running); 100000 for a bad timeout; 107002 without a device; 207000 from a custom
    operator's kernel. docs/pyacl.md."""
    api = "aclrtSynchronizeDeviceWithTimeout"
    ret = check_timeout(api, timeout) or refuse_in_kernel(api)
    if ret:
        return ret
    if timeout == -1:
        return _synchronize_device(api)
    with S.lock:
        ctx = current()
        if ctx is None:
            return record(api, E.ACL_ERROR_RT_CONTEXT_NULL, "no device is set in this thread")
        streams = [s for s in S.streams.values() if s.device == ctx.device and not s.private]
    deadline = time.monotonic() + timeout / 1000.0
    for st in streams:
        code = _wait_marked(api, st, deadline, timeout)
        if code == E.ACL_ERROR_RT_INVALID_HANDLE:
            continue  # destroyed meanwhile: nothing of it is left to wait for
        if code:
            return code
    return _synchronize_device(api)


def stream_query(stream) -> tuple[int, int]:
    """aclrtStreamQuery: ``(status, ret)``: aclrtStreamStatus COMPLETE (0) when every task
    enqueued on the stream has run, NOT_READY (1) else. ret 107017 / 107002 for a bad stream.
    docs/pyacl.md."""
    api = "aclrtStreamQuery"
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return 1, ret
    assert st is not None
    pending = lib.emu_stream_pending(st.handle)
    if pending < 0:
        return 1, _stream_gone(api, st)
    return (0 if pending == 0 else 1), 0


_C_EVENT_COMPLETE = 2  # emu_event_status: complete


def synchronize_device() -> int:
    """aclrtSynchronizeDevice: synchronize every stream of this thread's device. Returns 0, the
    first fault found (as synchronize_stream), or 107002 without a device; 207000 from a custom
    operator's kernel."""
    return _synchronize_device("aclrtSynchronizeDevice")


def _synchronize_device(api: str) -> int:
    ret = refuse_in_kernel(api)
    if ret:
        return ret
    with S.lock:
        ctx = current()
        if ctx is None:
            return record(api, E.ACL_ERROR_RT_CONTEXT_NULL, "no device is set in this thread")
        streams = [s.handle for s in S.streams.values()
                   if s.device == ctx.device and not s.private]
    first = 0
    for handle in streams:
        buf = new_msg()
        code = lib.emu_stream_synchronize(handle, buf, len(buf))
        if code == E.ACL_ERROR_RT_INVALID_HANDLE:
            continue  # destroyed since the list was taken: nothing of it is left to wait for
        first = first or _collect_fault(api, code, buf)
    return first


# -------------------------------------------------------------------------------- tasks ----


def new_task(op: str, step: str, kind: int) -> tuple[Any, Any]:
    """One zeroed C task record of type ``kind`` (TaskType) named after the call and its step:
    (the array to submit, the record to fill)."""
    tasks = ffi.new("emu_task[1]")
    t = tasks[0]
    t.type = kind
    t.op = op.encode()[:63]
    t.step = step.encode()[:31]
    return tasks, t


def add_range(t, name: str, addr: int, nbytes: int) -> None:
    """Name device bytes the task touches: the stream checks them again when the task runs."""
    r = t.ranges[t.nranges]
    r.ptr, r.nbytes, r.name = addr, nbytes, name.encode()[:31]
    t.nranges += 1


def submit(api: str, st: Stream, tasks, n: int) -> int:
    """Enqueue n C task records on a stream (blocking when ACL_LAUNCH_BLOCKING=1)."""
    blocking, ret = config.checked(api, config.launch_blocking)
    if ret:
        return ret
    blocking = 1 if blocking else 0
    buf = new_msg()
    code = lib.emu_stream_submit(st.handle, tasks, n, blocking, buf, len(buf))
    if code == E.ACL_ERROR_RT_INVALID_HANDLE:
        record(api, code, f"stream 0x{st.handle:x} or an event of the task was destroyed by "
               f"another thread during the call: {msg_text(buf)}")
    elif code:
        record(api, code, f"{'(ACL_LAUNCH_BLOCKING=1) ' if blocking else ''}{msg_text(buf)}")
    return code


# ------------------------------------------------------------- the functional layer's own ----


class _PrivateStream:
    """Owns the functional layer's stream of one thread; released when the thread ends (its
    thread-local storage is dropped) or at interpreter exit."""

    def __init__(self) -> None:
        sh = lib.emu_stream_create(0)
        if not sh:
            raise MemoryError("could not start the functional layer's stream")
        self.stream = Stream(handle=sh, device=0, context=Context(handle=0, device=0),
                             private=True)
        with S.lock:
            S.streams[sh] = self.stream

    def __del__(self) -> None:
        try:
            with S.lock:
                S.streams.pop(self.stream.handle, None)
            lib.emu_stream_destroy(self.stream.handle)
        except Exception:  # pragma: no cover - interpreter teardown
            pass


def internal_stream() -> Stream:
    """A private stream on device 0 for ``aclnn_py.functional`` (one per thread), independent of
    the user's init/set_device state."""
    holder = getattr(S.internal, "holder", None)
    if holder is None:
        holder = S.internal.holder = _PrivateStream()
    return holder.stream


__all__ = ["refuse_in_kernel", "open_stream", "create_stream",
           "create_stream_with_config",
           "resolve_stream", "destroy_stream", "synchronize_stream",
           "synchronize_stream_with_timeout", "synchronize_device", "new_task", "add_range",
           "submit", "internal_stream"]
