"""Status codes, the per-thread error-message store, and the exception hierarchy.

Every code is CANN's exact value (see CANN's error-code headers). Every failing call records
one message with :func:`record`; ``acl.get_recent_err_msg()`` returns and clears them (newest
first), per thread, and returns ``None`` when there is nothing.
"""

from __future__ import annotations

import enum
import os
import threading
from typing import Optional


class aclError(enum.IntEnum):
    """ACL runtime error codes (acl_base_rt.h and rt_error_codes.h)."""

    ACL_SUCCESS = 0
    ACL_ERROR_INVALID_PARAM = 100000
    ACL_ERROR_UNINITIALIZE = 100001
    ACL_ERROR_REPEAT_INITIALIZE = 100002
    ACL_ERROR_INVALID_FILE = 100003
    ACL_ERROR_WRITE_FILE = 100004
    ACL_ERROR_INVALID_FILE_SIZE = 100005
    ACL_ERROR_PARSE_FILE = 100006
    ACL_ERROR_FILE_MISSING_ATTR = 100007
    ACL_ERROR_FILE_ATTR_INVALID = 100008
    ACL_ERROR_INVALID_DUMP_CONFIG = 100009
    ACL_ERROR_INVALID_PROFILING_CONFIG = 100010
    ACL_ERROR_INVALID_MODEL_ID = 100011
    ACL_ERROR_DESERIALIZE_MODEL = 100012
    ACL_ERROR_PARSE_MODEL = 100013
    ACL_ERROR_READ_MODEL_FAILURE = 100014
    ACL_ERROR_MODEL_SIZE_INVALID = 100015
    ACL_ERROR_MODEL_MISSING_ATTR = 100016
    ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017
    ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018
    ACL_ERROR_MODEL_NOT_DYNAMIC = 100019
    ACL_ERROR_OP_TYPE_NOT_MATCH = 100020
    ACL_ERROR_OP_INPUT_NOT_MATCH = 100021
    ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022
    ACL_ERROR_OP_ATTR_NOT_MATCH = 100023
    ACL_ERROR_OP_NOT_FOUND = 100024
    ACL_ERROR_OP_LOAD_FAILED = 100025
    ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026
    ACL_ERROR_FORMAT_NOT_MATCH = 100027
    ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028
    ACL_ERROR_KERNEL_NOT_FOUND = 100029
    ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030
    ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031
    ACL_ERROR_INVALID_QUEUE_ID = 100032
    ACL_ERROR_REPEAT_SUBSCRIBE = 100033
    ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034
    ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036
    ACL_ERROR_REPEAT_FINALIZE = 100037
    ACL_ERROR_NOT_STATIC_AIPP = 100038
    ACL_ERROR_COMPILING_STUB_MODE = 100039
    ACL_ERROR_GROUP_NOT_SET = 100040
    ACL_ERROR_GROUP_NOT_CREATE = 100041
    ACL_ERROR_PROF_ALREADY_RUN = 100042
    ACL_ERROR_PROF_NOT_RUN = 100043
    ACL_ERROR_DUMP_ALREADY_RUN = 100044
    ACL_ERROR_DUMP_NOT_RUN = 100045
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046
    ACL_ERROR_PROF_API_CONFLICT = 148047
    ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048
    ACL_ERROR_INVALID_OPP_PATH = 148049
    ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051
    ACL_ERROR_UNSUPPORTED_JPEG = 148052
    ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053
    ACL_ERROR_BAD_ALLOC = 200000
    ACL_ERROR_API_NOT_SUPPORT = 200001
    ACL_ERROR_INVALID_DEVICE = 200002
    ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003
    ACL_ERROR_RESOURCE_NOT_MATCH = 200004
    ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005
    ACL_ERROR_FEATURE_UNSUPPORTED = 200006
    ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007
    ACL_ERROR_STORAGE_OVER_LIMIT = 300000
    ACL_ERROR_INTERNAL_ERROR = 500000
    ACL_ERROR_FAILURE = 500001
    ACL_ERROR_GE_FAILURE = 500002
    ACL_ERROR_RT_FAILURE = 500003
    ACL_ERROR_DRV_FAILURE = 500004
    ACL_ERROR_PROFILING_FAILURE = 500005
    # runtime layer (rt_error_codes.h)
    ACL_ERROR_RT_PARAM_INVALID = 107000
    ACL_ERROR_RT_INVALID_DEVICEID = 107001
    ACL_ERROR_RT_CONTEXT_NULL = 107002
    ACL_ERROR_RT_STREAM_CONTEXT = 107003
    ACL_ERROR_RT_MODEL_CONTEXT = 107004
    ACL_ERROR_RT_STREAM_MODEL = 107005
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006
    ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007
    ACL_ERROR_RT_ADDR_UNALIGNED = 107008
    ACL_ERROR_RT_FILE_OPEN = 107009
    ACL_ERROR_RT_FILE_WRITE = 107010
    ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011
    ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012
    ACL_ERROR_RT_GROUP_NOT_SET = 107013
    ACL_ERROR_RT_GROUP_NOT_CREATE = 107014
    ACL_ERROR_RT_STREAM_NO_CB_REG = 107015
    ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016
    ACL_ERROR_RT_INVALID_HANDLE = 107017
    ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018
    ACL_ERROR_RT_WAIT_TIMEOUT = 107019
    ACL_ERROR_RT_TASK_TIMEOUT = 107020
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021
    ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022
    ACL_ERROR_RT_STREAM_ABORT = 107023
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
    ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
    ACL_ERROR_RT_MEMORY_FREE = 207002
    ACL_ERROR_RT_AICORE_OVER_FLOW = 207003
    ACL_ERROR_RT_NO_DEVICE = 207004
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005
    ACL_ERROR_RT_NO_PERMISSION = 207006
    ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007
    ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
    ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009
    ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010
    ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011
    ACL_ERROR_RT_OVER_LIMIT = 207012
    ACL_ERROR_RT_QUEUE_EMPTY = 207013
    ACL_ERROR_RT_QUEUE_FULL = 207014
    ACL_ERROR_RT_REPEATED_INIT = 207015
    ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016
    ACL_ERROR_RT_OVER_FLOW = 207017
    ACL_ERROR_RT_DEVICE_OOM = 207018
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019
    ACL_ERROR_RT_TIMEOUT = 207020
    ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED = 207021
    ACL_ERROR_RT_INTERNAL_ERROR = 507000
    ACL_ERROR_RT_TS_ERROR = 507001
    ACL_ERROR_RT_STREAM_TASK_FULL = 507002
    ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003
    ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004
    ACL_ERROR_RT_END_OF_SEQUENCE = 507005
    ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007
    ACL_ERROR_RT_SOC_VERSION = 507008
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009
    ACL_ERROR_RT_LOST_HEARTBEAT = 507010
    ACL_ERROR_RT_MODEL_EXECUTE = 507011
    ACL_ERROR_RT_REPORT_TIMEOUT = 507012
    ACL_ERROR_RT_SYS_DMA = 507013
    ACL_ERROR_RT_AICORE_TIMEOUT = 507014
    ACL_ERROR_RT_AICORE_EXCEPTION = 507015
    ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016
    ACL_ERROR_RT_AICPU_TIMEOUT = 507017
    ACL_ERROR_RT_AICPU_EXCEPTION = 507018
    ACL_ERROR_RT_DEV_SETUP_ERROR = 507033
    ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035
    ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047
    ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899
    ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900
    ACL_ERROR_RT_SOCKET_CLOSE = 507901


class aclnnStatus(enum.IntEnum):
    """aclnn status codes (opdev/op_errno.h)."""

    ACLNN_SUCCESS = 0
    ACLNN_ERR_PARAM_NULLPTR = 161001
    ACLNN_ERR_PARAM_INVALID = 161002
    ACLNN_ERR_RUNTIME_ERROR = 361001
    ACLNN_ERR_INNER = 561000
    ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001
    ACLNN_ERR_INNER_TILING_ERROR = 561002
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003
    ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102
    ACLNN_ERR_INNER_NULLPTR = 561103
    ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104
    ACLNN_ERR_INNER_KEY_CONFLICT = 561105
    ACLNN_ERR_INNER_KEY_CONFILICT = 561105  # CANN's deprecated spelling (an alias)
    ACLNN_ERR_INNER_INVALID_IMPL_MODE = 561106
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND = 561107
    ACLNN_ERR_INNER_LOAD_JSON_FAILED = 561108
    ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND = 561109
    ACLNN_ERR_INNER_JSON_FORMAT_INVALID = 561110
    ACLNN_ERR_INNER_JSON_DTYPE_INVALID = 561111
    ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112
    ACLNN_ERR_INNER_OP_FILE_INVALID = 561113
    ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND = 561114
    ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH = 561115
    ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE = 561116
    ACLNN_ERR_INNER_INPUT_JSON_IS_NULL = 561117
    ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID = 561118
    ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID = 561119


def code_name(code: int) -> str:
    """The C name of a status code, or 'UNKNOWN'."""
    for enum_cls in (aclnnStatus, aclError):
        try:
            return enum_cls(code).name
        except ValueError:
            continue
    return "UNKNOWN"


def _title(code: int) -> str:
    """The error-manager title CANN prints before the message."""
    if 161000 <= code < 162000:
        return "AclNN_Parameter_Error(EZ1001)"
    if 361000 <= code < 362000:
        return "AclNN_Runtime_Error(EZ9903)"
    if 561000 <= code < 562000:
        return "AclNN_Inner_Error(EZ9999)"
    if 500000 <= code < 600000:
        return "Runtime_Fault(EE9999)"
    return "Runtime_Param_Error(EE1001)"


# ---------------------------------------------------------------- recent error messages ----

_tls = threading.local()


def record(api: str, code: int, text: str) -> int:
    """Store a message for ``acl.get_recent_err_msg()`` in this thread; returns ``code``."""
    line = (
        f"{api} failed. ERROR: {int(code)} ({code_name(code)}). "
        f"[PID: {os.getpid()}] {_title(code)}: {text}"
    )
    msgs = getattr(_tls, "msgs", None)
    if msgs is None:
        msgs = _tls.msgs = []
    msgs.append(line)
    del msgs[:-16]  # keep the newest few, as CANN's error manager does
    _tls.last = int(code)
    return int(code)


def last_code(clear: bool) -> int:
    """The code of this thread's last recorded failure (0 if none since the last clear):
    aclrtGetLastError (``clear``) and aclrtPeekAtLastError."""
    code = getattr(_tls, "last", 0)
    if clear:
        _tls.last = 0
    return code


def take_recent() -> Optional[str]:
    """Return and clear this thread's messages (newest first), or None when there are none."""
    msgs = getattr(_tls, "msgs", None)
    if not msgs:
        return None
    text = "\n".join(reversed(msgs))
    msgs.clear()
    return text


# -------------------------------------------------------------------------- exceptions -----


class AclnnError(Exception):
    """Root of aclnn-py's exceptions. Never raised directly: catch it to catch them all.

    Attributes: ``code`` (the status code), ``api`` (the call that failed), ``message`` (the
    recent error message recorded by the failing call, if any).
    """

    def __init__(self, code: int, message: Optional[str] = None, api: Optional[str] = None):
        self.code = int(code)
        self.api = api
        self.message = message
        head = f"{api or 'call'} returned {self.code} ({code_name(self.code)})"
        super().__init__(f"{head}: {message}" if message else head)


class AclnnParamError(AclnnError, ValueError):
    """An argument broke a rule (161002 and the runtime's 1xxxxx parameter codes)."""


class AclnnNullPointerError(AclnnParamError):
    """A required handle or pointer was null (161001)."""


class AclnnRuntimeError(AclnnError, RuntimeError):
    """The (emulated) device runtime failed: resources, stream faults (2xxxxx, 361001, 507xxx)."""


class AclnnInternalError(AclnnError, RuntimeError):
    """An internal error of the operator library (561xxx, 5000xx)."""


def error_class(code: int) -> type:
    """The exception class for a non-zero status code."""
    code = int(code)
    if code == aclnnStatus.ACLNN_ERR_PARAM_NULLPTR:
        return AclnnNullPointerError
    if 561000 <= code < 562000 or 500000 <= code < 500100:
        return AclnnInternalError
    if 100000 <= code < 200000 and code != 161001:
        return AclnnParamError
    return AclnnRuntimeError


def check(ret: int, api: Optional[str] = None) -> None:
    """Raise the matching :class:`AclnnError` subclass for a non-zero ``ret``; None for 0.

    The recent error message of this thread (see ``acl.get_recent_err_msg``) is consumed and
    attached to the exception.

    Raises:
        TypeError: ``ret`` is not an int.
        AclnnError: a subclass chosen by the code's family.
    """
    if isinstance(ret, bool) or not isinstance(ret, int):
        raise TypeError(f"check() expects an int status code, got {type(ret).__name__}")
    if ret == 0:
        return None
    raise error_class(ret)(ret, take_recent(), api)
