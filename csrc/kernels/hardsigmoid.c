/*
 * hardsigmoid.c: y = clamp(x*alpha + beta, 0, 1) and its gradient.
 *
 * float32, float16, bfloat16 and int32 compute in float32 with a = (float)alpha,
 * b = (float)beta, l = x*a + b as one rounded multiply then one rounded add, as CANN's
 * hard-sigmoid and PyTorch compute it (with alpha = 1/6, beta = 0.5 and x = -3 this gives
 * l == 0 exactly). float64 computes in float64 with alpha and beta as given.
 *
 *   forward:  y = l <= 0 ? 0 : (l >= 1 ? 1 : l)        (a NaN l stays NaN)
 *   backward: out = (0 < l && l < 1) ? grad*a : 0       (NaN or +-inf x gives 0)
 *
 * int32 results are truncated toward zero (NaN -> 0).
 *
 * The "vector" implementation splits the elements over the kernel threads (aclk_parallel_for,
 * chunks of GRAIN elements, so a small tensor stays on the calling thread) and runs each chunk
 * at the ISA level picked at load (isa.c):
 *   - generic: the scalar loops below (mask selects, dtype.h, so the 32-bit ones vectorise for
 *     the baseline; the float64 ones use ?:);
 *   - avx2 / avx512: 8 / 16 floats (4 / 8 doubles) per step in registers: 16-bit inputs
 *     widened with F16C / a shift, int32 converted, the same float32 (float64) operations as
 *     hs_f / hsg_f (hs_d / hsg_d) - one rounded multiply, one rounded add, ordered compares and
 *     selects - and the result narrowed as dtype.h does (cvt_x86.h); unaligned heads and the
 *     tails of a chunk go through the scalar loops.
 * Outputs larger than half the last-level cache (aclk_use_nt) are written with non-temporal
 * stores, unless the output is one of the inputs (in place). Every level and thread count gives
 * the same bits: the operations are elementwise and each is the same IEEE operation.
 * (A signaling float16 NaN input is quieted by vcvtph2ps where the scalar widening keeps it,
 * but the first multiply quiets it in both, with the same payload: the same bits again.)
 * Each entry point runs the first implementation of its list that takes the dtype: the one
 * above, then the plain reference kernel (reference.c), which computes the same bits.
 */

/* Floating-point contraction off for this file (before any #include, so that the inline
 * helpers of the headers get it too): x*a + b must be two roundings, not one fused
 * multiply-add, wherever the compiler may use FMA (-march with FMA, -mfma, target attributes).
 * Fused, l differs in its last bit for many x, which changes forward outputs (alpha = 1/6,
 * beta = 1/2, x = nextafter(-3, 0): l = 2^-25 rounded twice, 0x1.aaaaacp-26 fused) and, for
 * some alpha and beta, the backward mask (alpha = 0.2, beta = 0.5, x = nextafter(2.5, 0):
 * l = 1, blocked, rounded twice; 1 - 2^-24, active, fused). gcc ignores
 * "#pragma STDC FP_CONTRACT" in C (gcc 12), hence its own pragma. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "aclk_pool.h"
#include "aclnn_emu.h"
#include "cvt_x86.h"
#include "dtype.h"

/* elements per parallel chunk: 64 Ki (256 KiB of float32), so that tensors up to that size run
   on the calling thread alone and larger ones give every thread several chunks */
#define GRAIN ((int64_t)1 << 16)

static inline float hs_f(float x, float a, float b)
{
    float l = x * a;
    l = l + b;
    float r = aclk_sel_f32(l >= 1.0f, 1.0f, l);
    return aclk_sel_f32(l <= 0.0f, 0.0f, r);
}

static inline double hs_d(double x, double a, double b)
{
    double l = x * a;
    l = l + b;
    double r = (l >= 1.0) ? 1.0 : l;
    return (l <= 0.0) ? 0.0 : r;
}

static inline float hsg_f(float g, float x, float a, float b)
{
    float l = x * a;
    l = l + b;
    return aclk_sel_f32((0.0f < l) & (l < 1.0f), g * a, 0.0f);
}

static inline double hsg_d(double g, double x, double a, double b)
{
    double l = x * a;
    l = l + b;
    return ((0.0 < l) & (l < 1.0)) ? g * a : 0.0;
}

/* ------------------------------------------------------------- scalar loops ---- *
 * Elements [i0, i1). The generic level runs whole chunks through them, the vector levels their
 * heads and tails. */

static void fwd_scalar(int dtype, const void *x, void *y, int64_t i0, int64_t i1, double alpha,
                       double beta)
{
    const float a = (float)alpha, b = (float)beta;
    switch (dtype) {
    case ACLK_F32: {
        const float *s = (const float *)x;
        float *d = (float *)y;
        for (int64_t i = i0; i < i1; i++)
            d[i] = hs_f(s[i], a, b);
        break;
    }
    case ACLK_F16: {
        const uint16_t *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)y;
        for (int64_t i = i0; i < i1; i++)
            d[i] = aclk_f32_to_f16(hs_f(aclk_f16_to_f32(s[i]), a, b));
        break;
    }
    case ACLK_BF16: {
        const uint16_t *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)y;
        for (int64_t i = i0; i < i1; i++)
            d[i] = aclk_f32_to_bf16(hs_f(aclk_bf16_to_f32(s[i]), a, b));
        break;
    }
    case ACLK_I32: {
        const int32_t *s = (const int32_t *)x;
        int32_t *d = (int32_t *)y;
        for (int64_t i = i0; i < i1; i++)
            d[i] = aclk_f32_to_i32(hs_f((float)s[i], a, b));
        break;
    }
    default: {
        const double *s = (const double *)x;
        double *d = (double *)y;
        for (int64_t i = i0; i < i1; i++)
            d[i] = hs_d(s[i], alpha, beta);
        break;
    }
    }
}

static void bwd_scalar(int dtype, const void *grad, const void *x, void *out, int64_t i0,
                       int64_t i1, double alpha, double beta)
{
    const float a = (float)alpha, b = (float)beta;
    switch (dtype) {
    case ACLK_F32: {
        const float *g = (const float *)grad, *s = (const float *)x;
        float *d = (float *)out;
        for (int64_t i = i0; i < i1; i++)
            d[i] = hsg_f(g[i], s[i], a, b);
        break;
    }
    case ACLK_F16: {
        const uint16_t *g = (const uint16_t *)grad, *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)out;
        for (int64_t i = i0; i < i1; i++)
            d[i] = aclk_f32_to_f16(hsg_f(aclk_f16_to_f32(g[i]), aclk_f16_to_f32(s[i]), a, b));
        break;
    }
    case ACLK_BF16: {
        const uint16_t *g = (const uint16_t *)grad, *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)out;
        for (int64_t i = i0; i < i1; i++)
            d[i] = aclk_f32_to_bf16(
                hsg_f(aclk_bf16_to_f32(g[i]), aclk_bf16_to_f32(s[i]), a, b));
        break;
    }
    default: {
        const double *g = (const double *)grad, *s = (const double *)x;
        double *d = (double *)out;
        for (int64_t i = i0; i < i1; i++)
            d[i] = hsg_d(g[i], s[i], alpha, beta);
        break;
    }
    }
}

static int64_t esize(int dtype)
{
    return dtype == ACLK_F64 ? 8 : (dtype == ACLK_F16 || dtype == ACLK_BF16) ? 2 : 4;
}

/* one call's work, shared by its chunks */
typedef struct {
    int dtype, level, nt;
    const void *grad, *x;
    void *y;
    double alpha, beta;
} hs_job;

#ifdef ACLK_X86

/* -------------------------------------------------------------------- AVX2 ---- */

ACLK_AVX2_INLINE __m256 avx2_ld(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case ACLK_F16: return aclk_avx2_ld_f16_raw((const uint16_t *)p + i);
    case ACLK_BF16: return aclk_avx2_ld_bf16((const uint16_t *)p + i);
    case ACLK_I32:
        return _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)((const int32_t *)p + i)));
    default: return _mm256_loadu_ps((const float *)p + i);
    }
}

/* aclk_f32_to_i32: truncate, NaN -> 0, saturate (vcvttps2dq gives INT32_MIN for NaN and out of
   range, which is already right below -2^31) */
ACLK_AVX2_INLINE __m256i avx2_to_i32(__m256 v)
{
    __m256i r = _mm256_cvttps_epi32(v);
    __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    __m256 big = _mm256_cmp_ps(v, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ);
    r = _mm256_andnot_si256(_mm256_castps_si256(nan), r);
    return _mm256_blendv_epi8(r, _mm256_set1_epi32(INT32_MAX), _mm256_castps_si256(big));
}

/* load 16 elements at i into v0, v1: in element order (v0: 0-7, v1: 8-15), except bfloat16,
   which comes in the unpack's lane order that avx2_st2 undoes (the kernels are elementwise) */
ACLK_AVX2_INLINE void avx2_ld2(int dt, const void *p, int64_t i, __m256 *v0, __m256 *v1)
{
    if (dt == ACLK_BF16) {
        aclk_avx2_ld2_bf16_lanes((const uint16_t *)p + i, v0, v1);
    } else {
        *v0 = avx2_ld(dt, p, i);
        *v1 = avx2_ld(dt, p, i + 8);
    }
}

/* store 16 results (v0 then v1, in avx2_ld2's order) at element i */
ACLK_AVX2_INLINE void avx2_st2(int dt, int nt, void *p, int64_t i, __m256 v0, __m256 v1)
{
    if (dt == ACLK_F16 || dt == ACLK_BF16) {
        __m256i r = dt == ACLK_F16 ? aclk_avx2_cvt2_f16(v0, v1) : aclk_avx2_cvt2_bf16_lanes(v0, v1);
        __m256i *d = (__m256i *)((uint16_t *)p + i);
        if (nt)
            _mm256_stream_si256(d, r);
        else
            _mm256_storeu_si256(d, r);
    } else if (dt == ACLK_I32) {
        __m256i r0 = avx2_to_i32(v0), r1 = avx2_to_i32(v1);
        __m256i *d = (__m256i *)((int32_t *)p + i);
        if (nt) {
            _mm256_stream_si256(d, r0);
            _mm256_stream_si256(d + 1, r1);
        } else {
            _mm256_storeu_si256(d, r0);
            _mm256_storeu_si256(d + 1, r1);
        }
    } else {
        float *d = (float *)p + i;
        if (nt) {
            _mm256_stream_ps(d, v0);
            _mm256_stream_ps(d + 8, v1);
        } else {
            _mm256_storeu_ps(d, v0);
            _mm256_storeu_ps(d + 8, v1);
        }
    }
}

/* hs_f / hsg_f on 8 lanes. Forward: vminps(1, l) is "1 < l ? 1 : l", which is 1 for l >= 1
   (l == 1 is 1 either way) and l otherwise, NaN included (vminps returns its second operand
   when one is NaN); then lanes with l <= 0 become +0 (the mask "not l <= 0" is true for NaN). */
ACLK_AVX2_INLINE __m256 avx2_hs(__m256 x, __m256 a, __m256 b)
{
    __m256 l = _mm256_mul_ps(x, a);
    l = _mm256_add_ps(l, b);
    __m256 r = _mm256_min_ps(_mm256_set1_ps(1.0f), l);
    return _mm256_and_ps(_mm256_cmp_ps(l, _mm256_setzero_ps(), _CMP_NLE_UQ), r);
}

ACLK_AVX2_INLINE __m256 avx2_hsg(__m256 g, __m256 x, __m256 a, __m256 b)
{
    __m256 l = _mm256_mul_ps(x, a);
    l = _mm256_add_ps(l, b);
    __m256 m = _mm256_and_ps(_mm256_cmp_ps(l, _mm256_setzero_ps(), _CMP_GT_OQ),
                             _mm256_cmp_ps(l, _mm256_set1_ps(1.0f), _CMP_LT_OQ));
    return _mm256_and_ps(m, _mm256_mul_ps(g, a));
}

/* hs_d / hsg_d on 4 lanes (as avx2_hs) */
ACLK_AVX2_INLINE __m256d avx2_hs_d(__m256d x, __m256d a, __m256d b)
{
    __m256d l = _mm256_mul_pd(x, a);
    l = _mm256_add_pd(l, b);
    __m256d r = _mm256_min_pd(_mm256_set1_pd(1.0), l);
    return _mm256_and_pd(_mm256_cmp_pd(l, _mm256_setzero_pd(), _CMP_NLE_UQ), r);
}

ACLK_AVX2_INLINE __m256d avx2_hsg_d(__m256d g, __m256d x, __m256d a, __m256d b)
{
    __m256d l = _mm256_mul_pd(x, a);
    l = _mm256_add_pd(l, b);
    __m256d m = _mm256_and_pd(_mm256_cmp_pd(l, _mm256_setzero_pd(), _CMP_GT_OQ),
                              _mm256_cmp_pd(l, _mm256_set1_pd(1.0), _CMP_LT_OQ));
    return _mm256_and_pd(m, _mm256_mul_pd(g, a));
}

ACLK_AVX2_INLINE void avx2_st_d(int nt, double *p, __m256d v)
{
    if (nt)
        _mm256_stream_pd(p, v);
    else
        _mm256_storeu_pd(p, v);
}

/* [i0, i1) of one dtype; bwd: grad given. 16 elements a step (8 for float64); streaming
   stores need 32-byte aligned destinations: the head up to there is scalar. */
ACLK_AVX2_INLINE void avx2_run(int dt, int nt, int bwd, const hs_job *j, int64_t i0, int64_t i1)
{
    const int64_t es = esize(dt);
    const void *x = j->x, *g = j->grad;
    void *y = j->y;
    const double alpha = j->alpha, beta = j->beta;
    int64_t i = i0;
    if (nt) {
        i += aclk_nt_head((const char *)y + i0 * es, es, 32, i1 - i0);
        if (bwd)
            bwd_scalar(dt, g, x, y, i0, i, alpha, beta);
        else
            fwd_scalar(dt, x, y, i0, i, alpha, beta);
    }
    if (dt == ACLK_F64) {
        const __m256d a = _mm256_set1_pd(alpha), b = _mm256_set1_pd(beta);
        const double *xd = (const double *)x, *gd = (const double *)g;
        double *yd = (double *)y;
        for (; i + 8 <= i1; i += 8) {
            __m256d v0 = _mm256_loadu_pd(xd + i), v1 = _mm256_loadu_pd(xd + i + 4);
            if (bwd) {
                v0 = avx2_hsg_d(_mm256_loadu_pd(gd + i), v0, a, b);
                v1 = avx2_hsg_d(_mm256_loadu_pd(gd + i + 4), v1, a, b);
            } else {
                v0 = avx2_hs_d(v0, a, b);
                v1 = avx2_hs_d(v1, a, b);
            }
            avx2_st_d(nt, yd + i, v0);
            avx2_st_d(nt, yd + i + 4, v1);
        }
    } else {
        const __m256 a = _mm256_set1_ps((float)alpha), b = _mm256_set1_ps((float)beta);
        for (; i + 16 <= i1; i += 16) {
            __m256 v0, v1;
            avx2_ld2(dt, x, i, &v0, &v1);
            if (bwd) {
                __m256 g0, g1;
                avx2_ld2(dt, g, i, &g0, &g1);
                v0 = avx2_hsg(g0, v0, a, b);
                v1 = avx2_hsg(g1, v1, a, b);
            } else {
                v0 = avx2_hs(v0, a, b);
                v1 = avx2_hs(v1, a, b);
            }
            avx2_st2(dt, nt, y, i, v0, v1);
        }
    }
    if (bwd)
        bwd_scalar(dt, g, x, y, i, i1, alpha, beta);
    else
        fwd_scalar(dt, x, y, i, i1, alpha, beta);
}

#define DISPATCH_DT(RUN, BWD, J, I0, I1)                                              \
    switch ((J)->dtype) {                                                             \
    case ACLK_F32: (J)->nt ? RUN(ACLK_F32, 1, BWD, J, I0, I1)                         \
                           : RUN(ACLK_F32, 0, BWD, J, I0, I1); break;                 \
    case ACLK_F16: (J)->nt ? RUN(ACLK_F16, 1, BWD, J, I0, I1)                         \
                           : RUN(ACLK_F16, 0, BWD, J, I0, I1); break;                 \
    case ACLK_BF16: (J)->nt ? RUN(ACLK_BF16, 1, BWD, J, I0, I1)                       \
                            : RUN(ACLK_BF16, 0, BWD, J, I0, I1); break;               \
    case ACLK_I32: (J)->nt ? RUN(ACLK_I32, 1, BWD, J, I0, I1)                         \
                           : RUN(ACLK_I32, 0, BWD, J, I0, I1); break;                 \
    default: (J)->nt ? RUN(ACLK_F64, 1, BWD, J, I0, I1)                               \
                     : RUN(ACLK_F64, 0, BWD, J, I0, I1); break;                       \
    }

ACLK_TARGET_AVX2 static void fwd_avx2(const hs_job *j, int64_t i0, int64_t i1)
{
    DISPATCH_DT(avx2_run, 0, j, i0, i1)
}

ACLK_TARGET_AVX2 static void bwd_avx2(const hs_job *j, int64_t i0, int64_t i1)
{
    DISPATCH_DT(avx2_run, 1, j, i0, i1)
}

/* ----------------------------------------------------------------- AVX-512 ---- */

ACLK_AVX512_INLINE __m512 avx512_ld(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case ACLK_F16: return aclk_avx512_ld_f16_raw((const uint16_t *)p + i);
    case ACLK_BF16: return aclk_avx512_ld_bf16((const uint16_t *)p + i);
    case ACLK_I32:
        return _mm512_cvtepi32_ps(_mm512_loadu_si512((const void *)((const int32_t *)p + i)));
    default: return _mm512_loadu_ps((const float *)p + i);
    }
}

ACLK_AVX512_INLINE __m512i avx512_to_i32(__m512 v)
{
    __m512i r = _mm512_cvttps_epi32(v);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    __mmask16 big = _mm512_cmp_ps_mask(v, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_setzero_si512());
    return _mm512_mask_mov_epi32(r, big, _mm512_set1_epi32(INT32_MAX));
}

ACLK_AVX512_INLINE void avx512_st(int dt, int nt, void *p, int64_t i, __m512 v)
{
    if (dt == ACLK_F16 || dt == ACLK_BF16) {
        __m256i r = dt == ACLK_F16 ? aclk_avx512_cvt_f16(v) : aclk_avx512_cvt_bf16(v);
        __m256i *d = (__m256i *)((uint16_t *)p + i);
        if (nt)
            _mm256_stream_si256(d, r);
        else
            _mm256_storeu_si256(d, r);
    } else if (dt == ACLK_I32) {
        __m512i r = avx512_to_i32(v);
        void *d = (void *)((int32_t *)p + i);
        if (nt)
            _mm512_stream_si512(d, r);
        else
            _mm512_storeu_si512(d, r);
    } else {
        if (nt)
            _mm512_stream_ps((float *)p + i, v);
        else
            _mm512_storeu_ps((float *)p + i, v);
    }
}

/* as avx2_hs: 1 < l ? 1 : l, then +0 where l <= 0 */
ACLK_AVX512_INLINE __m512 avx512_hs(__m512 x, __m512 a, __m512 b)
{
    __m512 l = _mm512_mul_ps(x, a);
    l = _mm512_add_ps(l, b);
    __m512 r = _mm512_min_ps(_mm512_set1_ps(1.0f), l);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(l, _mm512_setzero_ps(), _CMP_NLE_UQ), r);
}

ACLK_AVX512_INLINE __m512 avx512_hsg(__m512 g, __m512 x, __m512 a, __m512 b)
{
    __m512 l = _mm512_mul_ps(x, a);
    l = _mm512_add_ps(l, b);
    __mmask16 m = _mm512_cmp_ps_mask(l, _mm512_setzero_ps(), _CMP_GT_OQ) &
                  _mm512_cmp_ps_mask(l, _mm512_set1_ps(1.0f), _CMP_LT_OQ);
    return _mm512_maskz_mov_ps(m, _mm512_mul_ps(g, a));
}

ACLK_AVX512_INLINE __m512d avx512_hs_d(__m512d x, __m512d a, __m512d b)
{
    __m512d l = _mm512_mul_pd(x, a);
    l = _mm512_add_pd(l, b);
    __m512d r = _mm512_min_pd(_mm512_set1_pd(1.0), l);
    return _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(l, _mm512_setzero_pd(), _CMP_NLE_UQ), r);
}

ACLK_AVX512_INLINE __m512d avx512_hsg_d(__m512d g, __m512d x, __m512d a, __m512d b)
{
    __m512d l = _mm512_mul_pd(x, a);
    l = _mm512_add_pd(l, b);
    __mmask8 m = _mm512_cmp_pd_mask(l, _mm512_setzero_pd(), _CMP_GT_OQ) &
                 _mm512_cmp_pd_mask(l, _mm512_set1_pd(1.0), _CMP_LT_OQ);
    return _mm512_maskz_mov_pd(m, _mm512_mul_pd(g, a));
}

/* as avx2_run; streaming stores of 64 bytes (32 for the 16-bit types), aligned as wide */
ACLK_AVX512_INLINE void avx512_run(int dt, int nt, int bwd, const hs_job *j, int64_t i0,
                                   int64_t i1)
{
    const int64_t es = esize(dt);
    int64_t i = i0;
    if (nt) {
        i += aclk_nt_head((const char *)j->y + i0 * es, es, es == 2 ? 32 : 64, i1 - i0);
        if (bwd)
            bwd_scalar(dt, j->grad, j->x, j->y, i0, i, j->alpha, j->beta);
        else
            fwd_scalar(dt, j->x, j->y, i0, i, j->alpha, j->beta);
    }
    if (dt == ACLK_F64) {
        const __m512d a = _mm512_set1_pd(j->alpha), b = _mm512_set1_pd(j->beta);
        const double *x = (const double *)j->x, *g = (const double *)j->grad;
        double *y = (double *)j->y;
        for (; i + 8 <= i1; i += 8) {
            __m512d v = _mm512_loadu_pd(x + i);
            v = bwd ? avx512_hsg_d(_mm512_loadu_pd(g + i), v, a, b) : avx512_hs_d(v, a, b);
            if (nt)
                _mm512_stream_pd(y + i, v);
            else
                _mm512_storeu_pd(y + i, v);
        }
    } else {
        const __m512 a = _mm512_set1_ps((float)j->alpha), b = _mm512_set1_ps((float)j->beta);
        /* bfloat16 32 at a time in the unpack's lane order, as avx2_ld2 / avx2_st2 */
        for (; dt == ACLK_BF16 && i + 32 <= i1; i += 32) {
            __m512 v0, v1;
            aclk_avx512_ld2_bf16_lanes((const uint16_t *)j->x + i, &v0, &v1);
            if (bwd) {
                __m512 g0, g1;
                aclk_avx512_ld2_bf16_lanes((const uint16_t *)j->grad + i, &g0, &g1);
                v0 = avx512_hsg(g0, v0, a, b);
                v1 = avx512_hsg(g1, v1, a, b);
            } else {
                v0 = avx512_hs(v0, a, b);
                v1 = avx512_hs(v1, a, b);
            }
            __m512i r = aclk_avx512_cvt2_bf16_lanes(v0, v1);
            __m256i *q = (__m256i *)((uint16_t *)j->y + i);
            if (nt) {
                _mm256_stream_si256(q, _mm512_castsi512_si256(r));
                _mm256_stream_si256(q + 1, _mm512_extracti64x4_epi64(r, 1));
            } else {
                _mm512_storeu_si512((void *)q, r);
            }
        }
        for (; i + 16 <= i1; i += 16) {
            __m512 v = avx512_ld(dt, j->x, i);
            v = bwd ? avx512_hsg(avx512_ld(dt, j->grad, i), v, a, b) : avx512_hs(v, a, b);
            avx512_st(dt, nt, j->y, i, v);
        }
    }
    if (bwd)
        bwd_scalar(dt, j->grad, j->x, j->y, i, i1, j->alpha, j->beta);
    else
        fwd_scalar(dt, j->x, j->y, i, i1, j->alpha, j->beta);
}

ACLK_TARGET_AVX512 static void fwd_avx512(const hs_job *j, int64_t i0, int64_t i1)
{
    DISPATCH_DT(avx512_run, 0, j, i0, i1)
}

ACLK_TARGET_AVX512 static void bwd_avx512(const hs_job *j, int64_t i0, int64_t i1)
{
    DISPATCH_DT(avx512_run, 1, j, i0, i1)
}

#endif /* ACLK_X86 */

/* --------------------------------------------------------------- chunks, threads ---- */

static void fwd_chunk(void *ctx, int64_t i0, int64_t i1)
{
    const hs_job *j = (const hs_job *)ctx;
    switch (j->level) {
#ifdef ACLK_X86
    case ACLK_ISA_AVX512: fwd_avx512(j, i0, i1); break;
    case ACLK_ISA_AVX2: fwd_avx2(j, i0, i1); break;
#endif
    default: fwd_scalar(j->dtype, j->x, j->y, i0, i1, j->alpha, j->beta); break;
    }
    if (j->nt)
        aclk_nt_fence();
}

static void bwd_chunk(void *ctx, int64_t i0, int64_t i1)
{
    const hs_job *j = (const hs_job *)ctx;
    switch (j->level) {
#ifdef ACLK_X86
    case ACLK_ISA_AVX512: bwd_avx512(j, i0, i1); break;
    case ACLK_ISA_AVX2: bwd_avx2(j, i0, i1); break;
#endif
    default: bwd_scalar(j->dtype, j->grad, j->x, j->y, i0, i1, j->alpha, j->beta); break;
    }
    if (j->nt)
        aclk_nt_fence();
}

static int fwd_fast(int dtype, const void *x, void *y, int64_t n, double alpha, double beta)
{
    if (n <= 0)
        return 0;
    hs_job j = {dtype, aclk_isa_level(), 0, NULL, x, y, alpha, beta};
    j.nt = y != x && aclk_use_nt(n * esize(dtype));
    aclk_parallel_for(n, GRAIN, fwd_chunk, &j);
    return 0;
}

static int bwd_fast(int dtype, const void *grad, const void *x, void *out, int64_t n,
                    double alpha, double beta)
{
    if (n <= 0)
        return 0;
    hs_job j = {dtype, aclk_isa_level(), 0, grad, x, out, alpha, beta};
    j.nt = out != x && out != grad && aclk_use_nt(n * esize(dtype));
    aclk_parallel_for(n, GRAIN, bwd_chunk, &j);
    return 0;
}

/* ------------------------------------------------------------------ entry points ---- *
 * The first implementation whose `accepts` takes the dtype runs; the reference comes last. A
 * dtype no implementation takes returns -1. */

typedef int (*fwd_fn)(int dtype, const void *x, void *y, int64_t n, double alpha, double beta);
typedef int (*bwd_fn)(int dtype, const void *grad, const void *x, void *out, int64_t n,
                      double alpha, double beta);

static int fwd_dtype(int dt, int64_t n)
{
    (void)n;
    return dt == ACLK_F32 || dt == ACLK_F16 || dt == ACLK_BF16 || dt == ACLK_I32 ||
           dt == ACLK_F64;
}

static int bwd_dtype(int dt, int64_t n)
{
    (void)n;
    return dt == ACLK_F32 || dt == ACLK_F16 || dt == ACLK_BF16 || dt == ACLK_F64;
}

static const struct {
    const char *name;
    int (*accepts)(int dtype, int64_t n);
    fwd_fn run;
} FWD[] = {
    {"vector", fwd_dtype, fwd_fast},
    {"reference", fwd_dtype, aclk_ref_hardsigmoid_fwd},
};

static const struct {
    const char *name;
    int (*accepts)(int dtype, int64_t n);
    bwd_fn run;
} BWD[] = {
    {"vector", bwd_dtype, bwd_fast},
    {"reference", bwd_dtype, aclk_ref_hardsigmoid_bwd},
};

#define NUM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int pick_fwd(int dtype, int64_t n)
{
    for (int i = 0; i < NUM(FWD); i++)
        if (FWD[i].accepts(dtype, n))
            return i;
    return -1;
}

static int pick_bwd(int dtype, int64_t n)
{
    for (int i = 0; i < NUM(BWD); i++)
        if (BWD[i].accepts(dtype, n))
            return i;
    return -1;
}

int aclk_hardsigmoid_fwd(int dtype, const void *x, void *y, int64_t n, double alpha, double beta)
{
    int i = pick_fwd(dtype, n);
    return i < 0 ? -1 : FWD[i].run(dtype, x, y, n, alpha, beta);
}

int aclk_hardsigmoid_bwd(int dtype, const void *grad, const void *x, void *out, int64_t n,
                         double alpha, double beta)
{
    int i = pick_bwd(dtype, n);
    return i < 0 ? -1 : BWD[i].run(dtype, grad, x, out, n, alpha, beta);
}

const char *aclk_hardsigmoid_fwd_impl(int dtype, int64_t n)
{
    int i = pick_fwd(dtype, n);
    return i < 0 ? NULL : FWD[i].name;
}

const char *aclk_hardsigmoid_bwd_impl(int dtype, int64_t n)
{
    int i = pick_bwd(dtype, n);
    return i < 0 ? NULL : BWD[i].name;
}
