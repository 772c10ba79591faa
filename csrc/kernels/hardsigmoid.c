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
 * int32 results are truncated toward zero (NaN -> 0). The 32-bit selects are mask selects
 * (dtype.h) so those loops vectorise; float64 uses ?: (its backward loop stays scalar).
 * Each entry point runs the first implementation of its list that takes the dtype: the loops
 * below, then the plain reference kernel (reference.c), which computes the same bits.
 */

/* Floating-point contraction off for this file (before any #include, so that the inline
 * helpers of the headers get it too): x*a + b must be two roundings, not one fused
 * multiply-add, wherever the compiler may use FMA (-march with FMA, -mfma, target clones).
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

#include "aclnn_emu.h"
#include "dtype.h"

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

static int fwd_fast(int dtype, const void *x, void *y, int64_t n, double alpha, double beta)
{
    const float a = (float)alpha, b = (float)beta;
    switch (dtype) {
    case ACLK_F32: {
        const float *s = (const float *)x;
        float *d = (float *)y;
        for (int64_t i = 0; i < n; i++)
            d[i] = hs_f(s[i], a, b);
        return 0;
    }
    case ACLK_F16: {
        const uint16_t *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)y;
        for (int64_t i = 0; i < n; i++)
            d[i] = aclk_f32_to_f16(hs_f(aclk_f16_to_f32(s[i]), a, b));
        return 0;
    }
    case ACLK_BF16: {
        const uint16_t *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)y;
        for (int64_t i = 0; i < n; i++)
            d[i] = aclk_f32_to_bf16(hs_f(aclk_bf16_to_f32(s[i]), a, b));
        return 0;
    }
    case ACLK_I32: {
        const int32_t *s = (const int32_t *)x;
        int32_t *d = (int32_t *)y;
        for (int64_t i = 0; i < n; i++)
            d[i] = aclk_f32_to_i32(hs_f((float)s[i], a, b));
        return 0;
    }
    case ACLK_F64: {
        const double *s = (const double *)x;
        double *d = (double *)y;
        for (int64_t i = 0; i < n; i++)
            d[i] = hs_d(s[i], alpha, beta);
        return 0;
    }
    default:
        return -1;
    }
}

static int bwd_fast(int dtype, const void *grad, const void *x, void *out, int64_t n,
                    double alpha, double beta)
{
    const float a = (float)alpha, b = (float)beta;
    switch (dtype) {
    case ACLK_F32: {
        const float *g = (const float *)grad, *s = (const float *)x;
        float *d = (float *)out;
        for (int64_t i = 0; i < n; i++)
            d[i] = hsg_f(g[i], s[i], a, b);
        return 0;
    }
    case ACLK_F16: {
        const uint16_t *g = (const uint16_t *)grad, *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)out;
        for (int64_t i = 0; i < n; i++)
            d[i] = aclk_f32_to_f16(hsg_f(aclk_f16_to_f32(g[i]), aclk_f16_to_f32(s[i]), a, b));
        return 0;
    }
    case ACLK_BF16: {
        const uint16_t *g = (const uint16_t *)grad, *s = (const uint16_t *)x;
        uint16_t *d = (uint16_t *)out;
        for (int64_t i = 0; i < n; i++)
            d[i] = aclk_f32_to_bf16(
                hsg_f(aclk_bf16_to_f32(g[i]), aclk_bf16_to_f32(s[i]), a, b));
        return 0;
    }
    case ACLK_F64: {
        const double *g = (const double *)grad, *s = (const double *)x;
        double *d = (double *)out;
        for (int64_t i = 0; i < n; i++)
            d[i] = hsg_d(g[i], s[i], alpha, beta);
        return 0;
    }
    default:
        return -1;
    }
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
