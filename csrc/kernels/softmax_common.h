/*
 * softmax_common.h: the pieces the softmax-family kernels share (softmax.c, the strict kernels;
 * softmax_ex.c, oneDNN's attributes; softmax_relaxed.c, the relaxed kernels): the replica folds
 * of the column reductions and the dispatch of a function specialised on (bfloat16, log) as
 * constants. Static inline, so each file (and each of its per-level versions) gets its own copy at
 * its vector width; every fold adds or compares in a fixed order, so sharing them changes no
 * bit (tests/data/strict_digests.json pins the strict kernels' outputs). Include after the
 * contraction-off pragmas of the including file.
 */
#ifndef ACLK_SOFTMAX_COMMON_H
#define ACLK_SOFTMAX_COMMON_H

#include <stdint.h>
#include <string.h>

#include "aclnn_emu.h"
#include "dtype.h"

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* ------------------------------------------------------------------ one quiet NaN ----
 * Every NaN the strict kernels write (softmax.c; softmax_ex.c's float outputs) is the one
 * positive quiet NaN with no payload (float32 0x7FC00000; narrowed, float16 0x7E00 and bfloat16
 * 0x7FC0; float64 0x7FF8000000000000), so that a result keeps every bit at every ISA level and on every architecture. Which of several
 * NaN operands an add, multiply or max passes on depends on the operand order the compiler picks
 * at each vector width, and an invalid operation's default NaN is the hardware's (x86
 * 0xFFC00000, Arm 0x7FC00000). Each output value goes through one compare and one blend on its
 * way to the store or the narrowing (mask selects, no branch, in the vectorised loops). */
#define QNAN_BITS_F32 0x7FC00000u
#define QNAN_BITS_F64 0x7FF8000000000000ull

ACLK_INLINE float qnan_f32(float v)
{
    return aclk_sel_f32(v != v, aclk_bits_f32(QNAN_BITS_F32), v);
}

ACLK_INLINE double qnan_f64(double v)
{
    const uint64_t m = 0ull - (uint64_t)(v != v);
    return aclk_bits_f64((QNAN_BITS_F64 & m) | (aclk_f64_bits(v) & ~m));
}

/* F(args..., bf, lg) with bf (bfloat16, else float16) and lg (the log flag) as constants taken
   from c (c->dt, c->lg), so that each of the four is compiled without the choices in its
   loops */
#define BF_LG_CALL(F, c, ...)                                                                 \
    ((c)->lg ? ((c)->dt == ACLK_BF16 ? F(__VA_ARGS__, 1, 1) : F(__VA_ARGS__, 0, 1))           \
             : ((c)->dt == ACLK_BF16 ? F(__VA_ARGS__, 1, 0) : F(__VA_ARGS__, 0, 0)))

/* Column reductions keep R replicas of w per-column accumulators (R a-rows of a segment at
   once); the folds below bring them into the first replica by a halving tree, whose order is
   part of the results' bits. */

/* fold R replicas of w columns into the first one (halving tree), by max or by sum, in float
   or double */
#define FOLD_DEF(NAME, T, STEP)                                                                \
    ACLK_INLINE void NAME(T *acc, int64_t R, int64_t w)                                        \
    {                                                                                          \
        while (R > 1) {                                                                        \
            int64_t h = R / 2, keep = R - h;                                                   \
            T *restrict lo = acc;                                                              \
            const T *restrict hi = acc + keep * w;                                             \
            for (int64_t k = 0; k < h * w; k++)                                                \
                STEP;                                                                          \
            R = keep;                                                                          \
        }                                                                                      \
    }
FOLD_DEF(fold_max_f, float, lo[k] = (hi[k] > lo[k]) ? hi[k] : lo[k])
FOLD_DEF(fold_max_d, double, lo[k] = (hi[k] > lo[k]) ? hi[k] : lo[k])
FOLD_DEF(fold_sum_f, float, lo[k] += hi[k])
FOLD_DEF(fold_sum_d, double, lo[k] += hi[k])
#undef FOLD_DEF

/* copy the first w elements into replicas 1 .. R-1 */
ACLK_INLINE void replicate(void *acc, int64_t R, int64_t w, size_t esz)
{
    char *p = (char *)acc;
    int64_t total = R * w, have = w;
    while (have < total) {
        int64_t c = min64(have, total - have);
        memcpy(p + have * (int64_t)esz, p, (size_t)c * esz);
        have += c;
    }
}

#if defined(ACLK_X86) /* (cvt_x86.h included before this header) */
/* d[0, n) = s[0, n) of 16-bit elements, streamed from the first 64-byte boundary of d (whole
   lines only): the streamed outputs of the 16-bit kernels */
ACLK_AVX2_INLINE void stream16(uint16_t *d, const uint16_t *s, int64_t n)
{
    int64_t k = aclk_nt_head(d, 2, 64, n);
    memcpy(d, s, (size_t)k * 2);
    for (; k + 32 <= n; k += 32) {
        _mm256_stream_si256((__m256i *)(d + k), _mm256_loadu_si256((const __m256i *)(s + k)));
        _mm256_stream_si256((__m256i *)(d + k + 16),
                            _mm256_loadu_si256((const __m256i *)(s + k + 16)));
    }
    memcpy(d + k, s + k, (size_t)(n - k) * 2);
}
#endif

#endif /* ACLK_SOFTMAX_COMMON_H */
