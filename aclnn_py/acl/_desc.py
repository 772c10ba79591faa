"""Tensor descriptors and data buffers of acl_base.h (pyACL's ``acl.create_tensor_desc``,
``acl.create_data_buffer``, ...), re-exported by ``aclnn_py.acl``.

The one implementation: the toolkit's C functions (aclCreateTensorDesc, aclGetDataBufferAddr,
...) call these through its bridge. Both are host bookkeeping: a descriptor records a data type,
a format, dims and the optional attributes CANN's setters add; a data buffer records an address
and a size (nothing is allocated or read). The semantics follow CANN's AscendCL API reference;
docs/pyacl.md and docs/c_api.md list the calls and the emulator's answers.

Handles are ints, as in pyACL: opaque values with ``0xAD`` in bits 48-55 (never a user-space
address), never reused. A destroyed handle is remembered for a while, so a second destroy gets a
message saying so; no handle crashes.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Any, Optional

from .. import dtypes as _dtypes
from ..cint import c_int as _c_int
from ..status import aclError as _E
from ..status import record as _record

_INVALID = int(_E.ACL_ERROR_INVALID_PARAM)
_TOMBSTONES = 4096
MAX_DIMS = 64  # CANN's tensors have at most 8 dims (25 for some formats); more is refused
UNKNOWN_RANK = 0xFFFFFFFFFFFFFFFE  # ACL_UNKNOWN_RANK: aclGetTensorDescNumDims for dims {-2}
ACL_DT_UNDEFINED = -1
ACL_FORMAT_UNDEFINED = -1
_SUB_BYTE_BITS = {29: 4, 30: 1, 38: 6, 39: 6, 40: 4, 41: 4}  # INT4, UINT1, FLOAT6_*, FLOAT4_*
_NO_SIZE = {13}  # ACL_STRING: no fixed element size


class HandleTable:
    """Opaque C handles of one kind of object: ``tag`` in bits 48-55 (not a user-space
    address), the kind in bits 44-47, a serial number above 4 zero bits. Live objects by handle,
    and the last ``tombstones`` destroyed handles (with their objects when ``keep``), so that a
    use after destroy gets its own message. The toolkit's bridge keeps its handles in these
    too."""

    def __init__(self, tag: int, kind: int, name: str, creator: str, keep: bool = False,
                 tombstones: int = _TOMBSTONES):
        self.base = (tag << 48) | (kind << 44)
        self.name, self.creator, self.keep, self.tombstones = name, creator, keep, tombstones
        self.live: dict[int, Any] = {}
        self.dead: OrderedDict[int, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.serials = itertools.count(1)  # next() is atomic: add takes no lock

    def add(self, obj: Any) -> int:
        handle = self.base | (next(self.serials) << 4)
        self.live[handle] = obj  # one dict store, atomic like lookup's reads
        return handle

    def lookup(self, handle: int) -> tuple[Any, bool]:
        """(the live object or None, whether ``handle`` is a remembered destroyed one); the
        object of a destroyed handle when the table keeps them."""
        with self.lock:
            obj = self.live.get(handle)
            if obj is not None:
                return obj, False
            return self.dead.get(handle), handle in self.dead

    def retire(self, handle: int) -> None:
        with self.lock:
            obj = self.live.pop(handle, None)
            if obj is not None:
                self.dead[handle] = obj if self.keep else None
                while len(self.dead) > self.tombstones:
                    self.dead.popitem(last=False)

    def retire_many(self, handles: list[int]) -> None:
        """retire for each of ``handles``, under one lock."""
        live, dead, keep = self.live, self.dead, self.keep
        with self.lock:
            for handle in handles:
                obj = live.pop(handle, None)
                if obj is not None:
                    dead[handle] = obj if keep else None
            while len(dead) > self.tombstones:
                dead.popitem(last=False)


class _Registry(HandleTable):
    """Descriptors and buffers: a null, destroyed or unknown handle is a code and a message."""

    def __init__(self, kind: int, name: str, creator: str):
        super().__init__(0xAD, kind, name, creator)

    def find(self, api: str, what: str, handle) -> tuple[Any, int]:
        """(object, 0), or (None, 100000 with a message) for null, destroyed, unknown."""
        if handle is None or handle == 0:
            return None, _record(api, _INVALID, f"{what} is null")
        if isinstance(handle, bool) or not isinstance(handle, int):
            raise TypeError(f"{api}: {what} must be an int handle, not {type(handle).__name__}")
        obj, dead = self.lookup(handle)
        if obj is not None:
            return obj, 0
        text = (f"{what} 0x{handle & 0xFFFFFFFFFFFFFFFF:x} was already destroyed" if dead else
                f"{what} 0x{handle & 0xFFFFFFFFFFFFFFFF:x} is not a live {self.name} (never "
                f"created by {self.creator}, or destroyed long ago)")
        return None, _record(api, _INVALID, text)

    remove = HandleTable.retire


class TensorDesc:
    """One aclTensorDesc's fields."""

    __slots__ = ("dtype", "format", "dims", "shape_range", "value_range", "name",
                 "storage_format", "storage_dims", "origin_format", "origin_dims",
                 "dynamic_input", "const", "placement", "c_name")

    def __init__(self, dtype: int, fmt: int, dims: list[int]):
        self.dtype, self.format, self.dims = dtype, fmt, dims
        self.shape_range: Optional[list[tuple[int, int]]] = None
        self.value_range: Optional[list[tuple[int, int]]] = None
        self.name = ""
        self.storage_format: Optional[int] = None
        self.storage_dims: Optional[list[int]] = None
        self.origin_format: Optional[int] = None
        self.origin_dims: Optional[list[int]] = None
        self.dynamic_input: Optional[str] = None
        self.const: Optional[tuple[int, int]] = None  # (address, length)
        self.placement = 0  # ACL_MEMTYPE_DEVICE
        self.c_name: Any = None  # the toolkit's C copy of name (its bridge keeps it alive)


class DataBuffer:
    """One aclDataBuffer: an address and a size."""

    __slots__ = ("addr", "size")

    def __init__(self, addr: int, size: int):
        self.addr, self.size = addr, size


DESCS = _Registry(1, "aclTensorDesc", "aclCreateTensorDesc")
BUFFERS = _Registry(2, "aclDataBuffer", "aclCreateDataBuffer")


# ------------------------------------------------------------------------- data types -----


def data_type_size(data_type) -> int:
    """aclDataTypeSize: bytes per element of ``data_type``; 0 for ACL_STRING, the sub-byte types
    (INT4, UINT1, FLOAT6_*, FLOAT4_*) and values that are no aclDataType."""
    data_type = _c_int("aclDataTypeSize", "dataType", data_type, "int32")
    if data_type in _SUB_BYTE_BITS or data_type in _NO_SIZE:
        return 0
    d = _dtypes.lookup(data_type)
    return 0 if d is None else d.itemsize


def _bits(data_type: int) -> int:
    if data_type in _SUB_BYTE_BITS:
        return _SUB_BYTE_BITS[data_type]
    return 8 * data_type_size(data_type)


# ----------------------------------------------------------------- tensor descriptors -----


def _dims(api: str, what: str, dims) -> Optional[list[int]]:
    """A validated dims list, or None with a message."""
    if dims is None:
        _record(api, _INVALID, f"{what} is null")
        return None
    if isinstance(dims, int):
        dims = [dims]
    out = [_c_int(api, f"{what}[{i}]", v, "int64") for i, v in enumerate(dims)]
    if len(out) > MAX_DIMS:
        _record(api, _INVALID, f"{what} has {len(out)} entries; at most {MAX_DIMS}")
        return None
    for i, v in enumerate(out):
        if v < -2:
            _record(api, _INVALID, f"{what}[{i}] is {v}; a dim is >= 0, -1 (dynamic) or -2 "
                    "(unknown rank)")
            return None
    return out


def create_tensor_desc(data_type, dims, format) -> int:  # noqa: A002  (pyACL's name)
    """aclCreateTensorDesc: a new descriptor handle; 0 (C's nullptr, with a message) for dims
    that are not a list of int64 values >= -2."""
    api = "aclCreateTensorDesc"
    data_type = _c_int(api, "dataType", data_type, "int32")
    fmt = _c_int(api, "format", format, "int32")
    d = _dims(api, "dims", dims)
    if d is None:
        return 0
    return DESCS.add(TensorDesc(data_type, fmt, d))


def destroy_tensor_desc(desc) -> None:
    """aclDestroyTensorDesc (void in C): null is ignored, as in CANN; a destroyed or unknown
    handle leaves a message."""
    if desc is None or desc == 0:
        return None
    obj, ret = DESCS.find("aclDestroyTensorDesc", "desc", desc)
    if obj is not None:
        DESCS.remove(desc)
    return None


def _desc(api: str, desc) -> Optional[TensorDesc]:
    return DESCS.find(api, "desc", desc)[0]


def get_tensor_desc_type(desc) -> int:
    """aclGetTensorDescType: the data type; ACL_DT_UNDEFINED (-1) for a bad handle."""
    d = _desc("aclGetTensorDescType", desc)
    return ACL_DT_UNDEFINED if d is None else d.dtype


def get_tensor_desc_format(desc) -> int:
    """aclGetTensorDescFormat: the format; ACL_FORMAT_UNDEFINED (-1) for a bad handle."""
    d = _desc("aclGetTensorDescFormat", desc)
    return ACL_FORMAT_UNDEFINED if d is None else d.format


def _count(d: TensorDesc) -> Optional[int]:
    """The element count, None when a dim is unknown (-1 / -2)."""
    n = 1
    for v in d.dims:
        if v < 0:
            return None
        n *= v
    return n


def get_tensor_desc_element_count(desc) -> int:
    """aclGetTensorDescElementCount: the product of the dims (1 for a scalar, no dims); 0 for a
    bad handle or a dim that is unknown (-1 / -2)."""
    d = _desc("aclGetTensorDescElementCount", desc)
    if d is None:
        return 0
    n = _count(d)
    return 0 if n is None else n


def get_tensor_desc_size(desc) -> int:
    """aclGetTensorDescSize: element count x element size in bytes (sub-byte types: the bits
    rounded up to whole bytes); 0 for a bad handle, an unknown dim or a type without a size."""
    d = _desc("aclGetTensorDescSize", desc)
    if d is None:
        return 0
    n = _count(d)
    return 0 if n is None else (n * _bits(d.dtype) + 7) // 8


def get_tensor_desc_num_dims(desc) -> int:
    """aclGetTensorDescNumDims: the number of dims; ACL_UNKNOWN_RANK for dims {-2}; 0 for a bad
    handle."""
    d = _desc("aclGetTensorDescNumDims", desc)
    if d is None:
        return 0
    return UNKNOWN_RANK if d.dims == [-2] else len(d.dims)


def get_tensor_desc_dim_v2(desc, index) -> tuple[int, int]:
    """aclGetTensorDescDimV2: ``(dim_size, ret)``; ret 100000 for a bad handle or an index
    outside the dims."""
    api = "aclGetTensorDescDimV2"
    d = _desc(api, desc)
    if d is None:
        return 0, _INVALID
    index = _c_int(api, "index", index, "uint64")
    if not 0 <= index < len(d.dims):
        return 0, _record(api, _INVALID, f"index {index} is outside the {len(d.dims)} dims")
    return d.dims[index], 0


def get_tensor_desc_dim(desc, index) -> int:
    """aclGetTensorDescDim (deprecated in CANN): the dim; -1 for a bad handle or index."""
    api = "aclGetTensorDescDim"
    d = _desc(api, desc)
    if d is None:
        return -1
    index = _c_int(api, "index", index, "uint64")
    if not 0 <= index < len(d.dims):
        _record(api, _INVALID, f"index {index} is outside the {len(d.dims)} dims")
        return -1
    return d.dims[index]


def get_tensor_desc_dim_range(desc, index, dim_range_num) -> tuple[list[int], int]:
    """aclGetTensorDescDimRange: ``([min, max], ret)`` of dim ``index``: the range
    set_tensor_shape_range gave, else [dim, dim]. ret 100000 for a bad handle, an index outside
    the dims or ``dim_range_num`` below ACL_TENSOR_SHAPE_RANGE_NUM (2)."""
    api = "aclGetTensorDescDimRange"
    d = _desc(api, desc)
    if d is None:
        return [], _INVALID
    index = _c_int(api, "index", index, "uint64")
    num = _c_int(api, "dimRangeNum", dim_range_num, "uint64")
    if not 0 <= index < len(d.dims):
        return [], _record(api, _INVALID, f"index {index} is outside the {len(d.dims)} dims")
    if num < 2:
        return [], _record(api, _INVALID, f"dimRangeNum {num} is below "
                           "ACL_TENSOR_SHAPE_RANGE_NUM (2)")
    if d.shape_range is not None:
        return list(d.shape_range[index]), 0
    return [d.dims[index], d.dims[index]], 0


def _ranges(api: str, what: str, ranges) -> Optional[list[tuple[int, int]]]:
    if ranges is None:
        _record(api, _INVALID, f"{what} is null")
        return None
    out = []
    for i, pair in enumerate(ranges):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            _record(api, _INVALID, f"{what}[{i}] is not a [min, max] pair")
            return None
        lo = _c_int(api, f"{what}[{i}][0]", pair[0], "int64")
        hi = _c_int(api, f"{what}[{i}][1]", pair[1], "int64")
        out.append((lo, hi))
    return out


def set_tensor_shape_range(desc, dims_range) -> int:
    """aclSetTensorShapeRange: a [min, max] pair per dim (max -1: unbounded). ret 100000 for a
    bad handle or a count other than the descriptor's number of dims."""
    api = "aclSetTensorShapeRange"
    d = _desc(api, desc)
    if d is None:
        return _INVALID
    r = _ranges(api, "dimsRange", dims_range)
    if r is None:
        return _INVALID
    if len(r) != len(d.dims):
        return _record(api, _INVALID, f"dimsCount {len(r)} is not the descriptor's "
                       f"{len(d.dims)} dims")
    d.shape_range = r
    return 0


def set_tensor_value_range(desc, value_range) -> int:
    """aclSetTensorValueRange: [min, max] pairs recorded with the descriptor. ret 100000 for a
    bad handle."""
    api = "aclSetTensorValueRange"
    d = _desc(api, desc)
    if d is None:
        return _INVALID
    r = _ranges(api, "valueRange", value_range)
    if r is None:
        return _INVALID
    d.value_range = r
    return 0


def set_tensor_desc_name(desc, name) -> None:
    """aclSetTensorDescName (void in C): the descriptor's name (None: empty)."""
    d = _desc("aclSetTensorDescName", desc)
    if d is not None:
        d.name = "" if name is None else str(name)
        d.c_name = None
    return None


def get_tensor_desc_name(desc) -> str:
    """aclGetTensorDescName: the name ("" when never set); "" for a bad handle (C: nullptr)."""
    d = _desc("aclGetTensorDescName", desc)
    return "" if d is None else d.name


def _set_field(api: str, desc, field: str, value) -> int:
    d = _desc(api, desc)
    if d is None:
        return _INVALID
    setattr(d, field, value)
    return 0


def set_tensor_format(desc, format) -> int:  # noqa: A002
    """aclSetTensorFormat: the descriptor's format. ret 100000 for a bad handle."""
    api = "aclSetTensorFormat"
    return _set_field(api, desc, "format", _c_int(api, "format", format, "int32"))


def set_tensor_storage_format(desc, format) -> int:  # noqa: A002
    """aclSetTensorStorageFormat (deprecated in CANN): the storage format."""
    api = "aclSetTensorStorageFormat"
    return _set_field(api, desc, "storage_format", _c_int(api, "format", format, "int32"))


def set_tensor_origin_format(desc, format) -> int:  # noqa: A002
    """aclSetTensorOriginFormat: the origin format."""
    api = "aclSetTensorOriginFormat"
    return _set_field(api, desc, "origin_format", _c_int(api, "format", format, "int32"))


def _set_dims(api: str, desc, field: str, dims) -> int:
    d = _desc(api, desc)
    if d is None:
        return _INVALID
    v = _dims(api, "dims", dims)
    if v is None:
        return _INVALID
    setattr(d, field, v)
    if field == "dims":
        d.shape_range = None
    return 0


def set_tensor_shape(desc, dims) -> int:
    """aclSetTensorShape: new dims (the shape range is dropped). ret 100000 for a bad handle or
    bad dims."""
    return _set_dims("aclSetTensorShape", desc, "dims", dims)


def set_tensor_storage_shape(desc, dims) -> int:
    """aclSetTensorStorageShape (deprecated in CANN): the storage dims."""
    return _set_dims("aclSetTensorStorageShape", desc, "storage_dims", dims)


def set_tensor_origin_shape(desc, dims) -> int:
    """aclSetTensorOriginShape: the origin dims."""
    return _set_dims("aclSetTensorOriginShape", desc, "origin_dims", dims)


def set_tensor_dynamic_input(desc, dynamic_input_name) -> int:
    """aclSetTensorDynamicInput: the name of the dynamic input the descriptor belongs to. ret
    100000 for a bad handle or a null name."""
    api = "aclSetTensorDynamicInput"
    if dynamic_input_name is None:
        return _record(api, _INVALID, "dynamicInputName is null")
    return _set_field(api, desc, "dynamic_input", str(dynamic_input_name))


def set_tensor_const(desc, data_buffer, length) -> int:
    """aclSetTensorConst: marks the tensor constant, its value ``length`` bytes at host address
    ``data_buffer`` (recorded, not read). ret 100000 for a bad handle, a null address or a
    length of 0."""
    api = "aclSetTensorConst"
    addr = _c_int(api, "dataBuffer", data_buffer, "uint64", allow_none=True)
    length = _c_int(api, "length", length, "uint64")
    if addr == 0 or length == 0:
        if _desc(api, desc) is None:
            return _INVALID
        return _record(api, _INVALID, "dataBuffer is null" if addr == 0 else "length is 0")
    return _set_field(api, desc, "const", (addr, length))


def set_tensor_place_ment(desc, mem_type) -> int:
    """aclSetTensorPlaceMent: where the tensor's data is (aclMemType: 0 device, 1 host, 2 host
    compile independent). ret 100000 for a bad handle or another value."""
    api = "aclSetTensorPlaceMent"
    mem_type = _c_int(api, "memType", mem_type, "int32")
    if mem_type not in (0, 1, 2):
        if _desc(api, desc) is None:
            return _INVALID
        return _record(api, _INVALID, f"memType {mem_type} is not an aclMemType (0, 1, 2)")
    return _set_field(api, desc, "placement", mem_type)


def get_tensor_desc_address(desc) -> int:
    """aclGetTensorDescAddress: the constant value's address set by set_tensor_const; 0 when
    none was set or for a bad handle."""
    d = _desc("aclGetTensorDescAddress", desc)
    return 0 if d is None or d.const is None else d.const[0]


# ------------------------------------------------------------------------ data buffers -----


def create_data_buffer(data, size) -> int:
    """aclCreateDataBuffer: a handle recording ``data`` (an address; 0 or None with size 0 is an
    empty buffer, as CANN allows) and ``size`` bytes; 0 (nullptr, with a message) for a null address
    with a non-zero size."""
    api = "aclCreateDataBuffer"
    addr = _c_int(api, "data", data, "uint64", allow_none=True)
    size = _c_int(api, "size", size, "uint64")
    if addr == 0 and size != 0:
        _record(api, _INVALID, f"data is null with size {size}")
        return 0
    return BUFFERS.add(DataBuffer(addr, size))


def destroy_data_buffer(data_buffer) -> int:
    """aclDestroyDataBuffer: releases the handle (not the memory it names). ret 100000 for null,
    a destroyed or an unknown handle."""
    obj, ret = BUFFERS.find("aclDestroyDataBuffer", "dataBuffer", data_buffer)
    if obj is None:
        return ret
    BUFFERS.remove(data_buffer)
    return 0


def update_data_buffer(data_buffer, data, size) -> int:
    """aclUpdateDataBuffer: a new address and size for the buffer. ret 100000 for a bad handle
    or a null address with a non-zero size."""
    api = "aclUpdateDataBuffer"
    addr = _c_int(api, "data", data, "uint64", allow_none=True)
    size = _c_int(api, "size", size, "uint64")
    b, ret = BUFFERS.find(api, "dataBuffer", data_buffer)
    if b is None:
        return ret
    if addr == 0 and size != 0:
        return _record(api, _INVALID, f"data is null with size {size}")
    b.addr, b.size = addr, size
    return 0


def get_data_buffer_addr(data_buffer) -> int:
    """aclGetDataBufferAddr: the address; 0 (nullptr) for a bad handle."""
    b = BUFFERS.find("aclGetDataBufferAddr", "dataBuffer", data_buffer)[0]
    return 0 if b is None else b.addr


def get_data_buffer_size_v2(data_buffer) -> int:
    """aclGetDataBufferSizeV2: the size in bytes; 0 for a bad handle."""
    b = BUFFERS.find("aclGetDataBufferSizeV2", "dataBuffer", data_buffer)[0]
    return 0 if b is None else b.size


def get_data_buffer_size(data_buffer) -> int:
    """aclGetDataBufferSize (deprecated in CANN, uint32_t): the size in bytes, truncated to 32
    bits as C's return type does; 0 for a bad handle."""
    b = BUFFERS.find("aclGetDataBufferSize", "dataBuffer", data_buffer)[0]
    return 0 if b is None else b.size & 0xFFFFFFFF


__all__ = [
    "data_type_size", "create_tensor_desc", "destroy_tensor_desc", "get_tensor_desc_type",
    "get_tensor_desc_format", "get_tensor_desc_size", "get_tensor_desc_element_count",
    "get_tensor_desc_num_dims", "get_tensor_desc_dim", "get_tensor_desc_dim_v2",
    "get_tensor_desc_dim_range", "set_tensor_shape_range", "set_tensor_value_range",
    "set_tensor_desc_name", "get_tensor_desc_name", "set_tensor_format",
    "set_tensor_storage_format", "set_tensor_origin_format", "set_tensor_shape",
    "set_tensor_storage_shape", "set_tensor_origin_shape", "set_tensor_dynamic_input",
    "set_tensor_const", "set_tensor_place_ment", "get_tensor_desc_address",
    "create_data_buffer", "destroy_data_buffer", "update_data_buffer", "get_data_buffer_addr",
    "get_data_buffer_size", "get_data_buffer_size_v2",
]
