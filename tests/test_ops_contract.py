"""Phase-1 contract of aclnnSoftmax, aclnnLogSoftmax, aclnnLogSoftmaxBackward,
aclnnHardsigmoid, aclnnInplaceHardsigmoid and aclnnHardsigmoidBackward: every check in CANN's
order with its code, the messages, the empty-tensor rules, the SoC-dependent dtype lists, the
workspace sizes, and phase 2's check of the executor's operator.

Expected codes come from CANN's ops-nn op_api (CANN's CheckParams, in
code order) (executor / workspace) (promotion, CanCast); messages from
docs/runtime.md. Every successful non-empty case is also run and compared with the
independent float64 golden (tests/golden.py); every successful empty case must write nothing.

Case ids read as one-line reproductions, e.g.
``ACLNN_EMU_SOC=Ascend910A aclnnLogSoftmax(self=FLOAT[2,3], dim=1, out=BF16[2,3]) -> 161002 [out]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

import golden
import numpy as np
import pytest
from conftest import NUMPY_OF, read_view, view_byte_mask
from tensorspec import (
    BF16,
    BOOL,
    F16,
    F32,
    F64,
    I8,
    I32,
    I64,
    NCHW,
    NHWC,
    T,
    align,
    build,
    numel,
)

from aclnn_py import acl, aclnn

OK, NULLPTR, INVALID, NO_KERNEL, INNER_NULL = 0, 161001, 161002, 561003, 561103

SENTINEL = 0x5A
DEFAULT_SOC = "Ascend910B4"  # default SoC (docs/configuration.md), Atlas A2


def tr(shape, dtype=F32):
    """A transposed (column-major) 2-D view of ``shape`` over a dense storage of the reverse."""
    rows, cols = shape
    return T(shape, dtype, (1, rows), (cols, rows))


def strided_out(shape, dtype=F32):
    """Every other element of a dense buffer twice as long, starting at offset 1."""
    rows, cols = shape
    return T(shape, dtype, (2 * cols, 2), (2 * rows * cols + 1,), 1)


def logical(spec: T, host) -> np.ndarray:
    return read_view(host, spec.shape, spec.view_strides, spec.offset)


# ------------------------------------------------------------------------------ operators ----


@dataclass(frozen=True)
class Op:
    name: str  # phase-2 name, e.g. "aclnnSoftmax"
    params: tuple  # CANN argument order (without workspaceSize/executor)
    out: str  # the tensor the result is read from
    ref: Callable  # (logical inputs by name, dim, out numpy dtype) -> (ref, basis dtypes)
    backward: bool = False
    lo: float = -2.0  # input value range for random data
    hi: float = 2.0

    @property
    def api1(self) -> str:
        return self.name + "GetWorkspaceSize"

    def phase1(self, *args):
        return getattr(aclnn, self.api1)(*args)

    def phase2(self, *args):
        return getattr(aclnn, self.name)(*args)


def _ref_softmax(v, dim, odt):
    return golden.softmax(v["self"], dim), (v["self"].dtype, odt)


def _ref_log_softmax(v, dim, odt):
    # CANN's operator docs: Cast(self -> out dtype) first, the kernel computes in out's dtype
    return golden.log_softmax(golden.round_to(v["self"], odt), dim), (v["self"].dtype, odt)


def _ref_log_softmax_backward(v, dim, odt):
    return (golden.log_softmax_backward(v["gradOutput"], v["output"], dim),
            (v["gradOutput"].dtype, odt))


def _ref_hardsigmoid(v, dim, odt):
    x = v["self"]
    if x.dtype == np.int32:
        return golden.hardsigmoid_int32(x), None
    return golden.hardsigmoid(x, compute=golden.compute_dtype(x.dtype)), (x.dtype, odt)


def _ref_hardsigmoid_backward(v, dim, odt):
    g, x = v["gradOutput"], v["self"]
    ref = golden.hardsigmoid_backward(g, x, compute=golden.compute_dtype(g.dtype, x.dtype))
    return ref, (g.dtype, x.dtype, odt)


OPS = {
    "Softmax": Op("aclnnSoftmax", ("self", "dim", "out"), "out", _ref_softmax),
    "LogSoftmax": Op("aclnnLogSoftmax", ("self", "dim", "out"), "out", _ref_log_softmax),
    "LogSoftmaxBackward": Op("aclnnLogSoftmaxBackward", ("gradOutput", "output", "dim", "out"),
                             "out", _ref_log_softmax_backward, backward=True, lo=-3.0, hi=1.0),
    "Hardsigmoid": Op("aclnnHardsigmoid", ("self", "out"), "out", _ref_hardsigmoid,
                      lo=-5.0, hi=5.0),
    "InplaceHardsigmoid": Op("aclnnInplaceHardsigmoid", ("self",), "self", _ref_hardsigmoid,
                             lo=-5.0, hi=5.0),
    "HardsigmoidBackward": Op("aclnnHardsigmoidBackward", ("gradOutput", "self", "out"), "out",
                              _ref_hardsigmoid_backward, backward=True, lo=-5.0, hi=5.0),
}


# ----------------------------------------------------------------------------- the cases ----


@dataclass(frozen=True)
class Case:
    op: str  # key of OPS
    args: tuple  # T / None / int, in the op's parameter order
    code: int
    arg: Optional[str] = None  # the argument the message must name
    absent: tuple = ()  # arguments the message must not name
    has: tuple = ()  # regexes the message must match (the rule that fired)
    lacks: tuple = ()  # regexes the message must not match (a later rule's values)
    soc: Optional[str] = None  # ACLNN_EMU_SOC; None = unset (the default A2 SoC)
    note: str = ""

    @property
    def id(self) -> str:
        op = OPS[self.op]
        parts = ", ".join(f"{p}={a!r}" for p, a in zip(op.params, self.args))
        s = f"ACLNN_EMU_SOC={self.soc} " if self.soc else ""
        s += f"{op.api1}({parts}) -> {self.code}"
        if self.arg:
            s += f" [{self.arg}]"
        if self.note:
            s += f" ({self.note})"
        return s


def sm(self_, dim, out, code=OK, arg=None, **kw):
    return Case("Softmax", (self_, dim, out), code, arg, **kw)


def lsm(self_, dim, out, code=OK, arg=None, **kw):
    return Case("LogSoftmax", (self_, dim, out), code, arg, **kw)


def lsmb(grad, output, dim, out, code=OK, arg=None, **kw):
    return Case("LogSoftmaxBackward", (grad, output, dim, out), code, arg, **kw)


def hs(self_, out, code=OK, arg=None, **kw):
    return Case("Hardsigmoid", (self_, out), code, arg, **kw)


def ihs(self_, code=OK, arg=None, **kw):
    return Case("InplaceHardsigmoid", (self_,), code, arg, **kw)


def hsb(grad, self_, out, code=OK, arg=None, **kw):
    return Case("HardsigmoidBackward", (grad, self_, out), code, arg, **kw)


S23 = (2, 3)
S8 = (2, 1, 2, 1, 2, 1, 2, 2)
S9 = (2, 1, 1, 1, 1, 1, 1, 1, 2)
E20 = (2, 0)
RANK9 = r"(?<!\d)9(?!\d)"  # the rank check's message gives the actual rank
NCHW4 = (1, 2, 3, 2)

# --- aclnnSoftmax (CANN docs): null -> empty exit -> self dtype -> out dtype -> dim ->
#     rank -> shape
SOFTMAX = [
    sm(None, 1, T(S23), NULLPTR, "self"),
    sm(T(S23), 1, None, NULLPTR, "out"),
    sm(None, 1, None, NULLPTR, "self", absent=("out",)),
    sm(None, 99, T((7,), I32), NULLPTR, "self", note="null is checked before everything"),
    sm(T(E20), 1, None, NULLPTR, "out", note="null is checked before the empty exit"),
    # empty self: success before the dtype, dim, rank and shape checks
    sm(T(E20), 1, T(E20), note="empty"),
    sm(T(E20), 1, T((7,), F64), note="empty self, DOUBLE out of another shape"),
    sm(T(E20, I32), 9, T((5,), I64), note="empty: dtype/dim/shape never checked"),
    sm(T((0,), BF16), 0, T((0,), BF16), soc="Ascend910A", note="empty: BF16 never checked"),
    sm(T((0, 1, 1, 1, 1, 1, 1, 1, 1)), 0, T((1,)), note="empty 9-D"),
    sm(T(S23), 1, T(E20), INVALID, "out", note="only out empty: no exit"),
    # dtypes: self list, then out list (FLOAT, FLOAT16, DOUBLE, BF16 on A2/A3 only)
    sm(T(S23), 1, T(S23)),
    sm(T(S23, F16), 1, T(S23, F16)),
    sm(T(S23, F64), 1, T(S23, F64), note="DOUBLE accepted (AI CPU kernel)"),
    sm(T(S23, BF16), 1, T(S23, BF16), note="BF16 on the default A2 SoC"),
    sm(T(S23, BF16), 1, T(S23, BF16), soc="Ascend910B1"),
    sm(T(S23, BF16), 1, T(S23, BF16), soc="Ascend910_9392", note="A3"),
    sm(T(S23, BF16), 1, T(S23, BF16), INVALID, "self", soc="Ascend910A", has=("BF",)),
    sm(T(S23, BF16), 1, T(S23, BF16), INVALID, "self", soc="Ascend310P3", has=("BF",)),
    sm(T(S23), 1, T(S23, BF16), INVALID, "out", soc="Ascend910A", has=("BF",)),
    sm(T(S23), 1, T(S23, BF16), INVALID, "out", soc="Ascend310P3", has=("BF",)),
    sm(T(S23, F64), 1, T(S23, F64), soc="Ascend910A"),
    sm(T(S23, F16), 1, T(S23), soc="Ascend310P3"),
    sm(T(S23, I32), 1, T(S23), INVALID, "self", has=("INT32",)),
    sm(T(S23, I64), 1, T(S23), INVALID, "self"),
    sm(T(S23), 1, T(S23, I32), INVALID, "out", has=("INT32",)),
    sm(T(S23), 1, T(S23, BOOL), INVALID, "out"),
    sm(T(S23, I32), 1, T(S23, I32), INVALID, "self", absent=("out",),
       note="self dtype before out dtype"),
    # out dtype may differ from self: the kernel runs in self's dtype, then Cast
    sm(T(S23), 1, T(S23, F16), note="FLOAT -> FLOAT16"),
    sm(T(S23), 0, T(S23, F64)),
    sm(T(S23), 1, T(S23, BF16)),
    sm(T(S23, F16), 1, T(S23)),
    sm(T(S23, F64), -1, T(S23, BF16)),
    sm(T(S23, BF16), 0, T(S23, F64)),
    # dim in [-n, n-1], a 0-d tensor counting as rank 1
    sm(T(S23), -2, T(S23)),
    sm(T(S23), 2, T(S23), INVALID, "dim", has=(r"-2", r"(?<!-)1")),
    sm(T(S23), -3, T(S23), INVALID, "dim"),
    sm(T(()), 0, T(()), note="0-d dim 0"),
    sm(T(()), -1, T(()), note="0-d dim -1"),
    sm(T(()), 1, T(()), INVALID, "dim", note="0-d dim 1"),
    sm(T(()), -2, T(()), INVALID, "dim", note="0-d dim -2"),
    sm(T(S8), 7, T(S8)),
    sm(T(S8), -8, T(S8)),
    sm(T(S8), 8, T(S8), INVALID, "dim"),
    sm(T(S8), -9, T(S8), INVALID, "dim"),
    sm(T(S23), 1 << 40, T(S23), INVALID, "dim", note="huge dim"),
    # rank <= 8, shape self == out
    sm(T(S9), 0, T(S9), INVALID, "self", has=(RANK9,), note="9-D"),
    sm(T(S9), 9, T(S9), INVALID, "dim", note="dim before rank"),
    sm(T(S23), 1, T((3, 2)), INVALID, "out"),
    sm(T(S23), 1, T((6,)), INVALID, "out"),
    sm(T(()), 0, T((1,)), INVALID, "out", note="{} vs {1} differ"),
    # order
    sm(T(S23, I32), 5, T((7,)), INVALID, "self", absent=("dim",), note="dtype before dim"),
    sm(T(S23), 5, T((3, 2), I32), INVALID, "out", absent=("dim",),
       note="out dtype before dim"),
    sm(T(S23), 5, T((3, 2)), INVALID, "dim", note="dim before shape"),
    sm(T(S9), 0, T((2,)), INVALID, "self", has=(RANK9,), note="rank before shape"),
    # non-contiguous self (CANN UT layout)
    sm(T((5, 4), F32, (1, 5), (4, 5)), 1, T((5, 4))),
    sm(T((5, 4), F16, (1, 5), (4, 5)), 0, strided_out((5, 4), F32)),
]

# --- aclnnLogSoftmax (CANN docs): null -> dim -> BF16/SoC (self, out) -> self dtype ->
#     out dtype -> rank(self), rank(out) -> shape -> empty exit (empty tensors are validated)
LOG_SOFTMAX = [
    lsm(None, 1, T(S23), NULLPTR, "self"),
    lsm(T(S23), 1, None, NULLPTR, "out"),
    lsm(None, 1, None, NULLPTR, "self", absent=("out",)),
    lsm(None, 7, T(S23, I32), NULLPTR, "self", note="null before dim and dtype"),
    # dim first
    lsm(T(S23, I32), 5, T(S23), INVALID, "dim", lacks=("INT32",), note="dim before dtype"),
    lsm(T(S23), 2, T((4,), I32), INVALID, "dim", lacks=("INT32", r"\[4\]"),
        note="dim before out dtype and shape"),
    lsm(T(S23, BF16), -3, T(S23, BF16), INVALID, "dim", soc="Ascend910A", lacks=("BF",),
        note="dim before the BF16/SoC rule"),
    lsm(T(S9), 9, T(S9), INVALID, "dim", note="dim before rank"),
    lsm(T(S23), 2, T(S23), INVALID, "dim"),
    lsm(T(S23), -3, T(S23), INVALID, "dim"),
    lsm(T(S23), -2, T(S23)),
    lsm(T(()), 0, T(()), note="0-d accepted as rank 1"),
    lsm(T(()), -1, T(())),
    lsm(T(()), 1, T(()), INVALID, "dim"),
    lsm(T(S8), 7, T(S8)),
    lsm(T(S8), -8, T(S8)),
    lsm(T(S8), 8, T(S8), INVALID, "dim"),
    # BF16 on self or out only on A2/A3
    lsm(T(S23, BF16), 1, T(S23, BF16)),
    lsm(T(S23, BF16), 1, T(S23, BF16), soc="Ascend910_9382"),
    lsm(T(S23, BF16), 1, T(S23, BF16), INVALID, "self", soc="Ascend910A", has=("BF",)),
    lsm(T(S23, BF16), 1, T(S23), INVALID, "self", soc="Ascend910A", has=("BF",)),
    lsm(T(S23), 1, T(S23, BF16), INVALID, "out", soc="Ascend910A", has=("BF",)),
    lsm(T(S23), 1, T(S23, BF16), INVALID, "out", soc="Ascend310P3", has=("BF",)),
    lsm(T(S23, I32), 1, T(S23, BF16), INVALID, "out", soc="Ascend910A", absent=("self",),
        has=("BF",), note="the BF16 rule (on out) before self's dtype list"),
    lsm(T(S23, F64), 1, T(S23, F16), soc="Ascend310P3"),
    # dtype lists
    lsm(T(S23, F16), 1, T(S23, F16)),
    lsm(T(S23, F64), 1, T(S23, F64)),
    lsm(T(S23, I32), 1, T(S23), INVALID, "self", has=("INT32",)),
    lsm(T(S23), 1, T(S23, I32), INVALID, "out", has=("INT32",)),
    lsm(T(S23), 1, T(S23, BOOL), INVALID, "out"),
    lsm(T(S23, I32), 1, T(S23, I32), INVALID, "self", absent=("out",),
        note="self dtype before out dtype"),
    lsm(T(S23, I32), 1, T((3, 2)), INVALID, "self", note="dtype before shape"),
    # out dtype may differ: self is cast to out's dtype and the kernel runs there
    lsm(T(S23), 1, T(S23, F16), note="FLOAT -> FLOAT16"),
    lsm(T(S23, F16), 0, T(S23)),
    lsm(T(S23, F64), 1, T(S23)),
    lsm(T(S23), -1, T(S23, F64)),
    lsm(T(S23, BF16), 1, T(S23, F64)),
    lsm(T(S23, F64), 0, T(S23, BF16)),
    # rank(self), rank(out), shape
    lsm(T(S9), 0, T(S9), INVALID, "self", has=(RANK9,)),
    lsm(T(S9), 0, T((2, 1, 1, 1, 1, 1, 1, 1, 3)), INVALID, "self", absent=("out",),
        has=(RANK9,), note="rank(self) before shape"),
    lsm(T(S8), 0, T(S9), INVALID, "out", has=(RANK9,), note="rank(out) before shape"),
    lsm(T(S23), 1, T((3, 2)), INVALID, "out"),
    lsm(T(()), 0, T((1,)), INVALID, "out"),
    # empty tensors are validated fully, then succeed with workspace 0
    lsm(T(E20), 1, T(E20), note="empty"),
    lsm(T((0,)), 0, T((0,)), note="empty 1-D"),
    lsm(T(E20, F64), 0, T(E20, F16), note="empty, out dtype differs"),
    lsm(T(E20), 5, T(E20), INVALID, "dim", note="empty self with a bad dim"),
    lsm(T(E20), 1, T(S23), INVALID, "out", note="empty self with another out shape"),
    lsm(T(E20, I32), 1, T(E20), INVALID, "self", note="empty self of a bad dtype"),
    lsm(T(E20, BF16), 1, T(E20, BF16), INVALID, "self", soc="Ascend910A",
        note="empty BF16 off A2/A3"),
    lsm(T((0, 1, 1, 1, 1, 1, 1, 1, 1)), 0, T((0, 1, 1, 1, 1, 1, 1, 1, 1)), INVALID, "self",
        has=(RANK9,), note="empty 9-D"),
    lsm(T(E20), 1, None, NULLPTR, "out"),
    # non-contiguous self
    lsm(T((5, 4), F32, (1, 5), (4, 5)), 1, T((5, 4))),
    lsm(T((5, 4), F32, (1, 5), (4, 5)), 0, strided_out((5, 4), F16)),
]

# --- aclnnLogSoftmaxBackward (CANN docs): null (output, gradOutput, out) -> empty exit ->
#     dtype (BF16/SoC on either input, output list, gradOutput list, same) -> rank -> shapes ->
#     dim; out's dtype is not checked
_G, _Y = T(S23), T(S23)
LOG_SOFTMAX_BACKWARD = [
    lsmb(None, _Y, 1, T(S23), NULLPTR, "gradOutput"),
    lsmb(_G, None, 1, T(S23), NULLPTR, "output"),
    lsmb(_G, _Y, 1, None, NULLPTR, "out"),
    lsmb(None, None, 1, T(S23), NULLPTR, "output", absent=("gradOutput",),
         note="output is checked first"),
    lsmb(None, _Y, 1, None, NULLPTR, "gradOutput", absent=("out",)),
    lsmb(_G, None, 1, None, NULLPTR, "output", absent=("out",)),
    lsmb(None, None, 1, None, NULLPTR, "output", absent=("gradOutput", "out")),
    lsmb(T(E20), T(E20), 1, None, NULLPTR, "out", note="null before the empty exit"),
    lsmb(None, T(S23, F64), 99, T((7,)), NULLPTR, "gradOutput",
         note="null before everything"),
    # empty exit right after the null checks
    lsmb(T(E20), T(E20), 1, T(S23), note="CANN UT: empty, out shape mismatch"),
    lsmb(T(E20), T(E20), 0, T(E20)),
    lsmb(T(E20, F64), T(E20, F64), 1, T(E20, F64), note="DOUBLE: empty exit before dtype"),
    lsmb(T(E20, I32), T(E20, F16), 7, T((5,), I64), note="every later check skipped"),
    lsmb(T((0, 1, 1, 1, 1, 1, 1, 1, 1)), T((0, 1, 1, 1, 1, 1, 1, 1, 1)), 0, T((1,)),
         note="9-D skipped"),
    lsmb(T(E20), T(S23), 1, T(S23), note="only gradOutput empty"),
    lsmb(T(S23), T((3, 0)), 1, T(S23), note="only output empty"),
    lsmb(T(E20, BF16), T(E20, BF16), 1, T(E20, BF16), soc="Ascend910A",
         note="BF16 rule skipped for empty"),
    # dtypes: FLOAT, FLOAT16, BF16 (A2/A3); DOUBLE rejected
    lsmb(T(S23), T(S23), 1, T(S23)),
    lsmb(T(S23, F16), T(S23, F16), 1, T(S23, F16)),
    lsmb(T(S23, BF16), T(S23, BF16), 1, T(S23, BF16)),
    lsmb(T(S23, F64), T(S23, F64), 1, T(S23, F64), INVALID, "output", absent=("gradOutput",),
         has=("DOUBLE",), note="DOUBLE: output's list is checked first"),
    lsmb(T(S23, F64), T(S23), 1, T(S23), INVALID, "gradOutput", has=("DOUBLE",)),
    lsmb(T(S23), T(S23, F64), 1, T(S23), INVALID, "output", has=("DOUBLE",)),
    lsmb(T(S23, I32), T(S23), 1, T(S23), INVALID, "gradOutput", has=("INT32",)),
    lsmb(T(S23), T(S23, F16), 1, T(S23), INVALID, "output", note="dtypes differ"),
    lsmb(T(S23, BF16), T(S23, F16), 1, T(S23), INVALID, "output", note="dtypes differ"),
    lsmb(T(S23, BF16), T(S23, BF16), 1, T(S23, BF16), INVALID, "gradOutput",
         soc="Ascend910A", has=("BF",)),
    lsmb(T(S23), T(S23, BF16), 1, T(S23), INVALID, "output", soc="Ascend310P3", has=("BF",)),
    lsmb(T(S23, F16), T(S23, F16), 1, T(S23, F16), soc="Ascend310P3"),
    # out dtype is not checked: the result is cast to it (CANN UT case_008: out DOUBLE)
    lsmb(T(S23), T(S23), 1, T(S23, F64), note="UT case_008"),
    lsmb(T(S23), T(S23), 0, T(S23, F16)),
    lsmb(T(S23, F16), T(S23, F16), 1, T(S23, F32)),
    lsmb(T(S23, BF16), T(S23, BF16), 1, T(S23, F64)),
    lsmb(T(S23), T(S23), 1, T(S23, I8), INNER_NULL, has=("Cast",),
         note="docs/return_codes.md: an out dtype the emulator cannot cast to"),
    # shape checks before dim
    lsmb(T(S23), T((2, 4)), 5, T(S23), INVALID, "output", absent=("dim",),
         note="shape before dim"),
    lsmb(T(S23), T(S23), 5, T((3, 2)), INVALID, "out", absent=("dim",),
         note="out shape before dim"),
    lsmb(T(S9), T(S9), 99, T(S9), INVALID, "gradOutput", has=(RANK9,), absent=("dim",),
         note="rank before dim"),
    lsmb(T(S9), T((2,)), 0, T((2,)), INVALID, "gradOutput", has=(RANK9,),
         note="rank(gradOutput) before shape"),
    lsmb(T(S8), T(S9), 0, T(S8), INVALID, "output", has=(RANK9,),
         note="rank(output) before shape"),
    lsmb(T(S23, F64), T((2, 4), F64), 5, T((7,)), INVALID, "output", has=("DOUBLE",),
         note="dtype before shape and dim"),
    lsmb(T(S23), T(S23), 1, T((2, 3, 1)), INVALID, "out"),
    # dim
    lsmb(T(S23), T(S23), 2, T(S23), INVALID, "dim"),
    lsmb(T(S23), T(S23), -3, T(S23), INVALID, "dim"),
    lsmb(T(S23), T(S23), -2, T(S23)),
    lsmb(T(()), T(()), 0, T(()), note="0-d"),
    lsmb(T(()), T(()), -1, T(())),
    lsmb(T(()), T(()), 1, T(()), INVALID, "dim"),
    lsmb(T(S8), T(S8), 7, T(S8)),
    lsmb(T(S8), T(S8), -9, T(S8), INVALID, "dim"),
    # non-contiguous
    lsmb(tr((5, 4)), tr((5, 4)), 1, T((5, 4))),
    lsmb(T((5, 4)), tr((5, 4), F32), 0, strided_out((5, 4), F64)),
]

# --- aclnnHardsigmoid (CANN's Hardsigmoid docs): null -> self dtype -> rank(self) -> shape ->
#     dtype(self) == dtype(out) -> storage format -> empty exit; no kernel on Atlas inference
HARDSIGMOID = [
    hs(None, T(S23), NULLPTR, "self"),
    hs(T(S23), None, NULLPTR, "out"),
    hs(None, None, NULLPTR, "self", absent=("out",)),
    hs(T(E20), None, NULLPTR, "out", note="null before the empty exit"),
    hs(None, T(S23, F64), NULLPTR, "self", soc="Ascend310P3"),
    # dtypes FLOAT, FLOAT16, INT32, BF16 (A2/A3 only); DOUBLE rejected
    hs(T(S23), T(S23)),
    hs(T(S23, F16), T(S23, F16)),
    hs(T(S23, I32), T(S23, I32), note="INT32 truncated"),
    hs(T(S23, BF16), T(S23, BF16)),
    hs(T(S23, BF16), T(S23, BF16), soc="Ascend910_9391"),
    hs(T(S23, BF16), T(S23, BF16), INVALID, "self", soc="Ascend910A", has=("BF",)),
    hs(T(S23, I32), T(S23, I32), soc="Ascend910A"),
    hs(T(S23, F64), T(S23, F64), INVALID, "self", has=("DOUBLE",)),
    hs(T(S23, I64), T(S23, I64), INVALID, "self"),
    hs(T(S23, BOOL), T(S23, BOOL), INVALID, "self"),
    # rank, shape
    hs(T(S8), T(S8)),
    hs(T(()), T(()), note="0-d"),
    hs(T(S9), T(S9), INVALID, "self", has=(RANK9,)),
    hs(T(S23), T((3, 2)), INVALID, "out"),
    hs(T(()), T((1,)), INVALID, "out"),
    # dtype(self) == dtype(out): no auto-cast
    hs(T(S23), T(S23, F16), INVALID, "out", has=("FLOAT16",)),
    hs(T(S23, F16), T(S23), INVALID, "out"),
    hs(T(S23, I32), T(S23), INVALID, "out"),
    hs(T(S23), T(S23, F64), INVALID, "out", note="DOUBLE out is not a cast target here"),
    # storage format must match
    hs(T(NCHW4), T(NCHW4, fmt=NCHW), INVALID, "out", has=("NCHW",), note="ND vs NCHW"),
    hs(T(NCHW4, fmt=NHWC), T(NCHW4, fmt=NCHW), INVALID, "out", note="NHWC vs NCHW"),
    hs(T(NCHW4, fmt=NCHW), T(NCHW4, fmt=NCHW), note="NCHW both"),
    # order
    hs(T(S9, F64), T(S9, F64), INVALID, "self", has=("DOUBLE",), note="dtype before rank"),
    hs(T(S9), T((2,)), INVALID, "self", has=(RANK9,), note="rank before shape"),
    hs(T(S23), T((3, 2), F16), INVALID, "out", has=(r"3,\s*2",), note="shape before dtypes"),
    hs(T(NCHW4), T(NCHW4, F16, fmt=NCHW), INVALID, "out", has=("FLOAT16",),
       note="dtype equality before format"),
    hs(T(S23, F64), T(S23, F16), INVALID, "self", has=("DOUBLE",),
       note="self's list before equality"),
    # empty: validated fully, then success
    hs(T(E20), T(E20), note="empty"),
    hs(T(E20, I32), T(E20, I32)),
    hs(T(E20, F64), T(E20, F64), INVALID, "self", note="empty DOUBLE"),
    hs(T(E20), T(S23), INVALID, "out", note="empty self, out shape differs"),
    hs(T(E20), T(E20, F16), INVALID, "out", note="empty, out dtype differs"),
    hs(T(E20), T(E20, fmt=NCHW), INVALID, "out", note="empty, formats differ"),
    hs(T((0, 1, 1, 1, 1, 1, 1, 1, 1)), T((0, 1, 1, 1, 1, 1, 1, 1, 1)), INVALID, "self",
       has=(RANK9,), note="empty 9-D"),
    # Atlas inference (310P): no kernel, reported after the parameter checks
    hs(T(S23), T(S23), NO_KERNEL, soc="Ascend310P3", has=("Hardsigmoid",)),
    hs(T(S23, F16), T(S23, F16), NO_KERNEL, soc="Ascend310P1"),
    hs(T(S23, F64), T(S23, F64), INVALID, "self", soc="Ascend310P3",
       note="dtype check before the missing kernel"),
    hs(T(S23, BF16), T(S23, BF16), INVALID, "self", soc="Ascend310P3"),
    hs(T(S23), T((3, 2)), INVALID, "out", soc="Ascend310P3"),
    hs(T(S23), T(S23), NO_KERNEL, soc="Ascend310B1", note="Atlas 200I/500 A2"),
    # non-contiguous
    hs(tr((5, 4)), T((5, 4))),
    hs(T((5, 4)), strided_out((5, 4))),
    hs(tr((5, 4), I32), strided_out((5, 4), I32)),
]

# --- aclnnInplaceHardsigmoid (CANN's Hardsigmoid docs): Hardsigmoid(self, self)
INPLACE = [
    ihs(None, NULLPTR, "self"),
    ihs(T(S23)),
    ihs(T(S23, F16)),
    ihs(T(S23, I32)),
    ihs(T(S23, BF16)),
    ihs(T(S23, BF16), INVALID, "self", soc="Ascend910A", has=("BF",)),
    ihs(T(S23, F64), INVALID, "self", has=("DOUBLE",)),
    ihs(T(S23, I64), INVALID, "self"),
    ihs(T(S8)),
    ihs(T(())),
    ihs(T(S9), INVALID, "self", has=(RANK9,)),
    ihs(T(S9, F64), INVALID, "self", has=("DOUBLE",), note="dtype before rank"),
    ihs(T(E20), note="empty"),
    ihs(T(E20, F64), INVALID, "self", note="empty DOUBLE is still checked"),
    ihs(T(S23), NO_KERNEL, soc="Ascend310P3"),
    ihs(T(S23, F64), INVALID, "self", soc="Ascend310P3"),
    ihs(tr((5, 4)), note="results written through the strided view"),
    ihs(strided_out((5, 4), F16)),
]

# --- aclnnHardsigmoidBackward (CANN docs): null (gradOutput, self, out) -> gradOutput
#     list -> self list -> CanCast(promote(gradOutput, self) -> out) -> ranks -> shapes -> empty
_S = T(S23)
HARDSIGMOID_BACKWARD = [
    hsb(None, _S, T(S23), NULLPTR, "gradOutput"),
    hsb(_S, None, T(S23), NULLPTR, "self"),
    hsb(_S, _S, None, NULLPTR, "out"),
    hsb(None, None, T(S23), NULLPTR, "gradOutput", absent=("self",)),
    hsb(_S, None, None, NULLPTR, "self", absent=("out",)),
    hsb(None, None, None, NULLPTR, "gradOutput", absent=("self", "out")),
    hsb(T(E20), T(E20), None, NULLPTR, "out"),
    # dtype lists: FLOAT, FLOAT16, BF16 (A2/A3); INT32 and DOUBLE rejected
    hsb(T(S23), T(S23), T(S23)),
    hsb(T(S23, F16), T(S23, F16), T(S23, F16)),
    hsb(T(S23, BF16), T(S23, BF16), T(S23, BF16)),
    hsb(T(S23, I32), T(S23), T(S23), INVALID, "gradOutput", has=("INT32",)),
    hsb(T(S23, F64), T(S23), T(S23), INVALID, "gradOutput", has=("DOUBLE",)),
    hsb(T(S23), T(S23, I32), T(S23), INVALID, "self", has=("INT32",)),
    hsb(T(S23), T(S23, F64), T(S23), INVALID, "self", has=("DOUBLE",)),
    hsb(T(S23, F64), T(S23, I32), T(S23), INVALID, "gradOutput", has=("DOUBLE",),
        note="gradOutput's list before self's"),
    hsb(T(S23, BF16), T(S23, BF16), T(S23, BF16), INVALID, "gradOutput", soc="Ascend910A",
        has=("BF",)),
    hsb(T(S23), T(S23, BF16), T(S23), INVALID, "self", soc="Ascend310P3", has=("BF",)),
    hsb(T(S23), T(S23), T(S23), soc="Ascend310P3", note="Atlas inference has this kernel"),
    hsb(T(S23, F16), T(S23, F16), T(S23, F16), soc="Ascend910A"),
    # promotion and CanCast(promoted -> out)
    hsb(T(S23), T(S23), T(S23, F64), note="out DOUBLE"),
    hsb(T(S23), T(S23), T(S23, F16)),
    hsb(T(S23), T(S23), T(S23, BF16)),
    hsb(T(S23, F16), T(S23, F16), T(S23)),
    hsb(T(S23, F16), T(S23, BF16), T(S23), note="FLOAT16 + BF16 promote to FLOAT"),
    hsb(T(S23, BF16), T(S23, F16), T(S23, F16)),
    hsb(T(S23, F16), T(S23), T(S23, BF16)),
    hsb(T(S23), T(S23), T(S23, I32), INVALID, "out", has=("INT32",), note="float -> INT32"),
    hsb(T(S23), T(S23), T(S23, BOOL), INVALID, "out", has=("BOOL",)),
    hsb(T(S23, F16), T(S23, BF16), T(S23, I64), INVALID, "out", has=("INT64",)),
    hsb(T(S23), T(S23), T((3, 2), I32), INVALID, "out", has=("INT32",),
        note="CanCast before shape"),
    hsb(T(S9), T(S9), T(S9, BOOL), INVALID, "out", has=("BOOL",), note="CanCast before rank"),
    # ranks <= 8 for all three, then shapes
    hsb(T(S8), T(S8), T(S8)),
    hsb(T(()), T(()), T(()), note="0-d"),
    hsb(T(S9), T(S9), T(S9), INVALID, "gradOutput", has=(RANK9,)),
    hsb(T(S8), T(S9), T(S8), INVALID, "self", has=(RANK9,), note="rank(self) before shape"),
    hsb(T(S8), T(S8), T(S9), INVALID, "out", has=(RANK9,), note="rank(out) before shape"),
    hsb(T(S23), T((2, 4)), T(S23), INVALID, "self"),
    hsb(T((2, 4)), T(S23), T(S23), INVALID, "gradOutput"),
    hsb(T(S23), T(S23), T((3, 2)), INVALID, "out"),
    hsb(T(()), T(()), T((1,)), INVALID, "out"),
    # any empty -> success, after all checks
    hsb(T(E20), T(E20), T(E20), note="empty"),
    hsb(T(E20, F16), T(E20, BF16), T(E20, F64), note="empty, promoted and cast"),
    hsb(T(E20, F64), T(E20), T(E20), INVALID, "gradOutput", note="empty DOUBLE"),
    hsb(T(E20), T(E20), T(E20, I32), INVALID, "out", note="empty, out INT32"),
    hsb(T(E20), T(E20), T(S23), INVALID, "out", note="empty, out shape differs"),
    hsb(T(E20), T(S23), T(S23), INVALID, "gradOutput", note="only gradOutput empty"),
    hsb(T((0, 1, 1, 1, 1, 1, 1, 1, 1)), T((0, 1, 1, 1, 1, 1, 1, 1, 1)),
        T((0, 1, 1, 1, 1, 1, 1, 1, 1)), INVALID, "gradOutput", has=(RANK9,),
        note="empty 9-D"),
    # non-contiguous
    hsb(tr((5, 4)), T((5, 4)), T((5, 4))),
    hsb(T((5, 4), F16), tr((5, 4), BF16), strided_out((5, 4), F32)),
]

# --- products without the op's kernel (CANN's operator docs: not on Atlas 200I/500 A2)
PRODUCTS = [
    sm(T(S23), 1, T(S23), soc="Ascend310B1", note="Softmax exists on 200I/500 A2"),
    lsm(T(S23), 1, T(S23), NO_KERNEL, soc="Ascend310B1", has=("LogSoftmax",)),
    lsm(T(S23), 5, T(S23), INVALID, "dim", soc="Ascend310B1", note="checks before the kernel"),
    lsmb(T(S23), T(S23), 1, T(S23), NO_KERNEL, soc="Ascend310B4"),
    hsb(T(S23), T(S23), T(S23), NO_KERNEL, soc="Ascend310B1"),
]

CASES = SOFTMAX + LOG_SOFTMAX + LOG_SOFTMAX_BACKWARD + HARDSIGMOID + INPLACE + \
    HARDSIGMOID_BACKWARD + PRODUCTS


# ------------------------------------------------------------------------------ the runner ----


def named(msg: str, arg: str) -> bool:
    """``arg`` appears in ``msg`` as a whole word ("out" does not match inside "gradOutput")."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(arg)}(?![A-Za-z0-9_])", msg,
                     re.IGNORECASE) is not None


def assert_message(api: str, code: int, arg=None, absent=(), has=(), lacks=()) -> str:
    msg = acl.get_recent_err_msg()
    assert msg, f"no recent error message after code {code}"
    assert api in msg, f"message does not name {api}: {msg}"
    assert str(code) in msg, msg
    if arg:
        assert named(msg, arg), f"message does not name {arg!r}: {msg}"
    for other in absent:
        assert not named(msg, other), f"message names {other!r} (expected only {arg!r}): {msg}"
    for pattern in has:
        assert re.search(pattern, msg), f"message does not match {pattern!r}: {msg}"
    for pattern in lacks:
        assert not re.search(pattern, msg), f"message matches {pattern!r}: {msg}"
    assert acl.get_recent_err_msg() is None, "get_recent_err_msg must clear on read"
    return msg


def set_soc(monkeypatch, soc: Optional[str]) -> None:
    if soc is None:
        monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    else:
        monkeypatch.setenv("ACLNN_EMU_SOC", soc)
    assert acl.get_soc_name() == (soc or DEFAULT_SOC)


def outer_bytes(spec: T) -> int:
    return max(spec.storage_elems() * np.dtype(NUMPY_OF[spec.dtype]).itemsize, 1)


def run_and_check(dev, stream, op: Op, case_args, built, ws, ex):
    """Phase 2 + synchronize; the out view must match the golden and every byte of out's
    buffer outside the view must be unchanged. Empty cases must write nothing at all."""
    specs = dict(zip(op.params, case_args))
    out_spec = specs[op.out]
    _, out_host, out_ptr = built[op.out]
    total = outer_bytes(out_spec)
    if out_spec.empty:
        dev.fill(out_ptr, total, SENTINEL)
    before = dev.download(out_ptr, (total,), np.uint8)
    wsp = dev.malloc(ws) if ws else 0
    assert op.phase2(wsp, ws, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    after = dev.download(out_ptr, (total,), np.uint8)
    tensors = [a for a in case_args if isinstance(a, T)]
    if any(t.empty for t in tensors):
        assert ws == 0, "an empty-tensor executor needs no workspace"
        assert np.array_equal(before, after), "phase 2 of an empty-tensor executor wrote"
        return
    odt = NUMPY_OF[out_spec.dtype]
    got = read_view(after[:out_spec.storage_elems() * np.dtype(odt).itemsize].view(odt),
                    out_spec.shape, out_spec.view_strides, out_spec.offset)
    inputs = {p: logical(specs[p], built[p][1]) for p in op.params
              if isinstance(specs[p], T) and (p != "out")}
    dim = specs.get("dim")
    ref, basis = op.ref(inputs, dim, np.dtype(odt))
    if basis is None:  # INT32: exact
        assert got.dtype == np.int32
        assert np.array_equal(got, ref), f"got {got}, expected {ref}"
    else:
        golden.assert_close(got, ref, golden.basis(*basis), backward=op.backward)
    mask = view_byte_mask(total, out_spec.shape, out_spec.view_strides, out_spec.offset,
                          np.dtype(odt).itemsize)
    assert np.array_equal(before[~mask], after[~mask]), "bytes outside out's view changed"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_status(case: Case, dev, stream, monkeypatch):
    set_soc(monkeypatch, case.soc)
    op = OPS[case.op]
    rng = np.random.default_rng(len(case.id))
    built = {p: build(dev, a, rng, op.lo, op.hi) for p, a in zip(op.params, case.args)
             if p != "dim"}
    args = tuple(case.args[i] if p == "dim" else built[p][0] for i, p in enumerate(op.params))
    result = op.phase1(*args)
    assert isinstance(result, tuple) and len(result) == 3
    ws, ex, ret = result
    assert ret == case.code, acl.get_recent_err_msg()
    if case.code:
        assert (ws, ex) == (0, None), "a failure returns the null forms (0, None, code)"
        assert_message(op.api1, case.code, case.arg, case.absent, case.has, case.lacks)
        return
    assert acl.get_recent_err_msg() is None, "a successful call left an error message"
    assert isinstance(ex, aclnn.aclOpExecutor)
    assert isinstance(ws, int) and ws >= 0
    run_and_check(dev, stream, op, case.args, built, ws, ex)


def test_case_table_covers_every_operator():
    assert {c.op for c in CASES} == set(OPS)
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"


# ------------------------------------------------------------------------------ workspace ----


@dataclass(frozen=True)
class WsCase:
    op: str
    args: tuple
    expected: int  # from CANN's executor pipeline (CANN docs) and Align
    why: str

    @property
    def id(self) -> str:
        op = OPS[self.op]
        parts = ", ".join(f"{p}={a!r}" for p, a in zip(op.params, self.args))
        return f"{op.api1}({parts}) -> ws {self.expected} ({self.why})"


W = (16, 16)  # 256 elements: FLOAT 1024 B -> 1536, FLOAT16 512 B -> 1024, DOUBLE 2048 B -> 2560
N = numel(W)
WS_CASES = [
    WsCase("Softmax", (T(W), 1, T(W)), 0, "contiguous, same dtype: kernel writes into out"),
    WsCase("Softmax", (T(W, F64), 0, T(W, F64)), 0, "contiguous DOUBLE"),
    WsCase("Softmax", (T(W), 1, T(W, F16)), align(N * 4), "FLOAT kernel output, Cast into out"),
    WsCase("Softmax", (T(W, F16), 1, T(W, F64)), align(N * 2), "FLOAT16 kernel output, Cast"),
    WsCase("Softmax", (tr(W), 1, T(W)), align(N * 4), "Contiguous(self)"),
    WsCase("Softmax", (T(W), 1, strided_out(W)), align(N * 4), "kernel output, ViewCopy"),
    WsCase("Softmax", (tr(W), 1, T(W, F64)), 2 * align(N * 4),
           "Contiguous(self) + kernel output"),
    WsCase("LogSoftmax", (T(W), 1, T(W)), 0, "contiguous, same dtype"),
    WsCase("LogSoftmax", (T(W), 1, T(W, F16)), align(N * 2),
           "Cast(self -> FLOAT16) first; kernel writes into out"),
    WsCase("LogSoftmax", (T(W, F16), 0, T(W)), align(N * 4), "Cast(self -> FLOAT) first"),
    WsCase("LogSoftmax", (T(W, BF16), 0, T(W, F64)), align(N * 8), "Cast(self -> DOUBLE)"),
    WsCase("LogSoftmax", (tr(W), 1, T(W, F16)), align(N * 4) + align(N * 2),
           "Contiguous(self) + Cast"),
    WsCase("LogSoftmax", (T(W), 1, strided_out(W)), align(N * 4), "kernel output, ViewCopy"),
    WsCase("LogSoftmaxBackward", (T(W), T(W), 1, T(W)), 0, "contiguous, same dtype"),
    WsCase("LogSoftmaxBackward", (T(W), T(W), 1, T(W, F64)), align(N * 4),
           "FLOAT kernel output, Cast into out"),
    WsCase("LogSoftmaxBackward", (tr(W), T(W), 1, T(W)), align(N * 4), "Contiguous(gradOutput)"),
    WsCase("LogSoftmaxBackward", (tr(W, F16), tr(W, F16), 0, T(W, F16)), 2 * align(N * 2),
           "Contiguous of both inputs"),
    WsCase("Hardsigmoid", (T(W), T(W)), 0, "contiguous"),
    WsCase("Hardsigmoid", (T(W, I32), T(W, I32)), 0, "contiguous INT32"),
    WsCase("Hardsigmoid", (tr(W), T(W)), align(N * 4), "Contiguous(self)"),
    WsCase("Hardsigmoid", (T(W, F16), strided_out(W, F16)), align(N * 2),
           "kernel output, ViewCopy"),
    WsCase("InplaceHardsigmoid", (T(W),), 0, "contiguous: in place"),
    WsCase("InplaceHardsigmoid", (tr(W),), 2 * align(N * 4),
           "Contiguous(self) + kernel output, ViewCopy back into self"),
    WsCase("HardsigmoidBackward", (T(W), T(W), T(W)), 0, "contiguous, same dtype"),
    WsCase("HardsigmoidBackward", (T(W, F16), T(W, F16), T(W)), align(N * 2),
           "FLOAT16 kernel output, Cast into out"),
    WsCase("HardsigmoidBackward", (T(W, F16), T(W), T(W)), align(N * 4),
           "Cast(gradOutput -> FLOAT)"),
    WsCase("HardsigmoidBackward", (T(W, F16), T(W, BF16), T(W)), 2 * align(N * 4),
           "Cast of both inputs to the promoted FLOAT"),
    WsCase("HardsigmoidBackward", (T(W, F16), T(W, BF16), T(W, F16)), 3 * align(N * 4),
           "both Casts + FLOAT kernel output, Cast into out"),
    WsCase("HardsigmoidBackward", (tr(W), T(W), strided_out(W)), 2 * align(N * 4),
           "Contiguous(gradOutput) + kernel output, ViewCopy"),
]


@pytest.mark.parametrize("case", WS_CASES, ids=lambda c: c.id)
def test_workspace_size(case: WsCase, dev, stream):
    op = OPS[case.op]
    rng = np.random.default_rng(11)
    built = {p: build(dev, a, rng, op.lo, op.hi) for p, a in zip(op.params, case.args)
             if p != "dim"}
    args = tuple(case.args[i] if p == "dim" else built[p][0] for i, p in enumerate(op.params))
    ws, ex, ret = op.phase1(*args)
    assert ret == 0, acl.get_recent_err_msg()
    assert ws == case.expected
    run_and_check(dev, stream, op, case.args, built, ws, ex)  # and that workspace suffices


# ----------------------------------------------------------- phase 2: the executor's op ----


def _valid_args(op: Op):
    return tuple(1 if p == "dim" else T(S23) for p in op.params)


PAIRS = [("Softmax", "LogSoftmax"), ("LogSoftmax", "Softmax"),
         ("Softmax", "LogSoftmaxBackward"), ("LogSoftmaxBackward", "SoftmaxBackward"),
         ("Hardsigmoid", "InplaceHardsigmoid"), ("InplaceHardsigmoid", "Hardsigmoid"),
         ("HardsigmoidBackward", "Hardsigmoid"), ("Hardsigmoid", "HardsigmoidBackward"),
         ("LogSoftmax", "HardsigmoidBackward")]


@pytest.mark.parametrize("built_by,run_by", PAIRS,
                         ids=[f"executor of aclnn{a}GetWorkspaceSize passed to aclnn{b} -> 161002"
                              for a, b in PAIRS])
def test_phase2_rejects_an_executor_of_another_operator(built_by, run_by, dev, stream):
    op = OPS[built_by]
    rng = np.random.default_rng(12)
    specs = _valid_args(op)
    built = {p: build(dev, a, rng, op.lo, op.hi) for p, a in zip(op.params, specs)
             if p != "dim"}
    args = tuple(1 if p == "dim" else built[p][0] for p in op.params)
    ws, ex, ret = op.phase1(*args)
    assert ret == 0, acl.get_recent_err_msg()
    runner = OPS[run_by].name if run_by in OPS else "aclnn" + run_by
    wsp = dev.malloc(ws) if ws else 0
    assert getattr(aclnn, runner)(wsp, ws, ex, stream) == INVALID
    msg = acl.get_recent_err_msg()
    assert msg and runner in msg and "161002" in msg and op.name in msg, msg
    # docs/return_codes.md: a single-use executor is consumed also when phase 2 rejects it
    assert op.phase2(wsp, ws, ex, stream) == NULLPTR
    assert "consumed" in (acl.get_recent_err_msg() or "")


@pytest.mark.parametrize("name", list(OPS), ids=lambda n: f"aclnn{n}(0, 0, None, stream) -> 161001")
def test_phase2_null_executor(name, stream):
    op = OPS[name]
    assert op.phase2(0, 0, None, stream) == NULLPTR
    msg = acl.get_recent_err_msg()
    assert msg and op.name in msg and "161001" in msg and "executor" in msg, msg


# ------------------------------------------------------------------------ message content ----


def test_messages_give_actual_and_expected_values(dev, stream):
    """docs/runtime.md: the API name, the code, and a sentence naming the argument and the rule with
    the actual and expected values."""
    rng = np.random.default_rng(13)
    op = OPS["LogSoftmax"]
    s, _, _ = build(dev, T(S8), rng, -1, 1)
    o, _, _ = build(dev, T(S8), rng, -1, 1)
    assert op.phase1(s, 8, o)[2] == INVALID
    msg = assert_message(op.api1, INVALID, "dim")
    assert re.search(r"(?<![\d-])8(?!\d)", msg) and "-8" in msg and re.search(r"(?<!-)7", msg), \
        f"message lacks the actual dim 8 and the range [-8, 7]: {msg}"
    op = OPS["Hardsigmoid"]
    s, _, _ = build(dev, T(S23, F64), rng, -1, 1)
    o, _, _ = build(dev, T(S23, F64), rng, -1, 1)
    assert op.phase1(s, o)[2] == INVALID
    msg = assert_message(op.api1, INVALID, "self")
    assert "DOUBLE" in msg and "FLOAT16" in msg and "INT32" in msg, \
        f"message lacks the actual dtype and the allowed list: {msg}"
    op = OPS["HardsigmoidBackward"]
    g, _, _ = build(dev, T(S23), rng, -1, 1)
    x, _, _ = build(dev, T(S23), rng, -1, 1)
    o, _, _ = build(dev, T(S23, I32), rng, -1, 1)
    assert op.phase1(g, x, o)[2] == INVALID
    msg = assert_message(op.api1, INVALID, "out")
    assert "FLOAT" in msg and "INT32" in msg, f"message lacks the cast's dtypes: {msg}"


def test_inplace_writes_the_result_into_self(dev, stream):
    """CANN's examples: the inplace example reads its result back from self's buffer."""
    x = np.array([-4, -3, -2, 0, 1, 2, 4, 5], dtype=np.float32).reshape(4, 2)
    ptr, t = dev.tensor(x)
    ws, ex, ret = aclnn.aclnnInplaceHardsigmoidGetWorkspaceSize(t)
    assert (ws, ret) == (0, 0), acl.get_recent_err_msg()
    assert aclnn.aclnnInplaceHardsigmoid(0, 0, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    got = dev.download(ptr, (4, 2), np.float32)
    expected = np.array([0, 0, 1 / 6, 0.5, 4 / 6, 5 / 6, 1, 1]).reshape(4, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
