"""The kernel thread pool (csrc/runtime/pool.c; docs/runtime.md "Kernel threads").

- bit-identical kernel outputs for every thread count: every kernel x dtype x layout, called
  through cffi on NumPy buffers at 1, 2, 3, 4 and 7 threads, byte for byte;
- aclk_parallel_for itself (a test hook of the C core): every item visited once, in chunks that
  depend only on n and grain, for any thread count;
- several streams (and several callers) at once: correct results, and never more threads
  computing chunks than the thread count (the pool's compute slots; counted by a test hook);
- the thread count changed from another thread while kernels run;
- a forked child recreating the pool;
- ACLNN_EMU_NUM_THREADS applied, JSON overrides, bad values refused;
- the benchmark's memory floor (aclk_floor_copy / aclk_floor_add).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zlib

import numpy as np
import pytest

from aclnn_py import acl, config
from aclnn_py import runtime as rt
from aclnn_py.runtime.core import ffi, lib

F32, F16, F64, BF16, I32 = 0, 1, 11, 27, 3
DTYPES = {"float32": F32, "float16": F16, "bfloat16": BF16, "float64": F64}
STORAGE = {F32: np.float32, F16: np.float16, BF16: np.uint16, F64: np.float64, I32: np.int32}
THREAD_COUNTS = (1, 2, 3, 4, 7)
# (outer, axis, inner) of the softmax family: rows, a middle axis, axis 0 with a big inner,
# long rows, tiny slabs
LAYOUTS = {
    "rows": (512, 1000, 1),
    "middle": (24, 100, 160),
    "big_slabs": (3, 1000, 100),  # whole slabs above 65536 elements: exps kept in a 1 MB buffer
    "axis0_big_inner": (1, 40, 12000),
    "narrow_blocks": (2, 300, 1300),  # 16-bit: column blocks of 208 columns, the last of 52
    "wide_blocks": (2, 16, 9000),  # column blocks of 4096 columns (a short axis), the last of 808
    "long_rows": (3, 70000, 1),
    "tiny_slabs": (30000, 3, 5),
    "axis_1": (40000, 1, 3),
}
ELTWISE_SIZES = {"small": 1000, "medium": 300_001, "large": 1_000_003}


def _p(a: np.ndarray):
    return ffi.cast("void *", a.ctypes.data)


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _as_dtype(values: np.ndarray, dt: int) -> np.ndarray:
    """float64 values in the storage of dtype dt (bfloat16: its bits in uint16, rounded to
    nearest even)."""
    if dt == BF16:
        u = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    with np.errstate(over="ignore"):  # float16 overflows to inf, as intended
        return values.astype(STORAGE[dt])


def _poisoned(shape, dt) -> np.ndarray:
    out = np.empty(shape, dtype=STORAGE[dt])
    out.view(np.uint8)[...] = 0xA5  # an element no thread wrote stays 0xA5..
    return out


@pytest.fixture
def threads_restored():
    """Restore the kernel thread count at the end."""
    before = rt.num_threads()
    yield
    rt.set_num_threads(before)


def _same_bytes(results: dict, what: str) -> None:
    base = results[1]
    for n, out in results.items():
        if out.tobytes() != base.tobytes():
            diff = np.flatnonzero(out.view(np.uint8).ravel() != base.view(np.uint8).ravel())
            pytest.fail(f"{what}: {n} threads differ from 1 thread at {diff.size} bytes "
                        f"(first at byte {diff[0]})")


def _per_thread_count(run) -> dict:
    """{n: run()} for every thread count (run returns a fresh output array)."""
    results = {}
    for n in THREAD_COUNTS:
        rt.set_num_threads(n)
        results[n] = run()
    return results


# ------------------------------------------------------------------ bit-identical kernels ----


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("log", [0, 1], ids=["softmax", "log_softmax"])
def test_softmax_family_bit_identical_for_every_thread_count(threads_restored, dtype, layout,
                                                              log):
    dt = DTYPES[dtype]
    outer, axis, inner = LAYOUTS[layout]
    shape = (outer, axis, inner)
    rng = _rng(dtype, layout, log)
    x = _as_dtype(rng.standard_normal(shape) * 3, dt)
    grad = _as_dtype(rng.standard_normal(shape), dt)
    y_vals = rng.uniform(0.0, 1.0 / max(axis, 1), shape)
    y = _as_dtype(np.log(y_vals + 1e-12) if log else y_vals, dt)

    def fwd():
        out = _poisoned(shape, dt)
        assert lib.aclk_softmax_fwd(dt, _p(x), _p(out), outer, axis, inner, log) == 0
        return out

    def bwd():
        out = _poisoned(shape, dt)
        assert lib.aclk_softmax_bwd(dt, _p(grad), _p(y), _p(out), outer, axis, inner, log) == 0
        return out

    name = "log_softmax" if log else "softmax"
    _same_bytes(_per_thread_count(fwd), f"{name} {dtype} {layout}")
    _same_bytes(_per_thread_count(bwd), f"{name}_backward {dtype} {layout}")


@pytest.mark.parametrize("size", list(ELTWISE_SIZES))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_hardsigmoid_bit_identical_for_every_thread_count(threads_restored, dtype, size):
    dt = DTYPES[dtype]
    n = ELTWISE_SIZES[size]
    rng = _rng(dtype, size)
    vals = rng.uniform(-4, 4, n)
    vals[:8] = [-3, 3, 0, -0.0, np.inf, -np.inf, np.nan, 2.999]
    x = _as_dtype(vals, dt)
    grad = _as_dtype(rng.standard_normal(n), dt)
    alpha, beta = 1 / 6, 0.5

    def fwd():
        out = _poisoned(n, dt)
        assert lib.aclk_hardsigmoid_fwd(dt, _p(x), _p(out), n, alpha, beta) == 0
        return out

    def bwd():
        out = _poisoned(n, dt)
        assert lib.aclk_hardsigmoid_bwd(dt, _p(grad), _p(x), _p(out), n, alpha, beta) == 0
        return out

    _same_bytes(_per_thread_count(fwd), f"hardsigmoid {dtype} n={n}")
    _same_bytes(_per_thread_count(bwd), f"hardsigmoid_backward {dtype} n={n}")


@pytest.mark.parametrize("dst", list(DTYPES) + ["int32"])
@pytest.mark.parametrize("src", list(DTYPES) + ["int32"])
def test_cast_bit_identical_for_every_thread_count(threads_restored, src, dst):
    sdt = I32 if src == "int32" else DTYPES[src]
    ddt = I32 if dst == "int32" else DTYPES[dst]
    n = 700_001
    rng = _rng(src, dst)
    vals = rng.standard_normal(n) * 1000
    vals[:6] = [np.inf, -np.inf, np.nan, 65504, 1e30, -0.0] if sdt != I32 else 0
    x = vals.astype(np.int32) if sdt == I32 else _as_dtype(vals, sdt)

    codes = set()

    def run():
        out = _poisoned(n, ddt)
        codes.add(lib.aclk_cast(sdt, _p(x), ddt, _p(out), n))
        return out

    results = _per_thread_count(run)
    assert len(codes) == 1, f"cast {src} -> {dst}: return codes {codes} differ by thread count"
    if codes == {0}:
        _same_bytes(results, f"cast {src} -> {dst}")


@pytest.mark.parametrize("case", ["contiguous", "transpose", "broadcast", "strided"])
def test_strided_copy_bit_identical_for_every_thread_count(threads_restored, case):
    rng = _rng("copy", case)
    src = rng.standard_normal(800 * 700).astype(np.float32)
    shape, sst = {
        "contiguous": ((800, 700), (700, 1)),
        "transpose": ((700, 800), (1, 700)),
        "broadcast": ((300, 700), (0, 1)),
        "strided": ((400, 350), (1400, 2)),
    }[case]
    dst_strides = (shape[1], 1)
    c_shape = ffi.new("int64_t[]", list(shape))
    c_sst = ffi.new("int64_t[]", list(sst))
    c_dst = ffi.new("int64_t[]", list(dst_strides))

    def run():
        out = _poisoned(shape, F32)
        assert lib.aclk_strided_copy(4, 2, c_shape, _p(src), c_sst, _p(out), c_dst) == 0
        return out

    results = _per_thread_count(run)
    want = np.lib.stride_tricks.as_strided(src, shape, [4 * s for s in sst])
    np.testing.assert_array_equal(results[1], want)
    _same_bytes(results, f"strided copy {case}")


def test_large_outputs_bit_identical(threads_restored):
    """Outputs above half the last-level cache (where kernels may switch to non-temporal
    stores): still the same bytes for every thread count."""
    outer, axis = 4608, 1024  # 18 MiB of float32
    rng = _rng("large")
    x = rng.standard_normal((outer, axis)).astype(np.float32)
    for log in (0, 1):
        def fwd(log=log):
            out = _poisoned(x.shape, F32)
            assert lib.aclk_softmax_fwd(F32, _p(x), _p(out), outer, axis, 1, log) == 0
            return out
        _same_bytes(_per_thread_count(fwd), f"large softmax log={log}")

    def hs():
        out = _poisoned(x.shape, F32)
        assert lib.aclk_hardsigmoid_fwd(F32, _p(x), _p(out), x.size, 1 / 6, 0.5) == 0
        return out
    _same_bytes(_per_thread_count(hs), "large hardsigmoid")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_streamed_outputs_equal_normal_stores(threads_restored, dtype):
    """A softmax-family output above half the last-level cache (non-temporal stores, whole
    lines only) against the same outer slabs computed one at a time (each below that size:
    normal stores): the same bytes. Column blocks of short runs at a stride that is not a whole
    number of 64-byte lines, the output at an odd element offset, and the poison around it
    untouched; 2 threads, so that neighbouring runs are stored by different threads."""
    dt = DTYPES[dtype]
    esz = 4 if dt == F32 else 2
    half_llc = int(lib.aclk_llc_bytes()) // 2
    axis = 250
    inner = max(601, half_llc // (2 * esz * axis)) | 1  # a slab below half the cache
    slab = axis * inner
    outer = half_llc // (slab * esz) + 2  # the whole output above it
    rng = _rng("streamed", dtype)
    x = _as_dtype(rng.standard_normal(outer * slab) * 3, dt)
    g = _as_dtype(rng.standard_normal(outer * slab), dt)
    rt.set_num_threads(2)
    for log in (0, 1):
        def whole(fn, *ins, log=log):
            buf = _poisoned((outer * slab + 16,), dt)
            assert fn(dt, *[_p(a) for a in ins], _p(buf[3:]), outer, axis, inner, log) == 0
            assert not np.any(buf.view(np.uint8)[:3 * esz] != 0xA5)
            assert not np.any(buf.view(np.uint8)[(outer * slab + 3) * esz:] != 0xA5)
            return buf[3:3 + outer * slab]

        def slabs(fn, *ins, log=log):
            out = np.empty(outer * slab, STORAGE[dt])
            for o in range(outer):
                part = slice(o * slab, (o + 1) * slab)
                args = [_p(np.ascontiguousarray(a[part])) for a in ins]
                piece = np.empty(slab, STORAGE[dt])
                assert fn(dt, *args, _p(piece), 1, axis, inner, log) == 0
                out[part] = piece
            return out

        y = whole(lib.aclk_softmax_fwd, x)
        want = slabs(lib.aclk_softmax_fwd, x)
        assert y.tobytes() == want.tobytes(), f"softmax log={log} {dtype}: streamed != normal"
        y = np.ascontiguousarray(y)
        got = whole(lib.aclk_softmax_bwd, g, y)
        want = slabs(lib.aclk_softmax_bwd, g, y)
        assert got.tobytes() == want.tobytes(), f"backward log={log} {dtype}: streamed != normal"


# --------------------------------------------------------------------- aclk_parallel_for ----


@pytest.mark.parametrize("nt", THREAD_COUNTS)
def test_parallel_for_visits_every_item_once(threads_restored, nt):
    rt.set_num_threads(nt)
    for n, grain in [(0, 1), (1, 1), (1, 5), (5, 5), (6, 5), (7, 1), (100, 7), (100, 0),
                     (100, -3), (1000, 1), (1000, 999), (1000, 1001), (65_537, 64),
                     (1_000_000, 4096), (200_003, 1)]:
        assert lib.emu_test_parallel_sum(n, grain) == 0, (nt, n, grain)


def test_pool_created_lazily_and_sized(threads_restored):
    rt.set_num_threads(3)
    lib.emu_test_parallel_sum(100, 1)
    assert lib.emu_test_pool_workers() >= 2
    lib.emu_test_pool_track(1)
    try:
        for _ in range(10):  # a lone caller gets helpers (tolerates a busy machine)
            lib.emu_test_parallel_busy(12, 500)
            if lib.emu_test_pool_peak() >= 2:
                break
        assert 2 <= lib.emu_test_pool_peak() <= 3
    finally:
        lib.emu_test_pool_track(0)


def _concurrent_callers(callers: int, run) -> None:
    errors = []

    def wrap(k):
        try:
            run(k)
        except BaseException as exc:
            errors.append(exc)

    ts = [threading.Thread(target=wrap, args=(k,)) for k in range(callers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in ts), "a caller hung (deadlock in the pool?)"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("nt", [1, 2, 3])
@pytest.mark.parametrize("callers", [2, 5])
def test_concurrent_callers_never_exceed_the_thread_count(threads_restored, nt, callers):
    """More callers (streams) than threads: all finish, and at most nt threads compute chunks
    at any time (cffi releases the GIL during the calls)."""
    rt.set_num_threads(nt)
    lib.emu_test_pool_track(1)
    try:
        def run(k):
            for i in range(4):
                lib.emu_test_parallel_busy(6 + k, 300)
                assert lib.emu_test_parallel_sum(50_000 + 13 * k + i, 97) == 0
        _concurrent_callers(callers, run)
        peak = lib.emu_test_pool_peak()
    finally:
        lib.emu_test_pool_track(0)
    assert 1 <= peak <= nt, f"{peak} threads computed chunks at once with {nt} kernel threads"


_STREAMS_SCRIPT = r"""
import sys, threading
import numpy as np
from aclnn_py import acl, aclnn
from aclnn_py import functional as F
from aclnn_py.runtime.core import lib
import faulthandler
faulthandler.dump_traceback_later(100, exit=True)

NT = int(sys.argv[1])
assert lib.aclk_num_threads() == NT, lib.aclk_num_threads()
rng = np.random.default_rng(1)
xs = [rng.standard_normal((256, 4096)).astype(np.float32),
      rng.standard_normal((16, 512, 64)).astype(np.float16),
      rng.standard_normal((64, 2048)).astype(np.float64)]
grads = [rng.standard_normal(x.shape).astype(x.dtype) for x in xs]

def work(x, g):
    y = F.softmax(x, 1)
    return [y, F.log_softmax(x, 1), F.softmax_backward(g, y, 1), F.hardsigmoid(x),
            F.hardsigmoid_backward(g, x)]

expected = [work(x, g) for x, g in zip(xs, grads)]  # one caller at a time
lib.emu_test_pool_track(1)

# several Python threads, each with its own private stream (the functional layer)
errors = []
def run(k):
    try:
        for it in range(3):
            i = (k + it) % len(xs)
            for got, want in zip(work(xs[i], grads[i]), expected[i]):
                assert got.tobytes() == want.tobytes(), (k, it, i)
    except BaseException as exc:
        errors.append(exc)
threads = [threading.Thread(target=run, args=(k,)) for k in range(5)]
for t in threads:
    t.start()

# and explicit streams: one softmax per stream, all in flight before any synchronize
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
x = xs[0]
streams, outs = [], []
for s_i in range(4):
    s, ret = acl.rt.create_stream()
    assert ret == 0
    dx, ret = acl.rt.malloc(x.nbytes, 0)
    assert ret == 0
    dy, ret = acl.rt.malloc(x.nbytes, 0)
    assert ret == 0
    assert acl.rt.memcpy(dx, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes, 1) == 0
    shape = list(x.shape)
    tx = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, dx)
    ty = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, dy)
    for _ in range(3):
        ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(tx, 1, ty)
        assert ret == 0 and ws == 0
        assert aclnn.aclnnSoftmax(None, 0, ex, s) == 0
    streams.append(s)
    outs.append((dx, dy))
for s, (dx, dy) in zip(streams, outs):
    assert acl.rt.synchronize_stream(s) == 0
    back = np.empty_like(x)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(back), x.nbytes, dy, x.nbytes, 2) == 0
    assert back.tobytes() == expected[0][0].tobytes()
    assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.free(dx) == 0 and acl.rt.free(dy) == 0
for t in threads:
    t.join()
if errors:
    raise errors[0]
peak = lib.emu_test_pool_peak()
assert peak <= NT, f"{peak} threads computed kernel chunks at once, ACLNN_EMU_NUM_THREADS={NT}"
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
print("PASSED", peak)
"""


def _run_script(script: str, *args: str, env: dict | None = None, timeout: float = 150):
    full_env = dict(os.environ)
    full_env.update(env or {})
    # cwd outside the source tree: `python -c` puts the cwd first on sys.path, and the source
    # tree holds no compiled core (the tests run against the installed package)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], env=full_env,
                          capture_output=True, text=True, timeout=timeout,
                          cwd=tempfile.gettempdir())
    assert proc.returncode == 0 and "PASSED" in proc.stdout, (
        f"exit {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc.stdout


@pytest.mark.parametrize("nt", [1, 2, 3])
def test_streams_at_once_correct_and_within_the_thread_count(nt):
    """Several streams (private functional streams in 5 Python threads, and 4 explicit streams)
    run kernels at the same time under ACLNN_EMU_NUM_THREADS=nt: the same bytes as one at a time,
    and never more than nt threads computing kernel chunks."""
    _run_script(_STREAMS_SCRIPT, str(nt), env={"ACLNN_EMU_NUM_THREADS": str(nt)})


def test_set_num_threads_while_kernels_run(threads_restored):
    """Another thread changes the thread count all the time while kernels (direct calls and
    functional ones, on several streams) run: every result is right and nothing hangs."""
    from aclnn_py import functional as F

    rng = _rng("resize")
    x = rng.standard_normal((300, 2000)).astype(np.float32)
    rt.set_num_threads(1)
    want_c = np.empty_like(x)
    assert lib.aclk_softmax_fwd(F32, _p(x), _p(want_c), 300, 2000, 1, 0) == 0
    want_f = F.log_softmax(x, 0)
    stop = threading.Event()
    counts = [1, 2, 3, 4, 7, 2, 1, 5]

    def resizer():
        i = 0
        while not stop.is_set():
            rt.set_num_threads(counts[i % len(counts)])
            i += 1
            time.sleep(0.0002)

    def run(k):
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            if k % 3 == 0:
                out = _poisoned(x.shape, F32)
                assert lib.aclk_softmax_fwd(F32, _p(x), _p(out), 300, 2000, 1, 0) == 0
                assert out.tobytes() == want_c.tobytes()
            elif k % 3 == 1:
                assert F.log_softmax(x, 0).tobytes() == want_f.tobytes()
            else:
                assert lib.emu_test_parallel_sum(100_000 + k, 333) == 0
                lib.emu_test_parallel_busy(5, 100)

    r = threading.Thread(target=resizer)
    r.start()
    try:
        _concurrent_callers(4, run)
    finally:
        stop.set()
        r.join()


# ------------------------------------------------------------------------------- fork -------

_FORK_SCRIPT = r"""
import os, sys, threading, time
import numpy as np
from aclnn_py import runtime as rt
from aclnn_py import functional as F
from aclnn_py.runtime.core import ffi, lib
import faulthandler
faulthandler.dump_traceback_later(100, exit=True)

def p(a):
    return ffi.cast("void *", a.ctypes.data)

NT = int(sys.argv[1])
rt.set_num_threads(NT)
x = np.random.default_rng(3).standard_normal((512, 3000)).astype(np.float32)
want = np.empty_like(x)
assert lib.aclk_softmax_fwd(0, p(x), p(want), 512, 3000, 1, 0) == 0
want_f = F.softmax(x, 0)
assert lib.emu_test_parallel_sum(100_000, 100) == 0  # the pool exists
workers = lib.emu_test_pool_workers()

for round_ in range(3):
    # a kernel in flight on another thread at the fork: in the child, its thread, its slot and
    # the pool's workers do not exist
    busy = threading.Thread(target=lib.emu_test_parallel_busy, args=(40, 1000))
    busy.start()
    time.sleep(0.005)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            assert lib.emu_test_pool_workers() == 0, "the parent's workers in the child"
            assert lib.aclk_num_threads() == NT
            assert lib.emu_test_parallel_sum(200_003, 77) == 0
            out = np.empty_like(x)
            assert lib.aclk_softmax_fwd(0, p(x), p(out), 512, 3000, 1, 0) == 0
            assert out.tobytes() == want.tobytes()
            assert F.softmax(x, 0).tobytes() == want_f.tobytes()
            lib.emu_test_pool_track(1)
            lib.emu_test_parallel_busy(8, 200)
            assert lib.emu_test_pool_peak() <= NT
            if NT > 1:
                assert lib.emu_test_pool_workers() == NT - 1, lib.emu_test_pool_workers()
            rt.set_num_threads(1)
            assert lib.emu_test_parallel_sum(10_000, 7) == 0
        except BaseException as exc:
            print("child failed:", repr(exc), flush=True)
            code = 3
        os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        wpid, status = os.waitpid(pid, os.WNOHANG)
        if wpid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise SystemExit("the child hung")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0, status
    busy.join()
# the parent is unaffected
assert lib.emu_test_pool_workers() == workers
assert lib.emu_test_parallel_sum(100_000, 100) == 0
print("PASSED")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("nt", [1, 2, 3])
def test_fork_child_recreates_the_pool(nt):
    _run_script(_FORK_SCRIPT, str(nt))


# --------------------------------------------------------------------- configuration -------


def test_env_var_applied_at_import():
    script = "from aclnn_py.runtime.core import lib; print('PASSED', lib.aclk_num_threads())"
    out = _run_script(script, env={"ACLNN_EMU_NUM_THREADS": "3"})
    assert out.split() == ["PASSED", "3"]
    env = {k: v for k, v in os.environ.items() if k != "ACLNN_EMU_NUM_THREADS"}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tempfile.gettempdir())
    assert proc.stdout.split() == ["PASSED", str(config.default_num_threads())], proc.stderr
    assert config.default_num_threads() == min(len(os.sched_getaffinity(0)), config.MAX_THREADS)


def test_bad_env_value_at_import_falls_back_and_init_reports_it():
    script = """
        from aclnn_py import acl, config
        from aclnn_py.runtime.core import lib
        assert lib.aclk_num_threads() == config.default_num_threads()
        assert acl.init() == 100000
        msg = acl.get_recent_err_msg()
        assert "ACLNN_EMU_NUM_THREADS" in msg, msg
        print("PASSED")
    """
    _run_script(script, env={"ACLNN_EMU_NUM_THREADS": "zero"})


@pytest.fixture
def clean_threads_env(monkeypatch, acl_uninitialized, threads_restored):
    monkeypatch.delenv("ACLNN_EMU_NUM_THREADS", raising=False)
    return monkeypatch


@pytest.mark.parametrize("value, words", [
    ("0", "must be at least 1"), ("-2", "must be at least 1"), ("abc", "is not an integer"),
    ("1.5", "is not an integer"), ("1025", "at most 1024"), ("100000", "at most 1024"),
])
def test_bad_env_values_are_refused(clean_threads_env, value, words):
    rt.set_num_threads(2)
    clean_threads_env.setenv("ACLNN_EMU_NUM_THREADS", value)
    with pytest.raises(config.ConfigError, match="ACLNN_EMU_NUM_THREADS"):
        config.num_threads()
    assert acl.init() == 100000
    msg = acl.get_recent_err_msg()
    assert "ACLNN_EMU_NUM_THREADS" in msg and words in msg, msg
    assert rt.num_threads() == 2  # a refused value changes nothing


def test_init_and_finalize_apply_the_configured_count(clean_threads_env, tmp_path):
    clean_threads_env.setenv("ACLNN_EMU_NUM_THREADS", "2")
    rt.set_num_threads(5)
    assert acl.init() == 0
    assert rt.num_threads() == 2
    rt.set_num_threads(4)  # until the next init / finalize
    assert rt.num_threads() == 4
    assert acl.finalize() == 0
    assert rt.num_threads() == 2
    path = tmp_path / "acl.json"
    path.write_text(json.dumps({"ACLNN_EMU_NUM_THREADS": 3}))
    assert acl.init(str(path)) == 0
    assert rt.num_threads() == 3  # the file's value overrides the environment
    assert acl.finalize() == 0
    assert rt.num_threads() == 2
    path.write_text(json.dumps({"ACLNN_EMU_NUM_THREADS": 0}))
    assert acl.init(str(path)) == 100008
    assert "ACLNN_EMU_NUM_THREADS" in acl.get_recent_err_msg()
    assert rt.num_threads() == 2


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1, ValueError), (1025, ValueError),
                                      (2.0, TypeError), (True, TypeError), ("2", TypeError),
                                      (None, TypeError)])
def test_set_num_threads_validates(threads_restored, bad, exc):
    before = rt.num_threads()
    with pytest.raises(exc, match=r"set_num_threads: n"):
        rt.set_num_threads(bad)
    assert rt.num_threads() == before


def test_set_num_threads_accepts_integers(threads_restored):
    rt.set_num_threads(np.int64(3))
    assert rt.num_threads() == 3
    rt.set_num_threads(config.MAX_THREADS)
    assert rt.num_threads() == config.MAX_THREADS
    assert lib.EMU_MAX_THREADS == config.MAX_THREADS
    rt.set_num_threads(1)
    assert rt.num_threads() == 1


# -------------------------------------------------------------------------- the floor -------


@pytest.mark.parametrize("nt", [1, 2, 3])
@pytest.mark.parametrize("nbytes, offset", [
    (n, off) for n in (0, 4, 100, 4096 + 12, (1 << 20) + 36, 24 << 20) for off in (0, 4, 6)
    if n <= (1 << 20) or off != 6])
def test_floor_copy_and_add(threads_restored, nt, nbytes, offset):
    """Any size and alignment (24 MiB is above half the last-level cache of most machines, where
    the floor uses non-temporal stores)."""
    rt.set_num_threads(nt)
    rng = _rng("floor", nbytes)
    words = nbytes // 4
    a_buf = np.zeros(nbytes + 16, np.uint8)
    b_buf = np.zeros(nbytes + 16, np.uint8)
    o_buf = np.full(nbytes + 16, 0xA5, np.uint8)
    a = a_buf[offset:offset + nbytes]
    b = b_buf[offset:offset + nbytes]
    o = o_buf[offset:offset + nbytes]
    a[...] = rng.integers(0, 256, nbytes, dtype=np.uint8)
    b[...] = rng.integers(0, 256, nbytes, dtype=np.uint8)
    lib.aclk_floor_copy(_p(o), _p(a), nbytes)
    assert o.tobytes() == a.tobytes()
    assert (o_buf[offset + nbytes:] == 0xA5).all() and (o_buf[:offset] == 0xA5).all()
    lib.aclk_floor_add(_p(a), _p(b), _p(o), nbytes)
    want = (np.frombuffer(a.tobytes(), np.uint32, words).astype(np.uint64)
            + np.frombuffer(b.tobytes(), np.uint32, words)).astype(np.uint32)
    assert np.frombuffer(o.tobytes(), np.uint32, words).tobytes() == want.tobytes()


@pytest.mark.parametrize("nt", [1, 2, 3])
def test_compute_probe_from_several_threads(threads_restored, nt):
    """The benchmark's compute probe called from several threads at once, beside a kernel and
    a thread-count change: every call returns, and at most the thread count computes chunks."""
    rt.set_num_threads(nt)
    lib.emu_test_pool_track(1)
    try:
        def run(k):
            for i in range(3):
                if k == 0 and i == 1:
                    rt.set_num_threads(max(1, nt - 1))
                lib.aclk_probe(8 + k)
                lib.aclk_probe(0)  # nothing to do
                assert lib.emu_test_parallel_sum(20_000 + k, 97) == 0
        _concurrent_callers(4, run)
        peak = lib.emu_test_pool_peak()
    finally:
        lib.emu_test_pool_track(0)
    assert 1 <= peak <= nt


# ------------------------------------------------------------------- thread stacks -------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_STACK sets glibc's "
                    "default thread stack on Linux")
def test_pool_threads_do_not_take_a_small_default_stack():
    """Under a 100 KB stack limit (glibc's default for new threads then; musl's is 128 KB) the
    pool's workers still get 8 MB: the kernels keep ~130 KB of arrays on the stack. (The stream
    workers are created by the same helper.)"""
    import resource

    code = textwrap.dedent("""
        from aclnn_py import runtime as rt
        from aclnn_py.runtime.core import lib
        rt.set_num_threads(2)
        print(lib.emu_test_pool_min_stack(8))
    """)

    def small_stack():
        hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
        soft = 100 << 10
        resource.setrlimit(resource.RLIMIT_STACK,
                           (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))

    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       preexec_fn=small_stack, timeout=120, cwd=tempfile.gettempdir())
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    got = int(r.stdout)
    if got == -1:
        pytest.skip("the C library cannot report a thread's stack size")
    assert got >= 8 << 20, got
