"""The compiled core, wrapped in one place: the only importer of ``aclnn_py._emu``.

The C core (csrc/, built by cffi from ``csrc/include/aclnn_emu.h``) holds the allocation table,
the streams with their worker threads, the events and the kernels. The other modules of
``aclnn_py.runtime`` call it through ``lib`` and ``ffi`` from here; the rest of the package calls
the runtime's functions. ``ffi`` and ``lib`` are importable from here for the modules that still
build C task records themselves (tests/test_layering.py lists them).

The kernel thread count (``num_threads`` / ``set_num_threads``) is set here too: from
``ACLNN_EMU_NUM_THREADS`` when this module is imported, and again at acl.init / acl.finalize.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Optional

from .. import config

try:
    from aclnn_py._emu import ffi, lib
except ImportError as exc:  # pragma: no cover - only when the package was not built
    _here = Path(__file__).resolve().parent.parent
    _hint = ""
    if (_here.parent / "csrc").is_dir():
        _hint = (
            f" Python imported aclnn_py from the source tree {_here}, which holds no compiled "
            "core: install it editable ('pip install -e .'), or run the tests with 'pytest' "
            "rather than 'python -m pytest' (which puts the source tree first on sys.path)."
        )
    raise ImportError(
        "aclnn_py's compiled core (aclnn_py._emu) is missing: install the package with "
        "'pip install .' so that cffi compiles csrc/." + _hint
    ) from exc

MSG_LEN: int = lib.EMU_MSG_LEN
MAX_THREADS: int = lib.EMU_MAX_THREADS


def new_msg() -> Any:
    """A C buffer for a fault message."""
    return ffi.new("char[]", MSG_LEN)


def msg_text(buf) -> str:
    """The text of a C message buffer (``new_msg``)."""
    return ffi.string(buf).decode("utf-8", "replace")


def last_c_msg() -> str:
    """The message the C core kept for this thread's last failing stream call that was given no
    message buffer (``emu_last_msg``)."""
    buf = new_msg()
    lib.emu_last_msg(buf, MSG_LEN)
    return msg_text(buf)


def new_tasks(n: int) -> Any:
    """``n`` zeroed C task records (``emu_task[n]``)."""
    return ffi.new("emu_task[]", n)


# ------------------------------------------------------------------------ kernel threads ----


def num_threads() -> int:
    """The threads that compute kernels: one pool shared by every stream, the calling stream's
    thread counted (docs/runtime.md "Kernel threads")."""
    return int(lib.aclk_num_threads())


def set_num_threads(n: int) -> None:
    """Use ``n`` kernel threads (1 to ``MAX_THREADS``) from the next kernel on; callable at any
    time from any thread (a kernel in flight finishes with the threads it has). The configured
    value (``ACLNN_EMU_NUM_THREADS``) replaces it again at the next ``acl.init`` or
    ``acl.finalize``.

    Raises:
        TypeError: ``n`` is not an int.  ValueError: ``n`` is out of range.
    """
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"set_num_threads: n must be an int, not {type(n).__name__}")
    value = n.__index__()
    if not 1 <= value <= MAX_THREADS:
        raise ValueError(f"set_num_threads: n={value} is out of range: the kernel thread count "
                         f"must be between 1 and {MAX_THREADS}")
    lib.aclk_set_num_threads(value)


def apply_thread_config(at_import: bool = False) -> None:
    """Size the kernel pool from ``ACLNN_EMU_NUM_THREADS`` (the environment, or acl.init's JSON
    file): when the runtime is imported, and at acl.init / acl.finalize. A bad value is left for
    acl.init to report: at import the pool gets the default (the cores this process may use),
    later the count stays as it is."""
    try:
        n = config.num_threads()
    except config.ConfigError:
        if not at_import:
            return
        n = config.default_num_threads()
    lib.aclk_set_num_threads(n)


apply_thread_config(at_import=True)


# ------------------------------------------------------------------------------ tracing ----

TRACE_MAX: int = lib.EMU_TRACE_MAX


def trace_enable(on: bool) -> None:
    """Start (or stop) recording every task the streams run (``ACLNN_EMU_TRACE``)."""
    lib.emu_trace_enable(1 if on else 0)


def trace_drain() -> tuple[list, int]:
    """The task records gathered since the last drain, oldest first, as tuples ``(stream,
    device, type, kernel, status, enq_tid, run_tid, flow, enq_ns, start_ns, end_ns, n, event,
    seq, op, step)``, and the count of records dropped since tracing started (the C buffer holds
    at most ``TRACE_MAX``)."""
    out: list = []
    with _trace_lock:
        buf = _trace_buf.get("buf")
        if buf is None:
            buf = _trace_buf["buf"] = ffi.new("emu_trace_rec[]", _TRACE_CHUNK)
        while True:
            n = lib.emu_trace_drain(buf, _TRACE_CHUNK)
            for r in buf[0:n]:
                out.append((r.stream, r.device, r.type, r.kernel, r.status, r.enq_tid,
                            r.run_tid, r.flow, r.enq_ns, r.start_ns, r.end_ns, r.n, r.event,
                            r.seq, ffi.string(r.op).decode("utf-8", "replace"),
                            ffi.string(r.step).decode("utf-8", "replace")))
            if n < _TRACE_CHUNK:
                return out, int(lib.emu_trace_dropped())


_TRACE_CHUNK = 256
_trace_lock = threading.Lock()
_trace_buf: dict = {}  # "buf": the drain buffer, made at the first drain


def now_ns() -> int:
    """The clock of the trace records (CLOCK_MONOTONIC, nanoseconds)."""
    return int(lib.emu_now_ns())


# ---------------------------------------------------------------------- `aclnn-py bench` ----


def isa_name() -> str:
    """The instruction-set level the kernels were dispatched to when the library loaded."""
    return ffi.string(lib.aclk_isa_name()).decode()


def llc_bytes() -> int:
    """The last-level cache this CPU's core shares (bytes): what a cold benchmark evicts."""
    return int(lib.aclk_llc_bytes())


def store_llc_bytes() -> int:
    """The last-level cache the kernels size their store policy by (bytes): ``ACLNN_EMU_LLC``
    if it is set to a valid size, else :func:`llc_bytes`."""
    return int(lib.aclk_store_llc_bytes())


def floor_call(kind: str, addrs: tuple, nbytes: int) -> Callable[[], None]:
    """The benchmark floor bound to its arguments: a same-footprint memory operation on the
    kernel pool over host addresses (device memory included; the caller keeps it alive).
    ``"copy"``: ``addrs = (dst, src)``, dst = src; ``"add"``: ``addrs = (a, b, out)``, out = a + b
    as 32-bit words (``nbytes`` a multiple of 4)."""
    p = [ffi.cast("void *", a) for a in addrs]
    if kind == "copy":
        copy, dst, src = lib.aclk_floor_copy, p[0], p[1]
        return lambda: copy(dst, src, nbytes)
    if kind == "add":
        add, a, b, out = lib.aclk_floor_add, p[0], p[1], p[2]
        return lambda: add(a, b, out, nbytes)
    raise ValueError(f"floor_call: kind must be 'copy' or 'add', not {kind!r}")


def floor_hardsigmoid_call(backward: bool, dtype: int, addrs: tuple,
                           n: int) -> Optional[Callable[[], int]]:
    """The benchmark's second floor bound to its arguments: our own hard-sigmoid kernel of
    ``n`` elements of ``dtype`` (an aclDataType) over host addresses, alpha 1/6, beta 0.5, on
    the kernel pool, called directly (no plan, no stream): ``aclk_hardsigmoid_fwd`` with
    ``addrs = (x, y)``, or ``aclk_hardsigmoid_bwd`` (``backward``) with ``addrs = (grad, x,
    out)``. The call returns the kernel's status (0). None when the kernel does not take the
    dtype."""
    impl = lib.aclk_hardsigmoid_bwd_impl if backward else lib.aclk_hardsigmoid_fwd_impl
    if impl(dtype, n) == ffi.NULL:
        return None
    p = [ffi.cast("void *", a) for a in addrs]
    alpha, beta = 1 / 6, 0.5
    if backward:
        bwd, g, x, out = lib.aclk_hardsigmoid_bwd, p[0], p[1], p[2]
        return lambda: bwd(dtype, g, x, out, n, alpha, beta)
    fwd, x, y = lib.aclk_hardsigmoid_fwd, p[0], p[1]
    return lambda: fwd(dtype, x, y, n, alpha, beta)


def probe_call(chunks: int) -> Callable[[], None]:
    """The benchmark's compute probe bound to its size: ``chunks`` chunks of a fixed float
    workload in L1 on the kernel pool (about 6 us each on one core of a 2020s x86 machine)."""
    probe = lib.aclk_probe
    return lambda: probe(chunks)


__all__ = ["ffi", "lib", "new_msg", "msg_text", "last_c_msg", "new_tasks", "MSG_LEN",
           "MAX_THREADS", "num_threads", "set_num_threads", "apply_thread_config", "isa_name",
           "llc_bytes", "store_llc_bytes", "floor_call", "floor_hardsigmoid_call", "probe_call",
           "TRACE_MAX",
           "trace_enable", "trace_drain", "now_ns"]
