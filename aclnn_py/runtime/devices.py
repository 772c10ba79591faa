"""acl.init / acl.finalize, devices, contexts and the run mode.

aclrtSetDevice creates a device's default context (with its default stream) on first use and
counts references; aclrtResetDevice releases the device's contexts, streams and memory when the
count drops to zero (CANN's aclrtSetDevice / aclrtResetDevice documentation). Contexts are
per-thread current, as in CANN's aclrtSetCurrentContext.
"""

from __future__ import annotations

from typing import Any, Optional

from .. import config
from ..enums import aclrtRunMode
from ..status import aclError as E
from ..status import last_code, record
from .core import apply_thread_config, lib
from .memory import detach_device_memory, release_device_memory
from .state import Context, S, Stream, current, lookup, require_int
from .streams import open_stream, refuse_in_kernel

# ---------------------------------------------------------------------------- init -----------


def init(config_path) -> int:
    """aclInit: initialise the runtime, applying the emulator's keys of the optional JSON file
    (docs/configuration.md). Returns 0; 100002 when already initialised; 100003 missing or
    unreadable file; 100006 not JSON; 100008 a bad emulator key; 100000 a bad environment value."""
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
        apply_thread_config()  # the file may set ACLNN_EMU_NUM_THREADS
        return 0


def finalize() -> int:
    """aclFinalize: release every device still set and forget the JSON file's keys. Returns 0;
    100037 without a matching aclInit; 207000 from a custom operator's kernel."""
    api = "aclFinalize"
    ret = refuse_in_kernel(api)
    if ret:
        return ret
    release = _Release()
    with S.lock:
        if not S.initialized:
            return record(api, E.ACL_ERROR_REPEAT_FINALIZE,
                          "aclFinalize called without a matching aclInit (or twice)")
        for dev in list(S.device_refs):
            _detach_device(dev, release)
        S.initialized = False
        config.clear_overrides()
        apply_thread_config()  # the environment's value again, without the file's
    release.run()
    return 0


# -------------------------------------------------------------------- devices, contexts ----


def _new_context(device: int, is_default: bool) -> Optional[Context]:
    handle = 0x7E00_0000_0000 + (next(S.ctx_ids) << 8)
    ctx = Context(handle=handle, device=device, is_default=is_default)
    st = open_stream(device, ctx, is_default=True)
    if st is None:
        return None
    ctx.default_stream = st
    S.contexts[handle] = ctx
    return ctx


class _Release:
    """What a reset, a context destroy or finalize releases after the runtime's lock: the
    streams to drain and destroy, then the device memory to free. Never under S.lock: both wait
    for the streams' running tasks, and a custom operator's kernel may call the runtime (and take
    the lock) before it finishes. The handles are unregistered under the lock first, so other
    threads see them gone at once (107017)."""

    def __init__(self) -> None:
        self.streams: list[int] = []
        self.memory: list[tuple[int, list[int]]] = []

    def run(self) -> None:
        for h in self.streams:
            lib.emu_stream_destroy(h)
        for device, ptrs in self.memory:
            release_device_memory(device, ptrs)


def _detach_context(ctx: Context, release: _Release) -> None:
    """Unregister a context and its streams (the caller holds S.lock)."""
    streams: list[Optional[Stream]] = [*ctx.streams, ctx.default_stream]
    for st in streams:
        if st is not None and S.streams.get(st.handle) is st:
            del S.streams[st.handle]
            release.streams.append(st.handle)
    ctx.streams.clear()
    S.contexts.pop(ctx.handle, None)
    if getattr(S.tls, "ctx", None) is ctx:
        S.tls.ctx = None
    lib.emu_ctx_epoch_bump()  # (see set_device)


def _check_device(api: str, device_id: int) -> int:
    count, ret = config.checked(api, config.device_count)
    if ret:
        return ret
    if not 0 <= device_id < count:
        visible = config.visible_devices()  # valid: device_count() parsed it just now
        where = ("set ACLNN_EMU_DEVICE_COUNT for more" if visible is None else
                 f"ASCEND_RT_VISIBLE_DEVICES shows physical devices {list(visible)}")
        return record(api, E.ACL_ERROR_RT_INVALID_DEVICEID,
                      f"device id {device_id} is out of range: this emulator has {count} "
                      f"device(s), ids 0..{count - 1} ({where})")
    return 0


def set_device(device_id) -> int:
    """aclrtSetDevice: make ``device_id`` this thread's device, creating its default context and
    stream on first use (calls are counted; see reset_device). Returns 0; 107001 for an id
    outside 0..ACLNN_EMU_DEVICE_COUNT-1; 207008 when no stream could start.
    docs/runtime.md "Devices and contexts"."""
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
        # after every change of the live or current contexts: the toolkit's C fast paths cache
        # a thread's default stream while the epoch stays (docs/c_api.md, "Fast paths")
        lib.emu_ctx_epoch_bump()
        return 0


def _detach_device(device_id: int, release: _Release) -> None:
    """Unregister the device's contexts and streams and the memory aclrtMalloc gave out on it
    (the caller holds S.lock); ``release`` then waits for the streams, destroys them and frees
    the memory (as aclrtResetDevice releases the device's resources)."""
    S.device_refs.pop(device_id, None)
    for ctx in [c for c in S.contexts.values() if c.device == device_id]:
        _detach_context(ctx, release)
    S.default_ctx.pop(device_id, None)
    release.memory.append((device_id, detach_device_memory(device_id)))


def reset_device(device_id) -> int:
    """aclrtResetDevice: undo one set_device; the last one waits for the device's streams and
    releases its contexts, streams and aclrtMalloc memory. Returns 0; 107001 for a bad id;
    207000 from a custom operator's kernel."""
    api = "aclrtResetDevice"
    device_id = require_int(api, "deviceId", device_id, ctype="int32")
    ret = refuse_in_kernel(api)
    if ret:
        return ret
    release = _Release()
    with S.lock:
        ret = _check_device(api, device_id)
        if ret:
            return ret
        refs = S.device_refs.get(device_id, 0)
        if refs > 1:
            S.device_refs[device_id] = refs - 1
            return 0
        if refs == 1:
            _detach_device(device_id, release)
    release.run()
    return 0


def get_device() -> tuple[int, int]:
    """aclrtGetDevice: ``(device_id, ret)`` of this thread's current context; ret 107002 when
    no device is set in this thread."""
    ctx = current()
    if ctx is None:
        return 0, record("aclrtGetDevice", E.ACL_ERROR_RT_CONTEXT_NULL,
                         "no device is set in this thread: call aclrtSetDevice first")
    return ctx.device, 0


def get_device_count() -> tuple[int, int]:
    """aclrtGetDeviceCount: ``(count, ret)``; the count is ACLNN_EMU_DEVICE_COUNT (default 1,
    docs/configuration.md)."""
    count, ret = config.checked("aclrtGetDeviceCount", config.device_count)
    return (0, ret) if ret else (count, 0)


def create_context(device_id) -> tuple[int, int]:
    """aclrtCreateContext: ``(context, ret)``: a new context on ``device_id`` with its own
    default stream, made current in this thread. ret 107001 for a bad id; 207008 when no stream
    could start."""
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
        lib.emu_ctx_epoch_bump()  # (see set_device)
        return ctx.handle, 0


def _lookup_context(api: str, context) -> tuple[Optional[Context], int]:
    return lookup(api, "context", context, S.contexts)


def destroy_context(context) -> int:
    """aclrtDestroyContext: destroy a context created by create_context and its streams.
    Returns 0; 100000 for null or a device's default context; 107017 for a handle that is not a
    live context; 207000 from a custom operator's kernel."""
    api = "aclrtDestroyContext"
    ret = refuse_in_kernel(api)
    if ret:
        return ret
    release = _Release()
    with S.lock:
        ctx, ret = _lookup_context(api, context)
        if ret:
            return ret
        assert ctx is not None
        if ctx.is_default:
            return record(api, E.ACL_ERROR_INVALID_PARAM,
                          f"context 0x{ctx.handle:x} is device {ctx.device}'s default context; it "
                          "is released by aclrtResetDevice, not aclrtDestroyContext")
        _detach_context(ctx, release)
    release.run()
    return 0


def set_context(context) -> int:
    """aclrtSetCurrentContext: make a live context current in this thread. Returns 0; 100000
    for null; 107017 for a handle that is not a live context."""
    api = "aclrtSetCurrentContext"
    with S.lock:
        ctx, ret = _lookup_context(api, context)
        if ret:
            return ret
        S.tls.ctx = ctx
        lib.emu_ctx_epoch_bump()  # (see set_device)
        return 0


def get_context() -> tuple[int, int]:
    """aclrtGetCurrentContext: ``(context, ret)`` of this thread; ret 107002 when it has none."""
    ctx = current()
    if ctx is None:
        return 0, record("aclrtGetCurrentContext", E.ACL_ERROR_RT_CONTEXT_NULL,
                         "this thread has no current context: call aclrtSetDevice or "
                         "aclrtCreateContext first")
    return ctx.handle, 0


def memory_used(device_id: int) -> int:
    """Bytes of device memory charged on a device now (as ACLNN_EMU_MEM_LIMIT counts them);
    for ``aclnn-py env``."""
    return int(lib.emu_mem_used(device_id))


def get_run_mode() -> tuple[int, int]:
    """aclrtGetRunMode: ``(aclrtRunMode.ACL_HOST, 0)``: the program runs on the host and drives
    the (emulated) device."""
    return aclrtRunMode.ACL_HOST, 0


def query_device_status(device_id) -> tuple[int, int]:
    """aclrtQueryDeviceStatus: ``(status, ret)``: aclrtDeviceStatus NORMAL (0) for every device
    of the emulator. ret 107001 for an id outside the devices. docs/pyacl.md."""
    api = "aclrtQueryDeviceStatus"
    device_id = require_int(api, "deviceId", device_id, ctype="int32")
    ret = _check_device(api, device_id)
    return (0, ret) if ret else (0, 0)


def device_can_access_peer(device_id, peer_device_id) -> tuple[int, int]:
    """aclrtDeviceCanAccessPeer: ``(can_access_peer, ret)``: 1 for two different devices of the
    emulator (all device memory is host memory, so any device reaches any other's). ret 107001
    for an id outside the devices; 100000 when both ids are the same. docs/pyacl.md."""
    api = "aclrtDeviceCanAccessPeer"
    device_id = require_int(api, "deviceId", device_id, ctype="int32")
    peer = require_int(api, "peerDeviceId", peer_device_id, ctype="int32")
    for value in (device_id, peer):
        ret = _check_device(api, value)
        if ret:
            return 0, ret
    if device_id == peer:
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                         f"deviceId and peerDeviceId are both {peer}: a device is not its own "
                         "peer")
    return 1, 0


def device_enable_peer_access(peer_device_id, flags) -> int:
    """aclrtDeviceEnablePeerAccess: allow the current device to reach ``peer_device_id``'s
    memory (always possible in the emulator: recorded, nothing changes). ret 100000 for flags
    other than 0 (reserved in CANN) or the current device itself; 107001 for a bad id; 107002
    without a current device."""
    return _peer_access("aclrtDeviceEnablePeerAccess", peer_device_id, flags)


def device_disable_peer_access(peer_device_id) -> int:
    """aclrtDeviceDisablePeerAccess: the reverse of device_enable_peer_access (same codes)."""
    return _peer_access("aclrtDeviceDisablePeerAccess", peer_device_id, 0)


def _peer_access(api: str, peer_device_id, flags) -> int:
    peer = require_int(api, "peerDeviceId", peer_device_id, ctype="int32")
    flags = require_int(api, "flags", flags, ctype="uint32")
    if flags != 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, f"flags {flags} must be 0 (reserved)")
    ctx = current()
    if ctx is None:
        return record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                      "no device is set in this thread: call aclrtSetDevice first")
    ret = _check_device(api, peer)
    if ret:
        return ret
    if peer == ctx.device:
        return record(api, E.ACL_ERROR_INVALID_PARAM,
                      f"peerDeviceId {peer} is the current device")
    return 0


# aclSysParamOpt values (acl_base.h): ACL_OPT_DETERMINISTIC, ACL_OPT_ENABLE_DEBUG_KERNEL,
# ACL_OPT_STRONG_CONSISTENCY
SYS_PARAM_OPTS = (0, 1, 2)


def _sys_param_key(api: str, opt, context: bool) -> tuple[Any, int]:
    opt = require_int(api, "opt", opt, ctype="int32")
    if opt not in SYS_PARAM_OPTS:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"opt {opt} is not an aclSysParamOpt (0, 1, 2)")
    if not context:
        return ("process", opt), 0
    ctx = current()
    if ctx is None:
        return None, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                            "this thread has no current context: call aclrtSetDevice first")
    return (ctx.handle, opt), 0


def set_sys_param_opt(opt, value) -> int:
    """aclrtSetSysParamOpt: record a process-wide system parameter (aclSysParamOpt). The
    emulator's kernels are deterministic whatever it says; the value is kept for
    get_sys_param_opt. ret 100000 for an unknown opt."""
    return _set_param("aclrtSetSysParamOpt", opt, value, False)


def get_sys_param_opt(opt) -> tuple[int, int]:
    """aclrtGetSysParamOpt: ``(value, ret)`` set by set_sys_param_opt; ret 107021
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET when it was never set, 100000 for an unknown opt."""
    return _get_param("aclrtGetSysParamOpt", opt, False)


def ctx_set_sys_param_opt(opt, value) -> int:
    """aclrtCtxSetSysParamOpt: set_sys_param_opt for the current context only (107002 without
    one)."""
    return _set_param("aclrtCtxSetSysParamOpt", opt, value, True)


def ctx_get_sys_param_opt(opt) -> tuple[int, int]:
    """aclrtCtxGetSysParamOpt: ``(value, ret)`` of the current context (ctx_set_sys_param_opt);
    107021 when never set, 107002 without a current context."""
    return _get_param("aclrtCtxGetSysParamOpt", opt, True)


def _set_param(api: str, opt, value, context: bool) -> int:
    key, ret = _sys_param_key(api, opt, context)
    if ret:
        return ret
    value = require_int(api, "value", value, ctype="int64")
    with S.lock:
        _SYS_PARAMS[key] = value
    return 0


def _get_param(api: str, opt, context: bool) -> tuple[int, int]:
    key, ret = _sys_param_key(api, opt, context)
    if ret:
        return 0, ret
    with S.lock:
        value = _SYS_PARAMS.get(key)
    if value is None:
        return 0, record(api, E.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
                         f"system parameter {key[1]} was never set"
                         + (" in this context" if context else ""))
    return value, 0


_SYS_PARAMS: dict = {}


def get_last_error(level) -> int:
    """aclrtGetLastError: the code of this thread's last failed call, cleared by the read (0
    when none failed since). ret 100000 for a level other than ACL_RT_THREAD_LEVEL (0)."""
    return _last_error("aclrtGetLastError", level, True)


def peek_at_last_error(level) -> int:
    """aclrtPeekAtLastError: get_last_error without clearing it."""
    return _last_error("aclrtPeekAtLastError", level, False)


def _last_error(api: str, level, clear: bool) -> int:
    level = require_int(api, "level", level, ctype="int32")
    if level != 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM,
                      f"level {level} is not ACL_RT_THREAD_LEVEL (0)")
    return last_code(clear)


__all__ = ["init", "finalize", "set_device", "reset_device", "get_device", "get_device_count",
           "create_context", "destroy_context", "set_context", "get_context", "get_run_mode",
           "memory_used", "device_can_access_peer", "device_enable_peer_access",
           "device_disable_peer_access", "set_sys_param_opt", "get_sys_param_opt",
           "ctx_set_sys_param_opt", "ctx_get_sys_param_opt", "get_last_error",
           "peek_at_last_error", "query_device_status"]
