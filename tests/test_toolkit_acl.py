"""Every host function of CANN's acl_base.h, acl_rt.h, acl_op.h, acl_op_compiler.h and
acl_mdl.h in the toolkit (docs/c_api.md): declared by its headers, exported by libascendcl.so
(and so by the libacl_op_compiler.so alias CANN's samples link), and, where the emulator
implements it, with CANN's semantics; the others answer ACL_ERROR_API_NOT_SUPPORT with a
message.

The list of functions is written here from CANN's public headers (the acl/*.h shipped with
Ascend's PyTorch adapter, third_party/acl/inc/acl), independently of the toolkit's headers; the
expected values come from NumPy (element sizes, counts) and CANN's documented codes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from aclnn_py.toolkit import ensure_toolkit

HERE = Path(__file__).resolve().parent / "toolkit"
CC = shutil.which("gcc") or shutil.which("cc")
CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the toolkit is Linux-only"),
    pytest.mark.skipif(CC is None or CXX is None, reason="no C/C++ compiler (gcc/g++) on PATH"),
    pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                       reason="this Python has no shared libpython, which the toolkit embeds"),
]

# CANN's documented codes (acl_base.h, rt_error_codes.h)
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_API_NOT_SUPPORT = 200001
ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047

# The functions CANN's public headers declare, by header (written from the headers, not read
# from the toolkit's).
CANN_FUNCTIONS = {
    "acl_base.h": """
    aclFloat16ToFloat aclFloatToFloat16 aclCreateDataBuffer aclDestroyDataBuffer
    aclUpdateDataBuffer aclGetDataBufferAddr aclGetDataBufferSize aclGetDataBufferSizeV2
    aclDataTypeSize aclCreateTensorDesc aclDestroyTensorDesc aclSetTensorShapeRange
    aclSetTensorValueRange aclGetTensorDescType aclGetTensorDescFormat aclGetTensorDescSize
    aclGetTensorDescElementCount aclGetTensorDescNumDims aclGetTensorDescDim
    aclGetTensorDescDimV2 aclGetTensorDescDimRange aclSetTensorDescName aclGetTensorDescName
    aclTransTensorDescFormat aclSetTensorStorageFormat aclSetTensorStorageShape
    aclSetTensorFormat aclSetTensorShape aclSetTensorOriginFormat aclSetTensorOriginShape
    aclGetTensorDescByIndex aclGetTensorDescAddress aclSetTensorDynamicInput
    aclSetTensorConst aclSetTensorPlaceMent aclAppLog aclrtGetSocName
    aclGetCannAttributeList aclGetCannAttribute aclGetDeviceCapability
    """,
    "acl_rt.h": """
    aclrtPeekAtLastError aclrtGetLastError aclrtSetExceptionInfoCallback
    aclrtGetTaskIdFromExceptionInfo aclrtGetStreamIdFromExceptionInfo
    aclrtGetThreadIdFromExceptionInfo aclrtGetDeviceIdFromExceptionInfo
    aclrtGetErrorCodeFromExceptionInfo aclrtSubscribeReport aclrtLaunchCallback
    aclrtProcessReport aclrtUnSubscribeReport aclrtCreateContext aclrtDestroyContext
    aclrtSetCurrentContext aclrtGetCurrentContext aclrtCtxGetSysParamOpt
    aclrtCtxSetSysParamOpt aclrtGetSysParamOpt aclrtSetSysParamOpt aclrtSetDevice
    aclrtResetDevice aclrtGetDevice aclrtSetStreamFailureMode aclrtGetRunMode
    aclrtSynchronizeDevice aclrtSynchronizeDeviceWithTimeout aclrtSetTsDevice
    aclrtGetDeviceCount aclrtQueryDeviceStatus aclrtDeviceGetBareTgid aclrtCreateEvent
    aclrtCreateEventWithFlag aclrtCreateEventExWithFlag aclrtDestroyEvent aclrtRecordEvent
    aclrtResetEvent aclrtQueryEvent aclrtQueryEventStatus aclrtQueryEventWaitStatus
    aclrtIpcGetEventHandle aclrtIpcOpenEventHandle aclrtSynchronizeEvent
    aclrtSynchronizeEventWithTimeout aclrtEventElapsedTime aclrtMalloc aclrtMallocAlign32
    aclrtMallocCached aclrtPointerGetAttributes aclrtHostRegisterV2 aclrtMemFlush
    aclrtMemInvalidate aclrtFree aclrtMallocHost aclrtMallocHostWithCfg aclrtFreeHost
    aclrtMemcpy aclrtMemset aclrtMemcpyAsync aclrtMemcpyBatch aclrtMemcpyBatchAsync
    aclrtMemcpyAsyncWithCondition aclrtMemcpy2d aclrtMemcpy2dAsync aclrtMemsetAsync
    aclrtReserveMemAddress aclrtReleaseMemAddress aclrtMallocPhysical aclrtFreePhysical
    aclrtMapMem aclrtUnmapMem aclrtMemExportToShareableHandle
    aclrtMemImportFromShareableHandle aclrtMemSetPidToShareableHandle aclrtCreateStream
    aclrtCreateStreamWithConfig aclrtDestroyStream aclrtDestroyStreamForce
    aclrtSynchronizeStream aclrtSynchronizeStreamWithTimeout aclrtStreamQuery
    aclrtStreamWaitEvent aclrtSetGroup aclrtGetGroupCount aclrtCreateGroupInfo
    aclrtDestroyGroupInfo aclrtGetAllGroupInfo aclrtGetGroupInfoDetail
    aclrtDeviceCanAccessPeer aclrtDeviceEnablePeerAccess aclrtDeviceDisablePeerAccess
    aclrtGetMemInfo aclrtGetDeviceInfo aclrtSetOpWaitTimeout aclrtSetOpExecuteTimeOut
    aclrtSetStreamOverflowSwitch aclrtGetStreamOverflowSwitch aclrtGetDeviceUtilizationRate
    aclrtSetDeviceSatMode aclrtGetOverflowStatus aclrtResetOverflowStatus aclrtCmoAsync
    aclrtGetMemUceInfo aclrtGetMemUsageInfo aclrtDeviceTaskAbort aclrtMemUceRepair
    aclrtStreamAbort aclrtGetDeviceResLimit aclrtSetDeviceResLimit aclrtResetDeviceResLimit
    aclrtGetStreamResLimit aclrtSetStreamResLimit aclrtResetStreamResLimit
    aclrtUseStreamResInCurrentThread aclrtUnuseStreamResInCurrentThread
    aclrtGetResInCurrentThread aclrtSetOpExecuteTimeOutV2 aclrtValueWrite aclrtValueWait
    aclrtSetStreamAttribute aclrtDeviceGetUuid aclrtLaunchHostFunc aclrtGetErrorVerbose
    aclrtRepairError aclInit aclFinalize aclrtGetVersion aclFinalizeReference
    aclGetRecentErrMsg aclsysGetCANNVersion
    """,
    "acl_op.h": """
    aclopSetModelDir aclopLoad aclopCreateAttr aclopDestroyAttr aclopSetAttrBool
    aclopSetAttrInt aclopSetAttrFloat aclopSetAttrString aclopSetAttrDataType
    aclopSetAttrListDataType aclopSetAttrListBool aclopSetAttrListInt aclopSetAttrListFloat
    aclopSetAttrListString aclopSetAttrListListInt aclopExecute aclopExecuteV2
    aclopCreateHandle aclopDestroyHandle aclopExecWithHandle aclopCast
    aclopCreateHandleForCast aclopCreateKernel aclopRegisterCompileFunc
    aclopUnregisterCompileFunc aclopSetKernelArgs aclopSetKernelWorkspaceSizes
    aclopUpdateParams aclopSetMaxOpQueueNum aclopInferShape aclopStartDumpArgs
    aclopStopDumpArgs
    """,
    "acl_op_compiler.h": """
    aclopCompile aclopCompileAndExecute aclopCompileAndExecuteV2 aclSetCompileopt
    aclGetCompileoptSize aclGetCompileopt aclopSetCompileFlag aclGenGraphAndDumpForOp
    aclCreateGraphDumpOpt aclDestroyGraphDumpOpt
    """,
    "acl_mdl.h": """
    aclmdlCreateDesc aclmdlDestroyDesc aclmdlGetDesc aclmdlGetDescFromFile
    aclmdlGetDescFromMem aclmdlGetNumInputs aclmdlGetNumOutputs aclmdlGetInputSizeByIndex
    aclmdlGetOutputSizeByIndex aclmdlCreateExecConfigHandle aclmdlDestroyExecConfigHandle
    aclmdlCreateDataset aclmdlDestroyDataset aclmdlAddDatasetBuffer
    aclmdlSetDatasetTensorDesc aclmdlGetDatasetTensorDesc aclmdlGetDatasetNumBuffers
    aclmdlGetDatasetBuffer aclmdlLoadFromFile aclmdlBundleLoadFromFile
    aclmdlBundleLoadFromMem aclmdlBundleUnload aclmdlBundleGetModelNum
    aclmdlBundleGetModelId aclmdlLoadFromMem aclmdlLoadFromFileWithMem
    aclmdlLoadFromMemWithMem aclmdlLoadFromFileWithQ aclmdlLoadFromMemWithQ aclmdlExecute
    aclmdlExecuteV2 aclmdlRIExecuteAsync aclmdlUnload aclmdlRIDestroy aclmdlExecuteAsyncV2
    aclmdlExecuteAsync aclmdlQuerySize aclmdlQueryExeOMDesc aclmdlQuerySizeFromMem
    aclmdlSetDynamicBatchSize aclmdlSetDynamicHWSize aclmdlSetInputDynamicDims
    aclmdlGetInputDims aclmdlGetInputDimsV2 aclmdlGetInputDimsRange aclmdlGetOutputDims
    aclmdlGetCurOutputDims aclmdlGetOpAttr aclmdlGetInputNameByIndex
    aclmdlGetOutputNameByIndex aclmdlGetInputFormat aclmdlGetOutputFormat
    aclmdlGetInputDataType aclmdlGetOutputDataType aclmdlGetInputIndexByName
    aclmdlGetOutputIndexByName aclmdlGetDynamicBatch aclmdlGetDynamicHW
    aclmdlGetInputDynamicGearCount aclmdlGetInputDynamicDims aclmdlCreateAIPP
    aclmdlDestroyAIPP aclmdlGetAippDataSize aclmdlSetAIPPInputFormat aclmdlSetAIPPCscParams
    aclmdlSetAIPPRbuvSwapSwitch aclmdlSetAIPPAxSwapSwitch aclmdlSetAIPPSrcImageSize
    aclmdlSetAIPPScfParams aclmdlSetAIPPCropParams aclmdlSetAIPPPaddingParams
    aclmdlSetAIPPDtcPixelMean aclmdlSetAIPPDtcPixelMin aclmdlSetAIPPPixelVarReci
    aclmdlSetInputAIPP aclmdlSetAIPPByInputIndex aclmdlGetAippType aclmdlGetFirstAippInfo
    aclmdlCreateAndGetOpDesc aclmdlInitDump aclmdlSetDump aclmdlFinalizeDump
    aclmdlLoadWithConfig aclmdlCreateConfigHandle aclmdlDestroyConfigHandle
    aclmdlSetConfigOpt aclmdlSetExecConfigOpt aclmdlGetTensorRealName aclRecoverAllHcclTasks
    aclmdlRICaptureBegin aclmdlRICaptureGetInfo aclmdlRICaptureEnd aclmdlRIDebugPrint
    aclmdlRICaptureTaskGrpBegin aclmdlRICaptureTaskGrpEnd aclmdlRICaptureTaskUpdateBegin
    aclmdlRICaptureTaskUpdateEnd aclmdlRIDebugJsonPrint aclmdlRICaptureThreadExchangeMode
    """,
}


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory) -> Path:
    return ensure_toolkit(root=tmp_path_factory.mktemp("xdg") / "aclnn-py")


def bare_env(toolkit: Path, tmp: Path) -> dict:
    """No python on PATH, no venv: what a shell that sourced set_env.sh gives a C program."""
    empty = tmp / "empty-bin"
    empty.mkdir(exist_ok=True)
    return {"PATH": str(empty), "HOME": str(tmp), "LANG": "C",
            "LD_LIBRARY_PATH": str(toolkit / "lib64"), "ASCEND_HOME_PATH": str(toolkit)}


def declared(toolkit: Path) -> dict[str, list[str]]:
    """The functions each of the toolkit's five ACL headers declaress (comments removed; a
    declaration is ACL_FUNC_VISIBILITY ... name(...);)."""
    out = {}
    for header in CANN_FUNCTIONS:
        text = (toolkit / "include" / "acl" / header).read_text()
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        out[header] = re.findall(r"ACL_FUNC_VISIBILITY[^;]*?\b(\w+)\s*\([^;]*\)\s*;", text)
    return out


def test_the_headers_declare_every_cann_function(toolkit):
    have = declared(toolkit)
    everything = {n for names in have.values() for n in names}
    for header, names in CANN_FUNCTIONS.items():
        expected = names.split()
        assert len(set(expected)) == len(expected), header
        missing = sorted(set(expected) - everything)
        assert missing == [], f"{header}: not declared by the toolkit: {missing}"
        misplaced = sorted(set(expected) - set(have[header]))
        assert misplaced == [], f"declared, but not in {header}: {misplaced}"
    # acl.h gives the runtime, the single-operator and the model API, as CANN's acl.h does
    acl_h = (toolkit / "include" / "acl" / "acl.h").read_text()
    for header in ("acl_rt.h", "acl_op.h", "acl_mdl.h"):
        assert f'#include "{header}"' in acl_h, header


ADDRESS_PROGRAM = """
#include <stdio.h>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"

typedef void (*any_fn)(void);
static const any_fn functions[] = {
%s
};

int main(void)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        n += functions[i] != NULL;
    printf("%%zu\\n", n);
    return 0;
}
"""


@pytest.mark.parametrize("cpp", [False, True], ids=["c", "c++"])
def test_every_declared_function_links(toolkit, tmp_path, cpp):
    """A C and a C++ program taking the address of every declared function link against
    libacl_op_compiler.so alone (an alias of libascendcl.so) and run."""
    names = sorted({n for names in declared(toolkit).values() for n in names})
    assert len(names) > 200
    table = ",\n".join(f"    (any_fn)&{n}" for n in names)
    source = tmp_path / ("addresses.cpp" if cpp else "addresses.c")
    source.write_text(ADDRESS_PROGRAM % table)
    exe = tmp_path / "addresses"
    inc = toolkit / "include"
    std = "-std=c++11" if cpp else "-std=c99"
    proc = subprocess.run([CXX if cpp else CC, std, "-Wall", "-Werror",
                           "-Wno-deprecated-declarations", str(source), f"-I{inc}",
                           f"-L{toolkit / 'lib64'}", "-lacl_op_compiler", "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(exe)], env=bare_env(toolkit, tmp_path), cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(len(names))]


# ---------------------------------------------------------------- the implemented semantics --

# aclDataType values and their NumPy twins (acl_base.h's enum; bf16 has no NumPy type: 2 bytes)
NUMPY_TYPES = {0: np.float32, 1: np.float16, 2: np.int8, 3: np.int32, 4: np.uint8, 6: np.int16,
               7: np.uint16, 8: np.uint32, 9: np.int64, 10: np.uint64, 11: np.float64,
               12: np.bool_, 16: np.complex64, 17: np.complex128}


def _itemsize(acl_type: int) -> int:
    return 2 if acl_type == 27 else np.dtype(NUMPY_TYPES[acl_type]).itemsize


@pytest.fixture(scope="module")
def base_check(toolkit, tmp_path_factory) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("acl_base_check")
    exe = tmp / "acl_base_check"
    inc = toolkit / "include"
    proc = subprocess.run([CC, "-std=c99", "-Wall", "-Wno-deprecated-declarations",
                           str(HERE / "acl_base_check.c"), f"-I{inc}",
                           f"-L{toolkit / 'lib64'}", "-lascendcl", "-lacl_op_compiler",
                           "-o", str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(exe)], env=bare_env(toolkit, tmp), cwd=tmp, capture_output=True,
                         text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    lines: dict[str, list[str]] = {}
    for line in run.stdout.splitlines():
        if line:
            key, _, rest = line.partition(" ")
            lines[key] = rest.split(" ") if not key.endswith("_msg") else [rest]
    return lines


def test_data_type_sizes(base_check):
    sizes = dict(item.split(":") for item in base_check["sizes"])
    assert {int(k): int(v) for k, v in sizes.items()} == \
        {t: _itemsize(t) for t in (*NUMPY_TYPES, 27)}


@pytest.mark.parametrize("name,acl_type,dims", [
    ("f32_2345", 0, (2, 3, 4, 5)), ("f16_7", 1, (7,)), ("i64_30", 9, (3, 0)),
    ("c128_7", 17, (7,)), ("f64_scalar", 11, ())])
def test_descriptor_sizes_match_numpy(base_check, name, acl_type, dims):
    """type, size, element count, number of dims, format (NCHW 0), then dim/ret/deprecated dim
    per index."""
    golden = np.zeros(dims, dtype=NUMPY_TYPES[acl_type])
    row = base_check[name]
    assert row[:5] == [str(acl_type), str(golden.nbytes), str(golden.size), str(golden.ndim), "0"]
    assert row[5:] == [f"{d}/0/{d}" for d in golden.shape]


def test_descriptors_of_unknown_shape(base_check):
    # a dynamic dim (-1): no element count, no size; dims {-2}: ACL_UNKNOWN_RANK dims
    assert base_check["f32_dyn"] == ["0", "0", "0", "2", "0", "-1/0/-1", "4/0/4"]
    assert base_check["f32_unknown_rank"][:4] == ["0", "0", "0", str(0xFFFFFFFFFFFFFFFE)]


def test_descriptor_getters_and_setters(base_check):
    c = base_check
    assert c["dim_out_of_range"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert "index 4" in c["dim_out_of_range_msg"][0]
    assert c["dim_null_out"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert "dimSize is null" in c["dim_null_out_msg"][0]
    assert c["dim_deprecated_out_of_range"] == ["-1"]
    assert c["range_static"] == ["0", "3", "3"]  # no range set: [dim, dim]
    assert c["set_range"] == ["0"] and c["range_set"] == ["0", "1", "-1"]
    assert c["set_range_wrong_count"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert c["range_short"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert c["name_unset"] == ["[]"] and c["name_set"] == ["[x_input]"]
    assert c["set_format"] == ["0", "1"]  # ACL_FORMAT_NHWC
    assert c["set_shape"] == ["0", "2", "120", str(120 * 4)]  # {6, 20} float
    assert c["set_shape_null"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert c["storage"] == ["0"] * 4
    assert c["const"] == ["0", "1"]
    assert c["placement"] == ["0", str(ACL_ERROR_INVALID_PARAM)]
    assert c["dynamic_input"] == ["0"]
    assert "already destroyed" in c["destroy_twice_msg"][0]
    assert c["after_destroy"] == ["-1", "0", "0"]
    assert c["null_desc"] == ["-1", "-1", "0", "(nil)"]
    assert c["create_null_dims"] == ["(nil)"] and "dims is null" in c["create_null_dims_msg"][0]
    assert c["create_negative_num"] == ["(nil)"]
    # a value that was never a handle, and null: every call answers, none crashes
    assert c["bogus"] == ["-1", "0", "0"] + [str(ACL_ERROR_INVALID_PARAM)] * 8 + ["(nil)"] + \
        [str(ACL_ERROR_INVALID_PARAM)] * 2
    assert "0x99 is not a live aclDataBuffer" in c["bogus_msg"][0]


def test_data_buffers(base_check):
    c = base_check
    assert c["buffer"] == ["1", "100", "100"]
    assert c["buffer_update"] == ["0", "1", "50"]
    assert c["buffer_destroy"] == ["0"]
    assert c["buffer_destroy_again"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert "already destroyed" in c["buffer_destroy_again_msg"][0]
    assert c["buffer_after"] == ["(nil)", "0"]
    assert c["buffer_empty"] == ["1", "0", "0"]
    assert c["buffer_null_data"] == ["(nil)"]
    assert c["buffer_null"] == [str(ACL_ERROR_INVALID_PARAM), "(nil)", "0"]


def test_runtime_queries(base_check):
    c = base_check
    assert c["init"] == ["0"] and c["finalize"] == ["0"]
    assert c["version"] == ["0", "1", "17", "0", "1"]  # the macros of the toolkit's acl_rt.h
    assert c["device_count"] == ["0", "1"]
    assert c["peer_self"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert c["device_status"] == ["0", "0", "107001"]  # NORMAL; ACL_ERROR_RT_INVALID_DEVICEID
    assert c["sys_param_unset"] == [str(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET)]
    assert c["sys_param"] == ["0", "0", "1"]
    # the failed aclrtGetDevice(NULL): peek keeps it, get clears it
    assert c["last_error"] == [str(ACL_ERROR_INVALID_PARAM)] * 2 + ["0"]
    assert c["flush"] == ["0"]


def test_timeouts_on_a_stream_blocked_by_a_waiting_event(base_check):
    """Stream b runs 512 MiB of memsets; stream a waits for an event recorded after them."""
    c = base_check
    assert c["event_with_flag"] == ["0"]
    assert c["stream_query_busy"] == ["0", "1"]  # ACL_STREAM_STATUS_NOT_READY
    assert c["query_event_busy"] == ["0", "1"]  # ACL_EVENT_STATUS_NOT_READY
    assert c["sync_stream_timeout"] == [str(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)]
    assert "within 1 ms" in c["sync_stream_timeout_msg"][0]
    assert c["sync_event_timeout"] == [str(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)]
    assert "aclrtSynchronizeEventWithTimeout" in c["sync_event_timeout_msg"][0]
    assert c["sync_device_timeout"] == [str(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)]
    assert c["sync_bad_timeout"] == [str(ACL_ERROR_INVALID_PARAM)]
    for key in ("sync_event_forever", "sync_stream_in_time", "sync_device_in_time"):
        assert c[key] == ["0"], key
    assert c["stream_query_done"] == ["0", "0"] and c["query_event_done"] == ["0", "0"]
    assert c["query_null_out"] == [str(ACL_ERROR_INVALID_PARAM)]
    assert c["memset_tail"] == ["8"]  # the tasks ran to the end


def test_unimplemented_functions_say_so(base_check):
    c = base_check
    assert c["model_not_supported"] == [str(ACL_ERROR_API_NOT_SUPPORT), "(nil)"]
    assert c["not_supported"] == [str(ACL_ERROR_API_NOT_SUPPORT)]
    assert "aclrtSetOpWaitTimeout" in c["not_supported_msg"][0]
    assert "not implemented" in c["not_supported_msg"][0]
    assert c["not_supported_ptr"] == ["(nil)"]
    assert "aclopCreateAttr" in c["not_supported_ptr_msg"][0]
    assert c["compile_not_supported"] == [str(ACL_ERROR_API_NOT_SUPPORT)]
