/* csrc/kernels/softmax.c, part 2 of 2: the backward entry points (csrc/kernels/parts.h) */
#define ACLK_PART 2
#include "../kernels/softmax.c"
