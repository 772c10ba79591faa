"""Custom operators (docs/custom_ops.md): msOpGen definitions plus NumPy kernels become two-phase
aclnn operators. Expected values are NumPy float64 computations of the operators' formulas and
CANN's documented codes (161001 for a null required tensor, 161002 for an unlisted dtype/format
combination); the kernels under test are the users' side, so the tests check what the emulator
does around them: argument checks, executors, streams, faults, threads."""

from __future__ import annotations

import inspect
import json
import re
import threading
import time

import numpy as np
import pytest
from conftest import H2D

from aclnn_py import acl, aclnn, custom
from aclnn_py.custom import CustomOpError
from aclnn_py.toolkit import opgen

ADD = {"op": "AddCustomT", "input_desc": [
    {"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},
    {"name": "y", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "fp32"]}],
    "output_desc": [
    {"name": "z", "param_type": "required", "format": ["ND", "ND"], "type": ["half", "float32"]}]}


def add_kernel(x, y, z):
    np.add(x, y, out=z)


@pytest.fixture
def loaded():
    """Loads definitions for one test and unloads them afterwards."""
    names: list[str] = []

    def load(definition, kernels):
        ops = custom.load(definition, kernels)
        names.extend(o.name for o in ops)
        return ops

    yield load
    for n in names:
        if n in custom.loaded():
            custom.unload(n)


def copy_of(d: dict, **changes) -> dict:
    out = json.loads(json.dumps(d))
    out.update(changes)
    return out


# ------------------------------------------------------------------- definitions ------


def test_load_from_path_string_and_list(loaded, tmp_path):
    path = tmp_path / "add.json"
    path.write_text(json.dumps([ADD]))
    for i, definition in enumerate((path, str(path), json.dumps([ADD]), [ADD])):
        op = loaded(copy_of(ADD, op=f"AddCustomT{i}") if i else definition, {
            f"AddCustomT{i}" if i else "AddCustomT": add_kernel})[0]
        assert hasattr(aclnn, op.desc.api + "GetWorkspaceSize") and hasattr(aclnn, op.desc.api)
    parsed = custom.parse(path)[0]
    assert parsed.snake == "add_custom_t" and parsed.c_names() == ["x", "y", "out"]
    assert [(int(a), int(b)) for (a, b) in [c[0] for c in parsed.combinations()]] == \
        [(int(acl.ACL_FLOAT16), int(acl.ACL_FORMAT_ND)), (int(acl.ACL_FLOAT), 2)]


def test_snake_and_camel_names():
    assert custom.snake_case("AddCustom") == "add_custom"
    assert custom.snake_case("LeakyReluCustom") == "leaky_relu_custom"
    assert custom.snake_case("MatMulV2Custom") == "mat_mul_v2_custom"
    # CANN 8.1.RC1's generated headers' file names
    assert custom.snake_case("MoeGatingTopKSoftmaxV2") == "moe_gating_top_k_softmax_v2"
    assert custom.snake_case("BidirectionLSTMV2") == "bidirection_lstmv2"
    assert custom.snake_case("AddRmsNormDynamicQuant") == "add_rms_norm_dynamic_quant"
    assert custom.camel("negative_slope") == "negativeSlope"
    d = custom.parse([{"op": "LeakyReluCustom", "input_desc": [
        {"name": "x", "param_type": "required", "type": ["float"]},
        {"name": "bias", "param_type": "optional", "type": ["float"]}],
        "output_desc": [{"name": "y", "type": ["float"]}, {"name": "mask", "type": ["bool"]}],
        "attr": [{"name": "negative_slope", "param_type": "optional", "type": "float",
                  "default_value": "0.0"}]}])[0]
    assert d.c_names() == ["x", "biasOptional", "negativeSlope", "yOut", "maskOut"]


BAD_DEFINITIONS = [
    ("[{", "not valid JSON"),
    ('{"op": 3}', "operator 0.op"),
    ([copy_of(ADD, op="lowerCase")], "capital letter"),
    ([copy_of(ADD, input_desc=[{"name": "x", "type": ["fp17"]}])],
     "AddCustomT.input_desc[0].type[0]: 'fp17' is not a type msOpGen accepts"),
    ([copy_of(ADD, input_desc=[{"name": "x", "param_type": "sometimes", "type": ["fp16"]}])],
     "AddCustomT.input_desc[0].param_type: 'sometimes'"),
    ([copy_of(ADD, input_desc=[{"name": "x", "type": ["fp16", "float", "bf16"],
                                "format": ["ND", "ND", "ND"]}])],
     "AddCustomT.output_desc[0].type: 2 entries, but 'x' has 3"),
    ([copy_of(ADD, input_desc=[{"name": "x", "type": ["fp16"], "format": ["ND", "ND"]}])],
     "'format' has 2 entries but 'type' has 1"),
    ([copy_of(ADD, input_desc=[{"name": "x", "type": ["fp16"], "format": ["NOPE"]}])],
     "'NOPE' is not a format"),
    ([copy_of(ADD, output_desc=[])], "at least one output"),
    ([copy_of(ADD, attr=[{"name": "alpha", "param_type": "optional", "type": "float"}])],
     "needs a 'default_value'"),
    ([copy_of(ADD, attr=[{"name": "alpha", "type": "double", "default_value": "1"}])],
     "AddCustomT.attr[0].type: 'double' is not one of"),
    ([copy_of(ADD, attr=[{"name": "alpha", "type": "int", "default_value": "1.5"}])],
     "AddCustomT.attr[0].default_value: '1.5' is not a value of type int"),
    ([copy_of(ADD, attr=[{"name": "x", "type": "int", "default_value": "1"}])],
     "AddCustomT.attr[0].name: the name 'x' is used twice among inputs, outputs and attributes "
     "(also input_desc[0].name)"),
    ([ADD, ADD], "defined twice"),
    (42, "expected a list of operators"),
]


def test_msopgen_spellings_of_cann_samples_are_read():
    """What CANN's own sample definitions write besides the guide's names: attribute types
    "string" / "list_int" / "list_float" / "list_bool", list defaults in braces, "value" for
    "default_value" with no param_type, and one format for several types."""
    d = {"op": "SpellCustom", "input_desc": [
        {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float16", "bfloat16"]}],
        "output_desc": [{"name": "y", "format": "ND", "type": ["float16", "bfloat16"]}],
        "attr": [
            {"name": "mode", "param_type": "optional", "type": "string", "default_value": "mean"},
            {"name": "pads", "param_type": "optional", "type": "list_int",
             "default_value": "{1, 2}"},
            {"name": "empty", "param_type": "optional", "type": "list_int", "default_value": "{}"},
            {"name": "ws", "param_type": "optional", "type": "list_float",
             "default_value": "[0.5]"},
            {"name": "fl", "param_type": "optional", "type": "list_bool",
             "default_value": "{true, false}"},
            {"name": "case_id", "type": "int", "value": 1}]}
    (op,) = custom.parse([d])
    assert [(a.name, a.type, a.param_type, a.default) for a in op.attrs] == [
        ("mode", "str", "optional", "mean"), ("pads", "listInt", "optional", (1, 2)),
        ("empty", "listInt", "optional", ()), ("ws", "listFloat", "optional", (0.5,)),
        ("fl", "listBool", "optional", (True, False)), ("case_id", "int", "optional", 1)]
    nd = int(aclnn.ACL_FORMAT_ND)
    assert op.inputs[0].formats == (nd, nd) and op.outputs[0].formats == (nd, nd)
    with pytest.raises(CustomOpError, match=r"attr\[0\]\.type: 'list_list_int' is not one of"):
        custom.parse([copy_of(d, attr=[{"name": "m", "type": "list_list_int",
                                        "default_value": "{{1}}"}])])


@pytest.mark.parametrize("definition,message", BAD_DEFINITIONS,
                         ids=[m[:30] for _, m in BAD_DEFINITIONS])
def test_bad_definitions_name_the_field(definition, message):
    with pytest.raises(CustomOpError) as err:
        custom.load(definition, {"AddCustomT": add_kernel})
    text = str(err.value)
    assert message in text, text
    assert "AddCustomT" not in custom.loaded()


def test_missing_file_missing_kernel_non_callable_twice_and_builtin(loaded, tmp_path):
    with pytest.raises(CustomOpError, match="cannot read the operator definition"):
        custom.load(tmp_path / "nope.json", {})
    with pytest.raises(CustomOpError, match="cannot read the operator definition .*null"):
        custom.load(str(tmp_path / "a\0.json"), {})
    with pytest.raises(CustomOpError, match=r"AddCustomT: no kernel: kernels has no entry "
                                            r"'AddCustomT' \(or 'add_custom_t'\)"):
        custom.load([ADD], {"Other": add_kernel})
    with pytest.raises(CustomOpError, match="the kernel is not callable"):
        custom.load([ADD], {"AddCustomT": 3})
    loaded([ADD], {"add_custom_t": add_kernel})  # the snake_case name works too
    with pytest.raises(CustomOpError, match="AddCustomT: already loaded"):
        custom.load([ADD], {"AddCustomT": add_kernel})
    with pytest.raises(CustomOpError, match="aclnnSoftmax is a built-in operator's name"):
        custom.load([copy_of(ADD, op="Softmax")], {"Softmax": add_kernel})
    # all or nothing: a failing second operator loads neither
    with pytest.raises(CustomOpError, match="no kernel"):
        custom.load([copy_of(ADD, op="FirstOk"), copy_of(ADD, op="SecondMissing")],
                    {"FirstOk": add_kernel})
    assert "FirstOk" not in custom.loaded() and not hasattr(aclnn, "aclnnFirstOk")


# -------------------------------------------------------------------- two phases ------


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_add_matches_numpy_and_phase2_returns_at_once(loaded, dev, stream, dtype):
    started = threading.Event()

    def slow_add(x, y, z):
        started.set()
        time.sleep(0.3)
        assert not x.flags.writeable and z.flags.writeable
        np.add(x, y, out=z)

    loaded([ADD], {"AddCustomT": slow_add})
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 33)).astype(dtype)
    b = rng.standard_normal((16, 33)).astype(dtype)
    _, x = dev.tensor(a)
    _, y = dev.tensor(b)
    pz, z = dev.tensor(np.zeros_like(a))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, y, z)
    assert (ws, ret) == (0, 0) and isinstance(ex, aclnn.aclOpExecutor)
    t0 = time.perf_counter()
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    assert time.perf_counter() - t0 < 0.15  # enqueued, not run
    assert acl.rt.synchronize_stream(stream) == 0
    assert started.is_set()
    golden = (a.astype(np.float64) + b.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(dev.download(pz, a.shape, dtype), golden)
    # single-use: consumed
    assert aclnn.aclnnAddCustomT(0, 0, ex, stream) == aclnn.ACLNN_ERR_PARAM_NULLPTR


def test_null_required_tensor_and_unlisted_combination(loaded, dev, stream):
    loaded([ADD], {"AddCustomT": add_kernel})
    _, x = dev.tensor(np.ones(4, np.float32))
    _, y16 = dev.tensor(np.ones(4, np.float16))
    _, z = dev.tensor(np.zeros(4, np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(None, x, z)
    assert ret == aclnn.ACLNN_ERR_PARAM_NULLPTR and ex is None
    assert "got null for argument x" in acl.get_recent_err_msg()
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, y16, z)
    assert ret == aclnn.ACLNN_ERR_PARAM_INVALID and ex is None
    msg = acl.get_recent_err_msg()
    assert "Tensor y has dtype/format FLOAT16/ND" in msg
    assert ("(x: FLOAT16/ND, y: FLOAT16/ND, out: FLOAT16/ND); (x: FLOAT/ND, y: FLOAT/ND, "
            "out: FLOAT/ND)") in msg, msg
    nz = aclnn.aclCreateTensor([4], aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_NCHW, [4],
                               z.data)
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, nz)
    assert ret == aclnn.ACLNN_ERR_PARAM_INVALID and "FLOAT/NCHW" in acl.get_recent_err_msg()
    with pytest.raises(TypeError, match="takes 3 arguments"):
        aclnn.aclnnAddCustomTGetWorkspaceSize(x, y16)
    with pytest.raises(TypeError, match="'x' must be an aclTensor"):
        aclnn.aclnnAddCustomTGetWorkspaceSize(np.ones(3), x, z)


FULL = {"op": "FullCustomT", "input_desc": [
    {"name": "x", "param_type": "required", "type": ["float"]},
    {"name": "bias", "param_type": "optional", "type": ["float"]},
    {"name": "extras", "param_type": "dynamic", "type": ["float"]}],
    "output_desc": [{"name": "y", "type": ["float"]}],
    "attr": [
    {"name": "scale", "param_type": "optional", "type": "float", "default_value": "2.0"},
    {"name": "repeat", "param_type": "required", "type": "int"},
    {"name": "negate", "param_type": "optional", "type": "bool", "default_value": "false"},
    {"name": "mode", "param_type": "optional", "type": "str", "default_value": "sum"},
    {"name": "axes", "param_type": "optional", "type": "listInt", "default_value": "[0]"},
    {"name": "weights", "param_type": "optional", "type": "listFloat", "default_value": "[]"},
    {"name": "flags", "param_type": "optional", "type": "listBool", "default_value": []}]}


def full_kernel(x, bias, extras, y, *, scale, repeat, negate, mode, axes, weights, flags):
    acc = x * scale * repeat + (0 if bias is None else bias)
    for e, w in zip(extras, list(weights) + [1.0] * len(extras)):
        acc = acc + w * e
    if negate:
        acc = -acc
    assert mode in ("sum", "other") and isinstance(axes, tuple) and isinstance(flags, tuple)
    y[...] = acc


def test_optional_dynamic_and_every_attribute_type(loaded, dev, stream):
    loaded([FULL], {"full_custom_t": full_kernel})
    a = np.arange(6, dtype=np.float32)
    _, x = dev.tensor(a)
    _, b = dev.tensor(np.full(6, 0.5, np.float32))
    e1, e2 = np.full(6, 10, np.float32), np.full(6, 100, np.float32)
    lst = aclnn.aclCreateTensorList([dev.tensor(e1)[1], dev.tensor(e2)[1]])
    py, y = dev.tensor(np.zeros(6, np.float32))
    names = custom.loaded()["FullCustomT"].desc.c_names()
    assert names == ["x", "biasOptional", "extras", "scale", "repeat", "negate", "modeOptional",
                     "axesOptional", "weightsOptional", "flagsOptional", "out"]
    # absent optional input and default attributes
    ws, ex, ret = aclnn.aclnnFullCustomTGetWorkspaceSize(x, None, lst, None, 3, None, None, None,
                                                         None, None, y)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnFullCustomT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden = a.astype(np.float64) * 2.0 * 3 + 10 + 100
    np.testing.assert_array_equal(dev.download(py, 6, np.float32), golden)
    # every attribute given
    ws, ex, ret = aclnn.aclnnFullCustomTGetWorkspaceSize(
        x, b, lst, 0.5, 1, True, "other", aclnn.aclCreateIntArray([1, 2]),
        aclnn.aclCreateFloatArray([0.5, 0.25]), aclnn.aclCreateBoolArray([True]), y)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnFullCustomT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden = -(a.astype(np.float64) * 0.5 + 0.5 + 0.5 * 10 + 0.25 * 100)
    np.testing.assert_array_equal(dev.download(py, 6, np.float32), golden)
    # a required attribute missing; an attribute of the wrong type
    ws, ex, ret = aclnn.aclnnFullCustomTGetWorkspaceSize(x, None, lst, None, None, None, None,
                                                         None, None, None, y)
    assert ret == aclnn.ACLNN_ERR_PARAM_NULLPTR and "attribute repeat" in \
        acl.get_recent_err_msg()
    with pytest.raises(TypeError, match="'repeat' .int64_t. must be an int"):
        aclnn.aclnnFullCustomTGetWorkspaceSize(x, None, lst, None, 1.5, None, None, None, None,
                                               None, y)
    with pytest.raises(TypeError, match="'extras' must be an aclTensorList"):
        aclnn.aclnnFullCustomTGetWorkspaceSize(x, None, x, None, 1, None, None, None, None,
                                               None, y)


def test_repeatable_executor_rebinds_inputs_outputs_and_dynamic(loaded, dev, stream):
    loaded([FULL], {"FullCustomT": full_kernel})
    _, x = dev.tensor(np.ones(4, np.float32))
    e = dev.tensor(np.full(4, 10, np.float32))[1]
    lst = aclnn.aclCreateTensorList([e])
    py, y = dev.tensor(np.zeros(4, np.float32))
    ws, ex, ret = aclnn.aclnnFullCustomTGetWorkspaceSize(x, None, lst, 1.0, 1, None, None, None,
                                                         None, None, y)
    assert ret == 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnFullCustomT(0, 0, ex, stream) == 0
    x2 = dev.upload(np.full(4, 3, np.float32))
    e2 = dev.upload(np.full(4, 1000, np.float32))
    y2 = dev.malloc(16)
    assert aclnn.aclSetInputTensorAddr(ex, 0, x, x2) == 0
    assert aclnn.aclSetDynamicTensorAddr(ex, 2, 0, lst, e2) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 0, y, y2) == 0
    assert aclnn.aclnnFullCustomT(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(py, 4, np.float32), [11] * 4)  # first launch
    np.testing.assert_array_equal(dev.download(y2, 4, np.float32), [1003] * 4)
    # aclSetDynamicTensorAddr on an input that is not dynamic, or out of range
    assert aclnn.aclSetDynamicTensorAddr(ex, 0, 0, lst, e2) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert "is not a dynamic input" in acl.get_recent_err_msg()
    assert aclnn.aclSetDynamicTensorAddr(ex, 2, 1, lst, e2) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_raising_kernel_is_the_streams_fault_and_the_runtime_stays_usable(loaded, dev,
                                                                         stream):
    calls = []

    def kernel(x, y, z):
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("the kernel's own bug")
        np.add(x, y, out=z)

    loaded([ADD], {"AddCustomT": kernel})
    _, x = dev.tensor(np.ones(4, np.float32))
    pz, z = dev.tensor(np.zeros(4, np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    ws, ex2, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclnnAddCustomT(0, ws, ex2, stream) == 0  # skipped after the fault
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "AddCustomT" in msg and "ZeroDivisionError: the kernel's own bug" in msg, msg
    assert len(calls) == 1
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(pz, 4, np.float32), [2] * 4)
    assert not custom._jobs  # the skipped launch's job was released


def test_kernel_runs_in_stream_order(loaded, dev, stream):
    """A memcpy_async before the launch is seen by the kernel; a memcpy_async after it sees the
    kernel's output."""
    loaded([ADD], {"AddCustomT": lambda x, y, z: np.multiply(x, 2, out=z)})
    host_in = np.arange(1024, dtype=np.float32)
    host_out = np.zeros(1024, np.float32)
    px, x = dev.tensor(np.zeros(1024, np.float32))
    pz, z = dev.tensor(np.zeros(1024, np.float32))
    assert acl.rt.memcpy_async(px, 4096, acl.util.numpy_to_ptr(host_in), 4096, H2D,
                               stream) == 0
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    assert acl.rt.memcpy_async(acl.util.numpy_to_ptr(host_out), 4096, pz, 4096,
                               acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(host_out, host_in * 2)


def test_strided_views_reach_the_kernel_as_views(loaded, dev, stream):
    seen = {}

    def kernel(x, y, z):
        seen["x"] = (x.shape, x.strides)
        z[...] = x + y

    loaded([ADD], {"AddCustomT": kernel})
    storage = np.arange(24, dtype=np.float32)
    px, x = dev.view(storage, [3, 4], [1, 6], 2)  # a transposed, offset view
    _, y = dev.tensor(np.ones((3, 4), np.float32))
    pz, z = dev.tensor(np.zeros((3, 4), np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, y, z)
    assert ret == 0
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden = np.lib.stride_tricks.as_strided(storage[2:], (3, 4), (4, 24)) + 1
    np.testing.assert_array_equal(dev.download(pz, (3, 4), np.float32), golden)
    assert seen["x"] == ((3, 4), (4, 24))


def test_threads_and_streams(loaded):
    """4 threads, each with 2 streams, launch the operator 10 times each and check every
    result."""
    loaded([ADD], {"AddCustomT": lambda x, y, z: np.add(x, y, out=z)})
    errors: list = []

    def worker(k: int):
        try:
            assert acl.rt.set_device(0) == 0
            streams = [acl.rt.create_stream()[0] for _ in range(2)]
            bufs = []
            for i in range(10):
                a = np.full(257, k * 100 + i, np.float32)
                ptrs = []
                tensors = []
                for arr in (a, a, np.zeros_like(a)):
                    p, _ = acl.rt.malloc(arr.nbytes, 0)
                    acl.rt.memcpy(p, arr.nbytes, acl.util.numpy_to_ptr(arr), arr.nbytes, H2D)
                    ptrs.append(p)
                    tensors.append(aclnn.aclCreateTensor([257], aclnn.ACL_FLOAT, None, 0,
                                                         aclnn.ACL_FORMAT_ND, [257], p))
                ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(*tensors)
                assert ret == 0
                assert aclnn.aclnnAddCustomT(0, ws, ex, streams[i % 2]) == 0
                bufs.append((ptrs, 2 * a))
            for s in streams:
                assert acl.rt.synchronize_stream(s) == 0
                assert acl.rt.destroy_stream(s) == 0
            for ptrs, golden in bufs:
                out = np.empty(257, np.float32)
                acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, ptrs[2], out.nbytes,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST)
                np.testing.assert_array_equal(out, golden)
                for p in ptrs:
                    acl.rt.free(p)
            assert acl.rt.reset_device(0) == 0
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


def test_freed_tensor_before_the_stream_reaches_the_kernel(loaded, dev, stream, sleep_on):
    """A tensor freed after phase 2 but before the stream runs the kernel: the kernel does not
    run and the stream's fault names the tensor."""
    ran = []
    loaded([ADD], {"AddCustomT": lambda x, y, z: ran.append(1)})
    px = dev.malloc(16)
    x = aclnn.aclCreateTensor([4], aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, [4], px)
    _, z = dev.tensor(np.zeros(4, np.float32))
    sleep_on(stream, 300_000)  # the stream is busy for 0.3 s
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    assert acl.rt.free(px) == 0
    dev.ptrs.remove(px)
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_AICORE_EXCEPTION
    msg = acl.get_recent_err_msg()
    assert "'x' bytes" in msg and "not inside a live device allocation" in msg, msg
    assert not ran


def test_unload_keeps_built_executors_working(dev, stream):
    custom.load([ADD], {"AddCustomT": add_kernel})
    _, x = dev.tensor(np.ones(4, np.float32))
    pz, z = dev.tensor(np.zeros(4, np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    launch = aclnn.aclnnAddCustomT
    custom.unload("AddCustomT")
    assert not hasattr(aclnn, "aclnnAddCustomT")
    assert launch(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(pz, 4, np.float32), [2] * 4)
    with pytest.raises(CustomOpError, match="not loaded"):
        custom.unload("AddCustomT")


def test_unload_runs_what_is_enqueued_and_a_reload_refuses_old_executors(dev, stream,
                                                                          sleep_on):
    """docs/custom_ops.md: launches enqueued before an unload run their kernel; an operator
    loaded again does not run the executors built by the one it replaced."""
    custom.load([ADD], {"AddCustomT": add_kernel})
    _, x = dev.tensor(np.ones(4, np.float32))
    pz, z = dev.tensor(np.zeros(4, np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    sleep_on(stream, 200_000)  # the stream is busy while the operator is unloaded
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    custom.unload("AddCustomT")
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(pz, 4, np.float32), [2] * 4)
    custom.load([ADD], {"AddCustomT": lambda x, y, z: np.subtract(x, y, out=z)})
    try:
        assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 161002
        msg = acl.get_recent_err_msg()
        assert "AddCustomT" in msg and "unloaded" in msg, msg
        ws2, ex2, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
        assert aclnn.aclnnAddCustomT(0, ws2, ex2, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        np.testing.assert_array_equal(dev.download(pz, 4, np.float32), [0] * 4)
    finally:
        aclnn.aclDestroyAclOpExecutor(ex)
        custom.unload("AddCustomT")


def test_docs_python_example_runs_as_written(tmp_path):
    """docs/custom_ops.md's "From Python" block is a complete program: run as written, in a
    fresh interpreter, it prints "test pass"."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "custom_ops.md").read_text()
    section = doc.split("## From Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "example.py").write_text(block)
    proc = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "test pass"


def test_stream_destroyed_by_another_thread_with_kernels_queued(loaded, dev):
    """destroy_stream from another thread while custom kernels are queued: the queued kernels
    still run (destroy lets them finish), their results are right, nothing hangs."""
    gate = threading.Event()

    def kernel(x, y, z):
        gate.wait(5)
        np.add(x, y, out=z)

    loaded([ADD], {"AddCustomT": kernel})
    assert acl.rt.set_device(0) == 0
    st, ret = acl.rt.create_stream()
    outs = []
    for i in range(5):
        _, x = dev.tensor(np.full(64, i, np.float32))
        pz, z = dev.tensor(np.zeros(64, np.float32))
        ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
        assert aclnn.aclnnAddCustomT(0, ws, ex, st) == 0
        outs.append((pz, 2 * i))
    done = []
    killer = threading.Thread(target=lambda: done.append(acl.rt.destroy_stream(st)))
    killer.start()
    time.sleep(0.05)
    gate.set()
    killer.join(30)
    assert done == [0]
    for pz, v in outs:
        np.testing.assert_array_equal(dev.download(pz, 64, np.float32), [v] * 64)
    assert acl.rt.reset_device(0) == 0


def test_executor_destroyed_by_another_thread_during_launches(loaded, dev, stream):
    """Launch a repeatable executor from one thread while another destroys it: every launch
    either runs (and is right) or is refused with the destroyed-executor code."""
    loaded([ADD], {"AddCustomT": add_kernel})
    _, x = dev.tensor(np.ones(256, np.float32))
    pz, z = dev.tensor(np.zeros(256, np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    codes = []

    def launcher():
        for _ in range(200):
            codes.append(aclnn.aclnnAddCustomT(0, ws, ex, stream))

    t = threading.Thread(target=launcher)
    t.start()
    time.sleep(0.002)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    t.join(60)
    assert set(codes) <= {0, aclnn.ACLNN_ERR_PARAM_NULLPTR}
    assert acl.rt.synchronize_stream(stream) == 0
    acl.get_recent_err_msg()
    np.testing.assert_array_equal(dev.download(pz, 256, np.float32), [2] * 256)


def test_self_overlapping_output_is_refused(loaded, dev, stream):
    """An output whose elements alias (strides [1, 1]) would make the kernel's writes race: 161002
    at phase 1, as for the built-in operators."""
    loaded([ADD], {"AddCustomT": add_kernel})
    _, x = dev.tensor(np.ones((4, 8), np.float32))
    pz = dev.malloc(4 * 16)
    z = aclnn.aclCreateTensor([4, 8], aclnn.ACL_FLOAT, [1, 1], 0, aclnn.ACL_FORMAT_ND, [16], pz)
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, z)
    assert ret == aclnn.ACLNN_ERR_PARAM_INVALID and ex is None
    assert "Tensor out" in (msg := acl.get_recent_err_msg()) and "overlaps itself" in msg, msg


KERNEL_CALLS_RUNTIME = r"""
import sys
import numpy as np
from aclnn_py import acl, aclnn, custom

seen = {}

def kernel(x, y, z):
    # what a kernel must not do: allocate or free device memory (it runs under the device
    # memory table's read lock); a synchronous copy from device memory, which reads the table
    # the kernel runs on the stream's worker or on the synchronizing thread, whichever gets
    # to it: a current device in either, so that aclrtMalloc reaches the device memory table
    acl.rt.set_device(0)
    ptr, ret = acl.rt.malloc(64, 0)
    seen["malloc"] = ret
    seen["free"] = acl.rt.free(int(sys.argv[1]))
    host = np.zeros(4, np.float32)
    seen["memcpy"] = acl.rt.memcpy(acl.util.numpy_to_ptr(host), 16, int(sys.argv[2]), 16,
                                   acl.ACL_MEMCPY_DEVICE_TO_HOST)
    np.add(x, y, out=z)

custom.load([ADD], {"AddCustomT": kernel})
acl.init()
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
"""


def test_kernel_that_calls_the_runtime_gets_codes_not_a_hang(tmp_path):
    """A kernel runs while its stream holds the device memory table for reading: aclrtMalloc and
    aclrtFree from it return 207000 (ACL_ERROR_RT_FEATURE_NOT_SUPPORT) at once instead of
    waiting for ever, and reads of the table (a synchronous copy) work; while another thread
    frees memory at the same moment. In a subprocess with a timeout: a hang fails the test."""
    import subprocess
    import sys
    import textwrap

    prog = tmp_path / "prog.py"
    prog.write_text(f"ADD = {ADD!r}\n" + KERNEL_CALLS_RUNTIME + textwrap.dedent("""
        a = np.ones(4, np.float32)
        ptrs = []
        for _ in range(3):
            p, _ = acl.rt.malloc(16, 0)
            acl.rt.memcpy(p, 16, acl.util.numpy_to_ptr(a), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            ptrs.append(p)
        victim, _ = acl.rt.malloc(64, 0)
        sys.argv[1:] = [str(victim), str(ptrs[0])]
        t = [aclnn.aclCreateTensor([4], 0, None, 0, 2, [4], p) for p in ptrs]
        ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(*t)
        assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
        other, _ = acl.rt.malloc(64, 0)
        assert acl.rt.free(other) == 0  # a free from this thread meanwhile
        assert acl.rt.synchronize_stream(stream) == 0
        out = np.zeros(4, np.float32)
        acl.rt.memcpy(acl.util.numpy_to_ptr(out), 16, ptrs[2], 16,
                      acl.ACL_MEMCPY_DEVICE_TO_HOST)
        print(seen["malloc"], seen["free"], seen["memcpy"], out.tolist())
        print(acl.get_recent_err_msg())
        """))
    proc = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    first, *rest = proc.stdout.splitlines()
    assert first == "207000 207000 0 [2.0, 2.0, 2.0, 2.0]"


# ------------------------------------------------------- CANN's generated names ------------
# Each definition below is a CANN operator's (its inputs, attributes and outputs with their
# param_type, as CANN 8.1.RC1's operator information declares them; one type per tensor), and
# each prototype the parameters of the header CANN generated for it
# (opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop/aclnn_<op>.h; AddCustom's from
# CANN's Ascend C sample, MoeSoftMaxTopk's from cann-ops). docs/custom_ops.md, "Parameter
# names", states the rules these show.


def cann_op(op: str, ins: list, attrs: list, outs: list) -> dict:
    """A definition: ``ins`` / ``outs`` are names, ``name?`` for optional, ``name*`` for
    dynamic; ``attrs`` are (name, type, "required" or a default value)."""
    def tensor(n: str) -> dict:
        kind = {"?": "optional", "*": "dynamic"}.get(n[-1], "required")
        return {"name": n.rstrip("?*"), "param_type": kind, "type": ["float"]}

    def attr(a: tuple) -> dict:
        name, atype, default = a
        if default == "required":
            return {"name": name, "param_type": "required", "type": atype}
        return {"name": name, "param_type": "optional", "type": atype, "default_value": default}

    return {"op": op, "input_desc": [tensor(n) for n in ins],
            "attr": [attr(a) for a in attrs], "output_desc": [tensor(n) for n in outs]}


CANN_PROTOTYPES = [
    (cann_op("AddCustom", ["x", "y"], [], ["z"]),
     "const aclTensor *x, const aclTensor *y, const aclTensor *out"),
    (cann_op("MoeSoftMaxTopk", ["x"], [("k", "int", "required")], ["y", "indices"]),
     "const aclTensor *x, int64_t k, const aclTensor *yOut, const aclTensor *indicesOut"),
    (cann_op("MoeGatingTopKSoftmaxV2", ["x", "finished?"],
             [("k", "int", "required"), ("renorm", "int", "0"),
              ("output_softmax_result_flag", "bool", "false")],
             ["y", "expert_idx", "softmax_result?"]),
     "const aclTensor *x, const aclTensor *finishedOptional, int64_t k, int64_t renorm, "
     "bool outputSoftmaxResultFlag, const aclTensor *yOut, const aclTensor *expertIdxOut, "
     "const aclTensor *softmaxResultOutOptional"),
    (cann_op("CrossEntropyLoss", ["input", "target", "weight?"],
             [("reduction", "str", "mean"), ("ignore_index", "int", "-100"),
              ("label_smoothing", "float", "0.0"), ("lse_square_scale_for_zloss", "float", "0"),
              ("return_zloss", "bool", "false")],
             ["loss", "log_prob", "zloss", "lse_for_zloss"]),
     "const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional, "
     "char *reductionOptional, int64_t ignoreIndex, double labelSmoothing, "
     "double lseSquareScaleForZloss, bool returnZloss, const aclTensor *lossOut, "
     "const aclTensor *logProbOut, const aclTensor *zlossOut, const aclTensor *lseForZlossOut"),
    (cann_op("MoeTokenUnpermute", ["permuted_tokens", "sorted_indices", "probs?"],
             [("padded_mode", "bool", "false"), ("restore_shape", "listInt", "[1, 1]")],
             ["unpermuted_tokens"]),
     "const aclTensor *permutedTokens, const aclTensor *sortedIndices, "
     "const aclTensor *probsOptional, bool paddedMode, const aclIntArray *restoreShapeOptional, "
     "const aclTensor *out"),
    (cann_op("AddLora", ["y", "x", "weightB", "indices", "weightA?"],
             [("layer_idx", "int", "0"), ("scale", "float", "1e-3"), ("y_offset", "int", "0"),
              ("y_slice_size", "int", "-1")], ["y_out"]),
     "const aclTensor *y, const aclTensor *x, const aclTensor *weightB, "
     "const aclTensor *indices, const aclTensor *weightAOptional, int64_t layerIdx, "
     "double scale, int64_t yOffset, int64_t ySliceSize, const aclTensor *out"),
    (cann_op("SwinTransformerLnQkvQuant",
             ["x", "gamma", "beta", "weight", "bias", "quant_scale", "quant_offset",
              "dequant_scale"],
             [("head_num", "int", "required"), ("seq_length", "int", "required"),
              ("epsilon", "float", "required"), ("ori_height", "int", "required"),
              ("ori_weight", "int", "required"), ("h_win_size", "int", "required"),
              ("w_win_size", "int", "required"), ("weight_transpose", "bool", "required")],
             ["query_output", "key_output", "value_output"]),
     "const aclTensor *x, const aclTensor *gamma, const aclTensor *beta, "
     "const aclTensor *weight, const aclTensor *bias, const aclTensor *quantScale, "
     "const aclTensor *quantOffset, const aclTensor *dequantScale, int64_t headNum, "
     "int64_t seqLength, double epsilon, int64_t oriHeight, int64_t oriWeight, "
     "int64_t hWinSize, int64_t wWinSize, bool weightTranspose, "
     "const aclTensor *queryOutputOut, const aclTensor *keyOutputOut, "
     "const aclTensor *valueOutputOut"),
    (cann_op("AddRmsNormDynamicQuant", ["x1", "x2", "gamma", "smooth_scale1?", "smooth_scale2?"],
             [("epsilon", "float", "1e-6")], ["y1", "y2", "x", "scale1", "scale2"]),
     "const aclTensor *x1, const aclTensor *x2, const aclTensor *gamma, "
     "const aclTensor *smoothScale1Optional, const aclTensor *smoothScale2Optional, "
     "double epsilon, const aclTensor *y1Out, const aclTensor *y2Out, const aclTensor *xOut, "
     "const aclTensor *scale1Out, const aclTensor *scale2Out"),
    (cann_op("MoeInitRoutingQuantV2", ["x", "expert_idx", "scale?", "offset?"],
             [("active_num", "int", "-1"), ("expert_capacity", "int", "-1"),
              ("expert_num", "int", "-1"), ("drop_pad_mode", "int", "0"),
              ("expert_tokens_count_or_cumsum_flag", "int", "0"),
              ("expert_tokens_before_capacity_flag", "bool", "false"),
              ("quant_mode", "int", "0")],
             ["expanded_x", "expanded_row_idx", "expert_tokens_count_or_cumsum?",
              "expert_tokens_before_capacity?", "dynamic_quant_scale?"]),
     "const aclTensor *x, const aclTensor *expertIdx, const aclTensor *scaleOptional, "
     "const aclTensor *offsetOptional, int64_t activeNum, int64_t expertCapacity, "
     "int64_t expertNum, int64_t dropPadMode, int64_t expertTokensCountOrCumsumFlag, "
     "bool expertTokensBeforeCapacityFlag, int64_t quantMode, const aclTensor *expandedXOut, "
     "const aclTensor *expandedRowIdxOut, "
     "const aclTensor *expertTokensCountOrCumsumOutOptional, "
     "const aclTensor *expertTokensBeforeCapacityOutOptional, "
     "const aclTensor *dynamicQuantScaleOutOptional"),
    (cann_op("DequantBias", ["x", "weight_scale", "activate_scale?", "bias?"],
             [("output_dtype", "int", "required")], ["y"]),
     "const aclTensor *x, const aclTensor *weightScale, const aclTensor *activateScaleOptional, "
     "const aclTensor *biasOptional, int64_t outputDtype, const aclTensor *out"),
    # in-place (ref) parameters: an input and an output of one name
    # dynamic inputs and outputs: aclTensorList
    (cann_op("ForeachAddList", ["x1*", "x2*", "alpha"], [], ["y*"]),
     "const aclTensorList *x1, const aclTensorList *x2, const aclTensor *alpha, "
     "const aclTensorList *out"),
    (cann_op("ApplyRotaryPosEmb", ["query", "key", "cos", "sin"], [("layout", "int", "1")],
             ["query", "key"]),
     "aclTensor *queryRef, aclTensor *keyRef, const aclTensor *cos, const aclTensor *sin, "
     "int64_t layout"),
    (cann_op("GroupedMatmulAdd", ["x", "weight", "group_list", "y"],
             [("transpose_x", "bool", "false"), ("transpose_weight", "bool", "true"),
              ("group_type", "int", "2")], ["y"]),
     "const aclTensor *x, const aclTensor *weight, const aclTensor *groupList, aclTensor *yRef, "
     "bool transposeX, bool transposeWeight, int64_t groupType"),
    (cann_op("DequantRopeQuantKvcache",
             ["x", "cos", "sin", "k_cache", "v_cache", "indices", "scale_k", "scale_v",
              "offset_k?", "offset_v?", "weight_scale?", "activation_scale?", "bias?"],
             [("size_splits", "listInt", "required"), ("quant_mode", "str", "static"),
              ("layout", "str", "BSND"), ("kv_output", "bool", "false"),
              ("cache_mode", "str", "contiguous")],
             ["q", "k", "v", "k_cache", "v_cache"]),
     "const aclTensor *x, const aclTensor *cos, const aclTensor *sin, aclTensor *kCacheRef, "
     "aclTensor *vCacheRef, const aclTensor *indices, const aclTensor *scaleK, "
     "const aclTensor *scaleV, const aclTensor *offsetKOptional, "
     "const aclTensor *offsetVOptional, const aclTensor *weightScaleOptional, "
     "const aclTensor *activationScaleOptional, const aclTensor *biasOptional, "
     "const aclIntArray *sizeSplits, char *quantModeOptional, char *layoutOptional, "
     "bool kvOutput, char *cacheModeOptional, const aclTensor *qOut, const aclTensor *kOut, "
     "const aclTensor *vOut"),
]


def c_prototype(text: str) -> list[tuple[str, str]]:
    """(type without spaces, name) of each parameter of a C prototype's parameter list."""
    out = []
    for p in text.split(","):
        m = re.fullmatch(r"\s*(.*?[\s*])(\w+)\s*", p)
        assert m is not None, p
        out.append((re.sub(r"\s+", "", m.group(1)), m.group(2)))
    return out


@pytest.mark.parametrize("definition,prototype", CANN_PROTOTYPES,
                         ids=[d["op"] for d, _ in CANN_PROTOTYPES])
def test_generated_names_equal_canns_headers(definition, prototype):
    desc = custom.parse([definition])[0]
    want = c_prototype(prototype)
    assert desc.c_names() == [n for _, n in want]
    header = opgen.header(desc)
    sig = re.search(rf"aclnnStatus aclnn{desc.op}GetWorkspaceSize\((.*?)\);", header, re.S)
    assert sig is not None, header
    assert c_prototype(sig.group(1)) == want + [("uint64_t*", "workspaceSize"),
                                                ("aclOpExecutor**", "executor")]


def test_camel_case_keeps_the_names_own_letters():
    # CANN's headers: weightB stays weightB (aclnn_add_lora.h), h_win_size -> hWinSize
    # (aclnn_swin_transformer_ln_qkv_quant.h), smooth_scale1 -> smoothScale1
    # (aclnn_add_rms_norm_dynamic_quant.h), roundMode stays roundMode (aclnn_foreach_round_
    # off_number.h)
    assert [custom.camel(n) for n in ("weightB", "h_win_size", "smooth_scale1", "roundMode",
                                      "x", "lse_for_zloss")] == \
        ["weightB", "hWinSize", "smoothScale1", "roundMode", "x", "lseForZloss"]


def test_ref_parameters_the_emulator_refuses():
    # a ref parameter is one tensor: a required input and a required output of equal types
    d = cann_op("RefT", ["x?"], [], ["x"])
    with pytest.raises(CustomOpError, match=r"RefT.output_desc\[0\].name: the output 'x' has "
                       r"the name of input_desc\[0\] \(in CANN's generator an in-place \(ref\) "
                       r"parameter, 'xRef'\); .* not optional / required"):
        custom.parse([d])
    d = cann_op("RefT", ["x"], [], ["x"])
    d["output_desc"][0]["type"] = ["int32"]
    with pytest.raises(CustomOpError, match=r"RefT.output_desc\[0\].name: .* but other types "
                       "or formats"):
        custom.parse([d])
    d = cann_op("RefT", ["x"], [("x", "int", "1")], ["x"])
    with pytest.raises(CustomOpError, match=r"RefT.attr\[0\].name: the name 'x' is used twice .*"
                       r"\(also output_desc\[0\].name\)"):
        custom.parse([d])
    d = cann_op("RefT", ["x*"], [], ["x*"])
    with pytest.raises(CustomOpError, match=r"RefT.output_desc\[0\].name: .* not dynamic / "
                       "dynamic"):
        custom.parse([d])


# ------------------------------------------------------------- optional outputs ------------

TOPK = cann_op("TopkOptT", ["x"], [("k", "int", "required")], ["y", "indices", "extra?"])
TOPK["output_desc"][1]["type"] = ["int32"]


def test_optional_output_may_be_null_and_reaches_the_kernel_as_none(loaded, dev, stream):
    seen = []

    def kernel(x, y, indices, extra, *, k):
        seen.append(extra is None)
        y[...] = x * k
        indices[...] = np.arange(x.size, dtype=np.int32)
        if extra is not None:
            extra[...] = x + 1

    loaded([TOPK], {"TopkOptT": kernel})
    assert custom.loaded()["TopkOptT"].desc.c_names() == [
        "x", "k", "yOut", "indicesOut", "extraOutOptional"]
    assert list(inspect.signature(aclnn.aclnnTopkOptTGetWorkspaceSize).parameters) == [
        "x", "k", "yOut", "indicesOut", "extraOutOptional"]
    a = np.arange(5, dtype=np.float32)
    _, x = dev.tensor(a)
    py, y = dev.tensor(np.zeros(5, np.float32))
    pi, ind = dev.tensor(np.zeros(5, np.int32))
    pe, extra = dev.tensor(np.zeros(5, np.float32))
    ws, ex, ret = aclnn.aclnnTopkOptTGetWorkspaceSize(x, 3, y, ind, None)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnTopkOptT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert seen == [True]
    np.testing.assert_array_equal(dev.download(py, 5, np.float32), a.astype(np.float64) * 3)
    np.testing.assert_array_equal(dev.download(pi, 5, np.int32), [0, 1, 2, 3, 4])
    ws, ex, ret = aclnn.aclnnTopkOptTGetWorkspaceSize(x, 2, y, ind, extra)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnTopkOptT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert seen == [True, False]
    np.testing.assert_array_equal(dev.download(pe, 5, np.float32), a.astype(np.float64) + 1)
    # a required output stays required; a wrong dtype of the optional one is still checked
    ws, ex, ret = aclnn.aclnnTopkOptTGetWorkspaceSize(x, 2, None, ind, extra)
    assert ret == aclnn.ACLNN_ERR_PARAM_NULLPTR
    assert "got null for argument yOut" in acl.get_recent_err_msg()
    ws, ex, ret = aclnn.aclnnTopkOptTGetWorkspaceSize(x, 2, y, ind, ind)
    assert ret == aclnn.ACLNN_ERR_PARAM_INVALID
    assert "Tensor extraOutOptional has dtype/format INT32/ND" in acl.get_recent_err_msg()
    with pytest.raises(TypeError, match="'extraOutOptional' must be an aclTensor or None"):
        aclnn.aclnnTopkOptTGetWorkspaceSize(x, 2, y, ind, 3)


def test_absent_optional_output_takes_no_output_index(loaded, dev, stream):
    """aclSetOutputTensorAddr counts the outputs given, as aclSetInputTensorAddr counts the
    inputs given: with extraOutOptional null, index 1 is indicesOut and 2 is out of range."""
    def kernel(x, y, indices, extra, *, k):
        y[...] = x * k
        indices[...] = 7 if extra is None else 8

    loaded([TOPK], {"TopkOptT": kernel})
    _, x = dev.tensor(np.ones(3, np.float32))
    _, y = dev.tensor(np.zeros(3, np.float32))
    _, ind = dev.tensor(np.zeros(3, np.int32))
    ws, ex, ret = aclnn.aclnnTopkOptTGetWorkspaceSize(x, 1, y, ind, None)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    y2, i2 = dev.malloc(12), dev.malloc(12)
    assert aclnn.aclSetOutputTensorAddr(ex, 0, y, y2) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 1, ind, i2) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 2, ind, i2) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert "output index 2 is out of range for aclnnTopkOptT (0=yOut, 1=indicesOut)" in \
        acl.get_recent_err_msg()
    assert aclnn.aclnnTopkOptT(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(i2, 3, np.int32), [7, 7, 7])
    np.testing.assert_array_equal(dev.download(y2, 3, np.float32), [1, 1, 1])
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    # given: index 2 is extraOutOptional
    _, extra = dev.tensor(np.zeros(3, np.float32))
    ws, ex, ret = aclnn.aclnnTopkOptTGetWorkspaceSize(x, 1, y, ind, extra)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    e2 = dev.malloc(12)
    assert aclnn.aclSetOutputTensorAddr(ex, 2, extra, e2) == 0
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_single_optional_output_is_out_optional(loaded, dev, stream):
    seen = []

    def kernel(x, out):
        seen.append(out is None)
        if out is not None:
            out[...] = -x

    loaded([cann_op("MaybeNegT", ["x"], [], ["y?"])], {"MaybeNegT": kernel})
    assert custom.loaded()["MaybeNegT"].desc.c_names() == ["x", "outOptional"]
    _, x = dev.tensor(np.ones(2, np.float32))
    ws, ex, ret = aclnn.aclnnMaybeNegTGetWorkspaceSize(x, None)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnMaybeNegT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert seen == [True]


# --------------------------------------------- definitions the compiler would reject --------

def with_input(name: str, **extra) -> dict:
    d = copy_of(ADD)
    d["input_desc"][1] = {"name": name, "type": ["fp16", "float"], **extra}
    return d


def with_attr(name: str, atype: str = "int", default="1") -> dict:
    return copy_of(ADD, attr=[{"name": name, "type": atype, "default_value": default}])


REFUSED_NAMES = [
    # C and C++ keywords, after camelCase too
    *[(with_input(k), "input_desc[1].name", repr(k), "keyword of C or C++")
      for k in ("int", "new", "class", "delete", "this", "auto", "register", "restrict",
                "typename", "and", "bool", "true", "nullptr", "volatile", "concept",
                "requires", "constinit", "char", "signed", "asm")],
    (with_attr("do"), "attr[0].name", "'do'", "keyword of C or C++"),
    (with_attr("mutable"), "attr[0].name", "'mutable'", "keyword of C or C++"),
    # after camelCase: an optional pointer attribute "new" is newOptional (fine), but a
    # required one is new
    (copy_of(ADD, attr=[{"name": "new", "type": "str", "param_type": "required"}]),
     "attr[0].name", "'new'", "keyword of C or C++"),
    # names the generated code uses, macros of the C headers a host program includes
    *[(with_input(k), "input_desc[1].name", repr(k), "the generated header")
      for k in ("workspace", "workspaceSize", "executor", "stream", "aclTensor",
                "aclOpExecutor", "aclnnStatus", "NULL", "EOF", "errno", "NAN", "I")],
    (with_attr("workspace_size"), "attr[0].name", "'workspaceSize'", "the generated header"),
    (with_attr("acl_tensor"), "attr[0].name", "'aclTensor'", "the generated header"),
    # two generated names equal
    (with_input("out"), "output_desc[0].name", "'out' is also the name of input_desc[1].name",
     "rename one"),
    (copy_of(ADD, input_desc=[{"name": "a_b", "type": ["fp16", "float"]},
                              {"name": "aB", "type": ["fp16", "float"]}]),
     "input_desc[1].name", "'aB' is also the name of input_desc[0].name", "camelCase"),
    (copy_of(ADD, input_desc=[{"name": "x", "param_type": "optional", "type": ["fp16", "float"]},
                              {"name": "xOptional", "type": ["fp16", "float"]}]),
     "input_desc[1].name", "'xOptional' is also the name of input_desc[0].name", "Optional"),
    (copy_of(ADD, attr=[{"name": "mode", "type": "str", "default_value": "a"},
                        {"name": "modeOptional", "type": "int", "param_type": "required"}]),
     "attr[1].name", "'modeOptional' is also the name of attr[0].name", "rename one"),
    (copy_of(ADD, output_desc=[{"name": "y", "type": ["fp16", "float"]},
                               {"name": "y_out", "type": ["fp16", "float"]}],
             input_desc=[{"name": "x", "type": ["fp16", "float"]},
                         {"name": "yOut", "type": ["fp16", "float"]}]),
     "output_desc[0].name", "'yOut' is also the name of input_desc[1].name", "rename one"),
    # length, underscores, identifiers, Python keywords
    (with_input("a" * 301), "input_desc[1].name", "301 characters long; at most 128", "aaa"),
    (with_input("a" * 129), "input_desc[1].name", "129 characters long; at most 128", "aaa"),
    (with_input("_X"), "input_desc[1].name", "'_X'", "starts or ends with '_'"),
    (with_input("_x"), "input_desc[1].name", "'_x'", "starts or ends with '_'"),
    (with_input("a__b"), "input_desc[1].name", "'a__b'", "has '__'"),
    (with_input("x_"), "input_desc[1].name", "'x_'", "starts or ends with '_'"),
    (with_attr("lambda"), "attr[0].name", "'lambda'", "Python keyword"),
    (with_attr("None"), "attr[0].name", "'None'", "Python keyword"),
    (with_input("1x"), "input_desc[1].name", "'1x'", "must be an identifier"),
    (with_input("x-y"), "input_desc[1].name", "'x-y'", "must be an identifier"),
    (with_input("ÿ"), "input_desc[1].name", "'ÿ'", "must be an identifier"),
    (with_input("x\ny"), "input_desc[1].name", "'x\\ny'", "must be an identifier"),
    (with_input("x\0"), "input_desc[1].name", "'x\\x00'", "must be an identifier"),
    (with_input('*/ int x = system("touch PWNED"); /*'), "input_desc[1].name",
     "'*/ int x = system(\"touch PWNED\"); /*'", "must be an identifier"),
    (with_input(3), "input_desc[1].name", "got 3", "must be an identifier"),
    (copy_of(ADD, op='AddCustomT"); system("touch PWNED'), "operator 0.op", "PWNED",
     "must be an identifier"),
    (copy_of(ADD, op="AddCustomT??/"), "operator 0.op", "'AddCustomT??/'",
     "must be an identifier"),
    (copy_of(ADD, op="A" * 129), "operator 0.op", "at most 128", "AAA"),
]


@pytest.mark.parametrize("definition,field,value,rule", REFUSED_NAMES,
                         ids=[f"{i}-{f}" for i, (_, f, _, _) in enumerate(REFUSED_NAMES)])
def test_names_the_compiler_would_reject_are_refused(definition, field, value, rule):
    with pytest.raises(CustomOpError) as err:
        custom.parse([definition])
    text = str(err.value)
    where = field if field.startswith("operator") else f"AddCustomT.{field}"
    assert text.startswith(where + ": "), text
    assert value in text and rule in text, text


def test_names_the_rules_accept():
    """What the rules above do not refuse: CANN's own names (the 48 operators of CANN 8.1.RC1
    in docs/custom_ops.md pass), names near the rules' edges."""
    for name in ("input", "output", "self", "weightB", "x1", "in", "outs", "integer", "New",
                 "a_b_c", "final", "override", "module", "import", "a" * 128):
        assert custom.parse([with_input(name)])[0].inputs[1].name == name
    for name in ("A" * 128, "A1", "Add_Custom"):
        assert custom.parse([copy_of(ADD, op=name)])[0].op == name


def test_snake_case_collisions_name_both(loaded):
    with pytest.raises(CustomOpError, match=r"Add_CustomT.op: 'Add_CustomT' and 'AddCustomT' "
                       r"\(another operator of the definition\) have one header file, "
                       r"aclnn_add_custom_t.h"):
        custom.parse([ADD, copy_of(ADD, op="Add_CustomT")])
    loaded([ADD], {"AddCustomT": add_kernel})
    with pytest.raises(CustomOpError, match=r"Add_CustomT.op: 'Add_CustomT' and 'AddCustomT' "
                       r"\(an operator already loaded\) have one header file"):
        custom.load([copy_of(ADD, op="Add_CustomT")], {"Add_CustomT": add_kernel})
    assert "Add_CustomT" not in custom.loaded() and not hasattr(aclnn, "aclnnAdd_CustomT")
    # the longest snake_case name of an operator name of 128 characters: a header file name
    # within msOpGen's 200 characters
    d = custom.parse([copy_of(ADD, op="A" + "bC" * 63 + "b")])[0]
    assert len(f"aclnn_{d.snake}.h") == 199


def nested(depth: int, leaf=1):
    v = leaf
    for _ in range(depth):
        v = [v]
    return v


DEEP = [
    ("[" * 100000 + "]" * 100000, "the definition: nested too deeply"),
    ('[{"op": "AddCustomT", "x": ' + "[" * 100000 + "]" * 100000 + "}]",
     "the definition: nested too deeply"),
    ([copy_of(ADD, attr=[{"name": "k", "type": "listInt",
                          "default_value": "[" * 5000 + "1" + "]" * 5000}])],
     "AddCustomT.attr[0].default_value: nested too deeply"),
    ([copy_of(ADD, attr=[{"name": "k", "type": "listInt",
                          "default_value": "[" * 40 + "1" + "]" * 40}])],
     "AddCustomT.attr[0].default_value: [[[[...]]]] is not a value of type listInt"),
    ([{**ADD, "attr": [{"name": "k", "type": "listInt", "default_value": nested(5000)}]}],
     "the definition: nested more than 32 levels deep"),
    ([{**ADD, "input_desc": [{"name": "x", "type": nested(100000, "fp16")}]}],
     "the definition: nested more than 32 levels deep"),
    ([{**ADD, "op": nested(100000, "X")}], "the definition: nested more than 32 levels deep"),
    ('[{"op": "AddCustomT", "x": ' + "[" * 900 + "]" * 900 + "}]",
     "the definition: nested more than 32 levels deep"),
    ([{**ADD, "input_desc": [{"name": "x", "type": nested(27, "fp16")}]}],
     "AddCustomT.input_desc[0].type[0]: [[[[...]]]] is not a type"),
    ([copy_of(ADD, attr=[{"name": "k", "type": "int", "default_value": "9" * 5000}])],
     "AddCustomT.attr[0].default_value: '99999"),
    ([copy_of(ADD, attr=[{"name": "k", "type": "int", "default_value": str(1 << 63)}])],
     "is not a value of type int"),
    ([copy_of(ADD, attr=[{"name": "k", "type": "listInt", "default_value": [-(1 << 63) - 1]}])],
     "is not a value of type listInt"),
    ([copy_of(ADD, attr=[{"name": "k", "type": "float", "default_value": 10 ** 400}])],
     "is not a value of type float"),
    ('[{"op": "AddCustomT", "x": ' + "9" * 5000 + "}]", "the definition: not a usable JSON"),
]


@pytest.mark.parametrize("definition,message", DEEP, ids=[m[:40] for _, m in DEEP])
def test_deep_and_huge_definitions_are_custom_op_errors(definition, message):
    with pytest.raises(CustomOpError) as err:  # not RecursionError, ValueError, OverflowError
        custom.parse(definition)
    assert message in str(err.value), str(err.value)[:300]
    assert len(str(err.value)) < 1000


def test_hostile_string_defaults_reach_the_kernel_and_no_header(loaded, dev, stream):
    """A str default is data: the kernel gets it exactly, and the header has no trace of it."""
    hostile = ['*/ int x = system("touch PWNED"); /*', "a\n#define int long\n??/\n\\",
               '\\"); system("touch PWNED"); ("', "é€😀\u202e", "before\0after"]
    attrs = [{"name": f"s{i}", "type": "str", "default_value": v}
             for i, v in enumerate(hostile)]
    d = copy_of(ADD, attr=attrs)
    got = []

    def kernel(x, y, z, **kw):
        got.append([kw[f"s{i}"] for i in range(len(hostile))])
        np.add(x, y, out=z)

    loaded([d], {"AddCustomT": kernel})
    header = opgen.header(custom.parse([d])[0])
    for word in ("system", "PWNED", "#define int", "??/", "\\", "\0", "é"):
        assert word not in header
    assert header.isascii()
    _, x = dev.tensor(np.ones(2, np.float32))
    _, z = dev.tensor(np.zeros(2, np.float32))
    ws, ex, ret = aclnn.aclnnAddCustomTGetWorkspaceSize(x, x, *[None] * len(hostile), z)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnAddCustomT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert got == [hostile]


def test_header_and_library_take_only_identifiers():
    """An OpDesc built by hand (not through parse) with a hostile name is refused by the
    generators themselves."""
    d = custom.parse([ADD])[0]
    bad = custom.OpDesc('X"); system("touch PWNED"); ("', d.inputs, d.outputs, d.attrs, "x")
    for fn in (opgen.header, lambda o: opgen.library_source([o])):
        with pytest.raises(CustomOpError, match="is not a C identifier"):
            fn(bad)
    p = d.inputs[0]
    bad = custom.OpDesc("X", (custom.Param("a */ b", p.param_type, p.types, p.formats,
                                           p.type_names),), d.outputs, d.attrs, "x")
    with pytest.raises(CustomOpError, match="is not a C identifier"):
        opgen.header(bad)


# ------------------------------------------------------------- in-place parameters --------

AXPY = cann_op("AxpyInplaceT", ["var", "grad"], [("alpha", "float", "1.0")], ["var", "norm"])


def axpy_kernel(var, grad, var_out, norm, *, alpha):
    # one tensor at both places: the input's array, writable
    assert var is var_out and var.flags.writeable and not grad.flags.writeable
    var += alpha * grad
    norm[...] = np.abs(var).sum()


def test_ref_parameter_is_one_writable_tensor(loaded, dev, stream):
    loaded([AXPY], {"AxpyInplaceT": axpy_kernel})
    assert custom.loaded()["AxpyInplaceT"].desc.c_names() == ["varRef", "grad", "alpha", "out"]
    assert list(inspect.signature(aclnn.aclnnAxpyInplaceTGetWorkspaceSize).parameters) == [
        "varRef", "grad", "alpha", "out"]
    v0 = np.array([1, -2, 3, -4], np.float32)
    g = np.array([10, 10, -10, 10], np.float32)
    pv, var = dev.tensor(v0)
    _, grad = dev.tensor(g)
    pn, norm = dev.tensor(np.zeros((), np.float32))
    ws, ex, ret = aclnn.aclnnAxpyInplaceTGetWorkspaceSize(var, grad, 0.5, norm)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnAxpyInplaceT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    golden = v0.astype(np.float64) + 0.5 * g
    np.testing.assert_array_equal(dev.download(pv, 4, np.float32), golden)
    np.testing.assert_array_equal(dev.download(pn, 1, np.float32), [np.abs(golden).sum()])
    ws, ex, ret = aclnn.aclnnAxpyInplaceTGetWorkspaceSize(None, grad, 0.5, norm)
    assert ret == aclnn.ACLNN_ERR_PARAM_NULLPTR
    assert "got null for argument varRef" in acl.get_recent_err_msg()
    with pytest.raises(TypeError, match=r"takes 4 arguments \(varRef, grad, alpha, out\), 5"):
        aclnn.aclnnAxpyInplaceTGetWorkspaceSize(var, grad, 0.5, var, norm)


def test_ref_parameter_rebinds_as_input_and_output(loaded, dev, stream):
    """A repeatable executor: the ref tensor is input 0 and output 0 (the outputs in the
    definition's order: varRef, out); rebinding it as either moves both."""
    loaded([AXPY], {"AxpyInplaceT": axpy_kernel})
    _, var = dev.tensor(np.ones(3, np.float32))
    _, grad = dev.tensor(np.full(3, 2, np.float32))
    _, norm = dev.tensor(np.zeros((), np.float32))
    ws, ex, ret = aclnn.aclnnAxpyInplaceTGetWorkspaceSize(var, grad, 1.0, norm)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    v2, n2 = dev.upload(np.full(3, 5, np.float32)), dev.malloc(4)
    assert aclnn.aclSetInputTensorAddr(ex, 0, var, v2) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 1, norm, n2) == 0
    assert aclnn.aclnnAxpyInplaceT(0, 0, ex, stream) == 0
    v3 = dev.upload(np.full(3, -1, np.float32))
    assert aclnn.aclSetOutputTensorAddr(ex, 0, var, v3) == 0
    assert aclnn.aclnnAxpyInplaceT(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(v2, 3, np.float32), [7, 7, 7])
    np.testing.assert_array_equal(dev.download(v3, 3, np.float32), [1, 1, 1])
    np.testing.assert_array_equal(dev.download(n2, 1, np.float32), [3])  # the second launch
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


# ---------------------------------------------------------------- dynamic outputs ----------

FOREACH = cann_op("ForeachAddT", ["x1*", "x2*"], [("alpha", "float", "1.0")], ["y*"])


def foreach_kernel(x1, x2, y, *, alpha):
    assert len(x1) == len(x2) == len(y)
    for a, b, out in zip(x1, x2, y):
        assert out.flags.writeable
        out[...] = a + alpha * b


def test_dynamic_output_is_a_list_of_writable_arrays(loaded, dev, stream):
    loaded([FOREACH], {"ForeachAddT": foreach_kernel})
    assert custom.loaded()["ForeachAddT"].desc.c_names() == ["x1", "x2", "alpha", "out"]
    rng = np.random.default_rng(5)
    shapes = [(3,), (2, 4), (1,)]
    a = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    b = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    x1 = aclnn.aclCreateTensorList([dev.tensor(v)[1] for v in a])
    x2 = aclnn.aclCreateTensorList([dev.tensor(v)[1] for v in b])
    outs = [dev.tensor(np.zeros(s, np.float32)) for s in shapes]
    y = aclnn.aclCreateTensorList([t for _, t in outs])
    ws, ex, ret = aclnn.aclnnForeachAddTGetWorkspaceSize(x1, x2, 0.5, y)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnForeachAddT(0, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    for (p, _), s, u, v in zip(outs, shapes, a, b):
        np.testing.assert_array_equal(dev.download(p, s, np.float32),
                                      (u.astype(np.float64) + 0.5 * v).astype(np.float32))
    ws, ex, ret = aclnn.aclnnForeachAddTGetWorkspaceSize(x1, x2, 0.5, None)
    assert ret == aclnn.ACLNN_ERR_PARAM_NULLPTR
    assert "got null for argument out" in acl.get_recent_err_msg()
    with pytest.raises(TypeError, match="'out' must be an aclTensorList or None, not aclTensor"):
        aclnn.aclnnForeachAddTGetWorkspaceSize(x1, x2, 0.5, outs[0][1])
    bad = aclnn.aclCreateTensorList([outs[0][1], dev.tensor(np.zeros(2, np.int32))[1]])
    ws, ex, ret = aclnn.aclnnForeachAddTGetWorkspaceSize(x1, x2, 0.5, bad)
    assert ret == aclnn.ACLNN_ERR_PARAM_INVALID
    assert "Tensor out[1] has dtype/format INT32/ND" in acl.get_recent_err_msg()


def test_dynamic_output_tensors_take_one_output_index_each(loaded, dev, stream):
    loaded([FOREACH], {"ForeachAddT": foreach_kernel})
    x1 = aclnn.aclCreateTensorList([dev.tensor(np.ones(2, np.float32))[1]] * 2)
    y0, y1 = dev.tensor(np.zeros(2, np.float32))[1], dev.tensor(np.zeros(2, np.float32))[1]
    y = aclnn.aclCreateTensorList([y0, y1])
    ws, ex, ret = aclnn.aclnnForeachAddTGetWorkspaceSize(x1, x1, 2.0, y)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    new = dev.malloc(8)
    assert aclnn.aclSetOutputTensorAddr(ex, 1, y1, new) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 2, y1, new) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert "(0=out[0], 1=out[1])" in acl.get_recent_err_msg()
    assert aclnn.aclnnForeachAddT(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.download(new, 2, np.float32), [3, 3])
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
