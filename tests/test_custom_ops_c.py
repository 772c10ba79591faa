"""Custom operators from C and C++ (docs/custom_ops.md): `aclnn-py opgen` writes a package laid
out as CANN's (vendors/<vendor>/op_api/include/aclnn_<op>.h, op_api/lib/libcust_opapi.so) whose
headers follow CANN's generated ones; host programs in CANN's style compile against it with the
AclNNInvocationNaive sample's link line and run on the emulator. Expected values: NumPy float64
computations of the operators' formulas."""

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

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "custom" / "add_custom"
CXX = shutil.which("g++") or shutil.which("c++")
BASH = shutil.which("bash") or "/bin/bash"

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the toolkit is Linux-only"),
    pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH"),
    pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                       reason="this Python has no shared libpython, which the toolkit embeds"),
]


def cli(*args, env=None, cwd=None, timeout=300):
    full = {**os.environ, **(env or {})}
    # not from the source tree: `python -m` puts the working directory first on sys.path, and
    # the tree's aclnn_py has no compiled core (where the package is installed, not editable)
    return subprocess.run([sys.executable, "-m", "aclnn_py", *map(str, args)], env=full,
                          cwd=tempfile.gettempdir() if cwd is None else cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def xdg(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("xdg")


@pytest.fixture(scope="module")
def toolkit(xdg) -> Path:
    proc = cli("toolkit", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def package(xdg, toolkit, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pkg")
    proc = cli("opgen", SAMPLE / "add_custom.json", "--kernels", SAMPLE / "add_custom.py",
               "-o", out, env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    vendor = Path(proc.stdout.strip())
    assert vendor == out / "vendors" / "customize"
    return vendor


def shell(script: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """``script`` in a bash that has only PATH (the compilers' directory), HOME and LANG."""
    base = {"PATH": os.path.dirname(CXX) + ":/usr/bin:/bin", "HOME": str(cwd), "LANG": "C"}
    return subprocess.run([BASH, "-c", script], env={**base, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_package_layout_and_header(package):
    assert (package / "op_api" / "lib" / "libcust_opapi.so").is_file()
    assert (package / "bin" / "set_env.bash").is_file()
    header = (package / "op_api" / "include" / "aclnn_add_custom.h").read_text()
    sig = re.search(r"aclnnStatus aclnnAddCustomGetWorkspaceSize\((.*?)\);", header, re.S)
    assert sig is not None
    params = [p.strip() for p in sig.group(1).split(",")]
    assert params == ["const aclTensor *x", "const aclTensor *y", "const aclTensor *out",
                      "uint64_t *workspaceSize", "aclOpExecutor **executor"]
    assert re.search(r"aclnnStatus aclnnAddCustom\(\s*void \*workspace,\s*uint64_t "
                     r"workspaceSize,\s*aclOpExecutor \*executor,\s*aclrtStream stream\);",
                     header)


def test_cann_host_program_prints_test_pass(package, toolkit, tmp_path):
    """The g++ line of CANN's AclNNInvocationNaive sample, run with the toolkit's set_env.sh
    sourced and ASCEND_CUSTOM_OPP_PATH naming the vendor directory."""
    (tmp_path / "main.cpp").write_text((SAMPLE / "main.cpp").read_text())
    script = (f'export ASCEND_CUSTOM_OPP_PATH="{package}"; source "{toolkit}/set_env.sh"; '
              "g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include "
              "-L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl "
              "-lcust_opapi -lacl_op_compiler -lnnopbase -o main && ./main")
    proc = shell(script, {}, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "test pass"
    assert proc.stdout.splitlines()[0] == "result[0] is: 3.000000"



TWO_PACKAGES_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnn_add_custom.h"
#include "aclnn_sub_custom.h"

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    int64_t shape[] = {4};
    std::vector<float> host[3] = {{1, 2, 3, 4}, {10, 20, 30, 40}, {0, 0, 0, 0}};
    void *dev[3];
    aclTensor *t[3];
    for (int i = 0; i < 3; i++) {
        aclrtMalloc(&dev[i], 16, ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemcpy(dev[i], 16, host[i].data(), 16, ACL_MEMCPY_HOST_TO_DEVICE);
        t[i] = aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, dev[i]);
    }
    for (int op = 0; op < 2; op++) {
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        int r = op == 0 ? aclnnAddCustomGetWorkspaceSize(t[0], t[1], t[2], &ws, &ex)
                        : aclnnSubCustomGetWorkspaceSize(t[0], t[1], t[2], &ws, &ex);
        if (r == 0) r = op == 0 ? aclnnAddCustom(nullptr, ws, ex, stream)
                                : aclnnSubCustom(nullptr, ws, ex, stream);
        if (r == 0) r = aclrtSynchronizeStream(stream);
        if (r != 0) { printf("op %d: %d %s\n", op, r, aclGetRecentErrMsg()); return 1; }
        aclrtMemcpy(host[2].data(), 16, dev[2], 16, ACL_MEMCPY_DEVICE_TO_HOST);
        printf("%s", op == 0 ? "add" : "sub");
        for (float v : host[2]) printf(" %g", v);
        printf("\n");
    }
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_two_packages_in_one_program(xdg, toolkit, tmp_path):
    """docs/custom_ops.md: each package's libcust_opapi.so has the SONAME
    libcust_opapi_<vendor>.so (a link of that name beside it), so a program linked against two
    packages, by those names or by the libraries' paths, records and loads both and runs each
    package's operators; -lcust_opapi twice names the first package's library twice."""
    sub = json.loads((SAMPLE / "add_custom.json").read_text())
    sub[0]["op"] = "SubCustom"
    (tmp_path / "sub_custom.json").write_text(json.dumps(sub))
    (tmp_path / "sub_custom.py").write_text(
        "import numpy as np\n\ndef sub_custom(x, y, z):\n    np.subtract(x, y, out=z)\n")
    vendors = {}
    for vendor, definition, kernels in (
            ("alpha", SAMPLE / "add_custom.json", SAMPLE / "add_custom.py"),
            ("beta", tmp_path / "sub_custom.json", tmp_path / "sub_custom.py")):
        proc = cli("opgen", definition, "--kernels", kernels, "-o", tmp_path / "out",
                   "--vendor", vendor, env={"XDG_CACHE_HOME": str(xdg)})
        assert proc.returncode == 0, proc.stderr
        vendors[vendor] = Path(proc.stdout.strip())
        lib = vendors[vendor] / "op_api" / "lib"
        assert os.readlink(lib / f"libcust_opapi_{vendor}.so") == "libcust_opapi.so"
        readelf = shutil.which("readelf")
        if readelf:
            dyn = subprocess.run([readelf, "-d", str(lib / "libcust_opapi.so")],
                                 capture_output=True, text=True).stdout
            assert f"Library soname: [libcust_opapi_{vendor}.so]" in dyn, dyn
    (tmp_path / "main.cpp").write_text(TWO_PACKAGES_PROGRAM)
    a, b = vendors["alpha"], vendors["beta"]
    head = (f'export ASCEND_CUSTOM_OPP_PATH="{a}:{b}"; source "{toolkit}/set_env.sh"; '
            f"g++ main.cpp -I$ASCEND_HOME_PATH/include -I{a}/op_api/include "
            f"-I{b}/op_api/include -L$ASCEND_HOME_PATH/lib64 -lascendcl ")
    expected = ["add 11 22 33 44", "sub -9 -18 -27 -36"]
    for link in (f"-L{a}/op_api/lib -L{b}/op_api/lib -lcust_opapi_alpha -lcust_opapi_beta",
                 f"{a}/op_api/lib/libcust_opapi.so {b}/op_api/lib/libcust_opapi.so"):
        proc = shell(head + link + " -o main && ./main", {}, tmp_path)
        assert proc.returncode == 0, link + "\n" + proc.stdout + proc.stderr
        assert proc.stdout.splitlines() == expected, link
    proc = shell(head + f"-L{a}/op_api/lib -L{b}/op_api/lib -lcust_opapi -lcust_opapi -o main2",
                 {}, tmp_path)
    assert proc.returncode != 0 and "aclnnSubCustom" in proc.stderr, proc.stderr

def test_vendor_set_env_bash(package, toolkit, tmp_path):
    """CANN's vendors/<vendor>/bin/set_env.bash: the package's variables for a shell."""
    proc = shell(f'source "{package}/bin/set_env.bash"; echo "$ASCEND_CUSTOM_OPP_PATH"; '
                 'echo "$LD_LIBRARY_PATH"', {}, tmp_path)
    assert proc.stdout.split() == [str(package), f"{package}/op_api/lib"]


def test_run_add_custom_python_and_cpp(xdg, toolkit):
    env = {"XDG_CACHE_HOME": str(xdg)}
    py = cli("run", "add_custom", env=env)
    assert py.returncode == 0, py.stderr
    assert py.stdout.splitlines()[-1] == "test pass"
    cpp = cli("run", "add_custom", "--lang", "cpp", env=env)
    assert cpp.returncode == 0, cpp.stderr
    assert cpp.stdout.splitlines()[-1] == "test pass"


FULL_JSON = [{"op": "ScaleAddCustom", "input_desc": [
    {"name": "x", "param_type": "required", "type": ["float"], "format": ["ND"]},
    {"name": "bias", "param_type": "optional", "type": ["float"], "format": ["ND"]},
    {"name": "extra_inputs", "param_type": "dynamic", "type": ["float"], "format": ["ND"]}],
    "output_desc": [{"name": "y", "param_type": "required", "type": ["float"],
                     "format": ["ND"]}],
    "attr": [
    {"name": "scale", "param_type": "optional", "type": "float", "default_value": "1.0"},
    {"name": "repeat_count", "param_type": "required", "type": "int"},
    {"name": "negate", "param_type": "optional", "type": "bool", "default_value": "false"},
    {"name": "mode", "param_type": "optional", "type": "str", "default_value": "sum"},
    {"name": "axes", "param_type": "optional", "type": "listInt", "default_value": "[0]"},
    {"name": "weights", "param_type": "optional", "type": "listFloat", "default_value": "[]"},
    {"name": "flags", "param_type": "optional", "type": "listBool", "default_value": "[]"}]}]

FULL_KERNELS = '''
import numpy as np


def scale_add_custom(x, bias, extra_inputs, y, *, scale, repeat_count, negate, mode, axes,
                     weights, flags):
    acc = x.astype(np.float64) * scale * repeat_count
    if bias is not None:
        acc += bias
    for e, w in zip(extra_inputs, weights):
        acc += w * e
    if negate:
        acc = -acc
    acc += len(mode) * 1000 + sum(axes) * 100 + sum(flags) * 10
    y[...] = acc
'''

FULL_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnn_scale_add_custom.h"

static aclTensor *Tensor(std::vector<float> &host, void **dev) {
    int64_t shape[] = {(int64_t)host.size()};
    aclrtMalloc(dev, host.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*dev, host.size() * 4, host.data(), host.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, *dev);
}

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    std::vector<float> xh = {1, 2, 3, 4}, bh = {0.5f, 0.5f, 0.5f, 0.5f}, e1 = {10, 10, 10, 10},
                       e2 = {100, 100, 100, 100}, yh(4, 0);
    void *xd, *bd, *e1d, *e2d, *yd;
    aclTensor *x = Tensor(xh, &xd), *b = Tensor(bh, &bd), *y = Tensor(yh, &yd);
    const aclTensor *list[] = {Tensor(e1, &e1d), Tensor(e2, &e2d)};
    aclTensorList *extra = aclCreateTensorList(list, 2);
    int64_t axesv[] = {1, 2};
    float weightsv[] = {0.5f, 0.25f};
    bool flagsv[] = {true, false, true};
    aclIntArray *axes = aclCreateIntArray(axesv, 2);
    aclFloatArray *weights = aclCreateFloatArray(weightsv, 2);
    aclBoolArray *flags = aclCreateBoolArray(flagsv, 3);
    char mode[] = "other";
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int ret = aclnnScaleAddCustomGetWorkspaceSize(x, b, extra, 2.0, 3, true, mode, axes, weights,
                                                  flags, y, &ws, &ex);
    if (ret != 0) { printf("phase1 %d %s\n", ret, aclGetRecentErrMsg()); return 1; }
    ret = aclnnScaleAddCustom(nullptr, ws, ex, stream);
    if (ret != 0) { printf("phase2 %d\n", ret); return 1; }
    ret = aclrtSynchronizeStream(stream);
    if (ret != 0) { printf("sync %d %s\n", ret, aclGetRecentErrMsg()); return 1; }
    aclrtMemcpy(yh.data(), 16, yd, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    for (float v : yh) printf("%.9g\n", v);
    /* a null required tensor: 161001 */
    ret = aclnnScaleAddCustomGetWorkspaceSize(nullptr, b, extra, 2.0, 3, true, mode, axes,
                                              weights, flags, y, &ws, &ex);
    printf("null %d\n", ret);
    aclDestroyTensorList(extra);
    aclDestroyIntArray(axes);
    aclDestroyFloatArray(weights);
    aclDestroyBoolArray(flags);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_every_parameter_kind_from_cpp(xdg, toolkit, tmp_path):
    """An operator with an optional input, a dynamic input and one attribute of every type:
    CANN's generated signature (camelCase, <name>Optional for an optional input and an optional
    str / list attribute, aclTensorList, double / int64_t / bool / char * / aclIntArray /
    aclFloatArray / aclBoolArray, out), called from C++."""
    (tmp_path / "op.json").write_text(json.dumps(FULL_JSON))
    (tmp_path / "kernels.py").write_text(FULL_KERNELS)
    proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "kernels.py", "-o",
               tmp_path / "pkg", "--vendor", "acme", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    vendor = tmp_path / "pkg" / "vendors" / "acme"
    header = (vendor / "op_api" / "include" / "aclnn_scale_add_custom.h").read_text()
    sig = re.search(r"aclnnScaleAddCustomGetWorkspaceSize\((.*?)\);", header, re.S)
    assert sig is not None
    assert [p.strip() for p in sig.group(1).split(",")] == [
        "const aclTensor *x", "const aclTensor *biasOptional",
        "const aclTensorList *extraInputs", "double scale", "int64_t repeatCount",
        "bool negate", "char *modeOptional", "const aclIntArray *axesOptional",
        "const aclFloatArray *weightsOptional", "const aclBoolArray *flagsOptional",
        "const aclTensor *out", "uint64_t *workspaceSize", "aclOpExecutor **executor"]
    (tmp_path / "main.cpp").write_text(FULL_PROGRAM)
    script = (f'export ASCEND_CUSTOM_OPP_PATH="{vendor}"; source "{toolkit}/set_env.sh"; '
              "g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include "
              "-L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl "
              "-lcust_opapi -lacl_op_compiler -lnnopbase -o main && ./main")
    out = shell(script, {}, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.split("\n")
    x = np.array([1, 2, 3, 4], np.float64)
    golden = -(x * 2.0 * 3 + 0.5 + 0.5 * 10 + 0.25 * 100) + 5 * 1000 + 3 * 100 + 2 * 10
    np.testing.assert_array_equal([float(v) for v in lines[:4]], golden.astype(np.float32))
    assert lines[4] == "null 161001"


def test_opgen_errors_are_clear(xdg, tmp_path):
    (tmp_path / "op.json").write_text(json.dumps(FULL_JSON))
    (tmp_path / "empty.py").write_text("x = 1\n")
    proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "empty.py", "-o",
               tmp_path / "out", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 1
    assert "ScaleAddCustom: no kernel" in proc.stderr and "'scale_add_custom'" in proc.stderr
    (tmp_path / "bad.json").write_text('[{"op": "X", "output_desc": [{"name": "y", "type": '
                                       '["fp99"]}]}]')
    proc = cli("opgen", tmp_path / "bad.json", "--kernels", tmp_path / "empty.py", "-o",
               tmp_path / "out", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 1 and "X.output_desc[0].type[0]: 'fp99'" in proc.stderr
    proc = cli("opgen", tmp_path / "nope.json", "--kernels", tmp_path / "empty.py", "-o",
               tmp_path / "out", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 2 and "no such file" in proc.stderr
    assert not (tmp_path / "out" / "vendors").exists()


# ------------------------------------------- hostile definitions, optional outputs ---------

HOSTILE = ['*/ int x = system("touch PWNED"); /*', "a\n#include <stdlib.h>\n"
           'static int y = system("touch PWNED");\n??/\n', '\\"); system("touch PWNED"); ("',
           "??=define int long ??/", "é€😀\u202e", "before\0after", "\\" * 3]

HOSTILE_JSON = [{"op": "HostileCustom", "input_desc": [
    {"name": "x", "param_type": "required", "type": ["float"], "format": ["ND"]}],
    "output_desc": [
    {"name": "y", "param_type": "required", "type": ["float"], "format": ["ND"]},
    {"name": "extra", "param_type": "optional", "type": ["float"], "format": ["ND"]}],
    "attr": [{"name": f"s{i}", "param_type": "optional", "type": "str", "default_value": v}
             for i, v in enumerate(HOSTILE)]}]

HOSTILE_KERNELS = f'''
HOSTILE = {HOSTILE!r}


def hostile_custom(x, y, extra, **attrs):
    got = [attrs[f"s{{i}}"] for i in range(len(HOSTILE))]
    # every default arrives exactly: 1 per default that does, plus 100 when extra is absent
    y[...] = x + sum(g == h for g, h in zip(got, HOSTILE)) + (100 if extra is None else 0)
    if extra is not None:
        extra[...] = -x
'''

HOSTILE_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnn_hostile_custom.h"

static aclTensor *Tensor(std::vector<float> &host, void **dev) {
    int64_t shape[] = {(int64_t)host.size()};
    aclrtMalloc(dev, host.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*dev, host.size() * 4, host.data(), host.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, *dev);
}

static int Run(aclTensor *x, aclTensor *y, aclTensor *extra, aclrtStream stream) {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int ret = aclnnHostileCustomGetWorkspaceSize(x, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                 nullptr, nullptr, y, extra, &ws, &ex);
    if (ret != 0) { printf("phase1 %d %s\n", ret, aclGetRecentErrMsg()); return ret; }
    ret = aclnnHostileCustom(nullptr, ws, ex, stream);
    if (ret != 0) { printf("phase2 %d\n", ret); return ret; }
    return aclrtSynchronizeStream(stream);
}

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    std::vector<float> xh = {1, 2}, yh(2, 0), eh(2, 0);
    void *xd, *yd, *ed;
    aclTensor *x = Tensor(xh, &xd), *y = Tensor(yh, &yd), *extra = Tensor(eh, &ed);
    /* the optional output null, then given */
    if (Run(x, y, nullptr, stream) != 0) return 1;
    aclrtMemcpy(yh.data(), 8, yd, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%g %g\n", yh[0], yh[1]);
    if (Run(x, y, extra, stream) != 0) return 1;
    aclrtMemcpy(yh.data(), 8, yd, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(eh.data(), 8, ed, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%g %g %g %g\n", yh[0], yh[1], eh[0], eh[1]);
    /* a required output null: 161001 */
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int ret = aclnnHostileCustomGetWorkspaceSize(x, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                 nullptr, nullptr, nullptr, extra, &ws, &ex);
    printf("null y %d\n", ret);
    /* a repeatable executor without the optional output: output 0 is yOut, 1 out of range */
    ret = aclnnHostileCustomGetWorkspaceSize(x, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr, y, nullptr, &ws, &ex);
    if (ret != 0 || aclSetAclOpExecutorRepeatable(ex) != 0) return 1;
    void *y2;
    aclrtMalloc(&y2, 8, ACL_MEM_MALLOC_HUGE_FIRST);
    printf("index 0 %d\n", aclSetOutputTensorAddr(ex, 0, y, y2));
    printf("index 1 %d\n", aclSetOutputTensorAddr(ex, 1, y, y2));
    if (aclnnHostileCustom(nullptr, 0, ex, stream) != 0) return 1;
    if (aclrtSynchronizeStream(stream) != 0) return 1;
    aclrtMemcpy(yh.data(), 8, y2, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%g %g\n", yh[0], yh[1]);
    aclDestroyAclOpExecutor(ex);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_hostile_defaults_never_reach_generated_code(xdg, toolkit, tmp_path):
    """str defaults crafted to close the header's comment, splice lines with a trigraph, end a
    string literal or carry NUL and unicode: the package builds, nothing of them is in its
    header or library source, nothing ran, and the kernel gets each default exactly. The
    operator also has an optional output (extraOutOptional), null and given from C++."""
    (tmp_path / "op.json").write_text(json.dumps(HOSTILE_JSON))
    (tmp_path / "kernels.py").write_text(HOSTILE_KERNELS)
    proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "kernels.py", "-o",
               tmp_path / "pkg", env={"XDG_CACHE_HOME": str(xdg)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    vendor = tmp_path / "pkg" / "vendors" / "customize"
    header = (vendor / "op_api" / "include" / "aclnn_hostile_custom.h").read_text()
    assert header.isascii()
    for word in ("system", "PWNED", "#include <stdlib.h>", "??", "\\", "before"):
        assert word not in header
    sig = re.search(r"aclnnHostileCustomGetWorkspaceSize\((.*?)\);", header, re.S)
    assert sig is not None
    assert [p.strip() for p in sig.group(1).split(",")] == [
        "const aclTensor *x", *[f"char *s{i}Optional" for i in range(len(HOSTILE))],
        "const aclTensor *yOut", "const aclTensor *extraOutOptional", "uint64_t *workspaceSize",
        "aclOpExecutor **executor"]
    # the header compiles as C with trigraphs on and every warning an error
    (tmp_path / "check.c").write_text('#include "aclnn_hostile_custom.h"\nint main(void) '
                                      "{ return 0; }\n")
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is not None:
        proc = subprocess.run([cc, "-std=c99", "-trigraphs", "-Wall", "-Wextra", "-Werror",
                               "-Wtrigraphs", "-fsyntax-only", f"-I{toolkit / 'include'}",
                               f"-I{vendor / 'op_api' / 'include'}", "check.c"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    (tmp_path / "main.cpp").write_text(HOSTILE_PROGRAM)
    script = (f'export ASCEND_CUSTOM_OPP_PATH="{vendor}"; source "{toolkit}/set_env.sh"; '
              "g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include "
              "-L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl "
              "-lcust_opapi -lacl_op_compiler -lnnopbase -o main && ./main")
    out = shell(script, {}, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    n = len(HOSTILE)
    assert out.stdout.splitlines() == [
        f"{1 + n + 100:g} {2 + n + 100:g}",  # every default exact, extra absent
        f"{1 + n:g} {2 + n:g} -1 -2",  # extra given
        "null y 161001",
        "index 0 0", "index 1 161002",
        f"{1 + n + 100:g} {2 + n + 100:g}"]  # the rebound yOut
    assert not list(tmp_path.rglob("PWNED")) and not (Path.cwd() / "PWNED").exists()


def test_hostile_names_are_refused_by_opgen(xdg, tmp_path):
    (tmp_path / "empty.py").write_text("x = 1\n")
    for field, definition in [
            ("HostileCustom.input_desc[0].name",
             {**HOSTILE_JSON[0], "input_desc": [{"name": '*/ int x = system("touch PWNED");',
                                                 "type": ["float"]}]}),
            ("HostileCustom.attr[0].name",
             {**HOSTILE_JSON[0], "attr": [{"name": "int", "type": "int",
                                           "param_type": "required"}]}),
            ("operator 1.op", {**HOSTILE_JSON[0], "op": 'X"); system("touch PWNED'})]:
        (tmp_path / "op.json").write_text(json.dumps([FULL_JSON[0], definition]))
        proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "empty.py", "-o",
                   tmp_path / "out", env={"XDG_CACHE_HOME": str(xdg)}, cwd=tmp_path)
        assert proc.returncode == 1 and proc.stderr.count(field + ":") == 1, proc.stderr
        assert "Traceback" not in proc.stderr
    # two operators of one header file
    (tmp_path / "op.json").write_text(json.dumps([FULL_JSON[0], {**FULL_JSON[0],
                                                                 "op": "Scale_AddCustom"}]))
    proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "empty.py", "-o",
               tmp_path / "out", env={"XDG_CACHE_HOME": str(xdg)}, cwd=tmp_path)
    assert proc.returncode == 1
    assert "'Scale_AddCustom' and 'ScaleAddCustom'" in proc.stderr
    assert "aclnn_scale_add_custom.h" in proc.stderr
    assert not (tmp_path / "out" / "vendors").exists() and not list(tmp_path.rglob("PWNED"))


REF_JSON = [{"op": "AxpyInplaceCustom", "input_desc": [
    {"name": "var", "param_type": "required", "type": ["float"], "format": ["ND"]},
    {"name": "grad", "param_type": "required", "type": ["float"], "format": ["ND"]}],
    "output_desc": [
    {"name": "var", "param_type": "required", "type": ["float"], "format": ["ND"]},
    {"name": "norm", "param_type": "required", "type": ["float"], "format": ["ND"]}],
    "attr": [{"name": "alpha", "param_type": "optional", "type": "float",
              "default_value": "1.0"}]}]

REF_KERNELS = '''
import numpy as np


def axpy_inplace_custom(var, grad, var_out, norm, *, alpha):
    assert var is var_out and var.flags.writeable
    var += alpha * grad
    norm[...] = np.abs(var).sum()
'''

REF_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnn_axpy_inplace_custom.h"

static aclTensor *Tensor(std::vector<float> &host, void **dev) {
    int64_t shape[] = {(int64_t)host.size()};
    aclrtMalloc(dev, host.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*dev, host.size() * 4, host.data(), host.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, *dev);
}

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    std::vector<float> vh = {1, -2, 3}, gh = {10, 10, -10}, nh = {0};
    void *vd, *gd, *nd;
    aclTensor *var = Tensor(vh, &vd), *grad = Tensor(gh, &gd), *norm = Tensor(nh, &nd);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int ret = aclnnAxpyInplaceCustomGetWorkspaceSize(var, grad, 0.5, norm, &ws, &ex);
    if (ret != 0) { printf("phase1 %d %s\n", ret, aclGetRecentErrMsg()); return 1; }
    if (aclnnAxpyInplaceCustom(nullptr, ws, ex, stream) != 0) return 1;
    if (aclrtSynchronizeStream(stream) != 0) { printf("%s\n", aclGetRecentErrMsg()); return 1; }
    aclrtMemcpy(vh.data(), 12, vd, 12, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(nh.data(), 4, nd, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%g %g %g %g\n", vh[0], vh[1], vh[2], nh[0]);
    ret = aclnnAxpyInplaceCustomGetWorkspaceSize(nullptr, grad, 0.5, norm, &ws, &ex);
    printf("null varRef %d\n", ret);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_ref_parameter_from_cpp(xdg, toolkit, tmp_path):
    """An input and an output of one name: CANN's 'aclTensor *varRef' at the input's place,
    the output no parameter; the kernel updates the tensor in place."""
    (tmp_path / "op.json").write_text(json.dumps(REF_JSON))
    (tmp_path / "kernels.py").write_text(REF_KERNELS)
    proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "kernels.py", "-o",
               tmp_path / "pkg", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    vendor = tmp_path / "pkg" / "vendors" / "customize"
    header = (vendor / "op_api" / "include" / "aclnn_axpy_inplace_custom.h").read_text()
    sig = re.search(r"aclnnAxpyInplaceCustomGetWorkspaceSize\((.*?)\);", header, re.S)
    assert sig is not None
    assert [p.strip() for p in sig.group(1).split(",")] == [
        "aclTensor *varRef", "const aclTensor *grad", "double alpha", "const aclTensor *out",
        "uint64_t *workspaceSize", "aclOpExecutor **executor"]
    (tmp_path / "main.cpp").write_text(REF_PROGRAM)
    script = (f'export ASCEND_CUSTOM_OPP_PATH="{vendor}"; source "{toolkit}/set_env.sh"; '
              "g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include "
              "-L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl "
              "-lcust_opapi -lacl_op_compiler -lnnopbase -o main && ./main")
    out = shell(script, {}, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    golden = np.array([1, -2, 3], np.float64) + 0.5 * np.array([10, 10, -10])
    assert out.stdout.splitlines() == [
        " ".join(f"{v:g}" for v in [*golden, np.abs(golden).sum()]), "null varRef 161001"]


FOREACH_JSON = [{"op": "ForeachAddCustom", "input_desc": [
    {"name": "x1", "param_type": "dynamic", "type": ["float"], "format": ["ND"]},
    {"name": "x2", "param_type": "dynamic", "type": ["float"], "format": ["ND"]}],
    "output_desc": [{"name": "y", "param_type": "dynamic", "type": ["float"],
                     "format": ["ND"]}]}]

FOREACH_KERNELS = '''
def foreach_add_custom(x1, x2, y):
    for a, b, out in zip(x1, x2, y):
        out[...] = a + b
'''

FOREACH_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnn_foreach_add_custom.h"

static aclTensor *Tensor(std::vector<float> &host, void **dev) {
    int64_t shape[] = {(int64_t)host.size()};
    aclrtMalloc(dev, host.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*dev, host.size() * 4, host.data(), host.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, *dev);
}

int main() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    std::vector<float> a = {1, 2}, b = {10}, c = {100, 200}, d = {1000}, y0(2), y1(1);
    void *ad, *bd, *cd, *dd, *y0d, *y1d;
    const aclTensor *l1[] = {Tensor(a, &ad), Tensor(b, &bd)};
    const aclTensor *l2[] = {Tensor(c, &cd), Tensor(d, &dd)};
    const aclTensor *lo[] = {Tensor(y0, &y0d), Tensor(y1, &y1d)};
    aclTensorList *x1 = aclCreateTensorList(l1, 2), *x2 = aclCreateTensorList(l2, 2);
    aclTensorList *out = aclCreateTensorList(lo, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int ret = aclnnForeachAddCustomGetWorkspaceSize(x1, x2, out, &ws, &ex);
    if (ret != 0) { printf("phase1 %d %s\n", ret, aclGetRecentErrMsg()); return 1; }
    if (aclnnForeachAddCustom(nullptr, ws, ex, stream) != 0) return 1;
    if (aclrtSynchronizeStream(stream) != 0) { printf("%s\n", aclGetRecentErrMsg()); return 1; }
    aclrtMemcpy(y0.data(), 8, y0d, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(y1.data(), 4, y1d, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%g %g %g\n", y0[0], y0[1], y1[0]);
    printf("null out %d\n", aclnnForeachAddCustomGetWorkspaceSize(x1, x2, nullptr, &ws, &ex));
    aclDestroyTensorList(x1);
    aclDestroyTensorList(x2);
    aclDestroyTensorList(out);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_dynamic_output_from_cpp(xdg, toolkit, tmp_path):
    """A dynamic output: CANN's 'const aclTensorList *out' (aclnn_foreach_*.h); the kernel gets
    a list of writable arrays."""
    (tmp_path / "op.json").write_text(json.dumps(FOREACH_JSON))
    (tmp_path / "kernels.py").write_text(FOREACH_KERNELS)
    proc = cli("opgen", tmp_path / "op.json", "--kernels", tmp_path / "kernels.py", "-o",
               tmp_path / "pkg", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    vendor = tmp_path / "pkg" / "vendors" / "customize"
    header = (vendor / "op_api" / "include" / "aclnn_foreach_add_custom.h").read_text()
    sig = re.search(r"aclnnForeachAddCustomGetWorkspaceSize\((.*?)\);", header, re.S)
    assert sig is not None
    assert [p.strip() for p in sig.group(1).split(",")] == [
        "const aclTensorList *x1", "const aclTensorList *x2", "const aclTensorList *out",
        "uint64_t *workspaceSize", "aclOpExecutor **executor"]
    (tmp_path / "main.cpp").write_text(FOREACH_PROGRAM)
    script = (f'export ASCEND_CUSTOM_OPP_PATH="{vendor}"; source "{toolkit}/set_env.sh"; '
              "g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include "
              "-L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl "
              "-lcust_opapi -lacl_op_compiler -lnnopbase -o main && ./main")
    out = shell(script, {}, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == ["101 202 1010", "null out 161001"]


# twelve operators, one package (issue 28 item 1): each is an elementwise formula of x and y
# with one float attribute; their definitions come in several files (one holding three) and in
# the order written here, and the C++ program calls every one of them
MANY = {"AddCustom": "x + y", "SubCustom": "x - y", "MulCustom": "x * y",
        "DivCustom": "x / y", "MaxCustom": "np.maximum(x, y)", "MinCustom": "np.minimum(x, y)",
        "AxpyCustom": "a * x + y", "ScaledDiffCustom": "a * (x - y)",
        "HypotCustom": "np.hypot(x, y)", "PowAbsCustom": "np.abs(x) ** a",
        "LerpCustom": "x + a * (y - x)", "SquaredErrCustom": "(x - y) ** 2"}


def _many_def(op: str) -> dict:
    t = {"param_type": "required", "type": ["float"], "format": ["ND"]}
    return {"op": op, "input_desc": [{"name": "x", **t}, {"name": "y", **t}],
            "output_desc": [{"name": "z", **t}],
            "attr": [{"name": "a", "param_type": "optional", "type": "float",
                      "default_value": "1.0"}]}


def test_package_of_twelve_operators_links_each_from_cpp(xdg, toolkit, tmp_path):
    from aclnn_py.custom import snake_case

    ops = list(MANY)
    files = []
    for i, op in enumerate(ops[:9]):
        files.append(tmp_path / f"op{i}.json")
        files[-1].write_text(json.dumps([_many_def(op)]))
    files.append(tmp_path / "three.json")
    files[-1].write_text(json.dumps([_many_def(op) for op in ops[9:]]))
    (tmp_path / "kernels.py").write_text("import numpy as np\n\n" + "".join(
        f"\ndef {snake_case(op)}(x, y, z, *, a):\n    x = x.astype(np.float64)\n"
        f"    y = y.astype(np.float64)\n    z[...] = {expr}\n" for op, expr in MANY.items()))
    proc = cli("opgen", *files, "--kernels", tmp_path / "kernels.py", "-o", tmp_path / "pkg",
               env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    vendor = tmp_path / "pkg" / "vendors" / "customize"
    nm = subprocess.run(["nm", "-D", "--defined-only", str(vendor / "op_api" / "lib" /
                                                             "libcust_opapi.so")],
                        capture_output=True, text=True)
    if nm.returncode == 0:  # binutils present: every phase exported unmangled
        names = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
        for op in ops:
            assert {f"aclnn{op}", f"aclnn{op}GetWorkspaceSize"} <= names, op
    calls = "\n".join(f"""    {{
        uint64_t ws = 0; aclOpExecutor *ex = nullptr;
        int r = aclnn{op}GetWorkspaceSize(x, y, {0.5 + i / 4}, z, &ws, &ex);
        if (r == 0) r = aclnn{op}(nullptr, ws, ex, stream);
        if (r == 0) r = aclrtSynchronizeStream(stream);
        if (r != 0) {{ printf("{op} %d %s\\n", r, aclGetRecentErrMsg()); return 1; }}
        aclrtMemcpy(zh.data(), 32, zd, 32, ACL_MEMCPY_DEVICE_TO_HOST);
        printf("{op}");
        for (float v : zh) printf(" %.9g", v);
        printf("\\n");
    }}""" for i, op in enumerate(ops))
    includes = "".join(f'#include "aclnn_{snake_case(op)}.h"\n' for op in ops)
    (tmp_path / "main.cpp").write_text(f"""#include <cstdio>
#include <vector>
#include "acl/acl.h"
{includes}
static aclTensor *Tensor(std::vector<float> &host, void **dev) {{
    int64_t shape[] = {{2, 4}};
    aclrtMalloc(dev, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*dev, 32, host.data(), 32, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 2, *dev);
}}

int main() {{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    std::vector<float> xh = {{1, -2, 3, -4, 5.5f, 6, -7, 8}};
    std::vector<float> yh = {{2, 3, -1, 4, 0.5f, -6, 7, 16}}, zh(8, 0);
    void *xd, *yd, *zd;
    aclTensor *x = Tensor(xh, &xd), *y = Tensor(yh, &yd), *z = Tensor(zh, &zd);
{calls}
    aclDestroyTensor(x);
    aclDestroyTensor(y);
    aclDestroyTensor(z);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}}
""")
    script = (f'export ASCEND_CUSTOM_OPP_PATH="{vendor}"; source "{toolkit}/set_env.sh"; '
              "g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include "
              "-L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl "
              "-lcust_opapi -lacl_op_compiler -lnnopbase -o main && ./main")
    out = shell(script, {}, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]]
            for line in out.stdout.splitlines() if line.strip()}
    assert list(rows) == ops
    x = np.array([1, -2, 3, -4, 5.5, 6, -7, 8], np.float64)
    y = np.array([2, 3, -1, 4, 0.5, -6, 7, 16], np.float64)
    golden = {"AddCustom": x + y, "SubCustom": x - y, "MulCustom": x * y, "DivCustom": x / y,
              "MaxCustom": np.maximum(x, y), "MinCustom": np.minimum(x, y)}
    for i, op in enumerate(ops):
        a = 0.5 + i / 4
        golden.setdefault(op, {"AxpyCustom": a * x + y, "ScaledDiffCustom": a * (x - y),
                               "HypotCustom": np.sqrt(x * x + y * y),
                               "PowAbsCustom": np.abs(x) ** a, "LerpCustom": x + a * (y - x),
                               "SquaredErrCustom": (x - y) * (x - y)}.get(op))
        np.testing.assert_array_equal(np.asarray(rows[op], np.float32),
                                      golden[op].astype(np.float32), err_msg=op)
