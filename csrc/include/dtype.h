/*
 * dtype.h: scalar conversions between float32 and the 16-bit float formats (IEEE binary16 and
 * bfloat16), plus float64 -> 16-bit with a single correct rounding.
 *
 * All conversions are exact IEEE: narrowing rounds to nearest, ties to even; overflow gives
 * +-inf; subnormals (binary16's included) are produced and read correctly; +-0 keeps its sign;
 * a NaN stays a NaN with its sign, quieted, and keeps the top bits of its payload. Widening is
 * exact (a NaN's payload is kept bit for bit).
 *
 * They are written as straight-line integer code (selects, no branches, no library calls) so
 * that loops over arrays of them vectorise. The float32 -> binary16 subnormal path uses one
 * float add whose operands and result are normal numbers, so the results do not depend on
 * flush-to-zero / denormals-are-zero modes. No _Float16 is used.
 *
 * Arrays (the chunk helpers at the end: aclk_load_f32 / aclk_store_f32 and the _n forms) go
 * through a table of conversion functions picked once, when the library loads, for the CPU
 * (isa.c, cvt.c): F16C (vcvtph2ps / vcvtps2ph) for binary16 and AVX2 integer code for
 * bfloat16, or their AVX-512F forms, or the scalar code below compiled for the baseline
 * (autovectorised: SSE2 on x86-64, NEON on aarch64). Every table gives the bits of the scalar
 * functions for every input, checked over all 2^16 16-bit and all 2^32 float32 inputs per level
 * (tests/c/cvt_exhaustive.c):
 *   - vcvtps2ph with round-to-nearest-even (imm 0x08) rounds, overflows, makes subnormals and
 *     quiets NaNs (payload's top 10 bits kept) exactly as aclk_f32_to_f16;
 *   - vcvtph2ps quiets a signaling half NaN (sets the float's quiet bit), where
 *     aclk_f16_to_f32 keeps the payload bit for bit, so the vector loads clear that bit again
 *     in the (rare) lanes that held a signaling NaN;
 *   - AVX-512-BF16's vcvtneps2bf16 is NOT used: it flushes float32 subnormal inputs to zero and
 *     would give other bits than aclk_f32_to_bf16 (which rounds them like any other value);
 *     the bfloat16 narrowing is the integer round-to-nearest-even of aclk_f32_to_bf16 on
 *     vectors instead.
 * AVX-512-FP16 / BF16 arithmetic is not used either: the kernels compute in float32 on every
 * level, so that every ISA level (and every thread count) gives the same bits.
 *
 * Non-temporal stores (aclk_store_f32_nt, aclk_copy_f32_nt): an output much larger than the
 * last-level cache is written with streaming stores, which skip the read-for-ownership of every
 * destination line (a third of the memory traffic of a copy-shaped kernel) and leave the cache
 * to the inputs. Small outputs keep normal stores, so that a consumer that follows finds them
 * in cache: aclk_use_nt(bytes) says which. The bytes written are those of the normal stores.
 */
#ifndef ACLK_DTYPE_H
#define ACLK_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "aclnn_emu.h" /* the dtype codes ACLK_F32, ... */

/* gcc and clang: forced inline, so that each per-level version of a kernel (vecmath.h's
   ACLK_LEVELS) gets its own copy of every helper at its vector width */
#define ACLK_INLINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------------------- bit casts ---- */

ACLK_INLINE uint32_t aclk_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

ACLK_INLINE float aclk_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

ACLK_INLINE uint64_t aclk_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

ACLK_INLINE double aclk_bits_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Branch-free selects: c ? a : b written with masks. With gcc's default -ftrapping-math a plain
   ?: whose arm holds float arithmetic used only on that side (or constant-folds to an overflow
   on one side) is turned into a branch, and a loop with a branch around a possibly trapping
   float operation is not if-converted, hence not vectorised. Masks keep both sides live. */
ACLK_INLINE uint32_t aclk_sel_u32(int c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - (uint32_t)(c != 0);
    return (a & m) | (b & ~m);
}

ACLK_INLINE float aclk_sel_f32(int c, float a, float b)
{
    return aclk_bits_f32(aclk_sel_u32(c, aclk_f32_bits(a), aclk_f32_bits(b)));
}

ACLK_INLINE int32_t aclk_sel_i32(int c, int32_t a, int32_t b)
{
    int32_t m = -(int32_t)(c != 0);
    return (a & m) | (b & ~m);
}

/* ------------------------------------------------------------------ binary16 (half) ---- */

/* half -> float, exact. */
ACLK_INLINE float aclk_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t em = (uint32_t)h & 0x7FFFu;           /* exponent and mantissa */
    /* normal: rebias the exponent by 127 - 15 = 112; inf/NaN (exponent 31) by a further 128 - 16
       so that the float exponent becomes 255; the mantissa moves up by 13 bits unchanged */
    uint32_t normal = (em << 13) + (112u << 23);
    normal += (em >= 0x7C00u) ? (112u << 23) : 0u;
    /* subnormal or zero: value = mantissa * 2^-24, computed exactly in float (both factors and
       the product are normal floats or zero, so FTZ/DAZ modes cannot change it) */
    float sub = (float)(int32_t)em * 0x1p-24f;
    uint32_t mag = aclk_sel_u32(em < 0x0400u, aclk_f32_bits(sub), normal);
    return aclk_bits_f32(sign | mag);
}

/* float -> half, round to nearest even. */
ACLK_INLINE uint16_t aclk_f32_to_f16(float f)
{
    uint32_t u = aclk_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7FFFFFFFu;

    /* normal half range: rebias exponent (-112), round the 13 dropped bits to nearest even.
       A carry out of the mantissa bumps the exponent, which is right, up to and including
       rounding into the infinity pattern 0x7C00. Unsigned arithmetic wraps for small a; that
       lane is not selected then. */
    uint32_t odd = (a >> 13) & 1u;
    uint32_t nrm = (a - (112u << 23) + 0x0FFFu + odd) >> 13;

    /* below 2^-14 (half subnormals and zero): adding 0.5f moves the value into [0.5, 1), where
       the float ulp is 2^-24, exactly the half subnormal step, so the float adder does the
       rounding (to nearest even) and the sum's low mantissa bits are the half's bits (0x0400
       when it rounds up to the smallest normal, which is again the right encoding). The sum
       is a normal float; a float32 subnormal input read as 0 under DAZ still gives the right
       result (+-0). */
    float sum = aclk_bits_f32(a) + 0.5f;
    uint32_t sub = aclk_f32_bits(sum) - 0x3F000000u;

    /* NaN: quiet it, keep the top 10 payload bits */
    uint32_t nan = 0x7E00u | ((a >> 13) & 0x03FFu);

    uint32_t r = aclk_sel_u32(a < 0x38800000u, sub, nrm);
    r = aclk_sel_u32(a >= 0x47800000u, 0x7C00u, r);  /* >= 65536: infinity */
    r = aclk_sel_u32(a > 0x7F800000u, nan, r);
    return (uint16_t)(sign | r);
}

/* ------------------------------------------------------------------------- bfloat16 ---- */

ACLK_INLINE float aclk_bf16_to_f32(uint16_t h)
{
    return aclk_bits_f32((uint32_t)h << 16);
}

/* float -> bfloat16, round to nearest even; overflow carries into the infinity pattern. */
ACLK_INLINE uint16_t aclk_f32_to_bf16(float f)
{
    uint32_t u = aclk_f32_bits(f);
    uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x0040u;
    uint32_t r = aclk_sel_u32((u & 0x7FFFFFFFu) > 0x7F800000u, nan, rounded);
    return (uint16_t)r;
}

/* ------------------------------------------------------------------ float64 narrowing ---- */

/* double -> float rounded to odd (truncate, then set the last bit if anything was dropped).
   Rounding the result once more to a format with at most 22 significand bits (half: 11,
   bfloat16: 8) gives exactly the correctly rounded double -> narrow result. Overflow beyond
   FLT_MAX gives FLT_MAX (odd), which still rounds to infinity in the narrow formats; NaN and
   +-inf pass through. */
ACLK_INLINE float aclk_f64_to_f32_odd(double d)
{
    float f = (float)d;                            /* round to nearest even */
    uint32_t u = aclk_f32_bits(f);
    double back = (double)f;
    int inexact = (back != d) && (d == d);
    /* if the nearest-even result was even, the odd neighbour on the other side of d is the
       round-to-odd result; in sign-magnitude bits "towards zero" is -1 and "away" is +1 */
    int away = (back < 0 ? -back : back) > (d < 0 ? -d : d);
    uint32_t adj = away ? u - 1u : u + 1u;
    uint32_t r = (inexact && (u & 1u) == 0u) ? adj : u;
    return aclk_bits_f32(r);
}

ACLK_INLINE uint16_t aclk_f64_to_f16(double d)
{
    return aclk_f32_to_f16(aclk_f64_to_f32_odd(d));
}

ACLK_INLINE uint16_t aclk_f64_to_bf16(double d)
{
    return aclk_f32_to_bf16(aclk_f64_to_f32_odd(d));
}

/* ---------------------------------------------------------------- float -> int32 ---- */

/* truncate toward zero; NaN -> 0; saturate out-of-range values (and +-inf). Out-of-range and
   NaN inputs are replaced by 0 before the (then always defined) conversion, and the saturated
   values are selected afterwards, so the conversion is unconditional and vectorises. (The
   float64 version selects with ?: on doubles: with SSE2 only, 64-bit integer masks built
   from double compares stop gcc vectorising; the arms here are plain values, which is safe.) */
ACLK_INLINE int32_t aclk_f32_to_i32(float x)
{
    int big = x >= 2147483648.0f;
    int small = x < -2147483648.0f;
    float c = aclk_sel_f32((x != x) | big | small, 0.0f, x);
    int32_t r = (int32_t)c;
    r = aclk_sel_i32(big, INT32_MAX, r);
    return aclk_sel_i32(small, INT32_MIN, r);
}

ACLK_INLINE int32_t aclk_f64_to_i32(double x)
{
    int big = x >= 2147483648.0;
    int small = x <= -2147483649.0;
    double c = ((x != x) | big | small) ? 0.0 : x;
    int32_t r = (int32_t)c;
    r = big ? INT32_MAX : r;
    return small ? INT32_MIN : r;
}

/* ------------------------------------------------------------------ ISA dispatch ---- */

/* The instruction-set level the kernels run at (isa.c): picked once for the CPU when the
   library loads; ACLNN_EMU_ISA=generic|avx2|avx512 asks for a lower one (a level the CPU lacks
   gives the best it has). */
#define ACLK_ISA_GENERIC 0
#define ACLK_ISA_AVX2 1   /* AVX2 + F16C + FMA */
#define ACLK_ISA_AVX512 2 /* AVX-512 F + BW + DQ + VL */

int aclk_isa_level(void);

/* The level whose code the last function built per level ran (vecmath.h's ACLK_LEVELS), -1
   before any did; emu_test_isa_ran() returns it and sets it back to -1. */
extern int aclk_isa_ran;

/* 1 when an output of this many bytes should be written with non-temporal stores: larger than
   half the last-level cache, and the level has such stores (never at "generic") */
int aclk_use_nt(int64_t output_bytes);

/* Array conversions of one ISA level (cvt.c). src and dst never overlap. The _nt forms write
   the same bytes with non-temporal stores (normal stores for unaligned heads and tails); a
   kernel that used them calls aclk_nt_fence() before its chunk returns. */
typedef struct aclk_cvt_ops {
    int level; /* ACLK_ISA_* */
    void (*f16_to_f32)(const uint16_t *restrict src, float *restrict dst, int64_t n);
    void (*bf16_to_f32)(const uint16_t *restrict src, float *restrict dst, int64_t n);
    void (*f32_to_f16)(const float *restrict src, uint16_t *restrict dst, int64_t n);
    void (*f32_to_bf16)(const float *restrict src, uint16_t *restrict dst, int64_t n);
    void (*f32_to_f16_nt)(const float *restrict src, uint16_t *restrict dst, int64_t n);
    void (*f32_to_bf16_nt)(const float *restrict src, uint16_t *restrict dst, int64_t n);
    void (*copy_f32_nt)(float *restrict dst, const float *restrict src, int64_t n);
} aclk_cvt_ops;

extern const aclk_cvt_ops aclk_cvt_generic;
#if defined(__x86_64__) || defined(__i386__)
extern const aclk_cvt_ops aclk_cvt_avx2;
extern const aclk_cvt_ops aclk_cvt_avx512;
#endif

/* the table of the level in use: the generic one until isa.c's load-time initialisation sets
   it (every table gives the same bits, so a kernel that ran before saw the same results) */
extern const aclk_cvt_ops *aclk_cvt_cur;

ACLK_INLINE const aclk_cvt_ops *aclk_cvt(void)
{
    return __atomic_load_n(&aclk_cvt_cur, __ATOMIC_RELAXED);
}

/* orders this thread's non-temporal stores before what follows (the pool's completion) */
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
ACLK_INLINE void aclk_nt_fence(void)
{
    __builtin_ia32_sfence();
}
#elif defined(__i386__)
ACLK_INLINE void aclk_nt_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#else
ACLK_INLINE void aclk_nt_fence(void)
{
    __atomic_thread_fence(__ATOMIC_RELEASE); /* no non-temporal stores are made here */
}
#endif

/* ------------------------------------------------------------------- array helpers ---- */

/* Below this many elements the scalar loops run inline: a table call is not worth it. */
#define ACLK_CVT_INLINE_MAX 16

ACLK_INLINE void aclk_f16_to_f32_n(const uint16_t *restrict src, float *restrict dst,
                                     int64_t n)
{
    if (n >= ACLK_CVT_INLINE_MAX) {
        aclk_cvt()->f16_to_f32(src, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = aclk_f16_to_f32(src[i]);
}

ACLK_INLINE void aclk_f32_to_f16_n(const float *restrict src, uint16_t *restrict dst,
                                     int64_t n)
{
    if (n >= ACLK_CVT_INLINE_MAX) {
        aclk_cvt()->f32_to_f16(src, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = aclk_f32_to_f16(src[i]);
}

ACLK_INLINE void aclk_bf16_to_f32_n(const uint16_t *restrict src, float *restrict dst,
                                      int64_t n)
{
    if (n >= ACLK_CVT_INLINE_MAX) {
        aclk_cvt()->bf16_to_f32(src, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = aclk_bf16_to_f32(src[i]);
}

ACLK_INLINE void aclk_f32_to_bf16_n(const float *restrict src,
                                      uint16_t *restrict dst, int64_t n)
{
    if (n >= ACLK_CVT_INLINE_MAX) {
        aclk_cvt()->f32_to_bf16(src, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = aclk_f32_to_bf16(src[i]);
}

/* dst[0, n) = src[0, n) with non-temporal stores where the level has them; dst == src is a
   no-op, other overlaps are not allowed */
ACLK_INLINE void aclk_copy_f32_nt(float *dst, const float *src, int64_t n)
{
    if (dst != src && n > 0)
        aclk_cvt()->copy_f32_nt(dst, src, n);
}

/* Chunks of a float-ish tensor (float32, float16, bfloat16) seen as float32: widen n elements
   at element offset off into buf and return it; float32 is read in place (buf unused). */
ACLK_INLINE const float *aclk_load_f32(int dt, const void *base, int64_t off, int64_t n,
                                       float *buf)
{
    if (dt == ACLK_F32)
        return (const float *)base + off;
    if (dt == ACLK_F16)
        aclk_f16_to_f32_n((const uint16_t *)base + off, buf, n);
    else
        aclk_bf16_to_f32_n((const uint16_t *)base + off, buf, n);
    return buf;
}

/* narrow n float32 values to element offset off, rounding to nearest even (a no-op for float32
   written in place) */
ACLK_INLINE void aclk_store_f32(int dt, void *base, int64_t off, int64_t n, const float *src)
{
    if (dt == ACLK_F32) {
        float *d = (float *)base + off;
        if (d != src)
            memcpy(d, src, (size_t)n * sizeof(float));
    } else if (dt == ACLK_F16) {
        aclk_f32_to_f16_n(src, (uint16_t *)base + off, n);
    } else {
        aclk_f32_to_bf16_n(src, (uint16_t *)base + off, n);
    }
}

/* aclk_store_f32 with non-temporal stores: the same bytes; for outputs aclk_use_nt() picked.
   Only whole 64-byte lines inside the span are streamed; the partial lines at either end (and
   spans too short to hold a whole line) are stored normally. A line that gets a normal store
   and a streaming store (here, or from the neighbouring span of another block or thread) is
   read in and written twice: column blocks of short runs at a stride that is not a whole
   number of lines did that at both ends of every run: bfloat16 softmax over dim 1 of
   (8, 500, 4100) (256-byte runs), 2 threads, cold, 17.3 -> 10.0 ms with whole lines only.
   Call aclk_nt_fence() once before the chunk returns. */
ACLK_INLINE void aclk_store_f32_nt(int dt, void *base, int64_t off, int64_t n,
                                   const float *src)
{
    const int64_t es = dt == ACLK_F32 ? 4 : 2, per_line = 64 / es;
    const uintptr_t a = (uintptr_t)((char *)base + off * es);
    int64_t h = a % (uintptr_t)es ? n : (int64_t)((64 - a % 64) % 64) / es;
    if (h > n)
        h = n;
    const int64_t body = (n - h) / per_line * per_line;
    if (body < 2 * per_line) {
        aclk_store_f32(dt, base, off, n, src);
        return;
    }
    aclk_store_f32(dt, base, off, h, src);
    if (dt == ACLK_F32)
        aclk_copy_f32_nt((float *)base + off + h, src + h, body);
    else if (dt == ACLK_F16)
        aclk_cvt()->f32_to_f16_nt(src + h, (uint16_t *)base + off + h, body);
    else
        aclk_cvt()->f32_to_bf16_nt(src + h, (uint16_t *)base + off + h, body);
    aclk_store_f32(dt, base, off + h + body, n - h - body, src + h + body);
}

#endif /* ACLK_DTYPE_H */
