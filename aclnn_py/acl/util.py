"""acl.util: pointer helpers of pyACL.

Host pointers are plain ints. Device memory is emulated with host memory, but these helpers refuse
device pointers, as a real NPU's memory is not readable by the host: copy it with
``acl.rt.memcpy(..., ACL_MEMCPY_DEVICE_TO_HOST)`` first.
"""

import numpy as _np

from .. import runtime as _rt
from ..cint import c_int as _c_int

# NumPy C type numbers accepted by pyACL's ptr_to_numpy
_NPY_TYPES = {
    0: _np.bool_, 1: _np.int8, 2: _np.uint8, 3: _np.int16, 4: _np.uint16, 5: _np.int32,
    6: _np.uint32, 7: _np.int64, 8: _np.uint64, 9: _np.longlong, 10: _np.ulonglong,
    11: _np.float32, 12: _np.float64, 23: _np.float16,
}


def _host_only(api: str, ptr: int) -> None:
    if ptr >= _rt.HOST_ADDRESS_END:  # kernel space on every 64-bit OS: reading it would crash
        raise ValueError(f"{api}: 0x{ptr:x} is not a user-space host address (a negative "
                         "pointer wraps modulo 2**64)")
    if _rt.find(ptr)[0]:
        raise ValueError(
            f"{api}: 0x{ptr:x} is device memory, which the host cannot read on real hardware; "
            "copy it with acl.rt.memcpy(..., ACL_MEMCPY_DEVICE_TO_HOST) first"
        )
    if _rt.is_device(ptr):  # in a device's address range, no live allocation: never host memory
        raise ValueError(f"{api}: {_rt.not_live_text('ptr', ptr, -1)}; it is not host memory")


def numpy_to_ptr(array: _np.ndarray) -> int:
    """The address of an ndarray's data (deprecated in pyACL; the array must stay alive)."""
    if not isinstance(array, _np.ndarray):
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
    return _rt.buffer_address(data)


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """A new ``bytes`` holding a copy of ``size`` bytes of host memory at ``ptr``."""
    ptr = _c_int("ptr_to_bytes", "ptr", ptr, "uint64")
    size = _c_int("ptr_to_bytes", "size", size, "int64")
    if size < 0:
        raise ValueError(f"ptr_to_bytes: size must be >= 0, got {size}")
    if size == 0:
        return b""
    if ptr == 0:
        raise ValueError("ptr_to_bytes: ptr is null")
    _host_only("ptr_to_bytes", ptr)
    return _rt.host_buffer(ptr, size)[:]


def ptr_to_numpy(ptr: int, shape, npy_type: int) -> _np.ndarray:
    """An ndarray viewing host memory at ``ptr`` (no copy). ``npy_type`` is a NumPy C type
    number: 11 float32, 12 float64, 23 float16, 5 int32, ..."""
    ptr = _c_int("ptr_to_numpy", "ptr", ptr, "uint64")
    npy_type = _c_int("ptr_to_numpy", "npy_type", npy_type, "int32")
    if npy_type not in _NPY_TYPES:
        raise ValueError(f"ptr_to_numpy: unsupported npy_type {npy_type}; known: "
                         f"{sorted(_NPY_TYPES)}")
    if ptr == 0:
        raise ValueError("ptr_to_numpy: ptr is null")
    _host_only("ptr_to_numpy", ptr)
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    shape = tuple(_c_int("ptr_to_numpy", f"shape[{i}]", s, "int64") for i, s in enumerate(dims))
    if any(s < 0 for s in shape):
        raise ValueError(f"ptr_to_numpy: shape {list(shape)} has a negative dim")
    dtype = _np.dtype(_NPY_TYPES[npy_type])
    nbytes = int(_np.prod(shape, dtype=_np.int64)) * dtype.itemsize
    buf = _rt.host_buffer(ptr, max(nbytes, 0))
    return _np.frombuffer(buf, dtype=dtype).reshape(shape)
