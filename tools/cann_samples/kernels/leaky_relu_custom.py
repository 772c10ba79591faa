"""LeakyReluCustom (CANN's operator samples, 9_leakyrelu_frameworklaunch): y = x where x > 0,
else x * negative_slope; the float attribute arrives as a keyword."""

import numpy as np


def leaky_relu_custom(x, y, negative_slope=0.0):
    slope = np.asarray(negative_slope, dtype=x.dtype)
    np.copyto(y, np.where(x > 0, x, x * slope))
