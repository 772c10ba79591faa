"""The emulated device runtime: devices, contexts, streams, events and device memory.

``aclnn_py.acl`` is a thin pyACL-shaped facade over this module. Streams, events and the
allocation table live in C (csrc/runtime); this module keeps the handle registries that let every
call tell a live handle from a stale one, and it implements CANN's argument checks and codes
(CANN's aclrt docs). Functions here return status codes and record messages;
they never raise for anything a C caller could have passed.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Optional

from . import config
from ._C import ffi, lib, msg_text, new_msg
from .cint import c_int, fits
from .status import aclError as E
from .status import record

# ------------------------------------------------------------------------------ enums -------

MEMCPY_H2H, MEMCPY_H2D, MEMCPY_D2H, MEMCPY_D2D, MEMCPY_DEFAULT, MEMCPY_H2B2D = range(6)
# aclrtMemcpy accepts these six kinds (CANN's aclrt docs); INNER/INTER_DEVICE_TO_DEVICE (6, 7)
# exist in the enum but are rejected with ACL_ERROR_INVALID_PARAM.
_MEMCPY_KINDS = {
    MEMCPY_H2H: ("ACL_MEMCPY_HOST_TO_HOST", False, False),
    MEMCPY_H2D: ("ACL_MEMCPY_HOST_TO_DEVICE", True, False),
    MEMCPY_D2H: ("ACL_MEMCPY_DEVICE_TO_HOST", False, True),
    MEMCPY_D2D: ("ACL_MEMCPY_DEVICE_TO_DEVICE", True, True),
    MEMCPY_DEFAULT: ("ACL_MEMCPY_DEFAULT", None, None),
    MEMCPY_H2B2D: ("ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE", True, False),
}  # kind -> (name, dst is device, src is device); None = decided from the pointer


# --------------------------------------------------------------------------- objects -------


@dataclass(eq=False)
class Stream:
    handle: int  # the C stream's address: what users hold
    device: int
    context: Context
    is_default: bool = False
    private: bool = False  # the functional layer's own: not part of any device synchronize


@dataclass(eq=False)
class Context:
    handle: int
    device: int
    default_stream: Optional[Stream] = None
    streams: list = field(default_factory=list)  # explicit streams created in this context
    is_default: bool = False  # the implicit context of aclrtSetDevice


@dataclass(eq=False)
class Event:
    handle: int


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.initialized = False  # acl.init called (and not finalized)
        self.aclnn_initialized = False
        self.device_refs: dict[int, int] = {}  # device -> set_device count
        self.default_ctx: dict[int, Context] = {}
        self.contexts: dict[int, Context] = {}
        self.streams: dict[int, Stream] = {}
        self.events: dict[int, Event] = {}
        self.host_allocs: dict[int, int] = {}  # malloc_host pointer -> size
        self.user_allocs: dict[int, int] = {}  # aclrtMalloc pointer -> device
        self.freed: dict[int, str] = {}  # recently freed device bases -> how, for messages
        self.tls = threading.local()
        self.ctx_ids = itertools.count(1)
        # after fork(): the parent's handles and device allocations, invalid here, kept only
        # to name them in messages
        self.parent_handles: set[int] = set()
        self.parent_allocs: dict[int, int] = {}  # base -> device


S = _State()


def _ptr(value) -> Optional[int]:
    """Normalise a pointer argument: None/0 -> 0, an int -> itself, else None (a type error)."""
    try:  # a handle is a pointer: uintptr_t, negative values wrap (see aclnn_py.cint)
        return c_int("", "handle", value, "uint64", allow_none=True)
    except TypeError:
        return None


def require_int(api: str, name: str, value, allow_none: bool = False,
                ctype: str = "uint64") -> int:
    """A Python argument as the C parameter of type ``ctype`` sees it (``cint.c_int``): 64-bit
    types wrap, 32-bit ones come back unchanged for the caller's range check; TypeError for what
    C could not compile. The default, uint64, suits pointers and sizes."""
    return c_int(api, name, value, ctype, allow_none)


# ---------------------------------------------------------------------------- init -----------


def init(config_path) -> int:
    api = "aclInit"
    with S.lock:
        if S.initialized:
            return record(api, E.ACL_ERROR_REPEAT_INITIALIZE,
                          "aclInit was already called in this process; call aclFinalize first")
        if config_path not in (None, ""):
            if not isinstance(config_path, (str, bytes)):
                raise TypeError(f"{api}: config_path must be a str, not "
                                f"{type(config_path).__name__}")
            path = config_path.decode() if isinstance(config_path, bytes) else config_path
            try:
                config.load_json(path)
            except FileNotFoundError:
                return record(api, E.ACL_ERROR_INVALID_FILE,
                              f"config file {path!r} does not exist")
            except (OSError, UnicodeDecodeError) as exc:
                return record(api, E.ACL_ERROR_INVALID_FILE, f"config file {path!r}: {exc}")
            except ValueError as exc:  # JSONDecodeError is a ValueError too
                if isinstance(exc, config.ConfigError):
                    return record(api, E.ACL_ERROR_FILE_ATTR_INVALID, f"{path}: {exc}")
                return record(api, E.ACL_ERROR_PARSE_FILE, f"{path} is not valid JSON: {exc}")
        try:  # the environment too (keys the file set override it)
            config.validate()
        except config.ConfigError as exc:
            config.clear_overrides()  # a failed aclInit initialises nothing
            return record(api, E.ACL_ERROR_INVALID_PARAM, f"environment: {exc}")
        S.initialized = True
        return 0


def finalize() -> int:
    api = "aclFinalize"
    with S.lock:
        if not S.initialized:
            return record(api, E.ACL_ERROR_REPEAT_FINALIZE,
                          "aclFinalize called without a matching aclInit (or twice)")
        for dev in list(S.device_refs):
            _release_device(dev)
        S.initialized = False
        config.clear_overrides()
        return 0


# -------------------------------------------------------------------- devices, contexts ----


def _current() -> Optional[Context]:
    ctx = getattr(S.tls, "ctx", None)
    if ctx is not None and ctx.handle in S.contexts:
        return ctx
    return None


def _new_context(device: int, is_default: bool) -> Optional[Context]:
    handle = 0x7E00_0000_0000 + (next(S.ctx_ids) << 8)
    ctx = Context(handle=handle, device=device, is_default=is_default)
    sh = lib.emu_stream_create(device)
    if not sh:
        return None
    ctx.default_stream = Stream(handle=sh, device=device, context=ctx, is_default=True)
    S.streams[sh] = ctx.default_stream
    S.contexts[handle] = ctx
    return ctx


def _destroy_context(ctx: Context) -> None:
    for st in list(ctx.streams) + [ctx.default_stream]:
        if st is not None and st.handle in S.streams:
            del S.streams[st.handle]
            lib.emu_stream_destroy(st.handle)
    ctx.streams.clear()
    S.contexts.pop(ctx.handle, None)
    if getattr(S.tls, "ctx", None) is ctx:
        S.tls.ctx = None


def _check_device(api: str, device_id: int) -> int:
    count, ret = config.checked(api, config.device_count)
    if ret:
        return ret
    if not 0 <= device_id < count:
        return record(api, E.ACL_ERROR_RT_INVALID_DEVICEID,
                      f"device id {device_id} is out of range: this emulator has {count} "
                      f"device(s), ids 0..{count - 1} (set ACLNN_EMU_DEVICE_COUNT for more)")
    return 0


def set_device(device_id) -> int:
    api = "aclrtSetDevice"
    device_id = require_int(api, "deviceId", device_id, ctype="int32")
    with S.lock:
        ret = _check_device(api, device_id)
        if ret:
            return ret
        ctx = S.default_ctx.get(device_id)
        if ctx is None:
            ctx = _new_context(device_id, True)
            if ctx is None:
                return record(api, E.ACL_ERROR_RT_NO_STREAM_RESOURCE, "could not start a stream")
            S.default_ctx[device_id] = ctx
        S.device_refs[device_id] = S.device_refs.get(device_id, 0) + 1
        S.tls.ctx = ctx
        return 0


def _release_device(device_id: int) -> None:
    """Waits for the device's streams, destroys its contexts and streams, and frees the memory
    aclrtMalloc gave out on it (as aclrtResetDevice releases the device's resources)."""
    S.device_refs.pop(device_id, None)
    for ctx in [c for c in S.contexts.values() if c.device == device_id]:
        _destroy_context(ctx)
    S.default_ctx.pop(device_id, None)
    for ptr in [p for p, d in S.user_allocs.items() if d == device_id]:
        del S.user_allocs[ptr]
        if lib.emu_mem_free(ptr) == 0:
            S.freed[ptr] = f"by aclrtResetDevice({device_id})"


def reset_device(device_id) -> int:
    api = "aclrtResetDevice"
    device_id = require_int(api, "deviceId", device_id, ctype="int32")
    with S.lock:
        ret = _check_device(api, device_id)
        if ret:
            return ret
        refs = S.device_refs.get(device_id, 0)
        if refs > 1:
            S.device_refs[device_id] = refs - 1
            return 0
        if refs == 1:
            _release_device(device_id)
        return 0


def get_device() -> tuple[int, int]:
    ctx = _current()
    if ctx is None:
        return 0, record("aclrtGetDevice", E.ACL_ERROR_RT_CONTEXT_NULL,
                         "no device is set in this thread: call aclrtSetDevice first")
    return ctx.device, 0


def get_device_count() -> tuple[int, int]:
    count, ret = config.checked("aclrtGetDeviceCount", config.device_count)
    return (0, ret) if ret else (count, 0)


def create_context(device_id) -> tuple[int, int]:
    api = "aclrtCreateContext"
    device_id = require_int(api, "deviceId", device_id, ctype="int32")
    with S.lock:
        ret = _check_device(api, device_id)
        if ret:
            return 0, ret
        ctx = _new_context(device_id, False)
        if ctx is None:
            return 0, record(api, E.ACL_ERROR_RT_NO_STREAM_RESOURCE, "could not start a stream")
        S.tls.ctx = ctx
        return ctx.handle, 0


def _lookup(api: str, what: str, handle, registry: dict):
    """(object, 0) for a live handle in registry; (None, code) for null or stale handles;
    TypeError for what C could not compile."""
    h = _ptr(handle)
    if h is None:
        raise TypeError(f"{api}: {what} must be an int handle, not {type(handle).__name__}")
    if h == 0:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM, f"{what} is null")
    obj = registry.get(h)
    if obj is None:
        if h in S.parent_handles:
            return None, record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                                f"{what} 0x{h:x} was created by the parent process before "
                                "fork(): runtime objects do not cross fork(); create a new one "
                                "in this process")
        return None, record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                            f"{what} 0x{h:x} is not a live {what} (destroyed, or never created)")
    return obj, 0


def _lookup_context(api: str, context) -> tuple[Optional[Context], int]:
    return _lookup(api, "context", context, S.contexts)


def destroy_context(context) -> int:
    api = "aclrtDestroyContext"
    with S.lock:
        ctx, ret = _lookup_context(api, context)
        if ret:
            return ret
        if ctx.is_default:
            return record(api, E.ACL_ERROR_INVALID_PARAM,
                          f"context 0x{ctx.handle:x} is device {ctx.device}'s default context; it "
                          "is released by aclrtResetDevice, not aclrtDestroyContext")
        _destroy_context(ctx)
        return 0


def set_context(context) -> int:
    api = "aclrtSetCurrentContext"
    with S.lock:
        ctx, ret = _lookup_context(api, context)
        if ret:
            return ret
        S.tls.ctx = ctx
        return 0


def get_context() -> tuple[int, int]:
    ctx = _current()
    if ctx is None:
        return 0, record("aclrtGetCurrentContext", E.ACL_ERROR_RT_CONTEXT_NULL,
                         "this thread has no current context: call aclrtSetDevice or "
                         "aclrtCreateContext first")
    return ctx.handle, 0


def get_run_mode() -> tuple[int, int]:
    return 1, 0  # ACL_HOST: the program runs on the host and drives the (emulated) device


# ------------------------------------------------------------------------------ streams ----


def create_stream() -> tuple[int, int]:
    api = "aclrtCreateStream"
    with S.lock:
        ctx = _current()
        if ctx is None:
            return 0, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                             "no current context: call aclrtSetDevice first")
        sh = lib.emu_stream_create(ctx.device)
        if not sh:
            return 0, record(api, E.ACL_ERROR_RT_NO_STREAM_RESOURCE, "could not start a stream")
        st = Stream(handle=sh, device=ctx.device, context=ctx)
        ctx.streams.append(st)
        S.streams[sh] = st
        return sh, 0


def resolve_stream(api: str, stream) -> tuple[Optional[Stream], int]:
    """A live stream for a handle; None/0 means the current context's default stream."""
    if _ptr(stream) == 0:
        ctx = _current()
        if ctx is None:
            return None, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                                "stream is null (the default stream) but this thread has no "
                                "current context: call aclrtSetDevice first")
        return ctx.default_stream, 0
    return _lookup(api, "stream", stream, S.streams)


def destroy_stream(stream) -> int:
    api = "aclrtDestroyStream"
    with S.lock:
        if _ptr(stream) == 0:
            return record(api, E.ACL_ERROR_INVALID_PARAM, "stream is null")
        st, ret = resolve_stream(api, stream)
        if ret:
            return ret
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


def synchronize_stream(stream) -> int:
    api = "aclrtSynchronizeStream"
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return ret
    buf = new_msg()
    code = lib.emu_stream_synchronize(st.handle, buf, len(buf))
    if code == E.ACL_ERROR_RT_INVALID_HANDLE:
        return _stream_gone(api, st)
    return _collect_fault(api, code, buf)


def synchronize_device() -> int:
    api = "aclrtSynchronizeDevice"
    with S.lock:
        ctx = _current()
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


# ------------------------------------------------------------------------------- memory ----


def current_device(api: str) -> tuple[int, int]:
    ctx = _current()
    if ctx is None:
        return -1, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                          "no device is set in this thread: call aclrtSetDevice first")
    return ctx.device, 0


# aclrtMemMallocPolicy values whose allocations CANN does not pad by 32 bytes
_HUGE1G_POLICIES = (6, 7)


def device_alloc(api: str, device: int, size: int, policy: int = 0) -> tuple[int, int]:
    limit, ret = config.checked(api, config.mem_limit)
    if ret:
        return 0, ret
    poison, ret = config.checked(api, config.poison)
    if ret:
        return 0, ret
    enabled, byte = poison
    out = ffi.new("uintptr_t *")
    pad = 0 if (policy & 0xFF) in _HUGE1G_POLICIES else 1
    code = lib.emu_mem_alloc(device, size, limit, 1 if enabled else 0, byte, pad, out)
    if code:
        used = lib.emu_mem_used(device)
        return 0, record(api, code,
                         f"cannot allocate {size} bytes on device {device}: {used} of "
                         f"{limit} bytes are in use (ACLNN_EMU_MEM_LIMIT)")
    with S.lock:
        S.freed.pop(out[0], None)
    return out[0], 0


def malloc(size, policy) -> tuple[int, int]:
    api = "aclrtMalloc"
    size = require_int(api, "size", size)
    policy = require_int(api, "policy", policy, ctype="uint32")
    if not fits(policy, "uint32"):
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                         f"policy {policy} does not fit the uint32 aclrtMemMallocPolicy parameter")
    if size <= 0:
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                         f"size must be greater than 0, got {size}")
    device, ret = current_device(api)
    if ret:
        return 0, ret
    ptr, ret = device_alloc(api, device, size, policy)
    if ptr:
        with S.lock:
            S.user_allocs[ptr] = device
    return ptr, ret


def device_free(api: str, ptr: int) -> int:
    code = lib.emu_mem_free(ptr)
    if code:
        how = S.freed.get(ptr)
        if how:
            return record(api, code, f"0x{ptr:x} was already freed ({how}): double free")
        base, size, dev = find(ptr)
        if base:
            return record(api, code, f"0x{ptr:x} is inside the device allocation 0x{base:x} "
                          f"({size} bytes) but is not its start address")
        if ptr in S.host_allocs:
            return record(api, code, f"0x{ptr:x} comes from aclrtMallocHost: free it with "
                          "aclrtFreeHost")
        return record(api, code, f"0x{ptr:x} is not a device allocation of aclrtMalloc")
    with S.lock:
        S.user_allocs.pop(ptr, None)
        S.freed[ptr] = f"by {api}"
        if len(S.freed) > 4096:
            S.freed.pop(next(iter(S.freed)))
    return 0


def free(dev_ptr) -> int:
    api = "aclrtFree"
    ptr = require_int(api, "devPtr", dev_ptr, allow_none=True)
    if ptr == 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, "devPtr is null")
    return device_free(api, ptr)


def malloc_host(size) -> tuple[int, int]:
    api = "aclrtMallocHost"
    size = require_int(api, "size", size)
    if size <= 0:
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM, f"size must be greater than 0, got {size}")
    ptr = lib.emu_host_alloc(size)
    if not ptr:
        return 0, record(api, E.ACL_ERROR_RT_MEMORY_ALLOCATION, f"cannot allocate {size} bytes")
    with S.lock:
        S.host_allocs[ptr] = size
    return ptr, 0


def free_host(host_ptr) -> int:
    api = "aclrtFreeHost"
    ptr = require_int(api, "hostPtr", host_ptr, allow_none=True)
    if ptr == 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, "hostPtr is null")
    with S.lock:
        if ptr not in S.host_allocs:
            if find(ptr)[0]:
                return record(api, E.ACL_ERROR_RT_MEMORY_FREE,
                              f"0x{ptr:x} is device memory: free it with aclrtFree")
            return record(api, E.ACL_ERROR_RT_MEMORY_FREE,
                          f"0x{ptr:x} is not a live aclrtMallocHost allocation (double free?)")
        del S.host_allocs[ptr]
    lib.emu_host_free(ptr)
    return 0


def find(addr: int) -> tuple[int, int, int]:
    """(base, size, device) of the live device allocation holding addr, or (0, 0, -1)."""
    base = ffi.new("uintptr_t *")
    size = ffi.new("uint64_t *")
    dev = ffi.new("int32_t *")
    if lib.emu_mem_find(addr, base, size, dev):
        return base[0], size[0], dev[0]
    return 0, 0, -1


def find_freed(addr: int) -> tuple[int, int]:
    """(base, size) of the recently freed device allocation holding addr, or (0, 0)."""
    base = ffi.new("uintptr_t *")
    size = ffi.new("uint64_t *")
    if lib.emu_mem_find_freed(addr, base, size):
        return base[0], size[0]
    return 0, 0


def freed_text(addr: int) -> str:
    """' (freed device memory: ...)' when addr lies in recently freed device memory, else ''."""
    base, size = find_freed(addr)
    if not base:
        return ""
    how = S.freed.get(base, "by aclrtFree")
    return (f" (it lies in the device allocation [0x{base:x}, 0x{base + size:x}), freed {how}:"
            " a use after free)")


def check_device_range(api: str, what: str, addr: int, nbytes: int) -> int:
    """0 if [addr, addr+nbytes) lies in one live device allocation, else a recorded code."""
    dev = ffi.new("int32_t *")
    rc = lib.emu_mem_check_range(addr, nbytes, dev)
    if rc == lib.EMU_MEM_OK:
        return 0
    if rc == lib.EMU_MEM_HOST:
        hint = " (it comes from aclrtMallocHost)" if addr in S.host_allocs else ""
        return record(api, E.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      f"{what} 0x{addr:x} is not device memory{hint}: expected a live "
                      "allocation of aclrtMalloc")
    if rc == lib.EMU_MEM_NOT_LIVE:
        return record(api, E.ACL_ERROR_RT_PARAM_INVALID, not_live_text(what, addr, dev[0]))
    base, size, _ = find(addr)
    return record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                  f"{what} bytes [0x{addr:x}, 0x{addr + nbytes:x}) run past the end of the "
                  f"device allocation [0x{base:x}, 0x{base + size:x}) ({size} bytes)")


def not_live_text(what: str, addr: int, device: int) -> str:
    """Why an address in a device's address range is not usable: freed, allocated by the parent
    process before fork(), or never allocated."""
    base, _ = find_freed(addr)
    if base and base in S.parent_allocs:
        return (f"{what} 0x{addr:x} lies in device memory the parent process allocated before "
                "fork(): device memory does not cross fork(); allocate it again in this process")
    freed = freed_text(addr)
    if freed:
        return f"{what} 0x{addr:x} is not inside a live device allocation{freed}"
    base_p, size_p = ffi.new("uintptr_t *"), ffi.new("uint64_t *")
    if lib.emu_mem_find_before(addr, base_p, size_p):
        end = base_p[0] + size_p[0]
        return (f"{what} 0x{addr:x} lies {addr - end} bytes past the end of the device "
                f"allocation [0x{base_p[0]:x}, 0x{end:x}) ({size_p[0]} bytes), in device "
                f"{device}'s memory but not inside a live allocation")
    return (f"{what} 0x{addr:x} lies in device {device}'s memory but not inside a live "
            "allocation (never allocated)")


def is_device(addr: int) -> bool:
    """True when addr lies in a device's address range (live or not): the emulator's test of
    "device memory", a range test, never a guess."""
    return bool(lib.emu_mem_is_device(addr))


# host addresses at or above this are kernel space (or not canonical) on every 64-bit target:
# a negative pointer wraps there (uintptr_t), and no host buffer can lie there
HOST_ADDRESS_END = 1 << 63


def check_host_range(api: str, what: str, addr: int, nbytes: int) -> int:
    """0 when [addr, addr+nbytes) could be user-space host memory (what the emulator can tell;
    a garbage host pointer below that still faults, as in C), else a recorded 107016."""
    if addr >= HOST_ADDRESS_END or nbytes > HOST_ADDRESS_END - addr:
        return record(api, E.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      f"{what} bytes [0x{addr:x}, 0x{addr + nbytes:x}) are not host memory: "
                      "they reach past the user-space addresses of a 64-bit process (a negative "
                      "pointer wraps there, as uintptr_t does)")
    return 0


def _check_host(api: str, what: str, addr: int, nbytes: int = 0) -> int:
    ret = check_host_range(api, what, addr, nbytes)
    if ret:
        return ret
    if is_device(addr):
        live = find(addr)[0]
        state = "device memory" if live else f"in device memory{freed_text(addr)}"
        return record(api, E.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      f"{what} 0x{addr:x} is {state}, but the copy kind says host memory")
    return 0


def _memcpy_checks(api, dst, dest_max, src, count, kind):
    """CANN's order: count 0 -> success; null -> 100000; bad kind -> 100000;
    count > destMax -> 107000; then the emulator's memory-kind checks."""
    dst = require_int(api, "dst", dst, allow_none=True)
    src = require_int(api, "src", src, allow_none=True)
    dest_max = require_int(api, "destMax", dest_max)
    count = require_int(api, "count", count)
    kind = require_int(api, "kind", kind, ctype="int32")
    if count == 0:
        return None, 0
    if dst == 0 or src == 0:
        which = "dst" if dst == 0 else "src"
        return None, record(api, E.ACL_ERROR_INVALID_PARAM, f"{which} is null")
    if kind not in _MEMCPY_KINDS:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"kind {kind} is not a copy kind aclrtMemcpy accepts (0..5: "
                            "HOST_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, "
                            "DEFAULT, HOST_TO_BUF_TO_DEVICE)")
    if count < 0 or dest_max < 0 or count > dest_max:
        return None, record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                            f"count {count} is greater than destMax {dest_max}")
    name, dst_dev, src_dev = _MEMCPY_KINDS[kind]
    if dst_dev is None:  # ACL_MEMCPY_DEFAULT: the system decides from the pointers
        dst_dev, src_dev = is_device(dst), is_device(src)
    for what, addr, on_dev in (("dst", dst, dst_dev), ("src", src, src_dev)):
        ret = (check_device_range(api, f"{what} ({name})", addr, count) if on_dev
               else _check_host(api, f"{what} ({name})", addr, count))
        if ret:
            return None, ret
    return (dst, src, count, kind, dst_dev, src_dev), 0


def memcpy(dst, dest_max, src, count, kind) -> int:
    api = "aclrtMemcpy"
    args, ret = _memcpy_checks(api, dst, dest_max, src, count, kind)
    if args is None:
        return ret
    dst, src, count = args[0], args[1], args[2]
    if lib.emu_memcpy(dst, src, count) != 0:  # re-checked under the table's lock
        return record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                      f"the device memory of the copy [0x{dst:x} <- 0x{src:x}, {count} bytes) "
                      "was freed by another thread during the call; nothing was copied")
    return 0


def _task(op: str, step: str):
    tasks = ffi.new("emu_task[1]")
    t = tasks[0]
    t.op = op.encode()[:63]
    t.step = step.encode()[:31]
    return tasks, t


def _add_range(t, name: str, ptr: int, nbytes: int) -> None:
    r = t.ranges[t.nranges]
    r.ptr, r.nbytes, r.name = ptr, nbytes, name.encode()[:31]
    t.nranges += 1


def memcpy_async(dst, dest_max, src, count, kind, stream) -> int:
    api = "aclrtMemcpyAsync"
    args, ret = _memcpy_checks(api, dst, dest_max, src, count, kind)
    if args is None:
        return ret  # count 0 returns success before any other check, the stream included
    dst, src, count, kind, dst_dev, src_dev = args
    if not dst_dev and not src_dev:
        return record(api, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                      "host-to-host copies cannot be asynchronous: use aclrtMemcpy")
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return ret
    tasks, t = _task(api, "Memcpy")
    t.type, t.a, t.c, t.n = lib.EMU_TASK_MEMCPY, src, dst, count
    if dst_dev:
        _add_range(t, "dst", dst, count)
    if src_dev:
        _add_range(t, "src", src, count)
    return submit(api, st, tasks, 1)


def _memset_checks(api, dev_ptr, max_count, value, count, device_only):
    ptr = require_int(api, "devPtr", dev_ptr, allow_none=True)
    max_count = require_int(api, "maxCount", max_count)
    value = require_int(api, "value", value, ctype="int32")
    count = require_int(api, "count", count)
    if count == 0:
        return None, 0
    if ptr == 0:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM, "devPtr is null")
    if not -(1 << 31) <= value < (1 << 31):
        return None, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"value {value} does not fit the int32_t parameter")
    if count < 0 or max_count < 0 or count > max_count:
        return None, record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                            f"count {count} is greater than maxCount {max_count}")
    if is_device(ptr) or device_only:
        ret = check_device_range(api, "devPtr", ptr, count)
    else:  # aclrtMemset on host memory: "decided by the system from the pointer"
        ret = check_host_range(api, "devPtr", ptr, count)
    if ret:
        return None, ret
    return (ptr, value, count), 0


def memset(dev_ptr, max_count, value, count) -> int:
    api = "aclrtMemset"
    args, ret = _memset_checks(api, dev_ptr, max_count, value, count, device_only=False)
    if args is None:
        return ret
    ptr, value, count = args
    # host or device: "decided by the system from the pointer" (by address range here)
    if lib.emu_memset(ptr, value, count) != 0:  # re-checked under the table's lock
        return record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                      f"devPtr 0x{ptr:x} was freed by another thread during the call; nothing "
                      "was written")
    return 0


def memset_async(dev_ptr, max_count, value, count, stream) -> int:
    api = "aclrtMemsetAsync"
    args, ret = _memset_checks(api, dev_ptr, max_count, value, count, device_only=True)
    if args is None:
        return ret
    ptr, value, count = args
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return ret
    tasks, t = _task(api, "Memset")
    t.type, t.c, t.n, t.value = lib.EMU_TASK_MEMSET, ptr, count, value
    _add_range(t, "devPtr", ptr, count)
    return submit(api, st, tasks, 1)


def get_mem_info(attr) -> tuple[int, int, int]:
    api = "aclrtGetMemInfo"
    attr = require_int(api, "attr", attr, ctype="int32")
    if not 0 <= attr <= 17:
        return 0, 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"attr {attr} is not an aclrtMemAttr (expected 0..17)")
    device, ret = current_device(api)
    if ret:
        return 0, 0, ret
    total, ret = config.checked(api, config.mem_limit)
    if ret:
        return 0, 0, ret
    used = lib.emu_mem_used(device)
    return max(total - used, 0), total, 0


# ------------------------------------------------------------------------------- events ----


def create_event() -> tuple[int, int]:
    h = lib.emu_event_create()
    if not h:
        return 0, record("aclrtCreateEvent", E.ACL_ERROR_RT_NO_EVENT_RESOURCE,
                         "out of host memory for an event")
    with S.lock:
        S.events[h] = Event(h)
    return h, 0


def _lookup_event(api: str, event) -> tuple[Optional[Event], int]:
    return _lookup(api, "event", event, S.events)


def destroy_event(event) -> int:
    api = "aclrtDestroyEvent"
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        del S.events[ev.handle]
    # invalid at once for new calls; queued records and waiting synchronizes keep it alive
    lib.emu_event_destroy(ev.handle)
    return 0


def _event_task(api: str, event, stream, kind: int, step: str) -> int:
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
        st, ret = resolve_stream(api, stream)
        if ret:
            return ret
        tasks, t = _task(api, step)
        t.type, t.event = kind, ev.handle
        return submit(api, st, tasks, 1)


def record_event(event, stream) -> int:
    return _event_task("aclrtRecordEvent", event, stream, lib.EMU_TASK_EVENT_RECORD, "Record")


def reset_event(event, stream) -> int:
    return _event_task("aclrtResetEvent", event, stream, lib.EMU_TASK_EVENT_RESET, "Reset")


def stream_wait_event(stream, event) -> int:
    return _event_task("aclrtStreamWaitEvent", event, stream, lib.EMU_TASK_EVENT_WAIT, "Wait")


def query_event_status(event) -> tuple[int, int]:
    api = "aclrtQueryEventStatus"
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return 0, ret
        status = lib.emu_event_status(ev.handle)
    if status < 0:
        return 0, record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                         f"event 0x{ev.handle:x} was destroyed by another thread during the call")
    return (1 if status == 2 else 0), 0  # ACL_EVENT_RECORDED_STATUS_COMPLETE / NOT_READY


def synchronize_event(event) -> int:
    api = "aclrtSynchronizeEvent"
    with S.lock:
        ev, ret = _lookup_event(api, event)
        if ret:
            return ret
    code = lib.emu_event_synchronize(ev.handle)
    if code:
        return record(api, code, f"event 0x{ev.handle:x} was destroyed by another thread "
                      "before the synchronize began")
    return 0


def event_elapsed_time(start, end) -> tuple[float, int]:
    api = "aclrtEventElapsedTime"
    with S.lock:
        a, ret = _lookup_event(api, start)
        if ret:
            return 0.0, ret
        b, ret = _lookup_event(api, end)
        if ret:
            return 0.0, ret
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


# ------------------------------------------------------------- the functional layer's own ----

_internal = threading.local()


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
    holder = getattr(_internal, "holder", None)
    if holder is None:
        holder = _internal.holder = _PrivateStream()
    return holder.stream


# ---------------------------------------------------------------------------------- fork ----


def _after_fork_in_child() -> None:
    """fork(), as CUDA users know it: the child has none of the parent's threads, so none of its
    streams, events, contexts or device memory (the C core dropped them in its own fork handler,
    which has already run). The runtime starts afresh: not initialised, no device set, and the
    parent's handles answer ACL_ERROR_RT_INVALID_HANDLE with a message that says why. The locks
    are new: one held by another thread of the parent at the fork would never be released."""
    global _internal
    parent_handles = set(S.streams) | set(S.events) | set(S.contexts) | S.parent_handles
    parent_allocs = {**S.parent_allocs, **S.user_allocs}
    S.__init__()
    S.parent_handles = parent_handles
    S.parent_allocs = parent_allocs
    config.clear_overrides()
    _internal = threading.local()  # the functional layer's stream was the parent's


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
