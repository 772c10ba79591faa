"""``aclnn-py bench`` (docs/performance.md), on tiny shapes with one timed call per row.

- a run prints the machine header and a table; ``--json`` holds every field of every row and a
  machine header; ``--json -`` leaves stdout pure JSON;
- the correctness column is checked against this file's own float64 golden (tests/golden.py,
  written from CANN's docs, not from the emulator's code), computed from the same inputs: the
  emulator's output (taken through the functional layer, which runs the same kernels) is within
  the dtype's tolerance, and the bench reports the same max error;
- every bad input is a click usage error (exit code 2) naming the option, without a traceback;
- ``--plot`` writes a PNG when matplotlib is installed and says how to install it otherwise;
- PyTorch's column, when torch is installed.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
from pathlib import Path

import golden
import numpy as np
import pytest
from click.testing import CliRunner

from aclnn_py import _emu, bench, functional
from aclnn_py.cli import main
from aclnn_py.ops import REGISTRY
from aclnn_py.runtime.core import lib

SMALL = ("--shape", "8,16", "--repeat", "1")
OPS = sorted(bench.BASELINES)
DTYPES = ("float32", "float16", "bfloat16")
# the max error in epsilons of the dtype that golden.TOL allows (rtol / eps, atol = rtol)
EPS_BOUND = {"float32": 1e-4 / 2.0 ** -23, "float16": 1e-3 / 2.0 ** -10,
             "bfloat16": 8e-3 / 2.0 ** -7}

RECORD_FIELDS = {
    "op", "dtype", "shape", "dim", "threads", "cache", "repeat", "floor_kind", "nbytes",
    "emulator_ms", "floor_ms", "numpy_ms", "torch_ms", "err_scaled", "bit_identical", "ratios",
    "gbps", "probe_ms", "cpu", "mode", "accumulation", "floor_memop_ms",
    "floor_hardsigmoid_ms"} | {f"{who}_err_{kind}" for who in ("emulator", "numpy", "torch")
               for kind in ("abs", "eps", "rel")}
MACHINE_FIELDS = {"isa", "cpu", "cores", "threads", "llc_bytes", "evict_bytes", "soc",
                  "aclnn_py", "python", "platform", "numpy", "torch", "date", "repeat"}


def invoke(*args: str):
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2: keep stderr apart
    except TypeError:
        runner = CliRunner()
    return runner.invoke(main, ["bench", *args])


def run_json(*args: str) -> dict:
    result = invoke(*args, "--json", "-")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def golden_and_emulator(op_name: str, shape, dim, dtype: str):
    """(float64 golden of the formula, the emulator's output) for the bench's inputs of a
    case."""
    inputs = bench.make_inputs(op_name, shape, dtype, dim=dim)
    op = REGISTRY[op_name]
    dims = [dim] if op.int_params else []
    fn = {"aclnnSoftmax": golden.softmax, "aclnnLogSoftmax": golden.log_softmax,
          "aclnnSoftmaxBackward": golden.softmax_backward,
          "aclnnLogSoftmaxBackward": golden.log_softmax_backward,
          # the formula in float64 (the kernels compute alpha*x + beta in float32)
          "aclnnHardsigmoid": lambda x: golden.hardsigmoid(x, compute=golden.F64),
          "aclnnHardsigmoidBackward": lambda g, x: golden.hardsigmoid_backward(
              g, x, compute=golden.F64)}[op_name]
    ref = fn(*inputs, *dims)
    got = getattr(functional, op.functional.name)(*inputs, *dims)
    return ref, np.asarray(got).astype(np.float64)


# -------------------------------------------------------------------------------- runs ----


def test_one_op_prints_a_table():
    result = invoke("--op", "softmax", *SMALL, "--threads", "1", "--no-torch", "--mode", "strict")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "kernel ISA level:" in out and "thread counts: 1" in out
    assert "emu ms" in out and "x floor" in out and "err eps" in out and " mode " in out
    rows = [line for line in out.splitlines() if line.startswith("Softmax ")]
    # float32, float16, bfloat16 x cold, hot
    assert len(rows) == 6, out
    assert {r.split()[2] for r in rows} == {"strict"}
    assert {r.split()[5] for r in rows} == {"cold", "hot"}


@pytest.mark.parametrize("op_name", OPS, ids=bench.short_name)
def test_json_fields_and_correctness(op_name):
    """Every field; the emulator's and NumPy's max errors against this file's golden."""
    data = run_json("--op", op_name, *SMALL, "--threads", "1,2", "--cache", "hot",
                    "--no-torch", "--mode", "strict")
    assert MACHINE_FIELDS <= set(data["machine"])
    assert data["machine"]["threads"] == [1, 2]
    records = data["records"]
    assert len(records) == len(DTYPES) * 2
    for r in records:
        assert set(r) == RECORD_FIELDS, set(r) ^ RECORD_FIELDS
        assert r["op"] == op_name and r["shape"] == [8, 16] and r["cache"] == "hot"
        forward = len(REGISTRY[op_name].inputs) == 1
        kinds = ("copy", "hardsigmoid") if forward else ("add", "hardsigmoid_backward")
        assert r["floor_kind"] in kinds
        assert r["floor_memop_ms"] > 0 and r["floor_hardsigmoid_ms"] > 0
        assert r["floor_ms"] == min(r["floor_memop_ms"], r["floor_hardsigmoid_ms"])
        assert r["floor_kind"] == kinds[r["floor_ms"] < r["floor_memop_ms"]]
        assert r["mode"] == "strict"
        assert r["accumulation"] == ("strict" if bench.has_relaxed(op_name) else None)
        assert r["emulator_ms"] > 0 and r["floor_ms"] > 0 and r["numpy_ms"] > 0
        assert r["torch_ms"] is None
        assert r["ratios"]["floor"] == pytest.approx(r["emulator_ms"] / r["floor_ms"])
        assert r["probe_ms"] > 0 and r["cpu"] > 0
        assert r["bit_identical"] in (None, True)  # the same bytes for every thread count
        dim = r["dim"]
        assert (dim is None) == (not REGISTRY[op_name].int_params)
        ref, got = golden_and_emulator(op_name, (8, 16), dim, r["dtype"])
        backward = len(REGISTRY[op_name].inputs) == 2
        golden.assert_close(got, ref, bench.DTYPES[r["dtype"]], backward=backward,
                            what=f"{op_name} {r['dtype']}")
        err = np.abs(got - ref)
        assert r["emulator_err_abs"] == pytest.approx(float(err.max()), rel=1e-6, abs=1e-12)
        eps = float(np.finfo(np.float32).eps) if r["dtype"] == "float32" else \
            {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[r["dtype"]]
        scale = float(np.abs(ref).max()) if backward else 1.0
        want = float((err / (np.abs(ref) + scale)).max()) / eps
        assert r["emulator_err_eps"] == pytest.approx(want, rel=1e-6, abs=1e-9)
        assert 0 <= r["emulator_err_eps"] <= EPS_BOUND[r["dtype"]]
        assert r["emulator_err_rel"] >= r["emulator_err_eps"] - 1e-9
        assert 0 <= r["numpy_err_eps"] <= EPS_BOUND[r["dtype"]]


def test_default_layouts_come_from_the_declarations():
    cases, skipped = bench.plan_cases(["aclnnSoftmax", "aclnnHardsigmoid"], ["float32"])
    assert not skipped
    assert [(c.shape, c.dim, c.hot_only) for c in cases] == [
        ((4096, 4096), -1, False), ((64, 4096, 64), 1, False), ((16, 1000, 1000), 0, False),
        ((32, 1024), -1, True),
        ((4096, 4096), None, False), ((64, 4096, 64), None, False),
        ((16, 1000, 1000), None, False), ((32, 1024), None, True)]
    assert bench.default_threads() == sorted({1, bench.available_cores()})


def test_cold_rows_no_baselines_and_threads_restored():
    before = lib.aclk_num_threads()
    data = run_json("--op", "hardsigmoid_backward", "--dtype", "float16", *SMALL,
                    "--threads", "2", "--no-torch", "--no-numpy")
    assert lib.aclk_num_threads() == before
    assert [(r["threads"], r["cache"]) for r in data["records"]] == [(2, "cold"), (2, "hot")]
    for r in data["records"]:
        assert r["numpy_ms"] is None and r["ratios"]["numpy"] is None
        assert r["numpy_err_eps"] is None
    assert data["machine"]["numpy"] is None


def test_json_to_stdout_keeps_the_table_on_stderr(tmp_path):
    result = invoke("--op", "log_softmax", "--dtype", "float32", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-torch", "--mode", "strict", "--json", "-")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data["records"]) == 1
    assert "emu ms" in result.stderr
    path = tmp_path / "out.json"
    result = invoke("--op", "log_softmax", "--dtype", "float32", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-torch", "--mode", "strict", "--json", str(path))
    assert result.exit_code == 0, result.output
    assert json.loads(path.read_text())["records"][0]["op"] == "aclnnLogSoftmax"


def test_a_dtype_phase_1_refuses_is_skipped():
    result = invoke("--op", "softmax", "--op", "hardsigmoid", "--dtype", "float64", *SMALL,
                    "--threads", "1", "--cache", "hot", "--no-torch", "--mode", "strict")
    assert result.exit_code == 0, result.output
    assert "skipped Hardsigmoid float64: phase 1 refuses float64" in result.stdout
    assert any(line.startswith("Softmax ") for line in result.stdout.splitlines())


# -------------------------------------------------------------------------- bad input ----


@pytest.mark.parametrize("args,option", [
    (("--dtype", "int32"), "--dtype"),
    (("--op", "inplace_hardsigmoid"), "--op"),
    (("--op", "conv2d"), "--op"),
    (("--shape", "4,x"), "--shape"),
    (("--shape", "0,4"), "--shape"),
    (("--shape", "1,2,3,4,5,6,7,8,9"), "--shape"),
    (("--shape", "4,4", "--dim", "2"), "--dim"),
    (("--shape", "4,4", "--dim", "-3"), "--dim"),
    (("--dim", "0"), "--dim"),
    (("--threads", "0"), "--threads"),
    (("--threads", "1,two"), "--threads"),
    (("--threads", "1,100000"), "--threads"),
    (("--repeat", "0"), "--repeat"),
    (("--cache", "warm"), "--cache"),
    (("--json", "/no/such/dir/out.json"), "--json"),
    (("--plot", "out.txt"), "--plot"),
    (("--op", "hardsigmoid", "--dtype", "float64"), "--dtype"),
    (("--mode", "fp8"), "--mode"),
    (("--mode", "relaxed", "--dtype", "float32"), "--mode"),
    (("--op", "hardsigmoid", "--mode", "int8"), "--mode"),
    (("--op", "softmax_backward", "--mode", "int8"), "--mode"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_bad_input_is_a_usage_error(args, option):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert option in result.output
    assert "Traceback" not in result.output


def test_plot_without_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = invoke("--op", "softmax", *SMALL, "--plot", str(tmp_path / "b.png"))
    assert result.exit_code == 2, result.output
    assert "--plot" in result.output and 'pip install "aclnn-py[plot]"' in result.output
    assert not (tmp_path / "b.png").exists()


# -------------------------------------------------------------------- optional extras ----


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "bench.png"
    modes = ["--mode", "strict", "--mode", "relaxed"] + (["--mode", "int8"] if _int8_kernel()
                                                         else [])
    result = invoke("--op", "softmax", "--op", "hardsigmoid", "--dtype", "float32",
                    "--dtype", "float16", *modes, *SMALL, "--threads", "1,2", "--no-torch",
                    "--no-numpy", "--plot", str(path))
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plot_hatches_a_row_the_machine_slowed(tmp_path, monkeypatch):
    """A row at cpu >= CPU_SLOW is drawn hatched, with a legend entry saying why."""
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    hatches = []
    real_barh = matplotlib.axes.Axes.barh
    monkeypatch.setattr(matplotlib.axes.Axes, "barh", lambda self, *a, **k: (
        hatches.append(k.get("hatch")), real_barh(self, *a, **k))[1])
    rows = bench.mark_cpu([_record(2, 0.2), _record(2, 0.2), _record(2, 0.5)])
    rows[1].dtype, rows[2].dtype = "float16", "bfloat16"
    bench.plot(rows, str(tmp_path / "p.png"))
    assert hatches == [None, None, "////"]  # one bar per row (no PyTorch: no second panel)
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"



def test_plot_has_a_block_per_operator_and_no_empty_panel(tmp_path, monkeypatch):
    """--plot: per operator a panel of time / floor and one of time / PyTorch (when it ran),
    a row per dtype x mode x layout of that operator only, and a bar in every row of every
    panel (the old layout, a panel per dtype, left most cells blank)."""
    pytest.importorskip("matplotlib")
    import matplotlib.figure

    seen = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig",
                        lambda self, *a, **k: seen.extend(self.axes))
    rows = []
    for op, dtypes in (("aclnnSoftmax", ("float32", "float16")), ("aclnnHardsigmoid",
                                                                   ("float32",))):
        for dt in dtypes:
            for threads in (1, 2):
                r = _record(threads, None, emulator_ms=1.5)
                r.op, r.dtype, r.torch_ms = op, dt, 3.0
                r.__post_init__()
                rows.append(r)
    int8 = _record(2, None, emulator_ms=6.0)
    int8.dtype = int8.mode = "int8"
    rows.append(int8)
    bench.plot(rows, str(tmp_path / "p.png"))
    assert len(seen) == 4  # two operators x (floor, PyTorch)
    titled = [ax for ax in seen if ax.get_title(loc="left")]
    assert [ax.get_title(loc="left") for ax in titled] == ["Softmax", "Hardsigmoid"]
    labels = [[t.get_text() for t in ax.get_yticklabels()] for ax in titled]
    assert labels == [["float32 4x8/-1", "float16 4x8/-1", "int8 4x8/-1"], ["float32 4x8/-1"]]
    # per panel: {row: the ends of its bars} (a bar runs from the axis' left edge to its value)
    bars = [{} for _ in seen]
    for i, ax in enumerate(seen):
        for p in ax.patches:
            bars[i].setdefault(round(p.get_y() + p.get_height() / 2), set()).add(
                round(p.get_x() + p.get_width(), 6))
    softmax_floor, softmax_torch, hs_floor, hs_torch = bars
    assert softmax_floor == {0: {1.5}, 1: {1.5}, 2: {6.0}}  # emulator 1.5 / floor 1, int8 6
    assert softmax_torch == {0: {0.5}, 1: {0.5}}  # emulator 1.5 / PyTorch 3; int8: no PyTorch
    assert hs_floor == {0: {1.5}} and hs_torch == {0: {0.5}}
    assert [ax.get_xlabel() for ax in seen] == ["emulator time / floor",
                                                "emulator time / PyTorch"] * 2

def test_torch_column():
    pytest.importorskip("torch")
    data = run_json("--op", "softmax_backward", "--op", "hardsigmoid", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-numpy")
    assert data["machine"]["torch"]
    for r in data["records"]:
        assert r["torch_ms"] > 0
        assert r["ratios"]["torch"] == pytest.approx(r["emulator_ms"] / r["torch_ms"])
        assert 0 <= r["torch_err_eps"] <= EPS_BOUND[r["dtype"]], r


def test_without_torch_the_column_is_empty_and_the_hint_printed(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    result = invoke("--op", "hardsigmoid", "--dtype", "float32", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-numpy")
    assert result.exit_code == 0, result.output
    # the CPU wheel only: "aclnn-py[torch]" may pull the CUDA build (docs/performance.md)
    assert "aclnn-py[torch]" not in result.stdout
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in result.stdout
    # a hot-only run evicts nothing, and its header says so
    assert "MiB written before each timed call" not in result.stdout
    assert "hot caches only (nothing evicted)" in result.stdout
    assert "PyTorch not run;" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("Hardsigmoid "))
    assert row.split()[11:13] == ["-", "-"]  # torch ms, x torch


def test_rounds_pairs_the_emulator_and_the_floor_call_by_call():
    """The paired contenders take their timed calls in turn (so a drift of the machine's speed
    moves both medians alike); the others run one after the other; eviction before every timed
    call, none before a warm-up."""
    log: list = []

    def fn(name):
        def call():
            log.append(name)
            return name
        return call

    fns = {"emulator": fn("e"), "floor": fn("f"), "torch": fn("t"), "numpy": fn("n")}
    ms, first, counts = bench._rounds(fns, 3, lambda: log.append("x"),
                                      paired=("emulator", "floor"))
    assert log == ["e", "f", "x", "e", "x", "f", "x", "e", "x", "f", "x", "e", "x", "f",
                   "t", "x", "t", "x", "t", "x", "t", "n", "x", "n", "x", "n", "x", "n"]
    assert first == {"emulator": "e", "floor": "f", "torch": "t", "numpy": "n"}
    assert counts == {"emulator": 3, "floor": 3, "torch": 3, "numpy": 3}
    assert set(ms) == set(fns) and all(v >= 0 for v in ms.values())


def test_rounds_times_the_unevicted_without_an_eviction():
    """A contender named in unevicted (the compute probe) takes its turn in the pair without an
    eviction before it."""
    log: list = []
    fns = {name: (lambda name=name: log.append(name)) for name in ("e", "p", "f")}
    bench._rounds(fns, 2, lambda: log.append("x"), paired=("e", "p", "f"), unevicted=("p",))
    assert log == ["e", "p", "f", "x", "e", "p", "x", "f", "x", "e", "p", "x", "f"]


def test_rounds_pause_before_each_turn(monkeypatch):
    """Each turn (the pair, then each other contender) starts after a SETTLE_S pause, none
    between the calls of a turn."""
    log: list = []
    monkeypatch.setattr(bench.time, "sleep", lambda s: log.append(("sleep", s)))
    fns = {name: (lambda name=name: log.append(name)) for name in ("e", "f", "t")}
    bench._rounds(fns, 2, None, paired=("e", "f"))
    pause = ("sleep", bench.SETTLE_S)
    assert log == [pause, "e", "f", "e", "f", "e", "f", pause, "t", "t", "t"]


def _record(threads: int, probe_ms, emulator_ms: float = 1.0):
    return bench.Record(op="aclnnSoftmax", dtype="float32", shape=[4, 8], dim=-1,
                        threads=threads, cache="cold", repeat=5, floor_kind="copy", nbytes=256,
                        emulator_ms=emulator_ms, floor_ms=1.0, probe_ms=probe_ms)


def test_mark_cpu_flags_a_row_the_machine_slowed():
    """cpu: the row's probe time over the median of its thread count's rows; a table row at
    CPU_SLOW or more carries '!', the others not; no probe time, no cpu."""
    rows = [_record(1, 0.40), _record(1, 0.42), _record(1, 0.38), _record(2, 0.20),
            _record(2, 0.21), _record(2, 0.40), _record(2, None)]
    bench.mark_cpu(rows)
    assert [r.cpu for r in rows[:3]] == [pytest.approx(1.0), pytest.approx(1.05),
                                         pytest.approx(0.95)]
    assert rows[3].cpu == pytest.approx(0.20 / 0.21) and rows[5].cpu == pytest.approx(0.40 / 0.21)
    assert rows[6].cpu is None
    lines = bench.format_table(rows).splitlines()[2:9]
    assert [line.split()[-1] for line in lines] == ["1.00", "1.05", "0.95", "0.95", "1.00",
                                                    "1.90!", "-"]
    assert bench.to_json(rows, {})["records"][5]["cpu"] == pytest.approx(0.40 / 0.21)


def test_probe_takes_time_in_proportion_to_its_size():
    """The compute probe does its work (the compiler did not drop it): 256 chunks take well over
    ten times as long as 8, on one thread."""
    import time as _time

    from aclnn_py import runtime

    before = runtime.num_threads()
    runtime.set_num_threads(1)
    try:
        def best(chunks):
            call = runtime.probe_call(chunks)
            ts = []
            for _ in range(5):
                t0 = _time.perf_counter()
                call()
                ts.append(_time.perf_counter() - t0)
            return min(ts)

        assert best(256) > 10 * best(8)
    finally:
        runtime.set_num_threads(before)


def test_rounds_slow_warm_up_limits_the_pair():
    """A slow warm-up of either paired contender limits both to SLOW_REPEAT timed calls."""
    import time as _time
    calls = {"emulator": 0, "floor": 0}

    def slow():
        calls["floor"] += 1
        _time.sleep(0.02)

    def quick():
        calls["emulator"] += 1

    _, _, counts = bench._rounds({"emulator": quick, "floor": slow}, 7, None, slow_s=0.01,
                                 paired=("emulator", "floor"))
    assert counts == {"emulator": bench.SLOW_REPEAT, "floor": bench.SLOW_REPEAT}
    assert calls == {"emulator": bench.SLOW_REPEAT + 1, "floor": bench.SLOW_REPEAT + 1}


# ------------------------------------------------------ benchmarks/ab_kernels.py ----

def _benchmark(name: str):
    """benchmarks/NAME.py of the source tree, imported as a module"""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ab_kernels():
    return _benchmark("ab_kernels")


def test_ab_kernels_compares_a_build_with_itself():
    """Every dtype x operator line, both builds timed (each call's status checked), the ratio
    the quotient of the two medians."""
    ab = _ab_kernels()
    so = _emu.__file__
    old, new = ab.load(so, "t_old"), ab.load(so, "t_new")
    rows = ab.compare(old, new, (3, 5, 7), ["float32", "bfloat16"], list(ab.OPS), reps=2,
                      junk_bytes=1 << 16)
    assert [(d, op) for d, op, *_ in rows] == [(d, op) for d in ("float32", "bfloat16")
                                               for op in ab.OPS]
    for *_, a, b, ratio in rows:
        assert a > 0 and b > 0 and ratio == pytest.approx(b / a)


def test_ab_kernels_hot_writes_nothing_between_calls(capsys, monkeypatch):
    """--hot: no eviction buffer is allocated or written (the header says hot), the lines as in
    a cold run."""
    ab = _ab_kernels()
    sizes = []
    real_ones = ab.np.ones
    monkeypatch.setattr(ab.np, "ones", lambda n, *a, **k: sizes.append(n) or real_ones(n, *a, **k))
    so = _emu.__file__
    ab.main([so, so, "--shape", "2,9,3", "--dtype", "float16", "--op", "softmax", "--reps", "2",
             "--threads", "1", "--hot"])
    out = capsys.readouterr().out
    assert "1 threads, hot, medians of 2 calls" in out
    assert out.splitlines()[-1].split()[:2] == ["float16", "softmax"]
    assert sizes == []


def test_ab_kernels_cpu_time_reads_the_thread_clock(capsys, monkeypatch):
    """--cpu-time: each call timed by time.thread_time (the header says so), not the wall
    clock."""
    ab = _ab_kernels()
    reads = {"thread": 0, "wall": 0}
    real_thread, real_wall = ab.time.thread_time, ab.time.perf_counter

    def thread_time():
        reads["thread"] += 1
        return real_thread()

    def perf_counter():
        reads["wall"] += 1
        return real_wall()

    monkeypatch.setattr(ab.time, "thread_time", thread_time)
    monkeypatch.setattr(ab.time, "perf_counter", perf_counter)
    so = _emu.__file__
    ab.main([so, so, "--shape", "2,9,3", "--dtype", "float16", "--op", "softmax", "--reps", "3",
             "--threads", "1", "--hot", "--cpu-time"])
    out = capsys.readouterr().out
    assert "1 threads, hot, CPU time, medians of 3 calls" in out
    assert reads == {"thread": 2 * 2 * 3, "wall": 0}


@pytest.mark.parametrize("align", [64, 128, 2])
def test_ab_kernels_aligned_arrays(align):
    """--align: the arrays' first element at a multiple of align bytes (NumPy alone puts a
    large array 16 bytes past a page), n elements of the dtype, writable."""
    ab = _ab_kernels()
    for n in (1, 1000, 3 << 20):
        a = ab.aligned(n, np.float16, align)
        assert a.ctypes.data % align == 0 and a.shape == (n,) and a.dtype == np.float16
        a[:] = 1.5
        assert float(a[-1]) == 1.5


@pytest.mark.parametrize("args", [["--shape", "1,2"], ["--shape", "1,x,3"], ["--reps", "0"],
                                  ["--dtype", "int32"], ["--cpu-time", "--threads", "2"],
                                  ["--align", "3"], ["--align", "-64"]])
def test_ab_kernels_bad_input_is_a_usage_error(args, capsys):
    ab = _ab_kernels()
    with pytest.raises(SystemExit) as exc:
        ab.main(["old.so", "new.so", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert ("--shape" if "--shape" in args else args[0].lstrip("-")) in err
    if "--cpu-time" in args:
        assert "--threads must be 1, got 2" in err
    if "--align" in args:
        assert f"even number of bytes, got {args[1]}" in err


# ------------------------------------------------------- the floor, modes, int8 rows ----


def _int8_kernel() -> bool:
    """Whether the SoftmaxEx kernel exists (a stub faults at synchronize)."""
    try:
        functional.softmax(np.zeros((2, 2), np.int8), 1)
    except Exception:
        return False
    return True


needs_int8_kernel = pytest.mark.skipif(not _int8_kernel(),
                                       reason="the SoftmaxEx kernel is a stub in this build")


def test_pick_floor_takes_the_faster_median():
    assert bench.pick_floor("copy", 3.0, "hardsigmoid", 2.0) == ("hardsigmoid", 2.0)
    assert bench.pick_floor("add", 1.5, "hardsigmoid_backward", 2.0) == ("add", 1.5)
    assert bench.pick_floor("copy", 2.0, "hardsigmoid", 2.0) == ("copy", 2.0)  # a tie
    assert bench.pick_floor("copy", 2.0, "hardsigmoid", None) == ("copy", 2.0)  # no kernel


@pytest.mark.parametrize("op_name,memop,hs,kind,floor", [
    ("aclnnSoftmax", 3.0, 2.0, "hardsigmoid", 2.0),
    ("aclnnSoftmax", 1.5, 2.0, "copy", 1.5),
    ("aclnnSoftmaxBackward", 3.0, 2.5, "hardsigmoid_backward", 2.5),
    ("aclnnHardsigmoidBackward", 1.0, 2.5, "add", 1.0),
])
def test_the_floor_is_the_faster_of_its_two_contenders(monkeypatch, op_name, memop, hs, kind,
                                                       floor):
    """Both floors are timed in turn with the emulator (one paired group); the row's floor is
    the faster median, both medians kept (fake medians: the contenders' real calls, made once,
    give the results)."""
    seen = []

    def fake_rounds(fns, repeat, evict, paired=(), unevicted=(), **_):
        seen.append((list(fns), tuple(paired)))
        results = {name: fn() for name, fn in fns.items()}
        ms = {"emulator": 4.0, "floor": memop, "floor_hardsigmoid": hs, "probe": 0.2,
              "numpy": 8.0, "torch": 5.0}
        return ({n: ms[n] for n in fns}, results, {n: 1 for n in fns})

    monkeypatch.setattr(bench, "_rounds", fake_rounds)
    runner = bench.Runner([1], ["hot"], 1, torch=None)
    try:
        (r,) = runner.run(bench.Case(op_name, "float16", (8, 16), -1 if bench.has_relaxed(
            op_name) else None))
    finally:
        runner.close()
    names, paired = seen[0]
    assert {"emulator", "floor", "floor_hardsigmoid"} <= set(names)
    assert {"emulator", "floor", "floor_hardsigmoid"} <= set(paired) and "probe" not in paired
    assert (r.floor_kind, r.floor_ms) == (kind, floor)
    assert (r.floor_memop_ms, r.floor_hardsigmoid_ms) == (memop, hs)
    assert r.ratios["floor"] == pytest.approx(4.0 / floor)
    assert r.as_dict()["floor_kind"] == kind


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_the_hardsigmoid_floor_computes_our_hardsigmoid(dtype):
    """runtime.floor_hardsigmoid_call runs our own kernel on the given buffers: the functional
    layer's hardsigmoid / hardsigmoid_backward bits (alpha 1/6, beta 0.5)."""
    from aclnn_py import dtypes, runtime

    dt = bench.DTYPES[dtype]
    g, x = bench.make_inputs("aclnnHardsigmoidBackward", (5, 77), dtype)
    acl_dt = int(dtypes.from_numpy(dt))
    y = np.zeros_like(x)
    addr = lambda a: a.__array_interface__["data"][0]  # noqa: E731
    fwd = runtime.floor_hardsigmoid_call(False, acl_dt, (addr(x), addr(y)), x.size)
    assert fwd() == 0
    assert np.array_equal(y.view(np.uint8), functional.hardsigmoid(x).view(np.uint8))
    out = np.zeros_like(x)
    bwd = runtime.floor_hardsigmoid_call(True, acl_dt, (addr(g), addr(x), addr(out)), x.size)
    assert bwd() == 0
    assert np.array_equal(out.view(np.uint8),
                          functional.hardsigmoid_backward(g, x).view(np.uint8))


def test_no_hardsigmoid_floor_for_int8():
    from aclnn_py import dtypes, runtime

    i8 = int(dtypes.aclDataType.ACL_INT8)
    assert runtime.floor_hardsigmoid_call(False, i8, (0, 0), 16) is None
    assert runtime.floor_hardsigmoid_call(True, i8, (0, 0, 0), 16) is None


def test_modes_plan_relaxed_and_int8_cases_at_the_default_layouts():
    """relaxed: float16 / bfloat16 of the four softmax-family operators, after each strict
    case; int8: softmax and log_softmax (whatever the dtypes), after the float cases."""
    ops = ["aclnnSoftmax", "aclnnSoftmaxBackward", "aclnnHardsigmoid"]
    cases, skipped = bench.plan_cases(ops, list(bench.DEFAULT_DTYPES), modes=bench.MODES)
    assert not skipped
    layouts = [(c.shape, c.dim, c.hot_only) for c in REGISTRY["aclnnSoftmax"].bench.cases]
    for op in ops:
        mine = [c for c in cases if c.op == op]
        want = [(dt, "strict") for dt in ("float32",) for _ in layouts]
        relaxed = op != "aclnnHardsigmoid"
        for dt in ("float16", "bfloat16"):
            for _ in layouts:
                want += [(dt, "strict")] + ([(dt, "relaxed")] if relaxed else [])
        if op == "aclnnSoftmax":
            want += [("int8", "int8")] * len(layouts)
        assert [(c.dtype, c.mode) for c in mine] == want, op
        for mode in ("relaxed", "int8"):
            assert sorted({(c.shape, c.dim, c.hot_only) for c in mine if c.mode == mode}) == (
                sorted(set(layouts)) if mode == "relaxed" and relaxed or mode == "int8" and op
                == "aclnnSoftmax" else [])
    only, _ = bench.plan_cases(["aclnnLogSoftmax"], ["float32"], modes=("int8",))
    assert {(c.dtype, c.mode) for c in only} == {("int8", "int8")}
    assert bench.plan_cases(["aclnnLogSoftmax"], ["float32"], modes=("relaxed",)) == ([], [])


def test_mode_column_and_field():
    """The mode column (third) and field; relaxed rows only for float16 / bfloat16 of the
    softmax family; the executor's accumulation mode recorded."""
    result = invoke("--op", "softmax", "--op", "hardsigmoid", "--dtype", "float32", "--dtype",
                    "float16", "--mode", "strict", "--mode", "relaxed", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-torch", "--json", "-")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    got = [(r["op"], r["dtype"], r["mode"], r["accumulation"]) for r in data["records"]]
    assert got == [("aclnnSoftmax", "float32", "strict", "strict"),
                   ("aclnnSoftmax", "float16", "strict", "strict"),
                   ("aclnnSoftmax", "float16", "relaxed", "relaxed"),
                   ("aclnnHardsigmoid", "float32", "strict", None),
                   ("aclnnHardsigmoid", "float16", "strict", None)]
    assert data["failed"] == []
    rows = [line.split() for line in result.stderr.splitlines()
            if line.startswith(("Softmax ", "Hardsigmoid "))]
    assert [(r[0], r[1], r[2]) for r in rows] == [(a[len("aclnn"):], b, c) for a, b, c, _ in got]
    head = next(line for line in result.stderr.splitlines() if line.startswith("operator"))
    assert head.split()[:4] == ["operator", "dtype", "mode", "shape/dim"]


@pytest.mark.parametrize("env", [None, "any", "strict", "relaxed"])
def test_relaxed_rows_set_the_mode_around_phase_1_only(monkeypatch, env):
    """A relaxed row's phase 1 sees ACLNN_EMU_ACCUMULATION=relaxed and its executor records
    relaxed; a strict row's sees strict (whatever the user set); the launches see the user's
    environment again, and so does the caller afterwards."""
    import aclnn_py.aclnn as api

    key = "ACLNN_EMU_ACCUMULATION"
    if env is None:
        monkeypatch.delenv(key, raising=False)
    else:
        monkeypatch.setenv(key, env)
    seen: list = []
    for name in ("aclnnSoftmaxBackward", "aclnnSoftmaxBackwardGetWorkspaceSize"):
        real = getattr(api, name)
        monkeypatch.setattr(api, name, lambda *a, real=real, name=name: (
            seen.append((name, bench.os.environ.get(key))), real(*a))[1])
    runner = bench.Runner([1], ["hot"], 1, use_numpy=False)
    try:
        for mode in ("relaxed", "strict"):
            (r,) = runner.run(bench.Case("aclnnSoftmaxBackward", "bfloat16", (4, 32), -1,
                                         mode=mode))
            assert (r.mode, r.accumulation) == (mode, mode)
            assert bench.os.environ.get(key) == env
    finally:
        runner.close()
    phase1 = [v for n, v in seen if n.endswith("GetWorkspaceSize")]
    launches = {v for n, v in seen if not n.endswith("GetWorkspaceSize")}
    assert phase1 == ["relaxed", "strict"]
    assert launches == {env}


def test_int8_golden_rounds_half_to_even_and_saturates():
    """float64 softmax * 64 / 0.5, rounded half to even, saturated to int8 (hand-computed)."""
    i8 = np.int8
    sm, lsm = "aclnnSoftmax", "aclnnLogSoftmax"
    # 256 equal values: 1/256 * 128 = 0.5 -> 0 (half to even; half away from zero gives 1)
    assert np.array_equal(bench.int8_golden(sm, [np.zeros((1, 256), i8)], -1), np.zeros((1, 256)))
    # 128 equal values: exactly 1
    assert np.array_equal(bench.int8_golden(sm, [np.zeros((1, 128), i8)], -1), np.ones((1, 128)))
    # [1, 0]: e/(1+e) * 128 = 93.58 -> 94, 1/(1+e) * 128 = 34.42 -> 34; [0, -100]: 128 -> 127
    x = np.array([[1, 0], [0, -100]], i8)
    assert bench.int8_golden(sm, [x], -1).tolist() == [[94, 34], [127, 0]]
    # log_softmax [0, 0]: -ln 2 * 128 = -88.72 -> -89; [0, -100]: -0 and -12800 -> -128
    x = np.array([[0, 0], [0, -100]], i8)
    assert bench.int8_golden(lsm, [x], -1).tolist() == [[-89, -89], [0, -128]]
    # along dim 0, and the float32 NumPy baseline gives the same integers
    x = np.array([[1, 0, 0], [0, -100, 0]], i8)
    assert bench.int8_golden(sm, [x], 0).tolist() == [[94, 127, 64], [34, 0, 64]]
    for op in (sm, lsm):
        for a, d in ((np.zeros((1, 256), i8), -1), (x, 0), (x, 1)):
            got = bench.int8_numpy(op, [a], d)
            assert got.dtype == np.int8
            assert np.array_equal(got, bench.int8_golden(op, [a], d))
    # errors in integer steps
    gold = np.array([[94.0, 34.0], [127.0, 0.0]])
    got = np.array([[95, 34], [127, -2]], np.int8)
    assert bench.int_errors(got, gold) == (2.0, 2.0, 2.0)
    assert bench.int_errors(gold.astype(np.int8), gold) == (0.0, 0.0, 0.0)


def test_int8_inputs_are_small_integers():
    (x,) = bench.make_inputs("aclnnSoftmax", (64, 64), "int8", dim=-1)
    assert x.dtype == np.int8 and x.min() == -4 and x.max() == 4


@needs_int8_kernel
@pytest.mark.parametrize("op_name", ["aclnnSoftmax", "aclnnLogSoftmax"], ids=bench.short_name)
def test_int8_rows(op_name):
    """int8 in and out, the copy floor only, no PyTorch; the errors in integer steps against
    this file's golden: the functional layer's result with the same attributes (oneDNN's
    formula: within one step of the rounded float64 value)."""
    data = run_json("--op", op_name, "--mode", "int8", *SMALL, "--threads", "1", "--cache",
                    "hot")
    (r,) = data["records"]
    assert (r["dtype"], r["mode"], r["floor_kind"]) == ("int8", "int8", "copy")
    assert r["floor_hardsigmoid_ms"] is None and r["floor_ms"] == r["floor_memop_ms"] > 0
    assert r["torch_ms"] is None and r["torch_err_eps"] is None and r["numpy_ms"] > 0
    assert r["nbytes"] == 2 * 8 * 16 and not r["err_scaled"]
    (x,) = bench.make_inputs(op_name, (8, 16), "int8", dim=-1)
    fn = functional.softmax if op_name == "aclnnSoftmax" else functional.log_softmax
    got = fn(x, -1, out_dtype=np.int8, src_scale=64.0, dst_scale=0.5).astype(np.float64)
    ref = bench.int8_golden(op_name, [x], -1)
    assert float(np.abs(got - ref).max()) <= 1
    assert r["emulator_err_abs"] == r["emulator_err_eps"] == float(np.abs(got - ref).max())
    assert r["numpy_err_eps"] <= 1


def test_a_failing_case_is_reported_and_the_others_kept(monkeypatch):
    """A case whose run raises BenchError (the int8 rows while the SoftmaxEx kernel is a stub)
    is listed after the table and in the JSON's "failed"; the other rows stay; exit code 1."""
    real = bench.Runner.run

    def run(self, case, tick=lambda s: None):
        if case.mode == "int8":
            raise bench.BenchError("aclnnSoftmax (Softmax int8 8x16/-1) returned 507015: stub")
        return real(self, case, tick)

    monkeypatch.setattr(bench.Runner, "run", run)
    result = invoke("--op", "softmax", "--dtype", "float16", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-torch", "--no-numpy", "--json", "-")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert [(r["dtype"], r["mode"]) for r in data["records"]] == [("float16", "strict"),
                                                                  ("float16", "relaxed")]
    assert data["failed"] == [{"op": "aclnnSoftmax", "dtype": "int8", "mode": "int8",
                               "shape": [8, 16], "dim": -1,
                               "error": "aclnnSoftmax (Softmax int8 8x16/-1) returned 507015: "
                                        "stub"}]
    assert "failed Softmax int8 8x16/-1: aclnnSoftmax" in result.stderr
    assert "1 of 3 cases failed" in result.stderr
    assert "Traceback" not in result.output


def test_the_default_modes_are_all_three():
    """No --mode: strict, relaxed and int8 rows (the int8 ones fail cleanly while the SoftmaxEx
    kernel is a stub)."""
    result = invoke("--op", "log_softmax", "--dtype", "bfloat16", *SMALL, "--threads", "1",
                    "--cache", "hot", "--no-torch", "--no-numpy", "--json", "-")
    data = json.loads(result.stdout)
    modes = [r["mode"] for r in data["records"]] + [f["mode"] for f in data["failed"]]
    assert modes == ["strict", "relaxed", "int8"]
    if _int8_kernel():
        assert result.exit_code == 0 and not data["failed"], result.output
    else:
        assert result.exit_code == 1 and "SoftmaxEx" in data["failed"][0]["error"]
        assert "Traceback" not in result.output


# ----------------------------------------------------- benchmarks/compute_floor.py ----


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the compute floor's rows are AVX2 / AVX-512 code")
def test_compute_floor_rows_compute_the_operators():
    """The arithmetic benchmarks/compute_floor.py times is the whole of the relaxed contract's,
    not less: each level's row gives softmax / log_softmax of a 16-bit row within 2 ulp of
    the float64 result (ulp of the output dtype at the result's binade), float16 and
    bfloat16, at every level the CPU has; a level it lacks is reported as such."""
    import ml_dtypes

    cf = _benchmark("compute_floor")
    ffi, lib = cf.build()
    ran = 0
    for name, level in cf.LEVELS.items():
        for lg in (0, 1):
            for bf, dt in ((0, np.float16), (1, ml_dtypes.bfloat16)):
                if not lib.cf_has(level + (1 if bf and level == 3 else 0)):
                    continue
                x, y, buf = cf.row_inputs(bf, 5)
                lib.cf_row(level, lg, bf, ffi.from_buffer("uint16_t[]", x),
                           ffi.from_buffer("uint16_t[]", y), ffi.from_buffer("float[]", buf),
                           cf.N, 1)
                xf = x.view(dt).astype(np.float64)
                d = xf - xf.max()
                ref = d - np.log(np.exp(d).sum()) if lg else np.exp(d) / np.exp(d).sum()
                fi = ml_dtypes.finfo(dt)
                ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(ref),
                                                          float(fi.smallest_normal))))
                              - fi.nmant)
                err = np.abs(y.view(dt).astype(np.float64) - ref) / ulp
                assert err.max() <= 2.0, (name, lg, bf, float(err.max()))
                ran += 1
    if not ran:
        pytest.skip("the CPU has neither AVX2 nor AVX-512")
