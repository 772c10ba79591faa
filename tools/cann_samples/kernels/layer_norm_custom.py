"""LayerNormCustom (CANN's operator_contrib LayerNormCustomSample): res_out = (x - mean) /
sqrt(var + epsilon) * gamma + beta over the last axis (population variance), float32; computed
here in float64 and rounded once."""

import numpy as np


def layer_norm_custom(x, gamma, beta, res_out, epsilon=1e-5):
    v = x.astype(np.float64)
    mean = v.mean(axis=-1, keepdims=True)
    var = np.square(v - mean).mean(axis=-1, keepdims=True)
    out = (v - mean) / np.sqrt(var + float(epsilon)) * gamma.astype(np.float64)
    out += beta.astype(np.float64)
    np.copyto(res_out, out, casting="unsafe")
