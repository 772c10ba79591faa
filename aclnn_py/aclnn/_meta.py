"""The aclnn meta API (CANN's aclnn_base.h / acl_meta.h): init, tensors, scalars, int arrays,
executors. Re-exported by ``aclnn_py.aclnn``; see docs/two_phase_api.md and docs/return_codes.md
("Meta API"). C names and argument orders are CANN's (CANN aclnn API reference, "common
interfaces"); C's out-parameters are returned as ``(value, ret)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional, SupportsIndex, TypeVar, cast

from .. import executor as _ex
from .. import runtime as _rt
from .. import tensor as _t
from ..dtypes import aclDataType, aclFormat
from ..executor import aclOpExecutor
from ..status import aclError, aclnnStatus
from ..status import record as _record
from ..tensor import (
    aclBoolArray,
    aclFloatArray,
    aclIntArray,
    aclScalar,
    aclTensor,
    aclTensorList,
)

_E = TypeVar("_E", aclDataType, aclFormat)
_V = TypeVar("_V")


def _get(api: str, tensor: Optional[aclTensor],
         fn: Callable[[aclTensor], _V]) -> tuple[Optional[_V], int]:
    """A getter's ``(value, ret)``: ``(None, 161001)`` for None, ``(None, 161002)`` for a
    destroyed tensor."""
    return cast("tuple[Optional[_V], int]", _t.getter(api, tensor, fn))


def _member(cls: type[_E], value: int) -> _E | int:
    """The enum member of ``value``, or the plain int when CANN's enum has no such value
    (aclCreateTensor accepts any int32_t)."""
    try:
        return cls(value)
    except ValueError:
        return value


def aclnnInit(config_path: Optional[str] = None) -> int:
    """aclnnInit: a lighter alternative to aclInit (both may be called; neither is required).

    Returns 0, or 100002 ACL_ERROR_REPEAT_INITIALIZE when aclnnInit was already called.
    ``config_path`` is accepted and ignored. CANN aclnn API reference: aclnnInit."""
    with _rt.S.lock:
        if _rt.S.aclnn_initialized:
            return _record("aclnnInit", aclError.ACL_ERROR_REPEAT_INITIALIZE,
                           "aclnnInit was already called in this process")
        _rt.S.aclnn_initialized = True
    return 0


def aclnnFinalize() -> int:
    """aclnnFinalize: undoes aclnnInit.

    Returns 0, or 100037 ACL_ERROR_REPEAT_FINALIZE without aclnnInit (or twice). CANN aclnn API
    reference: aclnnFinalize."""
    with _rt.S.lock:
        if not _rt.S.aclnn_initialized:
            return _record("aclnnFinalize", aclError.ACL_ERROR_REPEAT_FINALIZE,
                           "aclnnFinalize called without aclnnInit (or twice)")
        _rt.S.aclnn_initialized = False
    return 0


# ------------------------------------------------------------------------ tensors & co ------


def aclCreateTensor(view_dims: Optional[Sequence[SupportsIndex]], data_type: SupportsIndex,
                    stride: Optional[Sequence[SupportsIndex]], offset: SupportsIndex,
                    format: SupportsIndex, storage_dims: Optional[Sequence[SupportsIndex]],
                    tensor_data: Optional[SupportsIndex]) -> Optional[aclTensor]:
    """aclCreateTensor: a tensor descriptor (C's two count arguments are the lists' lengths).

    Args:
        view_dims: the view's shape (int64_t each).
        data_type: an aclDataType (int32_t), e.g. ACL_FLOAT.
        stride: the view's element strides, one per view dim; None means contiguous (row-major).
        offset: the view's first element, in elements from ``tensor_data``.
        format: an aclFormat (int32_t), e.g. ACL_FORMAT_ND.
        storage_dims: the shape of the storage (int64_t each).
        tensor_data: the device address of storage element 0 (None or 0: null).

    Returns the aclTensor, or None (C's NULL) with a message for acl.get_recent_err_msg():
    view_dims or storage_dims None (161001); a stride list whose length differs from the view's
    rank, or a data_type/format that does not fit int32_t (161002). Arguments C could not take
    raise TypeError. The view is checked against device memory at phase 1, not here. CANN aclnn
    API reference: aclCreateTensor."""
    return _t.create_tensor(view_dims, data_type, stride, offset, format, storage_dims,
                            tensor_data)


def aclDestroyTensor(tensor: Optional[aclTensor]) -> int:
    """aclDestroyTensor: releases a tensor descriptor (not its device memory).

    Returns 0 (also for None), or 161002 ACLNN_ERR_PARAM_INVALID when already destroyed. CANN aclnn
    API reference: aclDestroyTensor."""
    return _t.destroy("aclDestroyTensor", tensor, aclTensor, "tensor")


def aclCreateScalar(value: complex, data_type: SupportsIndex) -> Optional[aclScalar]:
    """aclCreateScalar: a host scalar of an aclDataType (C takes a pointer to the value).

    Returns the aclScalar, or None with a message: value None (161001); a data_type that is not
    an aclDataType, or a value the dtype cannot hold (161002). CANN aclnn API reference:
    aclCreateScalar."""
    return _t.create_scalar(value, data_type)


def aclDestroyScalar(scalar: Optional[aclScalar]) -> int:
    """aclDestroyScalar: releases a scalar. Returns 0 (also for None), or 161002 when already
    destroyed. CANN aclnn API reference: aclDestroyScalar."""
    return _t.destroy("aclDestroyScalar", scalar, aclScalar, "scalar")


def aclCreateIntArray(values: Optional[Sequence[SupportsIndex]]) -> Optional[aclIntArray]:
    """aclCreateIntArray: an array of int64_t values (C's size argument is the list's length).

    Returns the aclIntArray, or None with a message when values is None (161001). CANN aclnn API
    reference: aclCreateIntArray."""
    return _t.create_int_array(values)


def aclDestroyIntArray(array: Optional[aclIntArray]) -> int:
    """aclDestroyIntArray: releases an int array. Returns 0 (also for None), or 161002 when
    already destroyed. CANN aclnn API reference: aclDestroyIntArray."""
    return _t.destroy("aclDestroyIntArray", array, aclIntArray, "array")


def aclCreateFloatArray(values: Optional[Sequence[float]]) -> Optional[aclFloatArray]:
    """aclCreateFloatArray: an array of float values (a custom operator's listFloat attribute).

    Returns the aclFloatArray, or None with a message when values is None (161001). CANN aclnn
    API reference: aclCreateFloatArray."""
    return _t.create_float_array(values)


def aclDestroyFloatArray(array: Optional[aclFloatArray]) -> int:
    """aclDestroyFloatArray: releases a float array. Returns 0 (also for None), or 161002 when
    already destroyed. CANN aclnn API reference: aclDestroyFloatArray."""
    return _t.destroy("aclDestroyFloatArray", array, aclFloatArray, "array")


def aclCreateBoolArray(values: Optional[Sequence[bool]]) -> Optional[aclBoolArray]:
    """aclCreateBoolArray: an array of bool values (a custom operator's listBool attribute).

    Returns the aclBoolArray, or None with a message when values is None (161001). CANN aclnn
    API reference: aclCreateBoolArray."""
    return _t.create_bool_array(values)


def aclDestroyBoolArray(array: Optional[aclBoolArray]) -> int:
    """aclDestroyBoolArray: releases a bool array. Returns 0 (also for None), or 161002 when
    already destroyed. CANN aclnn API reference: aclDestroyBoolArray."""
    return _t.destroy("aclDestroyBoolArray", array, aclBoolArray, "array")


def aclCreateTensorList(values: Optional[Sequence[aclTensor]]) -> Optional[aclTensorList]:
    """aclCreateTensorList: a list of tensors (a custom operator's dynamic input).

    Returns the aclTensorList, or None with a message: 161001 for None or a None element,
    161002 for a destroyed tensor. CANN aclnn API reference: aclCreateTensorList."""
    return _t.create_tensor_list(values)


def aclDestroyTensorList(tensor_list: Optional[aclTensorList]) -> int:
    """aclDestroyTensorList: releases a tensor list and its tensors. Returns 0 (also for None),
    or 161002 when already destroyed. CANN aclnn API reference: aclDestroyTensorList."""
    return _t.destroy_tensor_list(tensor_list)


def aclGetViewShape(tensor: Optional[aclTensor]) -> tuple[Optional[list[int]], int]:
    """aclGetViewShape: ``(view_dims, ret)``; ``(None, 161001)`` for None, ``(None, 161002)``
    for a destroyed tensor. CANN aclnn API reference: aclGetViewShape."""
    return _get("aclGetViewShape", tensor, lambda t: list(t.view_dims))


def aclGetStorageShape(tensor: Optional[aclTensor]) -> tuple[Optional[list[int]], int]:
    """aclGetStorageShape: ``(storage_dims, ret)``; ``(None, 161001)`` for None,
    ``(None, 161002)`` for a destroyed tensor. CANN aclnn API reference: aclGetStorageShape."""
    return _get("aclGetStorageShape", tensor, lambda t: list(t.storage_dims))


def aclGetViewStrides(tensor: Optional[aclTensor]) -> tuple[Optional[list[int]], int]:
    """aclGetViewStrides: ``(strides, ret)`` in elements; ``(None, 161001)`` for None,
    ``(None, 161002)`` for a destroyed tensor. CANN aclnn API reference: aclGetViewStrides."""
    return _get("aclGetViewStrides", tensor, lambda t: list(t.strides))


def aclGetViewOffset(tensor: Optional[aclTensor]) -> tuple[Optional[int], int]:
    """aclGetViewOffset: ``(offset, ret)`` in elements; ``(None, 161001)`` for None,
    ``(None, 161002)`` for a destroyed tensor. CANN aclnn API reference: aclGetViewOffset."""
    return _get("aclGetViewOffset", tensor, lambda t: t.offset)


def aclGetFormat(tensor: Optional[aclTensor]) -> tuple[Optional[aclFormat | int], int]:
    """aclGetFormat: ``(format, ret)``, the format an aclFormat member (a plain int for a value
    CANN's enum does not name); ``(None, 161001)`` for None, ``(None, 161002)`` for a destroyed
    tensor. CANN aclnn API reference: aclGetFormat."""
    return _get("aclGetFormat", tensor, lambda t: _member(aclFormat, t.format))


def aclGetDataType(tensor: Optional[aclTensor]) -> tuple[Optional[aclDataType | int], int]:
    """aclGetDataType: ``(data_type, ret)``, the dtype an aclDataType member (a plain int for a
    value CANN's enum does not name); ``(None, 161001)`` for None, ``(None, 161002)`` for a
    destroyed tensor. CANN aclnn API reference: aclGetDataType."""
    return _get("aclGetDataType", tensor, lambda t: _member(aclDataType, t.data_type))


def aclGetRawTensorAddr(tensor: Optional[aclTensor]) -> tuple[Optional[int], int]:
    """aclGetRawTensorAddr: ``(address of storage element 0, ret)``; ``(None, 161001)`` for None,
    ``(None, 161002)`` for a destroyed tensor. CANN aclnn API reference: aclGetRawTensorAddr."""
    return _get("aclGetRawTensorAddr", tensor, lambda t: t.data)


def aclSetRawTensorAddr(tensor: Optional[aclTensor], addr: Optional[SupportsIndex]) -> int:
    """aclSetRawTensorAddr: moves a tensor's storage to ``addr`` (None: null).

    Executors built before keep the address they were planned with (docs/two_phase_api.md).
    Returns 0, 161001 ACLNN_ERR_PARAM_NULLPTR for None, 161002 for a destroyed tensor. CANN aclnn
    API reference: aclSetRawTensorAddr."""
    api = "aclSetRawTensorAddr"
    if tensor is None:
        return _record(api, aclnnStatus.ACLNN_ERR_PARAM_NULLPTR, "tensor is null")
    ret = _t.check_handle(api, tensor, aclTensor, "tensor")
    if ret:
        return ret
    tensor.data = _rt.require_int(api, "addr", addr, allow_none=True)
    return 0


# --------------------------------------------------------------------------- executors -----


def aclSetAclOpExecutorRepeatable(executor: Optional[aclOpExecutor]) -> int:
    """aclSetAclOpExecutorRepeatable: lets an executor run many times (call it right after
    phase 1); destroy it with aclDestroyAclOpExecutor.

    Returns 0; 561103 ACLNN_ERR_INNER_NULLPTR for None; 561000 ACLNN_ERR_INNER for a consumed or
    destroyed executor. See docs/two_phase_api.md. CANN aclnn API reference:
    aclSetAclOpExecutorRepeatable."""
    return _ex.set_repeatable(executor)


def aclDestroyAclOpExecutor(executor: Optional[aclOpExecutor]) -> int:
    """aclDestroyAclOpExecutor: destroys a repeatable executor (single-use ones are consumed by
    phase 2).

    Returns 0; 561103 for None; 561000 for a consumed or destroyed executor. CANN aclnn API
    reference: aclDestroyAclOpExecutor."""
    return _ex.destroy(executor)


def aclSetInputTensorAddr(executor: Optional[aclOpExecutor], index: SupportsIndex,
                          tensor: Optional[aclTensor], addr: Optional[SupportsIndex]) -> int:
    """aclSetInputTensorAddr: re-binds input ``index`` of a repeatable executor to ``addr``.

    The new address gets phase 1's view checks at once. Returns 0; 561103 for a None executor or
    tensor; 561000 for a consumed or destroyed executor; 161002 for a non-repeatable executor, an
    index out of range or an address that fails the checks (docs/return_codes.md, "Meta API").
    CANN aclnn API reference: aclSetInputTensorAddr."""
    return _ex.set_tensor_addr("aclSetInputTensorAddr", executor, index, tensor, addr, False)


def aclSetDynamicTensorAddr(executor: Optional[aclOpExecutor], ir_index: SupportsIndex,
                            relative_index: SupportsIndex, tensors: Optional[aclTensorList],
                            addr: Optional[SupportsIndex]) -> int:
    """aclSetDynamicTensorAddr: re-binds tensor ``relative_index`` of the dynamic input
    ``ir_index`` (its position among the operator's inputs in its definition) of a repeatable
    custom-operator executor to ``addr``.

    Returns 0; 561103 for a None executor or list; 561000 for a consumed or destroyed executor;
    161002 for a non-repeatable executor, an input that is not dynamic, an index out of range or
    an address that fails phase 1's checks. CANN aclnn API reference: aclSetDynamicTensorAddr."""
    return _ex.set_dynamic_tensor_addr(executor, ir_index, relative_index, tensors, addr)


def aclSetOutputTensorAddr(executor: Optional[aclOpExecutor], index: SupportsIndex,
                           tensor: Optional[aclTensor], addr: Optional[SupportsIndex]) -> int:
    """aclSetOutputTensorAddr: re-binds output ``index`` of a repeatable executor to ``addr``.

    The new address gets phase 1's view checks at once. Returns 0; 561103 for a None executor or
    tensor; 561000 for a consumed or destroyed executor; 161002 for a non-repeatable executor, an
    index out of range or an address that fails the checks (docs/return_codes.md, "Meta API").
    CANN aclnn API reference: aclSetOutputTensorAddr."""
    return _ex.set_tensor_addr("aclSetOutputTensorAddr", executor, index, tensor, addr, True)


__all__ = [
    "aclnnInit", "aclnnFinalize", "aclCreateTensor", "aclDestroyTensor", "aclCreateScalar",
    "aclDestroyScalar", "aclCreateIntArray", "aclDestroyIntArray", "aclGetViewShape",
    "aclGetStorageShape", "aclGetViewStrides", "aclGetViewOffset", "aclGetFormat",
    "aclGetDataType", "aclGetRawTensorAddr", "aclSetRawTensorAddr",
    "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor", "aclSetInputTensorAddr",
    "aclSetOutputTensorAddr", "aclSetDynamicTensorAddr", "aclCreateFloatArray",
    "aclDestroyFloatArray", "aclCreateBoolArray", "aclDestroyBoolArray", "aclCreateTensorList",
    "aclDestroyTensorList",
]
