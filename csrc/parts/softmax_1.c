/* csrc/kernels/softmax.c, part 1 of 2: the forward entry points (csrc/kernels/parts.h) */
#define ACLK_PART 1
#include "../kernels/softmax.c"
