"""Hardsigmoid, InplaceHardsigmoid and HardsigmoidBackward.

y = clip(alpha*x + beta, 0, 1); the backward passes grad*alpha where 0 < alpha*x + beta < 1 (an
open interval evaluated in the compute precision) and 0 elsewhere. CANN fixes alpha = 1.0f/6.0f
and beta = 0.5f; it computes alpha as 1.0f/6.0f rather than writing a decimal literal so that
x = -3 lands exactly on the mask boundary (alpha*x + beta == 0 in float32). The functional layer
may pass other values (the oneDNN attributes).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, soc
from ..dtypes import aclDataType as D
from ..enums import Kernel as K
from ..plan import Step, cast, contiguous, finish_into, user_buf
from ..tensor import numel
from . import _checks
from ._checks import (
    ACLNN,
    FUNCTIONAL,
    CanCast,
    DtypeIn,
    MaxRank,
    NotNull,
    SameDtype,
    SameFormat,
    SameShape,
)
from .decl import EMPTY_LAST, INOUT, INPUT, OUTPUT, Arg, Bench, BenchCase, FunctionalSpec, Kernel
from .opdef import OpDef, register

ALPHA = 1.0 / 6.0  # as a double; the kernels round it to float32 (== 1.0f/6.0f) for f32/f16/bf16
BETA = 0.5
ATTRS = {"alpha": ALPHA, "beta": BETA}

F32, F16, F64, BF16, I32 = D.ACL_FLOAT, D.ACL_FLOAT16, D.ACL_DOUBLE, D.ACL_BF16, D.ACL_INT32
BASE, A2A3 = soc.CLASS_BASE, soc.CLASS_A2A3
FORWARD = (F32, F16, I32)  # plus BFLOAT16 on DAV_2201 (Atlas A2/A3); DOUBLE in functional
BACKWARD = (F32, F16)
# Atlas inference (310P) and Atlas 200I/500 A2 have no Hardsigmoid kernel
NO_INFERENCE = soc.ALL_LINES - {"INFERENCE", "EDGE"}
NO_EDGE = soc.ALL_LINES - {"EDGE"}  # Atlas 200I/500 A2 has only Softmax


def _forward_dtypes(call) -> tuple:
    """The list Hardsigmoid checks self against (HARDSIGMOID's declaration)."""
    return HARDSIGMOID.allowed("self", call.soc.soc_class, call.extended)


def _backward_dtypes(call) -> tuple:
    """The list HardsigmoidBackward checks its inputs against (its declaration)."""
    return HARDSIGMOID_BACKWARD.allowed("self", call.soc.soc_class, call.extended)


def _forward_plan(call, plan, out_name: str) -> None:
    """Contiguous(self) -> HardSigmoid -> [Cast, functional only] -> ViewCopy(-> out)."""
    self_t, out = call.t("self"), call.t(out_name)
    _checks.kernel_cast(self_t.data_type, out.data_type)
    x = contiguous(plan, user_buf("in", 0, self_t, "self"))
    params = {"n": numel(self_t.view_dims), **{k: call.attrs[k] for k in ("alpha", "beta")}}
    op = call.op

    def emit(dst):
        return plan.add(Step("Kernel", op.kernel.step, (x,), dst, op.kernel_id, params))

    finish_into(plan, user_buf("out", 0, out, out_name), self_t.data_type, emit)


def _backward_plan(call, plan) -> None:
    """Contiguous+Cast each input to the promoted dtype -> HardSigmoidGrad -> Cast -> ViewCopy."""
    grad, self_t, out = call.t("gradOutput"), call.t("self"), call.t("out")
    compute = dtypes.promote(grad.data_type, self_t.data_type)
    _checks.kernel_cast(compute, out.data_type)
    g = cast(plan, contiguous(plan, user_buf("in", 0, grad, "gradOutput")), compute)
    x = cast(plan, contiguous(plan, user_buf("in", 1, self_t, "self")), compute)
    params = {"n": numel(grad.view_dims), **{k: call.attrs[k] for k in ("alpha", "beta")}}
    op = call.op

    def emit(dst):
        return plan.add(Step("Kernel", op.kernel.step, (g, x), dst, op.kernel_id, params))

    finish_into(plan, user_buf("out", 0, out, "out"), compute, emit)


_KERNEL_FWD = Kernel("HardSigmoid", K.HARDSIGMOID_FWD, "aclk_hardsigmoid_fwd", "eltwise")
_FORWARD_TABLE = {BASE: {"self": FORWARD}, A2A3: {"self": FORWARD + (BF16,)}}
_FORWARD_FUNCTIONAL = FORWARD + (BF16, F64)
# `aclnn-py bench`: the softmax family's shapes (elementwise: no dim)
_BENCH_CASES = (BenchCase((4096, 4096)), BenchCase((64, 4096, 64)), BenchCase((16, 1000, 1000)),
                BenchCase((32, 1024), hot_only=True))


# ---------------------------------------------------------------------------- Hardsigmoid ----

HARDSIGMOID = register(OpDef(
    name="aclnnHardsigmoid",
    c_header="aclnn_hardsigmoid.h",
    c_const_stream=True,
    doc="out = clip(self/6 + 1/2, 0, 1)",
    attrs=ATTRS,
    args=(
        Arg("self", INPUT, "input"),
        Arg("out", OUTPUT, "result; same dtype, shape and format as self: no cast"),
    ),
    dtypes=_FORWARD_TABLE,
    empty=EMPTY_LAST,  # empty tensors are validated fully first
    empty_if=("self",),
    checks=(
        NotNull("self", "out"),
        DtypeIn("self"),
        MaxRank("self"),
        SameShape("self", "out"),
        DtypeIn("out", only=FUNCTIONAL),  # the functional layer casts to any float out_dtype
        SameDtype("self", "out", only=ACLNN),
        SameFormat("self", "out", only=ACLNN),
    ),
    kernel=_KERNEL_FWD,
    build=lambda call, plan: _forward_plan(call, plan, "out"),
    products=NO_INFERENCE,
    functional=FunctionalSpec(
        "hardsigmoid", (("x", "self"),),
        {"self": _FORWARD_FUNCTIONAL, "out": _FORWARD_FUNCTIONAL},
        attrs=("alpha", "beta"),
        doc='''
    ``clip(alpha*x + beta, 0, 1)``, computed in float32 for float16/bfloat16/float32/int32
    inputs (alpha and beta rounded to float32) and in float64 for float64. NaN stays NaN.

    Raises:
        AclnnParamError: dtype rules (code 161002).
    '''),
    bench=Bench(lambda a, dim: np.clip(a[0] / 6 + 0.5, 0, 1), _BENCH_CASES),
    workspace_doc="0 when self and out are contiguous",
))


# --------------------------------------------------------------------- InplaceHardsigmoid ----

INPLACE_HARDSIGMOID = register(OpDef(
    name="aclnnInplaceHardsigmoid",
    c_header="aclnn_hardsigmoid.h",
    c_const_stream=True,
    doc="self = clip(self/6 + 1/2, 0, 1), in place",
    attrs=ATTRS,
    args=(Arg("self", INOUT, "input; overwritten with the result"),),
    dtypes=_FORWARD_TABLE,
    empty=EMPTY_LAST,
    empty_if=("self",),
    checks=(
        NotNull("self"),
        DtypeIn("self"),
        MaxRank("self"),
    ),
    kernel=_KERNEL_FWD,
    build=lambda call, plan: _forward_plan(call, plan, "self"),  # out is self
    products=NO_INFERENCE,
    workspace_doc="0 when self is contiguous",
))


# -------------------------------------------------------------------- HardsigmoidBackward ----

HARDSIGMOID_BACKWARD = register(OpDef(
    name="aclnnHardsigmoidBackward",
    c_header="aclnn_hardsigmoid_backward.h",
    doc="out = gradOutput/6 where -3 < self < 3 (0 < self/6 + 1/2 < 1), else 0",
    attrs=ATTRS,
    args=(
        Arg("gradOutput", INPUT, "upstream gradient"),
        Arg("self", INPUT, "the forward input; same shape as gradOutput; its dtype may differ "
                           "(both are promoted)"),
        Arg("out", OUTPUT, "the gradient; same shape as self; any dtype the promoted dtype can "
                           "be cast to (CanCast)"),
    ),
    dtypes={BASE: {"gradOutput": BACKWARD, "self": BACKWARD},
            A2A3: {"gradOutput": BACKWARD + (BF16,), "self": BACKWARD + (BF16,)}},
    empty=EMPTY_LAST,
    empty_if=("gradOutput", "self", "out"),
    checks=(
        NotNull("gradOutput", "self", "out"),
        DtypeIn("gradOutput"),
        DtypeIn("self"),
        CanCast(("gradOutput", "self"), "out", "Promoted"),
        MaxRank("gradOutput"),
        MaxRank("self"),
        MaxRank("out"),
        SameShape("self", "gradOutput"),
        SameShape("self", "out"),
    ),
    kernel=Kernel("HardSigmoidGrad", K.HARDSIGMOID_BWD, "aclk_hardsigmoid_bwd", "eltwise"),
    build=_backward_plan,
    products=NO_EDGE,
    functional=FunctionalSpec(
        "hardsigmoid_backward", (("grad_output", "gradOutput"), ("x", "self")),
        {"gradOutput": BACKWARD + (BF16, F64), "self": BACKWARD + (BF16, F64)},
        attrs=("alpha", "beta"),
        out_dtype="promoted",
        doc='''
    ``grad_output*alpha`` where ``0 < alpha*x + beta < 1`` (open interval, evaluated in the
    compute precision), else 0. The two inputs are promoted to a common dtype (float16 with
    bfloat16 gives float32); the result is cast to ``out_dtype`` (default: the promoted dtype).

    Raises:
        AclnnParamError: dtype or shape rules (code 161002).
    '''),
    bench=Bench(lambda a, dim: np.where((a[1] > -3) & (a[1] < 3), a[0] / 6, 0), _BENCH_CASES),
    workspace_doc="0 when all tensors are contiguous and all three dtypes are equal",
))
