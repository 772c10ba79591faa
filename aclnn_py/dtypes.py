"""The whole dtype system in one place: enum values, sizes, NumPy dtypes, promotion, castability.

Values are CANN's aclDataType (acl_base_rt.h). Promotion and CanCast follow opbase's
data_type_utils.h (CANN's dtype promotion table).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

import ml_dtypes
import numpy as np


class aclDataType(enum.IntEnum):
    ACL_DT_UNDEFINED = -1
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_STRING = 13
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27
    ACL_INT4 = 29
    ACL_UINT1 = 30
    ACL_COMPLEX32 = 33
    ACL_HIFLOAT8 = 34
    ACL_FLOAT8_E5M2 = 35
    ACL_FLOAT8_E4M3FN = 36
    ACL_FLOAT8_E8M0 = 37
    ACL_FLOAT6_E3M2 = 38
    ACL_FLOAT6_E2M3 = 39
    ACL_FLOAT4_E2M1 = 40
    ACL_FLOAT4_E1M2 = 41


class aclFormat(enum.IntEnum):
    ACL_FORMAT_UNDEFINED = -1
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_NC1HWC0_C04 = 12
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30
    ACL_FORMAT_NDC1HWC0 = 32
    ACL_FRACTAL_Z_3D = 33
    ACL_FORMAT_NC = 35
    ACL_FORMAT_NCL = 47
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54


F = aclDataType  # short alias for the table below


@dataclass(frozen=True)
class DType:
    """One data type: its CANN enum value, documentation name, size and NumPy twin."""

    acl: int
    name: str  # the name CANN's docs and messages use: FLOAT, FLOAT16, BFLOAT16, ...
    itemsize: int  # bytes per element as the emulator stores it (sub-byte types: 1)
    numpy: Optional[np.dtype]
    kind: str  # "float", "int", "uint", "bool", "complex", "other"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


_TABLE = [
    DType(F.ACL_FLOAT, "FLOAT", 4, np.dtype(np.float32), "float"),
    DType(F.ACL_FLOAT16, "FLOAT16", 2, np.dtype(np.float16), "float"),
    DType(F.ACL_BF16, "BFLOAT16", 2, np.dtype(ml_dtypes.bfloat16), "float"),
    DType(F.ACL_DOUBLE, "DOUBLE", 8, np.dtype(np.float64), "float"),
    DType(F.ACL_INT8, "INT8", 1, np.dtype(np.int8), "int"),
    DType(F.ACL_INT16, "INT16", 2, np.dtype(np.int16), "int"),
    DType(F.ACL_INT32, "INT32", 4, np.dtype(np.int32), "int"),
    DType(F.ACL_INT64, "INT64", 8, np.dtype(np.int64), "int"),
    DType(F.ACL_UINT8, "UINT8", 1, np.dtype(np.uint8), "uint"),
    DType(F.ACL_UINT16, "UINT16", 2, np.dtype(np.uint16), "uint"),
    DType(F.ACL_UINT32, "UINT32", 4, np.dtype(np.uint32), "uint"),
    DType(F.ACL_UINT64, "UINT64", 8, np.dtype(np.uint64), "uint"),
    DType(F.ACL_BOOL, "BOOL", 1, np.dtype(np.bool_), "bool"),
    DType(F.ACL_COMPLEX64, "COMPLEX64", 8, np.dtype(np.complex64), "complex"),
    DType(F.ACL_COMPLEX128, "COMPLEX128", 16, np.dtype(np.complex128), "complex"),
    DType(F.ACL_COMPLEX32, "COMPLEX32", 4, None, "complex"),
    DType(F.ACL_STRING, "STRING", 1, None, "other"),
    DType(F.ACL_INT4, "INT4", 1, None, "int"),
    DType(F.ACL_UINT1, "UINT1", 1, None, "uint"),
    DType(F.ACL_HIFLOAT8, "HIFLOAT8", 1, None, "float"),
    DType(F.ACL_FLOAT8_E5M2, "FLOAT8_E5M2", 1, np.dtype(ml_dtypes.float8_e5m2), "float"),
    DType(F.ACL_FLOAT8_E4M3FN, "FLOAT8_E4M3FN", 1, np.dtype(ml_dtypes.float8_e4m3fn), "float"),
    DType(F.ACL_FLOAT8_E8M0, "FLOAT8_E8M0", 1, None, "float"),
    DType(F.ACL_FLOAT6_E3M2, "FLOAT6_E3M2", 1, None, "float"),
    DType(F.ACL_FLOAT6_E2M3, "FLOAT6_E2M3", 1, None, "float"),
    DType(F.ACL_FLOAT4_E2M1, "FLOAT4_E2M1", 1, None, "float"),
    DType(F.ACL_FLOAT4_E1M2, "FLOAT4_E1M2", 1, None, "float"),
]

BY_ACL: dict[int, DType] = {d.acl: d for d in _TABLE}

FLOAT32 = BY_ACL[F.ACL_FLOAT]
FLOAT16 = BY_ACL[F.ACL_FLOAT16]
BFLOAT16 = BY_ACL[F.ACL_BF16]
FLOAT64 = BY_ACL[F.ACL_DOUBLE]
INT32 = BY_ACL[F.ACL_INT32]

#: dtypes the C kernels and casts implement
#: the functional layer's out_dtype of any function (besides the input's own dtype)
FUNCTIONAL_OUT_DTYPES = (F.ACL_FLOAT16, F.ACL_FLOAT, F.ACL_BF16, F.ACL_DOUBLE)
#: the out_dtype of softmax / log_softmax whatever the input's dtype (oneDNN's int8 softmax)
FUNCTIONAL_INT8_OUT = (F.ACL_INT8, F.ACL_UINT8)
#: oneDNN's f8 data, also softmax / log_softmax only (ml_dtypes.float8_e5m2 / float8_e4m3fn)
FUNCTIONAL_F8 = (F.ACL_FLOAT8_E5M2, F.ACL_FLOAT8_E4M3FN)

KERNEL_DTYPES = frozenset({F.ACL_FLOAT, F.ACL_FLOAT16, F.ACL_BF16, F.ACL_DOUBLE, F.ACL_INT32})


def lookup(value: int) -> Optional[DType]:
    return BY_ACL.get(int(value))


def name(value: int) -> str:
    """The documentation name of an enum value (unknown values are shown as numbers)."""
    d = BY_ACL.get(int(value))
    return d.name if d else f"UNKNOWN({int(value)})"


def itemsize(value: int) -> int:
    d = BY_ACL.get(int(value))
    return d.itemsize if d else 1


def from_numpy(dtype) -> Optional[int]:
    """The aclDataType of a NumPy dtype, or None."""
    dt = np.dtype(dtype)
    for d in _TABLE:
        if d.numpy is not None and d.numpy == dt:
            return d.acl
    return None


def to_numpy(value: int) -> np.dtype:
    d = BY_ACL.get(int(value))
    if d is None or d.numpy is None:
        raise ValueError(f"dtype {name(value)} has no NumPy equivalent")
    return d.numpy


# Float promotion (CANN's data_type_utils.h): f16+f32 -> f32, bf16+f16 -> f32, bf16+f32 -> f32,
# any+f64 -> f64.
_FLOAT_RANK: dict[int, int] = {F.ACL_FLOAT16: 1, F.ACL_BF16: 1, F.ACL_FLOAT: 2, F.ACL_DOUBLE: 3}


def promote(a: int, b: int) -> int:
    """PromoteType for the float types the operators accept (equal types promote to themselves)."""
    a, b = int(a), int(b)
    if a == b:
        return a
    if a in _FLOAT_RANK and b in _FLOAT_RANK:
        if max(_FLOAT_RANK[a], _FLOAT_RANK[b]) == 3:
            return F.ACL_DOUBLE
        return F.ACL_FLOAT
    return F.ACL_DT_UNDEFINED


def can_cast(src: int, dst: int) -> bool:
    """CanCast(from, to): false for complex -> non-complex, float -> integer, non-bool -> bool."""
    s, d = BY_ACL.get(int(src)), BY_ACL.get(int(dst))
    if s is None or d is None:
        return False
    if s.kind == "complex" and d.kind != "complex":
        return False
    if s.kind == "float" and d.kind in ("int", "uint"):
        return False
    if d.kind == "bool" and s.kind != "bool":
        return False
    return True
