"""The aclnn meta API and every operator's two phases, under their CANN C names.

A program written against this module reads like a line-by-line port of a CANN C++ aclnn example
(CANN's acl_meta.h): ``aclCreateTensor(...)`` returns a handle or None;
``aclnnXxxGetWorkspaceSize(...)`` returns ``(workspace_size, executor, ret)``;
``aclnnXxx(workspace, workspace_size, executor, stream)`` returns ``ret`` and only enqueues work.
"""

from __future__ import annotations

from typing import Optional

from .. import executor as _ex
from .. import ops as _ops
from .. import runtime as _rt
from .. import tensor as _t
from ..acl import ENUMS, export_enums
from ..executor import aclOpExecutor
from ..status import record as _record
from ..tensor import aclIntArray, aclScalar, aclTensor

export_enums(globals(), ENUMS)


def aclnnInit(config_path: Optional[str] = None) -> int:
    """aclnnInit: a lighter alternative to aclInit (both may be called)."""
    with _rt.S.lock:
        if _rt.S.aclnn_initialized:
            return _record("aclnnInit", ACL_ERROR_REPEAT_INITIALIZE,  # noqa: F821
                           "aclnnInit was already called in this process")
        _rt.S.aclnn_initialized = True
    return 0


def aclnnFinalize() -> int:
    with _rt.S.lock:
        if not _rt.S.aclnn_initialized:
            return _record("aclnnFinalize", ACL_ERROR_REPEAT_FINALIZE,  # noqa: F821
                           "aclnnFinalize called without aclnnInit (or twice)")
        _rt.S.aclnn_initialized = False
    return 0


# ------------------------------------------------------------------------ tensors & co ------


def aclCreateTensor(view_dims, data_type, stride, offset, format, storage_dims,
                    tensor_data) -> Optional[aclTensor]:
    """aclCreateTensor without the two count arguments; ``stride=None`` means contiguous."""
    return _t.create_tensor(view_dims, data_type, stride, offset, format, storage_dims,
                            tensor_data)


def aclDestroyTensor(tensor) -> int:
    return _t.destroy("aclDestroyTensor", tensor, aclTensor, "tensor")


def aclCreateScalar(value, data_type) -> Optional[aclScalar]:
    return _t.create_scalar(value, data_type)


def aclDestroyScalar(scalar) -> int:
    return _t.destroy("aclDestroyScalar", scalar, aclScalar, "scalar")


def aclCreateIntArray(values) -> Optional[aclIntArray]:
    return _t.create_int_array(values)


def aclDestroyIntArray(array) -> int:
    return _t.destroy("aclDestroyIntArray", array, aclIntArray, "array")


def aclGetViewShape(tensor):
    return _t.getter("aclGetViewShape", tensor, lambda t: list(t.view_dims))


def aclGetStorageShape(tensor):
    return _t.getter("aclGetStorageShape", tensor, lambda t: list(t.storage_dims))


def aclGetViewStrides(tensor):
    return _t.getter("aclGetViewStrides", tensor, lambda t: list(t.strides))


def aclGetViewOffset(tensor):
    return _t.getter("aclGetViewOffset", tensor, lambda t: t.offset)


def aclGetFormat(tensor):
    return _t.getter("aclGetFormat", tensor, lambda t: t.format)


def aclGetDataType(tensor):
    return _t.getter("aclGetDataType", tensor, lambda t: t.data_type)


def aclGetRawTensorAddr(tensor):
    return _t.getter("aclGetRawTensorAddr", tensor, lambda t: t.data)


def aclSetRawTensorAddr(tensor, addr) -> int:
    api = "aclSetRawTensorAddr"
    if tensor is None:
        return _record(api, ACLNN_ERR_PARAM_NULLPTR, "tensor is null")  # noqa: F821
    ret = _t.check_handle(api, tensor, aclTensor, "tensor")
    if ret:
        return ret
    tensor.data = _rt.require_int(api, "addr", addr, allow_none=True)
    return 0


# --------------------------------------------------------------------------- executors -----


def aclSetAclOpExecutorRepeatable(executor) -> int:
    return _ex.set_repeatable(executor)


def aclDestroyAclOpExecutor(executor) -> int:
    return _ex.destroy(executor)


def aclSetInputTensorAddr(executor, index, tensor, addr) -> int:
    return _ex.set_tensor_addr("aclSetInputTensorAddr", executor, index, tensor, addr, False)


def aclSetOutputTensorAddr(executor, index, tensor, addr) -> int:
    return _ex.set_tensor_addr("aclSetOutputTensorAddr", executor, index, tensor, addr, True)


# --------------------------------------------------------------------------- operators -----


def _make_phases(op):
    def get_workspace_size(*args):
        return _ops.get_workspace_size(op, args)

    def launch(workspace, workspace_size, executor, stream):
        return _ex.run(op.name, workspace, workspace_size, executor, stream)

    sig = ", ".join(op.params)
    get_workspace_size.__name__ = op.name + "GetWorkspaceSize"
    get_workspace_size.__qualname__ = get_workspace_size.__name__
    get_workspace_size.__doc__ = (
        f"{op.name}GetWorkspaceSize({sig}) -> (workspace_size, executor, ret)\n\n"
        f"Phase 1: checks the arguments in CANN's order and plans the work. {op.doc}")
    launch.__name__ = op.name
    launch.__qualname__ = op.name
    launch.__doc__ = (f"{op.name}(workspace, workspace_size, executor, stream) -> ret\n\n"
                      "Phase 2: enqueues the planned work on stream and returns at once.")
    return get_workspace_size, launch


for _op in _ops.REGISTRY.values():
    globals()[_op.name + "GetWorkspaceSize"], globals()[_op.name] = _make_phases(_op)

__all__ = [n for n in globals() if n.startswith("acl")] + ["aclTensor", "aclScalar",
                                                          "aclIntArray", "aclOpExecutor"]
