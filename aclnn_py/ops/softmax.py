"""The softmax family: Softmax, SoftmaxBackward, LogSoftmax, LogSoftmaxBackward.

One kernel family over outer x axis x inner (csrc/kernels/softmax.c), with a log flag. Each op's
``checks`` are CANN's CheckParams in CANN's order (CANN's ops-nn op_api).
"""

from __future__ import annotations

import math

import numpy as np

from .. import onednn, soc
from ..dtypes import aclDataType as D
from ..enums import Kernel as K
from ..plan import Step, cast, contiguous, finish_into, user_buf
from . import _checks
from ._checks import (
    ACLNN,
    Bf16OnSoc,
    CanCast,
    Dim,
    DtypeIn,
    MaxRank,
    NotNull,
    SameDtype,
    SameShape,
)
from .decl import (
    EMPTY_FIRST,
    EMPTY_LAST,
    INPUT,
    INT,
    OUTPUT,
    Arg,
    Bench,
    BenchCase,
    FunctionalSpec,
    Kernel,
)
from .opdef import OpDef, register

F32, F16, F64, BF16 = D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_DOUBLE, D.ACL_BF16
I8, U8 = D.ACL_INT8, D.ACL_UINT8
E5M2, E4M3 = D.ACL_FLOAT8_E5M2, D.ACL_FLOAT8_E4M3FN
FLOATS = (F32, F16, BF16)
FLOATS_F64 = (F32, F16, F64, BF16)
# oneDNN's forward softmax data types (the functional layer): the floats, int8 and uint8
FORWARD_ONEDNN = (F32, F16, F64, BF16, I8, U8, E5M2, E4M3)
INTS = (I8, U8)
# data only the SoftmaxEx kernel reads and writes: int8 / uint8 and oneDNN's f8
EX_ONLY = (I8, U8, E5M2, E4M3)

BASE, A2A3 = soc.CLASS_BASE, soc.CLASS_A2A3
NO_EDGE = soc.ALL_LINES - {"EDGE"}  # Atlas 200I/500 A2 has only Softmax


def _table(names: tuple, base: tuple, a2a3: tuple) -> dict:
    return {BASE: {n: base for n in names}, A2A3: {n: a2a3 for n in names}}


def forward_dtypes(call) -> tuple:
    """Softmax/LogSoftmax: FLOAT, FLOAT16, DOUBLE, plus BFLOAT16 on the Atlas A2/A3 class (the
    list Softmax checks; SOFTMAX's declaration)."""
    return SOFTMAX.allowed("self", call.soc.soc_class, call.extended)


def backward_dtypes(call) -> tuple:
    """The list SoftmaxBackward checks gradOutput and output against (SOFTMAX_BACKWARD's
    declaration): BF16 is refused earlier on SoCs without it."""
    return SOFTMAX_BACKWARD.allowed("gradOutput", A2A3, call.extended)


def outer_axis_inner(shape, dim: int) -> tuple[int, int, int]:
    """Split a shape at the normalised ``dim`` (a 0-d tensor is 1 x 1 x 1)."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


#: the longest softmax axis the relaxed kernels take; longer ones run the strict kernels. The
#: relaxed kernels sum in float32, one accumulator per column (a few per row), so a sum near 1
#: that later terms just below its half ulp are added to loses up to n * 2^-24 of itself: with
#: the max first and the others e^-17 below it (docs/onednn.md), float16 softmax is 0.88 ulp off
#: at 2^13 and 1.79 at 2^14, 3.68 at 2^15, 85 at 2^20 (columns; rows 0.88 at 2^13 and 3.75 at
#: 2^16 at the generic level); bfloat16 softmax_backward 0.52 of its bound at 2^14 and 1.04 at
#: 2^15. 2^13 keeps every operator within its bound at every ISA level (n * 2^-24 <= 2^-11
#: there: under 1 float16 ulp before the final rounding).
RELAXED_MAX_AXIS = 8192


def _accumulation(call, plan, compute: int, out_dtype: int, axis: int) -> dict:
    """The accumulation mode phase 1 records (functional's accumulation=, else
    ACLNN_EMU_ACCUMULATION: ops.get_workspace_size), and the kernel parameter that applies it.
    The relaxed kernels run only where oneDNN's mode applies: float16 / bfloat16 data whose
    kernel output is the result's own dtype (a float16 softmax into float32 stays strict, so
    that the float32 result keeps float32 accuracy), over an axis of at most RELAXED_MAX_AXIS
    elements (their 2 ulp bound holds there)."""
    mode = call.attrs.get("accumulation", "strict")
    plan.accumulation = mode
    if (mode != "strict" and compute in (F16, BF16) and out_dtype == compute
            and axis <= RELAXED_MAX_AXIS):
        return {"accumulation": mode}
    return {}


# oneDNN's forward attributes (functional): any of them takes the SoftmaxEx kernel
_EX_ATTRS = ("src_scale", "dst_scale", "post_ops", "inf_as_zero")


def _ex_plan(call, plan) -> None:
    """oneDNN's forward softmax with attributes, or with int8 / uint8 data: Contiguous(self) ->
    SoftmaxEx -> ViewCopy(-> out). One kernel reads self in its dtype and writes out's dtype,
    the scales and post-ops fused into its output pass; the binary post-ops' src1 (float32)
    sits in a workspace slice the caller fills before the launch (Plan.src1)."""
    self_t, out = call.t("self"), call.t("out")
    shape = tuple(self_t.view_dims)
    dim = call["dim"] % max(self_t.ndim, 1)
    outer, axis, inner = outer_axis_inner(shape, dim)
    plan.accumulation = call.attrs.get("accumulation", "strict")
    x = contiguous(plan, user_buf("in", 0, self_t, "self"))
    posts, offset = [], 0
    for alg, alpha, beta, s1 in call.attrs.get("post_ops", ()):
        if s1 is None:
            posts.append((alg, alpha, beta, 0, ()))
            continue
        posts.append((alg, 0.0, 0.0, offset, onednn.broadcast_strides(s1, shape)))
        offset += math.prod(s1)
    srcs: tuple = (x,)
    if offset:
        plan.src1 = plan.workspace("post_ops src1", F32, (offset,))
        srcs = (x, plan.src1)
    params = {"outer": outer, "axis": axis, "inner": inner, "flag": call.op.kernel.flag,
              "shape": shape, "dim": dim}
    for name in ("src_scale", "dst_scale", "inf_as_zero"):
        if name in call.attrs:
            params[name] = call.attrs[name]
    if posts:
        params["post_ops"] = tuple(posts)
    name = call.op.kernel.step.replace("V2", "") + "Ex"  # SoftmaxEx, LogSoftmaxEx

    def emit(dst):
        return plan.add(Step("Kernel", name, srcs, dst, K.SOFTMAX_EX, params))

    finish_into(plan, user_buf("out", 0, out, "out"), out.data_type, emit)


def _forward_plan(call, plan, compute: int) -> None:
    """Contiguous(self) -> Cast(-> compute) -> kernel -> Cast(-> out) -> ViewCopy(-> out); with
    oneDNN's attributes or int8 data, _ex_plan. The functional layer (``call.extended``) takes
    _ex_plan for every src / dst pair of two dtypes too: oneDNN computes from the exact source
    values (float32, float64 when either side is float64) and rounds once into dst, where the
    aclnn API keeps CANN's casts (Softmax: the kernel in self's dtype, then Cast; LogSoftmax:
    Cast(self -> out) first). docs/dtypes.md."""
    self_t, out = call.t("self"), call.t("out")
    if self_t.data_type in EX_ONLY or out.data_type in EX_ONLY or any(
            k in call.attrs for k in _EX_ATTRS) or (
            call.extended and self_t.data_type != out.data_type):
        _ex_plan(call, plan)
        return
    _checks.kernel_cast(self_t.data_type, compute)
    _checks.kernel_cast(compute, out.data_type)
    dim = call["dim"] % max(self_t.ndim, 1)
    outer, axis, inner = outer_axis_inner(self_t.view_dims, dim)
    x = cast(plan, contiguous(plan, user_buf("in", 0, self_t, "self")), compute)
    op = call.op
    params = {"outer": outer, "axis": axis, "inner": inner, "flag": op.kernel.flag,
              **_accumulation(call, plan, compute, out.data_type, axis)}

    def emit(dst):
        return plan.add(Step("Kernel", op.kernel.step, (x,), dst, op.kernel_id, params))

    finish_into(plan, user_buf("out", 0, out, "out"), compute, emit)


def backward_compute(in_dtype: int, out_dtype: int, extended: bool) -> int:
    """The dtype the backward kernel runs in. The aclnn API: the inputs' (CANN's kernel, then
    Cast(-> out)). The functional layer, for inputs and a result of two dtypes: oneDNN's, from
    the exact input values, rounded once into dst: float64 when either is float64, else float32
    (a float16 -> float32 gradient is not rounded to float16 on the way, nor a bfloat16 ->
    float16 one twice)."""
    if not extended or in_dtype == out_dtype:
        return in_dtype
    return F64 if F64 in (in_dtype, out_dtype) else F32


def _backward_plan(call, plan) -> None:
    grad, output, out = call.t("gradOutput"), call.t("output"), call.t("out")
    compute = backward_compute(grad.data_type, out.data_type, call.extended)
    _checks.kernel_cast(grad.data_type, compute)
    _checks.kernel_cast(compute, out.data_type)
    dim = call["dim"] % max(grad.ndim, 1)
    outer, axis, inner = outer_axis_inner(grad.view_dims, dim)
    g = cast(plan, contiguous(plan, user_buf("in", 0, grad, "gradOutput")), compute)
    y = cast(plan, contiguous(plan, user_buf("in", 1, output, "output")), compute)
    op = call.op
    params = {"outer": outer, "axis": axis, "inner": inner, "flag": op.kernel.flag,
              **_accumulation(call, plan, compute, out.data_type, axis)}

    def emit(dst):
        return plan.add(Step("Kernel", op.kernel.step, (g, y), dst, op.kernel_id, params))

    finish_into(plan, user_buf("out", 0, out, "out"), compute, emit)


# NumPy baselines of `aclnn-py bench` (the formulas, written with array operations)

def _axis_sum(a, dim):
    return a.sum(axis=dim, keepdims=True)


def _np_softmax(a, dim):
    e = np.exp(a[0] - a[0].max(axis=dim, keepdims=True))
    e /= _axis_sum(e, dim)
    return e


def _np_log_softmax(a, dim):
    m = a[0] - a[0].max(axis=dim, keepdims=True)
    return m - np.log(_axis_sum(np.exp(m), dim))


def _np_softmax_backward(a, dim):
    return a[0] * a[1] - _axis_sum(a[0] * a[1], dim) * a[1]


def _np_log_softmax_backward(a, dim):
    return a[0] - np.exp(a[1]) * _axis_sum(a[0], dim)


# the layouts of `aclnn-py bench` (the same for every operator, so rows compare across them)
_CASES = (BenchCase((4096, 4096), -1), BenchCase((64, 4096, 64), 1),
          BenchCase((16, 1000, 1000), 0), BenchCase((32, 1024), -1, hot_only=True))

_DIM = Arg("dim", INT, "the softmax axis, in [−n, n−1]; a 0-d tensor counts as n = 1")
_GRAD_OUT = Arg("out", OUTPUT, "dL/dx; same shape as gradOutput; its dtype is not checked: the "
                               "result is cast to it")


# ---------------------------------------------------------------------- SoftmaxBackward ----

SOFTMAX_BACKWARD = register(OpDef(
    name="aclnnSoftmaxBackward",
    c_header="aclnn_softmax_backward.h",
    doc="out = gradOutput*output - sum(gradOutput*output, dim)*output",
    args=(
        Arg("gradOutput", INPUT, "upstream gradient"),
        Arg("output", INPUT, "softmax forward result; same dtype and shape as gradOutput"),
        _DIM,
        _GRAD_OUT,
    ),
    dtypes=_table(("gradOutput", "output"), (F32, F16), FLOATS),
    empty=EMPTY_FIRST,  # non-regbase SoCs return success before any other check
    empty_if=("gradOutput", "output"),
    checks=(
        NotNull("gradOutput", "output", "out"),
        Bf16OnSoc("gradOutput"),
        DtypeIn("gradOutput", listed=A2A3),
        DtypeIn("output", listed=A2A3),
        SameDtype("output", "gradOutput"),
        Dim("gradOutput"),
        MaxRank("gradOutput"),
        SameShape("gradOutput", "output"),
        SameShape("gradOutput", "out"),
    ),
    kernel=Kernel("SoftmaxGrad", K.SOFTMAX_BWD, "aclk_softmax_bwd", "softmax", flag=0),
    build=_backward_plan,
    products=NO_EDGE,
    functional=FunctionalSpec(
        "softmax_backward", (("grad_output", "gradOutput"), ("output", "output")),
        {"gradOutput": FLOATS_F64, "output": FLOATS_F64},
        doc='''Gradient of softmax: ``grad_output*output - sum(grad_output*output, dim)*output``.

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
    ''',
    options=("accumulation", "out")),
    bench=Bench(_np_softmax_backward, _CASES),
    workspace_doc="0 when all tensors are contiguous and `out` has the inputs' dtype",
))


# ------------------------------------------------------------------------------ Softmax ----

SOFTMAX = register(OpDef(
    name="aclnnSoftmax",
    c_header="aclnn_softmax.h",
    doc="out = exp(self - max) / sum(exp(self - max), dim)",
    args=(
        Arg("self", INPUT, "input"),
        _DIM,
        Arg("out", OUTPUT, "result; same shape as self; its dtype may differ from self's (the "
                           "result is cast)"),
    ),
    dtypes=_table(("self", "out"), (F32, F16, F64), FLOATS_F64),
    empty=EMPTY_FIRST,  # success before any other check
    empty_if=("self",),
    checks=(
        NotNull("self", "out"),
        DtypeIn("self"),
        DtypeIn("out"),
        Dim("self"),
        MaxRank("self"),
        SameShape("self", "out"),
    ),
    kernel=Kernel("SoftmaxV2", K.SOFTMAX_FWD, "aclk_softmax_fwd", "softmax", flag=0),
    # the kernel runs in self's dtype; the result is cast to out's dtype
    build=lambda call, plan: _forward_plan(call, plan, call.t("self").data_type),
    functional=FunctionalSpec(
        "softmax", (("x", "self"),), {"self": FORWARD_ONEDNN, "out": FORWARD_ONEDNN},
        doc='''Softmax along ``dim``: ``exp(x - max) / sum(exp(x - max))``.

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
    ''',
    options=("accumulation", "src_scale", "dst_scale", "post_ops", "inf_as_zero", "dropout",
             "dropout_mask", "out")),
    bench=Bench(_np_softmax, _CASES),
    workspace_doc="0 when self and out are contiguous and out has self's dtype",
))


# --------------------------------------------------------------------------- LogSoftmax ----

LOG_SOFTMAX = register(OpDef(
    name="aclnnLogSoftmax",
    c_header="aclnn_logsoftmax.h",
    doc="out = (self - max) - log(sum(exp(self - max), dim))",
    args=(
        Arg("self", INPUT, "input",
            rank="0–8 (CANN's doc says 1–8; its code, and the emulator, accept 0-d)"),
        Arg("dim", INT, "the axis, in [−n, n−1]; a 0-d tensor counts as n = 1"),
        Arg("out", OUTPUT, "result; same shape as self; its dtype may differ from self's and is "
                           "the compute dtype"),
    ),
    dtypes=_table(("self", "out"), (F32, F16, F64), FLOATS_F64),
    empty=EMPTY_LAST,  # empty tensors are validated fully first
    empty_if=("self",),
    checks=(
        NotNull("self", "out"),
        Dim("self"),  # dim comes first for this op
        Bf16OnSoc("self", "out"),
        DtypeIn("self", listed=A2A3),
        DtypeIn("out", listed=A2A3),
        CanCast(("out",), "self", "Tensor out", only=ACLNN),
        MaxRank("self"),
        MaxRank("out"),
        SameShape("out", "self"),
    ),
    kernel=Kernel("LogSoftmaxV2", K.SOFTMAX_FWD, "aclk_softmax_fwd", "softmax", flag=1),
    # CANN casts self to out's dtype first and runs the kernel there
    build=lambda call, plan: _forward_plan(call, plan, call.t("out").data_type),
    products=NO_EDGE,
    functional=FunctionalSpec(
        "log_softmax", (("x", "self"),), {"self": FORWARD_ONEDNN, "out": FORWARD_ONEDNN},
        doc='''Log-softmax along ``dim``: ``(x - max) - log(sum(exp(x - max)))``.

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
    ''',
    options=("accumulation", "src_scale", "dst_scale", "post_ops", "dropout", "dropout_mask",
             "out")),
    bench=Bench(_np_log_softmax, _CASES),
    workspace_doc="0 when self and out are contiguous and out has self's dtype",
))


# ------------------------------------------------------------------- LogSoftmaxBackward ----

LOG_SOFTMAX_BACKWARD = register(OpDef(
    name="aclnnLogSoftmaxBackward",
    c_header="aclnn_logsoftmax_backward.h",
    doc="out = gradOutput - sum(gradOutput, dim) * exp(output)",
    args=(
        Arg("gradOutput", INPUT, "upstream gradient"),
        Arg("output", INPUT, "log-softmax forward result; same dtype and shape as gradOutput"),
        Arg("dim", INT, "the axis, in [−n, n−1]; a 0-d tensor counts as n = 1 (CANN's doc "
                        "says [−n, n]; its code, and the emulator, reject n)"),
        _GRAD_OUT,
    ),
    dtypes=_table(("gradOutput", "output"), (F32, F16), FLOATS),
    empty=EMPTY_FIRST,  # non-regbase SoCs return success before any other check
    empty_if=("gradOutput", "output"),
    checks=(
        NotNull("output", "gradOutput", "out"),
        Bf16OnSoc("gradOutput", "output"),
        DtypeIn("output", listed=A2A3),
        DtypeIn("gradOutput", listed=A2A3),
        SameDtype("output", "gradOutput"),
        MaxRank("gradOutput"),
        MaxRank("output"),
        SameShape("gradOutput", "output"),
        SameShape("gradOutput", "out"),
        Dim("gradOutput"),  # shape before dim for this op
    ),
    kernel=Kernel("LogSoftmaxGrad", K.SOFTMAX_BWD, "aclk_softmax_bwd", "softmax", flag=1),
    build=_backward_plan,
    products=NO_EDGE,
    functional=FunctionalSpec(
        "log_softmax_backward", (("grad_output", "gradOutput"), ("output", "output")),
        {"gradOutput": FLOATS_F64, "output": FLOATS_F64},
        doc='''Gradient of log-softmax: ``grad_output - sum(grad_output, dim) * exp(output)``, where
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
    ''',
    options=("accumulation", "out")),
    bench=Bench(_np_log_softmax_backward, _CASES),
    workspace_doc="0 when all tensors are contiguous and `out` has the inputs' dtype",
))
