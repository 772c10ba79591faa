"""The C/C++ toolkit (docs/c_api.md): CANN's headers and libascendcl.so over the emulator.

C and C++ programs (tests/toolkit/) are compiled with the system compiler against a toolkit built
once for this module, run outside the virtualenv (no python on PATH, no VIRTUAL_ENV, a temporary
working directory), and what they print is compared with NumPy float64 goldens and with CANN's
documented codes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
import pytest

from aclnn_py.toolkit import ToolkitError, _bridge, build, ensure_toolkit

HERE = Path(__file__).resolve().parent / "toolkit"
REPO = Path(__file__).resolve().parent.parent
CC = shutil.which("gcc") or shutil.which("cc")
CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the toolkit is Linux-only"),
    pytest.mark.skipif(CC is None or CXX is None, reason="no C/C++ compiler (gcc/g++) on PATH"),
]
needs_shared = pytest.mark.skipif(
    not sysconfig.get_config_var("Py_ENABLE_SHARED"),
    reason="this Python has no shared libpython, which the toolkit embeds")

# CANN's documented values (acl_base_rt.h, acl_rt.h, rt_error_codes.h, acl_meta.h users)
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_MEMORY_FREE = 207002
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER = 561000


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """The toolkit cache the CLI uses when XDG_CACHE_HOME is ``cache.parent``."""
    return tmp_path_factory.mktemp("xdg") / "aclnn-py"


@pytest.fixture(scope="module")
def toolkit(cache) -> Path:
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("this Python has no shared libpython, which the toolkit embeds")
    return ensure_toolkit(root=cache)


def bare_env(toolkit: Path, tmp: Path, ld_library_path: bool = True) -> dict:
    """What a C program gets from a shell that only sourced set_env.sh: no python on PATH (an
    empty directory), no VIRTUAL_ENV, no PYTHON* variables."""
    empty = tmp / "empty-bin"
    empty.mkdir(exist_ok=True)
    env = {"PATH": str(empty), "HOME": str(tmp), "LANG": "C"}
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = str(toolkit / "lib64")
        env["ASCEND_HOME_PATH"] = env["ASCEND_TOOLKIT_HOME"] = str(toolkit)
    return env


def compile_program(toolkit: Path, source: Path, out: Path, cpp: bool, *flags: str) -> Path:
    inc = toolkit / "include"
    cmd = [CXX if cpp else CC, *flags, str(source), f"-I{inc}", f"-I{inc / 'aclnnop'}",
           f"-L{toolkit / 'lib64'}", "-lopapi", "-lascendcl", "-lnnopbase", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def run_program(exe: Path, env: dict, cwd: Path, *args: str) -> str:
    proc = subprocess.run([str(exe), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def result_lines(values) -> list[str]:
    return [f"result[{i}] is: {v:f}" for i, v in enumerate(np.asarray(values).ravel())]


def softmax_backward_golden() -> np.ndarray:
    g = np.arange(8, dtype=np.float64).reshape(4, 2)
    y = np.array([1, 1, 1, 2, 2, 2, 3, 3], dtype=np.float64).reshape(4, 2)
    return g * y - (g * y).sum(axis=0, keepdims=True) * y


def softmax_golden(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def parse(stdout: str) -> dict[str, list[str]]:
    return {line.split(" ", 1)[0]: line.split(" ")[1:] for line in stdout.splitlines() if line}


# ------------------------------------------------------------------------------ layout -----


def test_layout(toolkit):
    for header in ("acl/acl.h", "acl/acl_base.h", "acl/acl_rt.h", "aclnn/acl_meta.h",
                   "aclnn/aclnn_base.h", "aclnnop/aclnn_softmax.h",
                   "aclnnop/aclnn_softmax_backward.h", "aclnnop/aclnn_logsoftmax.h",
                   "aclnnop/aclnn_logsoftmax_backward.h", "aclnnop/aclnn_hardsigmoid.h",
                   "aclnnop/aclnn_hardsigmoid_backward.h"):
        assert (toolkit / "include" / header).is_file(), header
    lib = toolkit / "lib64"
    assert (lib / "libascendcl.so").is_file() and not (lib / "libascendcl.so").is_symlink()
    for alias in ("libnnopbase.so", "libopapi.so", "libopapi_nn.so", "libopapi_math.so"):
        assert os.readlink(lib / alias) == "libascendcl.so"
    set_env = (toolkit / "set_env.sh").read_text()
    out = subprocess.run(["bash", "-c", f'source "{toolkit}/set_env.sh"; echo "$ASCEND_HOME_PATH";'
                          ' echo "$ASCEND_TOOLKIT_HOME"; echo "$LD_LIBRARY_PATH"'],
                         env={"PATH": os.environ["PATH"], "LD_LIBRARY_PATH": "/x"},
                         capture_output=True, text=True).stdout.split()
    assert out == [str(toolkit), str(toolkit), f"{lib}:/x"], set_env
    readelf = shutil.which("readelf")
    if readelf:
        dyn = subprocess.run([readelf, "-d", str(lib / "libascendcl.so")], capture_output=True,
                             text=True).stdout
        assert "Library soname: [libascendcl.so]" in dyn
        assert "$ORIGIN" in dyn and sysconfig.get_config_var("LIBDIR") in dyn


def test_headers_c99_and_cpp_values(toolkit, tmp_path):
    """Every header compiles warning-free as C99 (pedantic) and C++11, and carries CANN's
    values."""
    src = tmp_path / "values.c"
    names = {"ACL_SUCCESS": 0, "ACL_ERROR_INVALID_PARAM": 100000,
             "ACL_ERROR_REPEAT_INITIALIZE": 100002, "ACL_ERROR_REPEAT_FINALIZE": 100037,
             "ACL_ERROR_RT_PARAM_INVALID": 107000, "ACL_ERROR_RT_INVALID_HANDLE": 107017,
             "ACL_ERROR_RT_MEMORY_ALLOCATION": 207001, "ACL_ERROR_RT_AICORE_EXCEPTION": 507015,
             "ACL_ERROR_INTERNAL_ERROR": 500000, "ACL_FLOAT": 0, "ACL_FLOAT16": 1,
             "ACL_DOUBLE": 11, "ACL_BF16": 27, "ACL_INT32": 3, "ACL_FORMAT_ND": 2,
             "ACL_FORMAT_NCHW": 0, "ACL_MEM_MALLOC_HUGE_FIRST": 0,
             "ACL_MEMCPY_HOST_TO_DEVICE": 1, "ACL_MEMCPY_DEVICE_TO_HOST": 2,
             "ACL_MEMCPY_DEVICE_TO_DEVICE": 3, "ACL_HBM_MEM": 1, "ACL_HOST": 1,
             "ACL_EVENT_RECORDED_STATUS_COMPLETE": 1, "ACL_EVENT_STATUS_NOT_READY": 1}
    body = "\n".join(f'    printf("{n} %ld\\n", (long){n});' for n in names)
    src.write_text('#include <stdio.h>\n#include "acl/acl.h"\n#include "aclnn/aclnn_base.h"\n'
                   + "".join(f'#include "aclnnop/{h.name}"\n'
                             for h in sorted((toolkit / "include/aclnnop").glob("*.h")))
                   + f"int main(void)\n{{\n{body}\n    return 0;\n}}\n")
    exe = compile_program(toolkit, src, tmp_path / "values", False, "-std=c99", "-Wall",
                          "-Wextra", "-pedantic", "-Werror")
    out = run_program(exe, bare_env(toolkit, tmp_path), tmp_path)
    assert {k: int(v[0]) for k, v in parse(out).items()} == names
    cpp = tmp_path / "values.cpp"
    cpp.write_text(src.read_text())
    compile_program(toolkit, cpp, tmp_path / "values_cpp", True, "-std=c++11", "-Wall", "-Wextra",
                    "-Werror")


# ------------------------------------------------------------------ the acceptance test -----


@needs_shared
def test_official_example_with_cann_build_line(toolkit, tmp_path):
    """A program in the manner of CANN's aclnnSoftmaxBackward example (same headers, constructs
    and inputs; tests/toolkit/softmax_grad_example.cpp), compiled with the g++ line of CANN's
    docs after sourcing set_env.sh, run from a temporary directory with no python on PATH."""
    shutil.copy(HERE / "softmax_grad_example.cpp", tmp_path / "test_aclnn_softmax_grad.cpp")
    script = (f'source "{toolkit}/set_env.sh" && '
              "g++ test_aclnn_softmax_grad.cpp -I$ASCEND_HOME_PATH/include "
              "-I$ASCEND_HOME_PATH/include/aclnnop -L$ASCEND_HOME_PATH/lib64 -lopapi -lascendcl "
              "-lnnopbase -o test_aclnn_softmax_grad")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "LD_LIBRARY_PATH")}
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    out = run_program(tmp_path / "test_aclnn_softmax_grad", bare_env(toolkit, tmp_path), run_dir)
    assert out.splitlines() == result_lines(softmax_backward_golden())


DOC_INCLUDE_SET_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_hardsigmoid.h"

int main()
{
    if (auto ret = aclInit(nullptr); ret != ACL_SUCCESS) return 10;
    aclrtStream stream = nullptr;
    if (aclrtSetDevice(0) != ACL_SUCCESS) return 11;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return 11;
    const std::vector<float> host{-6.0f, -1.5f, 0.0f, 1.5f, 3.0f, 7.0f};
    const std::vector<int64_t> shape{2, 3}, strides{3, 1};
    const size_t bytes = host.size() * sizeof(float);
    void* x = nullptr;
    void* y = nullptr;
    if (aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_NORMAL_ONLY) != ACL_SUCCESS) return 12;
    if (aclrtMemcpy(x, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        return 13;
    }
    aclTensor* tx = aclCreateTensor(shape.data(), shape.size(), aclDataType::ACL_FLOAT,
                                    strides.data(), 0, aclFormat::ACL_FORMAT_ND, shape.data(),
                                    shape.size(), x);
    aclTensor* ty = aclCreateTensor(shape.data(), shape.size(), aclDataType::ACL_FLOAT,
                                    strides.data(), 0, aclFormat::ACL_FORMAT_ND, shape.data(),
                                    shape.size(), y);
    uint64_t wsSize = 0;
    aclOpExecutor* executor = nullptr;
    if (aclnnHardsigmoidGetWorkspaceSize(tx, ty, &wsSize, &executor) != ACL_SUCCESS) return 14;
    void* ws = nullptr;
    if (wsSize > 0 && aclrtMalloc(&ws, wsSize, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 15;
    if (aclnnHardsigmoid(ws, wsSize, executor, stream) != ACL_SUCCESS) return 16;
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 17;
    std::vector<float> back(host.size());
    if (aclrtMemcpy(back.data(), bytes, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
        return 18;
    }
    for (size_t i = 0; i < back.size(); ++i) std::printf("result[%zu] is: %f\n", i, back[i]);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    if (ws != nullptr) aclrtFree(ws);
    aclrtFree(x);
    aclrtFree(y);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    return aclFinalize() == ACL_SUCCESS ? 0 : 19;
}
"""


@needs_shared
def test_cann_doc_include_set_and_library_names(toolkit, tmp_path):
    """The include directories and libraries of the CMake file in CANN's "compile and run a
    sample" page: include and include/aclnn only (the operator header is reached as
    "aclnnop/..."), and libascendcl, libnnopbase, libopapi_math and libopapi_nn linked by full
    path; a C++17 program of ours (if with an initializer, scoped enumerators)."""
    src = tmp_path / "doc_include_set.cpp"
    src.write_text(DOC_INCLUDE_SET_PROGRAM)
    inc, lib = toolkit / "include", toolkit / "lib64"
    exe = tmp_path / "doc_include_set"
    proc = subprocess.run(
        [CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", str(src), f"-I{inc}",
         f"-I{inc / 'aclnn'}", "-o", str(exe),
         *(str(lib / name) for name in ("libascendcl.so", "libnnopbase.so", "libopapi_math.so",
                                        "libopapi_nn.so"))],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = run_program(exe, bare_env(toolkit, tmp_path), tmp_path)
    x = np.array([-6.0, -1.5, 0.0, 1.5, 3.0, 7.0])
    assert out.splitlines() == result_lines(np.clip(x / 6 + 0.5, 0, 1))


# ----------------------------------------------------------------- the C ABI, in C ------


@needs_shared
def test_c_program_runtime_meta_and_errors(toolkit, tmp_path):
    exe = compile_program(toolkit, HERE / "c_api_check.c", tmp_path / "c_api_check", False,
                          "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra",
                          "-pedantic", "-Werror")
    r = parse(run_program(exe, bare_env(toolkit, tmp_path), tmp_path))
    code = {k: int(v[0]) for k, v in r.items() if v and re.fullmatch(r"-?\d+", v[0])}
    text = {k: " ".join(v[1:]) for k, v in r.items()}
    assert code["init"] == 0 and code["init_again"] == ACL_ERROR_REPEAT_INITIALIZE
    assert r["device_count"] == ["0", "1"] and r["get_device"] == ["0", "0"]
    assert r["run_mode"] == ["0", "1"]  # ACL_HOST: the "device" runs on the host
    assert r["soc_name"][0].startswith("Ascend")
    assert r["mem_info"] == ["0", "1"]
    assert [float(v) for v in r["copied"]] == list(range(8))
    for step in ("event_start", "event_end", "record_start", "record_end", "event_sync",
                 "destroy_start", "destroy_end", "softmax", "first_run", "free", "free_x",
                 "free_y", "destroy_stream", "reset_device", "finalize"):
        assert code[step] == 0, step
    assert r["event_status"] == ["0", "1"] and r["elapsed"] == ["0", "1"]
    x = np.arange(8, dtype=np.float64).reshape(4, 2)
    assert r["softmax_out"] == [f"{v:.6f}" for v in softmax_golden(x, 0).ravel()]
    # bad arguments: CANN's code, and a message naming the API, the argument and the values
    assert code["bad_dim"] == ACLNN_ERR_PARAM_INVALID
    assert "aclnnSoftmaxGetWorkspaceSize" in text["bad_dim"] and "Dim 2" in text["bad_dim"]
    assert "[-2, 1]" in text["bad_dim"]
    assert r["cleared"] == ["yes"]  # read once, then cleared
    assert code["null_self"] == ACLNN_ERR_PARAM_NULLPTR and "self" in text["null_self"]
    assert code["null_ws_ptr"] == ACLNN_ERR_PARAM_NULLPTR
    assert "workspaceSize" in text["null_ws_ptr"]
    assert code["destroy_twice"] == ACLNN_ERR_PARAM_INVALID
    assert "already destroyed" in text["destroy_twice"]
    assert code["unknown_tensor"] == ACLNN_ERR_PARAM_INVALID
    assert "0x123450" in text["unknown_tensor"]
    assert code["second_run"] == ACLNN_ERR_PARAM_NULLPTR and "consumed" in text["second_run"]
    assert code["past_end"] == ACLNN_ERR_PARAM_INVALID and "past the end" in text["past_end"]
    assert code["malloc_zero"] == ACL_ERROR_INVALID_PARAM
    assert code["malloc_null"] == ACL_ERROR_INVALID_PARAM and "devPtr" in text["malloc_null"]
    assert code["count_gt_destmax"] == ACL_ERROR_RT_PARAM_INVALID
    # counts no array holds (issue 22, item 6): NULL and 161002 naming the size, as
    # aclCreateTensor does, not 561000 "internal error of the emulator"
    for name, count in (("int_array_70000", 70000), ("int_array_2_64", 2**64 - 1),
                        ("tensor_dims_70000", 70000)):
        assert code[name] == 1, (name, text[name])  # the handle is NULL
        assert "aclCreate" in text[name] and f"ERROR: {ACLNN_ERR_PARAM_INVALID} " in text[name]
        assert f"{count} is larger than 65536" in text[name] and "internal" not in text[name]
    assert r["int_array_3"] == ["1", "0"] and r["int_array_3_size"] == ["3"]
    # a device pointer freed in C, then used: the codes docs/return_codes.md gives
    assert code["freed_memcpy"] == ACL_ERROR_RT_PARAM_INVALID
    assert "freed" in text["freed_memcpy"]
    assert code["freed_tensor"] == ACLNN_ERR_PARAM_INVALID and "freed" in text["freed_tensor"]
    assert code["double_free"] == ACL_ERROR_RT_MEMORY_FREE
    # fork() from C: the child does not inherit device memory, and starts afresh
    assert code["child_parent_ptr"] == ACL_ERROR_RT_PARAM_INVALID
    assert "fork" in text["child_parent_ptr"]
    assert r["child_softmax"] == ["1", "0"] and r["child_exit"] == ["0"]
    assert code["parent_after_fork"] == 0


@needs_shared
def test_cpp_meta_api_repeatable_executor_and_threads(toolkit, tmp_path):
    exe = compile_program(toolkit, HERE / "threads_meta.cpp", tmp_path / "threads_meta", True,
                          "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pthread")
    out = run_program(exe, bare_env(toolkit, tmp_path), tmp_path, "4")
    r = parse(out)
    assert r["view_shape"] == ["0", "2", "2", "3"]
    assert r["view_strides"] == ["0", "2", "1", "2"]
    assert r["storage_shape"] == ["0", "1", "6"]
    assert r["view_offset"] == ["0", "0"] and r["format"] == ["0", "0"]  # ACL_FORMAT_NCHW
    assert r["data_type"] == ["0", "1"] and r["raw_addr"] == ["0", "1"]  # ACL_FLOAT16
    assert r["getter_null_out"] == [str(ACLNN_ERR_PARAM_NULLPTR)]
    assert r["getter_null_tensor"] == [str(ACLNN_ERR_PARAM_NULLPTR)]
    assert r["getter_destroyed"] == [str(ACLNN_ERR_PARAM_INVALID)]
    assert r["scalar"] == ["1", "0"] and r["scalar_null"] == ["1"]
    assert r["int_array"] == ["0", "3", "0"]
    assert r["repeatable"] == ["0", "0"] and r["rebind"] == ["0"]
    a = np.arange(1, 10, dtype=np.float64).reshape(3, 3)
    b = np.array([0, 0, 0, 1, 1, 1, -1, 0, 1], dtype=np.float64).reshape(3, 3)
    for name, x in (("log_softmax_0", a), ("log_softmax_1", b)):
        golden = np.log(softmax_golden(x, 1)).ravel()
        assert r[name][0] == "0"
        np.testing.assert_allclose([float(v) for v in r[name][1:]], golden, atol=2e-6)
    assert r["destroy_executor"] == ["0"]
    assert r["destroy_executor_again"] == [str(ACLNN_ERR_INNER), "message"]
    rows = [line.split() for line in out.splitlines() if line.startswith("thread ")]
    assert len(rows) == 4
    for row in rows:
        tid, failures, messages = int(row[1]), int(row[2]), int(row[3])
        assert failures == 0
        assert messages == tid % 2  # each odd thread saw its own message, no thread another's
        golden = softmax_golden(np.arange(tid, tid + 8, dtype=np.float64).reshape(4, 2), 0)
        np.testing.assert_allclose([float(v) for v in row[4:]], golden.ravel(), atol=2e-6)
    assert r["finalize"] == ["0"]


# ------------------------------------------------------------------ CMake and the CLI -----


@needs_shared
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_project(toolkit, tmp_path):
    """samples/c/CMakeLists.txt finds everything from ASCEND_HOME_PATH; CMake's build rpath lets
    the program run without LD_LIBRARY_PATH."""
    env = dict(os.environ, ASCEND_HOME_PATH=str(toolkit))
    build_dir = tmp_path / "build"
    for cmd in (["cmake", "-S", str(REPO / "samples" / "c"), "-B", str(build_dir)],
                ["cmake", "--build", str(build_dir), "--target", "softmax_backward"]):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    out = run_program(build_dir / "softmax_backward", bare_env(toolkit, tmp_path, False),
                      tmp_path)
    assert out.splitlines() == result_lines(softmax_backward_golden())


@needs_shared
def test_cli_toolkit_and_run_cpp(toolkit, cache):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache.parent))
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "aclnn_py"]
    proc = subprocess.run([*cmd, "run", "hardsigmoid_backward", "--lang", "cpp"], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    x = np.arange(8, dtype=np.float64)
    golden = np.where((x > -3) & (x < 3), x / 6, 0.0)  # grad = x: grad * 1/6 inside (-3, 3)
    assert proc.stdout.splitlines() == result_lines(golden)
    where = subprocess.run([*cmd, "toolkit"], env=env, cwd=tempfile.gettempdir(),
                           capture_output=True, text=True)
    assert where.returncode == 0 and where.stdout.strip() == str(toolkit)  # the fixture's build
    bad = subprocess.run([*cmd, "run", "no_such_sample", "--lang", "cpp"], env=env,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True)
    assert bad.returncode == 2 and "not a bundled C++ sample" in bad.stderr


@needs_shared
@pytest.mark.parametrize("mode", ["fail", "finalize", "atexit_finalize"])
def test_diagnostics_of_a_program_that_skips_acl_finalize(toolkit, tmp_path, mode):
    """Issue 22, 5: a C program that returns from main without aclFinalize (CHECK_RET's return)
    still writes its trace and logs the race the checker found after the last synchronize (at
    exit, once); with aclFinalize, in main or in an atexit handler registered before the first
    ACL call, the race is reported once too, and the trace ends with aclFinalize."""
    exe = compile_program(toolkit, HERE / "exit_without_finalize.c", tmp_path / "exit_nf", False,
                          "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror")
    trace = tmp_path / "trace.json"
    env = dict(bare_env(toolkit, tmp_path), ACLNN_EMU_CHECK="race", ACLNN_EMU_TRACE=str(trace))
    proc = subprocess.run([str(exe), mode], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout.splitlines()
    assert out[0] == "queued", proc.stdout + proc.stderr
    races = [line for line in proc.stderr.splitlines() if line.startswith("race: ")]
    assert len(races) == 1, proc.stderr
    assert "aclrtMemcpyAsync reads 'src'" in races[0]
    assert "aclrtMemsetAsync writes 'devPtr'" in races[0]
    assert "Traceback" not in proc.stderr
    names = [e["name"] for e in json.loads(trace.read_text(encoding="utf-8"))["traceEvents"]
             if e["ph"] == "X" and e["cat"] == "api"]
    assert names[:8] == ["aclInit", "aclrtSetDevice", "aclrtCreateStream", "aclrtCreateStream",
                         "aclrtMalloc", "aclrtMalloc", "aclrtMemsetAsync", "aclrtMemcpyAsync"]
    if mode == "finalize":
        assert proc.returncode == 0 and out[1] == "synchronize 507013"  # reported there
        assert "reported at exit" not in races[0]
        assert names[-1] == "aclFinalize" and names.count("aclFinalize") == 1
        return
    assert proc.returncode == 2 and out[1] == "check failed"
    assert races[0].endswith("(found after the last synchronize; reported at exit)")
    if mode == "fail":
        assert "aclFinalize" not in names and len(names) == 8
    else:  # the library's exit hook ran first (registered later), then the program's
        assert out[2] == "atexit aclFinalize 0"
        assert names[8:] == ["aclFinalize"]


# ----------------------------------------------------------------------- the builder ------


def test_no_shared_libpython_is_a_clear_error(monkeypatch, tmp_path):
    real = sysconfig.get_config_var
    monkeypatch.setattr(build.sysconfig, "get_config_var",
                        lambda name: 0 if name == "Py_ENABLE_SHARED" else real(name))
    with pytest.raises(ToolkitError, match="no shared libpython"):
        ensure_toolkit(root=tmp_path)
    assert not list(tmp_path.glob("toolkit-*"))


@needs_shared
def test_concurrent_first_use_builds_once(tmp_path):
    code = ("import sys; from pathlib import Path; from aclnn_py.toolkit import ensure_toolkit; "
            "print(ensure_toolkit(root=Path(sys.argv[1])))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=tempfile.gettempdir()) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert outs[0][0] == outs[1][0]
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == \
        [Path(outs[0][0].strip()).name]


def test_every_declared_callback_has_a_python_side():
    declared = {re.search(r"\b(py_\w+)\(", p).group(1) for p in build._callback_prototypes()}
    assert declared == set(_bridge.CALLBACKS)
