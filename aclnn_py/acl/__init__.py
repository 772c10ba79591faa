"""pyACL-compatible runtime: ``from aclnn_py import acl`` and write code as with ``import acl``.

Names and returns follow pyACL's documented conventions: handles and pointers are ints, calls
with out-parameters return them followed by ``ret``. Constants are exported in C spelling
(``acl.ACL_SUCCESS``, ``acl.ACL_MEMCPY_HOST_TO_DEVICE``) and as IntEnum classes.

What is emulated: device memory is host memory tracked in an allocation table; streams are C
worker threads; events carry host timestamps. What is not: device timings, HBM bandwidth, real
workspace byte counts of NPU kernels, models (acl.mdl), media (acl.media) and op compilation.
Tensor descriptors and data buffers (``acl.create_tensor_desc``, ``acl.create_data_buffer``,
...) are host bookkeeping, as in CANN.
See docs/runtime.md.
"""

from ..enums import (  # noqa: F401  (the enum classes)
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
from . import rt, util
from ._api import finalize, get_recent_err_msg, get_soc_name, get_version, init
from ._constants import *  # noqa: F403  (the ACL_*/ACLNN_* constants, generated)
from ._desc import *  # noqa: F403  (tensor descriptors and data buffers, acl_base.h)
from ._desc import __all__ as _desc_all

# ``from aclnn_py.acl import *`` (the constants and enum classes are reached as attributes)
__all__ = ["rt", "util", "init", "finalize", "get_recent_err_msg", "get_soc_name",
           "get_version", *_desc_all]
