"""acl.rt: devices, contexts, streams, events and memory (pyACL names and returns).

Each name is the runtime's function itself (no wrapper on the launch path); its docstring names
the CANN C function (CANN's AscendCL API reference, acl_rt.h), the return convention and the main
codes. See docs/runtime.md and docs/return_codes.md.
"""

from .. import runtime as _rt

set_device = _rt.set_device
reset_device = _rt.reset_device
get_device = _rt.get_device
get_device_count = _rt.get_device_count
get_run_mode = _rt.get_run_mode
create_context = _rt.create_context
destroy_context = _rt.destroy_context
set_context = _rt.set_context
get_context = _rt.get_context
create_stream = _rt.create_stream
create_stream_with_config = _rt.create_stream_with_config
destroy_stream = _rt.destroy_stream
synchronize_stream = _rt.synchronize_stream
synchronize_stream_with_timeout = _rt.synchronize_stream_with_timeout
synchronize_device = _rt.synchronize_device
malloc = _rt.malloc
free = _rt.free
malloc_host = _rt.malloc_host
free_host = _rt.free_host
memcpy = _rt.memcpy
memcpy_async = _rt.memcpy_async
memset = _rt.memset
memset_async = _rt.memset_async
get_mem_info = _rt.get_mem_info
create_event = _rt.create_event
create_event_with_flag = _rt.create_event_with_flag
destroy_event = _rt.destroy_event
record_event = _rt.record_event
reset_event = _rt.reset_event
query_event_status = _rt.query_event_status
synchronize_event = _rt.synchronize_event
stream_wait_event = _rt.stream_wait_event
event_elapsed_time = _rt.event_elapsed_time
create_event_ex_with_flag = _rt.create_event_with_flag
synchronize_event_with_timeout = _rt.synchronize_event_with_timeout
synchronize_device_with_timeout = _rt.synchronize_device_with_timeout
query_event = _rt.query_event
stream_query = _rt.stream_query
device_can_access_peer = _rt.device_can_access_peer
device_enable_peer_access = _rt.device_enable_peer_access
device_disable_peer_access = _rt.device_disable_peer_access
set_sys_param_opt = _rt.set_sys_param_opt
get_sys_param_opt = _rt.get_sys_param_opt
ctx_set_sys_param_opt = _rt.ctx_set_sys_param_opt
ctx_get_sys_param_opt = _rt.ctx_get_sys_param_opt
get_last_error = _rt.get_last_error
peek_at_last_error = _rt.peek_at_last_error
query_device_status = _rt.query_device_status

__all__ = [
    "set_device", "reset_device", "get_device", "get_device_count", "get_run_mode",
    "create_context", "destroy_context", "set_context", "get_context", "create_stream",
    "destroy_stream", "synchronize_stream", "synchronize_device", "malloc", "free",
    "malloc_host", "free_host", "memcpy", "memcpy_async", "memset", "memset_async",
    "get_mem_info", "create_event", "destroy_event", "record_event", "reset_event",
    "query_event_status", "synchronize_event", "stream_wait_event", "event_elapsed_time",
    "create_stream_with_config", "synchronize_stream_with_timeout", "create_event_with_flag",
    "create_event_ex_with_flag", "synchronize_event_with_timeout",
    "synchronize_device_with_timeout", "query_event", "stream_query", "device_can_access_peer",
    "device_enable_peer_access", "device_disable_peer_access", "set_sys_param_opt",
    "get_sys_param_opt", "ctx_set_sys_param_opt", "ctx_get_sys_param_opt", "get_last_error",
    "peek_at_last_error", "query_device_status",
]
