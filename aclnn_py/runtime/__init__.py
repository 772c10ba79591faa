"""The emulated device runtime: devices, contexts, streams, events and device memory.

``aclnn_py.acl`` is a thin pyACL-shaped facade over this package. Streams, events and the
allocation table live in C (csrc/runtime); this package keeps the handle registries that let every
call tell a live handle from a stale one, and it implements CANN's argument checks and codes
(CANN's aclrt docs). Functions here return status codes and record messages; they never raise
for anything a C caller could have passed.

Modules, each depending only on those above it:

- ``core``: the compiled library, wrapped in one place (the only importer of ``aclnn_py._emu``);
- ``state``: the objects, the registries and the lock (``S``), handle lookups, the fork reset;
- ``streams``: streams, task submission, the functional layer's private streams;
- ``memory``: device and host memory, copies and fills, the one device range check;
- ``devices``: acl.init / finalize, devices, contexts, the run mode;
- ``events``: events;
- ``host``: host kernels (a custom operator's Python kernel as a stream task);
- ``launch``: executor launches (a plan's C task templates, bound and enqueued in one call).

``num_threads`` / ``set_num_threads`` (from ``core``) read and set the kernel thread count;
``isa_name``, ``llc_bytes``, ``store_llc_bytes``, ``floor_call``, ``floor_hardsigmoid_call`` and
``probe_call`` (from ``core``) serve ``aclnn-py bench``.

The enumerations are in :mod:`aclnn_py.enums`. Every public name of the modules is re-exported
here: ``from aclnn_py import runtime as rt; rt.malloc(...)``.
"""

from __future__ import annotations

from ..status import aclError as E
from . import core, devices, events, host, memory, state, streams  # noqa: F401
from .devices import (
    create_context,
    ctx_get_sys_param_opt,
    ctx_set_sys_param_opt,
    destroy_context,
    device_can_access_peer,
    device_disable_peer_access,
    device_enable_peer_access,
    finalize,
    get_context,
    get_device,
    get_device_count,
    get_last_error,
    get_run_mode,
    get_sys_param_opt,
    init,
    memory_used,
    peek_at_last_error,
    query_device_status,
    reset_device,
    set_context,
    set_device,
    set_sys_param_opt,
)
from .events import (
    create_event,
    create_event_with_flag,
    destroy_event,
    event_elapsed_time,
    query_event,
    query_event_status,
    record_event,
    reset_event,
    stream_wait_event,
    synchronize_event,
    synchronize_event_with_timeout,
)
from .host import (
    exit_forked_child,
    host_forked,
    range_device_locked,
    set_host_kernel,
    submit_host,
)
from .memory import (
    HOST_ADDRESS_END,
    MEMCPY_D2D,
    MEMCPY_D2H,
    MEMCPY_DEFAULT,
    MEMCPY_H2B2D,
    MEMCPY_H2D,
    MEMCPY_H2H,
    buffer_address,
    check_device_range,
    check_host_range,
    check_range,
    detach_device_memory,
    device_alloc,
    device_free,
    find,
    find_freed,
    free,
    free_epoch,
    free_host,
    freed_text,
    get_mem_info,
    host_buffer,
    is_device,
    malloc,
    malloc_host,
    mem_flush,
    mem_invalidate,
    memcpy,
    memcpy_async,
    memset,
    memset_async,
    not_live_text,
    range_device,
    raw_free,
    raw_memcpy,
    release_device_memory,
)
from .state import (
    Context,
    Event,
    S,
    Stream,
    current,
    current_default_stream,
    current_device,
    lookup,
    ptr,
    require_int,
)
from .streams import (
    add_range,
    create_stream,
    create_stream_with_config,
    destroy_stream,
    internal_stream,
    new_task,
    open_stream,
    refuse_in_kernel,
    resolve_stream,
    stream_query,
    submit,
    synchronize_device,
    synchronize_device_with_timeout,
    synchronize_stream,
    synchronize_stream_with_timeout,
)

last_c_msg = core.last_c_msg
num_threads = core.num_threads
set_num_threads = core.set_num_threads
isa_name = core.isa_name
llc_bytes = core.llc_bytes
store_llc_bytes = core.store_llc_bytes
floor_call = core.floor_call
floor_hardsigmoid_call = core.floor_hardsigmoid_call
probe_call = core.probe_call
trace_enable = core.trace_enable
trace_drain = core.trace_drain
now_ns = core.now_ns

__all__ = [
    "core", "devices", "events", "memory", "state", "streams", "E",
    # devices
    "init", "finalize", "set_device", "reset_device", "get_device", "get_device_count",
    "create_context", "destroy_context", "set_context", "get_context", "get_run_mode",
    "memory_used", "device_can_access_peer", "device_enable_peer_access",
    "device_disable_peer_access", "set_sys_param_opt", "get_sys_param_opt",
    "ctx_set_sys_param_opt", "ctx_get_sys_param_opt", "get_last_error", "peek_at_last_error",
    "query_device_status",
    # streams
    "open_stream", "create_stream", "resolve_stream", "destroy_stream",
    "synchronize_stream", "synchronize_device", "new_task", "add_range", "submit",
    "internal_stream", "last_c_msg", "create_stream_with_config", "refuse_in_kernel",
    "synchronize_stream_with_timeout", "synchronize_device_with_timeout", "stream_query",
    # kernel threads
    "num_threads", "set_num_threads",
    # aclnn-py bench
    "isa_name", "llc_bytes", "store_llc_bytes", "floor_call", "floor_hardsigmoid_call",
    "probe_call",
    # host kernels (aclnn_py.custom)
    "set_host_kernel", "submit_host", "range_device_locked", "host_forked", "exit_forked_child",
    # the trace (ACLNN_EMU_TRACE)
    "trace_enable", "trace_drain", "now_ns",
    # memory
    "MEMCPY_H2H", "MEMCPY_H2D", "MEMCPY_D2H", "MEMCPY_D2D", "MEMCPY_DEFAULT", "MEMCPY_H2B2D",
    "HOST_ADDRESS_END", "check_range", "free_epoch", "range_device", "find", "find_freed",
    "is_device",
    "freed_text", "not_live_text", "check_device_range", "check_host_range", "device_alloc",
    "malloc", "device_free", "free", "detach_device_memory", "release_device_memory",
    "raw_memcpy", "raw_free",
    "malloc_host", "free_host", "buffer_address", "host_buffer", "memcpy", "memcpy_async",
    "memset", "memset_async", "get_mem_info", "mem_flush", "mem_invalidate",
    # events
    "create_event", "destroy_event", "record_event", "reset_event", "stream_wait_event",
    "query_event_status", "synchronize_event", "event_elapsed_time", "create_event_with_flag",
    "synchronize_event_with_timeout", "query_event",
    # state
    "S", "Stream", "Context", "Event", "current", "current_default_stream", "current_device",
    "lookup", "ptr", "require_int",
]
