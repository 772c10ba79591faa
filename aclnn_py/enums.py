"""The enumerations of the runtime, in one module.

Two kinds live here:

* CANN's public enums, with CANN's values (the ACL headers ``acl_base_rt.h`` / ``acl_rt.h`` and
  CANN's aclrt documentation): the run mode, memcpy kinds, malloc policies, event statuses, memory
  attributes and callback block types. The status codes (:class:`aclError`, :class:`aclnnStatus`)
  stay in :mod:`aclnn_py.status` and the dtype and format enums in :mod:`aclnn_py.dtypes`; they
  are re-exported here so that :data:`ENUMS` lists every enum class the ``acl`` namespace exports.
* The constants of the emulator's C core (``csrc/include/aclnn_emu.h``): what
  ``emu_mem_check_range`` answers (:class:`MemRange`), task types (:class:`TaskType`) and kernel
  ids (:class:`Kernel`). tests/test_runtime.py checks each against the compiled library, so the
  two spellings cannot drift.

This module imports nothing of the runtime: everything may import it.
"""

from __future__ import annotations

import enum

from .dtypes import aclDataType, aclFormat
from .status import aclError, aclnnStatus

# ------------------------------------------------------------------- CANN's runtime enums ----


class aclrtRunMode(enum.IntEnum):
    ACL_DEVICE = 0
    ACL_HOST = 1


class aclrtMemcpyKind(enum.IntEnum):
    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
    ACL_MEMCPY_DEFAULT = 4
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7


class aclrtMemMallocPolicy(enum.IntEnum):
    ACL_MEM_MALLOC_HUGE_FIRST = 0
    ACL_MEM_MALLOC_HUGE_ONLY = 1
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000


class aclrtEventRecordedStatus(enum.IntEnum):
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1


class aclrtEventStatus(enum.IntEnum):
    ACL_EVENT_STATUS_COMPLETE = 0
    ACL_EVENT_STATUS_NOT_READY = 1
    ACL_EVENT_STATUS_RESERVED = 2


class aclrtMemAttr(enum.IntEnum):
    ACL_DDR_MEM = 0
    ACL_HBM_MEM = 1
    ACL_DDR_MEM_HUGE = 2
    ACL_DDR_MEM_NORMAL = 3
    ACL_HBM_MEM_HUGE = 4
    ACL_HBM_MEM_NORMAL = 5
    ACL_DDR_MEM_P2P_HUGE = 6
    ACL_DDR_MEM_P2P_NORMAL = 7
    ACL_HBM_MEM_P2P_HUGE = 8
    ACL_HBM_MEM_P2P_NORMAL = 9
    ACL_HBM_MEM_HUGE1G = 10
    ACL_HBM_MEM_P2P_HUGE1G = 11
    ACL_MEM_NORMAL = 12
    ACL_MEM_HUGE = 13
    ACL_MEM_HUGE1G = 14
    ACL_MEM_P2P_NORMAL = 15
    ACL_MEM_P2P_HUGE = 16
    ACL_MEM_P2P_HUGE1G = 17


class aclrtCallbackBlockType(enum.IntEnum):
    ACL_CALLBACK_NO_BLOCK = 0
    ACL_CALLBACK_BLOCK = 1


# every enum class of the acl namespace, in the order it exports them
ENUMS: tuple[type[enum.IntEnum], ...] = (
    aclError, aclnnStatus, aclDataType, aclFormat, aclrtRunMode, aclrtMemcpyKind,
    aclrtMemMallocPolicy, aclrtEventRecordedStatus, aclrtEventStatus, aclrtMemAttr,
    aclrtCallbackBlockType,
)

# ------------------------------------------------- the C core's constants (aclnn_emu.h) ----


class MemRange(enum.IntEnum):
    """What ``emu_mem_check_range`` says of a byte range (``EMU_MEM_*``)."""

    OK = 0  # inside one live device allocation
    HOST = 1  # not in any device's address range: host memory
    PAST_END = 2  # starts in a live allocation but runs past its end
    NOT_LIVE = 3  # in a device's address range, outside every live allocation


class TaskType(enum.IntEnum):
    """``emu_task.type`` (``EMU_TASK_*``)."""

    KERNEL = 1
    MEMCPY = 2
    MEMSET = 3
    EVENT_RECORD = 4
    EVENT_WAIT = 5
    EVENT_RESET = 6
    SLEEP = 7


class Kernel(enum.IntEnum):
    """Kernel ids of ``emu_task.kernel`` (``EMU_K_*``): indexes into the C core's kernel table."""

    SOFTMAX_FWD = 1
    SOFTMAX_BWD = 2
    HARDSIGMOID_FWD = 3
    HARDSIGMOID_BWD = 4
    CAST = 5
    STRIDED_COPY = 6
    SOFTMAX_EX = 7
    HOST = 8  # a host function: a custom operator's kernel (aclnn_py.custom)


class Accumulation(enum.IntEnum):
    """oneDNN's accumulation modes (``EMU_ACC_*``; ACLNN_EMU_ACCUMULATION, functional's
    ``accumulation=``): STRICT keeps full accuracy and the same bits at every ISA level; RELAXED
    and ANY let float16 / bfloat16 softmax-family kernels use cheaper arithmetic within a bound
    (docs/onednn.md)."""

    STRICT = 0
    RELAXED = 1
    ANY = 2



class PostOpAlg(enum.IntEnum):
    """oneDNN's post-op algorithms the softmax kernel applies (``EMU_PO_*``): eltwise below 64,
    binary from 64. Their formulas: docs/onednn.md."""

    RELU = 1
    LINEAR = 2
    CLIP = 3
    CLIP_V2 = 4
    TANH = 5
    LOGISTIC = 6
    EXP = 7
    LOG = 8
    ABS = 9
    SQUARE = 10
    SQRT = 11
    SWISH = 12
    GELU_ERF = 13
    GELU_TANH = 14
    ELU = 15
    HARDSIGMOID = 16
    HARDSWISH = 17
    MISH = 18
    POW = 19
    ROUND = 20
    SOFT_RELU = 21
    ADD = 64
    SUB = 65
    MUL = 66
    DIV = 67
    MAX = 68
    MIN = 69
    GE = 70
    GT = 71
    LE = 72
    LT = 73
    EQ = 74
    NE = 75
    DROPOUT = 76  # internal: oneDNN's dropout, d = t != 0 ? d * t : 0 (t: 1/(1-p) or 0)


__all__ = [
    "aclError", "aclnnStatus", "aclDataType", "aclFormat", "aclrtRunMode", "aclrtMemcpyKind",
    "aclrtMemMallocPolicy", "aclrtEventRecordedStatus", "aclrtEventStatus", "aclrtMemAttr",
    "aclrtCallbackBlockType", "ENUMS", "MemRange", "TaskType", "Kernel", "Accumulation",
    "PostOpAlg",
]
