/*
 * reference.c: plain reference kernels, one per operator: straightforward scalar loops with
 * the same signatures and dtypes as the entry points. They are the last implementation in each
 * entry point's list (the fallback for a case no fast kernel takes) and the oracle the fast
 * kernels are tested against (tests/test_kernels_c.py, which checks them in turn against NumPy
 * float64).
 *
 * Softmax family: every dtype is computed in float64 (libm exp/log, sums accumulated in
 * float64 in axis order) and rounded once to the output dtype, to nearest even. Same formulas
 * and NaN / inf behaviour as softmax.c:
 *   fwd: m = max(x) (NaNs skipped), s = sum(exp(x - m)),
 *        y = exp(x - m) / s            or   y = (x - m) - log(s)
 *   bwd: softmax:     s = sum(grad*y), out = grad*y - s*y
 *        log-softmax: s = sum(grad),   out = grad - exp(y)*s
 * Hard sigmoid: the operator is defined in float32 for float32, float16, bfloat16 and int32
 * (a = (float)alpha, b = (float)beta, l = x*a + b as two rounded operations), in float64 for
 * float64, so the reference computes exactly that (see hardsigmoid.c); it relies on no
 * contraction as hardsigmoid.c does.
 *
 * Outputs may alias inputs (in place): every loop reads an element before it writes the same
 * index, and the reductions finish before the outputs of their row are written.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>

#include "aclnn_emu.h"
#include "dtype.h"

static int is_softmax_dtype(int dt)
{
    return dt == ACLK_F32 || dt == ACLK_F16 || dt == ACLK_BF16 || dt == ACLK_F64;
}

/* element i of a float tensor as float64 (exact) */
static double load(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case ACLK_F32: return (double)((const float *)p)[i];
    case ACLK_F16: return (double)aclk_f16_to_f32(((const uint16_t *)p)[i]);
    case ACLK_BF16: return (double)aclk_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const double *)p)[i];
    }
}

/* store v rounded once to the dtype */
static void store(int dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case ACLK_F32: ((float *)p)[i] = (float)v; break;
    case ACLK_F16: ((uint16_t *)p)[i] = aclk_f64_to_f16(v); break;
    case ACLK_BF16: ((uint16_t *)p)[i] = aclk_f64_to_bf16(v); break;
    default: ((double *)p)[i] = v; break;
    }
}

int aclk_ref_softmax_fwd(int dtype, const void *x, void *y, int64_t outer, int64_t axis,
                         int64_t inner, int log_softmax)
{
    if (!is_softmax_dtype(dtype))
        return -1;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            const int64_t base = o * axis * inner + i; /* element a is base + a*inner */
            double m = -INFINITY;
            for (int64_t a = 0; a < axis; a++) {
                double v = load(dtype, x, base + a * inner);
                if (v > m)
                    m = v;
            }
            double s = 0.0;
            for (int64_t a = 0; a < axis; a++)
                s += exp(load(dtype, x, base + a * inner) - m);
            double ls = log(s);
            for (int64_t a = 0; a < axis; a++) {
                double d = load(dtype, x, base + a * inner) - m;
                store(dtype, y, base + a * inner, log_softmax ? d - ls : exp(d) / s);
            }
        }
    }
    return 0;
}

int aclk_ref_softmax_bwd(int dtype, const void *grad, const void *y, void *out, int64_t outer,
                         int64_t axis, int64_t inner, int log_softmax)
{
    if (!is_softmax_dtype(dtype))
        return -1;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            const int64_t base = o * axis * inner + i;
            double s = 0.0;
            for (int64_t a = 0; a < axis; a++) {
                double g = load(dtype, grad, base + a * inner);
                s += log_softmax ? g : g * load(dtype, y, base + a * inner);
            }
            for (int64_t a = 0; a < axis; a++) {
                double g = load(dtype, grad, base + a * inner);
                double v = load(dtype, y, base + a * inner);
                store(dtype, out, base + a * inner, log_softmax ? g - exp(v) * s : g * v - s * v);
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------- hard sigmoid ---- */

/* element i of a float32-compute tensor as float32 (exact) */
static float load_f(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case ACLK_F32: return ((const float *)p)[i];
    case ACLK_F16: return aclk_f16_to_f32(((const uint16_t *)p)[i]);
    case ACLK_BF16: return aclk_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return (float)((const int32_t *)p)[i];
    }
}

/* store v rounded to nearest even, or for int32 truncated toward zero (NaN -> 0) */
static void store_f(int dt, void *p, int64_t i, float v)
{
    switch (dt) {
    case ACLK_F32: ((float *)p)[i] = v; break;
    case ACLK_F16: ((uint16_t *)p)[i] = aclk_f32_to_f16(v); break;
    case ACLK_BF16: ((uint16_t *)p)[i] = aclk_f32_to_bf16(v); break;
    default: ((int32_t *)p)[i] = aclk_f32_to_i32(v); break;
    }
}

int aclk_ref_hardsigmoid_fwd(int dtype, const void *x, void *y, int64_t n, double alpha,
                             double beta)
{
    if (dtype == ACLK_F64) {
        for (int64_t i = 0; i < n; i++) {
            double l = ((const double *)x)[i] * alpha;
            l = l + beta;
            ((double *)y)[i] = l <= 0.0 ? 0.0 : l >= 1.0 ? 1.0 : l; /* NaN stays NaN */
        }
        return 0;
    }
    if (dtype != ACLK_F32 && dtype != ACLK_F16 && dtype != ACLK_BF16 && dtype != ACLK_I32)
        return -1;
    const float a = (float)alpha, b = (float)beta;
    for (int64_t i = 0; i < n; i++) {
        float l = load_f(dtype, x, i) * a;
        l = l + b;
        store_f(dtype, y, i, l <= 0.0f ? 0.0f : l >= 1.0f ? 1.0f : l);
    }
    return 0;
}

int aclk_ref_hardsigmoid_bwd(int dtype, const void *grad, const void *x, void *out, int64_t n,
                             double alpha, double beta)
{
    if (dtype == ACLK_F64) {
        for (int64_t i = 0; i < n; i++) {
            double l = ((const double *)x)[i] * alpha;
            l = l + beta;
            double g = ((const double *)grad)[i];
            ((double *)out)[i] = (0.0 < l && l < 1.0) ? g * alpha : 0.0;
        }
        return 0;
    }
    if (dtype != ACLK_F32 && dtype != ACLK_F16 && dtype != ACLK_BF16)
        return -1;
    const float a = (float)alpha, b = (float)beta;
    for (int64_t i = 0; i < n; i++) {
        float l = load_f(dtype, x, i) * a;
        l = l + b;
        float g = load_f(dtype, grad, i);
        store_f(dtype, out, i, (0.0f < l && l < 1.0f) ? g * a : 0.0f);
    }
    return 0;
}
