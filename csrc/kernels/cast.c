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
 */
#include <string.h>

#include "aclnn_emu.h"
#include "dtype.h"

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
        for (int64_t i = 0; i < n; i++) {                          \
            ST v = s_[i];                                          \
            d_[i] = (EXPR);                                        \
        }                                                          \
    } while (0)

#define PAIR(a, b) ((a) * 64 + (b))

int aclk_cast(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n)
{
    if (elem_size(src_dtype) == 0 || elem_size(dst_dtype) == 0)
        return -1;
    if (n <= 0)
        return 0;
    if (src_dtype == dst_dtype) {
        if (src != dst)
            memmove(dst, src, (size_t)(n * elem_size(src_dtype)));
        return 0;
    }
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
