"""The bundled sample, the CLI and the README's examples, run as a user would.

Expected printouts come from CANN's ops-nn examples (computed there from the formula,
independently of this project), as the operator table (tests/opinfo.py) records them; the
printout has six decimals, so values are compared with a relative tolerance."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from opinfo import OP_DB

from aclnn_py.cli import bundled_samples, main

ROOT = Path(__file__).resolve().parent.parent

# the first CANN example of each operator in the table (tests/opinfo.py), which the bundled
# sample of the same name runs and prints
EXPECTED = {op.cli: op.examples[0].expected for op in OP_DB}


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The installed console entry point, in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "aclnn_py", *args], capture_output=True,
                          text=True, timeout=120, cwd=str(ROOT / "tests"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_prints_cann_example_output(name):
    proc = _cli("run", name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(EXPECTED[name])
    for i, (line, value) in enumerate(zip(lines, EXPECTED[name])):
        m = re.fullmatch(r"result\[(\d+)\] is: (-?\d+\.\d{6})", line)
        assert m, f"line {i} {line!r} is not in the 'result[%ld] is: %f' format"
        assert int(m.group(1)) == i
        assert float(m.group(2)) == pytest.approx(value, rel=1e-6, abs=1.1e-6)


def test_samples_command_lists_every_bundled_sample():
    result = CliRunner().invoke(main, ["samples"])
    assert result.exit_code == 0
    for name in EXPECTED:
        assert name in result.output
    assert set(EXPECTED) <= set(bundled_samples())


def test_run_unknown_program_is_a_usage_error():
    result = CliRunner().invoke(main, ["run", "no_such_sample"])
    assert result.exit_code == 2
    assert "softmax_backward" in result.output  # the message lists what exists


def test_run_a_python_file_passes_its_exit_code(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import sys\nfrom aclnn_py import acl\nprint(acl.get_soc_name())\n"
                    "sys.exit(3)\n")
    proc = _cli("run", str(prog))
    assert proc.returncode == 3
    assert proc.stdout.strip() == "Ascend910B4"


def test_sample_failure_prints_call_and_code_and_exits_nonzero(tmp_path):
    """A sample whose phase 1 fails prints '<api> failed. ERROR: <code>' and exits with it."""
    src = (ROOT / "samples" / "softmax_backward.py").read_text()
    broken = src.replace("dim = 0\n", "dim = 5\n")
    assert broken != src
    prog = tmp_path / "broken.py"
    prog.write_text(broken)
    proc = _cli("run", str(prog))
    assert proc.returncode != 0
    assert "aclnnSoftmaxBackwardGetWorkspaceSize failed. ERROR: 161002" in proc.stdout


def test_help_for_every_command():
    for args in (["--help"], ["run", "--help"], ["samples", "--help"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0
        assert "Usage" in result.output


def test_readme_python_examples_run(tmp_path, monkeypatch, capsys):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "-28." in out and "-93." in out
    assert "161002" in out and "Dim 2 is out of range" in out
    from aclnn_py import acl

    acl.rt.reset_device(0)
    acl.finalize()
