"""aclnn-py: a CPU emulator of Huawei Ascend CANN's two-phase aclnn operator API.

Three layers (see README.md):

- ``aclnn_py.acl``: a pyACL-compatible runtime (devices, streams, events, device memory);
- ``aclnn_py.aclnn``: the aclnn meta API and operators under their CANN C names;
- ``aclnn_py.functional``: NumPy in, NumPy out.
"""

from __future__ import annotations

from . import acl, aclnn, functional
from . import diagnostics as _diagnostics
from ._version import __version__
from .status import (
    AclnnError,
    AclnnInternalError,
    AclnnNullPointerError,
    AclnnParamError,
    AclnnRuntimeError,
    check,
)

_diagnostics.refresh()  # ACLNN_EMU_CHECK, ACLNN_EMU_TRACE, ASCEND_GLOBAL_LOG_LEVEL

__all__ = ["acl", "aclnn", "functional", "check", "AclnnError", "AclnnParamError",
           "AclnnNullPointerError", "AclnnRuntimeError", "AclnnInternalError", "__version__"]
