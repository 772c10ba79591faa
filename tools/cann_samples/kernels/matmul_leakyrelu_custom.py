"""MatmulLeakyreluCustom (CANN's operator samples, 12_matmulleakyrelu_frameworklaunch; cann-ops
math/matmul_leakyrelu as MatmulLeakyrelu): c = leaky_relu(a @ b + bias) with the slope 0.001
fixed in the kernel (the definition has no attribute); float16 a and b, float32 bias and c."""

import numpy as np

ALPHA = np.float32(0.001)


def _matmul_leakyrelu(a, b, bias, c):
    acc = np.matmul(a.astype(np.float32), b.astype(np.float32)) + bias.astype(np.float32)
    np.copyto(c, np.where(acc >= 0, acc, acc * ALPHA), casting="unsafe")


def matmul_leakyrelu_custom(a, b, bias, c):
    _matmul_leakyrelu(a, b, bias, c)


def matmul_leakyrelu(a, b, bias, c):
    _matmul_leakyrelu(a, b, bias, c)
