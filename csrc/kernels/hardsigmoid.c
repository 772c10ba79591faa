/*
 * hardsigmoid.c: y = clamp(x*alpha + beta, 0, 1) and its gradient.
 *
 * float32, float16, bfloat16 and int32 compute in float32 with a = (float)alpha,
 * b = (float)beta, l = x*a + b as one rounded multiply then one rounded add (the build has
 * -ffp-contract=off, so no FMA: with alpha = 1/6, beta = 0.5 and x = -3 this gives l == 0
 * exactly). float64 computes in float64 with alpha and beta as given.
 *
 *   forward:  y = l <= 0 ? 0 : (l >= 1 ? 1 : l)        (a NaN l stays NaN)
 *   backward: out = (0 < l && l < 1) ? grad*a : 0       (NaN or +-inf x gives 0)
 *
 * int32 results are truncated toward zero (NaN -> 0). The 32-bit selects are mask selects
 * (dtype.h) so those loops vectorise; float64 uses ?: (its backward loop stays scalar).
 */
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

int aclk_hardsigmoid_fwd(int dtype, const void *x, void *y, int64_t n, double alpha, double beta)
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

int aclk_hardsigmoid_bwd(int dtype, const void *grad, const void *x, void *out, int64_t n,
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
