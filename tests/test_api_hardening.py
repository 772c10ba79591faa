"""Hardening of the public API against what a C caller (or a Python mistake) could pass.

The contract tested here (docs/runtime.md, docs/two_phase_api.md, docs/configuration.md):

* Ints: a 64-bit parameter takes any Python int in [-2**63, 2**64). Unsigned ones (pointers,
  sizes, workspaceSize) wrap negatives modulo 2**64 as uintptr_t/size_t do, signed ones (the
  int64_t dim, dims, offsets) wrap 2**63 and above to negative; then the API's normal checks give
  a status code. Outside that range, and bool, float, NumPy floats, str -> TypeError naming the
  API and the argument. 32-bit parameters give the API's code when the value does not fit.
* Configuration the core cannot hold (ACLNN_EMU_DEVICE_COUNT > 64, ACLNN_EMU_MEM_LIMIT > 2**40):
  acl.init returns 100000 (environment) / 100008 (JSON file); later calls return 100000.
* aclSetInputTensorAddr / aclSetOutputTensorAddr run phase 1's view checks on the new address
  -> 161002 naming the tensor.
* An input and an output that share bytes without being the same view -> 161002 naming both,
  at phase 1 and at rebinding; identical views (in place) and interleaved views are fine.
"""

from __future__ import annotations

import json
import re

import golden
import numpy as np
import pytest
from conftest import H2D

from aclnn_py import acl, aclnn

INVALID_PARAM = 100000  # ACL_ERROR_INVALID_PARAM
FILE_ATTR_INVALID = 100008  # ACL_ERROR_FILE_ATTR_INVALID
INVALID_DEVICEID = 107001
INVALID_HANDLE = 107017
INVALID_MEMORY_TYPE = 107016
MEMORY_ALLOCATION = 207001
MEMORY_FREE = 207002
NULLPTR, INVALID = 161001, 161002  # ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID
INNER = 561000  # ACLNN_ERR_INNER
F32 = aclnn.ACL_FLOAT
ND = aclnn.ACL_FORMAT_ND
WRAPPED_M64 = (1 << 64) - 64  # -64 as a uintptr_t

# values no C integer parameter can receive; each must raise TypeError naming the argument
NOT_C_INTS = [1 << 64, -(1 << 63) - 1, True, 1.0, np.float64(64.0), "64"]
NOT_C_INT_IDS = ["2**64", "-2**63-1", "bool", "float", "np.float64", "str"]


def take_msg() -> str:
    msg = acl.get_recent_err_msg()
    return msg or ""


def expect(code: int, got, api: str, *words: str) -> str:
    """``got`` (a code, or a tuple ending with one) is ``code``, and this thread's message
    names the API, the code and each word."""
    ret = got[-1] if isinstance(got, tuple) else got
    msg = take_msg()
    assert ret == code, f"{api} returned {got!r}, expected {code}: {msg}"
    assert api in msg and str(code) in msg, msg
    for w in words:
        assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(w)}(?![A-Za-z0-9_])", msg), \
            f"the message does not name {w!r}: {msg}"
    return msg


def raises_type_error(fn, *words: str) -> str:
    with pytest.raises(TypeError) as info:
        fn()
    text = str(info.value)
    for w in words:
        assert w in text, f"TypeError does not name {w!r}: {text}"
    return text


def tensor(shape, ptr, strides=None, offset=0, dtype=F32, storage=None):
    shape = list(shape)
    t = aclnn.aclCreateTensor(shape, dtype, strides, offset, ND,
                              list(storage) if storage is not None else shape, ptr)
    assert t is not None, take_msg()
    return t


# ------------------------------------------------------------------ runtime: int wrapping ----


def test_free_negative_pointer_wraps_and_returns_a_code(device):
    assert acl.rt.free(-64) == MEMORY_FREE
    msg = take_msg()
    assert "aclrtFree" in msg and f"0x{WRAPPED_M64:x}" in msg, msg


def test_memcpy_negative_device_pointer_wraps_and_returns_a_code(device, dev):
    host = np.zeros(16, dtype=np.uint8)
    hp = acl.util.numpy_to_ptr(host)
    expect(INVALID_MEMORY_TYPE, acl.rt.memcpy(-64, 16, hp, 16, H2D), "aclrtMemcpy", "dst")
    d = dev.malloc(16)
    expect(INVALID_MEMORY_TYPE,
           acl.rt.memcpy(d, 16, -64, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE), "aclrtMemcpy", "src")


def test_memcpy_negative_dest_max_is_size_max(device, dev):
    """destMax is a size_t: -1 is SIZE_MAX, so count <= destMax and the copy happens."""
    data = np.arange(16, dtype=np.uint8)
    d = dev.malloc(16)
    assert acl.rt.memcpy(d, -1, acl.util.numpy_to_ptr(data), 16, H2D) == 0, take_msg()
    np.testing.assert_array_equal(dev.download(d, (16,), np.uint8), data)


def test_malloc_negative_size_is_beyond_the_limit(device):
    ptr, ret = acl.rt.malloc(-1, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ptr == 0
    expect(MEMORY_ALLOCATION, ret, "aclrtMalloc")


def test_negative_stream_handle_is_not_live(device):
    expect(INVALID_HANDLE, acl.rt.destroy_stream(-64), "aclrtDestroyStream", "stream")
    expect(INVALID_HANDLE, acl.rt.synchronize_stream(-64), "aclrtSynchronizeStream", "stream")


def test_numpy_ints_are_ints(device, dev):
    d, ret = acl.rt.malloc(np.uint64(64), np.int32(0))
    assert ret == 0, take_msg()
    dev.ptrs.append(d)
    assert acl.rt.memset(np.uint64(d), np.int64(64), np.int8(1), np.uint16(64)) == 0
    assert acl.rt.set_device(np.int32(0)) == 0
    assert acl.rt.reset_device(np.int64(0)) == 0


RUNTIME_CALLS = {
    # id: (call with the bad value, api, argument)
    "malloc.size": (lambda v: acl.rt.malloc(v, 0), "aclrtMalloc", "size"),
    "malloc.policy": (lambda v: acl.rt.malloc(64, v), "aclrtMalloc", "policy"),
    "free.devPtr": (lambda v: acl.rt.free(v), "aclrtFree", "devPtr"),
    "malloc_host.size": (lambda v: acl.rt.malloc_host(v), "aclrtMallocHost", "size"),
    "memcpy.dst": (lambda v: acl.rt.memcpy(v, 4, 64, 4, H2D), "aclrtMemcpy", "dst"),
    "memcpy.count": (lambda v: acl.rt.memcpy(64, 4, 64, v, H2D), "aclrtMemcpy", "count"),
    "memcpy.kind": (lambda v: acl.rt.memcpy(64, 4, 64, 4, v), "aclrtMemcpy", "kind"),
    "memset.value": (lambda v: acl.rt.memset(64, 4, v, 4), "aclrtMemset", "value"),
    "memset.maxCount": (lambda v: acl.rt.memset(64, v, 0, 4), "aclrtMemset", "maxCount"),
    "set_device.deviceId": (lambda v: acl.rt.set_device(v), "aclrtSetDevice", "deviceId"),
    "get_mem_info.attr": (lambda v: acl.rt.get_mem_info(v), "aclrtGetMemInfo", "attr"),
}


@pytest.mark.parametrize("value", NOT_C_INTS, ids=NOT_C_INT_IDS)
@pytest.mark.parametrize("call", list(RUNTIME_CALLS), ids=list(RUNTIME_CALLS))
def test_runtime_rejects_what_c_could_not_pass(device, call, value):
    fn, api, arg = RUNTIME_CALLS[call]
    raises_type_error(lambda: fn(value), api, arg)


@pytest.mark.parametrize("call, want", [
    (lambda: acl.rt.set_device(1 << 40), INVALID_DEVICEID),
    (lambda: acl.rt.set_device(-(1 << 63)), INVALID_DEVICEID),
    (lambda: acl.rt.memset(64, 4, 1 << 40, 4), INVALID_PARAM),
    (lambda: acl.rt.memcpy(64, 4, 64, 4, 1 << 33), INVALID_PARAM),
    (lambda: acl.rt.get_mem_info(1 << 32), INVALID_PARAM),
], ids=["deviceId", "deviceId-min", "memset.value", "memcpy.kind", "get_mem_info.attr"])
def test_32_bit_parameters_return_a_code_when_the_value_does_not_fit(device, call, want):
    got = call()
    ret = got[-1] if isinstance(got, tuple) else got
    msg = take_msg()
    assert ret == want, msg
    assert str(want) in msg, msg


# --------------------------------------------------------------------------- util helpers ----


@pytest.mark.parametrize("call", [
    lambda p: acl.util.ptr_to_bytes(True, 16),
    lambda p: acl.util.ptr_to_bytes(float(p), 16),
    lambda p: acl.util.ptr_to_bytes(np.float64(p), 16),
    lambda p: acl.util.ptr_to_bytes(p, 16.0),
    lambda p: acl.util.ptr_to_bytes(p, np.float32(16)),
    lambda p: acl.util.ptr_to_bytes(1 << 64, 16),
    lambda p: acl.util.ptr_to_numpy(True, (4,), 11),
    lambda p: acl.util.ptr_to_numpy(np.float64(p), (4,), 11),
    lambda p: acl.util.ptr_to_numpy(p, (4.0,), 11),
    lambda p: acl.util.ptr_to_numpy(p, (4,), 11.0),
], ids=["bytes-bool-ptr", "bytes-float-ptr", "bytes-np.float64-ptr", "bytes-float-size",
        "bytes-np.float32-size", "bytes-2**64-ptr", "numpy-bool-ptr", "numpy-np.float64-ptr",
        "numpy-float-dim", "numpy-float-npy_type"])
def test_util_helpers_reject_non_ints(call):
    host = np.arange(16, dtype=np.uint8)
    with pytest.raises(TypeError):
        call(acl.util.numpy_to_ptr(host))


def test_util_ptr_to_bytes_negative_pointer_is_refused_not_read():
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(-64, 16)


def test_util_helpers_accept_numpy_ints():
    host = np.arange(16, dtype=np.uint8)
    p = np.uint64(acl.util.numpy_to_ptr(host))
    assert acl.util.ptr_to_bytes(p, np.int32(4)) == bytes(range(4))
    np.testing.assert_array_equal(acl.util.ptr_to_numpy(p, (np.int64(4),), np.int32(2)),
                                  host[:4])


# ------------------------------------------------------------------------------ meta API ----


@pytest.mark.parametrize("value", NOT_C_INTS, ids=NOT_C_INT_IDS)
@pytest.mark.parametrize("arg", ["view_dims", "data_type", "stride", "offset", "format",
                                 "storage_dims", "tensor_data"])
def test_create_tensor_rejects_what_c_could_not_pass(arg, value):
    args = dict(view_dims=[2, 3], data_type=F32, stride=[3, 1], offset=0, format=ND,
                storage_dims=[6], tensor_data=0)
    args[arg] = [2, value] if arg in ("view_dims", "stride", "storage_dims") else value
    raises_type_error(lambda: aclnn.aclCreateTensor(**args), "aclCreateTensor", arg)


def test_create_tensor_wraps_64_bit_values():
    t = aclnn.aclCreateTensor([1 << 63, 3], F32, [(1 << 64) - 1, 1], 1 << 63, ND, [6], -64)
    assert t is not None, take_msg()
    assert aclnn.aclGetViewShape(t) == ([-(1 << 63), 3], 0)
    assert aclnn.aclGetViewStrides(t) == ([-1, 1], 0)
    assert aclnn.aclGetViewOffset(t) == (-(1 << 63), 0)
    assert aclnn.aclGetRawTensorAddr(t) == (WRAPPED_M64, 0)
    assert aclnn.aclDestroyTensor(t) == 0


@pytest.mark.parametrize("arg", ["data_type", "format"])
def test_create_tensor_enum_beyond_32_bits_is_a_code(arg):
    args = dict(view_dims=[2], data_type=F32, stride=None, offset=0, format=ND,
                storage_dims=[2], tensor_data=0)
    args[arg] = 1 << 40
    assert aclnn.aclCreateTensor(**args) is None
    msg = take_msg()
    assert "aclCreateTensor" in msg and str(INVALID) in msg and arg in msg, msg


@pytest.mark.parametrize("value", NOT_C_INTS, ids=NOT_C_INT_IDS)
def test_meta_api_rejects_what_c_could_not_pass(value):
    raises_type_error(lambda: aclnn.aclCreateIntArray([1, value]), "aclCreateIntArray",
                      "values[1]")
    raises_type_error(lambda: aclnn.aclCreateScalar(1.0, value), "aclCreateScalar", "data_type")
    t = tensor([2], 0)
    raises_type_error(lambda: aclnn.aclSetRawTensorAddr(t, value), "aclSetRawTensorAddr",
                      "addr")
    assert aclnn.aclDestroyTensor(t) == 0


def test_set_raw_tensor_addr_wraps_negative_pointers():
    t = tensor([2], 0)
    assert aclnn.aclSetRawTensorAddr(t, -64) == 0
    assert aclnn.aclGetRawTensorAddr(t) == (WRAPPED_M64, 0)
    assert aclnn.aclDestroyTensor(t) == 0


def test_create_scalar_non_finite_value_for_an_int_dtype_is_a_code():
    assert aclnn.aclCreateScalar(float("inf"), aclnn.ACL_INT32) is None
    assert "aclCreateScalar" in take_msg()


# -------------------------------------------------------------------------- phase 1 ints ----


@pytest.fixture
def softmax_pair(dev, stream):
    """(x, x_t, y, y_t, a): float32 [2, 3] self and out on device 0."""
    a = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.float32)
    x, xt = dev.tensor(a)
    y, yt = dev.tensor(np.zeros_like(a))
    yield x, xt, y, yt, a
    for t in (xt, yt):
        aclnn.aclDestroyTensor(t)


def test_dim_2_pow_63_wraps_to_int64_min_and_is_out_of_range(softmax_pair):
    _, xt, _, yt, _ = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1 << 63, yt)
    assert (ws, ex) == (0, None)
    msg = expect(INVALID, ret, "aclnnSoftmaxGetWorkspaceSize", "Dim")
    assert "out of range" in msg and str(-(1 << 63)) in msg, msg


@pytest.mark.parametrize("value", NOT_C_INTS, ids=NOT_C_INT_IDS)
def test_phase1_dim_rejects_what_c_could_not_pass(softmax_pair, value):
    _, xt, _, yt, _ = softmax_pair
    raises_type_error(lambda: aclnn.aclnnSoftmaxGetWorkspaceSize(xt, value, yt),
                      "aclnnSoftmaxGetWorkspaceSize", "dim")


def test_phase1_dim_accepts_numpy_ints(softmax_pair, stream):
    x, xt, y, yt, a = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, np.int64(-1), yt)
    assert ret == 0, take_msg()
    assert aclnn.aclnnSoftmax(None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0


# -------------------------------------------------------------------------- phase 2 ints ----


def test_phase2_negative_workspace_size_wraps_and_returns_a_code(softmax_pair, dev, stream):
    _, xt, _, yt, _ = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert ret == 0, take_msg()
    w = dev.malloc(64)
    # workspaceSize -8 is 2**64 - 8 bytes: more than the workspace allocation holds
    expect(INVALID, aclnn.aclnnSoftmax(w, -8, ex, stream), "aclnnSoftmax", "workspace")


def test_phase2_negative_workspace_pointer_wraps_and_returns_a_code(softmax_pair, stream):
    _, xt, _, yt, _ = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert ret == 0, take_msg()
    expect(INVALID, aclnn.aclnnSoftmax(-64, 64, ex, stream), "aclnnSoftmax", "workspace")


@pytest.mark.parametrize("value", NOT_C_INTS, ids=NOT_C_INT_IDS)
@pytest.mark.parametrize("arg", ["workspace", "workspaceSize"])
def test_phase2_rejects_what_c_could_not_pass(softmax_pair, stream, arg, value):
    _, xt, _, yt, _ = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert ret == 0, take_msg()
    args = {"workspace": None, "workspaceSize": 0}
    args[arg] = value
    raises_type_error(lambda: aclnn.aclnnSoftmax(args["workspace"], args["workspaceSize"], ex,
                                                 stream), "aclnnSoftmax", arg)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0  # the TypeError did not consume it


@pytest.mark.parametrize("value", NOT_C_INTS, ids=NOT_C_INT_IDS)
@pytest.mark.parametrize("arg", ["index", "addr"])
def test_rebinding_rejects_what_c_could_not_pass(softmax_pair, arg, value):
    x, xt, _, yt, _ = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    args = {"index": 0, "addr": x}
    args[arg] = value
    raises_type_error(lambda: aclnn.aclSetInputTensorAddr(ex, args["index"], xt, args["addr"]),
                      "aclSetInputTensorAddr", arg)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


# ------------------------------------------------------------------------- configuration ----


@pytest.fixture
def clean_env(monkeypatch, acl_uninitialized):
    """No emulator variables in the environment; acl not initialised; finalized at the end."""
    for key in ("ACLNN_EMU_DEVICE_COUNT", "ACLNN_EMU_MEM_LIMIT", "ACLNN_EMU_POISON",
                "ACL_LAUNCH_BLOCKING", "ACLNN_EMU_CHECK", "ACLNN_EMU_NUM_THREADS"):
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


def test_device_count_beyond_64_is_refused(clean_env):
    clean_env.setenv("ACLNN_EMU_DEVICE_COUNT", "100")
    msg = expect(INVALID_PARAM, acl.init(), "aclInit", "ACLNN_EMU_DEVICE_COUNT")
    assert "64" in msg, msg
    # later calls that read it return the code instead of raising (or succeeding)
    expect(INVALID_PARAM, acl.rt.set_device(70), "aclrtSetDevice", "ACLNN_EMU_DEVICE_COUNT")
    expect(INVALID_PARAM, acl.rt.set_device(0), "aclrtSetDevice", "ACLNN_EMU_DEVICE_COUNT")
    expect(INVALID_PARAM, acl.rt.get_device_count(), "aclrtGetDeviceCount",
           "ACLNN_EMU_DEVICE_COUNT")
    expect(INVALID_PARAM, acl.rt.reset_device(0), "aclrtResetDevice", "ACLNN_EMU_DEVICE_COUNT")
    clean_env.setenv("ACLNN_EMU_DEVICE_COUNT", "64")
    assert acl.init() == 0, take_msg()  # the failed aclInit initialised nothing
    assert acl.rt.get_device_count() == (64, 0)
    assert acl.rt.set_device(63) == 0, take_msg()
    assert acl.rt.reset_device(63) == 0


def test_mem_limit_beyond_one_tib_is_refused(clean_env):
    clean_env.setenv("ACLNN_EMU_MEM_LIMIT", "2T")
    msg = expect(INVALID_PARAM, acl.init(), "aclInit", "ACLNN_EMU_MEM_LIMIT")
    assert str(1 << 40) in msg, msg
    assert acl.rt.set_device(0) == 0  # does not read the memory limit
    try:
        ptr, ret = acl.rt.malloc(64, 0)
        assert ptr == 0
        expect(INVALID_PARAM, ret, "aclrtMalloc", "ACLNN_EMU_MEM_LIMIT")
        expect(INVALID_PARAM, acl.rt.get_mem_info(acl.ACL_HBM_MEM), "aclrtGetMemInfo",
               "ACLNN_EMU_MEM_LIMIT")
        clean_env.setenv("ACLNN_EMU_MEM_LIMIT", "1T")  # exactly the limit is fine
        ptr, ret = acl.rt.malloc(64, 0)
        assert ret == 0, take_msg()
        assert acl.rt.free(ptr) == 0
    finally:
        assert acl.rt.reset_device(0) == 0


@pytest.mark.parametrize("content", [{"ACLNN_EMU_DEVICE_COUNT": 65},
                                     {"ACLNN_EMU_MEM_LIMIT": str((1 << 40) + 1)}])
def test_json_value_beyond_the_core_is_refused(clean_env, tmp_path, content):
    path = tmp_path / "acl.json"
    path.write_text(json.dumps(content))
    expect(FILE_ATTR_INVALID, acl.init(str(path)), "aclInit", next(iter(content)))
    assert acl.init() == 0


def test_json_file_overrides_a_bad_environment_value(clean_env, tmp_path):
    clean_env.setenv("ACLNN_EMU_DEVICE_COUNT", "100")
    path = tmp_path / "acl.json"
    path.write_text(json.dumps({"ACLNN_EMU_DEVICE_COUNT": 2}))
    assert acl.init(str(path)) == 0, take_msg()
    assert acl.rt.get_device_count() == (2, 0)


def test_bad_environment_is_not_blamed_on_a_good_json_file(clean_env, tmp_path):
    clean_env.setenv("ACLNN_EMU_MEM_LIMIT", "lots")
    path = tmp_path / "acl.json"
    path.write_text(json.dumps({"ACLNN_EMU_DEVICE_COUNT": 2}))
    expect(INVALID_PARAM, acl.init(str(path)), "aclInit", "ACLNN_EMU_MEM_LIMIT")


def test_bad_launch_blocking_after_init_is_a_code(clean_env, dev):
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    try:
        d = dev.malloc(64)
        clean_env.setenv("ACL_LAUNCH_BLOCKING", "maybe")
        expect(INVALID_PARAM, acl.rt.memset_async(d, 64, 0, 64, None), "aclrtMemsetAsync",
               "ACL_LAUNCH_BLOCKING")
    finally:
        clean_env.delenv("ACL_LAUNCH_BLOCKING")
        assert acl.rt.reset_device(0) == 0


def test_bad_soc_after_init_is_a_code(clean_env, dev, stream):
    a = np.ones((2, 3), dtype=np.float32)
    _, xt = dev.tensor(a)
    _, yt = dev.tensor(a)
    clean_env.setenv("ACLNN_EMU_SOC", "Ascend999X")
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert (ws, ex) == (0, None)
    expect(INNER, ret, "aclnnSoftmaxGetWorkspaceSize", "ACLNN_EMU_SOC")
    assert acl.get_soc_name() is None
    assert "ACLNN_EMU_SOC" in take_msg()
    clean_env.delenv("ACLNN_EMU_SOC")
    assert acl.get_soc_name() == "Ascend910B4"


# ------------------------------------------------------------------------------ rebinding ----


@pytest.fixture
def repeatable(softmax_pair, stream):
    """A repeatable aclnnSoftmax executor over softmax_pair (dim 1)."""
    x, xt, y, yt, a = softmax_pair
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert ret == 0 and ws == 0, take_msg()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    yield ex, softmax_pair
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def still_runs(ex, pair, dev, stream):
    """The executor still reads x and writes y: a rejected rebinding changed nothing."""
    x, xt, y, yt, a = pair
    assert aclnn.aclGetRawTensorAddr(xt) == (x, 0)
    assert aclnn.aclGetRawTensorAddr(yt) == (y, 0)
    assert aclnn.aclnnSoftmax(None, 0, ex, stream) == 0, take_msg()
    assert acl.rt.synchronize_stream(stream) == 0
    golden.assert_close(dev.download(y, a.shape, np.float32), golden.softmax(a, 1),
                        np.dtype(np.float32))


def rebind_fails(ex, output: bool, t, addr, *words):
    api = "aclSetOutputTensorAddr" if output else "aclSetInputTensorAddr"
    fn = aclnn.aclSetOutputTensorAddr if output else aclnn.aclSetInputTensorAddr
    return expect(INVALID, fn(ex, 0, t, addr), api, *words)


@pytest.mark.parametrize("output", [False, True], ids=["input", "output"])
def test_rebind_misaligned(repeatable, dev, stream, output):
    ex, pair = repeatable
    x, xt, y, yt, _ = pair
    other = dev.malloc(64)
    msg = rebind_fails(ex, output, yt if output else xt, other + 2,
                       "out" if output else "self")
    assert "aligned" in msg, msg
    still_runs(ex, pair, dev, stream)


@pytest.mark.parametrize("addr", [0, None, -64], ids=["zero", "None", "-64"])
def test_rebind_null_or_negative(repeatable, dev, stream, addr):
    ex, pair = repeatable
    rebind_fails(ex, False, pair[1], addr, "self")
    still_runs(ex, pair, dev, stream)


def test_rebind_past_the_end(repeatable, dev, stream):
    ex, pair = repeatable
    small = dev.malloc(16)  # the view needs 24 bytes
    msg = rebind_fails(ex, False, pair[1], small, "self")
    assert "past the end" in msg, msg
    still_runs(ex, pair, dev, stream)


def test_rebind_host_memory(repeatable, dev, stream):
    ex, pair = repeatable
    hp, ret = acl.rt.malloc_host(64)
    assert ret == 0
    try:
        msg = rebind_fails(ex, True, pair[3], hp, "out")
        assert "live device allocation" in msg, msg
    finally:
        assert acl.rt.free_host(hp) == 0
    still_runs(ex, pair, dev, stream)


def test_rebind_freed_memory(repeatable, dev, stream):
    ex, pair = repeatable
    p, ret = acl.rt.malloc(64, 0)
    assert ret == 0 and acl.rt.free(p) == 0
    msg = rebind_fails(ex, False, pair[1], p, "self")
    assert "live device allocation" in msg, msg
    still_runs(ex, pair, dev, stream)


def test_rebind_to_another_device(monkeypatch, repeatable, dev, stream):
    monkeypatch.setenv("ACLNN_EMU_DEVICE_COUNT", "2")
    ex, pair = repeatable
    assert acl.rt.set_device(1) == 0
    try:
        p1, ret = acl.rt.malloc(64, 0)
        assert ret == 0
        msg = rebind_fails(ex, True, pair[3], p1, "out", "device")
        assert "device 1" in msg and "device 0" in msg, msg
        assert acl.rt.free(p1) == 0
    finally:
        assert acl.rt.reset_device(1) == 0
    assert acl.rt.set_device(0) == 0  # the current context again (and balanced below)
    assert acl.rt.reset_device(0) == 0
    still_runs(ex, pair, dev, stream)


def test_rebind_to_a_good_address_still_works(repeatable, dev, stream):
    ex, pair = repeatable
    b = np.array([[0, 0, 0], [0, 0, 100]], dtype=np.float32)
    x2 = dev.upload(b)
    y2 = dev.malloc(b.nbytes)
    assert aclnn.aclSetInputTensorAddr(ex, 0, pair[1], x2) == 0, take_msg()
    assert aclnn.aclSetOutputTensorAddr(ex, 0, pair[3], y2) == 0, take_msg()
    assert aclnn.aclnnSoftmax(None, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden.assert_close(dev.download(y2, b.shape, np.float32), golden.softmax(b, 1),
                        np.dtype(np.float32))


# ------------------------------------------------------------------------ partial overlap ----


def softmax_phase1(xt, yt, dim=1):
    return aclnn.aclnnSoftmaxGetWorkspaceSize(xt, dim, yt)


def overlap_rejected(ret, api, *names):
    msg = expect(INVALID, ret, api, *names)
    assert "overlap" in msg and "undefined" in msg, msg
    return msg


@pytest.mark.parametrize("shift", [1, 3], ids=["one-element", "one-row"])
def test_partial_overlap_at_phase1(dev, stream, shift):
    storage = np.arange(12, dtype=np.float32)
    p = dev.upload(storage)
    xt = tensor([2, 3], p, storage=[12])
    yt = tensor([2, 3], p, offset=shift, storage=[12])
    ws, ex, ret = softmax_phase1(xt, yt)
    assert ex is None
    overlap_rejected(ret, "aclnnSoftmaxGetWorkspaceSize", "self", "out")
    # the same shift by address instead of by offset
    y2 = tensor([2, 3], p + 4 * shift)
    ws, ex, ret = softmax_phase1(xt, y2)
    overlap_rejected(ret, "aclnnSoftmaxGetWorkspaceSize", "self", "out")


def test_partial_overlap_of_strided_views_at_phase1(dev, stream):
    """out is self transposed over the same bytes: they share bytes, differently arranged."""
    p = dev.upload(np.arange(9, dtype=np.float32))
    xt = tensor([3, 3], p, strides=[3, 1], storage=[9])
    yt = tensor([3, 3], p, strides=[1, 3], storage=[9])
    ws, ex, ret = softmax_phase1(xt, yt)
    overlap_rejected(ret, "aclnnSoftmaxGetWorkspaceSize", "self", "out")


def test_partial_overlap_softmax_backward_names_both(dev, stream):
    g = np.ones((3, 3), dtype=np.float32)
    gp = dev.upload(np.ones(12, dtype=np.float32))
    _, yt = dev.tensor(np.full((3, 3), 1 / 3, dtype=np.float32))
    gt = tensor([3, 3], gp, storage=[12])
    ot = tensor([3, 3], gp, offset=3, storage=[12])  # out is gradOutput one row down
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(gt, yt, 1, ot)
    overlap_rejected(ret, "aclnnSoftmaxBackwardGetWorkspaceSize", "gradOutput", "out")
    del g


@pytest.mark.parametrize("same_object", [True, False], ids=["same-tensor", "equal-view"])
def test_identical_self_and_out_still_work(dev, stream, same_object):
    a = np.array([[0.5, -1, 2, 7], [3, 3, 3, 3], [-20, 0, 1e-3, 4]], dtype=np.float32)
    p = dev.upload(a)
    xt = tensor(a.shape, p)
    yt = xt if same_object else tensor(a.shape, p)
    ws, ex, ret = softmax_phase1(xt, yt)
    assert ret == 0, take_msg()
    assert aclnn.aclnnSoftmax(dev.malloc(ws) if ws else None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden.assert_close(dev.download(p, a.shape, np.float32), golden.softmax(a, 1),
                        np.dtype(np.float32))


def test_interleaved_views_do_not_overlap(dev, stream):
    """self = x[:, 0::2], out = x[:, 1::2]: their byte ranges intersect, their bytes do not."""
    x = np.array([[1, -9, 2, -9, 3, -9], [0, -9, 0, -9, 5, -9]], dtype=np.float32)
    p = dev.upload(x)
    xt = tensor([2, 3], p, strides=[6, 2], offset=0, storage=[12])
    yt = tensor([2, 3], p, strides=[6, 2], offset=1, storage=[12])
    ws, ex, ret = softmax_phase1(xt, yt)
    assert ret == 0, take_msg()
    assert aclnn.aclnnSoftmax(dev.malloc(ws) if ws else None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    got = dev.download(p, x.shape, np.float32)
    np.testing.assert_array_equal(got[:, 0::2], x[:, 0::2])  # self untouched
    golden.assert_close(got[:, 1::2], golden.softmax(x[:, 0::2], 1), np.dtype(np.float32))


def test_inplace_hardsigmoid_is_exempt(dev, stream):
    a = np.array([-4, -1, 0, 1, 4, 9], dtype=np.float32)
    p, t = dev.tensor(a)
    ws, ex, ret = aclnn.aclnnInplaceHardsigmoidGetWorkspaceSize(t)
    assert ret == 0, take_msg()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    q = dev.upload(a)
    assert aclnn.aclSetInputTensorAddr(ex, 0, t, q) == 0, take_msg()  # moves self as a whole
    assert aclnn.aclnnInplaceHardsigmoid(dev.malloc(ws) if ws else None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden.assert_close(dev.download(q, a.shape, np.float32), golden.hardsigmoid(a),
                        np.dtype(np.float32))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


# -------------------------------------------------------------- an output that aliases ----
# issue 22, item 3: an out view whose strides make two indices reach one element would be
# written by several kernel threads at once (bytes varying with the thread count); refused at
# phase 1 with 161002 naming the tensor. Inputs may alias (reads only).


def brute_self_overlap(dims, strides) -> bool:
    """The definition: two distinct index tuples reach the same element offset."""
    import itertools

    seen: set = set()
    for idx in itertools.product(*(range(d) for d in dims)):
        off = sum(i * s for i, s in zip(idx, strides))
        if off in seen:
            return True
        seen.add(off)
    return False


def test_self_overlap_matches_the_definition():
    """ops.self_overlap against brute-force enumeration on every view of up to 3 dims with
    sizes 0..3 and strides -4..4 (a few random 4-d ones too), and its witnesses are two
    distinct indices of one offset."""
    import itertools
    import random

    from aclnn_py.ops import self_overlap

    cases = [((d0, d1), (s0, s1)) for d0, d1 in itertools.product(range(4), repeat=2)
             for s0, s1 in itertools.product(range(-4, 5), repeat=2)]
    cases += [((2, 3, 2), s) for s in itertools.product(range(-4, 5), repeat=3)]
    rng = random.Random(22)
    cases += [(tuple(rng.randint(1, 4) for _ in range(4)),
               tuple(rng.randint(-12, 12) for _ in range(4))) for _ in range(2000)]
    cases += [((64, 4032), (1, 1)), ((3, 2), (2, 3)), ((5, 5), (2, 3)), ((4, 1, 4), (1, 0, 4))]
    overlapping = 0
    for dims, strides in cases:
        want = brute_self_overlap(dims, strides) if math_prod(dims) < 10**5 else True
        got, witness = self_overlap(dims, strides)
        assert got is want, (dims, strides, got)
        overlapping += want
        if witness is not None:
            a, b = witness
            assert a != b and all(0 <= i < d for w in (a, b) for i, d in zip(w, dims))
            assert sum(i * s for i, s in zip(a, strides)) == \
                sum(i * s for i, s in zip(b, strides)), (dims, strides, witness)
    assert 0 < overlapping < len(cases)


def math_prod(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def self_overlap_rejected(ret, api, name, *words):
    msg = expect(INVALID, ret, api, name, *words)
    assert "overlaps itself" in msg and "undefined" in msg, msg
    return msg


def test_self_overlapping_out_refused_at_phase1(dev, stream):
    """The issue's view: out of shape [64, 4032] with strides [1, 1] over 4096 floats."""
    p = dev.upload(np.zeros(64 * 4032, dtype=np.float32))
    q = dev.upload(np.full(4096, 7, dtype=np.float32))
    xt = tensor([64, 4032], p)
    yt = tensor([64, 4032], q, strides=[1, 1], storage=[4096])
    for _ in range(2):  # a refused descriptor is never remembered as planned
        ws, ex, ret = softmax_phase1(xt, yt)
        assert ex is None
        self_overlap_rejected(ret, "aclnnSoftmaxGetWorkspaceSize", "out", "[0, 1]", "[1, 0]")
    np.testing.assert_array_equal(dev.download(q, (4096,), np.float32), 7)  # nothing written
    # a stride of 0 (a broadcast view) as out, and in SoftmaxBackward and InplaceHardsigmoid
    zt = tensor([4, 8], q, strides=[0, 1], storage=[4096])
    self_overlap_rejected(softmax_phase1(tensor([4, 8], p), zt)[2],
                          "aclnnSoftmaxGetWorkspaceSize", "out")
    ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(tensor([4, 8], p),
                                                     tensor([4, 8], p, offset=32), 1, zt)[2]
    self_overlap_rejected(ret, "aclnnSoftmaxBackwardGetWorkspaceSize", "out")
    self_overlap_rejected(aclnn.aclnnInplaceHardsigmoidGetWorkspaceSize(zt)[2],
                          "aclnnInplaceHardsigmoidGetWorkspaceSize", "self")
    # no witness pair by equal strides: [5, 5] with strides [2, 3] (2*3 == 3*2)
    ct = tensor([5, 5], q, strides=[2, 3], storage=[4096])
    self_overlap_rejected(softmax_phase1(tensor([5, 5], p), ct)[2],
                          "aclnnSoftmaxGetWorkspaceSize", "out", "[3, 0]", "[0, 2]")


def test_self_overlapping_input_and_disjoint_strided_out_work(dev, stream):
    """Aliasing inputs are fine: self is one row broadcast by a stride of 0 ([4, 6], strides
    [0, 1]); out is a permuted, non-dense view that does not alias ([3, 2] over strides [2, 3]
    fails the simple sorted-stride test yet reaches 6 distinct elements)."""
    row = np.array([0.5, -1, 2, 7, 3, -3], dtype=np.float32)
    p = dev.upload(row)
    xt = tensor([4, 6], p, strides=[0, 1], storage=[6])
    q = dev.upload(np.zeros(24, dtype=np.float32))
    yt = tensor([4, 6], q)
    ws, ex, ret = softmax_phase1(xt, yt)
    assert ret == 0, take_msg()
    assert aclnn.aclnnSoftmax(dev.malloc(ws) if ws else None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    x = np.broadcast_to(row, (4, 6))
    golden.assert_close(dev.download(q, (4, 6), np.float32), golden.softmax(x, 1),
                        np.dtype(np.float32))
    a = np.array([[1, 2], [3, -4], [0, 5]], dtype=np.float32)
    xt2 = tensor([3, 2], dev.upload(a))
    r = dev.upload(np.zeros(8, dtype=np.float32))
    yt2 = tensor([3, 2], r, strides=[2, 3], storage=[8])
    ws, ex, ret = softmax_phase1(xt2, yt2)
    assert ret == 0, take_msg()
    assert aclnn.aclnnSoftmax(dev.malloc(ws) if ws else None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    flat = dev.download(r, (8,), np.float32)
    got = np.array([[flat[2 * i + 3 * j] for j in range(2)] for i in range(3)])
    golden.assert_close(got, golden.softmax(a, 1), np.dtype(np.float32))


@pytest.mark.parametrize("shift", [1, 3], ids=["one-element", "one-row"])
def test_partial_overlap_at_rebinding(repeatable, dev, stream, shift):
    ex, pair = repeatable
    x, xt, y, yt, a = pair
    big = dev.upload(np.concatenate([a.ravel(), np.zeros(6, dtype=np.float32)]))
    assert aclnn.aclSetInputTensorAddr(ex, 0, xt, big) == 0, take_msg()
    # out moved onto self's bytes, shifted
    overlap_rejected(aclnn.aclSetOutputTensorAddr(ex, 0, yt, big + 4 * shift),
                     "aclSetOutputTensorAddr", "self", "out")
    assert aclnn.aclGetRawTensorAddr(yt) == (y, 0)
    # exactly onto self: identical views, in place, allowed
    assert aclnn.aclSetOutputTensorAddr(ex, 0, yt, big) == 0, take_msg()
    # self moved off out's bytes by a shift: rejected from the input side as well
    overlap_rejected(aclnn.aclSetInputTensorAddr(ex, 0, xt, big + 4 * shift),
                     "aclSetInputTensorAddr", "self", "out")
    assert aclnn.aclGetRawTensorAddr(xt) == (big, 0)
    assert aclnn.aclnnSoftmax(None, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden.assert_close(dev.download(big, a.shape, np.float32), golden.softmax(a, 1),
                        np.dtype(np.float32))
