"""The softmax family: Softmax, SoftmaxBackward, LogSoftmax, LogSoftmaxBackward.

One kernel family over outer x axis x inner (csrc/kernels/softmax.c), with a log flag. Each op's
``validate`` is CANN's CheckParams in CANN's order (shared/reference/cann_api.md §1.1-1.4, 1.7).
"""

from __future__ import annotations

import math

from .._C import lib
from ..dtypes import aclDataType as D
from ..plan import Step, contiguous, finish_into, user_buf
from . import OpDef, _checks, register

FLOATS = (D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_BF16)
FLOATS_F64 = (D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_DOUBLE, D.ACL_BF16)


def outer_axis_inner(shape, dim: int) -> tuple[int, int, int]:
    """Split a shape at the normalised ``dim`` (a 0-d tensor is 1 x 1 x 1)."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


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
    allowed = FLOATS_F64 if call.extended else FLOATS
    _checks.dtype_in(call, "gradOutput", allowed)
    _checks.dtype_in(call, "output", allowed)
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
