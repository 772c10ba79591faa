"""GeluQuant (cann-ops activation/gelu_quant; op_host definition): y (int8) = the GELU of x,
quantized, and out_scale (float32) for the dynamic mode.

- approximate "none": GELU through erf, computed as the kernel does with its rational
  approximation x / (1 + exp(P(x))) for x clamped to [-13.25, 5.75] in P; "tanh": x / (1 +
  exp(-sqrt(8/pi) * (x + 0.044715 x^3))).
- quant_mode "static": y = round(gelu * input_scale + input_offset) clipped to int8.
- quant_mode "dynamic": per row (all axes but the last) the scale is 127 / max|gelu *
  input_scale|, y = round(gelu * input_scale * scale), out_scale = 1 / scale.
Rounding is half to even; the arithmetic is float32, as the kernel's.
"""

import numpy as np

_ERF_POLY = (-0.3512339572e-8, 0.2645266170e-6, -0.7929488134e-5, 0.1106123840e-3,
             0.6518995814e-4, -0.7266616915e-1, -0.1595769883e1)


def _gelu(x, approximate):
    x = x.astype(np.float32)
    if approximate == "tanh":
        inner = (x + np.float32(0.044715) * x * x * x) * np.float32(-1.5957691)
        return x / (np.exp(inner) + np.float32(1.0))
    c = np.minimum(np.maximum(x, np.float32(-13.25)), np.float32(5.75))
    sq = c * c
    p = np.full_like(c, np.float32(_ERF_POLY[0]))
    for a in _ERF_POLY[1:]:
        p = p * sq + np.float32(a)
    p = p * c
    return np.maximum(x, np.float32(-13.25)) / (np.exp(p) + np.float32(1.0))


def _to_int8(v):
    return np.clip(np.round(v), -128, 127).astype(np.int8)


def gelu_quant(x, input_scale, input_offset, y, out_scale, approximate="none",
               quant_mode="dynamic"):
    g = _gelu(x, approximate)
    if quant_mode == "static":
        v = g * input_scale.astype(np.float32) if input_scale is not None else g
        if input_offset is not None:
            v = v + input_offset.astype(np.float32)
        np.copyto(y, _to_int8(v))
        if out_scale is not None:
            out_scale[...] = 0
        return
    v = g * input_scale.astype(np.float32) if input_scale is not None else g
    peak = np.max(np.abs(v), axis=-1, keepdims=True)
    scale = np.float32(127.0) / peak
    np.copyto(y, _to_int8(v * scale))
    if out_scale is not None:
        np.copyto(out_scale, (np.float32(1.0) / scale).reshape(out_scale.shape),
                  casting="unsafe")
