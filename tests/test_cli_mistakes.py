"""A user's mistake on the command line is a message, never a Python traceback (issue 31 item
4): exit 1 for a failure, 2 for a usage error, and a message that names the cause (the file and
line, the option, the variable) and the fix.

The cases are those a new user met: a kernels module (opgen --kernels) that does not compile or
import, an output directory that cannot be created, a vendor name with a '/', a CXX compiler that
does not exist (toolkit, run --lang cpp), a cache directory (XDG_CACHE_HOME) that cannot be
written, CANN's C name of a status code (codes), an unknown operator or dtype (explain). Each is
checked in-process (click's CliRunner: no exception escapes the command) and the first ones also
as a real process started outside the source tree, whose stderr must hold no "Traceback".
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

import pytest
from click.testing import CliRunner

from aclnn_py.cli import main

# msOpGen's definition of CANN's AddCustom sample (z = x + y, float), as in docs/custom_ops.md
ADD_JSON = """[{"op": "AddCustom",
  "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]},
                 {"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}],
  "output_desc": [{"name": "z", "param_type": "required", "format": ["ND"], "type": ["float"]}]}]
"""
GOOD_KERNELS = "import numpy as np\n\ndef add_custom(x, y, z):\n    np.add(x, y, out=z)\n"


def invoke(*args: str, env: Optional[dict] = None):
    """The command in-process; a usage error or failure must end in SystemExit (click's), never
    in another exception."""
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}\n{result.output}")
    assert "Traceback" not in result.output, result.output
    return result


def cli(*args: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    """``python -m aclnn_py ARGS`` in a fresh process, started outside the source tree."""
    full = {k: v for k, v in os.environ.items() if k != "ACLNN_EMU_TRACE"}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "aclnn_py", *[str(a) for a in args]],
                          env=full, cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "add_custom.json").write_text(ADD_JSON)
    (tmp_path / "add_custom.py").write_text(GOOD_KERNELS)
    (tmp_path / "a_file").write_text("not a directory\n")
    return tmp_path


# ----------------------------------------------------------------------- opgen --kernels ----

BAD_KERNELS = {
    # name: (source, words the message must hold besides the file and the line)
    # (errors whose line every supported Python reports alike)
    "syntax": ("import numpy as np\n\ndef add_custom(x, y, z):\n    z[...] = x + * y\n",
               ["line 4", "SyntaxError", "does not compile", "fix it"]),
    "indentation": ("def add_custom(x, y, z):\nnp.add(x, y, out=z)\n",
                    ["line 2", "IndentationError", "fix it"]),
    "import": ("import numpy as np\nimport no_such_module_for_aclnn_py\n",
               ["line 2", "ModuleNotFoundError", "no_such_module_for_aclnn_py",
                "install the missing module or fix the import"]),
    "raises": ("x = 1\nraise RuntimeError('kernels need a GPU')\n",
               ["line 2", "RuntimeError: kernels need a GPU", "fix the module"]),
    "exits": ("import sys\nsys.exit('no')\n", ["line 2", "SystemExit", "fix the module"]),
}


@pytest.mark.parametrize("case", list(BAD_KERNELS))
def test_opgen_kernels_module_that_fails_to_import(project, case):
    source, words = BAD_KERNELS[case]
    bad = project / f"kernels_{case}.py"
    bad.write_text(source)
    result = invoke("opgen", project / "add_custom.json", "--kernels", bad, "-o", project / "out")
    assert result.exit_code == 1, result.output
    for word in [bad.name, *words]:
        assert word in result.output, (word, result.output)
    assert not (project / "out").exists()  # nothing was written


def test_opgen_kernels_syntax_error_from_the_shell(project):
    """The same as a user runs it: one line on stderr, exit 1, no traceback."""
    bad = project / "kernels.py"
    bad.write_text("def add_custom(x, y, z):\n    return = 1\n")
    proc = cli("opgen", project / "add_custom.json", "--kernels", bad, "-o", project / "out")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"{bad}, line 2: SyntaxError" in proc.stderr and proc.stdout == ""


def test_opgen_kernels_not_python(project):
    notes = project / "kernels.txt"
    notes.write_text(GOOD_KERNELS)
    result = invoke("opgen", project / "add_custom.json", "--kernels", notes, "-o",
                    project / "out")
    assert result.exit_code == 1, result.output
    assert "kernels.txt" in result.output and "(*.py)" in result.output


# ------------------------------------------------------ opgen -o / --install-path / --vendor ----


def test_opgen_output_that_cannot_be_created(project):
    """-o under a regular file (what root cannot create either): exit 2 naming -o, before the
    build (no compiler is needed to find it out)."""
    target = project / "a_file" / "pkg"
    result = invoke("opgen", project / "add_custom.json", "--kernels", project / "add_custom.py",
                    "-o", target, env={"CXX": "no-such-compiler-aclnn-py"})
    assert result.exit_code == 2, result.output
    assert "'-o' / '--output'" in result.output and str(target) in result.output
    assert "cannot be created" in result.output and "not a directory" in result.output


def test_opgen_output_that_is_a_file(project):
    """(click's own check of -o's type)"""
    result = invoke("opgen", project / "add_custom.json", "--kernels", project / "add_custom.py",
                    "-o", project / "a_file")
    assert result.exit_code == 2, result.output
    assert "'-o' / '--output'" in result.output and "a_file' is a file" in result.output


def test_opgen_install_path_that_cannot_be_created(project):
    target = project / "a_file" / "opp"
    result = invoke("opgen", project / "add_custom.json", "--kernels", project / "add_custom.py",
                    "--install", "--install-path", target)
    assert result.exit_code == 2, result.output
    assert "'--install-path'" in result.output and "cannot be created" in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_opgen_output_in_a_read_only_directory(project):
    locked = project / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = invoke("opgen", project / "add_custom.json", "--kernels",
                        project / "add_custom.py", "-o", locked / "pkg")
    finally:
        locked.chmod(0o700)
    assert result.exit_code == 2, result.output
    assert "not writable" in result.output


@pytest.mark.parametrize("vendor", ["a/b", "", ".hidden", "../up", "a,b"])
def test_opgen_vendor_that_is_not_a_directory_name(project, vendor):
    """A usage error (exit 2, naming --vendor), found before anything is built or written."""
    result = invoke("opgen", project / "add_custom.json", "--kernels", project / "add_custom.py",
                    "-o", project / "out", "--vendor", vendor)
    assert result.exit_code == 2, result.output
    assert "'--vendor'" in result.output and repr(vendor) in result.output
    assert "letters, digits" in result.output
    assert not (project / "out").exists()


# ------------------------------------------------------------------- CXX, XDG_CACHE_HOME ----

MISSING_CXX = {"/no/such/dir/g++": "does not exist", "no-such-compiler-aclnn-py": "not found"}


@pytest.mark.parametrize("cxx", list(MISSING_CXX))
def test_toolkit_with_a_compiler_that_does_not_exist(tmp_path, cxx):
    """A fresh cache, so that the toolkit must be built: exit 1 naming CXX and the fix."""
    result = invoke("toolkit", env={"CXX": cxx, "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert result.exit_code == 1, result.output
    assert f"CXX={cxx!r}" in result.output and MISSING_CXX[cxx] in result.output
    assert "set CXX" in result.output and "unset it" in result.output


def test_run_cpp_with_a_compiler_that_does_not_exist(tmp_path):
    proc = cli("run", "softmax_backward", "--lang", "cpp",
               env={"CXX": "no-such-compiler-aclnn-py", "XDG_CACHE_HOME": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "CXX='no-such-compiler-aclnn-py'" in proc.stderr and "set CXX" in proc.stderr


@pytest.mark.parametrize("command", [("toolkit",), ("run", "softmax", "--lang", "cpp"),
                                     ("toolkit", "--prefix", "PREFIX")],
                         ids=["toolkit", "run-cpp", "toolkit-prefix"])
def test_cache_that_cannot_be_written(tmp_path, command):
    """XDG_CACHE_HOME a regular file (unwritable for root too): exit 1 naming the cache
    directory, the reason and XDG_CACHE_HOME."""
    afile = tmp_path / "cache_file"
    afile.write_text("x")
    args = [str(tmp_path / "prefix") if a == "PREFIX" else a for a in command]
    result = invoke(*args, env={"XDG_CACHE_HOME": str(afile)})
    assert result.exit_code == 1, result.output
    assert str(afile / "aclnn-py") in result.output and "Not a directory" in result.output
    assert "set XDG_CACHE_HOME to a writable directory" in result.output


# -------------------------------------------------------------------------------- codes ----


@pytest.mark.parametrize("name,code", [
    ("ACLNN_ERR_PARAM_INVALID", 161002),      # CANN's aclnnStatus (op_errno.h)
    ("aclnn_err_param_invalid", 161002),
    ("ACLNN_SUCCESS", 0),
    ("ACL_ERROR_RT_PARAM_INVALID", 107000),   # CANN's aclError (rt_error_codes.h)
    ("ACL_ERROR_RT_AICORE_EXCEPTION", 507015),
])
def test_codes_by_cann_c_name(name, code):
    by_name, by_number = invoke("codes", name), invoke("codes", str(code))
    assert by_name.exit_code == 0, by_name.output
    assert by_name.output == by_number.output
    json_name, json_number = invoke("codes", name, "--json"), invoke("codes", str(code), "--json")
    assert json_name.output == json_number.output


def test_codes_misspelt_name_suggests_the_right_one():
    result = invoke("codes", "ACLNN_ERR_PARAM_INVALD")
    assert result.exit_code == 2, result.output
    assert "'ACLNN_ERR_PARAM_INVALD'" in result.output
    assert "did you mean ACLNN_ERR_PARAM_INVALID" in result.output


# ------------------------------------------------------------------------------ explain ----


@pytest.mark.parametrize("args,param,value", [
    (("nope", "--shape", "2", "--dtype", "float32"), "'OP'", "'nope'"),
    (("softmax", "--shape", "2", "--dtype", "float8"), "'--dtype'", "'float8'"),
    (("softmax", "--shape", "2", "--dtype", "float32", "--out-dtype", "fp7"), "'--out-dtype'",
     "'fp7'"),
], ids=["op", "dtype", "out-dtype"])
def test_explain_names_the_parameter(args, param, value):
    result = invoke("explain", *args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {param}: {value}" in result.output, result.output


# -------------------------------------------------------------------------------- bench ----


def test_bench_json_to_a_directory_is_refused_before_the_run(tmp_path):
    """It used to run the whole benchmark, then fail writing (IsADirectoryError traceback)."""
    result = invoke("bench", "--op", "softmax", "--json", tmp_path)
    assert result.exit_code == 2, result.output
    assert "'--json'" in result.output and str(tmp_path) in result.output
    assert "benchmarking" not in result.output
