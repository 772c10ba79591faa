"""Host kernels: a task whose work is a Python function (a custom operator's NumPy kernel,
aclnn_py.custom), run by the stream like any other task.

The C core calls one registered function with each host task's token when the stream reaches the
task (``emu_set_host_kernel``), holding the allocation table's read lock: no allocation is freed
while the function runs, and the function must not call the runtime's memory functions, which
take that lock (``range_device_locked`` is the check it may use). A task skipped after an
earlier fault of its stream calls the function with no message buffer, so its job is dropped.

From the thread running a host task, every call that waits for a stream (synchronize, destroy,
an event synchronize, a blocking launch; streams.refuse_in_kernel) returns 207000 at once. The
child of a fork() made inside the function ends when the function returns (it has none of the
parent's streams to go back to): Python's standard streams are flushed, then the C core exits
(status 0, or 1 when the function failed; a kernel's ``sys.exit(code)`` there is honoured by its
caller through exit_forked_child).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Optional

from ..enums import Kernel, TaskType
from .core import ffi, lib, msg_text, new_msg

# keeps the C callback alive for the life of the process
_callback: list = []


def set_host_kernel(fn: Callable[[int, Optional[Any]], Optional[str]]) -> None:
    """Register ``fn(token, msg)``: run the job ``token`` names and return None, or the fault's
    text; ``msg`` is None when the task was skipped (drop the job, return None). Exceptions
    escaping ``fn`` are reported as the task's fault."""

    def call(token: int, msg, msglen: int) -> int:
        try:
            text = fn(int(token), None if msg == ffi.NULL else msg)
        except BaseException as exc:  # noqa: BLE001 - never across the C boundary
            text = f"host kernel {token}: {type(exc).__name__}: {exc}"
        if lib.emu_host_forked():  # the child of a fork() inside fn: it ends on return
            _flush_std()
        if msg == ffi.NULL or text is None:
            return 0
        data = text.encode("utf-8", "replace")[:max(msglen - 1, 0)]
        ffi.memmove(msg, data + b"\0", len(data) + 1)
        return 1

    cb = ffi.callback("int(uint64_t, char *, int)", call, onerror=_onerror)
    _callback.append(cb)
    lib.emu_set_host_kernel(cb)


def host_forked() -> bool:
    """Whether this thread is the child of a fork() made inside a host kernel (it ends when the
    kernel returns)."""
    return bool(lib.emu_host_forked())


def exit_forked_child(code: Any) -> None:
    """End the child of a fork() made inside a host kernel as ``sys.exit(code)`` would (None:
    status 0; an int: that status; anything else: printed to stderr, status 1), after flushing
    Python's standard streams. Never returns."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    _flush_std()
    os._exit(0 if code is None else code & 0xFF)


def _flush_std() -> None:
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream: nothing to keep
            pass


def _onerror(exc_type, exc_value, tb) -> int:  # pragma: no cover - call() catches everything
    return 1


def submit_host(stream: int, token: int, op: str, step: str, blocking: bool) -> tuple[int, str]:
    """Enqueue a host task on stream handle ``stream``: (0, "") or (code, message); with
    ``blocking``, the stream's fault (the task ran first)."""
    tasks = ffi.new("emu_task[1]")
    t = tasks[0]
    t.type = TaskType.KERNEL
    t.kernel = Kernel.HOST
    t.k.host.token = token
    t.op = op.encode()[:63]
    t.step = step.encode()[:31]
    buf = new_msg()
    code = lib.emu_stream_submit(stream, tasks, 1, 1 if blocking else 0, buf, len(buf))
    return code, (msg_text(buf) if code else "")


def range_device_locked(addr: int, nbytes: int) -> int:
    """``range_device`` for a host kernel (the caller holds the allocation table's read lock):
    the device of [addr, addr + nbytes) inside one live allocation, or a negative MemRange."""
    return lib.emu_mem_range_device_locked(addr, nbytes)  # type: ignore[no-any-return]


__all__ = ["set_host_kernel", "submit_host", "range_device_locked", "host_forked",
           "exit_forked_child"]
