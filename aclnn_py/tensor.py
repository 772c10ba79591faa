"""aclTensor, aclScalar, aclIntArray, aclFloatArray, aclBoolArray, aclTensorList: the meta API's
objects, and view geometry helpers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

from . import dtypes
from .cint import c_int, fits
from .status import record


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides: last = 1, stride[i] = shape[i+1] * stride[i+1]."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(int(shape[i + 1]), 1)
    return tuple(strides)


def numel(shape: Sequence[int]) -> int:
    return math.prod(int(d) for d in shape)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major dense (dims of size 1 may have any stride), as CANN's IsContiguous."""
    expected = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expected:
            return False
        expected *= d
    return True


def extent(shape: Sequence[int], strides: Sequence[int], offset: int) -> tuple[int, int]:
    """(lowest, highest) element index a non-empty view touches, relative to its base."""
    lo = hi = offset
    for d, s in zip(shape, strides):
        if s >= 0:
            hi += (d - 1) * s
        else:
            lo += (d - 1) * s
    return lo, hi


class aclTensor:
    """A tensor descriptor: view shape, dtype, element strides and offset, format, storage shape
    and the device address of storage element 0. Created by ``aclnn.aclCreateTensor``."""

    __slots__ = ("view_dims", "data_type", "strides", "offset", "format", "storage_dims",
                 "data", "destroyed", "key", "itemsize", "ndim", "empty", "contiguous", "lo",
                 "hi", "_numel")

    def __init__(self, view_dims, data_type, strides, offset, fmt, storage_dims, data):
        self.view_dims: tuple[int, ...] = view_dims
        self.data_type: int = data_type
        self.strides: tuple[int, ...] = strides
        self.offset: int = offset
        self.format: int = fmt
        self.storage_dims: tuple[int, ...] = storage_dims
        self.data: int = data
        self.destroyed = False
        # Facts of the descriptor, which never changes after creation (only ``data`` and
        # ``destroyed`` do): computed once here, read by every phase 1.
        self.key = (data_type, view_dims, strides, offset, fmt, storage_dims)
        self.itemsize: int = dtypes.itemsize(data_type)
        self.ndim: int = len(view_dims)
        self.empty: bool = any(d == 0 for d in view_dims)
        self.contiguous: bool = is_contiguous(view_dims, strides)
        self._numel: int = numel(view_dims)
        if self.empty:
            self.lo = self.hi = 0
        else:  # [lo, hi): the bytes the view touches, relative to ``data``
            lo, hi = extent(view_dims, strides, offset)
            self.lo, self.hi = lo * self.itemsize, (hi + 1) * self.itemsize

    def numel(self) -> int:
        return self._numel

    def is_empty(self) -> bool:
        return self.empty

    def is_contiguous(self) -> bool:
        return self.contiguous

    def byte_range(self) -> tuple[int, int]:
        """[start, end) device bytes the view touches (empty views touch none)."""
        return self.data + self.lo, self.data + self.hi

    def __repr__(self) -> str:
        state = " destroyed" if self.destroyed else ""
        try:
            fmt = dtypes.aclFormat(self.format).name.replace("ACL_FORMAT_", "")
        except ValueError:
            fmt = str(self.format)
        return (f"<aclTensor{state} {dtypes.name(self.data_type)}{list(self.view_dims)} "
                f"strides={list(self.strides)} offset={self.offset} format={fmt} "
                f"storage={list(self.storage_dims)} data=0x{self.data:x}>")


class aclScalar:
    __slots__ = ("value", "data_type", "destroyed")

    def __init__(self, value, data_type: int):
        self.value = value
        self.data_type = data_type
        self.destroyed = False

    def __repr__(self) -> str:
        return f"<aclScalar {dtypes.name(self.data_type)} {self.value!r}>"


class aclIntArray:
    __slots__ = ("values", "destroyed")

    def __init__(self, values: tuple[int, ...]):
        self.values = values
        self.destroyed = False

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"<aclIntArray {list(self.values)}>"


class aclFloatArray:
    """An array of float values (CANN: aclCreateFloatArray(const float *value, uint64_t size));
    a custom operator's listFloat attribute."""

    __slots__ = ("values", "destroyed")

    def __init__(self, values: tuple[float, ...]):
        self.values = values
        self.destroyed = False

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"<aclFloatArray {list(self.values)}>"


class aclBoolArray:
    """An array of bool values (CANN: aclCreateBoolArray(const bool *value, uint64_t size)); a
    custom operator's listBool attribute."""

    __slots__ = ("values", "destroyed")

    def __init__(self, values: tuple[bool, ...]):
        self.values = values
        self.destroyed = False

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"<aclBoolArray {list(self.values)}>"


class aclTensorList:
    """A list of tensors (CANN: aclCreateTensorList(const aclTensor *const *value, uint64_t
    size)); a custom operator's dynamic input. The list holds the tensors, not copies:
    aclDestroyTensorList destroys them too, as CANN's does."""

    __slots__ = ("tensors", "destroyed")

    def __init__(self, tensors: tuple[aclTensor, ...]):
        self.tensors = tensors
        self.destroyed = False

    def __len__(self) -> int:
        return len(self.tensors)

    def __repr__(self) -> str:
        return f"<aclTensorList of {len(self.tensors)}>"


def _int_seq(api: str, name: str, value) -> tuple[int, ...]:
    """A sequence of int64_t values (``cint.c_int``: values >= 2**63 wrap to negative), or
    TypeError (what C could not compile)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{api}: '{name}' must be a sequence of ints, not {type(value).__name__}")
    out = []
    for i, v in enumerate(value):
        if type(v) is int and -(1 << 63) <= v < 1 << 63:  # the common case, no name built
            out.append(v)
        else:
            out.append(c_int(api, f"{name}[{i}]", v, "int64"))
    return tuple(out)


def _int_arg(api: str, name: str, value, allow_none: bool = False, ctype: str = "int64") -> int:
    return c_int(api, name, value, ctype, allow_none)


def create_tensor(view_dims, data_type, stride, offset, fmt, storage_dims, tensor_data):
    api = "aclCreateTensor"
    if view_dims is None or storage_dims is None:
        which = "viewDims" if view_dims is None else "storageDims"
        record(api, 161001, f"{which} is null")
        return None
    view = _int_seq(api, "view_dims", view_dims)
    storage = _int_seq(api, "storage_dims", storage_dims)
    dt = _int_arg(api, "data_type", data_type, ctype="int32")
    off = _int_arg(api, "offset", offset)
    fm = _int_arg(api, "format", fmt, ctype="int32")
    data = _int_arg(api, "tensor_data", tensor_data, allow_none=True, ctype="uint64")
    for name, v in (("data_type", dt), ("format", fm)):
        if not fits(v, "int32"):
            record(api, 161002, f"{name} {v} does not fit the enum (int32_t) parameter")
            return None
    strides = contiguous_strides(view) if stride is None else _int_seq(api, "stride", stride)
    if len(strides) != len(view):
        record(api, 161002, f"stride has {len(strides)} values for {len(view)} view dims")
        return None
    return aclTensor(view, dt, strides, off, fm, storage, data)


def create_scalar(value, data_type):
    api = "aclCreateScalar"
    dt = _int_arg(api, "data_type", data_type, ctype="int32")
    if value is None:
        record(api, 161001, "value is null")
        return None
    if not isinstance(value, (int, float, complex, bool)) and not hasattr(value, "__float__"):
        raise TypeError(f"{api}: value must be a number, not {type(value).__name__}")
    d = dtypes.lookup(dt)
    if d is None:
        record(api, 161002, f"data_type {dt} is not an aclDataType")
        return None
    if d.kind == "float":
        value = float(value)
    elif d.kind in ("int", "uint"):
        if not hasattr(value, "__index__") and not math.isfinite(complex(value).real):
            record(api, 161002, f"value {value!r} cannot be stored in {dtypes.name(dt)}")
            return None
        value = int(value if hasattr(value, "__index__") else complex(value).real)
    elif d.kind == "bool":
        value = bool(value)
    return aclScalar(value, dt)


def create_int_array(values):
    api = "aclCreateIntArray"
    if values is None:
        record(api, 161001, "value is null")
        return None
    return aclIntArray(_int_seq(api, "values", values))


def create_float_array(values):
    api = "aclCreateFloatArray"
    if values is None:
        record(api, 161001, "value is null")
        return None
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{api}: 'values' must be a sequence of floats, not "
                        f"{type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
            raise TypeError(f"{api}: 'values[{i}]' must be a float, not {type(v).__name__}")
        out.append(float(v))
    return aclFloatArray(tuple(out))


def create_bool_array(values):
    api = "aclCreateBoolArray"
    if values is None:
        record(api, 161001, "value is null")
        return None
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{api}: 'values' must be a sequence of bools, not "
                        f"{type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, (bool, int)) or isinstance(v, int) and v not in (0, 1):
            raise TypeError(f"{api}: 'values[{i}]' must be a bool, not {v!r}")
        out.append(bool(v))
    return aclBoolArray(tuple(out))


def create_tensor_list(values):
    api = "aclCreateTensorList"
    if values is None:
        record(api, 161001, "value is null")
        return None
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{api}: 'values' must be a sequence of aclTensor, not "
                        f"{type(values).__name__}")
    items = tuple(values)
    for i, t in enumerate(items):
        if t is None:
            record(api, 161001, f"value[{i}] is a null tensor")
            return None
        if not isinstance(t, aclTensor):
            raise TypeError(f"{api}: 'values[{i}]' must be an aclTensor, not "
                            f"{type(t).__name__}")
        if t.destroyed:
            record(api, 161002, f"value[{i}] {t!r} was already destroyed")
            return None
    return aclTensorList(items)


def destroy_tensor_list(tensor_list) -> int:
    api = "aclDestroyTensorList"
    if tensor_list is None:
        return 0
    ret = check_handle(api, tensor_list, aclTensorList, "tensor list")
    if ret:
        return ret
    tensor_list.destroyed = True
    for t in tensor_list.tensors:
        t.destroyed = True
    return 0


def check_handle(api: str, obj, cls, what: str) -> int:
    """0, or a recorded code for a destroyed handle. None is handled by the caller."""
    if not isinstance(obj, cls):
        raise TypeError(f"{api}: {what} must be an {cls.__name__} or None, not "
                        f"{type(obj).__name__}")
    if obj.destroyed:
        return record(api, 161002, f"{what} {obj!r} was already destroyed")
    return 0


def destroy(api: str, obj, cls, what: str) -> int:
    if obj is None:
        return 0
    ret = check_handle(api, obj, cls, what)
    if ret:
        return ret
    obj.destroyed = True
    return 0


def getter(api: str, tensor, fn) -> tuple[Optional[object], int]:
    if tensor is None:
        return None, record(api, 161001, "tensor is null")
    ret = check_handle(api, tensor, aclTensor, "tensor")
    if ret:
        return None, ret
    return fn(tensor), 0
