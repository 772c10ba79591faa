"""The command line as a new user meets it: traces of C++ runs, a --trace that cannot be
written, a user program's traceback, SoC and status-code arguments, the bench figure's title and
legend, and the toolkit cache (`aclnn-py cache`). Each test is a defect a user reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from aclnn_py import bench
from aclnn_py.toolkit import build

CXX = shutil.which("g++") or shutil.which("c++")


def cli(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 300):
    full = dict(os.environ)
    full.pop("ACLNN_EMU_TRACE", None)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "aclnn_py", *args], env=full,
                          cwd=tempfile.gettempdir() if cwd is None else cwd,
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------------------ run --------


@pytest.mark.skipif(CXX is None or not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                    reason="needs a C++ compiler and a shared libpython (the toolkit)")
def test_run_cpp_trace_is_the_programs(tmp_path):
    """`run NAME --lang cpp --trace FILE`: the file holds the C++ program's calls (the CLI's
    own empty trace used to replace it with 2 metadata events)."""
    trace = tmp_path / "t.json"
    proc = cli("run", "softmax", "--lang", "cpp", "--trace", str(trace),
               env={"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert proc.returncode == 0, proc.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e.get("name") for e in events}
    assert "aclnnSoftmaxGetWorkspaceSize" in names and "aclrtSynchronizeStream" in names, names
    assert len(events) > 10


def test_run_trace_to_a_missing_directory_is_a_usage_error(tmp_path):
    """Said once, before the program runs, exit code 2 (it printed the error twice at exit and
    exited 0)."""
    bad = tmp_path / "no-such-dir" / "x.json"
    proc = cli("run", "softmax", "--trace", str(bad))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""  # the sample did not run
    assert proc.stderr.count("does not exist") == 1 and "'--trace'" in proc.stderr
    assert not bad.parent.exists()


def test_run_trace_to_a_directory_is_a_usage_error(tmp_path):
    proc = cli("run", "softmax", "--trace", str(tmp_path))
    assert proc.returncode == 2 and "is a directory" in proc.stderr


def test_user_program_traceback_is_as_python_prints_it(tmp_path):
    """The traceback starts at the program's own frame, as `python prog.py` prints it."""
    prog = tmp_path / "prog.py"
    prog.write_text("import acl\n\ndef f():\n    raise ValueError('boom 42')\n\nf()\n")
    proc = cli("run", str(prog))
    direct = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": ""}, cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith(f'  File "{prog}", line 6, in <module>'), proc.stderr
    assert lines[-1] == "ValueError: boom 42"
    assert "click" not in proc.stderr and "cli.py" not in proc.stderr and "runpy" not in \
        proc.stderr
    # python itself: the same frames (its own run has no `acl` unless pyACL is installed)
    if direct.returncode == 1 and "boom 42" in direct.stderr:
        assert direct.stderr.splitlines()[1:] == lines[1:]


def test_informational_commands_leave_the_users_trace_alone(tmp_path):
    """With ACLNN_EMU_TRACE set for a program, `aclnn-py codes` and friends do not replace the
    program's trace with an empty one of their own."""
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [{"name": "mine"}]}')
    for args in (("codes", "161002"), ("samples",), ("ops",), ("env",)):
        proc = cli(*args, env={"ACLNN_EMU_TRACE": str(trace)})
        assert proc.returncode == 0, (args, proc.stderr)
        assert trace.read_text() == '{"traceEvents": [{"name": "mine"}]}', args


# -------------------------------------------------------------------- --soc, codes --------


def test_empty_soc_is_refused():
    for value in ("", "  "):
        proc = cli("ops", "--soc", value)
        assert proc.returncode == 2, proc.stdout
        assert "'--soc'" in proc.stderr and "empty SoC name" in proc.stderr
        assert "Ascend910B4" in proc.stderr  # the known names


def test_bad_soc_variable_is_blamed_not_the_option():
    proc = cli("ops", env={"ACLNN_EMU_SOC": "Bogus"})
    assert proc.returncode == 2
    assert "ACLNN_EMU_SOC" in proc.stderr and "'Bogus'" in proc.stderr
    assert "Invalid value for '--soc'" not in proc.stderr


def test_codes_accepts_hexadecimal():
    """161002 is ACLNN_ERR_PARAM_INVALID in CANN's aclnnStatus table; 0x274ea is the same."""
    dec, hexa = cli("codes", "161002"), cli("codes", "0x274ea")
    assert dec.returncode == hexa.returncode == 0, hexa.stderr
    assert hexa.stdout == dec.stdout and "ACLNN_ERR_PARAM_INVALID" in dec.stdout
    unknown = cli("codes", "0x2753a")
    assert unknown.returncode == 2
    assert "161082 (0x2753a) is not a CANN status code" in unknown.stderr
    junk = cli("codes", "0xzz")
    assert junk.returncode == 2 and "'0xzz' is neither an integer" in junk.stderr


# ------------------------------------------------------------------------- bench plot ------


def _record(op: str, label_shape: list, dtype: str, threads: int, cache: str):
    return bench.Record(op=op, dtype=dtype, shape=label_shape, dim=-1, threads=threads,
                        cache=cache, repeat=3, floor_kind="copy", nbytes=256, emulator_ms=2.0,
                        floor_ms=1.0, probe_ms=None)


@pytest.mark.parametrize("many", [False, True])
def test_plot_legend_and_title_do_not_overlap(tmp_path, monkeypatch, many):
    """The title, the machine line, the legend and the panels each keep their own space, on a
    small run's narrow figure (where the legend covered the title) and on a wide one."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    if many:
        records = [_record(op, [64, n], dt, t, c) for op in ("aclnnSoftmax", "aclnnLogSoftmax")
                   for n in (8, 16, 32) for dt in ("float32", "float16") for t in (1, 2)
                   for c in ("cold", "hot")]
    else:
        records = [_record("aclnnSoftmax", [64, 64], "float32", 1, "hot")]
    machine = {"cpu": "Some CPU with a rather long model name (R) @ 2.00GHz", "cores": 2,
               "isa": "avx512", "repeat": 3}
    bench.plot(records, str(tmp_path / "p.png"), machine)
    fig = figs[0]
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in fig.texts]
    assert len(boxes) == 2  # the title and the machine line
    legend = fig.legends[0].get_window_extent(renderer)
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes]
    width, height = fig.bbox.width, fig.bbox.height
    for box in [*boxes, legend, *panels]:
        assert box.x0 >= -1 and box.x1 <= width + 1 and box.y0 >= -1 and box.y1 <= height + 1
    for i, a in enumerate([*boxes, legend]):
        for b in [*boxes, legend, *panels][i + 1:]:
            assert not a.overlaps(b), (a, b)
    plt.close("all")


# ----------------------------------------------------------------------------- cache -------


def test_cache_lists_and_cleans(tmp_path):
    """Stale toolkits (another version, interpreter or set of files), compiled samples and
    interrupted builds are removed by `cache clean`; the current toolkit stays unless --all."""
    root = tmp_path / "aclnn-py"
    current = root / build.current_name()
    stale = root / "toolkit-0.0.9-0123456789abcdef"
    samples = root / "samples"
    unfinished = root / ".build-0123456789abcdef-x1"
    for d in (current, stale, samples, unfinished):
        d.mkdir(parents=True)
        (d / "f.bin").write_bytes(b"x" * 2048)
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    listing = cli("cache", env=env)
    assert listing.returncode == 0, listing.stderr
    assert f"cache: {root}" in listing.stdout
    kinds = {line.split()[-1]: line for line in listing.stdout.splitlines()[1:]}
    assert "current toolkit" in kinds[current.name] and "stale toolkit" in kinds[stale.name]
    assert "compiled samples" in kinds["samples"] and "unfinished build" in kinds[unfinished.name]
    cleaned = cli("cache", "clean", env=env)
    assert cleaned.returncode == 0, cleaned.stderr
    assert "removed 3 entries" in cleaned.stdout
    assert current.is_dir() and not stale.exists() and not samples.exists()
    assert not unfinished.exists()
    everything = cli("cache", "clean", "--all", env=env)
    assert everything.returncode == 0 and "removed 1 entry" in everything.stdout
    assert not current.exists()
    assert "(empty)" in cli("cache", env=env).stdout


def test_cache_clean_leaves_a_build_in_progress(tmp_path):
    """A build holds its key's lock: its directory is not pulled from under it."""
    import fcntl

    root = tmp_path / "aclnn-py"
    building = root / ".build-00000000deadbeef-abc"
    building.mkdir(parents=True)
    lock = root / ".toolkit-00000000deadbeef.lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        proc = cli("cache", "clean", env={"XDG_CACHE_HOME": str(tmp_path)})
        fcntl.flock(fh, fcntl.LOCK_UN)
    assert proc.returncode == 0, proc.stderr
    assert building.is_dir() and "removed 0 entries" in proc.stdout
