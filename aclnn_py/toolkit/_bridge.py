"""The Python side of the toolkit's ``libascendcl.so``: CANN's C entry points over the Python API.

The library's C functions (``src/ascendcl.cpp``) forward each call to one of the functions
below, registered with ``@ffi.def_extern`` by :func:`install` when the embedded interpreter
starts. Each calls the public Python API (``aclnn_py.acl``, ``aclnn_py.aclnn``), so the codes, the
check order, the messages, asynchrony and the memory checks are the Python API's own.

Handles: streams, events, contexts and device pointers are integers in the Python API already and
cross the C ABI unchanged. aclTensor, aclScalar, aclIntArray and aclOpExecutor are Python objects:
C holds opaque handles (:class:`Handles`) that never point to memory and are never reused. A
destroyed object stays known for a while (its handle gets the Python API's answer for a destroyed
object); an unknown handle gets the same code with a message of its own. No handle crashes.

Every callback catches every exception: a C caller gets a status code and a message, never a
traceback.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, Callable, Optional

import numpy as np

from .. import acl, aclnn, dtypes
from .. import runtime as acl_runtime
from ..acl import _desc as acl_desc
from ..executor import CONSUMED, READY, aclOpExecutor
from ..ops import REGISTRY
from ..runtime import launch as rt_launch
from ..status import aclError, aclnnStatus, record
from ..tensor import (
    aclBoolArray,
    aclFloatArray,
    aclIntArray,
    aclScalar,
    aclTensor,
    aclTensorList,
)

PING_OK = 0x5AAC1  # py_ping's answer once the bridge is installed (src/ascendcl.cpp)

ACL_ERROR_INVALID_PARAM = int(aclError.ACL_ERROR_INVALID_PARAM)
ACL_ERROR_INTERNAL_ERROR = int(aclError.ACL_ERROR_INTERNAL_ERROR)  # the library failed to start
ACLNN_ERR_PARAM_NULLPTR = int(aclnnStatus.ACLNN_ERR_PARAM_NULLPTR)
ACLNN_ERR_PARAM_INVALID = int(aclnnStatus.ACLNN_ERR_PARAM_INVALID)
ACLNN_ERR_INNER = int(aclnnStatus.ACLNN_ERR_INNER)

MAX_DIMS = 1 << 16  # longest dims array read from C: larger counts are refused, never read
TOMBSTONES = 4096  # destroyed objects remembered per kind, for the Python API's own answer

# CANN's OP_CHECK_COMM_INPUT: these operators check workspaceSize / executor before anything else
# (the others write through them unchecked; the emulator refuses null ones after its checks)
_COMM_INPUT = frozenset({"aclnnHardsigmoid", "aclnnInplaceHardsigmoid", "aclnnHardsigmoidBackward"})


class Unknown(Exception):
    """A handle that names no object of the expected kind."""

    def __init__(self, what: str, handle: int, handles: Handles):
        super().__init__(f"{what} 0x{handle:x} is not a live {handles.name} (destroyed long ago, "
                         f"of another kind, or never created by {handles.creator})")


class Handles(acl_desc.HandleTable):
    """Opaque C handles of one kind of Python object (``0xAC`` in bits 48-55); retired objects
    are kept, the last :data:`TOMBSTONES` of them, for the Python API's own answer."""

    def __init__(self, kind: int, name: str, creator: str, cls: type):
        super().__init__(0xAC, kind, name, creator, keep=True, tombstones=TOMBSTONES)
        self.cls = cls

    def get(self, what: str, handle: int) -> Any:
        """The object of ``handle`` (live or retired); None for 0; :class:`Unknown` else."""
        if handle == 0:
            return None
        obj, _dead = self.lookup(handle)
        if obj is None:
            raise Unknown(what, handle, self)
        return obj


TENSORS = Handles(1, "aclTensor", "aclCreateTensor", aclTensor)
SCALARS = Handles(2, "aclScalar", "aclCreateScalar", aclScalar)
INT_ARRAYS = Handles(3, "aclIntArray", "aclCreateIntArray", aclIntArray)
EXECUTORS = Handles(4, "aclOpExecutor", "an aclnnXxxGetWorkspaceSize call", aclOpExecutor)
_DESTROY: dict[str, tuple[Handles, str, Callable[[Any], int]]] = {
    "aclDestroyTensor": (TENSORS, "tensor", aclnn.aclDestroyTensor),
    "aclDestroyScalar": (SCALARS, "scalar", aclnn.aclDestroyScalar),
    "aclDestroyIntArray": (INT_ARRAYS, "array", aclnn.aclDestroyIntArray),
}


# ------------------------------------------------------------------------ the callbacks ----

ffi: Any = None  # the embedded module's ffi and lib, set by install()
lib: Any = None
CALLBACKS: dict[str, Callable] = {}


def _callback(api: str, error: Optional[int]):
    """Register ``fn`` as the callback ``py_<fn.__name__>``. Any exception becomes a message and
    ``error``: a status code, 0 (a null handle) or None (a null ``char *``). cffi catches it
    (def_extern's ``error`` and ``onerror``, see install), so a call costs no wrapper."""

    def wrap(fn: Callable) -> Callable:
        CALLBACKS["py_" + fn.__name__] = fn
        _ERRORS["py_" + fn.__name__] = (api, error)
        return fn

    return wrap


_ERRORS: dict[str, tuple[str, Optional[int]]] = {}


def _onerror_for(api: str, error: Optional[int]) -> Callable:
    def onerror(exc_type, exc, tb) -> None:  # an Unknown handle, or a bug of the emulator
        text = str(exc) if isinstance(exc, Unknown) else \
            f"internal error of the emulator: {exc!r}"
        record(api, error or ACLNN_ERR_INNER, text)

    return onerror


def _null(api: str, code: int, what: str) -> int:
    return record(api, code, f"{what} is null")


def _text(p) -> Optional[str]:
    return None if p == ffi.NULL else ffi.string(p).decode("utf-8", "surrogateescape")


@_callback("py_ping", 0)
def ping() -> int:
    return PING_OK


@_callback("aclnn-py at exit", 0)
def at_exit() -> int:
    """The C program exits (src/ascendcl.cpp's emb_at_exit) in an interpreter the library
    started, which nobody finalizes: run what Python runs at exit (the registered atexit
    functions: the trace file, the checkers' last reports, logging's flush), once; then flush
    the standard streams. After aclFinalize this writes the trace again with the calls since, as
    a Python program's exit does; reports already given are not repeated."""
    global _exited
    with _exit_lock:
        if _exited:
            return 0
        _exited = True
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    return 0


_exit_lock = threading.Lock()
_exited = False


# ----------------------------------------------------------------------------- acl.h ------

@_callback("aclInit", ACL_ERROR_INTERNAL_ERROR)
def aclInit(config_path) -> int:
    return acl.init(_text(config_path))


@_callback("aclFinalize", ACL_ERROR_INTERNAL_ERROR)
def aclFinalize() -> int:
    return acl.finalize()


@_callback("aclGetRecentErrMsg", None)
def aclGetRecentErrMsg():
    text = acl.get_recent_err_msg()
    return lib.emb_keep_message(ffi.NULL if text is None else text.encode("utf-8", "replace"))


@_callback("aclrtGetSocName", None)
def aclrtGetSocName():
    name = acl.get_soc_name()
    return ffi.NULL if name is None else lib.emb_intern(name.encode())


# ---------------------------------------------------------------------------- acl_rt.h -----

def _out(out, value_and_ret: tuple) -> int:
    """Write a (value, ret) call's value through ``out`` on success; return ret."""
    value, ret = value_and_ret
    if ret == 0:
        out[0] = value
    return ret


def _status(name: str, fn: Callable) -> None:
    """A callback whose C function only returns a status: the Python call, same arguments."""

    def call(*args) -> int:
        return fn(*args)

    call.__name__ = name
    _callback(name, ACL_ERROR_INTERNAL_ERROR)(call)


for _name, _fn in (("aclrtSetDevice", acl.rt.set_device),
                   ("aclrtResetDevice", acl.rt.reset_device),
                   ("aclrtSynchronizeDevice", acl.rt.synchronize_device),
                   ("aclrtDestroyContext", acl.rt.destroy_context),
                   ("aclrtSetCurrentContext", acl.rt.set_context),
                   ("aclrtDestroyStream", acl.rt.destroy_stream),
                   ("aclrtDestroyEvent", acl.rt.destroy_event),
                   ("aclrtRecordEvent", acl.rt.record_event),
                   ("aclrtResetEvent", acl.rt.reset_event),
                   ("aclrtSynchronizeEvent", acl.rt.synchronize_event),
                   ("aclrtStreamWaitEvent", acl.rt.stream_wait_event),
                   ("aclrtFree", acl.rt.free),
                   ("aclrtFreeHost", acl.rt.free_host),
                   ("aclrtMemcpy", acl.rt.memcpy),
                   ("aclrtMemcpyAsync", acl.rt.memcpy_async),
                   ("aclrtMemset", acl.rt.memset),
                   ("aclrtMemsetAsync", acl.rt.memset_async)):
    _status(_name, _fn)


def _getter(name: str, what: str, fn: Callable) -> None:
    """A callback for ``aclError f(T *out)`` over a Python ``f() -> (value, ret)``."""

    def call(out) -> int:
        if out == ffi.NULL:
            return _null(name, ACL_ERROR_INVALID_PARAM, what)
        return _out(out, fn())

    call.__name__ = name
    _callback(name, ACL_ERROR_INTERNAL_ERROR)(call)


@_callback("aclrtSynchronizeStream", ACL_ERROR_INTERNAL_ERROR)
def aclrtSynchronizeStream(stream: int) -> int:
    ret = acl.rt.synchronize_stream(stream)
    if stream == 0:
        _note_default()
    return ret


@_callback("aclrtSynchronizeStream", ACL_ERROR_INTERNAL_ERROR)
def sync_fault(stream: int, code: int) -> int:
    """aclrtSynchronizeStream's C path collected a task's fault (``code``; its message is the
    core's last one on this thread): recorded as the Python API records it."""
    return record("aclrtSynchronizeStream", code,
                  f"a task failed on the stream: {acl_runtime.last_c_msg()}")


_getter("aclrtGetDevice", "deviceId", acl.rt.get_device)
_getter("aclrtGetDeviceCount", "count", acl.rt.get_device_count)
_getter("aclrtGetRunMode", "runMode", acl.rt.get_run_mode)
_getter("aclrtGetCurrentContext", "context", acl.rt.get_context)
_getter("aclrtCreateStream", "stream", acl.rt.create_stream)
_getter("aclrtCreateEvent", "event", acl.rt.create_event)


@_callback("aclrtCreateContext", ACL_ERROR_INTERNAL_ERROR)
def aclrtCreateContext(out, device_id: int) -> int:
    if out == ffi.NULL:
        return _null("aclrtCreateContext", ACL_ERROR_INVALID_PARAM, "context")
    return _out(out, acl.rt.create_context(device_id))


@_callback("aclrtQueryEventStatus", ACL_ERROR_INTERNAL_ERROR)
def aclrtQueryEventStatus(event: int, out) -> int:
    if out == ffi.NULL:
        return _null("aclrtQueryEventStatus", ACL_ERROR_INVALID_PARAM, "status")
    return _out(out, acl.rt.query_event_status(event))


@_callback("aclrtEventElapsedTime", ACL_ERROR_INTERNAL_ERROR)
def aclrtEventElapsedTime(out, start: int, end: int) -> int:
    if out == ffi.NULL:
        return _null("aclrtEventElapsedTime", ACL_ERROR_INVALID_PARAM, "ms")
    return _out(out, acl.rt.event_elapsed_time(start, end))


@_callback("aclrtMalloc", ACL_ERROR_INTERNAL_ERROR)
def aclrtMalloc(out, size: int, policy: int) -> int:
    if out == ffi.NULL:
        return _null("aclrtMalloc", ACL_ERROR_INVALID_PARAM, "devPtr")
    return _out(out, acl.rt.malloc(size, policy))


@_callback("aclrtMallocHost", ACL_ERROR_INTERNAL_ERROR)
def aclrtMallocHost(out, size: int) -> int:
    if out == ffi.NULL:
        return _null("aclrtMallocHost", ACL_ERROR_INVALID_PARAM, "hostPtr")
    return _out(out, acl.rt.malloc_host(size))


@_callback("aclrtGetMemInfo", ACL_ERROR_INTERNAL_ERROR)
def aclrtGetMemInfo(attr: int, free_out, total_out) -> int:
    for what, p in (("free", free_out), ("total", total_out)):
        if p == ffi.NULL:
            return _null("aclrtGetMemInfo", ACL_ERROR_INVALID_PARAM, what)
    free, total, ret = acl.rt.get_mem_info(attr)
    if ret == 0:
        free_out[0], total_out[0] = free, total
    return ret


# ---------------------------------------------------------------------- acl_meta.h ---------

@_callback("aclnnInit", ACLNN_ERR_INNER)
def aclnnInit(config_path) -> int:
    return aclnn.aclnnInit(_text(config_path))


@_callback("aclnnFinalize", ACLNN_ERR_INNER)
def aclnnFinalize() -> int:
    return aclnn.aclnnFinalize()


def _ints(api: str, what: str, p, n: int) -> Optional[list]:
    """n int64_t values at p; None for a null pointer (which CANN accepts only with n == 0)."""
    if p == ffi.NULL:
        return [] if n == 0 else None
    if n > MAX_DIMS:
        raise ValueError(f"{what} count {n} is larger than {MAX_DIMS}")
    return list(ffi.unpack(p, n))


@_callback("aclCreateTensor", 0)
def aclCreateTensor(view_p, view_n, data_type, stride_p, offset, fmt, storage_p, storage_n,
                    data) -> int:
    api = "aclCreateTensor"
    for what, n in (("viewDimsNum", view_n), ("storageDimsNum", storage_n)):
        if n > MAX_DIMS:
            record(api, ACLNN_ERR_PARAM_INVALID, f"{what} {n} is larger than {MAX_DIMS}")
            return 0
    view = _ints(api, "viewDims", view_p, view_n)
    storage = _ints(api, "storageDims", storage_p, storage_n)
    stride = None if stride_p == ffi.NULL else list(ffi.unpack(stride_p, view_n))
    tensor = aclnn.aclCreateTensor(view, data_type, stride, offset, fmt, storage, data)
    return 0 if tensor is None else TENSORS.add(tensor)


@_callback("aclCreateScalar", 0)
def aclCreateScalar(value: int, data_type: int) -> int:
    api = "aclCreateScalar"
    number: Any = None
    if value:
        d = dtypes.lookup(data_type)
        if d is None:
            number = 0  # aclCreateScalar names the unknown dtype
        elif d.numpy is None:
            record(api, ACLNN_ERR_PARAM_INVALID,
                   f"dataType {dtypes.name(data_type)}: the emulator cannot read such a value")
            return 0
        else:
            raw = ffi.buffer(ffi.cast("char *", value), d.itemsize)
            number = np.frombuffer(raw, dtype=d.numpy)[0].item()
    scalar = aclnn.aclCreateScalar(number, data_type)
    return 0 if scalar is None else SCALARS.add(scalar)


@_callback("aclCreateIntArray", 0)
def aclCreateIntArray(value_p, size: int) -> int:
    api = "aclCreateIntArray"
    if size > MAX_DIMS:  # the caller's mistake, as aclCreateTensor's counts: never read
        record(api, ACLNN_ERR_PARAM_INVALID, f"size {size} is larger than {MAX_DIMS}")
        return 0
    values = None if value_p == ffi.NULL else _ints(api, "size", value_p, size)
    array = aclnn.aclCreateIntArray(values)
    return 0 if array is None else INT_ARRAYS.add(array)


@_callback("aclDestroy", ACLNN_ERR_PARAM_INVALID)
def aclDestroy(api_p, handle: int) -> int:
    api = ffi.string(api_p).decode()
    handles, what, fn = _DESTROY[api]
    try:
        obj = handles.get(what, handle)
    except Unknown as exc:
        return record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
    ret = fn(obj)
    if ret == 0 and handle:
        handles.retire(handle)
    if handles is TENSORS or handles is TENSOR_LISTS:
        lib.emb_p1_clear()  # C's phase 1 must not find the tensor any more
    return ret


def _tensor_call(api: str, handle: int, fn: Callable) -> tuple:
    try:
        tensor = TENSORS.get("tensor", handle)
    except Unknown as exc:
        return None, record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
    return fn(tensor)


_DIMS = {"aclGetViewShape": (aclnn.aclGetViewShape, "viewDims", "viewDimsNum"),
         "aclGetStorageShape": (aclnn.aclGetStorageShape, "storageDims", "storageDimsNum"),
         "aclGetViewStrides": (aclnn.aclGetViewStrides, "stridesValue", "stridesNum")}
_INTS = {"aclGetViewOffset": (aclnn.aclGetViewOffset, "offset"),
         "aclGetFormat": (aclnn.aclGetFormat, "format"),
         "aclGetDataType": (aclnn.aclGetDataType, "dataType")}


@_callback("aclGetDims", ACLNN_ERR_INNER)
def aclGetDims(api_p, handle: int, dims_out, num_out) -> int:
    """aclGetViewShape / aclGetStorageShape / aclGetViewStrides: the array is new[]ed in C."""
    api = ffi.string(api_p).decode()
    fn, dims_name, num_name = _DIMS[api]
    if handle == 0:
        return fn(None)[1]  # the Python API's answer for a null tensor
    for what, p in ((dims_name, dims_out), (num_name, num_out)):
        if p == ffi.NULL:
            return _null(api, ACLNN_ERR_PARAM_NULLPTR, what)
    values, ret = _tensor_call(api, handle, fn)
    if ret:
        return ret
    array = lib.emb_new_dims(len(values))
    if array == ffi.NULL:
        return record(api, ACLNN_ERR_INNER, f"cannot allocate {len(values)} int64_t values")
    for i, v in enumerate(values):
        array[i] = v
    dims_out[0], num_out[0] = array, len(values)
    return 0


@_callback("aclGetInt", ACLNN_ERR_INNER)
def aclGetInt(api_p, handle: int, out) -> int:
    """aclGetViewOffset / aclGetFormat / aclGetDataType (C narrows the value to its type)."""
    api = ffi.string(api_p).decode()
    fn, what = _INTS[api]
    if handle == 0:
        return fn(None)[1]
    if out == ffi.NULL:
        return _null(api, ACLNN_ERR_PARAM_NULLPTR, what)
    value, ret = _tensor_call(api, handle, fn)
    if ret == 0:
        out[0] = int(value)
    return ret


@_callback("aclGetIntArraySize", ACLNN_ERR_INNER)
def aclGetIntArraySize(handle: int, out) -> int:
    api = "aclGetIntArraySize"
    if handle == 0:
        return _null(api, ACLNN_ERR_PARAM_NULLPTR, "array")
    if out == ffi.NULL:
        return _null(api, ACLNN_ERR_PARAM_NULLPTR, "size")
    try:
        array = INT_ARRAYS.get("array", handle)
    except Unknown as exc:
        return record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
    if array.destroyed:
        return record(api, ACLNN_ERR_PARAM_INVALID, f"array {array!r} was already destroyed")
    out[0] = len(array)
    return 0


@_callback("aclGetRawTensorAddr", ACLNN_ERR_INNER)
def aclGetRawTensorAddr(handle: int, out) -> int:
    api = "aclGetRawTensorAddr"
    if handle == 0:
        return aclnn.aclGetRawTensorAddr(None)[1]
    if out == ffi.NULL:
        return _null(api, ACLNN_ERR_PARAM_NULLPTR, "addr")
    addr, ret = _tensor_call(api, handle, aclnn.aclGetRawTensorAddr)
    if ret == 0:
        out[0] = addr
    return ret


@_callback("aclSetRawTensorAddr", ACLNN_ERR_INNER)
def aclSetRawTensorAddr(handle: int, addr: int) -> int:
    ret = _tensor_call("aclSetRawTensorAddr", handle,
                       lambda t: (None, aclnn.aclSetRawTensorAddr(t, addr)))[1]
    lib.emb_p1_clear()  # the tensor's address is part of C's phase-1 entries
    return ret


def _executor(api: str, handle: int, code: int) -> tuple[Optional[aclOpExecutor], int]:
    """(executor or None for 0, 0), or (None, recorded ``code``) for an unknown handle."""
    if handle in _RECORDED and lib.emb_consumed_count():
        _drain()  # C may have consumed it: Python's state first
    if handle & _CMADE_MASK == _CMADE_BITS and handle not in EXECUTORS.live:
        _materialize(handle)  # made by C's phase 1: its object first
    try:
        return EXECUTORS.get("executor", handle), 0
    except Unknown as exc:
        return None, record(api, code, str(exc))


def _settle(handle: int, executor: Optional[aclOpExecutor]) -> None:
    """A consumed or destroyed executor's handle is retired."""
    if executor is not None and executor.state is not READY:
        EXECUTORS.retire(handle)


@_callback("aclExecutorCall", ACLNN_ERR_INNER)
def aclExecutorCall(api_p, handle: int) -> int:
    """aclSetAclOpExecutorRepeatable / aclDestroyAclOpExecutor."""
    api = ffi.string(api_p).decode()
    executor, ret = _executor(api, handle, ACLNN_ERR_INNER)
    if ret:
        return ret
    if handle in _RECORDED:  # C's record follows first (none left: C consumed it just now)
        present = (lib.emb_record_repeatable(handle) if api == "aclSetAclOpExecutorRepeatable"
                   else _drop(handle))
        if not present:
            _drain()
    ret = getattr(aclnn, api)(executor)
    _settle(handle, executor)
    return ret


@_callback("aclSetTensorAddr", ACLNN_ERR_INNER)
def aclSetTensorAddr(api_p, handle: int, index: int, tensor_h: int, addr: int) -> int:
    """aclSetInputTensorAddr / aclSetOutputTensorAddr."""
    api = ffi.string(api_p).decode()
    executor, ret = _executor(api, handle, ACLNN_ERR_INNER)
    if ret:
        return ret
    try:
        tensor = TENSORS.get("tensor", tensor_h)
    except Unknown as exc:
        return record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
    ret = getattr(aclnn, api)(executor, index, tensor, addr)
    if ret == 0 and executor is not None and handle in _RECORDED:
        _rebind(handle, executor)
    lib.emb_p1_clear()  # the tensor moved: C's phase-1 entries naming it go
    return ret


# ------------------------------------------------------------------------- operators -------

_PHASE1: dict[bytes, tuple] = {}  # api name -> (api, op, its parameters, its function)


def _phase1_entry(key: bytes) -> tuple:
    from ..diagnostics import wrap

    api = key.decode()
    op = REGISTRY[api[:-len("GetWorkspaceSize")]]
    slots = tuple(None if name in op.int_params else name for name in op.params)
    entry = _PHASE1[key] = (api, op, slots, wrap.original(getattr(aclnn, api)))
    return entry


@_callback("phase1", ACLNN_ERR_INNER)
def phase1(api_p, ntensors: int, tensors_p, dim: int, ws_out, ex_out) -> int:
    """Every ``aclnnXxxGetWorkspaceSize``: the tensors in CANN's order, and dim when the
    operator has one."""
    key = ffi.string(api_p)
    entry = _PHASE1.get(key)
    if entry is None:
        entry = _phase1_entry(key)
    api, op, slots, fn = entry
    if op.name in _COMM_INPUT and (ws_out == ffi.NULL or ex_out == ffi.NULL):
        return record(api, ACLNN_ERR_PARAM_NULLPTR,
                      f"{'workspaceSize' if ws_out == ffi.NULL else 'executor'} is null: both "
                      "out-parameters are required (checked first, as CANN's "
                      "OP_CHECK_COMM_INPUT does)")
    handles = iter(ffi.unpack(tensors_p, ntensors))
    live = TENSORS.live
    args: list = []
    for name in slots:
        if name is None:
            args.append(dim)
            continue
        h = next(handles)
        tensor = live.get(h)
        if tensor is None:  # null, destroyed or unknown: the table's full answer
            try:
                tensor = TENSORS.get(name, h)
            except Unknown as exc:
                return record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
        args.append(tensor)
    if not _fast[0]:  # a diagnostic wraps the API: its function, as it is now
        return _phase1_out(api, getattr(aclnn, api)(*args), ws_out, ex_out)
    gen, epoch = lib.emb_p1_generation(), acl_runtime.free_epoch()  # before the checks
    env = _p1_env()
    ret = _phase1_out(api, fn(*args), ws_out, ex_out)
    if ret == 0 and ex_out[0] in _RECORDED:
        _p1_enter(key, op.name, tensors_p, ntensors, dim, epoch, gen, env, ex_out[0])
    return ret


def _phase1_out(api: str, result: tuple, ws_out, ex_out) -> int:
    """A phase 1's ``(size, executor, ret)`` written through C's out-parameters (a null one is
    refused and the executor released: CANN would write through it, a crash on hardware)."""
    size, executor, ret = result
    if ret:
        return ret
    if ws_out == ffi.NULL or ex_out == ffi.NULL:
        if executor is not None:
            aclnn.aclDestroyAclOpExecutor(executor)
        return record(api, ACLNN_ERR_PARAM_NULLPTR,
                      f"{'workspaceSize' if ws_out == ffi.NULL else 'executor'} is null: CANN "
                      "would write the result through it (a crash on hardware)")
    ws_out[0] = size
    ex_out[0] = handle = EXECUTORS.add(executor)
    if _fast[0]:
        _since_drain[0] += 1
        if _since_drain[0] >= 64:  # C's consumed executors, retired here in batches
            _since_drain[0] = 0
            _drain()
        _record(handle, executor, False)
    return 0


_since_drain = [0]


@_callback("phase2", ACLNN_ERR_INNER)
def phase2(api_p, workspace: int, workspace_size: int, handle: int, stream: int) -> int:
    """Every ``aclnnXxx``: CANN's CommonOpExecutorRun, as the Python API runs it."""
    api = ffi.string(api_p).decode()
    executor, ret = _executor(api, handle, ACLNN_ERR_PARAM_NULLPTR)
    if ret:
        return ret
    if handle in _RECORDED and not _drop(handle):  # Python launches: C's record goes first
        _drain()
    ret = getattr(aclnn, api)(workspace, workspace_size, executor, stream)
    _settle(handle, executor)
    if ret == 0:
        if stream == 0:
            _note_default()
        if executor is not None and executor.repeatable and _fast[0]:
            _record(handle, executor, True)
    return ret


# ------------------------------------------------------------------------ fast paths -------
# (src/ascendcl.cpp, "fast paths"; docs/c_api.md) aclrtSynchronizeStream and phase 2 run in C.
# Python keeps C's view up to date: which default stream this thread's stream 0 is (under the
# runtime's context epoch), the launch records of the executors (made at phase 1, or at a
# repeatable executor's phase 2 here; rebound with them; dropped before Python launches or
# destroys them; those C consumed are marked consumed here by _drain), and whether C may take
# its paths at all (not while a diagnostic wraps the API or aclInit's configuration sets
# ACL_LAUNCH_BLOCKING).

_RECORDED: set[int] = set()  # executor handles with a launch record in C
_fast = [False]  # C's fast paths are on
_BLOCKING_KEYS = ("ACL_LAUNCH_BLOCKING", "ASCEND_LAUNCH_BLOCKING")


def _note_default() -> None:
    """Tell C this thread's default stream (read after the epoch: a change in between leaves
    C a stale epoch, never a stale stream)."""
    epoch = rt_launch.ctx_epoch()
    st = acl_runtime.current_default_stream()
    if st is not None:
        lib.emb_note_default(epoch, st.handle, st.device)


def _record(handle: int, executor: aclOpExecutor, repeatable: bool) -> None:
    """A launch record for ``executor`` (phase 1: single-use; a repeatable executor's first
    phase 2 here: repeatable), when C can launch it: builtin kernels, a device."""
    if executor.host is not None or not executor.ntasks or executor.templates is None:
        return
    op = _OP_NAMES.get(executor.op)
    if op is None:
        op = _OP_NAMES[executor.op] = executor.op.encode()
    if lib.emb_record_set(handle, op, executor.templates, executor.ntasks, executor.bases,
                          executor.ws_slot + 1, executor.ws_slot, executor.plan.ws_size,
                          executor.device, repeatable):
        _RECORDED.add(handle)


_OP_NAMES: dict[str, bytes] = {}
_TAKEN = [None]  # the buffer of _drain, made at the first use


def _drain() -> None:
    """Mark the single-use executors C launched as consumed (by their operator, as a Python
    phase 2 marks them) and retire their handles."""
    buf = _TAKEN[0]
    if buf is None:
        buf = _TAKEN[0] = ffi.new("uintptr_t[]", 256)
    live = EXECUTORS.live
    while True:
        n = lib.emb_consumed_take(buf, 256)
        handles = ffi.unpack(buf, n)
        for h in handles:
            _RECORDED.discard(h)
            ex = live.get(h)
            if ex is not None and ex.state is READY:
                ex.state = CONSUMED
                ex.consumed_by = ex.op
        EXECUTORS.retire_many(handles)
        if n < 256:
            return


# ----------------------------------------------------- phase 1 in C (src/ascendcl.cpp) -----
# A phase 1 Python answered leaves an entry in C (_p1_enter), from which C answers the same call
# while nothing it depends on changed; Python keeps the entry's objects by its id (_P1) until C
# says it is gone, and makes a C-made executor's object when a call it answers names one
# (_materialize).

_CMADE_BITS = EXECUTORS.base | (1 << 43)  # C's executor handles: the table's, bit 43 set
_CMADE_MASK = (0xFF << 48) | (0xF << 44) | (1 << 43)
_P1: dict[int, tuple] = {}  # entry id -> (op, plan, templates, inputs, outputs, device)
_P1_IDS = iter(range(1, 1 << 62))
_P1_LOCK = threading.Lock()
_P1_ENV_KEYS = ("ACLNN_EMU_SOC", "ACLNN_EMU_ACCUMULATION")  # the order of src/ascendcl.cpp's
_DEAD = [None]  # emb_p1_dead_take's buffer, made at the first use


def _p1_env() -> tuple:
    """What phase 1 reads of the environment, as C is to compare it: (checks, values)."""
    from .. import config

    checks, values = [], []
    for key in _P1_ENV_KEYS:
        if config.override(key) is not None:  # aclInit's file: a change clears the entries
            checks.append(0)
            values.append(ffi.NULL)
            continue
        value = os.environ.get(key)
        checks.append(1)
        values.append(ffi.NULL if value is None else value.encode("utf-8", "surrogateescape"))
    return checks, values


def _p1_enter(key: bytes, op: str, tensors_p, ntensors: int, dim: int, epoch: int, gen: int,
              env: tuple, handle: int) -> None:
    """An entry in C for the phase 1 that made the executor of ``handle`` (just recorded)."""
    ex = EXECUTORS.live.get(handle)
    if ex is None or ex.host is not None or ex.dynamic or ntensors > 8:
        return
    with _P1_LOCK:
        _p1_forget()
        pid = next(_P1_IDS)
        _P1[pid] = (ex.op, ex.plan, ex.templates, tuple(ex.inputs), tuple(ex.outputs),
                    ex.device)
        checks, values = env
        if not lib.emb_p1_set(key, op.encode(), ntensors, tensors_p, dim, epoch, gen,
                              ex.templates, ex.ntasks, ex.bases, ex.ws_slot + 1, ex.ws_slot,
                              ex.plan.ws_size, ex.device, pid, checks, *values):
            del _P1[pid]


def _p1_forget() -> None:
    """Drop the objects of the entries C freed (under _P1_LOCK)."""
    buf = _DEAD[0]
    if buf is None:
        buf = _DEAD[0] = ffi.new("int64_t[]", 256)
    while True:
        n = lib.emb_p1_dead_take(buf, 256)
        for pid in ffi.unpack(buf, n):
            _P1.pop(pid, None)
        if n < 256:
            return


def _materialize(handle: int) -> None:
    """The object of a C-made executor Python has none for: its record's (READY, bound as the
    record is), or a consumed one's when C consumed it (kept as a retired handle). Nothing when C
    does not know the handle (the caller's lookup then answers)."""
    pid, nbases = ffi.new("int64_t *"), ffi.new("int32_t *")
    bases, op_p = ffi.new("uintptr_t[]", 32), ffi.new("char **")
    with _P1_LOCK:
        if handle in EXECUTORS.live or EXECUTORS.lookup(handle)[0] is not None:
            return
        state = lib.emb_cmade_peek(handle, pid, bases, nbases, op_p)
        if state == 0:
            return
        if state == 2:  # consumed by C's phase 2 before Python knew it
            ex = _consumed_executor(ffi.string(op_p[0]).decode())
            EXECUTORS.live[handle] = ex
            EXECUTORS.retire(handle)
            return
        op, plan, templates, inputs, outputs, device = _P1[pid[0]]
        ex = aclOpExecutor(op, plan, list(inputs), list(outputs), device, templates)
        n = len(inputs)
        values = ffi.unpack(bases, nbases[0])
        ex.in_addrs = list(values[:n])
        ex.out_addrs = list(values[n:n + len(outputs)])
        ex.rebind()
        EXECUTORS.live[handle] = ex
        _RECORDED.add(handle)
        if not lib.emb_cmade_mark(handle):  # C launched it meanwhile: consumed, as C says
            _RECORDED.discard(handle)
            ex.state = CONSUMED
            ex.consumed_by = op
            EXECUTORS.retire(handle)


def _consumed_executor(op: str) -> aclOpExecutor:
    from ..plan import Plan

    ex = aclOpExecutor(op, Plan(), [], [], -1)
    ex.state = CONSUMED
    ex.consumed_by = op
    return ex


def _rebind(handle: int, executor: aclOpExecutor) -> None:
    lib.emb_record_rebind(handle, executor.bases, executor.ws_slot + 1)


def _drop(handle: int) -> bool:
    """Drop C's record; False when there was none left (C consumed the executor: _drain)."""
    _RECORDED.discard(handle)
    return bool(lib.emb_record_drop(handle))


def _refresh_fast() -> None:
    """C's paths are on unless the diagnostics wrap the API (they see every call) or aclInit's
    configuration file sets a launch-blocking variable (C reads the environment's itself)."""
    from .. import config
    from ..diagnostics import wrap

    on = not wrap.installed() and not any(config.override(k) is not None
                                          for k in _BLOCKING_KEYS)
    _fast[0] = on
    if lib is not None:
        lib.emb_fast_enable(1 if on else 0)
        lib.emb_p1_clear()  # phase 1 may answer otherwise now


def _forget_records() -> None:
    _RECORDED.clear()  # fork(): the child's C tables are empty (src/ascendcl.cpp)
    _P1.clear()


def _before_fork() -> None:
    if lib is None:
        return
    if lib.emb_consumed_count():
        _drain()  # the child sees the executors C consumed as consumed
    # the child has Python objects for the executors C made (C's records go at the fork)
    cap = lib.emb_record_count() + 64
    buf = ffi.new("uintptr_t[]", cap)
    for h in ffi.unpack(buf, lib.emb_cmade_pending(buf, cap)):
        _materialize(h)


def _fast_setup() -> None:
    from .. import config
    from ..diagnostics import wrap

    core = rt_launch.c_entry_points()
    lib.emb_fast_setup(*(core[name] for name in rt_launch.C_ENTRY_POINTS), core["task_size"])
    lib.emb_p1_setup(core["free_epoch"], EXECUTORS.base)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_before_fork, after_in_child=_forget_records)
    config.on_change.append(_refresh_fast)
    wrap.on_change.append(_refresh_fast)
    _refresh_fast()


# --------------------------------------------------------------------------- install -------

# --------------------------------------- acl_base.h / acl_rt.h: the generic callbacks -------
# (src/acl_extra.cpp) Descriptors and data buffers are aclnn_py.acl's own handles (ints that
# are never user-space addresses); C holds them as pointers.

_MASK64 = (1 << 64) - 1
_RT = acl.rt


def _u(x: int) -> int:
    """An int64_t from C that carries a pointer or size_t: its unsigned value."""
    return x & _MASK64


def _value(fn: Callable) -> Callable:
    """A call whose C result is its value (no code): (value, 0)."""
    return lambda *a: (fn(*a), 0)


def _void(fn: Callable, *args) -> tuple:
    """A void C function: (None, 0)."""
    fn(*args)
    return None, 0


def _ret(fn: Callable) -> Callable:
    """A call that only returns a code: (0, ret)."""
    return lambda *a: (0, fn(*a))


_CALLS: dict[str, Callable[..., tuple]] = {
    "aclDataTypeSize": _value(acl.data_type_size),
    "aclDestroyTensorDesc": lambda d: _void(acl.destroy_tensor_desc, _u(d)),
    "aclGetTensorDescType": lambda d: (acl.get_tensor_desc_type(_u(d)), 0),
    "aclGetTensorDescFormat": lambda d: (acl.get_tensor_desc_format(_u(d)), 0),
    "aclGetTensorDescSize": lambda d: (acl.get_tensor_desc_size(_u(d)), 0),
    "aclGetTensorDescElementCount": lambda d: (acl.get_tensor_desc_element_count(_u(d)), 0),
    "aclGetTensorDescNumDims": lambda d: (acl.get_tensor_desc_num_dims(_u(d)), 0),
    "aclGetTensorDescDim": lambda d, i: (acl.get_tensor_desc_dim(_u(d), _u(i)), 0),
    "aclGetTensorDescDimV2": lambda d, i: acl.get_tensor_desc_dim_v2(_u(d), _u(i)),
    "aclGetTensorDescDimRange": lambda d, i, n: acl.get_tensor_desc_dim_range(_u(d), _u(i),
                                                                              _u(n)),
    "aclGetTensorDescAddress": lambda d: (acl.get_tensor_desc_address(_u(d)), 0),
    "aclSetTensorFormat": lambda d, f: (0, acl.set_tensor_format(_u(d), f)),
    "aclSetTensorStorageFormat": lambda d, f: (0, acl.set_tensor_storage_format(_u(d), f)),
    "aclSetTensorOriginFormat": lambda d, f: (0, acl.set_tensor_origin_format(_u(d), f)),
    "aclSetTensorConst": lambda d, p, n: (0, acl.set_tensor_const(_u(d), _u(p), _u(n))),
    "aclSetTensorPlaceMent": lambda d, m: (0, acl.set_tensor_place_ment(_u(d), m)),
    "aclCreateDataBuffer": lambda p, n: (acl.create_data_buffer(_u(p), _u(n)), 0),
    "aclDestroyDataBuffer": lambda b: (0, acl.destroy_data_buffer(_u(b))),
    "aclUpdateDataBuffer": lambda b, p, n: (0, acl.update_data_buffer(_u(b), _u(p), _u(n))),
    "aclGetDataBufferAddr": lambda b: (acl.get_data_buffer_addr(_u(b)), 0),
    "aclGetDataBufferSize": lambda b: (acl.get_data_buffer_size(_u(b)), 0),
    "aclGetDataBufferSizeV2": lambda b: (acl.get_data_buffer_size_v2(_u(b)), 0),
    "aclrtSynchronizeStreamWithTimeout": lambda s, t: (
        0, _RT.synchronize_stream_with_timeout(_u(s), t)),
    "aclrtSynchronizeEventWithTimeout": lambda e, t: (
        0, _RT.synchronize_event_with_timeout(_u(e), t)),
    "aclrtSynchronizeDeviceWithTimeout": _ret(_RT.synchronize_device_with_timeout),
    "aclrtQueryEvent": lambda e: _RT.query_event(_u(e)),
    "aclrtStreamQuery": lambda s: _RT.stream_query(_u(s)),
    "aclrtCreateEventWithFlag": _RT.create_event_with_flag,
    "aclrtCreateEventExWithFlag": _RT.create_event_ex_with_flag,
    "aclrtCreateStreamWithConfig": _RT.create_stream_with_config,
    "aclrtDeviceCanAccessPeer": _RT.device_can_access_peer,
    "aclrtQueryDeviceStatus": _RT.query_device_status,
    "aclrtDeviceEnablePeerAccess": _ret(_RT.device_enable_peer_access),
    "aclrtDeviceDisablePeerAccess": _ret(_RT.device_disable_peer_access),
    "aclrtSetSysParamOpt": _ret(_RT.set_sys_param_opt),
    "aclrtGetSysParamOpt": _RT.get_sys_param_opt,
    "aclrtCtxSetSysParamOpt": _ret(_RT.ctx_set_sys_param_opt),
    "aclrtCtxGetSysParamOpt": _RT.ctx_get_sys_param_opt,
    "aclrtGetLastError": _value(_RT.get_last_error),
    "aclrtPeekAtLastError": _value(_RT.peek_at_last_error),
    "aclrtMemFlush": lambda p, n: (0, acl_runtime.mem_flush(_u(p), _u(n))),
    "aclrtMemInvalidate": lambda p, n: (0, acl_runtime.mem_invalidate(_u(p), _u(n))),
}


def _api(api_p) -> str:
    return ffi.string(api_p).decode()


@_callback("aclnn-py acl call", ACL_ERROR_INTERNAL_ERROR)
def acl_fail(api_p, code: int, what_p) -> int:
    """A null out-parameter (``what``), or a function the emulator does not implement."""
    api = _api(api_p)
    if what_p != ffi.NULL:
        return _null(api, code, _text(what_p) or "?")
    return record(api, code, f"{api} is not implemented by the aclnn-py emulator (CANN's "
                  "declaration is there so that programs build; docs/c_api.md lists what is "
                  "implemented)")


@_callback("aclnn-py acl call", ACL_ERROR_INTERNAL_ERROR)
def acl_call(api_p, nargs: int, args_p, out) -> int:
    """Integer arguments to the Python call of ``api`` (:data:`_CALLS`); its value (or its
    values, for aclrtGetVersion and aclGetTensorDescDimRange) in ``out[0..3]``."""
    api = _api(api_p)
    args = list(ffi.unpack(args_p, nargs)) if nargs else []
    try:
        if api == "aclrtGetVersion":
            major, minor, patch, ret = acl.get_version()
            out[0], out[1], out[2] = major, minor, patch
            return ret
        value, ret = _CALLS[api](*args)
    except TypeError as exc:  # a value C's types cannot produce
        return record(api, ACL_ERROR_INVALID_PARAM, str(exc))
    except Exception as exc:  # a bug of the emulator: named after the call, never a crash
        return record(api, ACL_ERROR_INTERNAL_ERROR, f"internal error of the emulator: {exc!r}")
    if ret == 0 and value is not None:  # None: a void C function
        if isinstance(value, list):  # the [min, max] of aclGetTensorDescDimRange
            out[0], out[1] = value
        else:
            out[0] = _signed(int(value))
    return ret


def _signed(v: int) -> int:
    return v - (1 << 64) if v > 0x7FFFFFFFFFFFFFFF else v


_DIMS_SETTERS = {"aclSetTensorShape": acl.set_tensor_shape,
                 "aclSetTensorStorageShape": acl.set_tensor_storage_shape,
                 "aclSetTensorOriginShape": acl.set_tensor_origin_shape}


@_callback("aclnn-py acl dims", 0)
def acl_dims(api_p, handle: int, value: int, ndims: int, dims_p) -> int:
    """aclCreateTensorDesc (handle: the data type, value: the format; the new handle or 0) and
    aclSetTensor*Shape (handle: the descriptor; a code)."""
    api = _api(api_p)
    create = api == "aclCreateTensorDesc"
    fail = 0 if create else ACL_ERROR_INVALID_PARAM
    if ndims < 0:
        record(api, ACL_ERROR_INVALID_PARAM, f"numDims {ndims} is negative")
        return fail
    if ndims > acl_desc.MAX_DIMS:
        record(api, ACL_ERROR_INVALID_PARAM, f"numDims {ndims} is above {acl_desc.MAX_DIMS}")
        return fail
    if ndims and dims_p == ffi.NULL:
        record(api, ACL_ERROR_INVALID_PARAM, f"dims is null with numDims {ndims}")
        return fail
    dims = list(ffi.unpack(dims_p, ndims)) if ndims else []
    if create:
        return _signed(acl.create_tensor_desc(handle, dims, value))
    return _DIMS_SETTERS[api](_u(handle), dims)


@_callback("aclnn-py acl ranges", ACL_ERROR_INVALID_PARAM)
def acl_ranges(api_p, handle: int, count: int, pairs_p) -> int:
    """aclSetTensorShapeRange / aclSetTensorValueRange: ``count`` [min, max] pairs."""
    api = _api(api_p)
    if count and pairs_p == ffi.NULL:
        return record(api, ACL_ERROR_INVALID_PARAM, f"the range array is null with count {count}")
    if count > acl_desc.MAX_DIMS * 1024:
        return record(api, ACL_ERROR_INVALID_PARAM, f"count {count} is too large")
    flat = list(ffi.unpack(pairs_p, 2 * count)) if count else []
    pairs = [flat[i:i + 2] for i in range(0, len(flat), 2)]
    fn = acl.set_tensor_shape_range if api == "aclSetTensorShapeRange" else \
        acl.set_tensor_value_range
    return fn(_u(handle), pairs)


@_callback("aclnn-py acl text", ACL_ERROR_INVALID_PARAM)
def acl_text(api_p, handle: int, text_p) -> int:
    """aclSetTensorDescName (void in C) and aclSetTensorDynamicInput."""
    api = _api(api_p)
    text = _text(text_p)
    if api == "aclSetTensorDescName":
        acl.set_tensor_desc_name(_u(handle), text)
        return 0
    return acl.set_tensor_dynamic_input(_u(handle), text)


@_callback("aclGetTensorDescName", None)
def aclGetTensorDescName(handle: int):
    """The name as a C string kept with the descriptor (valid until it is renamed or
    destroyed); NULL for a bad handle."""
    desc = acl_desc.DESCS.find("aclGetTensorDescName", "desc", handle)[0]
    if desc is None:
        return ffi.NULL
    with _NAME_LOCK:  # one C copy per name: a pointer another thread got stays valid
        if desc.c_name is None:
            desc.c_name = ffi.new("char[]", desc.name.encode("utf-8", "surrogateescape"))
        return desc.c_name


_NAME_LOCK = threading.Lock()


def install(embedded_ffi, embedded_lib) -> None:
    """Attach every callback the library declares (src/callbacks.h) to its C name."""
    global ffi, lib
    ffi, lib = embedded_ffi, embedded_lib
    for name, fn in CALLBACKS.items():
        api, error = _ERRORS[name]
        kwargs = {} if error is None else {"error": error}  # None: NULL (cffi's default)
        embedded_ffi.def_extern(name=name, onerror=_onerror_for(api, error), **kwargs)(fn)
    _fast_setup()


def callback_names() -> list[str]:
    return sorted(CALLBACKS)



# ----------------------------------------------------- lists, arrays, custom operators -----
# (aclTensorList, aclFloatArray, aclBoolArray, aclSetDynamicTensorAddr; the generic phase 1 of
# the custom operators' libcust_opapi.so, aclnn_py/toolkit/opgen.py)

TENSOR_LISTS = Handles(5, "aclTensorList", "aclCreateTensorList", aclTensorList)
FLOAT_ARRAYS = Handles(6, "aclFloatArray", "aclCreateFloatArray", aclFloatArray)
BOOL_ARRAYS = Handles(7, "aclBoolArray", "aclCreateBoolArray", aclBoolArray)
_LIST_TENSORS: dict[int, list[int]] = {}  # a tensor list's handle -> its tensors' handles
MAX_LIST = 1 << 16


def _destroy_list(tensor_list) -> int:
    ret = aclnn.aclDestroyTensorList(tensor_list)
    if ret == 0 and tensor_list is not None:
        for h in _LIST_TENSORS.pop(id(tensor_list), []):
            TENSORS.retire(h)
    return ret


_DESTROY.update({
    "aclDestroyTensorList": (TENSOR_LISTS, "tensor list", _destroy_list),
    "aclDestroyFloatArray": (FLOAT_ARRAYS, "array", aclnn.aclDestroyFloatArray),
    "aclDestroyBoolArray": (BOOL_ARRAYS, "array", aclnn.aclDestroyBoolArray),
})


def _count(api: str, n: int) -> Optional[int]:
    if n > MAX_LIST:
        record(api, ACLNN_ERR_PARAM_INVALID, f"size {n} is larger than {MAX_LIST}")
        return None
    return n


@_callback("aclCreateTensorList", 0)
def aclCreateTensorList(value_p, size: int) -> int:
    api = "aclCreateTensorList"
    if value_p == ffi.NULL:
        return 0 if aclnn.aclCreateTensorList(None) is None else 0
    if _count(api, size) is None:
        return 0
    handles = list(ffi.unpack(value_p, size))
    tensors = []
    for i, h in enumerate(handles):
        if h == 0:
            record(api, ACLNN_ERR_PARAM_NULLPTR, f"value[{i}] is a null tensor")
            return 0
        try:
            tensors.append(TENSORS.get(f"value[{i}]", h))
        except Unknown as exc:
            record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
            return 0
    tensor_list = aclnn.aclCreateTensorList(tensors)
    if tensor_list is None:
        return 0
    _LIST_TENSORS[id(tensor_list)] = handles
    return TENSOR_LISTS.add(tensor_list)


@_callback("aclCreateFloatArray", 0)
def aclCreateFloatArray(value_p, size: int) -> int:
    api = "aclCreateFloatArray"
    if value_p != ffi.NULL and _count(api, size) is None:
        return 0
    values = None if value_p == ffi.NULL else list(ffi.unpack(value_p, size))
    array = aclnn.aclCreateFloatArray(values)
    return 0 if array is None else FLOAT_ARRAYS.add(array)


@_callback("aclCreateBoolArray", 0)
def aclCreateBoolArray(value_p, size: int) -> int:
    api = "aclCreateBoolArray"
    if value_p != ffi.NULL and _count(api, size) is None:
        return 0
    values = None if value_p == ffi.NULL else [b != 0 for b in ffi.unpack(value_p, size)]
    array = aclnn.aclCreateBoolArray(values)
    return 0 if array is None else BOOL_ARRAYS.add(array)


@_callback("aclSetDynamicTensorAddr", ACLNN_ERR_INNER)
def aclSetDynamicTensorAddr(handle: int, ir_index: int, relative_index: int, list_h: int,
                            addr: int) -> int:
    api = "aclSetDynamicTensorAddr"
    executor, ret = _executor(api, handle, ACLNN_ERR_INNER)
    if ret:
        return ret
    try:
        tensors = TENSOR_LISTS.get("tensors", list_h)
    except Unknown as exc:
        return record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
    ret = aclnn.aclSetDynamicTensorAddr(executor, ir_index, relative_index, tensors, addr)
    if ret == 0 and executor is not None and handle in _RECORDED:
        _rebind(handle, executor)
    lib.emb_p1_clear()  # a tensor moved: C's phase-1 entries naming it go
    return ret


_VENDORS: dict[str, dict] = {}  # a vendor directory -> its operators, loaded once
_vendor_lock = threading.Lock()


def _vendor_ops(vendor: str) -> dict:
    """The custom operators of a package built by ``aclnn-py opgen`` (``vendor`` is its
    ``vendors/<name>`` directory, found by libcust_opapi.so from its own path), loaded into the
    emulator on first use."""
    from .. import custom
    from .opgen import read_package

    with _vendor_lock:
        ops = _VENDORS.get(vendor)
        if ops is None:
            sources, descs, kernels = read_package(vendor)
            have = custom.loaded()
            fresh = [s for s, d in zip(sources, descs) if d.op not in have]
            if fresh:
                custom.load(fresh, kernels)
            ops = _VENDORS[vendor] = {d.op: d for d in descs}
    return ops


@_callback("custom_phase1", ACLNN_ERR_INNER)
def custom_phase1(vendor_p, op_p, nargs: int, args_p, ws_out, ex_out) -> int:
    """A custom operator's aclnnXxxGetWorkspaceSize (libcust_opapi.so): its arguments in the
    generated order as uintptr_t words (handles; int64_t and double bits; bool 0/1; char *)."""
    import struct

    op = ffi.string(op_p).decode()
    api = f"aclnn{op}GetWorkspaceSize"
    from .. import custom

    try:
        _vendor_ops(ffi.string(vendor_p).decode("utf-8", "surrogateescape"))
    except custom.CustomOpError as exc:
        return record(api, ACLNN_ERR_INNER, f"cannot load the custom operator package: {exc}")
    c = custom.loaded().get(op)
    if c is None:
        return record(api, ACLNN_ERR_INNER, f"{op} is not in its custom operator package")
    desc = c.desc
    words = list(ffi.unpack(args_p, nargs))
    if nargs != len(desc.inputs) + len(desc.attrs) + len(desc.c_outputs):
        return record(api, ACLNN_ERR_INNER, f"{op}: {nargs} arguments from C, the definition "
                      "has a different count (a library and a definition of two builds?)")
    args: list = []
    names = desc.c_names()  # the generated parameter names, for the messages
    k = 0
    try:
        for p in desc.inputs:
            h = words[k]
            table = TENSOR_LISTS if p.param_type == "dynamic" else TENSORS
            args.append(table.get(names[k], h))
            k += 1
        for a in desc.attrs:
            w = words[k]
            k += 1
            if a.type == "int":
                args.append(w - (1 << 64) if w >= 1 << 63 else w)
            elif a.type == "float":
                args.append(struct.unpack("<d", struct.pack("<Q", w))[0])
            elif a.type == "bool":
                args.append(bool(w))
            elif a.type == "str":
                args.append(None if w == 0 else
                            ffi.string(ffi.cast("char *", w)).decode("utf-8", "replace"))
            else:
                table = {"listInt": INT_ARRAYS, "listFloat": FLOAT_ARRAYS,
                         "listBool": BOOL_ARRAYS}[a.type]
                args.append(table.get(names[k - 1], w))
        for p in desc.c_outputs:  # a ref output's tensor is its input's
            # a null output is None: phase 1 answers 161001 for a required one, and an absent
            # optional one (<name>OutOptional) reaches the kernel as None
            table = TENSOR_LISTS if p.param_type == "dynamic" else TENSORS
            args.append(table.get(names[k], words[k]))
            k += 1
    except Unknown as exc:
        return record(api, ACLNN_ERR_PARAM_INVALID, str(exc))
    return _phase1_out(api, c.get_workspace_size(*args), ws_out, ex_out)
