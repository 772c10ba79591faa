"""MatmulCustom (CANN's operator samples, 10_matmul_frameworklaunch): c = a @ b + bias, with a
[M, K] and b [K, N] in float16, bias [N] and c [M, N] in float32; the cube unit multiplies
float16 and accumulates in float32, as here."""

import numpy as np


def matmul_custom(a, b, bias, c):
    acc = np.matmul(a.astype(np.float32), b.astype(np.float32))
    np.add(acc, bias.astype(np.float32), out=c, casting="unsafe")
