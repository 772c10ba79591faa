"""CANN's install layout (docs/c_api.md "A CANN install at a prefix", docs/custom_ops.md
"Installing a package"): `aclnn-py toolkit --prefix DIR` lays out the directories that CANN's
operator projects' own run.sh and CMake files read, `aclnn-py opgen --install` installs a package
where CANN's installer does, and the test project under tests/data/cann_project (our own, in the
style of CANN's AclNNInvocation samples) builds, runs and passes its own verification with only
PATH, HOME and ASCEND_INSTALL_PATH (or ASCEND_HOME_DIR) set. Expected values come from the
project's NumPy golden data and from CANN's documented layout and variables."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "tests" / "data" / "cann_project"
CXX = shutil.which("g++") or shutil.which("c++")
CMAKE = shutil.which("cmake")
BASH = shutil.which("bash") or "/bin/bash"
ARCH = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                   platform.machine().lower())

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the toolkit is Linux-only"),
    pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH"),
    pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                       reason="this Python has no shared libpython, which the toolkit embeds"),
]
needs_cmake = pytest.mark.skipif(CMAKE is None, reason="no cmake on PATH")

# the variables a sourced setenv.bash sets: a test gives them explicitly or not at all
_ASCEND = ("ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_OPP_PATH",
           "ASCEND_INSTALL_PATH", "ASCEND_HOME_DIR", "ASCEND_AICPU_PATH", "DDK_PATH",
           "NPU_HOST_LIB")


def cli(*args, env=None, timeout=300) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in _ASCEND}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "aclnn_py", *map(str, args)], env=full,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          timeout=timeout)


def clean_path() -> str:
    """PATH of a plain shell: the venv's python3 (the projects' scripts use NumPy), the C++
    compiler, cmake and the system directories; nothing else."""
    dirs = [os.path.dirname(sys.executable), os.path.dirname(CXX)]
    if CMAKE:
        dirs.append(os.path.dirname(CMAKE))
    return ":".join(dict.fromkeys([*dirs, "/usr/bin", "/bin"]))


def shell(script: str, env: dict, cwd: Path, timeout=300) -> subprocess.CompletedProcess:
    """``script`` in a bash whose whole environment is PATH, HOME and ``env``."""
    base = {"PATH": clean_path(), "HOME": str(cwd)}
    return subprocess.run([BASH, "-c", script], env={**base, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def sourced(prefix: Path, names, extra: str = "") -> dict[str, str]:
    """The values of ``names`` after sourcing ``prefix``/bin/setenv.bash in a clean shell."""
    script = (f'{extra}source "{prefix}/bin/setenv.bash" && '
              + "; ".join(f'echo "{n}=${{{n}}}"' for n in names))
    proc = shell(script, {"LD_LIBRARY_PATH": "/x"}, Path(tempfile.gettempdir()))
    assert proc.returncode == 0, proc.stderr
    return dict(line.split("=", 1) for line in proc.stdout.splitlines())


@pytest.fixture(scope="module")
def xdg(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("xdg")


def new_prefix(xdg: Path, base: Path) -> Path:
    prefix = base / "Ascend" / "ascend-toolkit" / "latest"
    proc = cli("toolkit", "--prefix", prefix, env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(prefix)
    return prefix


def install(xdg: Path, prefix: Path, *args, definition=PROJECT / "add_custom.json",
            kernels=PROJECT / "add_custom.py", env=None) -> subprocess.CompletedProcess:
    """`aclnn-py opgen ... --install` after sourcing ``prefix``'s setenv.bash (its variables)."""
    variables = {"ASCEND_HOME_PATH": str(prefix), "ASCEND_TOOLKIT_HOME": str(prefix),
                 "ASCEND_OPP_PATH": str(prefix / "opp")} if prefix is not None else {}
    return cli("opgen", definition, "--kernels", kernels, "--install", *args,
               env={"XDG_CACHE_HOME": str(xdg), **variables, **(env or {})})


@pytest.fixture(scope="module")
def prefix(xdg, tmp_path_factory) -> Path:
    """A toolkit at <tmp>/Ascend/ascend-toolkit/latest with the project's AddCustom installed."""
    prefix = new_prefix(xdg, tmp_path_factory.mktemp("home"))
    # as a user would: in a shell that sourced the prefix's setenv.bash
    script = (f'source "{prefix}/bin/setenv.bash" && "{sys.executable}" -m aclnn_py opgen '
              f'"{PROJECT}/add_custom.json" --kernels "{PROJECT}/add_custom.py" --install')
    proc = shell(script, {"XDG_CACHE_HOME": str(xdg)}, Path(tempfile.gettempdir()))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(prefix / "opp" / "vendors" / "customize")
    return prefix


def sub_definition(tmp: Path) -> tuple[Path, Path]:
    """A second operator, SubCustom (z = x - y, float32), for a second vendor."""
    (tmp / "sub_custom.json").write_text(json.dumps([{
        "op": "SubCustom",
        "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"],
                        "type": ["float"]},
                       {"name": "y", "param_type": "required", "format": ["ND"],
                        "type": ["float"]}],
        "output_desc": [{"name": "z", "param_type": "required", "format": ["ND"],
                         "type": ["float"]}]}]))
    (tmp / "sub_custom.py").write_text(
        "import numpy as np\n\ndef sub_custom(x, y, z):\n    np.subtract(x, y, out=z)\n")
    return tmp / "sub_custom.json", tmp / "sub_custom.py"


SUB_MAIN = r"""
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnn_sub_custom.h"
int main() {
    const int64_t shape[1] = {6}, strides[1] = {1};
    std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {6, 5, 4, 3, 2, 1}, z(6, 0.0f);
    const float expected[6] = {-5, -3, -1, 1, 3, 5};
    aclInit(nullptr); aclrtSetDevice(0);
    aclrtStream stream; aclrtCreateStream(&stream);
    void *d[3];
    for (int i = 0; i < 3; i++) aclrtMalloc(&d[i], 24, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(d[0], 24, x.data(), 24, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(d[1], 24, y.data(), 24, ACL_MEMCPY_HOST_TO_DEVICE);
    aclTensor *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, d[i]);
    uint64_t ws = 0; aclOpExecutor *ex = nullptr;
    int r1 = aclnnSubCustomGetWorkspaceSize(t[0], t[1], t[2], &ws, &ex);
    int r2 = aclnnSubCustom(nullptr, ws, ex, stream);
    int r3 = aclrtSynchronizeStream(stream);
    aclrtMemcpy(z.data(), 24, d[2], 24, ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("%d %d %d", r1, r2, r3);
    for (int i = 0; i < 6; i++) std::printf(" %g", z[i]);
    std::printf("\n");
    for (int i = 0; i < 6; i++) if (z[i] != expected[i]) return 1;
    std::printf("test pass\n");
    return 0;
}
"""


# ------------------------------------------------------------------------------ layout -----


def test_prefix_layout(prefix):
    """CANN's directories, with include/ and lib64/ the real ones and the others relative
    symlinks to them (a moved prefix keeps working)."""
    assert (prefix / "include" / "acl" / "acl.h").is_file()
    assert not (prefix / "include").is_symlink()
    lib = prefix / "lib64" / "libascendcl.so"
    assert lib.is_file() and not lib.is_symlink()
    for name in ("libnnopbase.so", "libopapi.so", "libacl_op_compiler.so"):
        assert os.readlink(prefix / "lib64" / name) == "libascendcl.so"
        assert (prefix / "lib64" / "stub" / name).resolve() == lib.resolve()
    for sub in ("runtime", f"{ARCH}-linux"):
        for name, real in (("include", "include"), ("lib64", "lib64")):
            link = prefix / sub / name
            assert link.is_symlink() and not os.path.isabs(os.readlink(link)), link
            assert link.resolve() == (prefix / real).resolve()
        assert (prefix / sub / "include" / "acl" / "acl.h").is_file()
        assert (prefix / sub / "lib64" / "libascendcl.so").is_file()
    assert (prefix / f"{ARCH}-linux" / "devlib" / "libascendcl.so").is_file()
    assert (prefix / "opp" / "vendors").is_dir()
    assert (prefix / "python" / "site-packages" / "acl.py").is_file()
    assert (prefix / "set_env.sh").is_file() and (prefix / "bin" / "setenv.bash").is_file()


def test_cached_toolkit_has_the_same_layout(xdg):
    proc = cli("toolkit", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    toolkit = Path(proc.stdout.strip())
    for rel in ("bin/setenv.bash", "set_env.sh", "runtime/include/acl/acl.h",
                "runtime/lib64/libascendcl.so", f"{ARCH}-linux/include/acl/acl.h",
                f"{ARCH}-linux/lib64/libascendcl.so", "python/site-packages/acl.py"):
        assert (toolkit / rel).is_file(), rel
    assert (toolkit / "opp" / "vendors").is_dir()


def test_setenv_exports_what_canns_does(prefix, tmp_path):
    names = ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
             "LD_LIBRARY_PATH", "PYTHONPATH")
    got = sourced(prefix, names)
    assert got == {"ASCEND_TOOLKIT_HOME": str(prefix), "ASCEND_HOME_PATH": str(prefix),
                   "ASCEND_OPP_PATH": f"{prefix}/opp", "ASCEND_AICPU_PATH": str(prefix),
                   "LD_LIBRARY_PATH": f"{prefix}/lib64:/x",
                   "PYTHONPATH": f"{prefix}/python/site-packages"}
    # sourced from a `set -euo pipefail` script with none of the variables set before
    for script in ("bin/setenv.bash", "set_env.sh"):
        proc = shell(f'set -euo pipefail; source "{prefix}/{script}"; echo "$LD_LIBRARY_PATH"',
                     {}, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"{prefix}/lib64"
    # set_env.sh at the top sets the same
    proc = shell(f'source "{prefix}/set_env.sh" && echo "$ASCEND_OPP_PATH"', {}, tmp_path)
    assert proc.stdout.strip() == f"{prefix}/opp"
    # the op_api/lib of the packages that ASCEND_CUSTOM_OPP_PATH names, first
    vendor = tmp_path / "vendors" / "acme"
    (vendor / "op_api" / "lib").mkdir(parents=True)
    got = sourced(prefix, ["LD_LIBRARY_PATH"],
                  extra=f'export ASCEND_CUSTOM_OPP_PATH="{vendor}:/nonexistent"; ')
    assert got["LD_LIBRARY_PATH"] == f"{vendor}/op_api/lib:{prefix}/lib64:/x"


def test_a_moved_prefix_sets_its_own_paths_and_runs(prefix, tmp_path):
    """A copy of the prefix elsewhere: its setenv.bash names the copy, and a built-in operator
    program compiled against runtime/include and <arch>-linux/lib64 runs from it."""
    moved = tmp_path / "elsewhere" / "latest"
    shutil.copytree(prefix, moved, symlinks=True)
    got = sourced(moved, ["ASCEND_HOME_PATH", "ASCEND_OPP_PATH"])
    assert got == {"ASCEND_HOME_PATH": str(moved), "ASCEND_OPP_PATH": f"{moved}/opp"}
    src = REPO / "samples" / "c" / "hardsigmoid.cpp"
    script = (f'source "{moved}/bin/setenv.bash" && '
              f'g++ "{src}" -I$ASCEND_HOME_PATH/runtime/include '
              "-I$ASCEND_HOME_PATH/runtime/include/aclnnop "
              f"-L$ASCEND_HOME_PATH/{ARCH}-linux/lib64 -lopapi -lascendcl -lnnopbase -o prog "
              "&& ./prog")
    proc = shell(script, {}, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the library the program loaded is the moved copy's
    ldd = shell(f'source "{moved}/bin/setenv.bash" && ldd ./prog', {}, tmp_path).stdout
    assert f"{moved}/lib64/libascendcl.so" in ldd


# ----------------------------------------------------------------- the project's run.sh -----


def copy_project(tmp_path: Path) -> Path:
    dest = tmp_path / "cann_project"
    shutil.copytree(PROJECT, dest)
    return dest


@needs_cmake
def test_project_run_sh_with_ascend_install_path(prefix, tmp_path):
    """The multi-file project's own run.sh: gen_data.py, cmake ../src -DCMAKE_SKIP_RPATH=TRUE
    against DDK_PATH / NPU_HOST_LIB, the program, verify_result.py against the NumPy golden
    data; the environment is PATH, HOME and ASCEND_INSTALL_PATH only."""
    project = copy_project(tmp_path)
    proc = shell("bash run.sh", {"ASCEND_INSTALL_PATH": str(prefix)},
                 project / "AclNNInvocation")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert proc.stdout.splitlines()[-1] == "test pass", out
    assert f"INC_PATH: {prefix}" in proc.stdout
    assert f"LIB_PATH: {prefix}/{ARCH}-linux/lib64" in proc.stdout
    assert (project / "AclNNInvocation" / "output" / "output_z.bin").stat().st_size == 8 * 2048 * 2


@needs_cmake
def test_project_naive_run_sh_with_ascend_home_dir(prefix, tmp_path):
    """The single-file project's run.sh (ASCEND_HOME_DIR, set -e, cmake -B build): the program
    finds the package's library through the RUNPATH CMake records for link_directories()."""
    project = copy_project(tmp_path)
    proc = shell("bash run.sh", {"ASCEND_HOME_DIR": str(prefix)},
                 project / "AclNNInvocationNaive")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "test pass"


@needs_cmake
def test_project_run_sh_finds_the_default_user_install(prefix, tmp_path):
    """With nothing but PATH and HOME, run.sh takes $HOME/Ascend/ascend-toolkit/latest, CANN's
    user install: the prefix is laid out there."""
    home = prefix.parent.parent.parent
    assert prefix == home / "Ascend" / "ascend-toolkit" / "latest"
    project = copy_project(tmp_path)
    proc = subprocess.run([BASH, "run.sh"], env={"PATH": clean_path(), "HOME": str(home)},
                          cwd=project / "AclNNInvocation", capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "test pass"
    assert f"INC_PATH: {prefix}" in proc.stdout


@needs_cmake
def test_project_built_by_hand_with_ddk_path(prefix, tmp_path):
    """The manual steps of CANN's sample READMEs: source setenv.bash, DDK_PATH = the install,
    NPU_HOST_LIB = <install>/<arch>-linux/devlib, cmake ../src && make, run, verify."""
    project = copy_project(tmp_path) / "AclNNInvocation"
    script = (f'source "{prefix}/bin/setenv.bash" && export DDK_PATH="{prefix}" && '
              f'export NPU_HOST_LIB="{prefix}/{ARCH}-linux/devlib" && '
              "python3 scripts/gen_data.py && mkdir -p build && cd build && cmake ../src && make "
              "&& cd ../output && ./execute_add_op && cd .. && "
              "python3 scripts/verify_result.py output/output_z.bin output/golden.bin")
    proc = shell(script, {}, project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "test pass"


@needs_cmake
def test_project_from_its_op_host_source(xdg, tmp_path):
    """The operator installed from the project's op_host C++ source (msOpGen's op_host/<op>.cpp
    with its tiling header, in a shell that sourced setenv.bash) instead of its JSON: both
    run.sh styles build against it and pass their own verification."""
    prefix = new_prefix(xdg, tmp_path / "home")
    script = (f'source "{prefix}/bin/setenv.bash" && "{sys.executable}" -m aclnn_py opgen '
              f'"{PROJECT}/op_host/add_custom.cpp" --kernels "{PROJECT}/add_custom.py" '
              "--install")
    proc = shell(script, {"XDG_CACHE_HOME": str(xdg)}, Path(tempfile.gettempdir()))
    assert proc.returncode == 0, proc.stderr
    vendor = prefix / "opp" / "vendors" / "customize"
    assert proc.stdout.strip() == str(vendor)
    header = (vendor / "op_api" / "include" / "aclnn_add_custom.h").read_text()
    assert re.search(r"aclnnAddCustomGetWorkspaceSize\(\s*const aclTensor \*x,\s*"
                     r"const aclTensor \*y,\s*const aclTensor \*out,\s*uint64_t "
                     r"\*workspaceSize,\s*aclOpExecutor \*\*executor\);", header), header
    project = copy_project(tmp_path)
    for sample, var in (("AclNNInvocation", "ASCEND_INSTALL_PATH"),
                        ("AclNNInvocationNaive", "ASCEND_HOME_DIR")):
        proc = shell("bash run.sh", {var: str(prefix)}, project / sample)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.splitlines()[-1] == "test pass", sample


@needs_cmake
def test_project_run_sh_fails_when_the_package_computes_wrong(xdg, tmp_path):
    """The run.sh's verification is the project's own: a package whose kernel computes x - y
    instead of x + y makes it fail (so the passing runs above mean something)."""
    prefix = new_prefix(xdg, tmp_path / "home")
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import numpy as np\n\ndef add_custom(x, y, z):\n"
                     "    np.subtract(x, y, out=z)\n")
    proc = install(xdg, prefix, kernels=wrong)
    assert proc.returncode == 0, proc.stderr
    project = copy_project(tmp_path)
    proc = shell("bash run.sh", {"ASCEND_INSTALL_PATH": str(prefix)},
                 project / "AclNNInvocation")
    assert "test pass" not in proc.stdout
    assert "values differ" in proc.stdout


# ------------------------------------------------------------------------ --install -----


def test_install_records_load_priority_and_vendors_coexist(xdg, tmp_path):
    prefix = new_prefix(xdg, tmp_path / "home")
    vendors = prefix / "opp" / "vendors"
    assert not (vendors / "config.ini").exists()
    assert install(xdg, prefix).returncode == 0
    assert (vendors / "config.ini").read_text() == "load_priority=customize\n"
    sub_json, sub_py = sub_definition(tmp_path)
    proc = install(xdg, prefix, "--vendor", "acme", definition=sub_json, kernels=sub_py)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(vendors / "acme")
    assert (vendors / "config.ini").read_text() == "load_priority=acme,customize\n"
    # installing customize again puts it first again, once
    assert install(xdg, prefix).returncode == 0
    assert (vendors / "config.ini").read_text() == "load_priority=customize,acme\n"
    for vendor, header in (("customize", "aclnn_add_custom.h"), ("acme", "aclnn_sub_custom.h")):
        assert (vendors / vendor / "op_api" / "include" / header).is_file()
        assert (vendors / vendor / "op_api" / "lib" / "libcust_opapi.so").is_file()
    # acme's operator runs from its installed place, next to customize's
    (tmp_path / "sub.cpp").write_text(SUB_MAIN)
    script = (f'source "{prefix}/bin/setenv.bash" && V=$ASCEND_OPP_PATH/vendors/acme/op_api && '
              "g++ sub.cpp -I$ASCEND_HOME_PATH/include -I$V/include -L$ASCEND_HOME_PATH/lib64 "
              "-L$V/lib -lascendcl -lcust_opapi -Wl,-rpath,$V/lib -o sub && ./sub")
    proc = shell(script, {}, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["0 0 0 -5 -3 -1 1 3 5", "test pass"]


def test_concurrent_installs_both_recorded(xdg, tmp_path):
    """Two installs of different vendors at once: both packages, both in config.ini (the
    install lock serializes the read-modify-write of config.ini)."""
    prefix = new_prefix(xdg, tmp_path / "home")
    env = {k: v for k, v in os.environ.items() if k not in _ASCEND}
    env.update({"XDG_CACHE_HOME": str(xdg), "ASCEND_HOME_PATH": str(prefix)})
    procs = [subprocess.Popen([sys.executable, "-m", "aclnn_py", "opgen",
                               str(PROJECT / "add_custom.json"), "--kernels",
                               str(PROJECT / "add_custom.py"), "--install", "--vendor", name],
                              env=env, cwd=tempfile.gettempdir(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in ("va", "vb")]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    line = (prefix / "opp" / "vendors" / "config.ini").read_text()
    assert line in ("load_priority=va,vb\n", "load_priority=vb,va\n")
    for name in ("va", "vb"):
        assert (prefix / "opp" / "vendors" / name / "op_api" / "lib" / "libcust_opapi.so").is_file()


def test_install_with_ascend_opp_path_only(xdg, tmp_path):
    """Without ASCEND_HOME_PATH, the toolkit is the parent of ASCEND_OPP_PATH."""
    prefix = new_prefix(xdg, tmp_path / "home")
    proc = cli("opgen", PROJECT / "add_custom.json", "--kernels", PROJECT / "add_custom.py",
               "--install", env={"XDG_CACHE_HOME": str(xdg),
                                 "ASCEND_OPP_PATH": str(prefix / "opp")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(prefix / "opp" / "vendors" / "customize")


def test_install_keeps_other_lines_of_config_ini(xdg, tmp_path):
    prefix = new_prefix(xdg, tmp_path / "home")
    config = prefix / "opp" / "vendors" / "config.ini"
    config.write_text("# vendors\nload_priority=mdc,customize,other\nextra=1\n")
    assert install(xdg, prefix).returncode == 0
    assert config.read_text() == "# vendors\nload_priority=customize,mdc,other\nextra=1\n"


def test_reinstall_replaces_the_vendors_operators(xdg, tmp_path):
    prefix = new_prefix(xdg, tmp_path / "home")
    assert install(xdg, prefix).returncode == 0
    sub_json, sub_py = sub_definition(tmp_path)
    assert install(xdg, prefix, definition=sub_json, kernels=sub_py).returncode == 0
    vendor = prefix / "opp" / "vendors" / "customize"
    headers = sorted(p.name for p in (vendor / "op_api" / "include").iterdir())
    assert headers == ["aclnn_sub_custom.h"]
    ops = json.loads((vendor / "op_impl" / "aclnn_py" / "ops.json").read_text())
    assert [op["op"] for op in ops] == ["SubCustom"]
    assert (prefix / "opp" / "vendors" / "config.ini").read_text() == "load_priority=customize\n"
    assert not [p for p in (prefix / "opp" / "vendors").iterdir() if p.name.startswith(".opgen")]


def test_installed_library_finds_the_toolkit_it_was_installed_into(prefix):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf")
    lib = prefix / "opp" / "vendors" / "customize" / "op_api" / "lib" / "libcust_opapi.so"
    dyn = subprocess.run([readelf, "-d", str(lib)], capture_output=True, text=True).stdout
    assert "$ORIGIN/../../../../../lib64" in dyn
    assert (lib.parent / "../../../../../lib64/libascendcl.so").resolve() == \
        (prefix / "lib64" / "libascendcl.so").resolve()


def test_install_path(xdg, prefix, tmp_path):
    """--install-path DIR: DIR/vendors/<vendor>, config.ini untouched; its bin/set_env.bash
    puts it on ASCEND_CUSTOM_OPP_PATH, and a program built from those variables runs."""
    before = (prefix / "opp" / "vendors" / "config.ini").read_text()
    sub_json, sub_py = sub_definition(tmp_path)
    where = tmp_path / "custom_opp"
    proc = install(xdg, prefix, "--install-path", where, definition=sub_json, kernels=sub_py)
    assert proc.returncode == 0, proc.stderr
    vendor = where / "vendors" / "customize"
    assert proc.stdout.strip() == str(vendor)
    assert (prefix / "opp" / "vendors" / "config.ini").read_text() == before
    assert not (prefix / "opp" / "vendors" / "customize" / "op_api" / "include" /
                "aclnn_sub_custom.h").exists()
    (tmp_path / "sub.cpp").write_text(SUB_MAIN)
    script = (f'source "{vendor}/bin/set_env.bash" && source "{prefix}/bin/setenv.bash" && '
              'echo "$ASCEND_CUSTOM_OPP_PATH" && '
              "g++ sub.cpp -I$ASCEND_HOME_PATH/include "
              "-I$ASCEND_CUSTOM_OPP_PATH/op_api/include -L$ASCEND_HOME_PATH/lib64 "
              "-L$ASCEND_CUSTOM_OPP_PATH/op_api/lib -lascendcl -lcust_opapi -o sub && ./sub")
    proc = shell(script, {}, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [str(vendor), "0 0 0 -5 -3 -1 1 3 5", "test pass"]


def test_install_without_a_sourced_toolkit_uses_the_cached_one(tmp_path):
    """No ASCEND_HOME_PATH / ASCEND_OPP_PATH: the default toolkit's opp; `toolkit --rebuild`
    keeps the installed vendors."""
    xdg = tmp_path / "xdg"
    proc = install(xdg, None, "--vendor", "mine")
    assert proc.returncode == 0, proc.stderr
    toolkit = Path(cli("toolkit", env={"XDG_CACHE_HOME": str(xdg)}).stdout.strip())
    assert proc.stdout.strip() == str(toolkit / "opp" / "vendors" / "mine")
    assert (toolkit / "opp" / "vendors" / "config.ini").read_text() == "load_priority=mine\n"
    proc = cli("toolkit", "--rebuild", env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    assert (toolkit / "opp" / "vendors" / "mine" / "op_api" / "lib" / "libcust_opapi.so").is_file()
    assert (toolkit / "opp" / "vendors" / "config.ini").read_text() == "load_priority=mine\n"


def test_install_refuses_an_environment_that_is_not_a_toolkit(xdg, tmp_path):
    proc = install(xdg, None, env={"ASCEND_HOME_PATH": str(tmp_path)})
    assert proc.returncode == 1
    assert "ASCEND_HOME_PATH" in proc.stderr and str(tmp_path) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "opp").exists()


@pytest.mark.parametrize("args, words", [
    (["--install-path", "somewhere"], "--install"),
    (["-o", "out", "--install"], "exclusive"),
    ([], "-o DIR"),
])
def test_opgen_usage_errors(xdg, args, words):
    proc = cli("opgen", PROJECT / "add_custom.json", "--kernels", PROJECT / "add_custom.py",
               *args, env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 2
    assert words in proc.stderr and "Traceback" not in proc.stderr


def test_bad_vendor_name(xdg, prefix):
    proc = install(xdg, prefix, "--vendor", "a,b")
    assert proc.returncode == 2  # a usage error
    assert "'--vendor': 'a,b'" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------- --prefix: errors -----


def test_prefix_rerun_updates_and_keeps_vendors(xdg, tmp_path):
    prefix = new_prefix(xdg, tmp_path / "home")
    assert install(xdg, prefix).returncode == 0
    config = (prefix / "opp" / "vendors" / "config.ini").read_text()
    (prefix / "bin" / "setenv.bash").write_text("exit 3\n")  # damaged: the update restores it
    (prefix / "lib64" / "libascendcl.so").unlink()
    assert new_prefix(xdg, tmp_path / "home") == prefix
    assert (prefix / "lib64" / "libascendcl.so").is_file()
    assert sourced(prefix, ["ASCEND_HOME_PATH"]) == {"ASCEND_HOME_PATH": str(prefix)}
    lib = prefix / "opp" / "vendors" / "customize" / "op_api" / "lib" / "libcust_opapi.so"
    assert lib.is_file()
    assert (prefix / "opp" / "vendors" / "config.ini").read_text() == config
    assert not [p for p in prefix.iterdir() if p.name.startswith(".aclnn-py-")]


def test_prefix_refuses_a_directory_that_is_not_a_toolkit(xdg, tmp_path):
    other = tmp_path / "project"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    proc = cli("toolkit", "--prefix", other, env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 2
    assert "--prefix" in proc.stderr and str(other) in proc.stderr
    assert "notes.txt" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
    # an empty directory is fine
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli("toolkit", "--prefix", empty, env={"XDG_CACHE_HOME": str(xdg)})
    assert proc.returncode == 0, proc.stderr
    assert (empty / "bin" / "setenv.bash").is_file()


def test_prefix_that_cannot_be_written(xdg, tmp_path):
    afile = tmp_path / "a_file"
    afile.write_text("x")
    for target, words in ((afile, "not a directory"), (afile / "sub", "cannot be created")):
        proc = cli("toolkit", "--prefix", target, env={"XDG_CACHE_HOME": str(xdg)})
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr and str(target) in proc.stderr
        assert "Traceback" not in proc.stderr
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            proc = cli("toolkit", "--prefix", locked / "latest",
                       env={"XDG_CACHE_HOME": str(xdg)})
        finally:
            locked.chmod(0o700)
        assert proc.returncode == 2
        assert "cannot be created" in proc.stderr and "Traceback" not in proc.stderr


def test_help_texts():
    proc = cli("toolkit", "--help")
    assert "--prefix" in proc.stdout and "setenv.bash" in proc.stdout
    proc = cli("opgen", "--help")
    assert "--install" in proc.stdout and "--install-path" in proc.stdout
    assert "config.ini" in proc.stdout
