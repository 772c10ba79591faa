/*
 * cast.c: elementwise conversion between float32, float16, bfloat16, float64 and int32.
 *
 * Every result is a single correct rounding of the source value (round to nearest even;
 * overflow -> +-inf; NaN stays NaN):
 *   - 16-bit float -> anything goes through float32, which holds it exactly;
 *   - float64 -> float16 / bfloat16 rounds once (via float32 rounded to odd, see dtype.h);
 *   - int32 -> float16 goes through float32: any int32 that float32 cannot hold exactly is
 *     far beyond float16's range, so the result is still right (+-inf);
 *   - int32 -> bfloat16 goes through float64 (exact) for the same single rounding.
 * float -> int32 truncates toward zero, NaN -> 0, saturating at INT32_MIN / INT32_MAX.
 * The same dtype on both sides is a plain copy.
 *
 * The elements are split over the kernel threads (aclk_parallel_for, GRAIN elements a chunk).
 * float32 <-> float16 / bfloat16 go through the conversion table of the ISA level in use
 * (dtype.h: F16C / AVX2 / AVX-512 or the scalar loops; the same bits on every level), float16
 * <-> bfloat16 through registers (cvt_x86.h) or, at the generic level, a float32 block on the
 * stack; the other pairs run the scalar loops below. Outputs larger than half the last-level
 * cache are written with non-temporal stores where the level has them (aclk_use_nt), the
 * scalar loops' through a stack block.
 */
#include <string.h>

#include "aclk_pool.h"
#include "aclnn_emu.h"
#include "cvt_x86.h"
#include "dtype.h"

/* elements per parallel chunk, and per block of the 16-bit <-> 16-bit pairs (in float32, on
   the stack) */
#define GRAIN ((int64_t)1 << 16)
#define BLOCK 2048

static int64_t elem_size(int dt)
{
    switch (dt) {
    case ACLK_F32: return 4;
    case ACLK_F16: return 2;
    case ACLK_BF16: return 2;
    case ACLK_F64: return 8;
    case ACLK_I32: return 4;
    default: return 0;
    }
}

#define CAST_LOOP(ST, DT, EXPR)                                    \
    do {                                                           \
        const ST *s_ = (const ST *)src;                            \
        DT *d_ = (DT *)dst;                                        \
        for (int64_t i = i0; i < i1; i++) {                        \
            ST v = s_[i];                                          \
            d_[i] = (EXPR);                                        \
        }                                                          \
    } while (0)

#define PAIR(a, b) ((a) * 64 + (b))

/* elements [i0, i1) with the scalar conversions; -1 for a pair it does not know */
static int cast_scalar(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t i0,
                       int64_t i1)
{
    switch (PAIR(src_dtype, dst_dtype)) {
    /* from float32 */
    case PAIR(ACLK_F32, ACLK_F16): CAST_LOOP(float, uint16_t, aclk_f32_to_f16(v)); break;
    case PAIR(ACLK_F32, ACLK_BF16): CAST_LOOP(float, uint16_t, aclk_f32_to_bf16(v)); break;
    case PAIR(ACLK_F32, ACLK_F64): CAST_LOOP(float, double, (double)v); break;
    case PAIR(ACLK_F32, ACLK_I32): CAST_LOOP(float, int32_t, aclk_f32_to_i32(v)); break;
    /* from float16 */
    case PAIR(ACLK_F16, ACLK_F32): CAST_LOOP(uint16_t, float, aclk_f16_to_f32(v)); break;
    case PAIR(ACLK_F16, ACLK_BF16):
        CAST_LOOP(uint16_t, uint16_t, aclk_f32_to_bf16(aclk_f16_to_f32(v)));
        break;
    case PAIR(ACLK_F16, ACLK_F64): CAST_LOOP(uint16_t, double, (double)aclk_f16_to_f32(v)); break;
    case PAIR(ACLK_F16, ACLK_I32):
        CAST_LOOP(uint16_t, int32_t, aclk_f32_to_i32(aclk_f16_to_f32(v)));
        break;
    /* from bfloat16 */
    case PAIR(ACLK_BF16, ACLK_F32): CAST_LOOP(uint16_t, float, aclk_bf16_to_f32(v)); break;
    case PAIR(ACLK_BF16, ACLK_F16):
        CAST_LOOP(uint16_t, uint16_t, aclk_f32_to_f16(aclk_bf16_to_f32(v)));
        break;
    case PAIR(ACLK_BF16, ACLK_F64):
        CAST_LOOP(uint16_t, double, (double)aclk_bf16_to_f32(v));
        break;
    case PAIR(ACLK_BF16, ACLK_I32):
        CAST_LOOP(uint16_t, int32_t, aclk_f32_to_i32(aclk_bf16_to_f32(v)));
        break;
    /* from float64 */
    case PAIR(ACLK_F64, ACLK_F32): CAST_LOOP(double, float, (float)v); break;
    case PAIR(ACLK_F64, ACLK_F16): CAST_LOOP(double, uint16_t, aclk_f64_to_f16(v)); break;
    case PAIR(ACLK_F64, ACLK_BF16): CAST_LOOP(double, uint16_t, aclk_f64_to_bf16(v)); break;
    case PAIR(ACLK_F64, ACLK_I32): CAST_LOOP(double, int32_t, aclk_f64_to_i32(v)); break;
    /* from int32 */
    case PAIR(ACLK_I32, ACLK_F32): CAST_LOOP(int32_t, float, (float)v); break;
    case PAIR(ACLK_I32, ACLK_F16): CAST_LOOP(int32_t, uint16_t, aclk_f32_to_f16((float)v)); break;
    case PAIR(ACLK_I32, ACLK_BF16):
        CAST_LOOP(int32_t, uint16_t, aclk_f64_to_bf16((double)v));
        break;
    case PAIR(ACLK_I32, ACLK_F64): CAST_LOOP(int32_t, double, (double)v); break;
    default:
        return -1;
    }
    return 0;
}

typedef struct {
    int sdt, ddt, nt;
    const void *src;
    void *dst;
} cast_job;

/* [i0, i1) of a 16-bit (float16 / bfloat16) tensor widened into float32 */
static void widen(int dt, const void *src, int64_t i0, int64_t n, float *dst)
{
    const aclk_cvt_ops *t = aclk_cvt();
    const uint16_t *s = (const uint16_t *)src + i0;
    (dt == ACLK_F16 ? t->f16_to_f32 : t->bf16_to_f32)(s, dst, n);
}

static void narrow(int dt, int nt, const float *src, void *dst, int64_t i0, int64_t n)
{
    const aclk_cvt_ops *t = aclk_cvt();
    uint16_t *d = (uint16_t *)dst + i0;
    if (dt == ACLK_F16)
        (nt ? t->f32_to_f16_nt : t->f32_to_f16)(src, d, n);
    else
        (nt ? t->f32_to_bf16_nt : t->f32_to_bf16)(src, d, n);
}

static int is16(int dt)
{
    return dt == ACLK_F16 || dt == ACLK_BF16;
}

/* dst[0, bytes) = src with streaming stores (every element size is a multiple of 2 bytes:
   whole floats, then at most one short) */
static void copy_bytes_nt(char *d, const char *s, int64_t bytes)
{
    int64_t nf = bytes / 4;
    if ((uintptr_t)d % 4 == 0 && (uintptr_t)s % 4 == 0) {
        aclk_copy_f32_nt((float *)(void *)d, (const float *)(const void *)s, nf);
        memcpy(d + nf * 4, s + nf * 4, (size_t)(bytes - nf * 4));
    } else {
        memcpy(d, s, (size_t)bytes);
    }
}

#ifdef ACLK_X86
/* float16 <-> bfloat16 in registers. float16 -> bfloat16 may widen with vcvtph2ps as it is: a
   signaling NaN it quiets only differs in the float's quiet bit, which the bfloat16 narrowing
   of a NaN sets anyway. */
ACLK_AVX2_INLINE void x16_avx2_run(int from_f16, int nt, const uint16_t *s, uint16_t *d,
                                   int64_t n)
{
    int64_t i = nt ? aclk_nt_head(d, 2, 32, n) : 0;
    for (int64_t k = 0; k < i; k++)
        d[k] = from_f16 ? aclk_f32_to_bf16(aclk_f16_to_f32(s[k]))
                        : aclk_f32_to_f16(aclk_bf16_to_f32(s[k]));
    for (; i + 16 <= n; i += 16) {
        __m256i r;
        if (from_f16)
            r = aclk_avx2_cvt2_bf16(aclk_avx2_ld_f16_raw(s + i), aclk_avx2_ld_f16_raw(s + i + 8));
        else
            r = aclk_avx2_cvt2_f16(aclk_avx2_ld_bf16(s + i), aclk_avx2_ld_bf16(s + i + 8));
        if (nt)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    for (; i < n; i++)
        d[i] = from_f16 ? aclk_f32_to_bf16(aclk_f16_to_f32(s[i]))
                        : aclk_f32_to_f16(aclk_bf16_to_f32(s[i]));
}

ACLK_TARGET_AVX2 static void x16_avx2(int from_f16, int nt, const uint16_t *s, uint16_t *d,
                                      int64_t n)
{
    if (from_f16)
        nt ? x16_avx2_run(1, 1, s, d, n) : x16_avx2_run(1, 0, s, d, n);
    else
        nt ? x16_avx2_run(0, 1, s, d, n) : x16_avx2_run(0, 0, s, d, n);
}

ACLK_AVX512_INLINE void x16_avx512_run(int from_f16, int nt, const uint16_t *s, uint16_t *d,
                                       int64_t n)
{
    int64_t i = nt ? aclk_nt_head(d, 2, 32, n) : 0;
    for (int64_t k = 0; k < i; k++)
        d[k] = from_f16 ? aclk_f32_to_bf16(aclk_f16_to_f32(s[k]))
                        : aclk_f32_to_f16(aclk_bf16_to_f32(s[k]));
    for (; i + 16 <= n; i += 16) {
        __m256i r = from_f16 ? aclk_avx512_cvt_bf16(aclk_avx512_ld_f16_raw(s + i))
                             : aclk_avx512_cvt_f16(aclk_avx512_ld_bf16(s + i));
        if (nt)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    for (; i < n; i++)
        d[i] = from_f16 ? aclk_f32_to_bf16(aclk_f16_to_f32(s[i]))
                        : aclk_f32_to_f16(aclk_bf16_to_f32(s[i]));
}

ACLK_TARGET_AVX512 static void x16_avx512(int from_f16, int nt, const uint16_t *s, uint16_t *d,
                                          int64_t n)
{
    if (from_f16)
        nt ? x16_avx512_run(1, 1, s, d, n) : x16_avx512_run(1, 0, s, d, n);
    else
        nt ? x16_avx512_run(0, 1, s, d, n) : x16_avx512_run(0, 0, s, d, n);
}
#endif

static void cast_chunk(void *ctx, int64_t i0, int64_t i1)
{
    const cast_job *j = (const cast_job *)ctx;
    const int64_t n = i1 - i0;
    const int64_t es = elem_size(j->sdt), des = elem_size(j->ddt);
#ifdef ACLK_X86
    const int level = aclk_cvt()->level;
#endif
    if (j->sdt == j->ddt) {
        char *d = (char *)j->dst + i0 * es;
        const char *s = (const char *)j->src + i0 * es;
        if (j->nt)
            copy_bytes_nt(d, s, n * es);
        else
            memcpy(d, s, (size_t)(n * es));
    } else if (j->sdt == ACLK_F32 && is16(j->ddt)) {
        narrow(j->ddt, j->nt, (const float *)j->src + i0, j->dst, i0, n);
    } else if (is16(j->sdt) && j->ddt == ACLK_F32 && !j->nt) {
        widen(j->sdt, j->src, i0, n, (float *)j->dst + i0);
#ifdef ACLK_X86
    } else if (is16(j->sdt) && is16(j->ddt) && level != ACLK_ISA_GENERIC) {
        const uint16_t *s = (const uint16_t *)j->src + i0;
        uint16_t *d = (uint16_t *)j->dst + i0;
        if (level == ACLK_ISA_AVX512)
            x16_avx512(j->sdt == ACLK_F16, j->nt, s, d, n);
        else
            x16_avx2(j->sdt == ACLK_F16, j->nt, s, d, n);
#endif
    } else if (is16(j->sdt) && (is16(j->ddt) || j->ddt == ACLK_F32)) {
        /* through a float32 block: 16-bit -> 16-bit, or -> float32 with streaming stores */
        float buf[BLOCK];
        for (int64_t b = i0; b < i1; b += BLOCK) {
            int64_t m = i1 - b < BLOCK ? i1 - b : BLOCK;
            widen(j->sdt, j->src, b, m, buf);
            if (j->ddt == ACLK_F32)
                aclk_copy_f32_nt((float *)j->dst + b, buf, m);
            else
                narrow(j->ddt, j->nt, buf, j->dst, b, m);
        }
    } else if (j->nt) {
        /* the scalar loops into a stack block, streamed out */
        double buf[BLOCK];
        for (int64_t b = i0; b < i1; b += BLOCK) {
            int64_t m = i1 - b < BLOCK ? i1 - b : BLOCK;
            const char *s = (const char *)j->src + b * es;
            cast_scalar(j->sdt, s, j->ddt, buf, 0, m);
            copy_bytes_nt((char *)j->dst + b * des, (const char *)buf, m * des);
        }
    } else {
        cast_scalar(j->sdt, j->src, j->ddt, j->dst, i0, i1);
    }
    if (j->nt)
        aclk_nt_fence();
}

int aclk_cast(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n)
{
    const int64_t ses = elem_size(src_dtype), des = elem_size(dst_dtype);
    if (ses == 0 || des == 0)
        return -1;
    if (n <= 0)
        return 0;
    const char *s = (const char *)src, *d = (const char *)dst;
    if (s < d + n * des && d < s + n * ses) {
        /* overlapping (in place): one memmove, or the scalar loop in element order on one
           thread, as before the kernels had threads */
        if (src_dtype != dst_dtype)
            return cast_scalar(src_dtype, src, dst_dtype, dst, 0, n);
        if (src != dst)
            memmove(dst, src, (size_t)(n * ses));
        return 0;
    }
    cast_job j = {src_dtype, dst_dtype, aclk_use_nt(n * des), src, dst};
    aclk_parallel_for(n, GRAIN, cast_chunk, &j);
    return 0;
}
