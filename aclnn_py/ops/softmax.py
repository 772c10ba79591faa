"""The softmax family: Softmax, SoftmaxBackward, LogSoftmax, LogSoftmaxBackward.

One kernel family over outer x axis x inner (csrc/kernels/softmax.c), with a log flag. Each op's
``validate`` is CANN's CheckParams in CANN's order (CANN's ops-nn op_api).
"""

from __future__ import annotations

import math

from .._C import lib
from ..dtypes import aclDataType as D
from ..plan import Step, cast, contiguous, finish_into, user_buf
from . import OpDef, _checks, register

FLOATS = (D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_BF16)
FLOATS_F64 = (D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_DOUBLE, D.ACL_BF16)


def forward_dtypes(call) -> tuple:
    """Softmax/LogSoftmax: FLOAT, FLOAT16, DOUBLE, plus BFLOAT16 on the Atlas A2/A3 class."""
    if call.extended or call.soc.bf16:
        return FLOATS_F64
    return (D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_DOUBLE)


def backward_dtypes(call) -> tuple:
    return FLOATS_F64 if call.extended else FLOATS


def outer_axis_inner(shape, dim: int) -> tuple[int, int, int]:
    """Split a shape at the normalised ``dim`` (a 0-d tensor is 1 x 1 x 1)."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


def _forward_plan(call, plan, kernel_name: str, log: int, compute: int) -> None:
    """Contiguous(self) -> Cast(-> compute) -> kernel -> Cast(-> out) -> ViewCopy(-> out)."""
    self_t, out = call.t("self"), call.t("out")
    _checks.kernel_cast(self_t.data_type, compute)
    _checks.kernel_cast(compute, out.data_type)
    dim = call["dim"] % max(self_t.ndim, 1)
    outer, axis, inner = outer_axis_inner(self_t.view_dims, dim)
    x = cast(plan, contiguous(plan, user_buf("in", 0, self_t, "self")), compute)
    params = {"outer": outer, "axis": axis, "inner": inner, "flag": log}

    def emit(dst):
        return plan.add(Step("Kernel", kernel_name, (x,), dst, lib.EMU_K_SOFTMAX_FWD, params))

    finish_into(plan, user_buf("out", 0, out, "out"), compute, emit)


def _backward_plan(call, plan, kernel_name: str, log: int) -> None:
    grad, output, out = call.t("gradOutput"), call.t("output"), call.t("out")
    compute = grad.data_type
    _checks.kernel_cast(compute, out.data_type)
    dim = call["dim"] % max(grad.ndim, 1)
    outer, axis, inner = outer_axis_inner(grad.view_dims, dim)
    g = contiguous(plan, user_buf("in", 0, grad, "gradOutput"))
    y = contiguous(plan, user_buf("in", 1, output, "output"))
    params = {"outer": outer, "axis": axis, "inner": inner, "flag": log}

    def emit(dst):
        return plan.add(Step("Kernel", kernel_name, (g, y), dst, lib.EMU_K_SOFTMAX_BWD, params))

    finish_into(plan, user_buf("out", 0, out, "out"), compute, emit)


# ---------------------------------------------------------------------- SoftmaxBackward ----


def _validate_softmax_backward(call) -> bool:
    _checks.not_null(call, "gradOutput", "output", "out")
    if call.t("gradOutput").is_empty() or call.t("output").is_empty():
        return True  # non-regbase SoCs return success before any other check
    _checks.bf16_on_soc(call, "gradOutput")
    _checks.dtype_in(call, "gradOutput", backward_dtypes(call))
    _checks.dtype_in(call, "output", backward_dtypes(call))
    _checks.same_dtype(call, "output", "gradOutput")
    _checks.normalize_dim(call, "gradOutput", call["dim"])
    _checks.max_rank(call, "gradOutput")
    _checks.same_shape(call, "gradOutput", "output")
    _checks.same_shape(call, "gradOutput", "out")
    return False


SOFTMAX_BACKWARD = register(OpDef(
    name="aclnnSoftmaxBackward",
    params=("gradOutput", "output", "dim", "out"),
    inputs=("gradOutput", "output"),
    outputs=("out",),
    validate=_validate_softmax_backward,
    build=lambda call, plan: _backward_plan(call, plan, "SoftmaxGrad", 0),
    doc="out = gradOutput*output - sum(gradOutput*output, dim)*output",
))


# ------------------------------------------------------------------------------ Softmax ----


def _validate_softmax(call) -> bool:
    _checks.not_null(call, "self", "out")
    if call.t("self").is_empty():
        return True  # success before any other check
    _checks.dtype_in(call, "self", forward_dtypes(call))
    _checks.dtype_in(call, "out", forward_dtypes(call))
    _checks.normalize_dim(call, "self", call["dim"])
    _checks.max_rank(call, "self")
    _checks.same_shape(call, "self", "out")
    return False


SOFTMAX = register(OpDef(
    name="aclnnSoftmax",
    params=("self", "dim", "out"),
    inputs=("self",),
    outputs=("out",),
    validate=_validate_softmax,
    # the kernel runs in self's dtype; the result is cast to out's dtype
    build=lambda call, plan: _forward_plan(call, plan, "SoftmaxV2", 0,
                                           call.t("self").data_type),
    doc="out = exp(self - max) / sum(exp(self - max), dim)",
))


# --------------------------------------------------------------------------- LogSoftmax ----


def _validate_log_softmax(call) -> bool:
    _checks.not_null(call, "self", "out")
    _checks.normalize_dim(call, "self", call["dim"])  # dim comes first for this op
    _checks.bf16_on_soc(call, "self", "out")
    _checks.dtype_in(call, "self", FLOATS_F64)
    _checks.dtype_in(call, "out", FLOATS_F64)
    _checks.can_cast(call, call.t("out").data_type, "Tensor out", "self")
    _checks.max_rank(call, "self")
    _checks.max_rank(call, "out")
    _checks.same_shape(call, "out", "self")
    return call.t("self").is_empty()  # empty tensors are validated fully first


LOG_SOFTMAX = register(OpDef(
    name="aclnnLogSoftmax",
    params=("self", "dim", "out"),
    inputs=("self",),
    outputs=("out",),
    validate=_validate_log_softmax,
    # CANN casts self to out's dtype first and runs the kernel there
    build=lambda call, plan: _forward_plan(call, plan, "LogSoftmaxV2", 1,
                                           call.t("out").data_type),
    doc="out = (self - max) - log(sum(exp(self - max), dim))",
))


# ------------------------------------------------------------------- LogSoftmaxBackward ----


def _validate_log_softmax_backward(call) -> bool:
    _checks.not_null(call, "output", "gradOutput", "out")
    if call.t("gradOutput").is_empty() or call.t("output").is_empty():
        return True  # non-regbase SoCs return success before any other check
    _checks.bf16_on_soc(call, "gradOutput", "output")
    _checks.dtype_in(call, "output", backward_dtypes(call))
    _checks.dtype_in(call, "gradOutput", backward_dtypes(call))
    _checks.same_dtype(call, "output", "gradOutput")
    _checks.max_rank(call, "gradOutput")
    _checks.max_rank(call, "output")
    _checks.same_shape(call, "gradOutput", "output")
    _checks.same_shape(call, "gradOutput", "out")
    _checks.normalize_dim(call, "gradOutput", call["dim"])  # shape before dim for this op
    return False


LOG_SOFTMAX_BACKWARD = register(OpDef(
    name="aclnnLogSoftmaxBackward",
    params=("gradOutput", "output", "dim", "out"),
    inputs=("gradOutput", "output"),
    outputs=("out",),
    validate=_validate_log_softmax_backward,
    build=lambda call, plan: _backward_plan(call, plan, "LogSoftmaxGrad", 1),
    doc="out = gradOutput - sum(gradOutput, dim) * exp(output)",
))
