"""The toolkit as CANN's other code and samples find it (docs/c_api.md, docs/pyacl.md):
``aclnnop/level2`` headers, ``libacl_op_compiler.so``, acl_base.h's float16 helpers, pyACL on
PYTHONPATH after set_env.sh, and a clear message from a toolkit whose environment moved.

Expected values come from CANN's documentation (acl_base.h: the helpers saturate and do not keep
NaN or infinity) and from NumPy's IEEE float16 conversion, not from the toolkit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from aclnn_py.toolkit import build, ensure_toolkit

CC = shutil.which("gcc") or shutil.which("cc")
CXX = shutil.which("g++") or shutil.which("c++")
BASH = shutil.which("bash") or "/bin/bash"

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the toolkit is Linux-only"),
    pytest.mark.skipif(CC is None or CXX is None, reason="no C/C++ compiler (gcc/g++) on PATH"),
    pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                       reason="this Python has no shared libpython, which the toolkit embeds"),
]


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory) -> Path:
    return ensure_toolkit(root=tmp_path_factory.mktemp("xdg") / "aclnn-py")


def bare_env(toolkit: Path, tmp: Path) -> dict:
    """A shell's environment after sourcing set_env.sh only: no venv, no PYTHON* variables."""
    empty = tmp / "empty-bin"
    empty.mkdir(exist_ok=True)
    env = {"PATH": str(empty), "HOME": str(tmp), "LANG": "C"}
    names = "ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME LD_LIBRARY_PATH PYTHONPATH"
    out = subprocess.run([BASH, "-c", f'source "{toolkit}/set_env.sh" && for v in {names}; '
                          'do printf "%s=%s\\0" "$v" "${!v}"; done'],
                         env=env, capture_output=True, text=True, check=True).stdout
    env.update(item.split("=", 1) for item in out.split("\0") if "=" in item)
    return env


def run(cmd: list, env: dict, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


# ------------------------------------------------------------- level2 and the op compiler ---

LEVEL2_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/level2/aclnn_softmax.h"
#include "aclnnop/level2/aclnn_logsoftmax.h"

int main() {
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    std::vector<float> host = {1.0f, 2.0f, 3.0f, 4.0f};
    std::vector<int64_t> shape = {4}, strides = {1};
    void *dx = nullptr, *dy = nullptr;
    aclrtMalloc(&dx, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dy, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dx, 16, host.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE);
    aclTensor *x = aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0,
                                   ACL_FORMAT_ND, shape.data(), 1, dx);
    aclTensor *y = aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0,
                                   ACL_FORMAT_ND, shape.data(), 1, dy);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int ret = aclnnLogSoftmaxGetWorkspaceSize(x, 0, y, &ws, &ex);
    if (ret != 0) { printf("phase1 %d\n", ret); return 1; }
    ret = aclnnLogSoftmax(nullptr, ws, ex, stream);
    if (ret != 0 || aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 1;
    aclrtMemcpy(host.data(), 16, dy, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    for (float v : host) printf("%.9g\n", v);
    aclDestroyTensor(x);
    aclDestroyTensor(y);
    aclrtFree(dx);
    aclrtFree(dy);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_level2_headers_and_op_compiler_link_line(toolkit, tmp_path):
    """Third-party CANN code includes "aclnnop/level2/aclnn_*.h", and CANN's operator samples
    link -lacl_op_compiler; both build and run against the toolkit."""
    inc = toolkit / "include"
    assert sorted(p.name for p in (inc / "aclnnop" / "level2").glob("aclnn_*.h")) == \
        sorted(p.name for p in (inc / "aclnnop").glob("aclnn_*.h"))
    assert os.readlink(toolkit / "lib64" / "libacl_op_compiler.so") == "libascendcl.so"
    src = tmp_path / "level2.cpp"
    src.write_text(LEVEL2_PROGRAM)
    exe = tmp_path / "level2"
    proc = run([CXX, src, f"-I{inc}", f"-L{toolkit / 'lib64'}", "-lascendcl",
                "-lacl_op_compiler", "-lnnopbase", "-o", exe], dict(os.environ), tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = run([exe], bare_env(toolkit, tmp_path), tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    x = np.array([1.0, 2.0, 3.0, 4.0])
    golden = x - x.max() - np.log(np.exp(x - x.max()).sum())
    np.testing.assert_allclose([float(v) for v in out.stdout.split()], golden, rtol=2e-7)


# ------------------------------------------------------------------ float16 helpers ------

FP16_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "acl/acl_base.h"

/* every float16 pattern to float, then the floats of the input file to float16 */
int main(int argc, char **argv) {
    FILE *out = fopen(argv[1], "wb"), *in = fopen(argv[2], "rb");
    if (!out || !in) return 2;
    for (unsigned v = 0; v < 65536; ++v) {
        float f = aclFloat16ToFloat((aclFloat16)v);
        fwrite(&f, 4, 1, out);
    }
    float f;
    while (fread(&f, 4, 1, in) == 1) {
        aclFloat16 h = aclFloatToFloat16(f);
        fwrite(&h, 2, 1, out);
    }
    fclose(out);
    fclose(in);
    return 0;
}
"""


def test_float16_helpers_match_cann(toolkit, tmp_path):
    """aclFloat16ToFloat: IEEE for every finite pattern, the all-ones exponent read as 2^16
    (+inf -> 65536, -inf -> -65536, 0x7E00 -> 98304); aclFloatToFloat16: IEEE round to nearest
    even, saturating at +-65504 (infinities and overflow), NaN -> 65504 (0x7BFF)."""
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, 400_000, dtype=np.uint64).astype(np.uint32)
    # the float16 range densely (normals, subnormals, halfway cases), then specials
    # halfway between each pair of neighbouring normal float16 values: ties, rounded to even
    normal = np.arange(0x0400, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float32)
    mid = normal.view(np.uint32) + np.uint32(0x1000)
    near = np.concatenate([rng.uniform(-70000, 70000, 200_000), rng.uniform(-1e-4, 1e-4, 100_000),
                           [65504, 65519.99, 65520, 65536, -65520, 1e30, -1e30, 0.0, -0.0,
                            2.0**-24, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-26, 2.0**-14]])
    floats = np.concatenate([bits.view(np.float32), near.astype(np.float32),
                             np.array([np.inf, -np.inf, np.nan, -np.nan], np.float32),
                             mid.view(np.float32), -mid.view(np.float32)])
    src = tmp_path / "fp16.c"
    src.write_text(FP16_PROGRAM)
    exe = tmp_path / "fp16"
    proc = run([CC, "-std=c99", "-Wall", "-Werror", src, f"-I{toolkit / 'include'}",
                f"-L{toolkit / 'lib64'}", "-lascendcl", "-o", exe], dict(os.environ), tmp_path)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "in.bin").write_bytes(floats.tobytes())
    res = run([exe, tmp_path / "out.bin", tmp_path / "in.bin"], bare_env(toolkit, tmp_path),
              tmp_path)
    assert res.returncode == 0, res.stderr
    data = (tmp_path / "out.bin").read_bytes()
    to_float = np.frombuffer(data[:65536 * 4], np.float32)
    to_half = np.frombuffer(data[65536 * 4:], np.uint16)

    h = np.arange(65536, dtype=np.uint16)
    exp, man, neg = (h >> 10) & 0x1F, h & 0x3FF, (h >> 15) == 1
    finite = exp != 31
    np.testing.assert_array_equal(to_float[finite], h[finite].view(np.float16).astype(np.float32))
    special = (1 + man[~finite] / 1024.0) * 65536.0 * np.where(neg[~finite], -1, 1)
    np.testing.assert_array_equal(to_float[~finite], special.astype(np.float32))
    assert to_float[0x7C00] == 65536.0 and to_float[0xFC00] == -65536.0
    assert to_float[0x7E00] == 98304.0

    with np.errstate(over="ignore", invalid="ignore"):
        ieee = floats.astype(np.float16)
    expect = ieee.view(np.uint16).copy()
    nan = np.isnan(floats)
    over = ~nan & np.isinf(ieee)
    expect[over] = np.where(np.signbit(floats[over]), 0xFBFF, 0x7BFF)
    expect[nan] = 0x7BFF
    assert over.sum() > 1000 and nan.sum() >= 2
    bad = np.flatnonzero(to_half != expect)
    assert bad.size == 0, [(float(floats[i]), hex(to_half[i]), hex(expect[i])) for i in bad[:5]]


# -------------------------------------------------------------------------- pyACL -------

PYACL_PROGRAM = """
import acl
import acl.rt
print(acl.__name__, acl.rt is acl.__dict__["rt"])
ret = acl.init()
device_ret = acl.rt.set_device(0)
print(ret, device_ret)
acl.rt.reset_device(0)
print(acl.finalize())
"""


def test_import_acl_after_set_env(toolkit, tmp_path):
    """CANN's set_env.sh makes pyACL importable; so does the toolkit's: ``python prog.py`` with
    ``import acl`` runs on the emulator, with no wrapper (the interpreter named in full, as a
    shell whose PATH holds the venv would find it)."""
    (tmp_path / "prog.py").write_text(PYACL_PROGRAM)
    env = bare_env(toolkit, tmp_path)
    assert env["PYTHONPATH"].split(":")[0] == str(toolkit / "python" / "site-packages")
    proc = run([sys.executable, "prog.py"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["aclnn_py.acl", "True", "0", "0", "0"]


def test_import_acl_from_a_python_without_aclnn_py_says_which_python(toolkit, tmp_path):
    """The shim on PYTHONPATH, imported by an interpreter that cannot import aclnn_py, names
    the interpreter to use instead of a bare ModuleNotFoundError deep in the package."""
    env = bare_env(toolkit, tmp_path)
    env["PYTHONNOUSERSITE"] = "1"
    code = "import sys; sys.modules['aclnn_py'] = None; import acl"
    proc = run([sys.executable, "-S", "-c", code], env, tmp_path)
    assert proc.returncode == 1
    assert "aclnn-py emulator's pyACL" in proc.stderr and sys.executable in proc.stderr


# ------------------------------------------------------------------ a moved environment ---


def test_moved_environment_names_the_rebuild_command(tmp_path):
    """The library's start-up code, for a package and interpreter that are no longer there (a
    moved or deleted venv), prints what happened and ``aclnn-py toolkit --rebuild``."""
    code = build._init_code(tmp_path / "gone" / "aclnn_py", str(tmp_path / "gone" / "python"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 1
    first = proc.stderr.splitlines()[0]
    assert first.startswith("aclnn-py toolkit: the emulator cannot start in this process")
    assert str(tmp_path / "gone" / "aclnn_py") in first
    assert '"aclnn-py toolkit --rebuild"' in proc.stderr and "(no longer there)" in proc.stderr



MOVED_PROGRAM = r"""
#include <stdio.h>
#include "acl/acl.h"

int main(void) {
    printf("aclInit %d\n", (int)aclInit(NULL));
    printf("aclrtSetDevice %d\n", (int)aclrtSetDevice(0));
    return 0;
}
"""


def test_a_program_whose_environment_moved_is_told_to_rebuild(tmp_path):
    """docs/c_api.md: a toolkit built from an environment that then moved (here the aclnn_py it
    was built from, copied into a directory that is then renamed, as a moved venv takes its
    site-packages along) makes a C program print the cause and ``aclnn-py toolkit --rebuild``,
    and every call fail with 500000, instead of cffi's report alone or a crash."""
    import aclnn_py

    env_dir = tmp_path / "env"
    shutil.copytree(Path(aclnn_py.__file__).parent, env_dir / "aclnn_py",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import aclnn_py.toolkit as t; "
            "print(t.ensure_toolkit())")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    built = run([sys.executable, "-c", code, env_dir], env, tmp_path, timeout=600)
    assert built.returncode == 0, built.stderr
    toolkit = Path(built.stdout.strip().splitlines()[-1])
    assert toolkit.is_relative_to(tmp_path / "xdg")
    (tmp_path / "moved.c").write_text(MOVED_PROGRAM)
    cc = run([CC, "moved.c", f"-I{toolkit / 'include'}", f"-L{toolkit / 'lib64'}", "-lascendcl",
              f"-Wl,-rpath,{toolkit / 'lib64'}", "-o", "moved"], env, tmp_path)
    assert cc.returncode == 0, cc.stderr
    env_dir.rename(tmp_path / "elsewhere")
    proc = run([tmp_path / "moved"], bare_env(toolkit, tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["aclInit", "500000", "aclrtSetDevice", "500000"]
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("aclnn-py toolkit: the emulator cannot start in this process")
    assert str(env_dir / "aclnn_py") in lines[0]
    assert '"aclnn-py toolkit --rebuild"' in lines[1]
    # the library's own last word names the remedy too (it is all that is left when cffi's
    # start-up fails before the package's code runs, e.g. without _cffi_backend)
    last = [s for s in lines if s.startswith("aclnn-py: the emulator did not start")]
    assert len(last) == 1 and "`aclnn-py toolkit --rebuild`" in last[0], proc.stderr

# ------------------------------------------------- built-in headers, generated ----------

# CANN's prototypes of the built-in operators (CANN's aclnn API reference, each operator's page)
CANN_PROTOTYPES = [
    "aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, "
    "uint64_t *workspaceSize, aclOpExecutor **executor)",
    "aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
    "aclrtStream stream)",
    "aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor "
    "*output, int64_t dim, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)",
    "aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor "
    "*executor, aclrtStream stream)",
    "aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor "
    "*out, uint64_t *workspaceSize, aclOpExecutor **executor)",
    "aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
    "aclrtStream stream)",
    "aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const "
    "aclTensor *output, int64_t dim, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor "
    "**executor)",
    "aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor "
    "*executor, aclrtStream stream)",
    "aclnnStatus aclnnHardsigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t "
    "*workspaceSize, aclOpExecutor **executor)",
    "aclnnStatus aclnnHardsigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor "
    "*executor, const aclrtStream stream)",
    "aclnnStatus aclnnInplaceHardsigmoidGetWorkspaceSize(const aclTensor *self, uint64_t "
    "*workspaceSize, aclOpExecutor **executor)",
    "aclnnStatus aclnnInplaceHardsigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor "
    "*executor, const aclrtStream stream)",
    "aclnnStatus aclnnHardsigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput, const "
    "aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)",
    "aclnnStatus aclnnHardsigmoidBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor "
    "*executor, aclrtStream stream)",
]


def test_builtin_headers_are_generated_and_match_cann(toolkit):
    """The operator headers are generated from the declarations when the toolkit is built (the
    package ships none written by hand), and every prototype is CANN's."""
    import re

    from aclnn_py.ops import REGISTRY

    shipped = Path(build.__file__).parent / "include" / "aclnnop"
    assert sorted(p.name for p in shipped.glob("*.h")) == ["aclnn_util.h"]
    found = {}
    for header in (toolkit / "include" / "aclnnop").glob("aclnn_*.h"):
        text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
        for m in re.finditer(r"ACLNN_API (aclnnStatus \w+\(.*?\));", text, re.S):
            proto = re.sub(r"\s+", " ", m.group(1)).replace("( ", "(")
            found[proto.split("(")[0].split()[-1]] = proto
    assert sorted(found.values()) == sorted(CANN_PROTOTYPES)
    assert {n for n in found if not n.endswith("GetWorkspaceSize")} == set(REGISTRY)
