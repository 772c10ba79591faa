/*
 * softmax_ex.c: oneDNN's forward softmax with attributes. STUB: not implemented yet.
 */
#include "aclnn_emu.h"

int aclk_softmax_ex(const emu_softmax_ex_args *p, int src_dtype, const void *x,
                    const float *src1, int dst_dtype, void *y)
{
    (void)p; (void)src_dtype; (void)x; (void)src1; (void)dst_dtype; (void)y;
    return -1;
}
