"""What each status code means and what triggers it in the emulator (for ``aclnn-py codes``).

docs/return_codes.md is the long form; tests check that every code here appears there.
"""

from __future__ import annotations

from .status import code_name

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
    207008: "no stream resources (host out of memory for a stream or its queue)",
    507006: "event not complete",
    507013: "a copy task faulted on the stream (DMA error)",
    507015: "an operator task faulted on the stream (AI Core exception)",
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
             "destroying a default stream or context"],
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
    207000: ["memcpy_async host to host"],
    207001: ["malloc beyond ACLNN_EMU_MEM_LIMIT (a negative size wraps to SIZE_MAX)"],
    207002: ["free / free_host of a pointer that is not a live allocation's start (double free, "
             "inside an allocation, wrong free call)"],
    207008: ["create_stream / set_device when a worker thread cannot start; a stream's task "
             "queue that cannot grow"],
    507006: ["event_elapsed_time before both events completed"],
    507013: ["synchronize: an async copy or memset whose device memory was freed before the "
             "stream reached it (even if allocated again since; the task wrote nothing)"],
    507015: ["synchronize: an operator task whose device memory was freed before the stream "
             "reached it, even if allocated again since (the message names the operator, step "
             "and tensor; the task wrote nothing)",
             "phase 2 itself with ACL_LAUNCH_BLOCKING=1"],
}


def describe(code: int) -> str:
    lines = [f"{code} {code_name(code)}: {MEANING.get(code, 'not returned by the emulator')}"]
    lines += [f"  - {t}" for t in TRIGGERS.get(code, [])]
    return "\n".join(lines)
