"""`aclnn-py bench`: each operator through the aclnn API against a memory floor, NumPy and
PyTorch, measured in the same run, with a correctness column (docs/performance.md).

One *case* is an operator x dtype x layout (the layouts and formulas come from the operators'
declarations, ``OpDef.bench``); one *row* is a case at one kernel thread count and one cache
state. In a row each contender in turn gets one warm-up call, then ``repeat`` timed single calls
(in a cold row the caches are evicted before each); the row shows medians.

- emulator: phase 2 + synchronize on a repeatable executor (the plan's steps, without phase 1);
- floor: the faster of two same-footprint streaming operations on the kernel pool, into the same
  buffers, each timed in turn with the emulator: a C memory operation (a copy of the output's
  bytes for a forward operator, a 2-in/1-out add for a backward one) and our own hard-sigmoid
  kernel (hardsigmoid_backward for a backward operator) of the same shape and dtype, called
  directly, where that kernel takes the dtype;
- NumPy: the declared formula; float16/bfloat16 computed as a NumPy user would (cast to float32,
  compute, cast back, the casts timed). NumPy runs on one thread: it is timed in the first row of
  a case and cache state and shared by the other thread counts;
- PyTorch (optional): the aten ``out=`` variant into a preallocated tensor, on the same inputs,
  with ``torch.set_num_threads(threads)``;
- probe: a fixed compute-only workload on the kernel pool (no memory traffic), timed in its own
  turn right after the emulator's and the floor's calls, without evictions. Its median in a row
  over its median across the run's rows of that thread count (``cpu``, :func:`mark_cpu`) shows
  a row that ran while the machine computed slower than usual (on a shared virtual machine,
  whole stretches of a run can: a row's times then say little about the kernel).

Correctness (outside the timed region): each output against a float64 golden of the formula
computed from the same inputs widened to float64: the max absolute error, and the max error in
units of the output dtype's epsilon (:func:`errors`).

Modes (the ``mode`` column): "strict" rows are planned with ``ACLNN_EMU_ACCUMULATION=strict``;
"relaxed" rows (float16 / bfloat16 of the softmax family) with ``ACLNN_EMU_ACCUMULATION=relaxed``
set around their phase 1 only; "int8" rows (softmax, log_softmax) take int8 data to int8 with
oneDNN's src_scale 64 and dst_scale 0.5 (benchdnn's int8 problems), planned by the functional
layer's phase 1 (a SoftmaxEx step), their golden rounded and saturated (:func:`int8_golden`) and
their error in integer steps (:func:`int_errors`).
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import statistics
import textwrap
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import ml_dtypes
import numpy as np

from . import acl, aclnn, dtypes

#: the dtypes the bench knows (name -> NumPy dtype); the default run takes DEFAULT_DTYPES
DTYPES: dict[str, Any] = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
                          "bfloat16": np.dtype(ml_dtypes.bfloat16),
                          "float64": np.dtype(np.float64)}
DEFAULT_DTYPES = ("float32", "float16", "bfloat16")
#: every dtype a row may have: DTYPES and the int8 rows' "int8"
ROW_DTYPES: dict[str, Any] = {**DTYPES, "int8": np.dtype(np.int8)}
#: the row modes (``--mode``; the default run takes all three): "strict", "relaxed" (oneDNN's
#: relaxed accumulation: float16 / bfloat16 of the operators with an accumulation mode), "int8"
#: (int8 in, int8 out, with INT8_SRC_SCALE and INT8_DST_SCALE)
MODES = ("strict", "relaxed", "int8")
RELAXED_DTYPES = ("float16", "bfloat16")
INT8_SRC_SCALE, INT8_DST_SCALE = 64.0, 0.5  # benchdnn's int8 softmax problems
ACCUMULATION_ENV = "ACLNN_EMU_ACCUMULATION"
CACHES = ("cold", "hot")
FALLBACK_EVICT_BYTES = 64 << 20  # when the last-level cache size is unknown
SEED = 0  # make_inputs' default seed
SLOW_CALL_S = 0.25  # a contender whose warm-up call takes longer than this (NumPy's float16
SLOW_REPEAT = 3  # formulas) is timed at most SLOW_REPEAT times
PROBE_CHUNKS = 64  # the compute probe's size: ~0.4 ms on one core, split over the kernel threads
CPU_SLOW = 1.25  # a row whose probe took this much longer than the run's usual is flagged
SETTLE_S = 0.01  # the pause before each contender's turn: another pool's threads stop spinning


def _declared() -> list:
    """(operator, its OpDef.bench) of every operator that declares benchmark cases."""
    from .ops import REGISTRY

    return [(op.name, op.bench) for op in REGISTRY.values() if op.bench is not None]


#: operator -> its NumPy formula ``(arrays, dim) -> array`` (OpDef.bench.numpy)
BASELINES: dict[str, Callable] = {name: bench.numpy for name, bench in _declared()}

#: (operator, shape, dim) of a plain `aclnn-py bench` (OpDef.bench.cases, in registry order)
DEFAULT_CASES = [(name, c.shape, c.dim) for name, bench in _declared() for c in bench.cases]


class BenchError(Exception):
    """A case could not run (phase 1 refused it, a launch failed, out of memory)."""


def _torch_calls() -> dict:
    """operator -> ``(torch, inputs, dim, out) -> None``: PyTorch's aten out= variants."""
    return {
        "aclnnSoftmax": lambda t, a, d, o: t.ops.aten._softmax.out(a[0], d, False, out=o),
        "aclnnLogSoftmax": lambda t, a, d, o: t.ops.aten._log_softmax.out(a[0], d, False, out=o),
        "aclnnSoftmaxBackward": lambda t, a, d, o: t.ops.aten._softmax_backward_data.out(
            a[0], a[1], d, a[0].dtype, grad_input=o),
        "aclnnLogSoftmaxBackward": lambda t, a, d, o: t.ops.aten._log_softmax_backward_data.out(
            a[0], a[1], d, a[0].dtype, out=o),
        "aclnnHardsigmoid": lambda t, a, d, o: t.ops.aten.hardsigmoid.out(a[0], out=o),
        "aclnnHardsigmoidBackward": lambda t, a, d, o: t.ops.aten.hardsigmoid_backward.grad_input(
            a[0], a[1], grad_input=o),
    }


TORCH_CALLS = _torch_calls()


# ------------------------------------------------------------------------------ cases ----


@dataclass(frozen=True)
class Case:
    """One operator x dtype x layout."""

    op: str
    dtype: str
    shape: tuple
    dim: Optional[int]  # None for the elementwise operators
    hot_only: bool = False
    mode: str = "strict"  # MODES

    @property
    def label(self) -> str:
        shape = "x".join(str(d) for d in self.shape)
        return shape if self.dim is None else f"{shape}/{self.dim}"

    @property
    def title(self) -> str:
        """E.g. "Softmax float16 relaxed 4096x4096/-1" (the mode left out when strict)."""
        mode = "" if self.mode in ("strict", self.dtype) else f" {self.mode}"
        return f"{short_name(self.op)} {self.dtype}{mode} {self.label}"


def short_name(op: str) -> str:
    return op[len("aclnn"):] if op.startswith("aclnn") else op


def has_relaxed(op_name: str) -> bool:
    """Whether the operator has oneDNN's accumulation modes (the softmax family)."""
    from .ops import REGISTRY

    spec = REGISTRY[op_name].functional
    return spec is not None and "accumulation" in spec.options


def has_int8(op_name: str) -> bool:
    """Whether the operator takes int8 data with oneDNN's scales (softmax, log_softmax)."""
    from .ops import REGISTRY

    spec = REGISTRY[op_name].functional
    return (spec is not None and "src_scale" in spec.options
            and dtypes.aclDataType.ACL_INT8 in spec.dtypes.get("self", ()))


def plan_cases(ops: list, dtype_names: list, shape: Optional[tuple] = None,
               dim: Optional[int] = None, modes: tuple = ("strict",)) -> tuple[list, list]:
    """(cases, skipped): every operator x dtype x layout (the declared layouts, or ``shape`` and
    ``dim`` for all) x mode, and the (operator, dtype, reason) combinations the SoC's phase 1
    refuses. Per layout the strict case comes first, then the relaxed one (float16 / bfloat16
    of an operator with accumulation modes); an operator's int8 cases (selected by ``modes``
    alone, not by ``dtype_names``; planned by the functional layer's phase 1, on any SoC) come
    after its float ones."""
    from . import config
    from .ops import REGISTRY

    profile = config.soc_profile()
    cases: list = []
    skipped: list = []
    for name in ops:
        op = REGISTRY[name]
        if shape is not None:
            layouts = [(tuple(shape), dim if op.int_params else None, False)]
        else:
            declared = op.bench.cases if op.bench is not None else ()
            layouts = [(tuple(c.shape), c.dim, c.hot_only) for c in declared]
        for dt in dtype_names:
            row_modes = [m for m in ("strict", "relaxed") if m in modes and (
                m == "strict" or (dt in RELAXED_DTYPES and has_relaxed(name)))]
            if not row_modes:
                continue
            what = dt if "strict" in row_modes else f"{dt} relaxed"
            acl_dt = dtypes.from_numpy(DTYPES[dt])
            if not profile.supports(name):
                skipped.append((name, what, f"no kernel on {profile.name}"))
                continue
            if acl_dt is None or not op.accepts(profile.soc_class, acl_dt):
                skipped.append((name, what, f"phase 1 refuses {dt} on {profile.name}"))
                continue
            cases.extend(Case(name, dt, s, d, h, m) for s, d, h in layouts for m in row_modes)
        if "int8" in modes and has_int8(name):
            cases.extend(Case(name, "int8", s, d, h, "int8") for s, d, h in layouts)
    return cases, skipped


def make_inputs(op_name: str, shape, dtype_name: str, seed: int = SEED,
                dim: Optional[int] = None) -> list:
    """The inputs of a case: one array per input tensor, uniform in [-4, 4) rounded to the dtype,
    except the y of softmax_backward / log_softmax_backward when dim is given: the forward
    operator's output for such an x along dim (float64, rounded to the dtype), as in training,
    where y always comes from the forward pass (log_softmax_backward's kernel takes a cheaper exp
    when y <= 0, which a random y would never show). int8: the same uniform values rounded to
    the nearest integer (-4 to 4)."""
    from .ops import REGISTRY

    rng = np.random.default_rng(seed)
    dt = ROW_DTYPES[dtype_name]
    if dt.kind == "i":
        return [np.rint(rng.random(tuple(shape), dtype=np.float32) * 8 - 4).astype(dt)
                for _ in REGISTRY[op_name].inputs]
    wide = np.float64 if dt == np.float64 else np.float32
    arrays = [(rng.random(tuple(shape), dtype=wide) * 8 - 4).astype(dt)
              for _ in REGISTRY[op_name].inputs]
    if dim is not None and op_name in ("aclnnSoftmaxBackward", "aclnnLogSoftmaxBackward"):
        x = arrays[1].astype(np.float64)
        d = x - x.max(axis=dim, keepdims=True)
        lse = np.log(np.exp(d).sum(axis=dim, keepdims=True))
        y = np.exp(d - lse) if op_name == "aclnnSoftmaxBackward" else d - lse
        arrays[1] = y.astype(dt)
    return arrays


# -------------------------------------------------------------------------- correctness ----


def scaled_error(op_name: str) -> bool:
    """Whether the op's tolerance scales with its largest golden magnitude (the backward
    operators, as in the numerics tests: their outputs cancel, g*y - sum(g*y)*y) rather than
    with 1."""
    from .ops import REGISTRY

    return len(REGISTRY[op_name].inputs) == 2


NO_ERRORS = (None, None, None)
_TABLES: dict = {}


def widen(a) -> np.ndarray:
    """``a`` as float64; 2-byte floats through a 65536-entry table (NumPy converts float16
    subnormals, which softmax outputs are full of, slowly)."""
    a = np.asarray(a)
    if a.dtype.itemsize != 2:
        return a.astype(np.float64)
    table = _TABLES.get(a.dtype)
    if table is None:
        with np.errstate(invalid="ignore"):  # the NaN bit patterns
            table = np.arange(1 << 16, dtype=np.uint16).view(a.dtype).astype(np.float64)
        _TABLES[a.dtype] = table
    return table[a.view(np.uint16)]


def errors(got, golden, dtype_name: str, scaled: bool) -> tuple:
    """(max absolute error, max error in epsilons, max relative error in epsilons) of ``got``
    against the float64 ``golden``, eps being the output dtype's machine epsilon:

    - eps: ``|got - golden| / (eps * (|golden| + s))``, s = 1, or max|golden| over the tensor
      when ``scaled``: the numerics tests' tolerance ``atol*s + rtol*|golden|`` with atol = rtol
      = eps (a correctly rounded result is at most 0.5);
    - rel: ``|got - golden| / (eps * max(|golden|, smallest normal))``, each element's own
      relative error (ulp-like; large where the formula cancels, as hard-sigmoid's
      x/6 + 1/2 near x = -3 in float32).

    NO_ERRORS when an output is NaN or infinite where the golden is finite."""
    fi = ml_dtypes.finfo(DTYPES[dtype_name])
    eps, tiny = float(fi.eps), float(fi.tiny)
    got = np.ascontiguousarray(got).reshape(-1)
    gold = np.ascontiguousarray(golden, dtype=np.float64).reshape(-1)
    if gold.size == 0:
        return 0.0, 0.0, 0.0
    s = max(float(np.abs(gold).max()), tiny) if scaled else 1.0
    worst, worst_tol, worst_rel = 0.0, 0.0, 0.0
    step = 1 << 17  # chunks that stay in cache
    for i in range(0, gold.size, step):
        g, a = widen(got[i:i + step]), np.abs(gold[i:i + step])
        np.subtract(g, gold[i:i + step], out=g)
        np.abs(g, out=g)
        e = float(g.max())
        if not math.isfinite(e):
            return NO_ERRORS
        worst = max(worst, e)
        worst_tol = max(worst_tol, float((g / (a + s)).max()))
        np.maximum(a, tiny, out=a)
        np.divide(g, a, out=g)
        worst_rel = max(worst_rel, float(g.max()))
    return worst, worst_tol / eps, worst_rel / eps


def int_errors(got, golden) -> tuple:
    """(max absolute error, the same, max relative error) of an integer output against its
    integer-valued golden (:func:`int8_golden`), in units of 1 (integer steps); the relative
    error is ``|got - golden| / max(|golden|, 1)``."""
    got = np.ascontiguousarray(got).reshape(-1)
    gold = np.ascontiguousarray(golden, dtype=np.float64).reshape(-1)
    worst, worst_rel = 0.0, 0.0
    step = 1 << 17
    for i in range(0, gold.size, step):
        g = gold[i:i + step]
        d = np.abs(got[i:i + step].astype(np.float64) - g)
        worst = max(worst, float(d.max()))
        worst_rel = max(worst_rel, float((d / np.maximum(np.abs(g), 1.0)).max()))
    return worst, worst, worst_rel


def int8_golden(op_name: str, inputs: list, dim, src_scale: float = INT8_SRC_SCALE,
                dst_scale: float = INT8_DST_SCALE) -> np.ndarray:
    """The int8 rows' golden, as float64 integers: the declared formula in float64 on the
    inputs, times ``src_scale``, over ``dst_scale``, rounded half to even and saturated to
    [-128, 127] (oneDNN's int8 softmax: ``softmax * src_scale * (1 / dst_scale)``)."""
    y = BASELINES[op_name]([widen(a) for a in inputs], dim) * src_scale / dst_scale
    return np.clip(np.rint(y), -128.0, 127.0)


def int8_numpy(op_name: str, inputs: list, dim, src_scale: float = INT8_SRC_SCALE,
               dst_scale: float = INT8_DST_SCALE) -> np.ndarray:
    """The int8 rows' NumPy baseline: :func:`int8_golden`'s formula in float32, as a NumPy user
    writes it (the casts included)."""
    y = BASELINES[op_name]([a.astype(np.float32) for a in inputs], dim)
    y = y * np.float32(src_scale * (1 / dst_scale))
    np.rint(y, out=y)
    np.clip(y, -128, 127, out=y)
    return y.astype(np.int8)


def golden_of(op_name: str, inputs: list, dim, mode: str = "strict") -> np.ndarray:
    """The float64 golden: the declared formula on the inputs widened to float64 (int8 rows:
    :func:`int8_golden`)."""
    if mode == "int8":
        return int8_golden(op_name, inputs, dim)
    return BASELINES[op_name]([widen(a) for a in inputs], dim)


def row_errors(got, golden, case: Case) -> tuple:
    """:func:`errors` of a row's output (:func:`int_errors` for the int8 rows)."""
    if case.mode == "int8":
        return int_errors(got, golden)
    return errors(got, golden, case.dtype, scaled_error(case.op))


@contextlib.contextmanager
def accumulation_env(mode: str) -> Iterator[None]:
    """``ACLNN_EMU_ACCUMULATION=mode`` for the ``with`` block (a phase 1), the environment
    restored after it (the variable removed when it was not set)."""
    old = os.environ.get(ACCUMULATION_ENV)
    os.environ[ACCUMULATION_ENV] = mode
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ACCUMULATION_ENV, None)
        else:
            os.environ[ACCUMULATION_ENV] = old


# ------------------------------------------------------------------------------ machine ----


def llc_bytes() -> Optional[int]:
    """The last-level cache's size, as the C core reads it (what a cold row evicts)."""
    from . import runtime

    return runtime.llc_bytes()


def store_llc_bytes() -> Optional[int]:
    """The last-level cache the kernels' store policy assumes (``ACLNN_EMU_LLC`` if set)."""
    from . import runtime

    return runtime.store_llc_bytes()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model", "Processor"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def max_threads() -> int:
    """The most kernel threads the C core takes."""
    from . import runtime

    return int(runtime.core.MAX_THREADS)


def default_threads() -> list:
    """1 and the number of cores this process may use, deduplicated."""
    return sorted({1, available_cores()})


def import_torch(use: bool = True):
    """PyTorch, or None when it is not installed (or ``use`` is False)."""
    if not use:
        return None
    # PyTorch's OpenMP threads spin after each call by default, taking the cores the emulator's
    # pool (timed next) needs; passive waiting lets them sleep. Set before torch loads, unless
    # the user chose a policy.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        return None
    return torch


def machine_info(threads: list, torch=None, numpy: bool = True,
                 caches: Sequence = CACHES) -> dict:
    from . import config, runtime
    from ._version import __version__

    llc = llc_bytes()
    return {
        "isa": runtime.isa_name(),
        "cpu": cpu_model(),
        "cores": available_cores(),
        "threads": list(threads),
        "caches": [c for c in CACHES if c in caches],
        "llc_bytes": llc,
        "store_llc_bytes": store_llc_bytes(),
        "evict_bytes": 2 * llc if llc else FALLBACK_EVICT_BYTES,
        "soc": config.soc_profile().name,
        "aclnn_py": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__ if numpy else None,
        "torch": torch.__version__ if torch is not None else None,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# ------------------------------------------------------------------------------ records ----


@dataclass
class Record:
    """One row: a case at one thread count and cache state. Times in ms (medians); ratios are
    the emulator's time over the other's (< 1: the emulator is faster)."""

    op: str
    dtype: str
    shape: list
    dim: Optional[int]
    threads: int
    cache: str
    repeat: int
    # the floor's contender that was faster: "copy" (forward) or "add" (backward, 2 in / 1 out),
    # or "hardsigmoid" (forward) or "hardsigmoid_backward" (backward): our own kernel
    floor_kind: str
    nbytes: int  # bytes the kernel reads and writes (inputs + output)
    emulator_ms: float
    floor_ms: float  # the faster of floor_memop_ms and floor_hardsigmoid_ms
    numpy_ms: Optional[float] = None
    torch_ms: Optional[float] = None
    # errors against the float64 golden (see errors()): absolute, in eps, relative in eps
    emulator_err_abs: Optional[float] = None
    emulator_err_eps: Optional[float] = None
    emulator_err_rel: Optional[float] = None
    numpy_err_abs: Optional[float] = None
    numpy_err_eps: Optional[float] = None
    numpy_err_rel: Optional[float] = None
    torch_err_abs: Optional[float] = None
    torch_err_eps: Optional[float] = None
    torch_err_rel: Optional[float] = None
    err_scaled: bool = False  # the eps errors scale with max|golden| (backward operators)
    bit_identical: Optional[bool] = None  # the emulator's output equals the first thread count's
    probe_ms: Optional[float] = None  # the compute probe, timed right after the row's pair
    cpu: Optional[float] = None  # probe_ms over the run's median probe_ms (mark_cpu)
    mode: str = "strict"  # "strict", "relaxed" or "int8" (MODES)
    accumulation: Optional[str] = None  # the executor's accumulation mode (softmax family)
    floor_memop_ms: Optional[float] = None  # the copy (forward) or add (backward)
    floor_hardsigmoid_ms: Optional[float] = None  # our hardsigmoid(_backward); None: no kernel
    ratios: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        def ratio(other):
            return self.emulator_ms / other if other else None

        self.ratios = {"floor": ratio(self.floor_ms), "numpy": ratio(self.numpy_ms),
                       "torch": ratio(self.torch_ms),
                       "torch_floor": (self.torch_ms / self.floor_ms
                                       if self.torch_ms and self.floor_ms else None)}

    @property
    def gbps(self) -> float:
        return self.nbytes / (self.emulator_ms * 1e6) if self.emulator_ms else float("inf")

    @property
    def label(self) -> str:
        return Case(self.op, self.dtype, tuple(self.shape), self.dim).label

    def as_dict(self) -> dict:
        d = asdict(self)
        d["gbps"] = self.gbps
        return d


def pick_floor(memop_kind: str, memop_ms: float, hardsigmoid_kind: str,
               hardsigmoid_ms: Optional[float]) -> tuple[str, float]:
    """(floor_kind, floor_ms): the faster of the two floor contenders' medians (the memory
    operation when our hard-sigmoid kernel does not take the dtype, or on a tie)."""
    if hardsigmoid_ms is not None and hardsigmoid_ms < memop_ms:
        return hardsigmoid_kind, hardsigmoid_ms
    return memop_kind, memop_ms


# ------------------------------------------------------------------------------ running ----


def _thread_control() -> tuple[Callable[[], int], Callable[[int], None]]:
    """(get, set) of the kernel pool's thread count (set_num_threads: an internal setter)."""
    from . import runtime

    return runtime.num_threads, runtime.set_num_threads


class Evictor:
    """Evicts the caches by reading and writing a buffer of twice the last-level cache."""

    def __init__(self, nbytes: int):
        self.buf = np.zeros(nbytes, np.uint8)

    def __call__(self) -> None:
        np.add(self.buf, 1, out=self.buf)


def _rounds(fns: dict, repeat: int, evict: Optional[Callable],
            slow_s: float = SLOW_CALL_S, paired: tuple = (),
            unevicted: tuple = (), settle_s: float = SETTLE_S) -> tuple[dict, dict, dict]:
    """({name: median ms}, {name: the warm-up call's result}, {name: timed calls}): each
    contender gets one warm-up call, then ``repeat`` timed calls (at most SLOW_REPEAT when the
    warm-up took longer than ``slow_s`` seconds), ``evict`` before every timed call.
    The contenders named in ``paired`` (the emulator and the floor, which run on the same
    kernel pool) take their timed calls in turn, call by call, so that a drift of the machine's
    speed moves both medians alike; the others run one after the other, not call by call: a
    thread pool that spins after its call, as OpenMP's does, would slow the next contender's
    call. The contenders named in ``unevicted`` (the compute probe) are timed without an
    eviction before them. Each turn (the pair, then each other contender) starts after a pause
    of ``settle_s``: PyTorch's OpenMP threads spin for a few ms after its call, and until they
    stop they take a core from whatever runs (the compute probe took 0.38 ms instead of 0.19 on
    2 threads up to 2 ms after a torch call, on the machine of docs/performance.md)."""
    clock = time.perf_counter
    medians, first, counts = {}, {}, {}

    def timed(name) -> float:
        fn = fns[name]
        if evict is not None and name not in unevicted:
            evict()
        t0 = clock()
        fn()
        return (clock() - t0) * 1e3

    pair = [name for name in fns if name in paired]
    groups = ([pair] if pair else []) + [[name] for name in fns if name not in pair]
    for group in groups:  # a group's calls in turn; a slow warm-up limits the whole group
        if settle_s > 0:
            time.sleep(settle_s)
        n = repeat
        for name in group:
            t0 = clock()
            first[name] = fns[name]()
            if clock() - t0 > slow_s:
                n = min(n, SLOW_REPEAT)
        times: dict = {name: [] for name in group}
        for _ in range(n):
            for name in group:
                times[name].append(timed(name))
        for name in group:
            medians[name], counts[name] = statistics.median(times[name]), n
    return medians, first, counts


def _torch_view(torch, a: np.ndarray):
    if a.dtype == DTYPES["bfloat16"]:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _torch_numpy(torch, t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(DTYPES["bfloat16"])
    return t.numpy()


class _Buffers:
    """Device buffers (64-byte multiples, so the floor's 4-byte words fit) and NumPy views of
    them; freed by close()."""

    def __init__(self):
        self.ptrs: list = []

    def array(self, shape, dt: np.dtype) -> tuple[int, np.ndarray]:
        from . import runtime

        nbytes = math.prod(shape) * dt.itemsize
        size = max(64, -(-nbytes // 64) * 64)
        ptr, ret = acl.rt.malloc(size, 0)
        if ret:
            raise BenchError(f"aclrtMalloc({size}) returned {ret}: {acl.get_recent_err_msg()}")
        self.ptrs.append(ptr)
        raw = np.frombuffer(runtime.host_buffer(ptr, size), dtype=np.uint8)
        return ptr, raw[:nbytes].view(dt).reshape(shape)

    def close(self) -> None:
        for p in self.ptrs:
            acl.rt.free(p)
        self.ptrs = []


class Runner:
    """Runs cases on one device and stream; restores the thread counts on close()."""

    def __init__(self, threads: list, caches: list, repeat: int, use_numpy: bool = True,
                 torch=None, evict_bytes: Optional[int] = None):
        self.threads, self.caches, self.repeat = list(threads), list(caches), repeat
        self.use_numpy, self.torch = use_numpy, torch
        if evict_bytes is None:
            llc = llc_bytes()
            evict_bytes = 2 * llc if llc else FALLBACK_EVICT_BYTES
        self.evict = Evictor(evict_bytes) if "cold" in self.caches else None
        ret = acl.rt.set_device(0)
        if ret:
            raise BenchError(f"aclrtSetDevice(0) returned {ret}: {acl.get_recent_err_msg()}")
        self.stream, ret = acl.rt.create_stream()
        if ret:
            acl.rt.reset_device(0)
            raise BenchError(f"aclrtCreateStream returned {ret}: {acl.get_recent_err_msg()}")
        get_threads, self._set_threads = _thread_control()
        self._saved_threads = get_threads()
        self._saved_torch = torch.get_num_threads() if torch is not None else None
        # (operator, dtype, shape, dim) -> {"ms": {cache: NumPy's median}, "err": its errors}
        self._numpy_memo: dict = {}

    def rows(self, case: Case) -> int:
        """How many rows (thread counts x cache states) ``case`` gives."""
        return len(self.threads) * len(self._caches(case))

    def _caches(self, case: Case) -> list:
        return [c for c in self.caches if c == "hot" or not case.hot_only]

    def close(self) -> None:
        self._set_threads(self._saved_threads)
        if self.torch is not None:
            self.torch.set_num_threads(self._saved_torch)
        acl.rt.destroy_stream(self.stream)
        acl.rt.reset_device(0)

    def run(self, case: Case, tick: Callable[[str], None] = lambda s: None) -> list:
        """The rows of one case (``tick`` is called after each with its description)."""
        from . import ops, runtime
        from .ops import REGISTRY

        op = REGISTRY[case.op]
        dt = ROW_DTYPES[case.dtype]
        shape = tuple(case.shape)
        dim = case.dim
        what = f"{case.op} ({case.title})"
        acl_dt = dtypes.from_numpy(dt)
        if acl_dt is None:
            raise BenchError(f"{case.dtype} has no aclDataType")
        names = [*op.inputs, *[o for o in op.outputs if o not in op.inputs]]
        n_in = len(op.inputs)
        bufs = _Buffers()
        executor = None
        tensors: dict = {}
        try:
            ptrs, views = [], []
            for name in names:
                ptr, view = bufs.array(shape, dt)
                ptrs.append(ptr)
                views.append(view)
                tensors[name] = aclnn.aclCreateTensor(list(shape), acl_dt, None, 0,
                                                      aclnn.ACL_FORMAT_ND, list(shape), ptr)
            inputs = views[:n_in]
            for view, a in zip(inputs, make_inputs(case.op, shape, case.dtype, dim=dim)):
                view[...] = a
            out = views[n_in]
            args = [tensors[p] if p in tensors else dim for p in op.params]
            # phase 1 with the row's accumulation mode in the environment (restored after it)
            want = "relaxed" if case.mode == "relaxed" else "strict"
            with accumulation_env(want):
                if case.mode == "int8":  # the functional layer's phase 1: a SoftmaxEx step
                    ws, executor, ret = ops.get_workspace_size(
                        op, tuple(args), extended=True,
                        attrs={"src_scale": INT8_SRC_SCALE, "dst_scale": INT8_DST_SCALE})
                else:
                    ws, executor, ret = getattr(aclnn, case.op + "GetWorkspaceSize")(*args)
            if ret:
                raise BenchError(f"{case.op}GetWorkspaceSize ({case.title}) returned {ret}: "
                                 f"{acl.get_recent_err_msg()}")
            accumulation = executor.accumulation  # None: an operator without modes
            if (accumulation or "strict") != want:
                raise BenchError(f"{what}: phase 1 recorded accumulation {accumulation!r}, not "
                                 f"{want!r} (an acl.init JSON file setting "
                                 f"{ACCUMULATION_ENV}?)")
            aclnn.aclSetAclOpExecutorRepeatable(executor)
            ws_ptr = bufs.array((ws,), np.dtype(np.uint8))[0] if ws else 0
            launch, stream = getattr(aclnn, case.op), self.stream

            def emulate():
                r = launch(ws_ptr, ws, executor, stream)
                r = r or acl.rt.synchronize_stream(stream)
                if r:
                    raise BenchError(f"{what} returned {r}: {acl.get_recent_err_msg()}")

            # the floor's contenders, timed in turn with the emulator: the output's bytes copied
            # (forward) or a 2-in/1-out add over them (backward; 4-byte words: the buffers are
            # 64-byte multiples), and our own hard-sigmoid kernel on the same buffers
            backward = n_in == 2
            if backward:
                memop_kind = "add"
                memop = runtime.floor_call("add", (ptrs[0], ptrs[1], ptrs[n_in]),
                                           -(-out.nbytes // 4) * 4)
            else:
                memop_kind = "copy"
                memop = runtime.floor_call("copy", (ptrs[1], ptrs[0]), out.nbytes)
            hs_kind = "hardsigmoid_backward" if backward else "hardsigmoid"
            hs = runtime.floor_hardsigmoid_call(backward, int(acl_dt), tuple(ptrs[:n_in + 1]),
                                                math.prod(shape))

            probe = runtime.probe_call(PROBE_CHUNKS)
            numpy_fn = self._numpy_fn(case, inputs) if self.use_numpy else None
            torch_fn, torch_out = self._torch_fn(case, inputs)
            golden = golden_of(case.op, inputs, dim, case.mode)
            base: dict[str, Any] = dict(
                op=case.op, dtype=case.dtype, shape=list(shape), dim=dim, repeat=self.repeat,
                nbytes=sum(v.nbytes for v in views), err_scaled=(
                    scaled_error(case.op) and case.mode != "int8"),
                mode=case.mode, accumulation=accumulation)
            # NumPy runs on one thread and its result does not depend on the mode: timed once
            # per operator, dtype, layout and cache state, shared by the thread counts and by
            # the strict and relaxed rows
            shared = self._numpy_memo.setdefault((case.op, case.dtype, shape, dim),
                                                 {"ms": {}, "err": None})
            numpy_ms: dict = shared["ms"]  # cache -> ms
            torch_err: Optional[tuple] = None
            records, first_out = [], None
            for threads in self.threads:
                self._set_threads(threads)
                if self.torch is not None:
                    self.torch.set_num_threads(threads)
                emulate()  # correctness, outside the timed region
                got = np.array(out)
                identical = None
                if first_out is None:
                    first_out = got
                else:
                    identical = bool(np.array_equal(got.view(np.uint8),
                                                    first_out.view(np.uint8)))
                e_err = row_errors(got, golden, case)
                del got
                for cache in self._caches(case):
                    fns = {"emulator": emulate, "floor": memop}
                    if hs is not None:
                        fns["floor_hardsigmoid"] = hs
                    fns["probe"] = probe
                    if torch_fn is not None:
                        fns["torch"] = torch_fn
                    if numpy_fn is not None and cache not in numpy_ms:
                        fns["numpy"] = numpy_fn
                    ms, results, counts = _rounds(fns, self.repeat,
                                                  self.evict if cache == "cold" else None,
                                                  paired=("emulator", "floor",
                                                          "floor_hardsigmoid"),
                                                  unevicted=("probe",))
                    if hs is not None and results.get("floor_hardsigmoid"):
                        raise BenchError(f"{what}: the hard-sigmoid floor returned "
                                         f"{results['floor_hardsigmoid']}")
                    if "numpy" in ms:
                        numpy_ms[cache] = ms["numpy"]
                        if shared["err"] is None:
                            shared["err"] = row_errors(results["numpy"], golden, case)
                    if torch_fn is not None and torch_err is None:
                        torch_err = row_errors(_torch_numpy(self.torch, torch_out), golden,
                                               case)
                    del results
                    np_e = shared["err"] if numpy_fn is not None and shared["err"] else \
                        NO_ERRORS
                    t_e = torch_err or NO_ERRORS
                    hs_ms = ms.get("floor_hardsigmoid")
                    floor_kind, floor_ms = pick_floor(memop_kind, ms["floor"], hs_kind, hs_ms)
                    records.append(Record(
                        **base, threads=threads, cache=cache, emulator_ms=ms["emulator"],
                        floor_kind=floor_kind, floor_ms=floor_ms,
                        floor_memop_ms=ms["floor"], floor_hardsigmoid_ms=hs_ms,
                        numpy_ms=numpy_ms.get(cache) if numpy_fn is not None else None,
                        torch_ms=ms.get("torch"),
                        emulator_err_abs=e_err[0], emulator_err_eps=e_err[1],
                        emulator_err_rel=e_err[2], numpy_err_abs=np_e[0],
                        numpy_err_eps=np_e[1], numpy_err_rel=np_e[2], torch_err_abs=t_e[0],
                        torch_err_eps=t_e[1], torch_err_rel=t_e[2],
                        bit_identical=identical, probe_ms=ms["probe"]))
                    tick(f"{short_name(case.op)} {case.dtype} {case.mode} {case.label} "
                         f"{threads}t {cache}")
            return records
        finally:
            if executor is not None:
                aclnn.aclDestroyAclOpExecutor(executor)
            for t in tensors.values():
                aclnn.aclDestroyTensor(t)
            bufs.close()

    def _numpy_fn(self, case: Case, inputs: list) -> Callable:
        formula, dim, dt = BASELINES[case.op], case.dim, ROW_DTYPES[case.dtype]
        if case.mode == "int8":
            return lambda: int8_numpy(case.op, inputs, dim)
        if dt.itemsize >= 4:
            return lambda: formula(inputs, dim)
        # float16 / bfloat16 as a NumPy user computes them: in float32, cast back (timed)
        return lambda: formula([a.astype(np.float32) for a in inputs], dim).astype(dt)

    def _torch_fn(self, case: Case, inputs: list):
        torch = self.torch
        call = TORCH_CALLS.get(case.op)
        if torch is None or call is None or case.mode == "int8":
            return None, None
        t_in = [_torch_view(torch, a) for a in inputs]
        t_out = torch.empty(tuple(case.shape), dtype=t_in[0].dtype)
        dim = case.dim

        def fn():
            call(torch, t_in, dim, t_out)

        return fn, t_out


def mark_cpu(records: list) -> list:
    """Sets each record's ``cpu``: its probe time over the median probe time of the records at
    its thread count (None without probe times). A row at ``cpu`` >= CPU_SLOW ran while the
    machine computed that much slower than during the rest of the run. Returns records."""
    by_threads: dict = {}
    for r in records:
        if r.probe_ms:
            by_threads.setdefault(r.threads, []).append(r.probe_ms)
    for r in records:
        usual = statistics.median(by_threads[r.threads]) if r.probe_ms else None
        r.cpu = r.probe_ms / usual if usual else None
    return records


# -------------------------------------------------------------------------------- output ----


def _ms(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v:.4f}" if v < 0.1 else f"{v:.3f}" if v < 1 else f"{v:.2f}"


def _x(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}"


def _cpu(r: Record) -> str:
    if r.cpu is None:
        return "-"
    return f"{r.cpu:.2f}" + ("!" if r.cpu >= CPU_SLOW else "")


def _eps(r: Record) -> str:
    if r.emulator_err_abs is None:
        return "NaN"
    v = r.emulator_err_eps
    if v is None:
        return "-"
    if r.mode == "int8":  # integer steps
        return f"{v:.0f}"
    return f"{v:.2g}" if v < 0.1 else f"{v:.2f}" if v < 100 else f"{v:.3g}"


def header_lines(machine: dict) -> list:
    llc = machine.get("llc_bytes")
    llc_text = f"{llc >> 20} MiB" if llc else "unknown"
    store = machine.get("store_llc_bytes")  # older JSON files have none
    if store and store != llc:
        llc_text += f"; stores as for {store / (1 << 20):g} MiB: ACLNN_EMU_LLC"
    # not "aclnn-py[torch]": pip may take the multi-GB CUDA build for it (docs/performance.md)
    torch = machine.get("torch") or "not run"
    # a run without cold rows evicts nothing (older JSON files have no "caches": both)
    if "cold" in machine.get("caches", CACHES):
        caches = f"cold = {machine['evict_bytes'] >> 20} MiB written before each timed call"
    else:
        caches = "hot caches only (nothing evicted)"
    return [
        f"aclnn-py {machine['aclnn_py']} bench on {machine['cpu']} ({machine['cores']} cores "
        f"available, last-level cache {llc_text}), SoC profile {machine['soc']}",
        f"kernel ISA level: {machine['isa']}; thread counts: "
        f"{', '.join(str(t) for t in machine['threads'])}; {caches}",
        f"NumPy {machine['numpy'] or 'not run'}; PyTorch "
        f"{torch}; "
        f"Python {machine['python']}",
    ]


COLUMNS = (("operator", 20, "<"), ("dtype", 9, "<"), ("mode", 8, "<"), ("shape/dim", 15, "<"),
           ("thr", 4, ">"),
           ("cache", 6, ">"), ("emu ms", 9, ">"), ("floor ms", 9, ">"), ("x floor", 8, ">"),
           ("numpy ms", 9, ">"), ("x numpy", 8, ">"), ("torch ms", 9, ">"), ("x torch", 8, ">"),
           ("GB/s", 7, ">"), ("err eps", 8, ">"), ("cpu", 6, ">"))


def format_table(records: list, machine: Optional[dict] = None) -> str:
    def line(cells):
        return "".join(f"{c:<{w}}" if a == "<" else f" {c:>{w - 1}}"
                       for c, (_, w, a) in zip(cells, COLUMNS)).rstrip()

    head = line([c[0] for c in COLUMNS])
    lines = header_lines(machine) if machine else []
    lines += [head, "-" * len(head)]
    for r in records:
        lines.append(line([
            short_name(r.op), r.dtype, r.mode, r.label, str(r.threads), r.cache,
            _ms(r.emulator_ms), _ms(r.floor_ms), _x(r.ratios["floor"]), _ms(r.numpy_ms),
            _x(r.ratios["numpy"]), _ms(r.torch_ms), _x(r.ratios["torch"]), f"{r.gbps:.1f}",
            _eps(r), _cpu(r)]))
    lines += textwrap.wrap(
        "mode: strict, relaxed (ACLNN_EMU_ACCUMULATION=relaxed at phase 1) or int8 (int8 in and "
        f"out, src_scale {INT8_SRC_SCALE:g}, dst_scale {INT8_DST_SCALE:g}); "
        "ms: medians of single calls (emulator: phase 2 + synchronize); x floor / x numpy / "
        "x torch: emulator time over theirs (< 1: the emulator is faster); floor: the faster of "
        "the output's bytes copied (forward) or a 2-in/1-out add (backward) and our own "
        "hardsigmoid (forward) or hardsigmoid_backward (backward) of the same shape and dtype, "
        "on the kernel pool; GB/s: the "
        "emulator's bytes read + written per second; err eps: the emulator's max error against "
        "a float64 golden, |out - golden| / (eps * (|golden| + s)), s = 1 (forward) or "
        "max|golden| (backward); at most 0.5 when correctly rounded; int8 rows: integer steps "
        "from the golden rounded half to even and saturated; cpu: a fixed compute "
        "workload's time during the row over its median in the run at that thread count, "
        f"'!' from {CPU_SLOW}: the machine computed slower while the row ran, so its times say "
        "little about the kernels (docs/performance.md)",
        width=len(head))
    return "\n".join(lines)


def to_json(records: list, machine: dict, failed: Sequence = ()) -> dict:
    """``{"machine", "records", "failed"}``; ``failed``: (case, message) of the cases that could
    not run, as ``{"op", "dtype", "mode", "shape", "dim", "error"}``."""
    return {"machine": machine, "records": [r.as_dict() for r in records],
            "failed": [{"op": c.op, "dtype": c.dtype, "mode": c.mode, "shape": list(c.shape),
                        "dim": c.dim, "error": msg} for c, msg in failed]}


def plot(records: list, path: str, machine: Optional[dict] = None) -> None:
    """One block per operator (two operators side by side): a row per dtype, mode and layout,
    and in each row a horizontal bar per thread count and cache state. The left panel of a
    block is the emulator's time over the floor's, with lines at 1 and at the 1.3x and 1.6x
    targets; the right one (when PyTorch ran) the emulator's time over PyTorch's, with a line
    at 1 (as fast as PyTorch). Both log scale, lower is better; a ratio beyond the axis is a
    bar to the edge with its value written there. A row whose ``cpu`` reached CPU_SLOW (the
    machine computed slower meanwhile) is hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.gridspec import GridSpec
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, NullLocator

    series = sorted({(r.threads, r.cache) for r in records},
                    key=lambda s: (s[0], CACHES.index(s[1])))
    cmap = plt.get_cmap("tab10")
    colors = {}
    for i, t in enumerate(sorted({s[0] for s in series})):
        base = np.array(matplotlib.colors.to_rgb(cmap(i)))
        colors[(t, "cold")] = tuple(base * 0.8)
        colors[(t, "hot")] = tuple(base + (1 - base) * 0.55)
    ops = list(dict.fromkeys(r.op for r in records))
    rows: dict = {}  # op -> [(dtype, mode, layout)], by dtype, then mode, then run order
    for op in ops:
        keys = list(dict.fromkeys((r.dtype, r.mode, r.label) for r in records if r.op == op))
        rows[op] = sorted(keys, key=lambda k: (list(ROW_DTYPES).index(k[0]),
                                               MODES.index(k[1]), keys.index(k)))
    by_key = {(r.op, r.dtype, r.mode, r.label, r.threads, r.cache): r for r in records}
    with_torch = any(r.ratios["torch"] for r in records)
    kinds = [("floor", "emulator time / floor")]
    if with_torch:
        kinds.append(("torch", "emulator time / PyTorch"))

    def limits(kind: str, top: float) -> tuple:
        values = [r.ratios[kind] for r in records if r.ratios[kind]]
        lo = min([0.8, *[v / 1.15 for v in values]])
        hi = max([2.0, *[v * 1.15 for v in values]])
        return max(lo, hi / 1e4), min(hi, top)

    xlims = {"floor": limits("floor", 100.0), "torch": limits("torch", 20.0)}
    pairs = [ops[i:i + 2] for i in range(0, len(ops), 2)]
    heights = [max(len(rows[op]) for op in pair) for pair in pairs]
    row_in = max(0.28, 0.1 + 0.075 * len(series))  # inches per row of bars
    label_in = 1.9  # the row labels' width
    panel_in = {"floor": 3.0, "torch": 2.4}
    block = [panel_in[kind] for kind, _ in kinds]  # an operator's panels, side by side
    # the grid's columns: the first operator's panels, a spacer for the second one's row
    # labels, the second operator's panels
    widths = block if len(ops) == 1 else [*block, label_in, *block]
    width_in = label_in + sum(widths) + 0.35 + 0.3 * len(widths)
    slow_any = any(r.cpu is not None and r.cpu >= CPU_SLOW for r in records)
    legend_items = len(series) + 3 + slow_any + with_torch
    ncol_legend = max(1, int(width_in // 3.0))
    legend_rows = -(-legend_items // ncol_legend)
    lines = ["aclnn-py bench, per operator: emulator time / floor"
             + (" and / PyTorch" if with_torch else "") + " (log scale, lower is better)"]
    if machine:
        lines.append(f"{machine['cpu']}, {machine['cores']} cores, ISA {machine['isa']}, "
                     f"medians of {machine.get('repeat', '?')}")
    head_in = 0.15 + 0.24 * len(lines) + 0.24 * legend_rows + 0.2
    body_in = sum(h * row_in + 0.75 for h in heights)
    height_in = head_in + body_in
    fig = plt.figure(figsize=(width_in, height_in))
    grid = GridSpec(len(pairs), len(widths), figure=fig, width_ratios=widths,
                    height_ratios=[h * row_in + 0.75 for h in heights],
                    left=label_in / width_in, right=1 - 0.35 / width_in,
                    top=1 - (head_in + 0.25) / height_in, bottom=0.45 / height_in,
                    hspace=0.75 / (sum(heights) * row_in / len(pairs) + 0.75),
                    wspace=0.3 / (sum(widths) / len(widths)))
    for pi, pair in enumerate(pairs):
        for oi, op in enumerate(pair):
            keys = rows[op]
            first_ax = None
            for ki, (kind, xlabel) in enumerate(kinds):
                ax = fig.add_subplot(grid[pi, oi * (len(kinds) + 1) + ki], sharey=first_ax)
                first_ax = first_ax or ax
                lo, hi = xlims[kind]
                for yi, (dt, mode, label) in enumerate(keys):
                    # the row's bars share its height (a row without every series, such as
                    # the hot-only small case, gets wider bars rather than gaps)
                    present = [(s, by_key[(op, dt, mode, label, *s)]) for s in series
                               if (op, dt, mode, label, *s) in by_key]
                    bar_h = 0.84 / len(present)
                    for si, (s, r) in enumerate(present):
                        v = r.ratios[kind]
                        if not v:
                            continue
                        y = yi - 0.42 + bar_h * (si + 0.5)
                        slow = r.cpu is not None and r.cpu >= CPU_SLOW
                        ax.barh(y, min(v, hi) - lo, bar_h * 0.9, left=lo, color=colors[s],
                                edgecolor="black" if slow else "none", linewidth=0.3,
                                hatch="////" if slow else None, zorder=2)
                        if v > hi:
                            ax.annotate(f"{v:.0f}", (hi, y), xytext=(-2, 0),
                                        textcoords="offset points", ha="right", va="center",
                                        fontsize=5.5, zorder=3)
                marks = ((1.0, "-"), (1.3, "--"), (1.6, ":")) if kind == "floor" else (
                    (1.0, "-"),)
                for x, style in marks:
                    ax.axvline(x, color="0.55" if x == 1.0 else "0.15", linestyle=style,
                               linewidth=0.8, zorder=3)
                for yi in range(1, len(keys)):  # a thin rule where the dtype or mode changes
                    if keys[yi][:2] != keys[yi - 1][:2]:
                        ax.axhline(yi - 0.5, color="0.75", linewidth=0.6, zorder=1)
                ax.set_xscale("log")
                ax.set_xlim(lo, hi)
                ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)
                         if lo <= t <= hi]
                ax.xaxis.set_major_locator(FixedLocator(ticks))
                ax.xaxis.set_minor_locator(NullLocator())
                ax.set_xticklabels([f"{t:g}" for t in ticks], fontsize=7)
                ax.set_xlabel(xlabel, fontsize=8)
                ax.set_ylim(len(keys) - 0.5, -0.5)
                ax.set_yticks(range(len(keys)))
                if ki == 0:
                    ax.set_yticklabels([f"{dt} {label}" if mode == "strict" or mode == dt
                                        else f"{dt} {mode} {label}"
                                        for dt, mode, label in keys], fontsize=7)
                    ax.set_title(short_name(op), fontsize=10, loc="left",
                                 x=-label_in / panel_in[kind] * 0.95, fontweight="bold")
                else:
                    ax.tick_params(axis="y", labelleft=False)
                ax.tick_params(axis="y", length=0)
                ax.spines[["top", "right"]].set_visible(False)
    handles: list = [Patch(color=colors[s], label=f"{s[0]} thread{'s' if s[0] > 1 else ''}, "
                                                   f"{s[1]}") for s in series]
    handles += [Line2D([], [], color="0.55", label="1x (floor; PyTorch)"),
                Line2D([], [], color="0.15", linestyle="--", label="1.3x floor"),
                Line2D([], [], color="0.15", linestyle=":", label="1.6x floor")]
    if slow_any:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////",
                             label=f"the machine computed slower (cpu >= {CPU_SLOW})"))
    for i, line in enumerate(lines):
        fig.text(0.01, 1 - (0.12 + 0.24 * i) / height_in, line, ha="left", va="top",
                 fontsize=11 if i == 0 else 9)
    fig.legend(handles=handles, loc="upper left", ncol=ncol_legend, fontsize=8, frameon=False,
               bbox_to_anchor=(0.005, 1 - (0.15 + 0.24 * len(lines)) / height_in))
    fig.savefig(path, dpi=100)
    plt.close(fig)
