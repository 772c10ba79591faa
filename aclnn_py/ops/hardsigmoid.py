"""Hardsigmoid, InplaceHardsigmoid and HardsigmoidBackward.

y = clip(alpha*x + beta, 0, 1); the backward passes grad*alpha where 0 < alpha*x + beta < 1 (an
open interval evaluated in the compute precision) and 0 elsewhere. CANN fixes alpha = 1.0f/6.0f
and beta = 0.5f; it computes alpha as 1.0f/6.0f rather than writing a decimal literal so that
x = -3 lands exactly on the mask boundary (alpha*x + beta == 0 in float32). The functional layer
may pass other values (the oneDNN attributes).
"""

from __future__ import annotations

from .. import dtypes
from .._C import lib
from ..dtypes import aclDataType as D
from ..plan import Step, cast, contiguous, finish_into, user_buf
from ..tensor import numel
from . import OpDef, _checks, register

ALPHA = 1.0 / 6.0  # as a double; the kernels round it to float32 (== 1.0f/6.0f) for f32/f16/bf16
BETA = 0.5
ATTRS = {"alpha": ALPHA, "beta": BETA}


def _forward_dtypes(call) -> tuple:
    """FLOAT, FLOAT16, INT32, plus BFLOAT16 on DAV_2201 (Atlas A2/A3); DOUBLE in functional."""
    base = (D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_INT32)
    if call.extended:
        return base + (D.ACL_BF16, D.ACL_DOUBLE)
    return base + (D.ACL_BF16,) if call.soc.bf16 else base


def _backward_dtypes(call) -> tuple:
    base = (D.ACL_FLOAT, D.ACL_FLOAT16)
    if call.extended:
        return base + (D.ACL_BF16, D.ACL_DOUBLE)
    return base + (D.ACL_BF16,) if call.soc.bf16 else base


def _forward_plan(call, plan, out_name: str) -> None:
    """Contiguous(self) -> HardSigmoid -> [Cast, functional only] -> ViewCopy(-> out)."""
    self_t, out = call.t("self"), call.t(out_name)
    _checks.kernel_cast(self_t.data_type, out.data_type)
    x = contiguous(plan, user_buf("in", 0, self_t, "self"))
    params = {"n": numel(self_t.view_dims), **{k: call.attrs[k] for k in ("alpha", "beta")}}

    def emit(dst):
        return plan.add(Step("Kernel", "HardSigmoid", (x,), dst, lib.EMU_K_HARDSIGMOID_FWD,
                             params))

    finish_into(plan, user_buf("out", 0, out, out_name), self_t.data_type, emit)


# ---------------------------------------------------------------------------- Hardsigmoid ----


def _validate_hardsigmoid(call) -> bool:
    _checks.not_null(call, "self", "out")
    _checks.dtype_in(call, "self", _forward_dtypes(call))
    _checks.max_rank(call, "self")
    _checks.same_shape(call, "self", "out")
    if call.extended:  # the functional layer casts to any float out_dtype
        _checks.dtype_in(call, "out", _forward_dtypes(call))
    else:
        _checks.same_dtype(call, "self", "out")
        _checks.same_format(call, "self", "out")
    return call.t("self").is_empty()  # empty tensors are validated fully first


HARDSIGMOID = register(OpDef(
    name="aclnnHardsigmoid",
    params=("self", "out"),
    inputs=("self",),
    outputs=("out",),
    validate=_validate_hardsigmoid,
    build=lambda call, plan: _forward_plan(call, plan, "out"),
    int_params=(),
    doc="out = clip(self/6 + 1/2, 0, 1)",
    attrs=ATTRS,
))


# --------------------------------------------------------------------- InplaceHardsigmoid ----


def _validate_inplace_hardsigmoid(call) -> bool:
    _checks.not_null(call, "self")
    _checks.dtype_in(call, "self", _forward_dtypes(call))
    _checks.max_rank(call, "self")
    return call.t("self").is_empty()


INPLACE_HARDSIGMOID = register(OpDef(
    name="aclnnInplaceHardsigmoid",
    params=("self",),
    inputs=("self",),
    outputs=("self",),
    validate=_validate_inplace_hardsigmoid,
    build=lambda call, plan: _forward_plan(call, plan, "self"),  # out is self
    int_params=(),
    doc="self = clip(self/6 + 1/2, 0, 1), in place",
    attrs=ATTRS,
))


# -------------------------------------------------------------------- HardsigmoidBackward ----


def _validate_hardsigmoid_backward(call) -> bool:
    _checks.not_null(call, "gradOutput", "self", "out")
    allowed = _backward_dtypes(call)
    _checks.dtype_in(call, "gradOutput", allowed)
    _checks.dtype_in(call, "self", allowed)
    promoted = dtypes.promote(call.t("gradOutput").data_type, call.t("self").data_type)
    _checks.can_cast(call, promoted, "Promoted", "out")
    for name in ("gradOutput", "self", "out"):
        _checks.max_rank(call, name)
    _checks.same_shape(call, "self", "gradOutput")
    _checks.same_shape(call, "self", "out")
    return any(call.t(n).is_empty() for n in ("gradOutput", "self", "out"))


def _backward_plan(call, plan) -> None:
    """Contiguous+Cast each input to the promoted dtype -> HardSigmoidGrad -> Cast -> ViewCopy."""
    grad, self_t, out = call.t("gradOutput"), call.t("self"), call.t("out")
    compute = dtypes.promote(grad.data_type, self_t.data_type)
    _checks.kernel_cast(compute, out.data_type)
    g = cast(plan, contiguous(plan, user_buf("in", 0, grad, "gradOutput")), compute)
    x = cast(plan, contiguous(plan, user_buf("in", 1, self_t, "self")), compute)
    params = {"n": numel(grad.view_dims), **{k: call.attrs[k] for k in ("alpha", "beta")}}

    def emit(dst):
        return plan.add(Step("Kernel", "HardSigmoidGrad", (g, x), dst,
                             lib.EMU_K_HARDSIGMOID_BWD, params))

    finish_into(plan, user_buf("out", 0, out, "out"), compute, emit)


HARDSIGMOID_BACKWARD = register(OpDef(
    name="aclnnHardsigmoidBackward",
    params=("gradOutput", "self", "out"),
    inputs=("gradOutput", "self"),
    outputs=("out",),
    validate=_validate_hardsigmoid_backward,
    build=_backward_plan,
    int_params=(),
    doc="out = gradOutput/6 where -3 < self < 3 (0 < self/6 + 1/2 < 1), else 0",
    attrs=ATTRS,
))
