/*
 * vecmath.h: float32 exp and log as straight-line code (no calls, no branches, no table
 * lookups), so that a loop around them auto-vectorises; glibc's expf / logf are scalar calls.
 *
 * Accuracy, measured against libm's double exp / log over every float32 input by
 * tests/c/ulp_exp_log.c (tests/test_kernels_c.py runs it and holds these figures to it):
 *   aclk_exp_f32: every float32 x; max error 0.9775 ulp (at x = -59.9194; subnormal results
 *                 count in units of 2^-149); +inf -> +inf, -inf -> +0, NaN -> NaN, overflow
 *                 -> +inf, deep underflow -> +0.
 *   aclk_log_f32: x a positive normal float32, +inf or NaN (all log-softmax feeds it: a sum of
 *                 exps that is >= 1, or NaN); max error 0.8337 ulp (at x = 1.41303);
 *                 +inf -> +inf, NaN -> NaN. Zero, negatives and subnormals are outside its
 *                 domain (no -inf / NaN / extra care for them).
 *
 * exp's fused multiply-adds are written out (fmaf: the argument reduction and all but the last
 * step of the polynomial, which is more accurate unfused); every other multiply and add is rounded
 * on its own, so a file including this header must switch floating-point contraction off before
 * its first #include (see the top of softmax.c). fmaf is correctly rounded by definition, so every
 * level computes the same bits: the x86-64-v3 and v4 versions in one FMA instruction, the baseline
 * through libm's fmaf (which glibc dispatches to the FMA instruction where the CPU has it;
 * a slower exact emulation on CPUs without), other architectures natively (aarch64's FMA).
 *
 * Clamps and selects are mask selects (dtype.h): with gcc's default -ftrapping-math a ?: whose
 * arm holds float arithmetic becomes a branch, and a loop with a branch around a possibly
 * trapping float operation is not vectorised.
 */
#ifndef ACLK_VECMATH_H
#define ACLK_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"

/* ACLK_LEVELS(name, (params), (args)) { body }: a void function built once per ISA level and
 * run at the level isa.c picked (aclk_isa_level(): the CPU's best, or what ACLNN_EMU_ISA asks
 * for). On x86-64 with gcc or clang the body is an always-inline function compiled into three
 * wrappers: target("arch=x86-64-v4") (AVX-512F/BW/DQ/VL), target("arch=x86-64-v3") (AVX2, FMA,
 * F16C) and the baseline (SSE2); `name` itself switches on the level once per call (the marked
 * functions do a chunk of rows or columns each, so the switch costs nothing). No -march flag is
 * needed, so a wheel built here runs anywhere. The helpers the body calls are forced inline
 * (ACLK_INLINE) so each wrapper gets its own copy at its vector width. As long as no loop
 * reassociates a reduction and contraction is off, all levels give bit-identical results.
 * Elsewhere (aarch64), or with ACLK_NO_CLONES defined, one plain version.
 * This replaced gcc's target_clones (the same three targets, picked by CPU through an ifunc
 * when the library loaded), which ACLNN_EMU_ISA could not reach: a forced avx2 or generic run
 * on an AVX-512 machine still ran the AVX-512 clones.
 * Each wrapper records its level in aclk_isa_ran (emu_test_isa_ran(), for the tests: which
 * code the last marked function ran), stored only when it changes, so the cache line stays
 * shared between threads. */
#define ACLK_LEVEL_WRAPPER_(attr, name, suffix, level, params, args)                           \
    attr static void name##suffix params                                                        \
    {                                                                                           \
        if (__atomic_load_n(&aclk_isa_ran, __ATOMIC_RELAXED) != (level))                       \
            __atomic_store_n(&aclk_isa_ran, (level), __ATOMIC_RELAXED);                         \
        name##_body_ args;                                                                      \
    }
#if defined(__x86_64__) && defined(__GNUC__) && !defined(ACLK_NO_CLONES)
#define ACLK_LEVELS(name, params, args)                                                         \
    ACLK_INLINE void name##_body_ params;                                                       \
    ACLK_LEVEL_WRAPPER_(__attribute__((target("arch=x86-64-v4"))), name, _v4_,                  \
                        ACLK_ISA_AVX512, params, args)                                          \
    ACLK_LEVEL_WRAPPER_(__attribute__((target("arch=x86-64-v3"))), name, _v3_,                  \
                        ACLK_ISA_AVX2, params, args)                                            \
    ACLK_LEVEL_WRAPPER_(, name, _v1_, ACLK_ISA_GENERIC, params, args)                           \
    static void name params                                                                     \
    {                                                                                           \
        switch (aclk_isa_level()) {                                                             \
        case ACLK_ISA_AVX512: name##_v4_ args; break;                                           \
        case ACLK_ISA_AVX2: name##_v3_ args; break;                                             \
        default: name##_v1_ args; break;                                                        \
        }                                                                                       \
    }                                                                                           \
    ACLK_INLINE void name##_body_ params
#else
#define ACLK_LEVELS(name, params, args)                                                         \
    ACLK_INLINE void name##_body_ params;                                                       \
    ACLK_LEVEL_WRAPPER_(, name, , ACLK_ISA_GENERIC, params, args)                               \
    ACLK_INLINE void name##_body_ params
#endif

/* exp(x - n*ln2) for the integer n nearest x/ln2: Cody-Waite reduction (ln2 in two parts), then
 * 1 + r + r^2 * P(r) with the Cephes degree-5 P. Shared by both exps below. */
ACLK_INLINE float aclk_exp_reduced_(float x, float n)
{
    float r = fmaf(n, -0.693359375f, x);           /* ln2 high part */
    r = fmaf(n, 2.12194440e-4f, r);                /* ln2 low part */
    float r2 = r * r;
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = p * r2 + r; /* unfused: fused here the worst case grows to 1.01 ulp */
    return p + 1.0f;
}

/* exp(x). Cody-Waite reduction x = n*ln2 + r with |r| <= ln2/2, the Cephes degree-7
 * polynomial for exp(r), then scaling by 2^n done as two exact power-of-two multiplies
 * (2^(n>>1) * 2^(n - (n>>1))) so that both overflow (-> +inf) and gradual underflow (a single
 * rounding into the subnormal range) come out right. The input is clamped to 88.8 first:
 * exp(88.8) overflows, so +inf -> +inf. A NaN passes the selects (comparisons are false) and
 * propagates through the polynomial. n is obtained with the 1.5*2^23 rounding trick, so no
 * float -> int conversion is ever applied to a NaN.
 * Inputs whose result is +0 (x < -104, -inf included: exp(x) < 2^-150) are computed as exp(0)
 * and the result selected afterwards, so that no intermediate underflows for them: on x86 an
 * instruction with a subnormal or underflowing result costs a microcode assist (~100+ cycles
 * per vector), and x - max(x) < -104 is common in softmax (masked elements: -inf or a very
 * negative fill value; a row half masked ran 1.6x slower). Computed through, every such input
 * gives +0 as well. */
ACLK_INLINE float aclk_exp_f32(float x)
{
    int zero = x < -104.0f;
    x = aclk_sel_f32(x > 88.8f, 88.8f, x);
    x = aclk_sel_f32(zero, 0.0f, x);
    float k = fmaf(x, 1.44269504088896341f, 12582912.0f); /* 1.5 * 2^23: rounds to an integer */
    float n = k - 12582912.0f;
    int32_t ni;
    {
        uint32_t kb = aclk_f32_bits(k) - 0x4B400000u;
        memcpy(&ni, &kb, sizeof ni);
    }
    float p = aclk_exp_reduced_(x, n);
    int32_t n1 = ni >> 1;
    int32_t n2 = ni - n1;
    float s1 = aclk_bits_f32((uint32_t)(n1 + 127) << 23);
    float s2 = aclk_bits_f32((uint32_t)(n2 + 127) << 23);
    return aclk_sel_f32(zero, 0.0f, (p * s1) * s2);
}

/* exp(x) for x <= 0 or NaN: the arguments of softmax's exps (x - max(x) <= 0). Bit for bit
 * aclk_exp_f32 on that domain (tests/c/ulp_exp_log.c compares the two over every such float32),
 * about a fifth cheaper: no overflow clamp, and the scaling by 2^n done as 2^(n + 64) times
 * 2^-64: for n >= -150 the first product is exact and normal, and the second rounds once, as the
 * general function's two half-power multiplies do. */
ACLK_INLINE float aclk_exp_neg_f32(float x)
{
    int zero = x < -104.0f;
    x = aclk_sel_f32(zero, 0.0f, x);
    float k = fmaf(x, 1.44269504088896341f, 12582912.0f); /* 1.5 * 2^23: rounds to an integer */
    float n = k - 12582912.0f;
    /* n + 64 + 127, the biased exponent of 2^(n + 64), from k's low bits: in [41, 191] */
    uint32_t eb = aclk_f32_bits(k) - (0x4B400000u - 191u);
    float p = aclk_exp_reduced_(x, n);
    return aclk_sel_f32(zero, 0.0f, (p * aclk_bits_f32(eb << 23)) * 0x1p-64f);
}

/* exp(x) for EXP_NORMAL_MIN <= x <= 0, where the result is a normal float32 (n >= -125): bit
 * for bit aclk_exp_neg_f32 (tests/c/ulp_exp_log.c runs the array forms below over every float32
 * <= 0 against aclk_exp_f32, all of this domain but its edge block through this function),
 * with the scaling by 2^n an integer add of n to p's exponent field, exact for a normal result
 * as the two multiplies are, and neither the deep-underflow select nor its clamp. The vector
 * loops below take it for a block whose arguments all lie in its domain (no NaN, nothing below
 * EXP_NORMAL_MIN): two of the exp's twelve multiplies and multiply-adds fewer, and these
 * saturate the multiply units. */
#define EXP_NORMAL_MIN -86.0f
#define EXP_NORMAL_BITS 0x42AC0000u /* the bits of 86.0f */

ACLK_INLINE float aclk_exp_neg_normal_f32(float x)
{
    float k = fmaf(x, 1.44269504088896341f, 12582912.0f); /* 1.5 * 2^23: rounds to an integer */
    float n = k - 12582912.0f;
    uint32_t nb = (aclk_f32_bits(k) - 0x4B400000u) << 23; /* n << 23, modulo 2^32 */
    float p = aclk_exp_reduced_(x, n);
    return aclk_bits_f32(aclk_f32_bits(p) + nb);
}

/* log(x) for x a positive normal float32, +inf or NaN. x = 2^e * m with m in
 * [sqrt(1/2), sqrt(2)), log(x) = e*ln2 + log1p(m - 1) with the Cephes logf polynomial and ln2
 * split in two parts. */
ACLK_INLINE float aclk_log_f32(float x)
{
    uint32_t u = aclk_f32_bits(x);
    int32_t e = (int32_t)(u >> 23) - 126;
    float m = aclk_bits_f32((u & 0x007FFFFFu) | 0x3F000000u); /* [0.5, 1) */
    int c = m < 0.707106781186547524f;
    e -= c;
    m = aclk_sel_f32(c, m + m, m) - 1.0f;                      /* both steps exact */
    float z = m * m;
    float p = 7.0376836292e-2f;
    p = p * m + -1.1514610310e-1f;
    p = p * m + 1.1676998740e-1f;
    p = p * m + -1.2420140846e-1f;
    p = p * m + 1.4249322787e-1f;
    p = p * m + -1.6668057665e-1f;
    p = p * m + 2.0000714765e-1f;
    p = p * m + -2.4999993993e-1f;
    p = p * m + 3.3333331174e-1f;
    float fe = (float)e;
    float y = (m * z) * p;
    y = y + fe * -2.12194440e-4f;
    y = y + -0.5f * z;
    float r = m + y;
    r = r + fe * 0.693359375f;
    return aclk_sel_f32((x != x) | (x == INFINITY), x, r);
}

/* ------------------------------------------------------------------- array forms ---- */

/* v[k] = log(v[k]) */
ACLK_INLINE void aclk_vlog_f32(float *v, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        v[k] = aclk_log_f32(v[k]);
}

/* The exp loops below go in blocks of EXP_UNROLL elements, each block's fixed-count loop fully
 * unrolled: the vectoriser then emits several independent vectors' worth of the exp's long
 * dependency chain side by side, which the out-of-order core overlaps (a plain loop gives it one
 * vector per iteration: 0.59 -> 0.50 ns per element on an AVX2 core). Each element's arithmetic
 * is unchanged, so are the bits. */
#define EXP_UNROLL 32

/* e[0, EXP_UNROLL) = exp(d) for d <= 0 or NaN: aclk_exp_neg_normal_f32 when every d is in its
   domain, else aclk_exp_neg_f32 (the same bits either way) */
ACLK_INLINE void aclk_vexp_neg_block_(const float *d, float *e)
{
    /* the largest |d| by its bits (an unsigned max vectorises; NaNs are above every number).
       Not unrolled: gcc 12 turns the fully unrolled form into 32 scalar compares, which made
       the whole exp slower than without this path */
    uint32_t top = 0;
#pragma GCC unroll 1
    for (int j = 0; j < EXP_UNROLL; j++) {
        const uint32_t a = aclk_f32_bits(d[j]) & 0x7FFFFFFFu;
        top = a > top ? a : top;
    }
    if (top <= EXP_NORMAL_BITS) {
#pragma GCC unroll 32
        for (int j = 0; j < EXP_UNROLL; j++)
            e[j] = aclk_exp_neg_normal_f32(d[j]);
    } else {
#pragma GCC unroll 32
        for (int j = 0; j < EXP_UNROLL; j++)
            e[j] = aclk_exp_neg_f32(d[j]);
    }
}

/* e[k] = exp(x[k] - m[k]) for m[k] >= x[k] (a maximum; NaN allowed); e may be x */
ACLK_INLINE void aclk_vexp_sub_f32(const float *x, const float *m, float *e, int64_t n)
{
    int64_t k = 0;
    for (; k + EXP_UNROLL <= n; k += EXP_UNROLL) {
        float d[EXP_UNROLL];
#pragma GCC unroll 32
        for (int j = 0; j < EXP_UNROLL; j++)
            d[j] = x[k + j] - m[k + j];
        aclk_vexp_neg_block_(d, e + k);
    }
    for (; k < n; k++)
        e[k] = aclk_exp_neg_f32(x[k] - m[k]);
}

/* e[k] = exp(x[k] - m) for m >= x[k] (a maximum; NaN allowed); e may be x */
ACLK_INLINE void aclk_vexp_sub1_f32(const float *x, float m, float *e, int64_t n)
{
    int64_t k = 0;
    for (; k + EXP_UNROLL <= n; k += EXP_UNROLL) {
        float d[EXP_UNROLL];
#pragma GCC unroll 32
        for (int j = 0; j < EXP_UNROLL; j++)
            d[j] = x[k + j] - m;
        aclk_vexp_neg_block_(d, e + k);
    }
    for (; k < n; k++)
        e[k] = aclk_exp_neg_f32(x[k] - m);
}

/* e[k] = exp(x[k]) for any x; e may be x */
ACLK_INLINE void aclk_vexp_f32(const float *x, float *e, int64_t n)
{
    int64_t k = 0;
    for (; k + EXP_UNROLL <= n; k += EXP_UNROLL) {
#pragma GCC unroll 32
        for (int j = 0; j < EXP_UNROLL; j++)
            e[k + j] = aclk_exp_f32(x[k + j]);
    }
    for (; k < n; k++)
        e[k] = aclk_exp_f32(x[k]);
}

/* 1 if no x[k] is > 0 (NaNs allowed): exp(x) may then be computed by aclk_exp_neg_f32 */
ACLK_INLINE int aclk_all_nonpos_f32(const float *x, int64_t n)
{
    int pos = 0;
    for (int64_t k = 0; k < n; k++)
        pos |= x[k] > 0.0f;
    return !pos;
}

#endif /* ACLK_VECMATH_H */
