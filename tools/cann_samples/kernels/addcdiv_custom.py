"""AddcdivCustom (CANN's operator_contrib AddcdivCustomSample, whose output is declared
optional): out = x + value * y / z, in float16 step by step (divide, scale, add) as the vector
unit computes it; an absent optional output (None) means nothing to write."""

import numpy as np


def addcdiv_custom(x, y, z, out, value=1.0):
    if out is None:
        return
    q = np.divide(y, z, dtype=out.dtype)
    q = np.multiply(q, np.asarray(value, dtype=out.dtype))
    np.add(x, q, out=out, casting="unsafe")
