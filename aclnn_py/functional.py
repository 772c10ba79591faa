"""NumPy in, NumPy out: each call runs the operator's two phases on a private stream.

The functional layer runs the same checks, plans and kernels as ``aclnn_py.aclnn``, with the wider
dtype lists of docs/dtypes.md (float64 for every op, any float ``out_dtype``). Inputs may
be float16, float32, float64 or ``ml_dtypes.bfloat16`` arrays; a non-contiguous array travels as a
strided tensor over a device copy of the memory it spans (no hidden host-side copy), and the
operator's own Contiguous step gathers it. Failures raise :class:`aclnn_py.AclnnError` subclasses.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import config, dtypes, onednn, ops
from . import executor as _ex
from . import runtime as rt
from .onednn import Binary, Dropout, Eltwise
from .status import aclnnStatus as S
from .status import check, record
from .tensor import aclTensor


def _acl_dtype(api: str, what: str, dtype) -> int:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{api}: {what} {dtype!r} is not a NumPy dtype") from None
    value = dtypes.from_numpy(dt)
    if value is None:
        raise TypeError(f"{api}: {what} {dt} has no aclDataType equivalent")
    return value


def _copied(api: str, rc: int) -> None:
    """Raises when a copy found its device buffer freed (by another thread) and copied nothing."""
    if rc:
        check(record(api, 107000, "a device buffer of this call was freed by another thread "
                     "during the call; nothing was copied"), api)


class _Device:
    """Device buffers of one functional call, all freed at the end."""

    def __init__(self, api: str):
        self.api = api
        self.ptrs: list[int] = []

    def alloc(self, nbytes: int) -> int:
        ptr, ret = rt.device_alloc(self.api, 0, max(int(nbytes), 1))
        check(ret, self.api)
        self.ptrs.append(ptr)
        return ptr

    def upload(self, name: str, array: np.ndarray) -> aclTensor:
        """A tensor over a device copy of the memory ``array`` spans, keeping its strides."""
        dt = _acl_dtype(self.api, f"'{name}' dtype", array.dtype)
        size = array.itemsize
        if any(s % size for s in array.strides):
            array = np.ascontiguousarray(array)  # strides not in whole elements: no tensor form
        shape = tuple(array.shape)
        strides = tuple(s // size for s in array.strides)
        if array.size == 0:
            return aclTensor(shape, dt, strides, 0, dtypes.aclFormat.ACL_FORMAT_ND, shape, 0)
        lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
        hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
        span = (hi - lo + 1) * size
        ptr = self.alloc(span)
        host = int(array.__array_interface__["data"][0]) + lo * size
        _copied(self.api, rt.raw_memcpy(ptr, host, span))
        return aclTensor(shape, dt, strides, -lo, dtypes.aclFormat.ACL_FORMAT_ND, (hi - lo + 1,),
                         ptr)

    def output(self, shape, dt: int) -> aclTensor:
        from .tensor import contiguous_strides

        shape = tuple(shape)
        n = int(np.prod(shape, dtype=np.int64))
        ptr = self.alloc(n * dtypes.itemsize(dt)) if n else 0
        return aclTensor(shape, dt, contiguous_strides(shape), 0,
                         dtypes.aclFormat.ACL_FORMAT_ND, shape, ptr)

    def output_like(self, array: np.ndarray, dt: int) -> aclTensor:
        """An output tensor with ``array``'s shape and element strides over a fresh device
        buffer of the bytes it spans (the caller's ``out=``)."""
        size = array.itemsize
        shape = tuple(array.shape)
        strides = tuple(s // size for s in array.strides)
        lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
        hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
        ptr = self.alloc((hi - lo + 1) * size)
        return aclTensor(shape, dt, strides, -lo, dtypes.aclFormat.ACL_FORMAT_ND, (hi - lo + 1,),
                         ptr)

    def free(self) -> None:
        for ptr in self.ptrs:
            rt.raw_free(ptr)
        self.ptrs.clear()


OUT_DTYPES = dtypes.FUNCTIONAL_OUT_DTYPES  # the out_dtype of any function (or the input's own)
# softmax / log_softmax: oneDNN's int8 softmax and its f8 data
INT8_OUT = dtypes.FUNCTIONAL_INT8_OUT + dtypes.FUNCTIONAL_F8


def _check_out_dtype(api: str, out_dt: int, input_dts: list, also: tuple = ()) -> None:
    """docs/dtypes.md: out_dtype is one of the four float dtypes (or the input's own dtype, so that
    int32 hardsigmoid stays int32; or, for softmax / log_softmax, INT8 / UINT8: ``also``)."""
    if out_dt in OUT_DTYPES or out_dt in input_dts or out_dt in also:
        return
    extra = "".join(f", {dtypes.name(d)}" for d in also if d not in OUT_DTYPES)
    record(api, S.ACLNN_ERR_PARAM_INVALID,
           f"out_dtype {dtypes.name(out_dt)} is neither a float dtype (FLOAT16, FLOAT, "
           f"BFLOAT16, DOUBLE{extra}) nor the input dtype")
    check(S.ACLNN_ERR_PARAM_INVALID, api)


def _as_array(api: str, name: str, value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple, float, int)) or np.isscalar(value):
        return np.asarray(value)
    raise TypeError(f"{api}: '{name}' must be a numpy.ndarray, not {type(value).__name__}")


def _span(array: np.ndarray) -> tuple[int, int]:
    """(the lowest byte offset from the first element, the bytes spanned) of a view."""
    lo = sum((d - 1) * s for d, s in zip(array.shape, array.strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(array.shape, array.strides) if s > 0)
    return lo, hi - lo + array.itemsize


def _same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.dtype == b.dtype and a.shape == b.shape
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and all(sa == sb for d, sa, sb in zip(a.shape, a.strides, b.strides) if d != 1))


# np.shares_memory's "too much work" error (np.exceptions from NumPy 1.25, np before 2.0)
_TOO_HARD = getattr(getattr(np, "exceptions", np), "TooHardError", Exception)


def _fail(api: str, text: str) -> None:
    check(record(api, S.ACLNN_ERR_PARAM_INVALID, text), api)


def _check_out(api: str, name: str, out, shape: tuple, arrays: dict, inplace_ok: str,
               dtype=None) -> None:
    """A caller's destination (``out=`` / ``dropout_mask=``): an ndarray of the result's shape
    (and ``dtype`` when given), writeable, no element reached twice, and sharing no memory
    with the inputs unless it is the very view of ``inplace_ok`` (oneDNN's in-place rule)."""
    from .views import self_overlap

    if not isinstance(out, np.ndarray):
        raise TypeError(f"{api}: {name} must be a numpy.ndarray, not {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        _fail(api, f"{name} has shape {tuple(out.shape)}; the result's shape is {tuple(shape)}")
    if dtype is not None and out.dtype != dtype:
        _fail(api, f"{name} has dtype {out.dtype}; it must be {np.dtype(dtype)}")
    if not out.flags.writeable:
        _fail(api, f"{name} is read-only (flags.writeable is False): the result cannot be "
                   f"written to it")
    if out.size > 1 and any(s % out.itemsize for s in out.strides):
        _fail(api, f"{name} has strides {out.strides}, not whole elements of {out.itemsize} "
                   f"bytes")
    if out.size > 1 and self_overlap(out.shape, [s // out.itemsize for s in out.strides])[0]:
        _fail(api, f"{name} (shape {out.shape}, strides {out.strides}) reaches some element "
                   f"twice: a destination must hold each result once")
    for arg, a in arrays.items():
        if not out.size or not a.size or not np.may_share_memory(out, a):
            continue
        if arg == inplace_ok and _same_view(out, a):
            continue
        try:
            shared = np.shares_memory(out, a, max_work=10 ** 6)  # type: ignore[arg-type]
        except _TOO_HARD:
            shared = True
        if shared:
            same = (" (in place, the source itself, needs its dtype, shape and strides: "
                    "oneDNN's rule)" if arg == inplace_ok else "")
            _fail(api, f"{name} overlaps input '{arg}' partially: they share memory but are "
                       f"not the same view{same}; {name}: {out.dtype} {out.shape} strides "
                       f"{out.strides}, '{arg}': {a.dtype} {a.shape} strides {a.strides}")


def _copy_back(api: str, t: aclTensor, out: np.ndarray) -> None:
    """The result from device tensor ``t`` (laid out as ``out``) into the caller's ``out``: one
    copy when out's elements fill the bytes they span, else through a host buffer of the span
    (so that bytes between out's elements, which may belong to others, are not written)."""
    if not out.size:
        return
    lo, span = _span(out)
    host = int(out.__array_interface__["data"][0]) + lo
    src = t.data + t.offset * out.itemsize + lo
    if span == out.nbytes:
        _copied(api, rt.raw_memcpy(host, src, span))
        return
    buf = np.empty(span, np.uint8)
    _copied(api, rt.raw_memcpy(int(buf.__array_interface__["data"][0]), src, span))
    view = np.lib.stride_tricks.as_strided(buf[-lo:].view(out.dtype), out.shape, out.strides)
    np.copyto(out, view)


def _run(op: ops.OpDef, arrays: dict, ints: dict, out_dtype, attrs=None, src1=None, out=None):
    """Phase 1 + phase 2 + synchronize on the calling thread's private stream. ``src1``: the
    binary post-ops' float32 data, copied into the workspace slice the plan keeps for it.
    ``out``: the caller's destination (validated by _check_out), written in place of a new
    array; when it is the first input's very view the operator runs in place."""
    api = op.name
    arrays = {k: _as_array(api, k, v) for k, v in arrays.items()}
    first = next(iter(arrays.values()))
    if out is not None:
        if out_dtype is not None and np.dtype(out_dtype) != out.dtype:
            _fail(api, f"out has dtype {out.dtype} but out_dtype is {np.dtype(out_dtype)}: "
                       f"give one, or the same")
        out_dtype = out.dtype
    out_dt = _acl_dtype(api, "out_dtype", first.dtype if out_dtype is None else out_dtype)
    also = tuple(d for d in (op.functional.dtypes.get("out", ()) if op.functional else ())
                 if d in INT8_OUT)
    _check_out_dtype(api, out_dt, [_acl_dtype(api, "input dtype", a.dtype)
                                   for a in arrays.values()], also)
    # the calls run on device 0: a device list that does not parse (ACLNN_EMU_DEVICE_COUNT,
    # ASCEND_RT_VISIBLE_DEVICES) is the runtime's 100000, raised (docs/configuration.md)
    check(config.checked(api, config.device_count)[1], api)
    dev = _Device(api)
    try:
        values = {name: dev.upload(name, a) for name, a in arrays.items()}
        values.update(ints)
        for name in op.outputs:
            values[name] = dev.output(first.shape, out_dt)
        first_name = next(iter(arrays))
        if out is not None and out.size:
            t = values[first_name]
            inplace = _same_view(out, first) and t.strides == tuple(
                s // out.itemsize for s in out.strides)
            values[op.outputs[0]] = t if inplace else dev.output_like(out, out_dt)
        args = tuple(values[p] for p in op.params)
        ws_size, executor, ret = ops.get_workspace_size(op, args, extended=True, attrs=attrs)
        check(ret, api + "GetWorkspaceSize")
        ws = dev.alloc(ws_size) if ws_size else 0
        slot = executor.plan.src1
        if slot is not None and src1 is not None and src1.size:
            _copied(api, rt.raw_memcpy(ws + slot.index, int(src1.__array_interface__["data"][0]),
                                       src1.nbytes))
        st = rt.internal_stream()
        check(_ex.run(api, ws, ws_size, executor, st.handle), api)
        check(rt.synchronize_stream(st.handle), "aclrtSynchronizeStream")
        t = values[op.outputs[0]]
        if out is not None:
            _copy_back(api, t, out)
            return out
        result = np.empty(t.view_dims, dtype=dtypes.to_numpy(out_dt))
        if result.size:
            _copied(api, rt.raw_memcpy(int(result.__array_interface__["data"][0]), t.data,
                                       result.nbytes))
        return result
    finally:
        dev.free()


def _int(api: str, name: str, value) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{api}: {name} must be an int, not {type(value).__name__}")
    return value.__index__()


def _float(api: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{api}: {name} must be a number, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:  # an int beyond float64 (10**400): a parameter error naming it
        digits = len(str(abs(value)))
        check(record(api, S.ACLNN_ERR_PARAM_INVALID,
                     f"{name} = an int of {digits} digits does not fit a float (float64)"), api)
        raise


def _options(api: str, dst_shape: tuple, options: dict) -> tuple[dict, Optional[np.ndarray]]:
    """oneDNN's attributes (``FunctionalSpec.options``) as phase 1 attributes, plus the binary
    post-ops' src1 data. Defaults are left out, so that a call without attributes plans (and
    computes) exactly as before; ``accumulation`` is always there: this layer's keyword, not
    ACLNN_EMU_ACCUMULATION, decides the mode of its calls."""
    attrs: dict = {}
    src1 = None
    if "accumulation" in options:
        attrs["accumulation"] = onednn.accumulation(api, options["accumulation"])
    for name in ("src_scale", "dst_scale"):
        if name in options:
            v = onednn.scale(api, name, options[name], nonzero=name == "dst_scale")
            if v != 1.0:
                attrs[name] = v
    if "inf_as_zero" in options:
        flag = options["inf_as_zero"]
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{api}: inf_as_zero must be a bool, not {type(flag).__name__}")
        if flag:
            attrs["inf_as_zero"] = True
    desc: tuple = ()
    if "post_ops" in options:
        desc, src1 = onednn.post_ops(api, options["post_ops"], dst_shape)
    mask = None
    if options.get("dropout") is not None:
        # oneDNN's order: dropout right after the src scale, before the post-ops: the first
        # post-op here, its operand first in the workspace slice
        drop, operand, mask = onednn.dropout(api, options["dropout"], dst_shape)
        if len(desc) + 1 > onednn.MAX_POST_OPS:
            _fail(api, f"post_ops: {len(desc)} post-ops and dropout given; the emulator applies "
                       f"at most {onednn.MAX_POST_OPS} per call, dropout counting as one")
        desc = (drop,) + desc
        src1 = operand if src1 is None else np.concatenate([operand, src1])
    if desc:
        attrs["post_ops"] = desc
    if mask is not None:
        attrs["_dropout_mask"] = mask
    return attrs, src1


def _call(api: str, arrays: dict, ints: dict, attrs: dict, out_dtype, **options):
    """One generated function's body: its declaration's (``OpDef.functional``) argument
    conversions in order (ints, then attributes, then the default out_dtype, then oneDNN's
    attributes), then the op.

    ``arrays`` maps the op's argument names to the caller's arrays, in the function's order."""
    op = ops.REGISTRY[api]
    spec = op.functional
    assert spec is not None, api
    ints = {name: _int(api, name, v) for name, v in ints.items()}
    attrs = {name: _float(api, name, v) for name, v in attrs.items()}
    src1 = None
    out = options.pop("out", None)
    mask_out = options.pop("dropout_mask", None)
    mask = None
    if options or out is not None or mask_out is not None:
        x = _as_array(api, spec.arrays[0][0], next(iter(arrays.values())))
        extra, src1 = _options(api, tuple(x.shape), options)
        mask = extra.pop("_dropout_mask", None)
        attrs.update(extra)
        named = {arg: _as_array(api, arg, a) for arg, a in arrays.items()}
        if out is not None:
            _check_out(api, "out", out, tuple(x.shape), named, next(iter(arrays)))
        if mask_out is not None:
            if mask is None:
                _fail(api, "dropout_mask is given without dropout: the mask is dropout's output")
            _check_out(api, "dropout_mask", mask_out, tuple(x.shape), named, "",
                       np.dtype(np.uint8))
            if out is not None and out.size and np.shares_memory(out, mask_out):
                _fail(api, "dropout_mask and out share memory")
    if out_dtype is None and spec.out_dtype == "promoted":
        py = {arg: name for name, arg in spec.arrays}
        first, *rest = [(py[arg], _as_array(api, py[arg], a)) for arg, a in arrays.items()]
        promoted = _acl_dtype(api, f"{first[0]} dtype", first[1].dtype)
        for name, a in rest:
            promoted = dtypes.promote(promoted, _acl_dtype(api, f"{name} dtype", a.dtype))
        out_dtype = dtypes.to_numpy(promoted) if promoted >= 0 else first[1].dtype
    result = _run(op, arrays, ints, out_dtype, attrs or None, src1, out)
    if mask_out is not None and mask is not None:
        np.copyto(mask_out, mask)
    return result


# The functions below are generated from the operators' declarations (OpDef.functional in
# aclnn_py/ops): regenerate with `python -m aclnn_py.ops.generate --write`.

# BEGIN GENERATED: functional
__all__ = ["hardsigmoid", "hardsigmoid_backward", "softmax_backward", "softmax", "log_softmax",
           "log_softmax_backward"]


def hardsigmoid(x, *, alpha: float = 1 / 6, beta: float = 0.5, out_dtype=None) -> np.ndarray:
    """``clip(alpha*x + beta, 0, 1)``, computed in float32 for float16/bfloat16/float32/int32
    inputs (alpha and beta rounded to float32) and in float64 for float64. NaN stays NaN.

    Raises:
        AclnnParamError: dtype rules (code 161002).
    """
    return _call("aclnnHardsigmoid", {"self": x}, {}, {"alpha": alpha, "beta": beta}, out_dtype)


def hardsigmoid_backward(grad_output, x, *, alpha: float = 1 / 6, beta: float = 0.5,
                         out_dtype=None) -> np.ndarray:
    """``grad_output*alpha`` where ``0 < alpha*x + beta < 1`` (open interval, evaluated in the
    compute precision), else 0. The two inputs are promoted to a common dtype (float16 with
    bfloat16 gives float32); the result is cast to ``out_dtype`` (default: the promoted dtype).

    Raises:
        AclnnParamError: dtype or shape rules (code 161002).
    """
    return _call("aclnnHardsigmoidBackward", {"gradOutput": grad_output, "self": x}, {},
                 {"alpha": alpha, "beta": beta}, out_dtype)


def softmax_backward(grad_output, output, dim: int, *, out_dtype=None, accumulation: str = "strict",
                     out=None) -> np.ndarray:
    """Gradient of softmax: ``grad_output*output - sum(grad_output*output, dim)*output``.

    Args:
        grad_output: upstream gradient dL/dy.
        output: the softmax forward result y (same dtype and shape).
        dim: the softmax axis, in [-n, n-1] (a 0-d array counts as rank 1).
        out_dtype: the result's dtype (float16, float32, float64 or bfloat16); default: the
            inputs' dtype. As oneDNN: computed from the exact inputs (in float32, float64 when
            either dtype is float64) and rounded once into out_dtype.

    ``accumulation="relaxed"`` or ``"any"`` (oneDNN's modes, docs/onednn.md): float16 /
    bfloat16 data take faster kernels, every result within 2^-10 of the largest term of its
    slice. oneDNN's backward softmax is float-only, and so is this function: no int8.
    ``out=``: a preallocated array of any strides for the result, or grad_output (in place).

    Raises:
        AclnnParamError: dtype, shape or dim rules, an unknown accumulation mode, a bad out
            (code 161002).
        TypeError: arguments of the wrong Python type.
    """
    return _call("aclnnSoftmaxBackward", {"gradOutput": grad_output, "output": output},
                 {"dim": dim}, {}, out_dtype, accumulation=accumulation, out=out)


def softmax(x, dim: int, *, out_dtype=None, accumulation: str = "strict", src_scale: float = 1.0,
            dst_scale: float = 1.0, post_ops=(), inf_as_zero: bool = False, dropout=None,
            dropout_mask=None, out=None) -> np.ndarray:
    """Softmax along ``dim``: ``exp(x - max) / sum(exp(x - max))``.

    Computed from the exact values of x in float32 (float64 when x or ``out_dtype`` is float64)
    and rounded once into ``out_dtype`` (default: x's dtype), as oneDNN does (the aclnn API casts
    after: docs/dtypes.md). A row of all -inf, or with +inf or NaN, gives NaN.

    oneDNN's attributes (docs/onednn.md): x and ``out_dtype`` may also be int8 or uint8; each
    result is ``post_ops(softmax * src_scale) * (1 / dst_scale)``, rounded half to even and
    saturated for an integer out_dtype. ``post_ops``: a sequence of ``Eltwise(alg, alpha,
    beta)`` and ``Binary(alg, src1)``. ``inf_as_zero=True``: a slice of all -inf gives 0, not
    NaN. ``accumulation="relaxed"`` or ``"any"``: float16 / bfloat16 data take faster kernels,
    every result within 2 ulp of the float64 softmax ("strict", the default, keeps the bits).
    ``dropout=Dropout(p, seed, offset)``: oneDNN's dropout right after the src scale, its
    Philox mask (uint8) into ``dropout_mask=`` when given. ``out=``: a preallocated array of
    any strides to write the result to (its dtype is the out_dtype), or x itself (in place).

    Raises:
        AclnnParamError: dtype, shape or dim rules, an unknown accumulation mode or post-op, a
            src1 that does not broadcast, a scale that is not finite, a bad dropout or out
            (code 161002).
        TypeError: arguments of the wrong Python type.
    """
    return _call("aclnnSoftmax", {"self": x}, {"dim": dim}, {}, out_dtype,
                 accumulation=accumulation, src_scale=src_scale, dst_scale=dst_scale,
                 post_ops=post_ops, inf_as_zero=inf_as_zero, dropout=dropout,
                 dropout_mask=dropout_mask, out=out)


def log_softmax(x, dim: int, *, out_dtype=None, accumulation: str = "strict",
                src_scale: float = 1.0, dst_scale: float = 1.0, post_ops=(), dropout=None,
                dropout_mask=None, out=None) -> np.ndarray:
    """Log-softmax along ``dim``: ``(x - max) - log(sum(exp(x - max)))``.

    Computed from the exact values of x and rounded once into ``out_dtype`` (default: x's dtype),
    as oneDNN does (CANN's aclnnLogSoftmax casts x to out's dtype first: docs/dtypes.md).

    oneDNN's attributes (docs/onednn.md): x and ``out_dtype`` may also be int8 or uint8; each
    result is ``post_ops(log_softmax * src_scale) * (1 / dst_scale)``, computed in float32 (float64
    when x or out_dtype is float64), rounded half to even and saturated for an integer
    out_dtype. ``accumulation="relaxed"`` or ``"any"``: float16 / bfloat16 data take faster
    kernels, every result within 2 ulp of the float64 log-softmax. ``dropout=``,
    ``dropout_mask=`` and ``out=`` as for softmax.

    Raises:
        AclnnParamError: dtype, shape or dim rules, an unknown accumulation mode or post-op, a
            src1 that does not broadcast, a scale that is not finite, a bad dropout or out
            (code 161002).
        TypeError: arguments of the wrong Python type.
    """
    return _call("aclnnLogSoftmax", {"self": x}, {"dim": dim}, {}, out_dtype,
                 accumulation=accumulation, src_scale=src_scale, dst_scale=dst_scale,
                 post_ops=post_ops, dropout=dropout, dropout_mask=dropout_mask, out=out)


def log_softmax_backward(grad_output, output, dim: int, *, out_dtype=None,
                         accumulation: str = "strict", out=None) -> np.ndarray:
    """Gradient of log-softmax: ``grad_output - sum(grad_output, dim) * exp(output)``, where
    ``output`` is the log-softmax forward result. Where output is -inf the gradient passes
    through unchanged.

    ``accumulation="relaxed"`` or ``"any"`` (oneDNN's modes, docs/onednn.md): float16 /
    bfloat16 data take faster kernels, every result within 2^-10 of the largest term of its
    slice. oneDNN's backward softmax is float-only, and so is this function: no int8.
    ``out=``: a preallocated array of any strides for the result, or grad_output (in place).

    Raises:
        AclnnParamError: dtype, shape or dim rules, an unknown accumulation mode, a bad out
            (code 161002).
        TypeError: arguments of the wrong Python type.
    """
    return _call("aclnnLogSoftmaxBackward", {"gradOutput": grad_output, "output": output},
                 {"dim": dim}, {}, out_dtype, accumulation=accumulation, out=out)
# END GENERATED

__all__ += ["Eltwise", "Binary", "Dropout"]
