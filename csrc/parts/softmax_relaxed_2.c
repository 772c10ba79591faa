/* csrc/kernels/softmax_relaxed.c, part 2 of 2: the backward entry point (csrc/kernels/parts.h) */
#define ACLK_PART 2
#include "../kernels/softmax_relaxed.c"
