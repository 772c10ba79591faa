/*
 * softmax_relaxed.c: the softmax family's relaxed-accumulation kernels for float16 / bfloat16
 * (oneDNN's accumulation mode "relaxed" / "any"). STUB: runs the strict kernels.
 */
#include "aclnn_emu.h"

int aclk_softmax_fwd_relaxed(int dtype, const void *x, void *y, int64_t outer, int64_t axis,
                             int64_t inner, int log_softmax)
{
    if (dtype != ACLK_F16 && dtype != ACLK_BF16)
        return -1;
    return aclk_softmax_fwd(dtype, x, y, outer, axis, inner, log_softmax);
}

int aclk_softmax_bwd_relaxed(int dtype, const void *grad, const void *y, void *out,
                             int64_t outer, int64_t axis, int64_t inner, int log_softmax)
{
    if (dtype != ACLK_F16 && dtype != ACLK_BF16)
        return -1;
    return aclk_softmax_bwd(dtype, grad, y, out, outer, axis, inner, log_softmax);
}
