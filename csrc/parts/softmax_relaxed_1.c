/* csrc/kernels/softmax_relaxed.c, part 1 of 2: the forward entry point (csrc/kernels/parts.h) */
#define ACLK_PART 1
#include "../kernels/softmax_relaxed.c"
