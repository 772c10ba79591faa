"""pyACL-compatible runtime: ``from aclnn_py import acl`` and write code as with ``import acl``.

Names and returns follow pyACL's documented conventions: handles and pointers are ints, calls
with out-parameters return them followed by ``ret``. Constants are exported in C spelling
(``acl.ACL_SUCCESS``, ``acl.ACL_MEMCPY_HOST_TO_DEVICE``) and as IntEnum classes.

What is emulated: device memory is host memory tracked in an allocation table; streams are C
worker threads; events carry host timestamps. What is not: device timings, HBM bandwidth, real
workspace byte counts of NPU kernels, models (acl.mdl), media (acl.media) and op compilation.
"""

from __future__ import annotations

import enum as _enum
from typing import Optional

from .. import runtime as _rt
from ..dtypes import aclDataType, aclFormat
from ..status import aclError, aclnnStatus, take_recent
from . import rt, util


class aclrtRunMode(_enum.IntEnum):
    ACL_DEVICE = 0
    ACL_HOST = 1


class aclrtMemcpyKind(_enum.IntEnum):
    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
    ACL_MEMCPY_DEFAULT = 4
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7


class aclrtMemMallocPolicy(_enum.IntEnum):
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


class aclrtEventRecordedStatus(_enum.IntEnum):
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1


class aclrtEventStatus(_enum.IntEnum):
    ACL_EVENT_STATUS_COMPLETE = 0
    ACL_EVENT_STATUS_NOT_READY = 1
    ACL_EVENT_STATUS_RESERVED = 2


class aclrtMemAttr(_enum.IntEnum):
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


class aclrtCallbackBlockType(_enum.IntEnum):
    ACL_CALLBACK_NO_BLOCK = 0
    ACL_CALLBACK_BLOCK = 1


ENUMS = (aclError, aclnnStatus, aclDataType, aclFormat, aclrtRunMode, aclrtMemcpyKind,
         aclrtMemMallocPolicy, aclrtEventRecordedStatus, aclrtEventStatus, aclrtMemAttr,
         aclrtCallbackBlockType)


def export_enums(namespace: dict, classes) -> list:
    """Put every enum class, and each of its members in C spelling, into a module namespace."""
    names = []
    for cls in classes:
        namespace.setdefault(cls.__name__, cls)
        for member_name, member in cls.__members__.items():
            namespace.setdefault(member_name, member)
            names.append(member_name)
    return names


export_enums(globals(), ENUMS)
ACL_ERROR_NONE = aclError.ACL_SUCCESS
ACL_RT_SUCCESS = aclError.ACL_SUCCESS


def init(config_path: Optional[str] = None) -> int:
    """aclInit. Second call: ACL_ERROR_REPEAT_INITIALIZE (100002). The JSON file may carry the
    emulator's keys (docs/configuration.md); other keys are CANN's and are ignored."""
    return _rt.init(config_path)


def finalize() -> int:
    """aclFinalize. Without init, or twice: ACL_ERROR_REPEAT_FINALIZE (100037)."""
    return _rt.finalize()


def get_recent_err_msg() -> Optional[str]:
    """aclGetRecentErrMsg: this thread's messages (newest first), cleared on read; None if none."""
    return take_recent()


def get_soc_name() -> str:
    """aclrtGetSocName: the emulated SoC (ACLNN_EMU_SOC), e.g. 'Ascend910B4'; None (C's NULL,
    with a message) when ACLNN_EMU_SOC names no SoC."""
    from .. import config

    profile, ret = config.checked("aclrtGetSocName", config.soc_profile)
    return None if ret else profile.name


__all__ = ["rt", "util", "init", "finalize", "get_recent_err_msg", "get_soc_name"]
