"""Tensor-argument specs for the contract tests: describe a tensor as data (shape, dtype,
strides, storage, offset, format), build it on the device, and print it as a reproduction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from conftest import NUMPY_OF, read_view

from aclnn_py import acl, aclnn

F32, F16, F64, BF16 = aclnn.ACL_FLOAT, aclnn.ACL_FLOAT16, aclnn.ACL_DOUBLE, aclnn.ACL_BF16
I32, I64, I8, BOOL = aclnn.ACL_INT32, aclnn.ACL_INT64, aclnn.ACL_INT8, aclnn.ACL_BOOL
ND, NCHW, NHWC, NC = (aclnn.ACL_FORMAT_ND, aclnn.ACL_FORMAT_NCHW, aclnn.ACL_FORMAT_NHWC,
                      aclnn.ACL_FORMAT_NC)

DT_NAME = {F32: "FLOAT", F16: "FLOAT16", F64: "DOUBLE", BF16: "BF16", I32: "INT32",
           I64: "INT64", I8: "INT8", BOOL: "BOOL"}
FMT_NAME = {ND: "", NCHW: "NCHW", NHWC: "NHWC", NC: "NC"}


def align(nbytes: int) -> int:
    """CANN's workspace block size (CANN nnopbase): add 32 bytes, round up to 512."""
    return (nbytes + 32 + 511) & ~511


def numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def dense_strides(shape) -> list:
    out, acc = [], 1
    for d in reversed(list(shape)):
        out.append(acc)
        acc *= max(d, 1)
    return out[::-1]


@dataclass(frozen=True)
class T:
    """How to build one tensor argument: view shape, dtype, optional strides/storage/format."""

    shape: tuple
    dtype: int = F32
    strides: Optional[tuple] = None
    storage: Optional[tuple] = None
    offset: int = 0
    fmt: int = ND
    null_data: bool = False  # tensor_data = 0

    def __repr__(self) -> str:
        s = f"{DT_NAME.get(self.dtype, self.dtype)}[{','.join(map(str, self.shape))}]"
        if self.strides is not None:
            s += f"/strides({','.join(map(str, self.strides))})"
        if self.storage is not None:
            s += f"/storage[{','.join(map(str, self.storage))}]"
        if self.offset:
            s += f"/offset{self.offset}"
        if self.fmt != ND:
            s += f"/{FMT_NAME[self.fmt]}"
        if self.null_data:
            s += "/data=0"
        return s

    @property
    def view_strides(self) -> list:
        return list(self.strides) if self.strides is not None else dense_strides(self.shape)

    def storage_elems(self) -> int:
        if self.storage is not None:
            return numel(self.storage)
        if numel(self.shape) == 0:
            return 0
        return self.offset + sum((d - 1) * s for d, s in zip(self.shape, self.view_strides)) + 1

    @property
    def empty(self) -> bool:
        return numel(self.shape) == 0


def np_dtype(acl_dtype):
    return NUMPY_OF[acl_dtype]


def build(dev, spec: Optional[T], rng, lo: float = -2.0, hi: float = 2.0):
    """(tensor, host storage array, device pointer) for a spec; (None, None, 0) for None."""
    if spec is None:
        return None, None, 0
    n = spec.storage_elems()
    npdt = NUMPY_OF[spec.dtype]
    if np.issubdtype(npdt, np.integer) or npdt == np.bool_:
        host = rng.integers(-6, 7, size=n).astype(npdt)
    else:
        host = rng.uniform(lo, hi, size=n).astype(npdt)
    ptr = 0 if spec.null_data else dev.upload(host)
    storage = list(spec.storage) if spec.storage is not None else [n]
    t = aclnn.aclCreateTensor(list(spec.shape), spec.dtype, spec.view_strides, spec.offset,
                              spec.fmt, storage, ptr)
    assert t is not None, acl.get_recent_err_msg()
    return t, host, ptr


def logical(spec: T, host) -> np.ndarray:
    """The values a tensor's view reads (independent of the code under test)."""
    return read_view(host, spec.shape, spec.view_strides, spec.offset)
