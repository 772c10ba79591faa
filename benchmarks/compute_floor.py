"""How much of a relaxed softmax row is arithmetic: the fewest operations it can do, timed in L1.

    PYTHONPATH=. python benchmarks/compute_floor.py [--level avx2|avx512] [--reps N] [--rounds R]
                                                   [--evict MIB]

The relaxed float16 / bfloat16 rows of ``aclnn-py bench`` ((4096, 4096) over dim -1) are held to
1.5x (softmax) and 1.8x (log_softmax) of a memory floor. A kernel cannot be faster than its
memory traffic, nor than its arithmetic, and at best the two overlap completely. This script
times the arithmetic alone: a row of 4096 16-bit elements in L1, over and over, through the
fewest vector operations this project knows for the relaxed contract (2 ulp):

  - softmax:     pass 1 the max; pass 2 exp(x - max) into a float32 row buffer and its sum;
                 pass 3 each exp times 1/sum, converted and stored;
  - log_softmax: pass 1 the max; pass 2 the sum of exp(x - max); pass 3 x - (max + log(sum)),
                 converted and stored;

with exp(d) = 2^t, t = x * log2(e) - max * log2(e) (one fused multiply-add), t = n + f, n the
nearest integer, 2^f by a degree-3 polynomial (relative error 7.7e-5, 0.16 ulp of float16), and
2^n added to its exponent field (AVX2) or applied by vscalefps (AVX-512), with no range checks
(the kernels need one per row to take this path). No loop is unrolled beyond what the compiler
does with four independent accumulators. bfloat16 is loaded and stored as the kernels do at each
level (AVX2: the even and odd halves of a vector pair, rounded by adding 0x8000; AVX-512:
vcvtneps2bf16, which needs AVX512_BF16, else the row is skipped).

It prints, per level / operator / dtype, the CPU time per element of one thread, the time that
rate gives for the bench row's 16M elements split over 2 threads (the two threads also run
together, and that wall time is printed as well: on a machine whose two vCPUs share a core it
is the one to read), and the memory floor of the bench row measured in the same run (the
faster of ``aclk_floor_copy`` and the float16 hard-sigmoid kernel, 2 threads, each call after
MIB of other memory is written, medians), under the store policy of ``ACLNN_EMU_LLC``. The
"arith / floor" column is the least ratio to the floor that a kernel doing this arithmetic can
reach; if it is above the row's target, the target is beyond this hardware for that
arithmetic.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import os
import shutil
import statistics
import tempfile
import threading
import time

import numpy as np

C_DEF = """
int cf_has(int level);
void cf_row(int level, int op, int bf, const uint16_t *x, uint16_t *y, float *buf, int64_t n,
            int64_t reps);
"""

C_SRC = r"""
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#define L2E 1.4426950408889634f
#define C0 0.9999289f
#define C1 0.69327628f
#define C2 0.24260466f
#define C3 0.05508877f

int cf_has(int level)
{
    __builtin_cpu_init();
    if (level == 2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("f16c");
    if (level == 3)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma");
    if (level == 4)
        return cf_has(3) && __builtin_cpu_supports("avx512bf16");
    return 0;
}

/* ---------------------------------------------------------------- AVX2 ---- */
#define T2 __attribute__((target("avx2,fma,f16c")))

static inline T2 __m256 e2(__m256 x, __m256 nm)
{
    const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(L2E), nm);
    const __m256 n = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 f = _mm256_sub_ps(t, n);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(C3), f, _mm256_set1_ps(C2));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(C1));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(C0));
    const __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), e));
}

/* 16 elements: float16 as two vectors in order; bfloat16 as the even and the odd ones */
static inline T2 void ld2(const uint16_t *p, int bf, __m256 *a, __m256 *b)
{
    if (bf) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)p);
        *a = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
        *b = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xFFFF0000u)));
    } else {
        *a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        *b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 8)));
    }
}

static inline T2 void st2(uint16_t *p, int bf, __m256 a, __m256 b)
{
    if (bf) {
        const __m256i h = _mm256_set1_epi32(0x8000);
        const __m256i ea = _mm256_srli_epi32(_mm256_add_epi32(_mm256_castps_si256(a), h), 16);
        const __m256i ob = _mm256_and_si256(_mm256_add_epi32(_mm256_castps_si256(b), h),
                                            _mm256_set1_epi32((int)0xFFFF0000u));
        _mm256_storeu_si256((__m256i *)p, _mm256_or_si256(ea, ob));
    } else {
        _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(a, 0));
        _mm_storeu_si128((__m128i *)(p + 8), _mm256_cvtps_ph(b, 0));
    }
}

static inline T2 float hmax2(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

static inline T2 float hsum2(__m256 v)
{
    __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_add_ps(m, _mm_movehl_ps(m, m));
    m = _mm_add_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

static T2 void row2(int lg, int bf, const uint16_t *x, uint16_t *y, float *buf, int64_t n)
{
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    for (int64_t i = 0; i < n; i += 32) {
        __m256 a, b, c, d;
        ld2(x + i, bf, &a, &b), ld2(x + i + 16, bf, &c, &d);
        m0 = _mm256_max_ps(m0, a), m1 = _mm256_max_ps(m1, b);
        m2 = _mm256_max_ps(m2, c), m3 = _mm256_max_ps(m3, d);
    }
    const float m = hmax2(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    const __m256 nm = _mm256_set1_ps(-m * L2E);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < n; i += 32) {
        __m256 a, b, c, d;
        ld2(x + i, bf, &a, &b), ld2(x + i + 16, bf, &c, &d);
        a = e2(a, nm), b = e2(b, nm), c = e2(c, nm), d = e2(d, nm);
        s0 = _mm256_add_ps(s0, a), s1 = _mm256_add_ps(s1, b);
        s2 = _mm256_add_ps(s2, c), s3 = _mm256_add_ps(s3, d);
        if (!lg) {
            _mm256_storeu_ps(buf + i, a), _mm256_storeu_ps(buf + i + 8, b);
            _mm256_storeu_ps(buf + i + 16, c), _mm256_storeu_ps(buf + i + 24, d);
        }
    }
    const float s = hsum2(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    if (lg) {
        const __m256 l = _mm256_set1_ps(m + logf(s));
        for (int64_t i = 0; i < n; i += 16) {
            __m256 a, b;
            ld2(x + i, bf, &a, &b);
            st2(y + i, bf, _mm256_sub_ps(a, l), _mm256_sub_ps(b, l));
        }
    } else {
        const __m256 r = _mm256_set1_ps(1.0f / s);
        for (int64_t i = 0; i < n; i += 16)
            st2(y + i, bf, _mm256_mul_ps(_mm256_loadu_ps(buf + i), r),
                _mm256_mul_ps(_mm256_loadu_ps(buf + i + 8), r));
    }
}

/* -------------------------------------------------------------- AVX-512 ---- */
#define T5 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,f16c")))

static inline T5 __m512 e5(__m512 x, __m512 nm)
{
    const __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(L2E), nm);
    const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(t, n);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(C3), f, _mm512_set1_ps(C2));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(C1));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(C0));
    return _mm512_scalef_ps(p, n);
}

static inline T5 __m512 ld5(const uint16_t *p, int bf)
{
    const __m256i h = _mm256_loadu_si256((const __m256i *)p);
    if (bf)
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

/* 32 elements: bfloat16 with one vcvtne2ps2bf16 per pair */
static inline T5 void st5x2(uint16_t *p, int bf, __m512 a, __m512 b)
{
    if (bf) {
        _mm512_storeu_si512((void *)p, (__m512i)_mm512_cvtne2ps_pbh(b, a));
    } else {
        _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(a, 0));
        _mm256_storeu_si256((__m256i *)(p + 16), _mm512_cvtps_ph(b, 0));
    }
}

static T5 void row5(int lg, int bf, const uint16_t *x, uint16_t *y, float *buf, int64_t n)
{
    __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    for (int64_t i = 0; i < n; i += 64) {
        m0 = _mm512_max_ps(m0, ld5(x + i, bf)), m1 = _mm512_max_ps(m1, ld5(x + i + 16, bf));
        m2 = _mm512_max_ps(m2, ld5(x + i + 32, bf)), m3 = _mm512_max_ps(m3, ld5(x + i + 48, bf));
    }
    const float m = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1),
                                                       _mm512_max_ps(m2, m3)));
    const __m512 nm = _mm512_set1_ps(-m * L2E);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < n; i += 64) {
        const __m512 a = e5(ld5(x + i, bf), nm), b = e5(ld5(x + i + 16, bf), nm);
        const __m512 c = e5(ld5(x + i + 32, bf), nm), d = e5(ld5(x + i + 48, bf), nm);
        s0 = _mm512_add_ps(s0, a), s1 = _mm512_add_ps(s1, b);
        s2 = _mm512_add_ps(s2, c), s3 = _mm512_add_ps(s3, d);
        if (!lg) {
            _mm512_storeu_ps(buf + i, a), _mm512_storeu_ps(buf + i + 16, b);
            _mm512_storeu_ps(buf + i + 32, c), _mm512_storeu_ps(buf + i + 48, d);
        }
    }
    const float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1),
                                                       _mm512_add_ps(s2, s3)));
    if (lg) {
        const __m512 l = _mm512_set1_ps(m + logf(s));
        for (int64_t i = 0; i < n; i += 32)
            st5x2(y + i, bf, _mm512_sub_ps(ld5(x + i, bf), l),
                  _mm512_sub_ps(ld5(x + i + 16, bf), l));
    } else {
        const __m512 r = _mm512_set1_ps(1.0f / s);
        for (int64_t i = 0; i < n; i += 32)
            st5x2(y + i, bf, _mm512_mul_ps(_mm512_loadu_ps(buf + i), r),
                  _mm512_mul_ps(_mm512_loadu_ps(buf + i + 16), r));
    }
}

void cf_row(int level, int op, int bf, const uint16_t *x, uint16_t *y, float *buf, int64_t n,
            int64_t reps)
{
    for (int64_t r = 0; r < reps; r++) {
        if (level == 2)
            row2(op, bf, x, y, buf, n);
        else
            row5(op, bf, x, y, buf, n);
        __asm__ volatile("" ::: "memory");
    }
}
"""

LEVELS = {"avx2": 2, "avx512": 3}
N = 4096
BENCH_ELEMS = 4096 * 4096
TARGET = {"softmax": 1.5, "log_softmax": 1.8}


def build():
    """Compile the C above with cffi into a temporary directory; returns (ffi, lib)."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(C_DEF)
    ffi.set_source("_compute_floor", "#include <stdint.h>\n" + C_SRC,
                   extra_compile_args=["-O2", "-ffp-contract=off"])
    tmp = tempfile.mkdtemp(prefix="compute_floor_")
    atexit.register(shutil.rmtree, tmp, True)  # the loaded library stays mapped
    path = ffi.compile(tmpdir=tmp, verbose=False)
    spec = importlib.util.spec_from_file_location("_compute_floor", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ffi, mod.lib


def row_inputs(bf: int, seed: int):
    """One row of N 16-bit inputs in [-4, 4) (the bench's inputs are N(0, 1)-like)."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    x = rng.uniform(-4.0, 4.0, N).astype(ml_dtypes.bfloat16 if bf else np.float16)
    return x.view(np.uint16).copy(), np.zeros(N, np.uint16), np.zeros(N, np.float32)


def time_rows(ffi, lib, level, lg, bf, reps, threads):
    """Wall time per element with `threads` threads each on its own row, and the CPU time per
    element of one thread (ns)."""
    bufs = [row_inputs(bf, t) for t in range(threads)]
    ptrs = [(ffi.from_buffer("uint16_t[]", x), ffi.from_buffer("uint16_t[]", y),
             ffi.from_buffer("float[]", b)) for x, y, b in bufs]
    cpu = [0.0] * threads
    barrier = threading.Barrier(threads + 1)

    def work(t):
        barrier.wait()
        c0 = time.thread_time()
        lib.cf_row(level, lg, bf, *ptrs[t], N, reps)
        cpu[t] = time.thread_time() - c0
        barrier.wait()

    th = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in th:
        t.start()
    barrier.wait()
    w0 = time.perf_counter()
    barrier.wait()
    wall = time.perf_counter() - w0
    for t in th:
        t.join()
    elems = N * reps
    return wall / elems * 1e9, min(cpu) / elems * 1e9


def floor_ms(rounds: int, evict_mib: int) -> float:
    """The bench row's forward floor: the faster (by median) of a 32 MiB copy and the float16
    hard-sigmoid kernel of 4096 x 4096 elements, 2 kernel threads, cold."""
    from aclnn_py.runtime.core import ffi as effi
    from aclnn_py.runtime.core import lib as elib

    elib.aclk_set_num_threads(2)
    src = np.random.default_rng(0).standard_normal(BENCH_ELEMS).astype(np.float16)
    dst = np.empty_like(src)
    junk = np.zeros(evict_mib << 20, np.uint8)
    ps, pd = effi.from_buffer("void *", src), effi.from_buffer("void *", dst)
    runs = {"copy": lambda: elib.aclk_floor_copy(pd, ps, src.nbytes),
            "hardsigmoid": lambda: elib.aclk_hardsigmoid_fwd(1, ps, pd, BENCH_ELEMS,
                                                              1.0 / 6.0, 0.5)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            junk += 1
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return min(statistics.median(v) for v in times.values()) * 1e3


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--level", action="append", choices=sorted(LEVELS),
                    help="vector level (repeatable; default: both the CPU has)")
    ap.add_argument("--reps", type=int, default=20000, help="rows per timed call (20000)")
    ap.add_argument("--rounds", type=int, default=7, help="timed calls per line (7)")
    ap.add_argument("--evict", type=int, default=600,
                    help="MiB written before each floor call (600)")
    args = ap.parse_args(argv)
    ffi, lib = build()
    fl = floor_ms(args.rounds, args.evict)
    print(f"floor (4096 x 4096 float16, 2 threads, cold, ACLNN_EMU_LLC="
          f"{os.environ.get('ACLNN_EMU_LLC', 'unset')}): {fl:.2f} ms")
    print(f"{'level':7} {'op':12} {'dtype':9} {'ns/el 1t':>9} {'ns/el 2t':>9} "
          f"{'ms by 1t':>9} {'ms 2t':>7} {'arith/floor':>11} {'target':>6}")
    for name in args.level or sorted(LEVELS):
        level = LEVELS[name]
        for op, lg in (("softmax", 0), ("log_softmax", 1)):
            for dname, bf in (("float16", 0), ("bfloat16", 1)):
                if not lib.cf_has(level + (1 if bf and level == 3 else 0)):
                    print(f"{name:7} {op:12} {dname:9} skipped: the CPU lacks the level")
                    continue
                lines = [time_rows(ffi, lib, level, lg, bf, args.reps, 2)
                         for _ in range(args.rounds)]
                one = [time_rows(ffi, lib, level, lg, bf, args.reps, 1)[1]
                       for _ in range(args.rounds)]
                wall2 = statistics.median(w for w, _ in lines)
                cpu1 = statistics.median(one)
                # two threads: wall ns per element of each thread, each doing half the rows
                row_ms = wall2 * BENCH_ELEMS / 2 / 1e6
                cpu_ms = cpu1 * BENCH_ELEMS / 2 / 1e6
                print(f"{name:7} {op:12} {dname:9} {cpu1:9.3f} {wall2:9.3f} {cpu_ms:9.2f} "
                      f"{row_ms:7.2f} {row_ms / fl:5.2f} /{cpu_ms / fl:5.2f} "
                      f"{TARGET[op]:6.1f}")
    print("ns/el 1t: one thread's CPU time per element; ns/el 2t: wall time per element of "
          "each of two threads running together; ms by 1t / ms 2t: the bench row's 16M "
          "elements over 2 threads at those rates; arith/floor: ms 2t / ms by 1t over the "
          "floor (2t is the one to read on an idle machine, 1t when others load it)")


if __name__ == "__main__":
    main()
