"""acl.util: pointer helpers of pyACL.

Host pointers are plain ints. Device memory is emulated with host memory, but these helpers refuse
device pointers, as a real NPU's memory is not readable by the host: copy it with
``acl.rt.memcpy(..., ACL_MEMCPY_DEVICE_TO_HOST)`` first.
"""

from __future__ import annotations

import numpy as np

from .. import runtime as _rt
from .._C import ffi
from ..cint import c_int

# NumPy C type numbers accepted by pyACL's ptr_to_numpy
_NPY_TYPES = {
    0: np.bool_, 1: np.int8, 2: np.uint8, 3: np.int16, 4: np.uint16, 5: np.int32, 6: np.uint32,
    7: np.int64, 8: np.uint64, 9: np.longlong, 10: np.ulonglong, 11: np.float32, 12: np.float64,
    23: np.float16,
}


def _host_only(api: str, ptr: int) -> None:
    if ptr >= 1 << 63:  # kernel space on every 64-bit OS: reading it would crash the process
        raise ValueError(f"{api}: 0x{ptr:x} is not a user-space host address (a negative "
                         "pointer wraps modulo 2**64)")
    if _rt.find(ptr)[0]:
        raise ValueError(
            f"{api}: 0x{ptr:x} is device memory, which the host cannot read on real hardware; "
            "copy it with acl.rt.memcpy(..., ACL_MEMCPY_DEVICE_TO_HOST) first"
        )
    if _rt.is_device(ptr):  # in a device's address range, no live allocation: never host memory
        raise ValueError(f"{api}: {_rt.not_live_text('ptr', ptr, -1)}; it is not host memory")


def numpy_to_ptr(array: np.ndarray) -> int:
    """The address of an ndarray's data (deprecated in pyACL; the array must stay alive)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"numpy_to_ptr expects a numpy.ndarray, not {type(array).__name__}")
    return int(array.__array_interface__["data"][0])


def bytes_to_ptr(data) -> int:
    """The address of a bytes-like object's buffer. As in pyACL, the buffer may be written
    through the pointer (samples copy device results into a ``bytes`` object this way); the
    object must stay alive while the pointer is used."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"bytes_to_ptr expects bytes, not {type(data).__name__}")
    if len(data) == 0:
        return 0
    return int(ffi.cast("uintptr_t", ffi.from_buffer(data)))


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """A new ``bytes`` holding a copy of ``size`` bytes of host memory at ``ptr``."""
    ptr = c_int("ptr_to_bytes", "ptr", ptr, "uint64")
    size = c_int("ptr_to_bytes", "size", size, "int64")
    if size < 0:
        raise ValueError(f"ptr_to_bytes: size must be >= 0, got {size}")
    if size == 0:
        return b""
    if ptr == 0:
        raise ValueError("ptr_to_bytes: ptr is null")
    _host_only("ptr_to_bytes", ptr)
    return ffi.buffer(ffi.cast("char *", ptr), size)[:]


def ptr_to_numpy(ptr: int, shape, npy_type: int) -> np.ndarray:
    """An ndarray viewing host memory at ``ptr`` (no copy). ``npy_type`` is a NumPy C type
    number: 11 float32, 12 float64, 23 float16, 5 int32, ..."""
    ptr = c_int("ptr_to_numpy", "ptr", ptr, "uint64")
    npy_type = c_int("ptr_to_numpy", "npy_type", npy_type, "int32")
    if npy_type not in _NPY_TYPES:
        raise ValueError(f"ptr_to_numpy: unsupported npy_type {npy_type}; known: "
                         f"{sorted(_NPY_TYPES)}")
    if ptr == 0:
        raise ValueError("ptr_to_numpy: ptr is null")
    _host_only("ptr_to_numpy", ptr)
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    shape = tuple(c_int("ptr_to_numpy", f"shape[{i}]", s, "int64") for i, s in enumerate(dims))
    if any(s < 0 for s in shape):
        raise ValueError(f"ptr_to_numpy: shape {list(shape)} has a negative dim")
    dtype = np.dtype(_NPY_TYPES[npy_type])
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = ffi.buffer(ffi.cast("char *", ptr), max(nbytes, 0))
    return np.frombuffer(buf, dtype=dtype).reshape(shape)
