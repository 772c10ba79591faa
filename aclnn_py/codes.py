"""What each status code means and what triggers it in the emulator (for ``aclnn-py codes``).

``CANN`` holds every code of CANN's aclnnStatus (op_errno.h) and aclError (acl_base_rt.h,
rt_error_codes.h) tables with what CANN's documentation says it means; ``MEANING`` and
``TRIGGERS`` the codes the emulator returns and when. docs/return_codes.md is the long form;
tests check that every code the emulator returns appears there.
"""

from __future__ import annotations

from typing import Any

from .status import aclError, aclnnStatus, code_name

# CANN's meaning of every code (paraphrased from CANN's aclnn return-code page and the comments
# of its error-code headers)
CANN = {
    0: "success",
    # aclnnStatus
    161001: "a parameter is an illegal null pointer",
    161002: "a parameter is invalid (dtype, shape, dim, format, promotion)",
    361001: "a runtime (NPU) call made inside the API failed",
    561000: "internal error of the operator library",
    561001: "output shape inference failed",
    561002: "kernel tiling failed",
    561003: "no kernel found for the operator (e.g. its binary package is missing)",
    561101: "the aclOpExecutor could not be created",
    561102: "the API did not hand its executor over (ReleaseTo was not called)",
    561103: "an internal null pointer (e.g. an internal step failed); also a null executor in "
            "the meta API",
    561104: "wrong number of attributes",
    561105: "kernel hash-key conflict",
    561106: "invalid implementation mode",
    561107: "the ASCEND_OPP_PATH environment variable is missing",
    561108: "the operator-info JSON file could not be loaded",
    561109: "a field is missing from the operator-info JSON",
    561110: "a field of the operator-info JSON has a bad format",
    561111: "a dtype in the operator-info JSON is invalid",
    561112: "the kernel binary package is not loaded",
    561113: "a field of the operator JSON could not be loaded",
    561114: "more attributes than the operator JSON declares",
    561115: "fewer attributes than the operator JSON declares",
    561116: "more than 32 inputs in the operator JSON",
    561117: "the operator-info JSON is incomplete",
    561118: "the workspace information of a static kernel binary is invalid",
    561119: "the core-count (block dim) information of a static kernel binary is invalid",
    # aclError (acl_base_rt.h)
    100000: "invalid parameter",
    100001: "acl is not initialised (aclInit)",
    100002: "aclInit called again",
    100003: "invalid or missing file",
    100004: "a file could not be written",
    100005: "invalid file size",
    100006: "a file could not be parsed",
    100007: "a file lacks a required attribute",
    100008: "a file attribute is invalid",
    100009: "invalid dump configuration",
    100010: "invalid profiling configuration",
    100011: "invalid model id",
    100012: "a model could not be deserialised",
    100013: "a model could not be parsed",
    100014: "a model could not be read",
    100015: "invalid model size",
    100016: "a model lacks a required attribute",
    100017: "model inputs do not match",
    100018: "model outputs do not match",
    100019: "the model is not dynamic",
    100020: "single-operator type does not match",
    100021: "single-operator inputs do not match",
    100022: "single-operator outputs do not match",
    100023: "single-operator attributes do not match",
    100024: "single operator not found",
    100025: "a single operator could not be loaded",
    100026: "unsupported data type",
    100027: "format does not match",
    100028: "no binary selector registered for the operator",
    100029: "kernel not found",
    100030: "a binary selector is already registered",
    100031: "the kernel is already registered",
    100032: "invalid queue id",
    100033: "repeated subscription",
    100034: "the stream is not subscribed",
    100035: "the thread is not subscribed",
    100036: "waiting for a callback timed out",
    100037: "aclFinalize called again (or without aclInit)",
    100038: "the AIPP configuration is not static",
    100039: "a dynamic-library API was called in compile-stub mode",
    100040: "group not set",
    100041: "group not created",
    100042: "profiling is already running",
    100043: "profiling is not running",
    100044: "dump is already running",
    100045: "dump is not running",
    148046: "repeated profiling subscription",
    148047: "profiling API conflict",
    148048: "invalid maximum operator-queue configuration",
    148049: "invalid operator package path (OPP)",
    148050: "the operator does not support dynamic shapes",
    148051: "related resources were not released",
    148052: "unsupported JPEG",
    148053: "invalid bundle model id",
    200000: "memory allocation failed",
    200001: "API not supported",
    200002: "invalid device",
    200003: "memory address not aligned",
    200004: "resources do not match",
    200005: "invalid resource handle",
    200006: "feature not supported",
    200007: "profiling modules not supported",
    300000: "storage over its limit",
    500000: "internal error",
    500001: "failure",
    500002: "graph engine (GE) failure",
    500003: "runtime failure",
    500004: "driver failure",
    500005: "profiling failure",
    # runtime layer (rt_error_codes.h)
    107000: "invalid runtime parameter",
    107001: "invalid device id",
    107002: "no current context",
    107003: "the stream is not in the current context",
    107004: "the model is not in the current context",
    107005: "the stream is not bound to the model",
    107006: "invalid event timestamp (the event was never recorded)",
    107007: "event timestamps reversed",
    107008: "memory address not aligned",
    107009: "a file could not be opened",
    107010: "a file could not be written",
    107011: "stream subscription error",
    107012: "thread subscription error",
    107013: "group not set",
    107014: "group not created",
    107015: "no callback registered on the stream",
    107016: "invalid memory type (host memory where device memory is needed, or the reverse)",
    107017: "invalid handle (stream, event or context)",
    107018: "invalid malloc type",
    107019: "wait timed out",
    107020: "task timed out",
    107021: "system parameter option not set",
    107022: "device task aborted",
    107023: "stream aborted",
    207000: "feature not supported",
    207001: "device memory allocation failed (out of memory)",
    207002: "memory free failed",
    207003: "AI Core overflow",
    207004: "no device",
    207005: "resource allocation failed",
    207006: "no permission",
    207007: "no event resources",
    207008: "no stream resources",
    207009: "no notify resources",
    207010: "no model resources",
    207011: "no CDQ resources",
    207012: "over limit",
    207013: "queue empty",
    207014: "queue full",
    207015: "repeated initialisation",
    207016: "AI Vector overflow",
    207017: "overflow",
    207018: "device out of memory",
    207019: "the operator does not support update",
    207020: "timeout",
    207021: "link type not supported",
    507000: "runtime internal error",
    507001: "task scheduler error",
    507002: "the stream's task queue is full",
    507003: "the stream's task queue is empty",
    507004: "the stream has not completed",
    507005: "end of sequence",
    507006: "the event has not completed",
    507007: "context release error",
    507008: "SoC version error",
    507009: "task type not supported",
    507010: "lost the device heartbeat",
    507011: "model execution failed",
    507012: "report timed out",
    507013: "DMA (copy) error on the device",
    507014: "AI Core timed out",
    507015: "AI Core exception (an operator task faulted)",
    507016: "AI Core trap exception",
    507017: "AI CPU timed out",
    507018: "AI CPU exception",
    507033: "device setup error",
    507034: "Vector Core timed out",
    507035: "Vector Core exception",
    507036: "Vector Core trap exception",
    507046: "stream synchronize timed out",
    507047: "event synchronize timed out",
    507899: "driver internal error",
    507900: "AI CPU internal error",
    507901: "socket closed",
}

MEANING = {
    0: "success",
    161001: "a parameter is an illegal null pointer",
    161002: "a parameter is invalid (dtype, shape, dim, format, promotion, memory)",
    361001: "a runtime call inside the aclnn API failed",
    561000: "internal error (in the meta API: an executor that is no longer valid)",
    561003: "no kernel for this operator on the emulated SoC",
    561103: "an internal step returned null (e.g. a Cast the emulator does not implement)",
    100000: "invalid parameter of a runtime call",
    100002: "aclInit / aclnnInit called twice",
    100003: "the aclInit config file is missing or unreadable",
    100006: "the aclInit config file is not valid JSON",
    100008: "an emulator key in the aclInit config file has a bad value",
    100037: "aclFinalize without aclInit, or twice",
    107000: "invalid runtime parameter (counts, ranges)",
    107001: "invalid device id",
    107002: "no current context in this thread",
    107006: "event never recorded",
    107016: "wrong memory type (host pointer where device memory is required, or the reverse)",
    107017: "invalid handle (stream, event or context not live)",
    207000: "feature not supported",
    207001: "device memory allocation failed",
    207002: "device or host memory free failed",
    207007: "no event resources (host out of memory for an event)",
    207008: "no stream resources (host out of memory for a stream or its queue)",
    507006: "event not complete",
    507013: "a copy task faulted on the stream (DMA error)",
    507015: "an operator task faulted on the stream (AI Core exception)",
    507046: "synchronize_stream_with_timeout: the stream's tasks outlasted the timeout",
}

TRIGGERS = {
    161001: [
        "phase 1: a required tensor is None (checked in CANN's argument order)",
        "phase 2: executor is None, consumed (single-use) or destroyed",
        "phase 2: workspaceSize > 0 with a null workspace",
        "getters / aclSetRawTensorAddr on a None tensor",
    ],
    161002: [
        "phase 1: dtype not in the op's list for the SoC; dtypes that must match do not",
        "phase 1: dim outside [-n, n-1] (0-d counts as rank 1); rank > 8; shapes differ",
        "phase 1 (emulator, after CANN's checks): destroyed tensor, null address, a view not "
        "inside one live device allocation, tensors on different devices",
        "phase 2: workspaceSize smaller than phase 1 asked for; workspace not device memory; a "
        "tensor freed between the phases; executor built by another operator",
        "aclSetInput/OutputTensorAddr: executor not repeatable, index out of range",
    ],
    361001: ["phase 2: the stream is not live, no current context for a null stream, or the "
             "stream is on another device than the tensors"],
    561000: ["aclSetAclOpExecutorRepeatable / aclDestroyAclOpExecutor / aclSet*TensorAddr on a "
             "consumed or destroyed executor"],
    561003: ["phase 1: the operator has no kernel on ACLNN_EMU_SOC (e.g. Hardsigmoid on "
             "Ascend310P3)"],
    561103: ["phase 1: out dtype needs a Cast the emulator lacks (casts among FLOAT, FLOAT16, "
             "BFLOAT16, DOUBLE, INT32)", "meta API calls with a None executor or tensor"],
    100000: ["malloc / malloc_host of size 0", "null pointer to memcpy, memset or free",
             "memcpy kind outside 0..5", "get_mem_info attr outside 0..17",
             "memset value outside int32",
             "destroying a default stream or context",
             "create_event_with_flag with bits outside the event flags; "
             "create_stream_with_config with a value outside uint32",
             "synchronize_stream_with_timeout with a timeout neither -1 nor positive",
             "a bad configuration value met after acl.init (docs/configuration.md)"],
    100002: ["acl.init twice"],
    100003: ["acl.init(path) with a missing or unreadable file"],
    100006: ["acl.init(path) with a file that is not JSON"],
    100008: ["acl.init(path): an ACLNN_EMU_* key with a bad value"],
    100037: ["acl.finalize without init, or twice"],
    107000: ["memcpy count > destMax; memset count > maxCount",
             "a device range that runs past the end of its allocation",
             "a device-side address inside a device's memory but in no live allocation (freed, "
             "never allocated, past the end of one, or the parent's memory after fork())"],
    107001: ["a device id outside 0..ACLNN_EMU_DEVICE_COUNT-1"],
    107002: ["malloc, create_stream, get_device, a null stream ... with no device set in this "
             "thread"],
    107006: ["event_elapsed_time with an event never recorded"],
    107016: ["memcpy/memset: a host pointer where the kind says device memory, or the reverse "
             "(a host side that lies in device memory, live or freed)",
             "a host address at or above 2**63 (a negative pointer wraps there)"],
    107017: ["a stream, event or context handle that was destroyed or never created",
             "a handle of the parent process, used in a fork() child"],
    207000: ["memcpy_async host to host",
             "reset_event / stream_wait_event on an event made by create_event_with_flag "
             "without ACL_EVENT_SYNC"],
    207001: ["malloc beyond ACLNN_EMU_MEM_LIMIT (a negative size wraps to SIZE_MAX)"],
    207002: ["free / free_host of a pointer that is not a live allocation's start (double free, "
             "inside an allocation, wrong free call)"],
    207007: ["create_event / create_event_with_flag when the host is out of memory"],
    207008: ["create_stream / set_device when a worker thread cannot start; a stream's task "
             "queue that cannot grow"],
    507006: ["event_elapsed_time before both events completed"],
    507013: ["synchronize: an async copy or memset whose device memory was freed before the "
             "stream reached it (even if allocated again since; the task wrote nothing)"],
    507015: ["synchronize: an operator task whose device memory was freed before the stream "
             "reached it, even if allocated again since (the message names the operator, step "
             "and tensor; the task wrote nothing)",
             "phase 2 itself with ACL_LAUNCH_BLOCKING=1"],
    507046: ["synchronize_stream_with_timeout: the tasks enqueued before the call did not all "
             "finish within the timeout (they keep running)"],
}


def family(code: int) -> str:
    """'aclnnStatus', 'aclError' (0 is both: 'aclnnStatus/aclError'), or '' for no CANN code."""
    if code == 0:
        return "aclnnStatus/aclError"
    for enum_cls in (aclnnStatus, aclError):
        if code in enum_cls._value2member_map_:
            return enum_cls.__name__
    return ""


def info(code: int) -> dict[str, Any]:
    """One code as ``aclnn-py codes --json`` prints it (keys in docs/return_codes.md)."""
    return {
        "code": code,
        "name": code_name(code),
        "family": family(code),
        "meaning": CANN.get(code, ""),
        "returned_by_emulator": code in MEANING,
        "emulator_meaning": MEANING.get(code),
        "triggers": list(TRIGGERS.get(code, [])),
    }


def describe(code: int) -> str:
    """The ``aclnn-py codes`` text of one code: name and CANN's meaning, then whether (and
    when) the emulator returns it."""
    if code not in CANN:
        return f"{code} UNKNOWN: not a CANN status code"
    lines = [f"{code} {code_name(code)}: {CANN[code]}"]
    if code in MEANING:
        if MEANING[code] != CANN[code]:
            lines.append(f"  emulator: {MEANING[code]}")
        lines += [f"  - {t}" for t in TRIGGERS.get(code, [])]
    else:
        lines.append("  emulator: never returned (no emulated feature can fail this way)")
    return "\n".join(lines)
