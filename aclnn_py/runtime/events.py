"""Events: create, destroy, record, reset, wait, query, synchronize, elapsed time.

Events are C handles (csrc/runtime/handle.c); record, reset and wait are tasks on a stream. The
semantics follow CANN's aclrtRecordEvent / aclrtQueryEventStatus / aclrtEventElapsedTime
documentation; docs/runtime.md ("Events") describes the emulator's.
"""

from __future__ import annotations

import time
from typing import Optional

from ..enums import TaskType, aclrtEventRecordedStatus
from ..status import aclError as E
from ..status import record
from .core import ffi, lib
from .state import Event, S, lookup, require_int
from .streams import check_timeout, new_task, poll, refuse_in_kernel, resolve_stream, submit

_C_EVENT_COMPLETE = 2  # emu_event_status: 0 never recorded, 1 recorded not done, 2 complete
_C_EVENT_RECORDED = 1
_COMPLETE = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE
_NOT_READY = aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_NOT_READY


def create_event() -> tuple[int, int]:
    """aclrtCreateEvent: ``(event, ret)``; ret 207007 when the host is out of memory.
    docs/runtime.md "Events"."""
    h = lib.emu_event_create()
    if not h:
        return 0, record("aclrtCreateEvent", E.ACL_ERROR_RT_NO_EVENT_RESOURCE,
                         "out of host memory for an event")
    with S.lock:
        S.events[h] = Event(h)
    return h, 0


# aclrtCreateEventWithFlag's flags (#define in CANN's acl_rt.h; pyACL takes them as ints)
EVENT_SYNC = 0x1
EVENT_CAPTURE_STREAM_PROGRESS = 0x2
EVENT_TIME_LINE = 0x8
EVENT_DEVICE_USE_ONLY = 0x10
EVENT_EXTERNAL = 0x20
EVENT_IPC = 0x40
EVENT_FLAGS = {"ACL_EVENT_SYNC": EVENT_SYNC,
               "ACL_EVENT_CAPTURE_STREAM_PROGRESS": EVENT_CAPTURE_STREAM_PROGRESS,
               "ACL_EVENT_TIME_LINE": EVENT_TIME_LINE,
               "ACL_EVENT_DEVICE_USE_ONLY": EVENT_DEVICE_USE_ONLY,
               "ACL_EVENT_EXTERNAL": EVENT_EXTERNAL, "ACL_EVENT_IPC": EVENT_IPC}
_ALL_EVENT_FLAGS = sum(EVENT_FLAGS.values())


def create_event_with_flag(flag) -> tuple[int, int]:
    """aclrtCreateEventWithFlag: ``(event, ret)``: an event whose ``flag`` is a bitwise OR of
    ACL_EVENT_SYNC (0x1), ACL_EVENT_CAPTURE_STREAM_PROGRESS (0x2), ACL_EVENT_TIME_LINE (0x8),
    ACL_EVENT_DEVICE_USE_ONLY (0x10), ACL_EVENT_EXTERNAL (0x20), ACL_EVENT_IPC (0x40). As CANN
    documents, an event without ACL_EVENT_SYNC cannot be used by reset_event or
    stream_wait_event (they return 207000). ret 100000 for other bits or a value outside
    uint32; 207007 when the host is out of memory. docs/pyacl.md."""
    api = "aclrtCreateEventWithFlag"
    flag = require_int(api, "flag", flag, ctype="uint32")
    if not 0 <= flag < 1 << 32 or flag & ~_ALL_EVENT_FLAGS:
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                         f"flag 0x{flag & 0xFFFFFFFFFFFFFFFF:x} has bits outside the event flags "
                         f"(0x{_ALL_EVENT_FLAGS:x}: {', '.join(EVENT_FLAGS)})")
    h = lib.emu_event_create()
    if not h:
        return 0, record(api, E.ACL_ERROR_RT_NO_EVENT_RESOURCE,
                         "out of host memory for an event")
    with S.lock:
        S.events[h] = Event(h, flag)
    return h, 0


def _lookup_event(api: str, event) -> tuple[Optional[Event], int]:
    return lookup(api, "event", event, S.events)


def destroy_event(event) -> int:
    """aclrtDestroyEvent: invalid at once for new calls; queued records and waiting
    synchronizes complete. Returns 0; 100000 for null; 107017 for a handle that is not a live
    event."""
    api = "aclrtDestroyEvent"
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        assert ev is not None
        del S.events[ev.handle]
    # invalid at once for new calls; queued records and waiting synchronizes keep it alive
    lib.emu_event_destroy(ev.handle)
    return 0


def _event_task(api: str, event, stream, kind: int, step: str) -> int:
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        assert ev is not None
        flag = ev.flag
        if flag is not None and kind != TaskType.EVENT_RECORD and not flag & EVENT_SYNC:
            return record(api, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                          f"event 0x{ev.handle:x} was created with flag 0x{flag:x}, without "
                          "ACL_EVENT_SYNC (0x1): CANN does not support it in aclrtResetEvent "
                          "or aclrtStreamWaitEvent")
        st, ret = resolve_stream(api, stream)
        if ret:
            return ret
        assert st is not None
    tasks, t = new_task(api, step, kind)
    t.event = ev.handle
    # outside the lock: with ACL_LAUNCH_BLOCKING=1 the submit waits for the stream, whose
    # running kernel may call the runtime (an event or stream destroyed meanwhile: 107017)
    return submit(api, st, tasks, 1)


def record_event(event, stream) -> int:
    """aclrtRecordEvent: enqueue a record of ``event`` on ``stream`` (null: the default
    stream); it completes when the stream reaches it. Returns 0; 100000 null event; 107017 /
    107002 for a bad event or stream."""
    return _event_task("aclrtRecordEvent", event, stream, TaskType.EVENT_RECORD, "Record")


def reset_event(event, stream) -> int:
    """aclrtResetEvent: enqueue a reset of ``event`` to "not recorded" on ``stream``. Returns 0;
    100000 null event; 107017 / 107002 for a bad event or stream."""
    return _event_task("aclrtResetEvent", event, stream, TaskType.EVENT_RESET, "Reset")


def stream_wait_event(stream, event) -> int:
    """aclrtStreamWaitEvent: enqueue on ``stream`` a wait for the last record of ``event``
    enqueued before this call (a later record is never waited for). Returns 0; 100000 null
    event; 107017 / 107002 for a bad stream or event."""
    return _event_task("aclrtStreamWaitEvent", event, stream, TaskType.EVENT_WAIT, "Wait")


def query_event_status(event) -> tuple[int, int]:
    """aclrtQueryEventStatus: ``(status, ret)``: aclrtEventRecordedStatus COMPLETE (1) when the
    event's latest record has run, NOT_READY (0) before that or when never recorded. ret 107017
    for a handle that is not a live event."""
    api = "aclrtQueryEventStatus"
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return 0, ret
        assert ev is not None
        status = lib.emu_event_status(ev.handle)
    if status < 0:
        return 0, record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                         f"event 0x{ev.handle:x} was destroyed by another thread during the call")
    return (_COMPLETE if status == _C_EVENT_COMPLETE else _NOT_READY), 0


def synchronize_event(event) -> int:
    """aclrtSynchronizeEvent: wait for the last record enqueued before the call (at once when
    never recorded). Returns 0; 100000 null; 107017 for a handle that is not a live event;
    207000 from a custom operator's kernel."""
    api = "aclrtSynchronizeEvent"
    ret = refuse_in_kernel(api)
    if ret:
        return ret
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        assert ev is not None
    code = lib.emu_event_synchronize(ev.handle)
    if code:
        return record(api, code, f"event 0x{ev.handle:x} was destroyed by another thread "
                      "before the synchronize began")
    return 0


def synchronize_event_with_timeout(event, timeout) -> int:
    """aclrtSynchronizeEventWithTimeout: synchronize_event, giving up after ``timeout``
    milliseconds (-1: wait forever). 507047 ACL_ERROR_RT_EVENT_SYNC_TIMEOUT when the event's
    last record has not run in time; 100000 for a null event or a bad timeout; 107017 for a
    handle that is not a live event; 207000 from a custom operator's kernel. docs/pyacl.md."""
    api = "aclrtSynchronizeEventWithTimeout"
    ret = check_timeout(api, timeout) or refuse_in_kernel(api)
    if ret:
        return ret
    if timeout == -1:
        with S.lock:
            ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        assert ev is not None
        if lib.emu_event_synchronize(ev.handle):
            return record(api, E.ACL_ERROR_RT_INVALID_HANDLE, f"event 0x{ev.handle:x} was "
                          "destroyed by another thread before the synchronize began")
        return 0
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        assert ev is not None
        handle = ev.handle
    status = [0]

    def done() -> bool:
        status[0] = lib.emu_event_status(handle)
        return status[0] != _C_EVENT_RECORDED  # complete, never recorded, or destroyed

    if not poll(done, time.monotonic() + timeout / 1000.0):
        return record(api, E.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                      f"event 0x{handle:x}: its last record did not run within {timeout} ms")
    if status[0] < 0:
        return record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                      f"event 0x{handle:x} was destroyed by another thread during the call")
    return 0


def query_event(event) -> tuple[int, int]:
    """aclrtQueryEvent (deprecated in CANN for query_event_status): ``(status, ret)``:
    aclrtEventStatus COMPLETE (0) when the event's latest record has run, NOT_READY (1) before
    that or when never recorded. ret 107017 for a handle that is not a live event."""
    status, ret = query_event_status(event)
    if ret:
        return 1, ret
    return (0 if status == _COMPLETE else 1), 0


def event_elapsed_time(start, end) -> tuple[float, int]:
    """aclrtEventElapsedTime: ``(ms, ret)``: milliseconds between two completed records (host
    timestamps). ret 107006 when either was never recorded; 507006 when either has not completed;
    107017 for a bad handle."""
    api = "aclrtEventElapsedTime"
    with S.lock:
        a, ret = _lookup_event(api, start)
        if ret:
            return 0.0, ret
        b, ret = _lookup_event(api, end)
        if ret:
            return 0.0, ret
        assert a is not None and b is not None
        ms = ffi.new("float *")
        code = lib.emu_event_elapsed_ms(a.handle, b.handle, ms)
    if code == E.ACL_ERROR_RT_INVALID_HANDLE:
        return 0.0, record(api, code, "an event was destroyed by another thread during the call")
    if code == E.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID:
        return 0.0, record(api, code, "both events must have been recorded on a stream")
    if code:
        return 0.0, record(api, code, "both events must have completed: synchronize the stream "
                           "or the events first")
    return float(ms[0]), 0


__all__ = ["create_event", "create_event_with_flag", "destroy_event", "record_event",
           "reset_event", "stream_wait_event", "query_event_status", "synchronize_event",
           "event_elapsed_time", "synchronize_event_with_timeout", "query_event"]
