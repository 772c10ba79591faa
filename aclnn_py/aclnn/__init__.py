"""The aclnn meta API and every operator's two phases, under their CANN C names.

A program written against this module reads like a line-by-line port of a CANN C++ aclnn example
(CANN's acl_meta.h and the aclnn API reference): ``aclCreateTensor(...)`` returns a handle or
None; ``aclnnXxxGetWorkspaceSize(...)`` returns ``(workspace_size, executor, ret)``;
``aclnnXxx(workspace, workspace_size, executor, stream)`` returns ``ret`` and only enqueues work.
The constants (``ACL_FLOAT``, ``ACLNN_ERR_PARAM_NULLPTR``, ...) and enum classes are those of
``aclnn_py.acl``. See docs/two_phase_api.md and docs/ops/.
"""

from ..acl._constants import *  # noqa: F403  (every ACL_*/ACLNN_* constant of the acl namespace)
from ..enums import (
    aclDataType,
    aclError,
    aclFormat,
    aclnnStatus,
    aclrtCallbackBlockType,
    aclrtEventRecordedStatus,
    aclrtEventStatus,
    aclrtMemAttr,
    aclrtMemcpyKind,
    aclrtMemMallocPolicy,
    aclrtRunMode,
)
from ..executor import aclOpExecutor
from ..tensor import aclBoolArray, aclFloatArray, aclIntArray, aclScalar, aclTensor, aclTensorList
from ._meta import (
    aclCreateBoolArray,
    aclCreateFloatArray,
    aclCreateIntArray,
    aclCreateScalar,
    aclCreateTensor,
    aclCreateTensorList,
    aclDestroyAclOpExecutor,
    aclDestroyBoolArray,
    aclDestroyFloatArray,
    aclDestroyIntArray,
    aclDestroyScalar,
    aclDestroyTensor,
    aclDestroyTensorList,
    aclGetDataType,
    aclGetFormat,
    aclGetRawTensorAddr,
    aclGetStorageShape,
    aclGetViewOffset,
    aclGetViewShape,
    aclGetViewStrides,
    aclnnFinalize,
    aclnnInit,
    aclSetAclOpExecutorRepeatable,
    aclSetDynamicTensorAddr,
    aclSetInputTensorAddr,
    aclSetOutputTensorAddr,
    aclSetRawTensorAddr,
)
from ._ops import *  # noqa: F403  (aclnnXxxGetWorkspaceSize / aclnnXxx, generated)
from ._ops import __all__ as _OPS

# ``from aclnn_py.aclnn import *``: the functions, the enum classes and the handle classes (the
# ACL_* constants are reached as attributes)
__all__ = [
    "aclnnInit", "aclnnFinalize", "aclCreateTensor", "aclDestroyTensor", "aclCreateScalar",
    "aclDestroyScalar", "aclCreateIntArray", "aclDestroyIntArray", "aclGetViewShape",
    "aclGetStorageShape", "aclGetViewStrides", "aclGetViewOffset", "aclGetFormat",
    "aclGetDataType", "aclGetRawTensorAddr", "aclSetRawTensorAddr",
    "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor", "aclSetInputTensorAddr",
    "aclSetOutputTensorAddr", "aclSetDynamicTensorAddr", "aclCreateFloatArray",
    "aclDestroyFloatArray", "aclCreateBoolArray", "aclDestroyBoolArray", "aclCreateTensorList",
    "aclDestroyTensorList",
    "aclError", "aclnnStatus", "aclDataType", "aclFormat", "aclrtRunMode", "aclrtMemcpyKind",
    "aclrtMemMallocPolicy", "aclrtEventRecordedStatus", "aclrtEventStatus", "aclrtMemAttr",
    "aclrtCallbackBlockType",
    "aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray", "aclTensorList",
    "aclOpExecutor",
]
__all__ += _OPS
