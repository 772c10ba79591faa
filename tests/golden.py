"""Independent NumPy float64 references. Shares no code with aclnn_py or csrc/.

Formulas: CANN's ops-nn op_api, PyTorch/oneDNN. Low-precision inputs are upcast
to float64 first; where the emulated CANN pipeline rounds to the input dtype before casting to the
output dtype (the backward ops compute in the input dtype), ``round_to`` models that rounding.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)


def f64(x) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def softmax_backward(grad, y, dim: int) -> np.ndarray:
    """out = grad*y - sum(grad*y, dim, keepdims)*y  (CANN's formula)."""
    g, yy = f64(grad), f64(y)
    if g.ndim == 0:
        return g * yy - (g * yy) * yy
    s = np.sum(g * yy, axis=dim, keepdims=True)
    return g * yy - s * yy


def round_to(x: np.ndarray, dtype) -> np.ndarray:
    """Round float64 values through ``dtype`` and back (what storing in dtype does)."""
    return np.asarray(x).astype(np.dtype(dtype)).astype(np.float64)


# Tolerances (PyTorch/oneDNN): rtol, atol, allowed failing fraction, keyed by the basis dtype
TOL = {
    F16: (1e-3, 1e-3, 1e-3),
    BF16: (8e-3, 8e-3, 4e-3),
    F32: (1e-4, 1e-4, 1e-4),
    F64: (1e-10, 1e-12, 0.0),
}


def basis(*dts) -> np.dtype:
    """The lowest precision among the dtypes (the tolerance basis)."""
    order = [BF16, F16, F32, F64]
    return min((np.dtype(d) for d in dts), key=order.index)


def assert_close(got, ref, basis_dtype, *, backward: bool = False, what: str = "",
                 tol: dict | None = None) -> None:
    """PyTorch/oneDNN: |got-ref| <= atol*scale + rtol*|ref|; infinities exact; NaN matches NaN;
    at most fail_ratio of the elements may miss, none by more than 10x its bound. ``tol``: the
    (rtol, atol, fail_ratio) per basis dtype (default TOL)."""
    got, ref = f64(got), f64(ref)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    rtol, atol, ratio = (TOL if tol is None else tol)[np.dtype(basis_dtype)]
    finite = np.isfinite(ref)
    scale = max(1.0, float(np.max(np.abs(ref[finite])))) if backward and finite.any() else 1.0
    nan_ref = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan_ref), (
        f"{what}: NaN positions differ: got {np.argwhere(np.isnan(got) != nan_ref)[:5].tolist()}")
    inf_ref = np.isinf(ref)
    assert np.array_equal(got[inf_ref], ref[inf_ref]), f"{what}: infinities differ"
    bound = atol * scale + rtol * np.abs(ref)
    err = np.abs(got - ref)
    fin = finite & ~np.isnan(got)
    miss = fin & (err > bound)
    if ref.size:
        assert miss.sum() <= ratio * ref.size, (
            f"{what}: {int(miss.sum())}/{ref.size} elements out of tolerance; worst at "
            f"{np.unravel_index(np.argmax(np.where(fin, err / bound, 0)), ref.shape)}: "
            f"got {got[miss][:3]}, ref {ref[miss][:3]}")
        assert not (fin & (err > 10 * bound)).any(), f"{what}: an element is >10x its bound"


# ------------------------------------------------------------------------------------------
# Appended: Softmax, LogSoftmax, LogSoftmaxBackward, Hardsigmoid, HardsigmoidBackward.
# Formulas from CANN's ops-nn op_api and PyTorch/oneDNN semantics. A 0-d
# array is reduced as shape (1,) (CANN: a 0-d tensor counts as rank 1). Softmax and
# log-softmax subtract the row max, as CANN's kernels do, so an all -inf row, or a row with
# +inf or NaN, gives NaN everywhere (PyTorch/oneDNN).


def _rows(x, dim):
    """(float64 array with at least one dim, dim, was_0d)."""
    a = f64(x)
    if a.ndim == 0:
        return a.reshape(1), 0, True
    return a, dim, False


def softmax(x, dim: int) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max), dim)."""
    a, d, zero_d = _rows(x, dim)
    if a.size == 0:
        return a.reshape(np.shape(x))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(a, axis=d, keepdims=True)
        e = np.exp(a - m)
        r = e / np.sum(e, axis=d, keepdims=True)
    return r.reshape(()) if zero_d else r


def log_softmax(x, dim: int) -> np.ndarray:
    """(x - max) - log(sum(exp(x - max), dim))."""
    a, d, zero_d = _rows(x, dim)
    if a.size == 0:
        return a.reshape(np.shape(x))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(a, axis=d, keepdims=True)
        z = a - m
        r = z - np.log(np.sum(np.exp(z), axis=d, keepdims=True))
    return r.reshape(()) if zero_d else r


def log_softmax_backward(grad, output, dim: int) -> np.ndarray:
    """grad - sum(grad, dim) * exp(output), output being the log-softmax result. Where output
    is -inf the gradient passes through unchanged (PyTorch/oneDNN)."""
    g, d, zero_d = _rows(grad, dim)
    y = f64(output).reshape(g.shape)
    if g.size == 0:
        return g.reshape(np.shape(grad))
    with np.errstate(invalid="ignore", over="ignore"):
        r = g - np.sum(g, axis=d, keepdims=True) * np.exp(y)
    return r.reshape(()) if zero_d else r


def compute_dtype(*dts) -> np.dtype:
    """Where the hard-sigmoid ops compute: CANN's golden computes float16, bfloat16, float32 and
    int32 in float32 (CANN's Hardsigmoid docs); float64 (the functional layer only) in float64."""
    return F64 if any(np.dtype(d) == F64 for d in dts) else F32


def _hs_linear(x, alpha: float, beta: float, compute) -> np.ndarray:
    """alpha*x + beta as two separately rounded operations in ``compute`` (no FMA)."""
    ct = np.dtype(compute)
    xc = f64(x).astype(ct)
    lin = np.multiply(xc, ct.type(alpha), dtype=ct)
    return np.add(lin, ct.type(beta), dtype=ct)


def hardsigmoid(x, alpha: float = 1 / 6, beta: float = 0.5, compute=F32) -> np.ndarray:
    """clip(alpha*x + beta, 0, 1): linear <= 0 -> 0, linear >= 1 -> 1; NaN stays NaN."""
    lin = f64(_hs_linear(x, alpha, beta, compute))
    return np.where(lin <= 0, 0.0, np.where(lin >= 1, 1.0, lin))


def hardsigmoid_int32(x) -> np.ndarray:
    """INT32 input: computed in float32 and truncated toward zero (only 0 or 1 can appear)."""
    return np.trunc(hardsigmoid(x)).astype(np.int32)


def hardsigmoid_backward(grad, x, alpha: float = 1 / 6, beta: float = 0.5,
                         compute=F32) -> np.ndarray:
    """grad*alpha where 0 < alpha*x + beta < 1 (open interval, evaluated in ``compute``),
    else 0 -- a select, so a NaN or inf grad at a blocked element still gives 0. NaN and
    +-inf x are blocked."""
    ct = np.dtype(compute)
    lin = _hs_linear(x, alpha, beta, ct)
    mask = (lin > 0) & (lin < 1)
    with np.errstate(invalid="ignore", over="ignore"):
        active = f64(np.multiply(f64(grad).astype(ct), ct.type(alpha), dtype=ct))
    return np.where(mask, active, 0.0)
