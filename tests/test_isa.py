"""ISA levels (csrc/kernels/isa.c): the level is picked when the library loads, ACLNN_EMU_ISA asks
for a lower one, and every level gives the same bytes.

- aclk_isa_name() names the level in use: the requested one when the CPU has it, else the best
  the CPU has; unset or an unknown value: the best.
- Every kernel (softmax family, hard sigmoid, cast, on random data and special values: NaN with
  payloads, signaling NaN, +-inf, subnormals, +-0, the extremes; every float16 / bfloat16 bit
  pattern; lengths and offsets that take the vector loops' heads and tails; outputs large enough
  for non-temporal stores) gives byte-identical outputs at every available level and thread
  count, NaNs included: the softmax family writes every NaN as the one positive quiet NaN with
  no payload. Each level runs in a subprocess of its own, since the level is fixed at load.
- A forced level runs that level's code in every kernel built once per level (vecmath.h's
  ACLK_LEVELS), and no function of the core is picked by the CPU (ifunc) beyond its reach.
- tests/c/cvt_exhaustive.c: the level's float16 / bfloat16 conversions against the scalar ones
  of dtype.h over every 16-bit and every float32 input.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cbuild import load_build_module

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
TESTS_C = Path(__file__).resolve().parent / "c"
LEVELS = ("generic", "avx2", "avx512")
X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def _env(level: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ACLNN_EMU_ISA", None)
    if level is not None:
        env["ACLNN_EMU_ISA"] = level
    return env


def _python(code: str, level: str | None, *args: str, timeout: float = 300) -> str:
    # cwd outside the source tree: `python -c` puts the cwd first on sys.path, and the source
    # tree holds no compiled core (the tests run against the installed package)
    res = subprocess.run([sys.executable, "-c", code, *args], env=_env(level),
                         capture_output=True, text=True, timeout=timeout,
                         cwd=tempfile.gettempdir())
    assert res.returncode == 0, f"ACLNN_EMU_ISA={level}:\n{res.stdout}\n{res.stderr}"
    return res.stdout


NAME_CODE = ("from aclnn_py._emu import ffi, lib\n"
             "print(ffi.string(lib.aclk_isa_name()).decode())")


def _name(level: str | None) -> str:
    return _python(NAME_CODE, level).strip()


@pytest.fixture(scope="module")
def levels() -> list[str]:
    """The levels this machine runs: generic up to the best one, in order."""
    best = _name(None)
    assert best in LEVELS
    return list(LEVELS[: LEVELS.index(best) + 1])


def test_isa_name_reflects_the_override_and_falls_back(levels):
    best = levels[-1]
    if not X86:
        assert best == "generic"
    for i, want in enumerate(LEVELS):
        got = _name(want)
        # a level the CPU has is used as asked; one it lacks gives the best it has
        assert got == (want if want in levels else best), f"ACLNN_EMU_ISA={want}: {got}"
        assert LEVELS.index(got) <= i or want not in levels
    for junk in ("", "AVX2 ", "sse9", "native"):
        assert _name(junk) == best, f"ACLNN_EMU_ISA={junk!r}"


# The kernels on fixed inputs, run in a subprocess at one level and thread count: prints a JSON
# object {"raw": sha256 digests of every output and the level's name, "nan": the digests with
# every NaN made one quiet NaN}.
KERNELS_CODE = r'''
import hashlib, json, sys
import ml_dtypes
import numpy as np
from aclnn_py._emu import ffi, lib

lib.aclk_set_num_threads(int(sys.argv[1]))
BIG = int(sys.argv[2])
F32, F16, F64, I32 = (np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32))
BF16 = np.dtype(ml_dtypes.bfloat16)
CODE = {F32: 0, F16: 1, I32: 3, F64: 11, BF16: 27}
out = {"isa": ffi.string(lib.aclk_isa_name()).decode()}
P = ffi.from_buffer


# out[name]: the output's sha256; nan[name]: the same with every NaN of a float output hashed as
# one quiet NaN (the bits the softmax family writes for every NaN; see PINNED_NAN)
nan = {}


def digest(name, a):
    a = np.ascontiguousarray(a)
    out[name] = hashlib.sha256(a.view(np.uint8).tobytes()).hexdigest()
    if a.dtype.kind == "f" or a.dtype == BF16:
        a = a.copy()
        bits = a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])
        quiet = {np.dtype(np.float16): 0x7E00, BF16: 0x7FC0, np.dtype(np.float32): 0x7FC00000,
                 np.dtype(np.float64): 0x7FF8000000000000}[a.dtype]
        bits[np.isnan(a.astype(np.float64))] = quiet
    nan[name] = hashlib.sha256(a.view(np.uint8).tobytes()).hexdigest()


F32_SPECIAL_BITS = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000,              # +-0, +-inf
    0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF, 0xFFFFFFFF,  # quiet NaNs, payloads
    0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FA00000,              # signaling NaNs
    0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000,              # max, min normal
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,              # subnormals
    0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000,              # float16 max / overflow
    0x33800000, 0x33000000, 0x33000001, 0x387FC000, 0x38800000,  # float16 subnormal edges
    0x40400000, 0xC0400000, 0xC03FFFFF, 0x40200000, 0xC0200000,  # +-3, +-2.5
    0x3F800000, 0xBF800000, 0x3F000000, 0x4F000000, 0xCF000000,  # +-1, 0.5, +-2^31
    0x3F807FFF, 0x3F808000, 0x3F818000, 0x7F7F8000, 0x7F7F7FFF,  # bfloat16 ties, overflow
]


def f32_inputs(n, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).copy()
    x[: n // 2] = rng.standard_normal(n // 2).astype(np.float32) * 4
    sp = np.array(F32_SPECIAL_BITS, dtype=np.uint32).view(np.float32)
    for k in range(0, n, 37):
        x[k] = sp[(k // 37) % len(sp)]
    return x


def inputs(dt, n, seed):
    if dt in (F16, BF16):
        rng = np.random.default_rng(seed)
        pat = np.tile(np.arange(65536, dtype=np.uint16), n // 65536 + 1)[:n]
        if n > 65536:
            pat[65536:] = rng.integers(0, 65536, n - 65536, dtype=np.uint16)
        return pat.view(dt)
    x = f32_inputs(n, seed)
    if dt == F32:
        return x
    if dt == F64:
        return x.astype(np.float64) * np.where(np.arange(n) % 5 == 0, 1e300, 1.0)
    with np.errstate(all="ignore"):
        r = np.nan_to_num(x.astype(np.float64), nan=7, posinf=2**31 - 1, neginf=-2**31)
    return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)


def window(a, off, n):
    """n elements of a fresh buffer starting off elements in (misaligned outputs)"""
    return np.zeros(n + off, a.dtype)[off:]


# -- hard sigmoid: fwd / bwd, every dtype, several lengths and alignments, and a big one
HS_PARAMS = [(1 / 6, 0.5), (0.2, 0.5), (-0.3, 0.1), (2.0, -1.0)]
for dt in (F32, F16, BF16, I32, F64):
    sizes = [65536 + 77, 1, 15, 16, 17, 33, 200003] + ([BIG // dt.itemsize + 5] if BIG else [])
    for n in sizes:
        x = inputs(dt, n, 1)
        g = inputs(dt, n, 2)[::-1].copy()
        for off in (0, 1, 3) if n < 1000 or n == BIG // dt.itemsize + 5 else (0, 5):
            xs = window(x, off, n)
            xs[:] = x
            for alpha, beta in HS_PARAMS if n != BIG // dt.itemsize + 5 else HS_PARAMS[:1]:
                y = window(x, (off * 7) % 16, n)
                assert lib.aclk_hardsigmoid_fwd(CODE[dt], P(xs), P(y), n, alpha, beta) == 0
                digest(f"hs_fwd {dt} n={n} off={off} {alpha},{beta}", y)
                if dt != I32:
                    y = window(x, (off * 3 + 1) % 16, n)
                    assert lib.aclk_hardsigmoid_bwd(CODE[dt], P(g), P(xs), P(y), n, alpha,
                                                    beta) == 0
                    digest(f"hs_bwd {dt} n={n} off={off} {alpha},{beta}", y)
        if n == 200003:  # in place
            xi = x.copy()
            assert lib.aclk_hardsigmoid_fwd(CODE[dt], P(xi), P(xi), n, 1 / 6, 0.5) == 0
            digest(f"hs_fwd_inplace {dt}", xi)

# -- cast: every pair, special values and every 16-bit pattern, misaligned, and big ones
DTS = (F32, F16, BF16, I32, F64)
for src in DTS:
    for n in [65536 + 13, 7, 16, 31, 4099]:
        x = inputs(src, n, 3)
        for dst in DTS:
            for off in (0, 1, 2):
                xs = window(x, off, n)
                xs[:] = x
                y = window(np.zeros(1, dst), (off * 5) % 8, n)
                assert lib.aclk_cast(CODE[src], P(xs), CODE[dst], P(y), n) == 0
                digest(f"cast {src}->{dst} n={n} off={off}", y)
if BIG:
    for src, dst in [(F32, F16), (F32, BF16), (F16, F32), (BF16, F32), (F16, BF16),
                     (BF16, F16), (F32, F32), (F16, F16), (F64, F32)]:
        n = BIG // min(src.itemsize, dst.itemsize) + 3
        x = inputs(src, n, 4)
        y = window(np.zeros(1, dst), 3, n)
        assert lib.aclk_cast(CODE[src], P(x), CODE[dst], P(y), n) == 0
        digest(f"cast big {src}->{dst}", y)

# -- softmax family (loads and stores through the conversion tables)
for dt in (F32, F16, BF16):
    for shape in [(2, 513, 1), (3, 40, 13), (2, 5, 700), (64, 33, 1)]:
        n = int(np.prod(shape))
        x = inputs(dt, n, 5).reshape(shape)
        if dt in (F16, BF16):  # finite values mostly, and some specials
            x = (np.random.default_rng(6).standard_normal(shape) * 3).astype(dt)
            x.reshape(-1)[::29] = inputs(dt, n, 7).reshape(-1)[::29]
        g = (np.random.default_rng(8).standard_normal(shape)).astype(dt)
        o, a, i = shape
        for lg in (0, 1):
            y = np.empty_like(x)
            assert lib.aclk_softmax_fwd(CODE[dt], P(x), P(y), o, a, i, lg) == 0
            digest(f"softmax_fwd {dt} {shape} log={lg}", y)
            r = np.empty_like(x)
            assert lib.aclk_softmax_bwd(CODE[dt], P(g), P(y), P(r), o, a, i, lg) == 0
            digest(f"softmax_bwd {dt} {shape} log={lg}", r)

# 16-bit softmax_backward rows and column blocks with every bit pattern, shuffled, in both grad
# and y (NaNs with payloads, signaling NaNs, infinities and subnormals on either side of each
# multiply); "finite": the non-finite patterns replaced by 0.5, so that reductions are not NaN
# and the register paths (not their NaN fallback) see the subnormals, zeros and extremes
for dt in (F16, BF16):
    pats = inputs(dt, 65536, 9)
    finite = pats.copy()
    finite[~np.isfinite(pats.astype(np.float32))] = 0.5
    for shape in [(16, 4096, 1), (655, 100, 1), (4, 300, 64), (2, 16, 4100)]:
        n = int(np.prod(shape))
        for kind, src in (("all", pats), ("finite", finite)):
            rng = np.random.default_rng(9)
            g = np.ascontiguousarray(np.resize(src[rng.permutation(65536)], n)).reshape(shape)
            y = np.ascontiguousarray(np.resize(src[rng.permutation(65536)], n)).reshape(shape)
            o, a, i = shape
            for lg in (0, 1):
                r = np.empty_like(g)
                assert lib.aclk_softmax_bwd(CODE[dt], P(g), P(y), P(r), o, a, i, lg) == 0
                digest(f"softmax_bwd patterns {kind} {dt} {shape} log={lg}", r)

# 16-bit backward rows with an output above half the last-level cache (streamed) at a misaligned
# start; y finite, with exp arguments outside [-86, 0] here and there
if BIG:
    for dt in (F16, BF16):
        rows = BIG // (2 * 4096) + 3
        rng = np.random.default_rng(10)
        g = rng.standard_normal(rows * 4096).astype(dt)
        y = (rng.standard_normal(rows * 4096) * 4 - 6).astype(np.float32)
        y[::101] = [-90.0, 3.0, -86.5, 0.0]*(len(y[::101]) // 4) + [-1.0]*(len(y[::101]) % 4)
        y = y.astype(dt)
        for lg in (0, 1):
            r = window(g, 3, rows * 4096)
            assert lib.aclk_softmax_bwd(CODE[dt], P(g), P(y), P(r), rows, 4096, 1, lg) == 0
            digest(f"softmax_bwd big rows {dt} log={lg}", r)

print(json.dumps({"raw": out, "nan": nan}))
'''

# bytes of the big outputs: above half of a 32 MiB last-level cache (non-temporal stores there)
BIG = 18 << 20


def _digests(level: str | None, threads: int) -> dict[str, dict[str, str]]:
    lines = _python(KERNELS_CODE, level, str(threads), str(BIG), timeout=600).splitlines()
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def level_digests(levels) -> dict:
    runs = {(lv, 1): _digests(lv, 1) for lv in levels}
    runs[(levels[-1], 3)] = _digests(levels[-1], 3)
    for (lv, _), d in runs.items():
        assert d["raw"].pop("isa") == lv
    return runs


# The softmax family's outputs: every NaN they hold is the one positive quiet NaN with no payload
# (float32 0x7FC00000, float16 0x7E00, bfloat16 0x7FC0), whichever NaNs met in a max, sum or
# multiply, whatever the operand order the compiler picked at each vector width, and whatever the
# hardware's default NaN (x86 0xFFC00000, Arm 0x7FC00000): softmax.c sets each output value that
# is a NaN to that one on its way to the store. Hard sigmoid and the casts pass a NaN input's
# payload on (the same code at every level).
SOFTMAX_FAMILY = ("softmax_fwd ", "softmax_bwd ")


def _compare(want, got, what):
    assert got.keys() == want.keys(), what
    diff = [k for k in want if want[k] != got[k]]
    assert not diff, f"{what}: {len(diff)} outputs differ: {diff[:8]}"


def test_every_level_gives_the_same_bytes(level_digests):
    """Every level and thread count gives the bytes of the first level (generic, 1 thread), NaNs
    included, and the softmax family's NaNs are all the quiet NaN with no payload (its raw
    digests are its NaN-canonical ones)."""
    (base_key, base), *others = level_digests.items()
    assert len(base["raw"]) > 1000
    for (lv, threads), d in level_digests.items():
        family = [k for k in d["raw"] if k.startswith(SOFTMAX_FAMILY)]
        assert len(family) > 40
        _compare({k: d["nan"][k] for k in family}, {k: d["raw"][k] for k in family},
                 f"ACLNN_EMU_ISA={lv} with {threads} threads: softmax-family NaNs not canonical")
    for (lv, threads), d in others:
        _compare(base["raw"], d["raw"], f"ACLNN_EMU_ISA={lv} with {threads} threads (against "
                 f"{base_key[0]} with 1 thread)")


# The strict kernels' output bytes, pinned: the digests of KERNELS_CODE's outputs as the strict
# kernels gave them when the relaxed accumulation mode came (docs/onednn.md), before any of its
# code. Their accuracy is tested elsewhere against float64 references; this pin is what keeps
# "strict keeps today's bits" true at every level and thread count, whatever later kernel work
# (relaxed paths, shared helpers) changes. A deliberate change of strict bits must say so and
# re-pin (python -c "import test_isa ..." as in the commit that made the file).
# Re-pinned once, when the softmax family's NaNs became one quiet NaN: its outputs' digests were
# replaced by their PINNED_NAN digests (the same outputs with every NaN made that NaN, hashed by
# the old build), not by the new build's, which then gave exactly those: nothing but NaN bits
# changed. Every level and thread count keeps every bit of these pins on x86-64.
PINNED = Path(__file__).resolve().parent / "data" / "strict_digests.json"
# The same digests with every NaN made one quiet NaN, made on x86-64 from the build whose raw
# digests were PINNED's (KERNELS_CODE's "nan" digests). Elsewhere than x86 the outputs that pass
# a NaN input's payload on (hard sigmoid, the casts) are compared through these: IEEE 754 leaves
# a NaN's sign and payload to the hardware. The softmax family's raw bytes are compared there
# too (their NaNs are canonical).
PINNED_NAN = Path(__file__).resolve().parent / "data" / "strict_digests_nan.json"


def test_strict_bits_are_pinned_at_every_level(level_digests):
    pinned = json.loads(PINNED.read_text())
    pinned_nan = json.loads(PINNED_NAN.read_text())
    assert len(pinned) > 1000 and pinned.keys() == pinned_nan.keys()
    for (lv, threads), d in level_digests.items():
        what = f"{lv} level with {threads} threads: strict bytes against the pins"
        if X86:
            _compare(pinned, d["raw"], what)
        else:
            _compare(pinned_nan, d["nan"], what)
            family = [k for k in pinned if k.startswith(SOFTMAX_FAMILY)]
            _compare({k: pinned[k] for k in family}, {k: d["raw"][k] for k in family}, what)


# SoftmaxEx's float path (softmax_ex.c, oneDNN's attributes: scales, post-ops) on inputs with NaNs
# (payloads, both signs), infinities and random bit patterns, rows and column blocks, float32 and
# float16 out: the same bytes at every level and thread count, every NaN the one quiet NaN
# (before, the avx2 level's NaNs differed). Prints {"raw": digests, "nan": NaN-canonical ones}.
EX_CODE = r'''
import hashlib, json, sys
import numpy as np
from aclnn_py._emu import ffi, lib

lib.aclk_set_num_threads(int(sys.argv[1]))
rng = np.random.default_rng(11)
out, nan = {}, {}
SPECIAL = np.array([0x7FC00001, 0xFFC00000, 0x7F800000, 0xFF800000, 0x7FA00000],
                   np.uint32).view(np.float32)
for shape, dim in (((64, 513), 1), ((3, 40, 13), 1), ((2, 5, 700), 1), ((700, 9), 0)):
    p = ffi.new("emu_softmax_ex_args *")
    p.outer, p.axis = int(np.prod(shape[:dim])), shape[dim]
    p.inner = int(np.prod(shape[dim + 1:]))
    p.ndim, p.dim = len(shape), dim
    for i, s in enumerate(shape):
        p.shape[i] = s
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    xf = x.reshape(-1)
    sel = rng.random(x.size) < 0.002
    xf[sel] = rng.integers(0, 2**32, int(sel.sum()), dtype=np.uint64).astype(np.uint32).view(
        np.float32)
    xf[::211] = SPECIAL[np.arange(len(xf[::211])) % len(SPECIAL)]
    for ddt, dt in ((0, np.float32), (1, np.float16)):
        for po in (0, 1):
            for lg in (0, 1):
                p.n_post, p.post[0].alg, p.log = po, 1, lg  # relu
                p.src_scale, p.dst_scale = (1.0, 1.0) if po == 0 else (2.0, 0.5)
                y = np.zeros(shape, dt)
                assert lib.aclk_softmax_ex(p, 0, ffi.from_buffer(x), ffi.NULL, ddt,
                                           ffi.from_buffer(y)) == 0
                key = f"{shape} dim={dim} {dt.__name__} post={po} log={lg}"
                out[key] = hashlib.sha256(y.tobytes()).hexdigest()
                bits = y.copy().view(np.uint32 if dt == np.float32 else np.uint16)
                bits[np.isnan(y)] = 0x7FC00000 if dt == np.float32 else 0x7E00
                nan[key] = hashlib.sha256(bits.tobytes()).hexdigest()
print(json.dumps({"raw": out, "nan": nan}))
'''


def test_softmax_ex_float_same_bytes_and_one_nan(levels):
    runs = {(lv, 1): json.loads(_python(EX_CODE, lv, "1").splitlines()[-1]) for lv in levels}
    runs[(levels[-1], 3)] = json.loads(_python(EX_CODE, levels[-1], "3").splitlines()[-1])
    (base_key, base), *others = runs.items()
    assert len(base["raw"]) == 32
    for (lv, threads), d in runs.items():
        _compare(d["nan"], d["raw"], f"SoftmaxEx, {lv} with {threads} threads: NaNs not canonical")
    for (lv, threads), d in others:
        _compare(base["raw"], d["raw"], f"SoftmaxEx, {lv} with {threads} threads against "
                 f"{base_key[0]}")


# --------------------------------------------- a forced level runs that level's code ----
# The kernels built once per level (vecmath.h's ACLK_LEVELS: the 32-bit compute of the softmax
# family and SoftmaxEx's float32 compute) report the level whose code ran
# (emu_test_isa_ran()): ACLNN_EMU_ISA must reach them, on every path (rows, long rows, column
# blocks, batched small slabs; forward and backward; float32 and float16), from the pool's
# worker threads too.
REACH_CODE = r'''
import json, sys
import numpy as np
from aclnn_py._emu import ffi, lib

P = ffi.from_buffer
lib.aclk_set_num_threads(2)
out = {"before": lib.emu_test_isa_ran()}
rng = np.random.default_rng(1)
for dt, code in ((np.float32, 0), (np.float16, 1)):
    # (outer, axis, inner): rows, rows longer than 8192, column blocks, small slabs batched
    for shape in ((64, 100, 1), (4, 9000, 1), (4, 40, 13), (64, 4, 3)):
        x = rng.standard_normal(shape).astype(dt)
        y, r = np.empty_like(x), np.empty_like(x)
        for lg in (0, 1):
            assert lib.aclk_softmax_fwd(code, P(x), P(y), *shape, lg) == 0
            out[f"fwd {dt.__name__} {shape} log={lg}"] = lib.emu_test_isa_ran()
            assert lib.aclk_softmax_bwd(code, P(x), P(y), P(r), *shape, lg) == 0
            out[f"bwd {dt.__name__} {shape} log={lg}"] = lib.emu_test_isa_ran()
p = ffi.new("emu_softmax_ex_args *")
p.outer, p.axis, p.inner, p.ndim, p.dim = 64, 100, 1, 2, 1
p.shape[0], p.shape[1] = 64, 100
p.src_scale = p.dst_scale = 1.0
p.n_post, p.post[0].alg = 1, 1  # relu
x = rng.standard_normal((64, 100)).astype(np.float32)
y = np.empty_like(x)
assert lib.aclk_softmax_ex(p, 0, P(x), ffi.NULL, 0, P(y)) == 0
out["softmax_ex float32 relu"] = lib.emu_test_isa_ran()
out["after"] = lib.emu_test_isa_ran()
print(json.dumps(out))
'''


@pytest.mark.parametrize("level", LEVELS)
def test_a_forced_level_runs_its_own_code(level, levels):
    if level not in levels:
        pytest.skip(f"this CPU has no {level}")
    ran = json.loads(_python(REACH_CODE, level).splitlines()[-1])
    # -1: none ran (before the first call; each read forgets the last)
    assert ran.pop("before") == ran.pop("after") == -1, ran
    assert len(ran) == 33
    wrong = {k: LEVELS[v] if v >= 0 else "none" for k, v in ran.items()
             if v != LEVELS.index(level)}
    assert not wrong, f"ACLNN_EMU_ISA={level}: these kernels ran other code: {wrong}"


def test_no_function_of_the_core_is_picked_by_the_cpu():
    """No ifunc in the core (gcc's target_clones make one per function, resolved by the CPU when
    the library loads, beyond ACLNN_EMU_ISA's reach): no IRELATIVE relocation, no IFUNC
    symbol."""
    if not X86 or platform.system() != "Linux":
        pytest.skip("x86-64 Linux (ELF) only")
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf (binutils)")
    core = _python("import aclnn_py._emu as m; print(m.__file__)", None).strip()
    relocs = subprocess.run([readelf, "-rW", core], capture_output=True, text=True,
                            timeout=60).stdout
    syms = subprocess.run([readelf, "-sW", core], capture_output=True, text=True,
                          timeout=60).stdout
    assert "emu_test_isa_ran" in syms and "R_X86_64_" in relocs  # readelf read the core
    assert "IRELATIV" not in relocs, [ln for ln in relocs.splitlines() if "IRELATIV" in ln]
    ifuncs = [ln for ln in syms.splitlines() if " IFUNC " in ln]
    assert not ifuncs, ifuncs


# ------------------------------------------------------------- exhaustive conversions ----

@pytest.fixture(scope="module")
def cvt_exe(tmp_path_factory) -> Path:
    build = load_build_module()
    cc = build.c_compiler()
    if shutil.which(cc[0]) is None:
        pytest.skip(f"no C compiler: {cc[0]!r} (the compiler that builds aclnn_py's core, $CC "
                    "or the interpreter's CC) is not on PATH; this check compiles a C program")
    exe = tmp_path_factory.mktemp("cvt") / "cvt_exhaustive"
    sources = [TESTS_C / "cvt_exhaustive.c", CSRC / "kernels" / "cvt.c",
               CSRC / "kernels" / "isa.c"]
    cmd = [*cc, *build.compile_args(""), f"-I{CSRC / 'include'}", f"-I{CSRC / 'kernels'}",
           *map(str, sources), "-o", str(exe), *build.link_args("")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    return exe


@pytest.mark.parametrize("level", LEVELS)
def test_conversions_exhaustive(level, levels, cvt_exe):
    """Every float16 / bfloat16 pattern widened and every float32 pattern narrowed (a sample of
    every 7th at the generic level, whose table is the scalar code itself), bit for bit."""
    if level not in levels:
        pytest.skip(f"this CPU has no {level}")
    res = subprocess.run([str(cvt_exe)], env=_env(level), capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}"
    lines = res.stdout.splitlines()
    assert lines[0] == f"level {level}"
    checked = {}
    for line in lines[1:]:
        m = re.fullmatch(r"(\w+) checked=(\d+) bad=(\d+)", line)
        assert m, f"unexpected output line: {line!r}"
        assert int(m.group(3)) == 0, line
        checked[m.group(1)] = int(m.group(2))
    assert checked["f16_to_f32"] == checked["bf16_to_f32"] == 65536
    assert checked["edges"] > 0
    full = 2**32 if level != "generic" else len(range(0, 2**32, 7))
    assert checked["f32_to_f16"] >= full and checked["f32_to_bf16"] >= full


# ------------------------------------------------------- int8 softmax (softmax_ex) ----
# oneDNN's int8 softmax / log-softmax (int8 in; int8 or uint8 out; src and dst scales; no
# post-op) has a fused path of its own in softmax_ex.c at each level (table permutes, gathers,
# the portable vector exp). Its bytes are pinned to those the general float32 path of
# softmax_ex.c gave before that path existed (tests/data/int8_softmax_digests.json, made with
# INT8_CODE by the kernel of the commit before it): spans of the inputs that take each lookup
# (one permute, two, a gather; all equal; a span whose exps underflow to 0), tails shorter than a
# vector, rows, column blocks and whole slabs, scales of 1, inf and negative ones, and uint8.
INT8_CODE = r'''
import hashlib, json, sys
import numpy as np
from aclnn_py._emu import ffi, lib

lib.aclk_set_num_threads(int(sys.argv[1]))
I8, U8 = 2, 4
SHAPES = [((37, 1003), -1), ((3, 517, 9), 1), ((2, 300, 700), 0), ((1, 1, 1), 0),
          ((33, 17, 513), 1), ((8, 2000, 3), 1), ((4, 1000, 100), 1), ((7, 9000), 1),
          ((100, 16), 0), ((2, 16, 4100), 1), ((64, 40, 1), 1)]
SPANS = [(-4, 4), (-8, 7), (-20, 11), (-40, 40), (-128, 127), (100, 127), (-128, -128)]
SCALES = [(64.0, 0.5, I8), (1.0, 1.0, I8), (64.0, 0.5, U8), (255.0, 1.0, U8),
          (3.0, 0.003, I8), (float("inf"), 1.0, I8), (-50.0, 0.25, I8)]
out = {"isa": ffi.string(lib.aclk_isa_name()).decode()}
for si, (shape, dim) in enumerate(SHAPES):
    dim %= len(shape)
    p = ffi.new("emu_softmax_ex_args *")
    p.outer = int(np.prod(shape[:dim]))
    p.axis, p.inner = shape[dim], int(np.prod(shape[dim + 1:]))
    p.ndim, p.dim = len(shape), dim
    for i, s in enumerate(shape):
        p.shape[i] = s
    for ri, (lo, hi) in enumerate(SPANS):
        rng = np.random.default_rng(100 * si + ri)
        x = rng.integers(lo, hi + 1, size=shape, dtype=np.int16).astype(np.int8)
        for ss, ds, ddt in SCALES:
            for lg in (0, 1):
                p.log, p.src_scale, p.dst_scale = lg, ss, ds
                y = np.zeros(shape, np.int8 if ddt == I8 else np.uint8)
                assert lib.aclk_softmax_ex(p, I8, ffi.from_buffer(x), ffi.NULL, ddt,
                                           ffi.from_buffer(y)) == 0
                key = f"{shape} dim={dim} x in [{lo}, {hi}] {ss:g}/{ds:g} dst={ddt} log={lg}"
                out[key] = hashlib.sha256(y.tobytes()).hexdigest()
print(json.dumps(out))
'''
INT8_PINNED = Path(__file__).resolve().parent / "data" / "int8_softmax_digests.json"


def test_int8_softmax_bits_are_pinned_at_every_level(levels):
    pinned = json.loads(INT8_PINNED.read_text())
    assert len(pinned) > 1000
    for lv, threads in [(lv, 1) for lv in levels] + [(levels[-1], 3)]:
        d = json.loads(_python(INT8_CODE, lv, str(threads)).splitlines()[-1])
        assert d.pop("isa") == lv
        assert d.keys() == pinned.keys(), (lv, threads)
        diff = [k for k in pinned if pinned[k] != d[k]]
        assert not diff, (f"ACLNN_EMU_ISA={lv} with {threads} threads: {len(diff)} int8 softmax "
                          f"outputs changed their bytes: {diff[:8]}")


# Rows (inner == 1) of the fused int8 path whose inputs span little are summed in any order and
# their outputs looked up in a per-row table (softmax_ex.c, "rows"): their bytes against the
# general float32 path's on the same rows, made to take it by an identity post-op (linear 1, 0:
# d * 1 + 0 is d, but for the sign of a zero, which the rounding drops). Every span 0 .. 15 and
# some wider ones, lengths on both sides of the vector widths and of the longest row whose sum is
# exact at that span (4096 at span 12, 2048 at 13, 512 at 14, 256 at 15), rows of several spans in
# one call.
INT8_ROWS_CODE = r'''
import json, sys
import numpy as np
from aclnn_py._emu import ffi, lib

lib.aclk_set_num_threads(int(sys.argv[1]))
I8, U8 = 2, 4
LENGTHS = [1, 2, 15, 17, 31, 33, 63, 64, 65, 100, 255, 257, 513, 2047, 2049, 4096, 4097, 9001]
SPANS = list(range(16)) + [16, 19, 31, 40, 255]
SCALES = [(64.0, 0.5, I8), (1.0, 1.0, U8), (float("inf"), 1.0, I8), (-50.0, 0.25, I8),
          (3.0, 0.003, U8), (1.0, 1.0, I8), (16.0, 1.0, I8), (-8.0, 0.5, U8)]  # the last three
# keep log-softmax's outputs (-log(L) and below) off the saturation
bad, n = [], 0
for L in LENGTHS:
    rng = np.random.default_rng(L)
    rows = []
    for s in SPANS:  # two rows per span, each holding its min and max
        for _ in range(2):
            lo = int(rng.integers(-128, 128 - s))
            r = rng.integers(lo, lo + s + 1, size=L)
            r[rng.integers(L)], r[rng.integers(L)] = lo, lo + s
            rows.append(r)
    x = np.array(rows, dtype=np.int16).astype(np.int8)
    p = ffi.new("emu_softmax_ex_args *")
    p.outer, p.axis, p.inner, p.ndim, p.dim = x.shape[0], L, 1, 2, 1
    p.shape[0], p.shape[1] = x.shape
    for ss, ds, ddt in SCALES:
        for lg in (0, 1):
            got = []
            for post in (0, 1):
                p.log, p.src_scale, p.dst_scale, p.n_post = lg, ss, ds, post
                p.post[0].alg, p.post[0].alpha, p.post[0].beta = 2, 1.0, 0.0
                y = np.zeros(x.shape, np.int8 if ddt == I8 else np.uint8)
                assert lib.aclk_softmax_ex(p, I8, ffi.from_buffer(x), ffi.NULL, ddt,
                                           ffi.from_buffer(y)) == 0
                got.append(y)
            n += 1
            rows_bad = np.nonzero((got[0] != got[1]).any(axis=1))[0]
            if rows_bad.size:
                bad.append(f"L={L} {ss:g}/{ds:g} dst={ddt} log={lg} rows {rows_bad[:4].tolist()}")
print(json.dumps({"isa": ffi.string(lib.aclk_isa_name()).decode(), "cases": n, "bad": bad}))
'''


def test_int8_rows_match_the_general_path_at_every_level(levels):
    for lv, threads in [(lv, 1) for lv in levels] + [(levels[-1], 2)]:
        d = json.loads(_python(INT8_ROWS_CODE, lv, str(threads)).splitlines()[-1])
        assert d["isa"] == lv
        assert d["cases"] == 18 * 8 * 2
        assert not d["bad"], (f"ACLNN_EMU_ISA={lv} with {threads} threads: int8 rows that differ "
                              f"from the general path: {d['bad'][:8]}")
