"""The bundled sample, the CLI and the README's examples, run as a user would.

Expected printouts come from CANN's ops-nn examples (computed there from the formula,
independently of this project)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aclnn_py.cli import bundled_samples, main

ROOT = Path(__file__).resolve().parent.parent

_HS = [0.0, 0.0, 0.166667, 0.5, 0.666667, 0.833333, 1.0, 1.0]
EXPECTED = {
    "softmax": [0.002144, 0.002144, 0.015842, 0.015842, 0.117059, 0.117059, 0.864955, 0.864955],
    "softmax_backward": [-28.0, -37.0, -26.0, -70.0, -48.0, -66.0, -66.0, -93.0],
    "log_softmax": [-2.407606, -1.407606, -0.407606] * 3,
    # "fp32 last digit may differ on HW" (the reference); compared with a relative tolerance
    "log_softmax_backward": [-32.619385, -42.492512, -30.619385, -115.224892, -84.668671,
                             -113.224892, -235.026443, -314.368591],
    "hardsigmoid": _HS,
    "inplace_hardsigmoid": _HS,
    "hardsigmoid_backward": [0.0, 0.166667, 0.333333, 0.0, 0.0, 0.0, 0.0, 0.0],
}


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
