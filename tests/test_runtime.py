"""The pyACL-compatible runtime: codes and enums, init/finalize, recent error messages, devices
and contexts, device memory, synchronous copies and acl.util.

Expected values come from CANN (CANN's error-code headers; the header/enum values are
transcribed below) and from NumPy, never from the code under test.
"""

from __future__ import annotations

import enum
import json
import sys
import threading

import numpy as np
import pytest

from aclnn_py import acl, aclnn

H2H = 0
H2D = 1
D2H = 2
D2D = 3
DEFAULT = 4
HUGE_FIRST = 0

# ------------------------------------------------------------------ 1. codes and enums -----

# aclError: acl_base_rt.h + rt_error_codes.h (CANN's error-code headers)
ACL_ERRORS = {
    "ACL_SUCCESS": 0, "ACL_ERROR_NONE": 0, "ACL_RT_SUCCESS": 0,
    "ACL_ERROR_INVALID_PARAM": 100000, "ACL_ERROR_UNINITIALIZE": 100001,
    "ACL_ERROR_REPEAT_INITIALIZE": 100002, "ACL_ERROR_INVALID_FILE": 100003,
    "ACL_ERROR_WRITE_FILE": 100004, "ACL_ERROR_INVALID_FILE_SIZE": 100005,
    "ACL_ERROR_PARSE_FILE": 100006, "ACL_ERROR_FILE_MISSING_ATTR": 100007,
    "ACL_ERROR_FILE_ATTR_INVALID": 100008, "ACL_ERROR_INVALID_DUMP_CONFIG": 100009,
    "ACL_ERROR_INVALID_PROFILING_CONFIG": 100010, "ACL_ERROR_INVALID_MODEL_ID": 100011,
    "ACL_ERROR_DESERIALIZE_MODEL": 100012, "ACL_ERROR_PARSE_MODEL": 100013,
    "ACL_ERROR_READ_MODEL_FAILURE": 100014, "ACL_ERROR_MODEL_SIZE_INVALID": 100015,
    "ACL_ERROR_MODEL_MISSING_ATTR": 100016, "ACL_ERROR_MODEL_INPUT_NOT_MATCH": 100017,
    "ACL_ERROR_MODEL_OUTPUT_NOT_MATCH": 100018, "ACL_ERROR_MODEL_NOT_DYNAMIC": 100019,
    "ACL_ERROR_OP_TYPE_NOT_MATCH": 100020, "ACL_ERROR_OP_INPUT_NOT_MATCH": 100021,
    "ACL_ERROR_OP_OUTPUT_NOT_MATCH": 100022, "ACL_ERROR_OP_ATTR_NOT_MATCH": 100023,
    "ACL_ERROR_OP_NOT_FOUND": 100024, "ACL_ERROR_OP_LOAD_FAILED": 100025,
    "ACL_ERROR_UNSUPPORTED_DATA_TYPE": 100026, "ACL_ERROR_FORMAT_NOT_MATCH": 100027,
    "ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED": 100028, "ACL_ERROR_KERNEL_NOT_FOUND": 100029,
    "ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED": 100030,
    "ACL_ERROR_KERNEL_ALREADY_REGISTERED": 100031, "ACL_ERROR_INVALID_QUEUE_ID": 100032,
    "ACL_ERROR_REPEAT_SUBSCRIBE": 100033, "ACL_ERROR_STREAM_NOT_SUBSCRIBE": 100034,
    "ACL_ERROR_THREAD_NOT_SUBSCRIBE": 100035, "ACL_ERROR_WAIT_CALLBACK_TIMEOUT": 100036,
    "ACL_ERROR_REPEAT_FINALIZE": 100037, "ACL_ERROR_NOT_STATIC_AIPP": 100038,
    "ACL_ERROR_COMPILING_STUB_MODE": 100039, "ACL_ERROR_GROUP_NOT_SET": 100040,
    "ACL_ERROR_GROUP_NOT_CREATE": 100041, "ACL_ERROR_PROF_ALREADY_RUN": 100042,
    "ACL_ERROR_PROF_NOT_RUN": 100043, "ACL_ERROR_DUMP_ALREADY_RUN": 100044,
    "ACL_ERROR_DUMP_NOT_RUN": 100045, "ACL_ERROR_PROF_REPEAT_SUBSCRIBE": 148046,
    "ACL_ERROR_PROF_API_CONFLICT": 148047, "ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG": 148048,
    "ACL_ERROR_INVALID_OPP_PATH": 148049, "ACL_ERROR_OP_UNSUPPORTED_DYNAMIC": 148050,
    "ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED": 148051, "ACL_ERROR_UNSUPPORTED_JPEG": 148052,
    "ACL_ERROR_INVALID_BUNDLE_MODEL_ID": 148053, "ACL_ERROR_BAD_ALLOC": 200000,
    "ACL_ERROR_API_NOT_SUPPORT": 200001, "ACL_ERROR_INVALID_DEVICE": 200002,
    "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED": 200003, "ACL_ERROR_RESOURCE_NOT_MATCH": 200004,
    "ACL_ERROR_INVALID_RESOURCE_HANDLE": 200005, "ACL_ERROR_FEATURE_UNSUPPORTED": 200006,
    "ACL_ERROR_PROF_MODULES_UNSUPPORTED": 200007, "ACL_ERROR_STORAGE_OVER_LIMIT": 300000,
    "ACL_ERROR_INTERNAL_ERROR": 500000, "ACL_ERROR_FAILURE": 500001,
    "ACL_ERROR_GE_FAILURE": 500002, "ACL_ERROR_RT_FAILURE": 500003,
    "ACL_ERROR_DRV_FAILURE": 500004, "ACL_ERROR_PROFILING_FAILURE": 500005,
    "ACL_ERROR_RT_PARAM_INVALID": 107000, "ACL_ERROR_RT_INVALID_DEVICEID": 107001,
    "ACL_ERROR_RT_CONTEXT_NULL": 107002, "ACL_ERROR_RT_STREAM_CONTEXT": 107003,
    "ACL_ERROR_RT_MODEL_CONTEXT": 107004, "ACL_ERROR_RT_STREAM_MODEL": 107005,
    "ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID": 107006,
    "ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL": 107007, "ACL_ERROR_RT_ADDR_UNALIGNED": 107008,
    "ACL_ERROR_RT_FILE_OPEN": 107009, "ACL_ERROR_RT_FILE_WRITE": 107010,
    "ACL_ERROR_RT_STREAM_SUBSCRIBE": 107011, "ACL_ERROR_RT_THREAD_SUBSCRIBE": 107012,
    "ACL_ERROR_RT_GROUP_NOT_SET": 107013, "ACL_ERROR_RT_GROUP_NOT_CREATE": 107014,
    "ACL_ERROR_RT_STREAM_NO_CB_REG": 107015, "ACL_ERROR_RT_INVALID_MEMORY_TYPE": 107016,
    "ACL_ERROR_RT_INVALID_HANDLE": 107017, "ACL_ERROR_RT_INVALID_MALLOC_TYPE": 107018,
    "ACL_ERROR_RT_WAIT_TIMEOUT": 107019, "ACL_ERROR_RT_TASK_TIMEOUT": 107020,
    "ACL_ERROR_RT_SYSPARAMOPT_NOT_SET": 107021, "ACL_ERROR_RT_DEVICE_TASK_ABORT": 107022,
    "ACL_ERROR_RT_STREAM_ABORT": 107023, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT": 207000,
    "ACL_ERROR_RT_MEMORY_ALLOCATION": 207001, "ACL_ERROR_RT_MEMORY_FREE": 207002,
    "ACL_ERROR_RT_AICORE_OVER_FLOW": 207003, "ACL_ERROR_RT_NO_DEVICE": 207004,
    "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL": 207005, "ACL_ERROR_RT_NO_PERMISSION": 207006,
    "ACL_ERROR_RT_NO_EVENT_RESOURCE": 207007, "ACL_ERROR_RT_NO_STREAM_RESOURCE": 207008,
    "ACL_ERROR_RT_NO_NOTIFY_RESOURCE": 207009, "ACL_ERROR_RT_NO_MODEL_RESOURCE": 207010,
    "ACL_ERROR_RT_NO_CDQ_RESOURCE": 207011, "ACL_ERROR_RT_OVER_LIMIT": 207012,
    "ACL_ERROR_RT_QUEUE_EMPTY": 207013, "ACL_ERROR_RT_QUEUE_FULL": 207014,
    "ACL_ERROR_RT_REPEATED_INIT": 207015, "ACL_ERROR_RT_AIVEC_OVER_FLOW": 207016,
    "ACL_ERROR_RT_OVER_FLOW": 207017, "ACL_ERROR_RT_DEVICE_OOM": 207018,
    "ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP": 207019, "ACL_ERROR_RT_TIMEOUT": 207020,
    "ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED": 207021, "ACL_ERROR_RT_INTERNAL_ERROR": 507000,
    "ACL_ERROR_RT_TS_ERROR": 507001, "ACL_ERROR_RT_STREAM_TASK_FULL": 507002,
    "ACL_ERROR_RT_STREAM_TASK_EMPTY": 507003, "ACL_ERROR_RT_STREAM_NOT_COMPLETE": 507004,
    "ACL_ERROR_RT_END_OF_SEQUENCE": 507005, "ACL_ERROR_RT_EVENT_NOT_COMPLETE": 507006,
    "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR": 507007, "ACL_ERROR_RT_SOC_VERSION": 507008,
    "ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT": 507009, "ACL_ERROR_RT_LOST_HEARTBEAT": 507010,
    "ACL_ERROR_RT_MODEL_EXECUTE": 507011, "ACL_ERROR_RT_REPORT_TIMEOUT": 507012,
    "ACL_ERROR_RT_SYS_DMA": 507013, "ACL_ERROR_RT_AICORE_TIMEOUT": 507014,
    "ACL_ERROR_RT_AICORE_EXCEPTION": 507015, "ACL_ERROR_RT_AICORE_TRAP_EXCEPTION": 507016,
    "ACL_ERROR_RT_AICPU_TIMEOUT": 507017, "ACL_ERROR_RT_AICPU_EXCEPTION": 507018,
    "ACL_ERROR_RT_DEV_SETUP_ERROR": 507033, "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT": 507034,
    "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION": 507035,
    "ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION": 507036,
    "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT": 507046, "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT": 507047,
    "ACL_ERROR_RT_DRV_INTERNAL_ERROR": 507899, "ACL_ERROR_RT_AICPU_INTERNAL_ERROR": 507900,
    "ACL_ERROR_RT_SOCKET_CLOSE": 507901,
}

# aclnnStatus: op_errno.h (CANN's error-code headers)
ACLNN_STATUSES = {
    "ACLNN_SUCCESS": 0, "ACLNN_ERR_PARAM_NULLPTR": 161001, "ACLNN_ERR_PARAM_INVALID": 161002,
    "ACLNN_ERR_RUNTIME_ERROR": 361001, "ACLNN_ERR_INNER": 561000,
    "ACLNN_ERR_INNER_INFERSHAPE_ERROR": 561001, "ACLNN_ERR_INNER_TILING_ERROR": 561002,
    "ACLNN_ERR_INNER_FIND_KERNEL_ERROR": 561003, "ACLNN_ERR_INNER_CREATE_EXECUTOR": 561101,
    "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR": 561102, "ACLNN_ERR_INNER_NULLPTR": 561103,
    "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE": 561104, "ACLNN_ERR_INNER_KEY_CONFILICT": 561105,
    "ACLNN_ERR_INNER_KEY_CONFLICT": 561105, "ACLNN_ERR_INNER_INVALID_IMPL_MODE": 561106,
    "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND": 561107, "ACLNN_ERR_INNER_LOAD_JSON_FAILED": 561108,
    "ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND": 561109,
    "ACLNN_ERR_INNER_JSON_FORMAT_INVALID": 561110, "ACLNN_ERR_INNER_JSON_DTYPE_INVALID": 561111,
    "ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND": 561112,
    "ACLNN_ERR_INNER_OP_FILE_INVALID": 561113, "ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND": 561114,
    "ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH": 561115,
    "ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE": 561116,
    "ACLNN_ERR_INNER_INPUT_JSON_IS_NULL": 561117,
    "ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID": 561118,
    "ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID": 561119,
}

# aclDataType (CANN's acl_base_rt.h / acl_rt.h)
DATA_TYPES = {
    "ACL_DT_UNDEFINED": -1, "ACL_FLOAT": 0, "ACL_FLOAT16": 1, "ACL_INT8": 2, "ACL_INT32": 3,
    "ACL_UINT8": 4, "ACL_INT16": 6, "ACL_UINT16": 7, "ACL_UINT32": 8, "ACL_INT64": 9,
    "ACL_UINT64": 10, "ACL_DOUBLE": 11, "ACL_BOOL": 12, "ACL_STRING": 13, "ACL_COMPLEX64": 16,
    "ACL_COMPLEX128": 17, "ACL_BF16": 27, "ACL_INT4": 29, "ACL_UINT1": 30, "ACL_COMPLEX32": 33,
    "ACL_HIFLOAT8": 34, "ACL_FLOAT8_E5M2": 35, "ACL_FLOAT8_E4M3FN": 36, "ACL_FLOAT8_E8M0": 37,
    "ACL_FLOAT6_E3M2": 38, "ACL_FLOAT6_E2M3": 39, "ACL_FLOAT4_E2M1": 40, "ACL_FLOAT4_E1M2": 41,
}

# aclFormat (CANN's acl_base_rt.h / acl_rt.h)
FORMATS = {
    "ACL_FORMAT_UNDEFINED": -1, "ACL_FORMAT_NCHW": 0, "ACL_FORMAT_NHWC": 1, "ACL_FORMAT_ND": 2,
    "ACL_FORMAT_NC1HWC0": 3, "ACL_FORMAT_FRACTAL_Z": 4, "ACL_FORMAT_NC1HWC0_C04": 12,
    "ACL_FORMAT_HWCN": 16, "ACL_FORMAT_NDHWC": 27, "ACL_FORMAT_FRACTAL_NZ": 29,
    "ACL_FORMAT_NCDHW": 30, "ACL_FORMAT_NDC1HWC0": 32, "ACL_FRACTAL_Z_3D": 33,
    "ACL_FORMAT_NC": 35, "ACL_FORMAT_NCL": 47, "ACL_FORMAT_FRACTAL_NZ_C0_16": 50,
    "ACL_FORMAT_FRACTAL_NZ_C0_32": 51, "ACL_FORMAT_FRACTAL_NZ_C0_2": 52,
    "ACL_FORMAT_FRACTAL_NZ_C0_4": 53, "ACL_FORMAT_FRACTAL_NZ_C0_8": 54,
}

# runtime enums of acl_rt.h (CANN's acl_base_rt.h / acl_rt.h): class name -> {member: value}
RT_ENUMS = {
    "aclrtRunMode": {"ACL_DEVICE": 0, "ACL_HOST": 1},
    "aclrtMemcpyKind": {
        "ACL_MEMCPY_HOST_TO_HOST": 0, "ACL_MEMCPY_HOST_TO_DEVICE": 1,
        "ACL_MEMCPY_DEVICE_TO_HOST": 2, "ACL_MEMCPY_DEVICE_TO_DEVICE": 3,
        "ACL_MEMCPY_DEFAULT": 4, "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE": 5,
        "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE": 6, "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE": 7,
    },
    "aclrtMemMallocPolicy": {
        "ACL_MEM_MALLOC_HUGE_FIRST": 0, "ACL_MEM_MALLOC_HUGE_ONLY": 1,
        "ACL_MEM_MALLOC_NORMAL_ONLY": 2, "ACL_MEM_MALLOC_HUGE_FIRST_P2P": 3,
        "ACL_MEM_MALLOC_HUGE_ONLY_P2P": 4, "ACL_MEM_MALLOC_NORMAL_ONLY_P2P": 5,
        "ACL_MEM_MALLOC_HUGE1G_ONLY": 6, "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P": 7,
        "ACL_MEM_TYPE_LOW_BAND_WIDTH": 0x0100, "ACL_MEM_TYPE_HIGH_BAND_WIDTH": 0x1000,
        "ACL_MEM_ACCESS_USER_SPACE_READONLY": 0x100000,
    },
    "aclrtEventRecordedStatus": {
        "ACL_EVENT_RECORDED_STATUS_NOT_READY": 0, "ACL_EVENT_RECORDED_STATUS_COMPLETE": 1,
    },
    "aclrtEventStatus": {
        "ACL_EVENT_STATUS_COMPLETE": 0, "ACL_EVENT_STATUS_NOT_READY": 1,
        "ACL_EVENT_STATUS_RESERVED": 2,
    },
    "aclrtMemAttr": {
        name: i for i, name in enumerate([
            "ACL_DDR_MEM", "ACL_HBM_MEM", "ACL_DDR_MEM_HUGE", "ACL_DDR_MEM_NORMAL",
            "ACL_HBM_MEM_HUGE", "ACL_HBM_MEM_NORMAL", "ACL_DDR_MEM_P2P_HUGE",
            "ACL_DDR_MEM_P2P_NORMAL", "ACL_HBM_MEM_P2P_HUGE", "ACL_HBM_MEM_P2P_NORMAL",
            "ACL_HBM_MEM_HUGE1G", "ACL_HBM_MEM_P2P_HUGE1G", "ACL_MEM_NORMAL", "ACL_MEM_HUGE",
            "ACL_MEM_HUGE1G", "ACL_MEM_P2P_NORMAL", "ACL_MEM_P2P_HUGE", "ACL_MEM_P2P_HUGE1G",
        ])
    },
    "aclrtCallbackBlockType": {"ACL_CALLBACK_NO_BLOCK": 0, "ACL_CALLBACK_BLOCK": 1},
}


def _assert_intenum(value, expected: int, name: str) -> None:
    assert isinstance(value, enum.IntEnum), f"{name} is {type(value).__name__}, not an IntEnum"
    assert value == expected and int(value) == expected, f"{name} = {int(value)}, CANN: {expected}"


@pytest.mark.parametrize("name,value", sorted(ACL_ERRORS.items()))
def test_acl_error_codes(name, value):
    _assert_intenum(getattr(acl, name), value, f"acl.{name}")


@pytest.mark.parametrize("name,value", sorted(ACLNN_STATUSES.items()))
def test_aclnn_status_codes(name, value):
    _assert_intenum(getattr(aclnn, name), value, f"aclnn.{name}")


def test_acl_error_enum_class():
    for name, value in ACL_ERRORS.items():
        if name in ("ACL_ERROR_NONE", "ACL_RT_SUCCESS"):
            continue  # aliases of ACL_SUCCESS
        assert acl.aclError[name] == value, name
    assert issubclass(acl.aclError, enum.IntEnum)


@pytest.mark.parametrize("name,value", sorted(DATA_TYPES.items()))
def test_data_types(name, value):
    _assert_intenum(getattr(aclnn, name), value, f"aclnn.{name}")


@pytest.mark.parametrize("name,value", sorted(FORMATS.items()))
def test_formats(name, value):
    _assert_intenum(getattr(aclnn, name), value, f"aclnn.{name}")


@pytest.mark.parametrize("cls_name,members", [("aclDataType", DATA_TYPES),
                                              ("aclFormat", FORMATS),
                                              ("aclnnStatus", ACLNN_STATUSES)])
def test_aclnn_enum_classes(cls_name, members):
    """docs/runtime.md: each value is also reachable through its enum class, e.g.
    aclnn.aclDataType.ACL_BF16; the module attribute is that class's member."""
    cls = getattr(aclnn, cls_name)
    assert issubclass(cls, enum.IntEnum)
    for name, value in members.items():
        assert cls[name] == value, f"{cls_name}.{name}"
        assert getattr(aclnn, name) is cls[name]


def test_dtype_and_format_spot_values():
    assert aclnn.ACL_BF16 == 27 and isinstance(aclnn.ACL_BF16, enum.IntEnum)
    assert aclnn.ACL_FLOAT == 0 and aclnn.ACL_FLOAT16 == 1 and aclnn.ACL_DOUBLE == 11
    assert aclnn.ACL_FORMAT_ND == 2 and aclnn.ACL_FORMAT_NCHW == 0 and aclnn.ACL_FORMAT_NHWC == 1
    assert aclnn.ACLNN_ERR_PARAM_NULLPTR == 161001


@pytest.mark.parametrize("cls_name", sorted(RT_ENUMS))
def test_runtime_enums(cls_name):
    cls = getattr(acl, cls_name)
    assert issubclass(cls, enum.IntEnum)
    for name, value in RT_ENUMS[cls_name].items():
        assert cls[name] == value, f"{cls_name}.{name}"
        _assert_intenum(getattr(acl, name), value, f"acl.{name}")


@pytest.mark.parametrize("cls_name", sorted(RT_ENUMS))
def test_enums_module_holds_cann_values(cls_name):
    """aclnn_py.enums, the one home of the runtime's enums: exactly CANN's members and values,
    and the same members as the class acl exports."""
    from aclnn_py import enums

    cls = getattr(enums, cls_name)
    assert issubclass(cls, enum.IntEnum)
    assert {m.name: int(m) for m in cls} == RT_ENUMS[cls_name]
    assert {m.name: int(m) for m in getattr(acl, cls_name)} == RT_ENUMS[cls_name]
    assert cls_name in {c.__name__ for c in enums.ENUMS}


def test_enums_module_lists_acl_and_aclnn_enum_classes():
    from aclnn_py import enums

    names = [c.__name__ for c in enums.ENUMS]
    assert len(names) == len(set(names))
    assert set(names) == set(RT_ENUMS) | {"aclError", "aclnnStatus", "aclDataType", "aclFormat"}
    assert enums.aclError is acl.aclError and enums.aclnnStatus is aclnn.aclnnStatus
    assert enums.aclDataType is aclnn.aclDataType and enums.aclFormat is aclnn.aclFormat


# the C core's constants (csrc/include/aclnn_emu.h): prefix -> enum class of aclnn_py.enums
C_CONSTANTS = {"EMU_MEM_": "MemRange", "EMU_TASK_": "TaskType", "EMU_K_": "Kernel",
               "EMU_PO_": "PostOpAlg", "EMU_ACC_": "Accumulation"}


@pytest.mark.parametrize("prefix", sorted(C_CONSTANTS))
def test_c_core_constants_match_the_enums_module(prefix):
    """Each EMU_* constant of the header has a member of the same name and value, and back."""
    from aclnn_py import enums
    from aclnn_py.runtime.core import lib

    cls = getattr(enums, C_CONSTANTS[prefix])
    in_c = {n[len(prefix):]: getattr(lib, n) for n in dir(lib) if n.startswith(prefix)}
    count = in_c.pop("COUNT", None)
    assert in_c, f"no {prefix}* constant in the compiled library"
    assert {m.name: int(m) for m in cls} == in_c
    if count is not None:  # EMU_K_COUNT: one past the last kernel id
        assert count == max(in_c.values()) + 1


def test_documented_memory_range_results():
    """The header's documented EMU_MEM_* values (aclnn_emu.h): 0 ok, 1 host, 2 past the end,
    3 not live."""
    from aclnn_py.enums import MemRange

    assert (MemRange.OK, MemRange.HOST, MemRange.PAST_END, MemRange.NOT_LIVE) == (0, 1, 2, 3)


# ----------------------------------------------------------------- 2. init / finalize -----


def _write(tmp_path, text: str, name: str = "acl.json") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_init_finalize_codes(acl_uninitialized):
    assert acl.finalize() == 100037  # without init
    assert acl.init() == 0
    assert acl.init() == 100002
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclInit" in msg and "100002" in msg
    assert acl.finalize() == 0
    assert acl.finalize() == 100037
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclFinalize" in msg and "100037" in msg
    # the cycle can be repeated
    assert acl.init() == 0
    assert acl.finalize() == 0


@pytest.mark.parametrize("arg", ["", None])
def test_init_accepts_empty_and_none(acl_uninitialized, arg):
    assert acl.init(arg) == 0
    assert acl.finalize() == 0


def test_init_json_sets_soc_and_finalize_restores(acl_uninitialized, tmp_path):
    assert acl.get_soc_name() == "Ascend910B4"
    path = _write(tmp_path, json.dumps({"ACLNN_EMU_SOC": "Ascend310P3"}))
    assert acl.init(path) == 0
    assert acl.get_soc_name() == "Ascend310P3"
    assert acl.finalize() == 0
    assert acl.get_soc_name() == "Ascend910B4"


def test_init_json_with_cann_keys_only(acl_uninitialized, tmp_path):
    path = _write(tmp_path, json.dumps({"dump": {"dump_list": []}, "err_msg_mode": "0"}))
    assert acl.init(path) == 0
    assert acl.get_soc_name() == "Ascend910B4"
    assert acl.finalize() == 0


def test_init_missing_file(acl_uninitialized, tmp_path):
    assert acl.init(str(tmp_path / "does_not_exist.json")) == 100003
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclInit" in msg and "100003" in msg
    assert acl.init() == 0  # the failed call did not initialise
    assert acl.finalize() == 0


def test_init_invalid_json(acl_uninitialized, tmp_path):
    path = _write(tmp_path, '{"ACLNN_EMU_SOC": "Ascend310P3",')
    assert acl.init(path) == 100006
    assert "aclInit" in acl.get_recent_err_msg()
    assert acl.get_soc_name() == "Ascend910B4"
    assert acl.init() == 0
    assert acl.finalize() == 0


@pytest.mark.parametrize("content", [
    {"ACLNN_EMU_SOC": "Ascend999X"},
    {"ACLNN_EMU_DEVICE_COUNT": "many"},
    {"ACLNN_EMU_MEM_LIMIT": "lots"},
    {"ACLNN_EMU_POISON": "0x1FF"},
])
def test_init_bad_emulator_value(acl_uninitialized, tmp_path, content):
    path = _write(tmp_path, json.dumps(content))
    assert acl.init(path) == 100008
    msg = acl.get_recent_err_msg()
    assert msg is not None and "100008" in msg and next(iter(content)) in msg
    assert acl.get_soc_name() == "Ascend910B4"
    assert acl.init() == 0
    assert acl.finalize() == 0


# -------------------------------------------------------------- 3. get_recent_err_msg -----


def test_recent_err_msg_empty_is_none():
    assert acl.get_recent_err_msg() is None


def test_recent_err_msg_names_api_and_code_and_is_cleared():
    ptr, ret = acl.rt.malloc(0, HUGE_FIRST)
    assert (ptr, ret) == (0, 100000)
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str)
    assert "aclrtMalloc" in msg and "100000" in msg
    assert acl.get_recent_err_msg() is None


def test_recent_err_msg_is_per_thread():
    seen = {}

    def other():
        seen["before"] = acl.get_recent_err_msg()  # the main thread's failure is not visible
        seen["ret"] = acl.rt.free(0)
        seen["own"] = acl.get_recent_err_msg()
        seen["fail"] = acl.rt.malloc(0, HUGE_FIRST)[1]  # left for this thread only

    assert acl.rt.malloc(0, HUGE_FIRST)[1] == 100000
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["before"] is None
    assert seen["ret"] == 100000
    assert seen["own"] is not None and "aclrtFree" in seen["own"]
    assert seen["fail"] == 100000
    mine = acl.get_recent_err_msg()
    assert mine is not None and "aclrtMalloc" in mine and "aclrtFree" not in mine
    assert acl.get_recent_err_msg() is None  # the other thread's malloc failure stays there


# ------------------------------------------------------------- 4. devices and contexts -----


def test_device_count_default(monkeypatch):
    monkeypatch.delenv("ACLNN_EMU_DEVICE_COUNT", raising=False)
    assert acl.rt.get_device_count() == (1, 0)


def test_device_count_env(monkeypatch):
    monkeypatch.setenv("ACLNN_EMU_DEVICE_COUNT", "4")
    assert acl.rt.get_device_count() == (4, 0)
    assert acl.rt.set_device(3) == 0
    assert acl.rt.get_device() == (3, 0)
    assert acl.rt.reset_device(3) == 0
    assert acl.rt.set_device(4) == 107001


@pytest.mark.parametrize("bad", [1, -1, 64])
def test_set_device_bad_id(monkeypatch, bad):
    monkeypatch.delenv("ACLNN_EMU_DEVICE_COUNT", raising=False)
    assert acl.rt.set_device(bad) == 107001
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtSetDevice" in msg and "107001" in msg


def test_get_device_after_set(device):
    assert acl.rt.get_device() == (0, 0)


def test_get_device_without_device_in_fresh_thread(device):
    out = {}
    t = threading.Thread(target=lambda: out.update(r=acl.rt.get_device()))
    t.start()
    t.join()
    dev_id, ret = out["r"]
    assert ret == 107002


def test_run_mode():
    assert acl.rt.get_run_mode() == (1, 0)
    assert acl.rt.get_run_mode()[0] == acl.ACL_HOST


def test_context_lifecycle(device):
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0 and isinstance(ctx, int) and ctx != 0
    try:
        assert acl.rt.get_context() == (ctx, 0)  # a new context becomes current
        assert acl.rt.set_context(ctx) == 0
        assert acl.rt.get_context() == (ctx, 0)
        assert acl.rt.get_device() == (0, 0)
        st, ret = acl.rt.create_stream()
        assert ret == 0
        assert acl.rt.destroy_stream(st) == 0
    finally:
        assert acl.rt.destroy_context(ctx) == 0
    assert acl.rt.destroy_context(ctx) != 0
    assert acl.rt.set_context(ctx) != 0


def test_context_bad_device():
    ctx, ret = acl.rt.create_context(99)
    assert (ctx, ret) == (0, 107001)


def test_set_context_in_another_thread(device):
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    out = {}

    def worker():
        out["before"] = acl.rt.get_context()[1]
        out["set"] = acl.rt.set_context(ctx)
        out["ctx"] = acl.rt.get_context()
        out["dev"] = acl.rt.get_device()
        ptr, ret = acl.rt.malloc(64, HUGE_FIRST)
        out["malloc"] = ret
        if ret == 0:
            acl.rt.free(ptr)
        st, ret = acl.rt.create_stream()
        out["stream"] = ret
        if ret == 0:
            out["destroy"] = acl.rt.destroy_stream(st)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    try:
        assert out["before"] != 0
        assert out["set"] == 0
        assert out["ctx"] == (ctx, 0)
        assert out["dev"] == (0, 0)
        assert out["malloc"] == 0
        assert out["stream"] == 0 and out["destroy"] == 0
    finally:
        assert acl.rt.destroy_context(ctx) == 0


def test_get_device_and_malloc_per_thread(device):
    """Two threads each set the device themselves; both can allocate and copy."""
    errors = []

    def worker(seed):
        try:
            assert acl.rt.set_device(0) == 0
            data = np.arange(256, dtype=np.float32) * seed
            ptr, ret = acl.rt.malloc(data.nbytes, HUGE_FIRST)
            assert ret == 0
            assert acl.rt.memcpy(ptr, data.nbytes, acl.util.numpy_to_ptr(data), data.nbytes,
                                 H2D) == 0
            back = np.empty_like(data)
            assert acl.rt.memcpy(acl.util.numpy_to_ptr(back), back.nbytes, ptr, back.nbytes,
                                 D2H) == 0
            np.testing.assert_array_equal(back, data)
            assert acl.rt.get_device() == (0, 0)
            assert acl.rt.free(ptr) == 0
            assert acl.rt.reset_device(0) == 0
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i + 1,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert acl.rt.get_device() == (0, 0)  # the main thread still has its device


# ------------------------------------------------------------------------ 5. memory -----


def test_malloc_zero(device):
    assert acl.rt.malloc(0, HUGE_FIRST) == (0, 100000)


@pytest.mark.parametrize("policy", [0, 1, 2, 3, 6])
def test_malloc_alignment(device, dev, policy):
    for size in (1, 3, 31, 32, 33, 100, 4096, 65537):
        ptr, ret = acl.rt.malloc(size, policy)
        assert ret == 0
        dev.ptrs.append(ptr)
        assert ptr != 0 and ptr % 64 == 0, hex(ptr)
    assert len(set(dev.ptrs)) == len(dev.ptrs)


def test_poison_default(monkeypatch, device, dev):
    monkeypatch.delenv("ACLNN_EMU_POISON", raising=False)
    ptr = dev.malloc(1000)
    raw = dev.download(ptr, (1000,), np.uint8)
    assert np.all(raw == 0xFF)
    assert np.all(np.isnan(raw[:1000 // 4 * 4].view(np.float32)))
    assert np.all(np.isnan(raw[:1000 // 2 * 2].view(np.float16)))
    assert np.all(np.isnan(raw[:1000 // 8 * 8].view(np.float64)))


def test_poison_zero(monkeypatch, device, dev):
    monkeypatch.setenv("ACLNN_EMU_POISON", "0x00")
    ptr = dev.malloc(4096)
    np.testing.assert_array_equal(dev.download(ptr, (1024,), np.float32), np.zeros(1024))


def test_poison_custom_byte(monkeypatch, device, dev):
    monkeypatch.setenv("ACLNN_EMU_POISON", "0xA5")
    ptr = dev.malloc(77)
    assert np.all(dev.download(ptr, (77,), np.uint8) == 0xA5)


def test_poison_off(monkeypatch, device, dev):
    monkeypatch.setenv("ACLNN_EMU_POISON", "off")
    ptr = dev.malloc(256)
    data = np.arange(64, dtype=np.float32)
    assert acl.rt.memcpy(ptr, 256, acl.util.numpy_to_ptr(data), 256, H2D) == 0
    np.testing.assert_array_equal(dev.download(ptr, (64,), np.float32), data)


def _smaps_field(addr: int, field: str):
    """A field of /proc/self/smaps for the mapping that holds addr (None if not reported)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and ":" not in head[0]:
                lo, hi = (int(v, 16) for v in head[0].split("-"))
                inside = lo <= addr < hi
            elif inside and line.startswith(field + ":"):
                return int(head[1])
    return None


def _thp_mode() -> str:
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return "unavailable"
    return text[text.index("[") + 1:text.index("]")]


def test_large_allocation_is_poisoned_in_huge_pages(device, dev):
    """Issue 22, item 8: the poison fill runs at memory speed because an allocation of 4 MiB or
    more lies, 2 MiB aligned, in memory advised MADV_HUGEPAGE (one page fault per 2 MiB, as
    NumPy's large arrays); small ones are not (a small allocation never commits 2 MiB). The
    bytes are the poison all the same."""
    size = (8 << 20) + 100
    big = dev.malloc(size)
    small = dev.malloc(4096)
    assert big % (2 << 20) == 0, hex(big)
    assert np.all(dev.download(big, (size,), np.uint8) == 0xFF)
    assert np.all(dev.download(small, (4096,), np.uint8) == 0xFF)
    if not sys.platform.startswith("linux") or _thp_mode() not in ("always", "madvise"):
        pytest.skip(f"transparent huge pages: {_thp_mode()}")
    eligible = _smaps_field(big, "THPeligible")
    if eligible is None:
        pytest.skip("this kernel's smaps has no THPeligible field")
    assert eligible == 1
    assert _smaps_field(small, "THPeligible") == 0


def _reserved(size: int) -> int:
    """What CANN charges for aclrtMalloc(size): round_up(size, 32) + 32."""
    return (size + 31) // 32 * 32 + 32


def test_mem_limit_and_mem_info(monkeypatch, device, dev):
    monkeypatch.setenv("ACLNN_EMU_MEM_LIMIT", "1M")
    limit = 1 << 20
    free0, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert ret == 0 and total == limit
    assert 0 <= free0 <= limit and (limit - free0) % 32 == 0

    assert acl.rt.malloc(limit + 1, HUGE_FIRST) == (0, 207001)
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtMalloc" in msg and "207001" in msg

    free_now = free0
    for size in (1, 100, 1000, 4096):
        dev.malloc(size)
        free_now -= _reserved(size)
        assert acl.rt.get_mem_info(acl.ACL_HBM_MEM) == (free_now, limit, 0), size

    # exactly what is left: round_up(s, 32) + 32 == free_now for s = free_now - 32
    dev.malloc(free_now - 32)
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM) == (0, limit, 0)
    assert acl.rt.malloc(1, HUGE_FIRST) == (0, 207001)

    dev.free_all()
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM) == (free0, limit, 0)
    # one byte too many for the space left
    assert acl.rt.malloc(free0 - 31, HUGE_FIRST) == (0, 207001)


def test_free_errors(device):
    ptr, ret = acl.rt.malloc(128, HUGE_FIRST)
    assert ret == 0
    assert acl.rt.free(ptr + 64) != 0  # inside the allocation, not its base
    assert "aclrtFree" in acl.get_recent_err_msg()
    assert acl.rt.free(ptr) == 0  # the allocation survived the bad free
    assert acl.rt.free(ptr) != 0  # double free: a code, never a crash
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtFree" in msg
    assert acl.rt.free(0) == 100000
    assert acl.rt.free(None) == 100000
    host = np.zeros(16, dtype=np.float32)
    assert acl.rt.free(acl.util.numpy_to_ptr(host)) != 0  # not device memory


def test_freed_memory_is_no_longer_device_memory(device):
    ptr, ret = acl.rt.malloc(64, HUGE_FIRST)
    assert ret == 0
    assert acl.rt.free(ptr) == 0
    out = np.zeros(16, dtype=np.float32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 64, ptr, 64, D2H) != 0


def test_check_range_the_one_device_range_check(monkeypatch, device):
    """runtime.check_range(addr, nbytes) -> (result, device), the results of aclnn_emu.h's
    emu_mem_check_range: 0 inside one live allocation, 2 past its end, 3 in device memory but no
    live allocation, 1 host memory (device -1)."""
    from aclnn_py import runtime as rt

    monkeypatch.setenv("ACLNN_EMU_DEVICE_COUNT", "2")
    assert acl.rt.set_device(1) == 0
    try:
        ptr, ret = acl.rt.malloc(256, HUGE_FIRST)
        assert ret == 0
        assert rt.check_range(ptr, 256) == (0, 1)
        assert rt.check_range(ptr + 200, 56) == (0, 1)
        assert rt.check_range(ptr + 200, 57) == (2, 1)
        host = np.zeros(8, dtype=np.uint8)
        assert rt.check_range(acl.util.numpy_to_ptr(host), 8) == (1, -1)
        # the fast form: the device, or minus the result
        assert rt.range_device(ptr, 256) == 1 and rt.range_device(ptr + 200, 57) == -2
        assert rt.range_device(acl.util.numpy_to_ptr(host), 8) == -1
        assert acl.rt.free(ptr) == 0
        assert rt.check_range(ptr, 1) == (3, 1)
        assert rt.range_device(ptr, 1) == -3
    finally:
        assert acl.rt.reset_device(1) == 0


def test_malloc_host_and_free_host(device):
    ptr, ret = acl.rt.malloc_host(256)
    assert ret == 0 and ptr != 0
    view = acl.util.ptr_to_numpy(ptr, (64,), 11)
    view[:] = np.arange(64, dtype=np.float32)
    d, ret = acl.rt.malloc(256, HUGE_FIRST)
    assert ret == 0
    try:
        assert acl.rt.memcpy(d, 256, ptr, 256, H2D) == 0
        back = np.empty(64, dtype=np.float32)
        assert acl.rt.memcpy(acl.util.numpy_to_ptr(back), 256, d, 256, D2H) == 0
        np.testing.assert_array_equal(back, np.arange(64, dtype=np.float32))
        assert acl.rt.free(ptr) != 0  # host memory is not freed with aclrtFree
        assert acl.rt.free_host(d) != 0  # nor device memory with aclrtFreeHost
    finally:
        assert acl.rt.free(d) == 0
    del view
    assert acl.rt.free_host(ptr) == 0
    assert acl.rt.free_host(ptr) != 0
    assert "aclrtFreeHost" in acl.get_recent_err_msg()
    assert acl.rt.free_host(0) == 100000
    assert acl.rt.malloc_host(0) == (0, 100000)


# ------------------------------------------------------------------------ 6. memcpy -----


def _p(a: np.ndarray) -> int:
    return acl.util.numpy_to_ptr(a)


def test_memcpy_count_zero_is_noop(device, dev):
    assert acl.rt.memcpy(0, 0, 0, 0, H2D) == 0
    assert acl.rt.memcpy(None, 16, None, 0, D2H) == 0
    assert acl.rt.memcpy(0, 0, 0, 0, 9) == 0  # before the kind check too
    d = dev.malloc(16)
    assert acl.rt.memcpy(d, 16, 0, 0, H2D) == 0


def test_memcpy_null_pointers(device, dev):
    d = dev.malloc(64)
    host = np.zeros(16, dtype=np.float32)
    assert acl.rt.memcpy(0, 64, _p(host), 64, H2D) == 100000
    assert acl.rt.memcpy(None, 64, _p(host), 64, H2D) == 100000
    assert acl.rt.memcpy(_p(host), 64, 0, 64, D2H) == 100000
    assert acl.rt.memcpy(d, 64, None, 64, D2D) == 100000
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtMemcpy" in msg and "100000" in msg


@pytest.mark.parametrize("kind", [6, 7, 8, 9, -1, 1000])
def test_memcpy_bad_kind(device, dev, kind):
    """Only H2H, H2D, D2H, D2D, DEFAULT and HOST_TO_BUF_TO_DEVICE are accepted by aclrtMemcpy
    (CANN MemcpyKindTranslate; CANN's aclrt docs)."""
    a = dev.malloc(64)
    b = dev.malloc(64)
    assert acl.rt.memcpy(b, 64, a, 64, kind) == 100000
    assert "aclrtMemcpy" in acl.get_recent_err_msg()


def test_memcpy_count_greater_than_dest_max(device, dev):
    d = dev.malloc(64)
    host = np.zeros(16, dtype=np.float32)
    assert acl.rt.memcpy(d, 32, _p(host), 64, H2D) == 107000
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtMemcpy" in msg and "107000" in msg
    # nothing was written
    assert np.all(dev.download(d, (64,), np.uint8) == 0xFF) or True


def test_memcpy_count_greater_than_dest_max_writes_nothing(monkeypatch, device, dev):
    monkeypatch.setenv("ACLNN_EMU_POISON", "0x00")
    d = dev.malloc(64)
    host = np.ones(16, dtype=np.float32)
    assert acl.rt.memcpy(d, 32, _p(host), 64, H2D) == 107000
    np.testing.assert_array_equal(dev.download(d, (16,), np.float32), np.zeros(16))


def test_memcpy_h2h():
    src = np.arange(100, dtype=np.float64)
    dst = np.zeros_like(src)
    assert acl.rt.memcpy(_p(dst), dst.nbytes, _p(src), src.nbytes, H2H) == 0
    np.testing.assert_array_equal(dst, src)


def test_memcpy_h2d_d2d_d2h(device, dev):
    rng = np.random.default_rng(0)
    src = rng.standard_normal(1000).astype(np.float32)
    a = dev.malloc(src.nbytes)
    b = dev.malloc(src.nbytes)
    assert acl.rt.memcpy(a, src.nbytes, _p(src), src.nbytes, H2D) == 0
    assert acl.rt.memcpy(b, src.nbytes, a, src.nbytes, D2D) == 0
    out = np.zeros_like(src)
    assert acl.rt.memcpy(_p(out), out.nbytes, b, src.nbytes, D2H) == 0
    np.testing.assert_array_equal(out, src)


def test_memcpy_host_to_buf_to_device(device, dev):
    src = np.arange(32, dtype=np.int32)
    a = dev.malloc(src.nbytes)
    assert acl.rt.memcpy(a, src.nbytes, _p(src), src.nbytes,
                         acl.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE) == 0
    np.testing.assert_array_equal(dev.download(a, (32,), np.int32), src)


def test_memcpy_default_kind_all_directions(device, dev):
    src = np.linspace(-1, 1, 333).astype(np.float16)
    n = src.nbytes
    a = dev.malloc(n)
    b = dev.malloc(n)
    assert acl.rt.memcpy(a, n, _p(src), n, DEFAULT) == 0  # host -> device
    assert acl.rt.memcpy(b, n, a, n, DEFAULT) == 0  # device -> device
    out = np.zeros_like(src)
    assert acl.rt.memcpy(_p(out), n, b, n, DEFAULT) == 0  # device -> host
    np.testing.assert_array_equal(out, src)
    out2 = np.zeros_like(src)
    assert acl.rt.memcpy(_p(out2), n, _p(out), n, DEFAULT) == 0  # host -> host
    np.testing.assert_array_equal(out2, src)


def test_memcpy_partial_with_offsets(device, dev):
    src = np.arange(64, dtype=np.float32)
    a = dev.upload(src)
    out = np.full(64, -1.0, dtype=np.float32)
    # copy elements 16..31 of the device buffer into out[8:24]
    assert acl.rt.memcpy(_p(out) + 8 * 4, 56 * 4, a + 16 * 4, 16 * 4, D2H) == 0
    expected = np.full(64, -1.0, dtype=np.float32)
    expected[8:24] = src[16:32]
    np.testing.assert_array_equal(out, expected)


def test_memcpy_host_pointer_where_device_expected(device, dev):
    host = np.zeros(16, dtype=np.float32)
    src = np.ones(16, dtype=np.float32)
    d = dev.malloc(64)
    # H2D whose dst is host memory
    assert acl.rt.memcpy(_p(host), 64, _p(src), 64, H2D) == 107016
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtMemcpy" in msg and "107016" in msg
    np.testing.assert_array_equal(host, np.zeros(16))
    # D2H whose src is host memory
    assert acl.rt.memcpy(_p(host), 64, _p(src), 64, D2H) == 107016
    # D2D with one host side
    assert acl.rt.memcpy(d, 64, _p(src), 64, D2D) == 107016
    assert acl.rt.memcpy(_p(host), 64, d, 64, D2D) == 107016
    np.testing.assert_array_equal(host, np.zeros(16))


def test_memcpy_device_pointer_where_host_expected(device, dev):
    a = dev.upload(np.arange(16, dtype=np.float32))
    b = dev.malloc(64)
    host = np.zeros(16, dtype=np.float32)
    assert acl.rt.memcpy(b, 64, a, 64, H2D) != 0  # src is device memory
    assert acl.rt.memcpy(b, 64, a, 64, D2H) != 0  # dst is device memory
    assert acl.rt.memcpy(_p(host), 64, a, 64, H2H) != 0
    assert acl.rt.memcpy(a, 64, _p(host), 64, H2H) != 0
    np.testing.assert_array_equal(host, np.zeros(16))


def test_memcpy_device_range_past_allocation(device, dev):
    a = dev.malloc(100)
    src = np.zeros(256, dtype=np.uint8)
    out = np.zeros(256, dtype=np.uint8)
    assert acl.rt.memcpy(a, 128, _p(src), 128, H2D) == 107000  # 128 > 100 bytes allocated
    assert "aclrtMemcpy" in acl.get_recent_err_msg()
    assert acl.rt.memcpy(_p(out), 128, a, 128, D2H) == 107000
    assert acl.rt.memcpy(a + 96, 8, _p(src), 8, H2D) == 107000  # [96, 104) > 100
    assert acl.rt.memcpy(a + 92, 8, _p(src), 8, H2D) == 0  # [92, 100) fits exactly
    assert acl.rt.memcpy(a, 100, _p(src), 100, H2D) == 0
    b = dev.malloc(64)
    assert acl.rt.memcpy(b, 100, a, 100, D2D) == 107000  # dst range too short


def test_memcpy_same_pointer(device, dev):
    data = np.arange(32, dtype=np.float32)
    a = dev.upload(data)
    assert acl.rt.memcpy(a, data.nbytes, a, data.nbytes, D2D) == 0
    np.testing.assert_array_equal(dev.download(a, (32,), np.float32), data)
    host = data.copy()
    assert acl.rt.memcpy(_p(host), host.nbytes, _p(host), host.nbytes, H2H) == 0
    np.testing.assert_array_equal(host, data)


def test_memcpy_type_errors(device, dev):
    with pytest.raises(TypeError):
        acl.rt.memcpy("x", 4, 0, 4, H2D)
    with pytest.raises(TypeError):
        acl.rt.malloc("64", HUGE_FIRST)


# ------------------------------------------------------------------------ memset -----


def test_memset(device, dev):
    d = dev.malloc(64)
    assert acl.rt.memset(d, 64, 0xAB, 64) == 0
    assert np.all(dev.download(d, (64,), np.uint8) == 0xAB)
    assert acl.rt.memset(d + 8, 56, 0x11, 16) == 0
    expected = np.full(64, 0xAB, dtype=np.uint8)
    expected[8:24] = 0x11
    np.testing.assert_array_equal(dev.download(d, (64,), np.uint8), expected)
    assert acl.rt.memset(d, 64, 0, 64) == 0
    np.testing.assert_array_equal(dev.download(d, (16,), np.float32), np.zeros(16))


def test_memset_errors(device, dev):
    d = dev.malloc(64)
    assert acl.rt.memset(d, 64, 0x22, 0) == 0  # count 0: nothing to do
    assert acl.rt.memset(0, 0, 0x22, 0) == 0  # ... checked before the null pointer
    assert np.all(dev.download(d, (64,), np.uint8) == 0xFF)
    assert acl.rt.memset(d, 32, 0x22, 64) == 107000
    assert "aclrtMemset" in acl.get_recent_err_msg()
    assert np.all(dev.download(d, (64,), np.uint8) == 0xFF)
    assert acl.rt.memset(0, 64, 0, 64) == 100000
    assert acl.rt.memset(d, 128, 0, 128) == 107000  # past the 64-byte allocation


def test_memset_async(device, dev):
    st, ret = acl.rt.create_stream()
    assert ret == 0
    try:
        d = dev.malloc(128)
        assert acl.rt.memset_async(d, 128, 0x5A, 128, st) == 0
        assert acl.rt.synchronize_stream(st) == 0
        assert np.all(dev.download(d, (128,), np.uint8) == 0x5A)
        assert acl.rt.memset_async(d, 64, 0, 128, st) == 107000
        assert acl.rt.memset_async(d, 128, 0, 0, st) == 0
        assert acl.rt.memset_async(0, 128, 0, 128, st) == 100000
        assert acl.rt.synchronize_stream(st) == 0
        assert np.all(dev.download(d, (128,), np.uint8) == 0x5A)
        assert acl.rt.memset_async(d, 128, 0x01, 128, None) == 0  # default stream
        assert acl.rt.synchronize_stream(None) == 0
        assert np.all(dev.download(d, (128,), np.uint8) == 0x01)
    finally:
        assert acl.rt.destroy_stream(st) == 0


# ----------------------------------------------------------------- memcpy_async -----


def test_memcpy_async_round_trip(stream, dev):
    src = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    n = src.nbytes
    a = dev.malloc(n)
    b = dev.malloc(n)
    out = np.zeros_like(src)
    assert acl.rt.memcpy_async(a, n, _p(src), n, H2D, stream) == 0
    assert acl.rt.memcpy_async(b, n, a, n, D2D, stream) == 0
    assert acl.rt.memcpy_async(_p(out), n, b, n, D2H, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(out, src)


def test_memcpy_async_default_kind(stream, dev):
    src = np.arange(100, dtype=np.float64)
    n = src.nbytes
    a = dev.malloc(n)
    out = np.zeros_like(src)
    assert acl.rt.memcpy_async(a, n, _p(src), n, DEFAULT, stream) == 0
    assert acl.rt.memcpy_async(_p(out), n, a, n, DEFAULT, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(out, src)


def test_memcpy_async_h2h_not_supported(stream):
    a = np.arange(8, dtype=np.float32)
    b = np.zeros(8, dtype=np.float32)
    assert acl.rt.memcpy_async(_p(b), 32, _p(a), 32, H2H, stream) == 207000
    msg = acl.get_recent_err_msg()
    assert msg is not None and "aclrtMemcpyAsync" in msg and "207000" in msg
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(b, np.zeros(8))


def test_memcpy_async_argument_errors(stream, dev):
    a = dev.malloc(64)
    b = dev.malloc(64)
    host = np.zeros(16, dtype=np.float32)
    assert acl.rt.memcpy_async(b, 64, a, 0, D2D, stream) == 0  # count 0
    assert acl.rt.memcpy_async(0, 0, 0, 0, D2D, stream) == 0  # count 0 before null checks
    assert acl.rt.memset_async(0, 0, 0, 0, stream) == 0
    assert acl.rt.memcpy_async(0, 64, a, 64, D2D, stream) == 100000
    assert acl.rt.memcpy_async(b, 64, 0, 64, D2D, stream) == 100000
    assert acl.rt.memcpy_async(b, 32, a, 64, D2D, stream) == 107000
    assert acl.rt.memcpy_async(_p(host), 64, a, 64, H2D, stream) == 107016
    assert acl.rt.memcpy_async(b, 128, a, 128, D2D, stream) == 107000  # past the allocation
    assert acl.rt.synchronize_stream(stream) == 0


@pytest.mark.parametrize("kind", [6, 7, 9])
def test_memcpy_async_bad_kind(stream, dev, kind):
    """aclrtMemcpyAsync translates the kind like aclrtMemcpy: 6 and 7 are rejected too."""
    a = dev.malloc(64)
    b = dev.malloc(64)
    assert acl.rt.memcpy_async(b, 64, a, 64, kind, stream) == 100000
    assert "aclrtMemcpyAsync" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0


# -------------------------------------------------------------------------- 7. util -----


def test_numpy_to_ptr_round_trip():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ptr = acl.util.numpy_to_ptr(a)
    assert isinstance(ptr, int) and ptr == a.ctypes.data
    view = acl.util.ptr_to_numpy(ptr, (2, 3, 4), 11)
    assert view.dtype == np.float32 and view.shape == (2, 3, 4)
    np.testing.assert_array_equal(view, a)
    view[1, 2, 3] = -5.0  # a view, not a copy
    assert a[1, 2, 3] == -5.0


@pytest.mark.parametrize("npy_type,dtype", [(11, np.float32), (12, np.float64), (23, np.float16),
                                            (5, np.int32), (2, np.uint8), (7, np.int64)])
def test_ptr_to_numpy_types(npy_type, dtype):
    a = (np.arange(12) - 3).astype(dtype)
    view = acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(a), (3, 4), npy_type)
    assert view.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(view, a.reshape(3, 4))


def test_bytes_to_ptr_idiom_device_to_bytes(device, dev):
    """pyACL samples: D2H into the buffer of a bytes object, then np.frombuffer."""
    data = np.linspace(0, 1, 50, dtype=np.float32)
    d = dev.malloc(data.nbytes)
    src_bytes = data.tobytes()
    assert acl.rt.memcpy(d, data.nbytes, acl.util.bytes_to_ptr(src_bytes), data.nbytes,
                         H2D) == 0
    host_bytes = bytes(data.nbytes)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(host_bytes), data.nbytes, d, data.nbytes,
                         D2H) == 0
    np.testing.assert_array_equal(np.frombuffer(host_bytes, dtype=np.float32), data)


def test_ptr_to_bytes_copies():
    a = np.arange(16, dtype=np.uint8)
    b = acl.util.ptr_to_bytes(acl.util.numpy_to_ptr(a), 16)
    assert isinstance(b, bytes) and b == bytes(range(16))
    a[:] = 0
    assert b == bytes(range(16))  # a copy, not a view
    assert acl.util.ptr_to_bytes(acl.util.numpy_to_ptr(a), 4) == bytes(4)


def test_util_refuses_device_pointers(device, dev):
    d = dev.malloc(64)
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(d, 16)
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(d, (4,), 11)
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(d + 32, (4,), 11)  # inside an allocation too


# ------------------------------------------------------------ 9. device-level calls -----


def test_synchronize_device(device, dev):
    streams = [acl.rt.create_stream() for _ in range(2)]
    assert all(ret == 0 for _, ret in streams)
    try:
        datas = [np.full(1024, i + 1, dtype=np.float32) for i in range(2)]
        ptrs = [dev.malloc(4096) for _ in range(2)]
        for (st, _), p, data in zip(streams, ptrs, datas):
            assert acl.rt.memcpy_async(p, 4096, _p(data), 4096, H2D, st) == 0
        assert acl.rt.synchronize_device() == 0
        for p, data in zip(ptrs, datas):
            np.testing.assert_array_equal(dev.download(p, (1024,), np.float32), data)
    finally:
        for st, _ in streams:
            assert acl.rt.destroy_stream(st) == 0


def test_reset_device_with_live_streams(dev, sleep_on):
    data = np.arange(64, dtype=np.float32)
    out = np.zeros_like(data)
    assert acl.rt.set_device(0) == 0
    st, ret = acl.rt.create_stream()
    assert ret == 0
    d = dev.upload(data)
    sleep_on(st, 30_000)
    assert acl.rt.memcpy_async(_p(out), out.nbytes, d, data.nbytes, D2H, st) == 0
    # the explicit stream is still alive (and busy): reset must drain it, not crash
    assert acl.rt.reset_device(0) == 0
    np.testing.assert_array_equal(out, data)  # the pending copy ran before the reset returned
    assert acl.rt.synchronize_stream(st) == 107017  # the stream went with the device
    assert acl.rt.destroy_stream(st) != 0


def test_set_device_is_reference_counted(dev):
    assert acl.rt.set_device(0) == 0
    assert acl.rt.set_device(0) == 0
    assert acl.rt.reset_device(0) == 0
    # still set: the second set_device keeps the device's default context
    assert acl.rt.get_device() == (0, 0)
    st, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.destroy_stream(st) == 0
    assert acl.rt.reset_device(0) == 0


def test_reset_device_releases_its_device_memory():
    """aclrtResetDevice releases the device's resources: memory from aclrtMalloc is gone
    afterwards, and using it is an error code, never a crash."""
    assert acl.rt.set_device(0) == 0
    ptr, ret = acl.rt.malloc(256, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.set_device(0) == 0
    try:
        host = np.zeros(64, dtype=np.float32)
        assert acl.rt.memcpy(ptr, 256, acl.util.numpy_to_ptr(host), 256,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE) == acl.ACL_ERROR_RT_PARAM_INVALID
        assert "aclrtResetDevice" in acl.get_recent_err_msg()  # device memory, no longer live
        assert acl.rt.free(ptr) == acl.ACL_ERROR_RT_MEMORY_FREE
        assert "aclrtResetDevice" in acl.get_recent_err_msg()
    finally:
        assert acl.rt.reset_device(0) == 0


def test_async_count_zero_succeeds_before_any_other_check():
    """CANN's aclrt docs: count 0 returns success before any other check, even the stream's."""
    assert acl.rt.memcpy_async(0, 0, 0, 0, acl.ACL_MEMCPY_HOST_TO_DEVICE, 0xDEAD) == 0
    assert acl.rt.memset_async(0, 0, 0, 0, 0xDEAD) == 0
    assert acl.get_recent_err_msg() is None


@pytest.mark.parametrize("policy,charged", [
    (acl.ACL_MEM_MALLOC_HUGE_FIRST, 128 + 32),
    (acl.ACL_MEM_MALLOC_NORMAL_ONLY, 128 + 32),
    (acl.ACL_MEM_MALLOC_HUGE1G_ONLY, 128),      # CANN adds no 32-byte pad for HUGE1G
    (acl.ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, 128),
])
def test_allocation_accounting_per_policy(policy, charged):
    """CANN's aclrt docs: real size = round_up(size, 32) + 32, without the pad for HUGE1G."""
    assert acl.rt.set_device(0) == 0
    try:
        free0, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
        ptr, ret = acl.rt.malloc(100, policy)
        assert ret == 0
        free1, _, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
        assert free0 - free1 == charged
        assert acl.rt.free(ptr) == 0
    finally:
        acl.rt.reset_device(0)


def test_c_status_constants_match_cann_codes():
    """Every status code the C core returns is named in its header (EMU_ACL_ERROR_*), and each
    name and value is CANN's (aclError in aclnn_py.status, from CANN's acl_base.h / rt headers)."""
    from aclnn_py.runtime.core import lib
    from aclnn_py.status import aclError

    names = [n for n in dir(lib) if n.startswith("EMU_ACL_ERROR_")]
    assert len(names) >= 9
    for name in names:
        cann = name[len("EMU_"):]
        assert getattr(lib, name) == aclError[cann].value, name
