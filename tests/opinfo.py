"""The tests' operator table (OpInfo-style, after PyTorch's ``OpInfo`` / ``op_db``): one record per
aclnn operator, from which the contract, numerics, functional, fuzz and CLI tests are driven.

The table is independent of the package: nothing here is imported from, or computed by,
``aclnn_py.ops`` (or any other part of aclnn_py). Every fact is written down from CANN's public
documentation -- the aclnn API reference of each operator (parameter tables, dtype lists per
product, check order, empty-tensor rule, examples), CANN's ops-nn op_api sources and unit tests
(test_aclnn_*.cpp), CANN's examples -- or from PyTorch/oneDNN semantics, and from the repo's own
docs (docs/dtypes.md, docs/runtime.md, docs/return_codes.md). The float64 references are the
NumPy functions of tests/golden.py.

A record (``OpInfo``) holds:
* the arguments in CANN's order and their roles (``Arg``), the attributes (``Attr``);
* the input dtype list per SoC class (``dtypes``), out's rule (``out_dtypes``), the classes
  without a kernel (``no_kernel``), the tensors whose emptiness ends phase 1 (``empty_skips``);
* the golden function (into tests/golden.py) and the random-value ranges of the inputs;
* ``status_inputs``: phase-1 inputs in CANN's check order, each with the expected code (0: the
  accepted side of a rule) and the argument / message fragments the message must (not) show;
* ``workspace_inputs``: expected workspace sizes (CANN's executor pipeline and Align);
* ``sample_inputs``: a generator of numerics samples (dtype x rank x dim grid, strided views,
  long axes); ``reference_inputs``: special values (NaN/inf lines, boundaries, extremes);
  ``examples``: CANN's example inputs and printouts (also what the bundled CLI sample prints);
* ``functional``: the NumPy layer's name, dtypes, 0-d values and error inputs; ``cli``: the
  CLI sample name and ``explain`` cases;
* for the property tests (tests/test_fuzz.py): the parameters, what phase 2 writes (``out``),
  ``empty_skips`` and the dtypes accepted on every SoC (``valid_dtypes()``).

Tolerances per dtype (``tol``) are golden.TOL (PyTorch/oneDNN) for every operator, the basis
being the lowest precision among the inputs and out (golden.basis); an INT32 result is compared
exactly.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import golden
import numpy as np
from tensorspec import BF16, BOOL, F16, F32, F64, I8, I32, I64, NC, NCHW, NHWC, T, align, numel

# ------------------------------------------------------------------------------- dtypes ----
# ACL dtypes (aclDataType) are the upper-case names imported from tensorspec; NumPy dtypes are
# the lower-case names below.

f32, f16, f64, bf16 = golden.F32, golden.F16, golden.F64, golden.BF16
i32 = np.dtype(np.int32)
FLOATS = (f32, f16, bf16, f64)
ACL_NAME = {F32: "FLOAT", F16: "FLOAT16", F64: "DOUBLE", BF16: "BF16", I32: "INT32",
            I64: "INT64", I8: "INT8", BOOL: "BOOL"}
MATRIX_NAME = {F32: "float32", F16: "float16", BF16: "bfloat16", F64: "float64", I32: "int32"}

OK, NULLPTR, INVALID, NO_KERNEL, INNER_NULL = 0, 161001, 161002, 561003, 561103

# ---------------------------------------------------------------------------- SoC classes ----
# CANN's operator docs list dtypes and kernels per product: Atlas A2 training/inference
# (Ascend910B*), Atlas A3 (Ascend910_93*), Atlas training (Ascend910A), Atlas inference
# (Ascend310P*), Atlas 200I/500 A2 (Ascend310B*). BF16 exists on A2/A3 only.

A2, A3, TRAINING, INFERENCE, EDGE = "A2", "A3", "910", "310P", "310B"
SOC_CLASSES = (A2, A3, TRAINING, INFERENCE, EDGE)
BF16_CLASSES = (A2, A3)
DEFAULT_SOC = "Ascend910B4"  # ACLNN_EMU_SOC unset (docs/configuration.md): an Atlas A2 SoC
# one SoC per class, as the tests set ACLNN_EMU_SOC
CLASS_SOC = {A2: "Ascend910B1", A3: "Ascend910_9392", TRAINING: "Ascend910A",
             INFERENCE: "Ascend310P3", EDGE: "Ascend310B1"}


def soc_class(soc: Optional[str]) -> str:
    """The product class of a SoC name (None: the default SoC)."""
    soc = soc or DEFAULT_SOC
    for prefix, cls in (("Ascend910B", A2), ("Ascend910_93", A3), ("Ascend910", TRAINING),
                        ("Ascend310P", INFERENCE), ("Ascend310B", EDGE)):
        if soc.startswith(prefix):
            return cls
    raise ValueError(soc)


def per_class(*dtypes: int) -> dict:
    """A dtype list per SoC class: ``dtypes`` on A2/A3, without BF16 elsewhere."""
    return {c: tuple(d for d in dtypes if d != BF16 or c in BF16_CLASSES) for c in SOC_CLASSES}


# -------------------------------------------------------------------------------- records ----


@dataclass(frozen=True)
class Arg:
    name: str  # CANN's parameter name
    role: str  # "in" (read), "out" (written), "inout" (read and written), "dim" (int64 attribute)


@dataclass(frozen=True)
class Attr:
    name: str
    default: object
    note: str


@dataclass(frozen=True)
class Case:
    """One phase-1 call and its expected outcome."""

    op: str  # key of OPS
    args: tuple  # T / None / int, in the op's parameter order
    code: int
    arg: Optional[str] = None  # the argument the message must name
    absent: tuple = ()  # arguments the message must not name
    has: tuple = ()  # regexes the message must match (the rule that fired, its values)
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

    @property
    def key(self) -> tuple:
        """What the call is (for finding duplicates): operator, arguments, SoC."""
        return (self.op, tuple(repr(a) for a in self.args), self.soc)


@dataclass(frozen=True)
class WsCase:
    op: str
    args: tuple
    expected: int  # from CANN's executor pipeline (CANN docs) and Align (CANN nnopbase)
    why: str

    @property
    def id(self) -> str:
        op = OPS[self.op]
        parts = ", ".join(f"{p}={a!r}" for p, a in zip(op.params, self.args))
        return f"{op.api1}({parts}) -> ws {self.expected} ({self.why})"


def dname(dt) -> str:
    return "default" if dt is None else np.dtype(dt).name


def shape_str(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def seed_of(text: str) -> int:
    return zlib.crc32(text.encode())


def lname(layout) -> str:
    """A strided layout (conftest.strided_layout's perm/step/pad) as text."""
    if not layout:
        return "contig"
    parts = []
    if "perm" in layout:
        parts.append("perm" + "".join(map(str, layout["perm"])))
    if layout.get("step", 1) != 1:
        parts.append(f"step{layout['step']}")
    if layout.get("pad"):
        parts.append(f"offset{layout['pad']}")
    return "+".join(parts)


@dataclass(frozen=True)
class Sample:
    """One numerics run through the aclnn API: input dtypes, out dtype, shape, dim, and either
    random values (``OpInfo.ranges``) or values from ``make``; inputs and out may be strided
    views (``layouts``: one conftest.strided_layout spec per input; ``out_layout``)."""

    op: str
    in_dtypes: tuple
    out_dtype: np.dtype
    shape: tuple
    dim: Optional[int] = None
    layouts: Optional[tuple] = None  # None: contiguous inputs (a grid sample)
    out_layout: dict = field(default_factory=dict)
    label: str = ""  # the id of a reference input
    make: Optional[Callable] = None  # rng -> {input name: array}
    check: Optional[Callable] = None  # (got, arrays) -> None: assertions beyond the golden

    @property
    def id(self) -> str:
        op = OPS[self.op]
        if self.label:
            return self.label
        if self.layouts is None:
            ins = "+".join(dname(d) for d in self.in_dtypes)
            s = f"{op.api} in={ins} out={dname(self.out_dtype)} shape={shape_str(self.shape)}"
            return s + (f" dim={self.dim}" if self.dim is not None else "")
        ins = " ".join(f"{n}={dname(d)}:{lname(lay)}"
                       for n, d, lay in zip(op.inputs, self.in_dtypes, self.layouts))
        s = f"{op.api} shape={shape_str(self.shape)}"
        s += f" dim={self.dim}" if self.dim is not None else ""
        if op.inplace:
            return f"{s} {ins}"
        return f"{s} {ins} out={dname(self.out_dtype)}:{lname(self.out_layout)}"


@dataclass(frozen=True)
class Example:
    """CANN's example: inputs (flat values by CANN argument, reshaped to ``shape``), dim, and the
    printout; run in each of ``dtypes`` and compared with rtol/atol (or exactly)."""

    inputs: dict
    shape: tuple
    dim: Optional[int]
    expected: tuple
    dtypes: tuple = (f32,)
    rtol: float = 0.0
    atol: float = 0.0
    exact: bool = False
    note: str = ""


@dataclass(frozen=True)
class FnError:
    """A NumPy-layer call that must raise: ``args()`` -> (positional args, keyword args)."""

    text: str  # the call, as a reproduction
    args: Callable
    exc: type
    code: Optional[int] = None
    word: Optional[str] = None  # must appear in the exception's message


@dataclass(frozen=True)
class Functional:
    """aclnn_py.functional's wrapper of an operator (docs/dtypes.md)."""

    name: str
    args: tuple  # Python names of the array arguments, in order
    cann: tuple  # the CANN argument each of them feeds
    dtypes: tuple = FLOATS  # accepted input dtypes (and out_dtype values)
    alpha_beta: bool = False  # takes alpha/beta keywords (hard-sigmoid)
    int32: bool = False  # an int32 input gives an int32 result
    zero_d: tuple = ()  # (values by Python name, dim, expected, exact)
    errors: tuple = ()  # FnError


@dataclass(frozen=True)
class ExplainCase:
    args: tuple
    exit_code: int
    steps: Optional[int] = None  # number of plan steps
    workspace: Optional[int] = None  # bytes, from CANN's pipeline and Align (CANN nnopbase)
    contains: tuple = ()  # substrings of the output
    order: tuple = ()  # step names that must appear in this order
    note: str = ""

    @property
    def id(self) -> str:
        s = f"aclnn-py explain {' '.join(self.args)} -> exit {self.exit_code}"
        if self.workspace is not None:
            s += f", workspace {self.workspace}"
        return s + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class OpInfo:
    name: str  # e.g. "SoftmaxBackward": the API is aclnnSoftmaxBackward
    args: tuple  # Arg, in CANN's order (without workspaceSize/executor)
    attrs: tuple  # Attr
    dtypes: dict  # SoC class -> ACL dtypes of the input tensors (CANN's dtype table)
    out_dtypes: Optional[tuple]  # ACL dtypes out may have on every SoC; None: self's dtype
    no_kernel: tuple  # SoC classes without the kernel: 561003 after the parameter checks
    dtype_arg: str  # the argument named when every tensor has a dtype outside the list
    bf16_arg: str  # the argument named by the "BF16 only on A2/A3" rule
    empty_skips: tuple  # an empty one of these makes phase 1 succeed with no work
    golden: Callable  # (inputs by CANN name, dim, out numpy dtype, **attrs) -> float64 ref
    backward: bool  # tolerance scaled by the largest reference magnitude
    ranges: dict  # CANN input -> (lo, hi) of random numerics / functional values
    contract_range: tuple  # (lo, hi) of the contract tests' random values
    status_inputs: tuple  # Case
    workspace_inputs: tuple  # WsCase
    sample_inputs: Callable  # OpInfo -> list of Sample
    reference_inputs: Callable  # OpInfo -> list of Sample (special values)
    examples: tuple  # Example
    functional: Optional[Functional]
    cli: str  # the bundled sample and the `aclnn-py explain` name
    explain: tuple  # ExplainCase
    # basis dtype -> (rtol, atol, allowed failing fraction), PyTorch/oneDNN
    tol: dict = field(default_factory=lambda: dict(golden.TOL))
    doc: str = ""  # where the facts come from

    @property
    def api(self) -> str:
        return "aclnn" + self.name

    @property
    def api1(self) -> str:
        return self.api + "GetWorkspaceSize"

    @property
    def params(self) -> tuple:
        return tuple(a.name for a in self.args)

    @property
    def inputs(self) -> tuple:
        """The tensors read, in argument order."""
        return tuple(a.name for a in self.args if a.role in ("in", "inout"))

    @property
    def tensors(self) -> tuple:
        return tuple(a.name for a in self.args if a.role != "dim")

    @property
    def out(self) -> str:
        """The tensor the result is written to."""
        return next(a.name for a in self.args if a.role in ("out", "inout"))

    @property
    def has_dim(self) -> bool:
        return any(a.role == "dim" for a in self.args)

    @property
    def inplace(self) -> bool:
        return any(a.role == "inout" for a in self.args)

    def accepted(self, dtype: int, soc: Optional[str] = None) -> bool:
        return dtype in self.dtypes[soc_class(soc)]

    def has_kernel(self, soc: Optional[str] = None) -> bool:
        return soc_class(soc) not in self.no_kernel

    def reference(self, arrays: dict, dim, out_dtype, **attrs) -> np.ndarray:
        """The float64 golden of the logical input values (by CANN name)."""
        return self.golden(arrays, dim, np.dtype(out_dtype), **attrs)

    def assert_matches(self, got, arrays: dict, dim, out_dtype, what: str = "",
                       **attrs) -> None:
        """got == the golden: exactly for an INT32 result, else golden.assert_close with the
        tolerance of the lowest precision among the inputs and out."""
        ref = self.reference(arrays, dim, out_dtype, **attrs)
        if np.dtype(out_dtype) == i32:
            assert np.array_equal(got, ref), f"{what}: got {got}, expected {ref}"
            return
        basis = golden.basis(*[np.asarray(a).dtype for a in arrays.values()], out_dtype)
        golden.assert_close(got, ref, basis, backward=self.backward, what=what, tol=self.tol)

    def samples(self) -> list:
        return list(self.sample_inputs(self))

    def references(self) -> list:
        return list(self.reference_inputs(self))

    def valid_dtypes(self) -> tuple:
        """(input dtypes, out dtypes or None) accepted on every SoC class."""
        ins = [d for d in self.dtypes[A2] if all(d in self.dtypes[c] for c in SOC_CLASSES)]
        return ins, None if self.out_dtypes is None else list(self.out_dtypes)


# ------------------------------------------------------------------------- golden functions ----


def _g_softmax(v, dim, odt):
    return golden.softmax(v["self"], dim)


def _g_log_softmax(v, dim, odt):
    # CANN's operator docs: Cast(self -> out dtype) first, the kernel computes in out's dtype
    return golden.log_softmax(golden.round_to(v["self"], odt), dim)


def _g_softmax_backward(v, dim, odt):
    return golden.softmax_backward(v["gradOutput"], v["output"], dim)


def _g_log_softmax_backward(v, dim, odt):
    return golden.log_softmax_backward(v["gradOutput"], v["output"], dim)


def _g_hardsigmoid(v, dim, odt, alpha=1 / 6, beta=0.5):
    x = v["self"]
    if np.asarray(x).dtype == i32:
        return golden.hardsigmoid_int32(x)
    return golden.hardsigmoid(x, alpha, beta, compute=golden.compute_dtype(x.dtype))


def _g_hardsigmoid_backward(v, dim, odt, alpha=1 / 6, beta=0.5):
    g, x = v["gradOutput"], v["self"]
    return golden.hardsigmoid_backward(g, x, alpha, beta,
                                       compute=golden.compute_dtype(g.dtype, x.dtype))


# ------------------------------------------------------------------------- case helpers ----

S23 = (2, 3)
S8 = (2, 1, 2, 1, 2, 1, 2, 2)
S9 = (2, 1, 1, 1, 1, 1, 1, 1, 2)
E20 = (2, 0)
E9 = (0, 1, 1, 1, 1, 1, 1, 1, 1)
RANK9 = r"(?<!\d)9(?!\d)"  # the rank check's message gives the actual rank
NCHW4 = (1, 2, 3, 2)
DIM8 = (r"(?<![\d-])8(?!\d)", "-8", r"(?<!-)7")  # actual dim 8 and the range [-8, 7]


def tr(shape, dtype=F32):
    """A transposed (column-major) 2-D view of ``shape`` over a dense storage of the reverse."""
    rows, cols = shape
    return T(shape, dtype, (1, rows), (cols, rows))


def strided_out(shape, dtype=F32, offset=1):
    """Every other element of a dense buffer twice as long (+ offset), starting at ``offset``."""
    rows, cols = shape
    return T(shape, dtype, (2 * cols, 2), (2 * rows * cols + offset,), offset)


def sm(self_, dim, out, code=OK, arg=None, **kw):
    return Case("Softmax", (self_, dim, out), code, arg, **kw)


def sbw(grad, output, dim, out, code=OK, arg=None, **kw):
    return Case("SoftmaxBackward", (grad, output, dim, out), code, arg, **kw)


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


# ======================================================= status inputs (phase 1) ====

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
    sm(T(E9), 0, T((1,)), note="empty 9-D"),
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
    # products: Softmax exists on Atlas 200I/500 A2 (CANN's operator docs)
    sm(T(S23), 1, T(S23), soc="Ascend310B1", note="Softmax exists on 200I/500 A2"),
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
    lsm(T(S8), 8, T(S8), INVALID, "dim", has=DIM8),  # the actual dim and the range
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
    lsm(T(E9), 0, T(E9), INVALID, "self", has=(RANK9,), note="empty 9-D"),
    lsm(T(E20), 1, None, NULLPTR, "out"),
    # non-contiguous self
    lsm(T((5, 4), F32, (1, 5), (4, 5)), 1, T((5, 4))),
    lsm(T((5, 4), F32, (1, 5), (4, 5)), 0, strided_out((5, 4), F16)),
    # products: no kernel on Atlas 200I/500 A2, reported after the parameter checks
    lsm(T(S23), 1, T(S23), NO_KERNEL, soc="Ascend310B1", has=("LogSoftmax",)),
    lsm(T(S23), 5, T(S23), INVALID, "dim", soc="Ascend310B1", note="checks before the kernel"),
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
    lsmb(T(E9), T(E9), 0, T((1,)), note="9-D skipped"),
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
    # products: no kernel on Atlas 200I/500 A2
    lsmb(T(S23), T(S23), 1, T(S23), NO_KERNEL, soc="Ascend310B4"),
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
    # the message gives the actual dtype and the allowed list
    hs(T(S23, F64), T(S23, F64), INVALID, "self", has=("DOUBLE", "FLOAT16", "INT32")),
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
    hs(T(E9), T(E9), INVALID, "self", has=(RANK9,), note="empty 9-D"),
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
    hsb(T(S23), T(S23), T(S23, I32), INVALID, "out", has=("FLOAT", "INT32"),
        note="float -> INT32"),
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
    hsb(T(E9), T(E9), T(E9), INVALID, "gradOutput", has=(RANK9,), note="empty 9-D"),
    # non-contiguous
    hsb(tr((5, 4)), T((5, 4)), T((5, 4))),
    hsb(T((5, 4), F16), tr((5, 4), BF16), strided_out((5, 4), F32)),
    # products: no kernel on Atlas 200I/500 A2
    hsb(T(S23), T(S23), T(S23), NO_KERNEL, soc="Ascend310B1"),
]


# --- aclnnSoftmaxBackward (CANN docs; rows of CANN's unit test test_aclnn_softmax_backward.cpp):
#     null (gradOutput, output, out) -> empty exit -> dtype (BF16/SoC, gradOutput list, output
#     == gradOutput) -> dim -> rank -> shapes; out's dtype is not checked (the result is cast)


def _same(shape, dtype=F32, dim=1, out_dtype=None, code=OK, arg=None, note="", **kw):
    """gradOutput, output and out all of ``shape`` (out of ``out_dtype`` if given)."""
    has = kw.pop("has", ())
    odt = dtype if out_dtype is None else out_dtype
    return sbw(T(shape, dtype, **kw), T(shape, dtype, **kw), dim, T(shape, odt, **kw), code, arg,
               has=has, note=note)


SOFTMAX_BACKWARD = [
    # --- CANN UT rows (CANN's operator docs "UT expectations") ---
    _same(S23, F32, 1, note="fp32 normal"),
    _same(S23, F32, 0),
    _same(S23, F32, -1),
    _same(S23, F32, -2),
    _same(S23, F16, 1, note="fp16 normal"),
    _same((4, 2), F32, 0, note="CANN example shape"),
    _same(S23, F64, 1, code=INVALID, arg="gradOutput", has=("DOUBLE", "FLOAT16"),
          note="DOUBLE inputs"),
    sbw(T(S23, F32), T(S23, F64), 1, T(S23, F32), INVALID, "output",
        note="gradOutput FLOAT + output DOUBLE"),
    sbw(T(S23, F32), T(S23, F16), 1, T(S23, F32), INVALID, "output",
        note="output FLOAT16 + gradOutput FLOAT"),
    sbw(T(S23, F16), T(S23, F32), 1, T(S23, F16), INVALID, "output"),
    sbw(T(S23, F32), T(S23, BF16), 1, T(S23, F32), INVALID, "output"),
    sbw(T((2, 4)), T((2, 3)), 1, T((2, 4)), INVALID, "output", has=(r"2,\s*4", r"2,\s*3"),
        note="shape {2,4} vs {2,3}"),
    sbw(T(S23), T(S23), 1, T((3, 2)), INVALID, "out", note="out shape differs"),
    sbw(T(S23), T(S23), 1, T((2, 3, 1)), INVALID, "out", note="out rank differs"),
    sbw(T(S23), T(S23), 1, T((6,)), INVALID, "out", note="same numel, other shape"),
    sbw(T(()), T(()), 0, T((1,)), INVALID, "out", note="{} vs {1} differ"),
    sbw(T((1,)), T(()), 0, T((1,)), INVALID, "output", note="{1} vs {}"),
    _same(S8, F32, 7, note="8-D dim 7"),
    _same(S8, F32, -8, note="8-D dim -8"),
    _same(S8, F32, 0),
    _same(S8, F16, 3),
    _same(S8, F32, 8, code=INVALID, arg="dim", has=DIM8, note="8-D dim 8"),
    _same(S8, F32, -9, code=INVALID, arg="dim", note="8-D dim -9"),
    _same(S9, F32, 0, code=INVALID, arg="gradOutput", note="9-D: rank check"),
    _same(S9, F32, 8, code=INVALID, arg="gradOutput", note="9-D dim 8: in range, rank fails"),
    _same(S9, F32, 9, code=INVALID, arg="dim", note="9-D dim 9: dim check comes first"),
    _same(S9, F32, -10, code=INVALID, arg="dim", note="9-D dim -10: dim check comes first"),
    _same((), F32, 0, note="0-d dim 0"),
    _same((), F32, -1, note="0-d dim -1"),
    _same((), F16, 0),
    _same((), F32, 1, code=INVALID, arg="dim", note="0-d dim 1"),
    _same((), F32, -2, code=INVALID, arg="dim", note="0-d dim -2"),
    _same((5,), F32, 1, code=INVALID, arg="dim"),
    _same((5,), F32, -2, code=INVALID, arg="dim"),
    _same((5,), F32, -1),
    _same(S23, F32, 2, code=INVALID, arg="dim"),
    _same(S23, F32, -3, code=INVALID, arg="dim"),
    _same(S23, F32, 1 << 40, code=INVALID, arg="dim", note="huge dim"),
    _same(S23, F32, -(1 << 63), code=INVALID, arg="dim", note="INT64_MIN dim"),
    # non-contiguous inputs, as in CANN's UT: shape {5,4}, strides {1,5}, storage {4,5}
    sbw(T((5, 4), F32, (1, 5), (4, 5)), T((5, 4), F32, (1, 5), (4, 5)), 1, T((5, 4)),
        note="UT non-contiguous"),
    sbw(T((5, 4), F32, (1, 5), (4, 5)), T((5, 4), F32, (1, 5), (4, 5)), 0, T((5, 4))),
    sbw(T((5, 4), F16, (1, 5), (4, 5)), T((5, 4)), 1, T((5, 4)), INVALID, "output",
        note="non-contiguous does not skip dtype checks"),
    # out dtype is not checked: the result is cast to it
    _same(S23, F32, 1, out_dtype=F64, note="out DOUBLE"),
    _same(S23, F32, 1, out_dtype=F16, note="out FLOAT16"),
    _same(S23, F32, 1, out_dtype=BF16, note="out BF16"),
    _same(S23, F16, 0, out_dtype=F32),
    _same(S23, F16, 1, out_dtype=F64),
    _same(S23, F16, 1, out_dtype=BF16),
    _same(S23, BF16, 1, note="BF16 on the default (A2) SoC"),
    _same(S23, BF16, 0, out_dtype=F32),
    _same(S23, BF16, 1, out_dtype=F16),
    _same(S23, BF16, 1, out_dtype=F64),
    # no format check (CANN UT: NHWC inputs and out return SUCCESS)
    _same((1, 2, 3, 4), F32, 3, fmt=NHWC, note="NHWC"),
    _same((1, 2, 3, 4), F16, 1, fmt=NHWC),
    sbw(T((1, 2, 3, 4), F32, fmt=NCHW), T((1, 2, 3, 4), F32, fmt=NHWC), -1,
        T((1, 2, 3, 4), F32), note="mixed formats"),
    sbw(T(S23, fmt=NC), T(S23), 1, T(S23, fmt=NC)),
    # unsupported input dtypes
    _same(S23, I32, 1, code=INVALID, arg="gradOutput"),
    _same(S23, I64, 1, code=INVALID, arg="gradOutput"),
    # CANN's check order: null -> empty exit -> dtype -> dim -> rank -> shapes
    sbw(T(S23, F64), T(S23, F64), 5, T((7,)), INVALID, "gradOutput",
        note="dtype is checked before dim and shape"),
    sbw(T(S23, F32), T(S23, F64), 5, T((7,)), INVALID, "output",
        note="dtype is checked before dim and shape"),
    sbw(T((2, 4)), T(S23), 2, T((7,)), INVALID, "dim", note="dim is checked before shape"),
    sbw(T(S23), T(S23), 5, T((7,)), INVALID, "dim", note="dim is checked before out shape"),
    sbw(T(S9), T((2,)), 0, T((2,)), INVALID, "gradOutput", note="rank is checked before shape"),
    # --- empty tensors: success right after the null checks, and nothing written ---
    sbw(T(E20), T(E20), 1, T(S23), note="CANN UT case_016: out shape mismatch"),
    sbw(T(E20), T(E20), 0, T(E20)),
    sbw(T((0,)), T((0,)), 0, T((0,))),
    sbw(T(E20, F64), T(E20, F64), 1, T(E20, F64),
        note="DOUBLE: empty exit comes before dtype checks"),
    sbw(T(E20, I32), T(E20, F16), 1, T((5,), I64), note="every later check skipped"),
    sbw(T(E20), T(E20), 7, T(E20), note="dim out of range skipped"),
    sbw(T(E20), T(E20), -100, T(E20), note="dim out of range skipped"),
    sbw(T(E9), T(E9), 0, T((1,)), note="9-D skipped"),
    sbw(T(E20), T(S23), 1, T(S23), note="only gradOutput empty"),
    sbw(T(S23), T((3, 0)), 1, T(S23), note="only output empty"),
    sbw(T(S23, F64), T((0, 3), F64), 1, T(S23, F64), note="only output empty, DOUBLE"),
    sbw(T(E20, null_data=True), T(E20, null_data=True), 1, T(E20, null_data=True),
        note="null addresses of empty tensors are never read"),
    # --- null tensors ---
    sbw(None, T(S23), 1, T(S23), NULLPTR, "gradOutput"),
    sbw(T(S23), None, 1, T(S23), NULLPTR, "output"),
    sbw(T(S23), T(S23), 1, None, NULLPTR, "out"),
    sbw(None, None, 1, T(S23), NULLPTR, "gradOutput", absent=("output",)),
    sbw(None, T(S23), 1, None, NULLPTR, "gradOutput", absent=("out",)),
    sbw(T(S23), None, 1, None, NULLPTR, "output", absent=("out",)),
    sbw(None, None, 1, None, NULLPTR, "gradOutput", absent=("output", "out")),
    sbw(None, T(E20), 1, T(E20), NULLPTR, "gradOutput",
        note="null is checked before the empty exit"),
    sbw(T(E20), T(E20), 1, None, NULLPTR, "out", note="null is checked before the empty exit"),
    sbw(None, T(S23, F64), 99, T((7,)), NULLPTR, "gradOutput",
        note="null is checked before everything else"),
    sbw(T(S23, F64), T(S23, F64), 99, None, NULLPTR, "out",
        note="null is checked before everything else"),
    # --- BF16 depends on the SoC (A2/A3 only); the rule names gradOutput ---
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, BF16), soc="Ascend910B4",
        note="the default SoC named"),
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, F32), soc="Ascend910B1"),
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, BF16), soc="Ascend910_9392"),
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, BF16), INVALID, "gradOutput", soc="Ascend910A",
        has=("BF16|BFLOAT16",)),
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, F32), INVALID, "gradOutput", soc="Ascend910A",
        has=("BF16|BFLOAT16",)),
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, BF16), INVALID, "gradOutput", soc="Ascend310P3",
        has=("BF16|BFLOAT16",)),
    sbw(T(S23, BF16), T(S23, BF16), 1, T(S23, F16), INVALID, "gradOutput", soc="Ascend310P3",
        has=("BF16|BFLOAT16",)),
    sbw(T(S23), T(S23), 1, T(S23), soc="Ascend910A"),
    sbw(T(S23, F16), T(S23, F16), 1, T(S23, F16), soc="Ascend910A"),
    sbw(T(S23), T(S23), 1, T(S23), soc="Ascend310P3"),
    sbw(T(S23, F16), T(S23, F16), 1, T(S23), soc="Ascend310P3"),
    # products: no kernel on Atlas 200I/500 A2 (CANN's operator docs), after the checks
    sbw(T(S23), T(S23), 1, T(S23), NO_KERNEL, soc="Ascend310B1", has=("SoftmaxBackward",)),
    sbw(T(S23), T(S23), 5, T(S23), INVALID, "dim", soc="Ascend310B1",
        note="checks before the kernel"),
]

# ============================================================== workspace inputs ====

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

# aclnnSoftmaxBackward: three sizes around the 512-byte blocks
W1 = (8, 31)  # 248 elements: 992 FLOAT bytes, exactly 1024 with the 32 extra bytes
W2 = (16, 16)  # 256 elements: 1024 FLOAT bytes -> 1536 (the +32 crosses a 512 boundary)
W3 = (40, 30)  # 1200 elements
SBW_WS = []
for _s in (W1, W2, W3):
    _n = numel(_s)
    SBW_WS += [
        WsCase("SoftmaxBackward", (T(_s), T(_s), 1, T(_s)), 0,
               "all contiguous FLOAT: kernel writes into out"),
        WsCase("SoftmaxBackward", (T(_s, F16), T(_s, F16), 0, T(_s, F16)), 0,
               "all contiguous FLOAT16"),
        WsCase("SoftmaxBackward", (T(_s), T(_s), 1, T(_s, F64)), align(_n * 4),
               "FLOAT kernel output, then Cast into out"),
        WsCase("SoftmaxBackward", (T(_s, F16), T(_s, F16), 1, T(_s, F32)), align(_n * 2),
               "FLOAT16 kernel output, then Cast into out"),
        WsCase("SoftmaxBackward", (tr(_s), T(_s), 1, T(_s)), align(_n * 4),
               "contiguous copy of gradOutput"),
        WsCase("SoftmaxBackward", (T(_s, F16), tr(_s, F16), 0, T(_s, F16)), align(_n * 2),
               "contiguous copy of output"),
        WsCase("SoftmaxBackward", (tr(_s), tr(_s), 1, T(_s)), 2 * align(_n * 4),
               "contiguous copies of both inputs (both live during the kernel)"),
        WsCase("SoftmaxBackward", (T(_s), T(_s), 1, strided_out(_s, offset=0)), align(_n * 4),
               "kernel output, then ViewCopy into the strided out"),
        WsCase("SoftmaxBackward", (T(_s, BF16), T(_s, BF16), 1, strided_out(_s, BF16, 0)),
               align(_n * 2), "kernel output, then ViewCopy into the strided out"),
        WsCase("SoftmaxBackward", (tr(_s), T(_s), 1, T(_s, F64)), 2 * align(_n * 4),
               "contiguous copy of gradOutput + FLOAT kernel output (kernel reads the copy)"),
        WsCase("SoftmaxBackward", (T(_s), T(_s), 1, strided_out(_s, F64, 0)),
               align(_n * 4) + align(_n * 8),
               "FLOAT kernel output + DOUBLE cast result, then ViewCopy"),
    ]


def _ws_of(name: str) -> tuple:
    return tuple(c for c in WS_CASES + SBW_WS if c.op == name)


# ================================================================ numerics sample inputs ====

INF, NAN = np.inf, np.nan

SHAPES = {  # one shape per rank 0..8
    0: (),
    1: (13,),
    2: (7, 33),
    3: (3, 7, 5),
    4: (2, 3, 5, 3),
    5: (2, 3, 2, 3, 2),
    6: (2, 2, 3, 2, 2, 3),
    7: (2, 2, 2, 3, 2, 2, 2),
    8: (2, 2, 2, 2, 3, 2, 2, 2),
}
SBW_SHAPES = {**SHAPES, 1: (7,), 2: (5, 6), 3: (3, 4, 5), 4: (2, 3, 4, 3)}
# long reduction axes (a 16-bit running sum would go visibly wrong)
LONG_AXES = (((2, 4097), -1), ((4097, 3), 0), ((3, 300, 5), 1))

# strided layouts (conftest.strided_layout): perm = memory order, step = spacing of the innermost
# memory dim, pad = offset of the view in its storage
CONTIG: dict = {}
T2 = {"perm": (1, 0)}  # 2-D transpose
STEP2 = {"step": 2}  # every other element of the innermost memory dim
OFFSET = {"pad": 5}  # view starts 5 elements into the buffer
T2_STEP_OFF = {"perm": (1, 0), "step": 2, "pad": 3}
P3 = {"perm": (2, 0, 1)}
P3_STEP_OFF = {"perm": (1, 2, 0), "step": 2, "pad": 7}
STEP3_OFF = {"step": 3, "pad": 1}
V8 = (2, 1, 2, 3, 1, 2, 2, 3)
P8 = {"perm": (7, 6, 5, 4, 3, 2, 1, 0)}  # 8-D, fully reversed memory order
P8_STEP_OFF = {"perm": (1, 0, 3, 2, 5, 4, 7, 6), "step": 2, "pad": 3}

# (input layouts, out layout) on a (5, 4) and a (3, 4, 5) view
L2 = [((T2,), CONTIG), ((STEP2,), CONTIG), ((OFFSET,), CONTIG), ((T2_STEP_OFF,), CONTIG),
      ((CONTIG,), STEP2), ((CONTIG,), T2), ((CONTIG,), OFFSET), ((T2,), T2_STEP_OFF)]
L3 = [((P3,), CONTIG), ((P3_STEP_OFF,), STEP3_OFF), ((STEP3_OFF,), P3_STEP_OFF)]
L2_BWD = [((T2, T2), CONTIG), ((STEP2, CONTIG), CONTIG), ((CONTIG, OFFSET), CONTIG),
          ((T2_STEP_OFF, STEP2), CONTIG), ((CONTIG, CONTIG), STEP2), ((CONTIG, CONTIG), T2),
          ((CONTIG, CONTIG), OFFSET), ((T2, OFFSET), T2_STEP_OFF)]
L3_BWD = [((P3, P3_STEP_OFF), CONTIG), ((STEP3_OFF, P3), P3_STEP_OFF)]
INPLACE_L2 = (T2, STEP2, OFFSET, T2_STEP_OFF)
INPLACE_L3 = (P3, P3_STEP_OFF, STEP3_OFF)


def all_dims(rank: int) -> list:
    """Every dim of a rank (negative too); a 0-d tensor counts as rank 1."""
    n = max(rank, 1)
    return list(range(-n, n))


def random_inputs(op: OpInfo, dtypes, shape, rng) -> dict:
    """Random input values in the op's ranges (INT32: integers in [-6, 6])."""
    out = {}
    for name, dt in zip(op.inputs, dtypes):
        if np.dtype(dt) == i32:
            a = rng.integers(-6, 7, size=shape)
        else:
            a = rng.uniform(*op.ranges[name], size=shape)
        out[name] = np.asarray(a).astype(dt)
    return out


def reduction_samples(op: OpInfo, dtypes, shapes, view_pairs, long_axes=LONG_AXES,
                      extra=()) -> list:
    """The softmax family: every dim (negative too) of every rank 0..8 with out = input dtype,
    every (input, out) dtype pair on every rank along the first and the last dim, long axes, and
    strided views of every input and of out."""
    n = len(op.inputs)
    out = []
    for dt in dtypes:
        for r, s in shapes.items():
            out += [Sample(op.name, (dt,) * n, dt, s, d) for d in all_dims(r)]
        for odt in FLOATS:
            if odt != dt:
                for r, s in shapes.items():
                    out += [Sample(op.name, (dt,) * n, odt, s, d)
                            for d in sorted({0, max(r, 1) - 1, -1})]
    for dt in dtypes:
        for s, d in long_axes:
            out.append(Sample(op.name, (dt,) * n, dt, s, d))
            out.append(Sample(op.name, (dt,) * n, f32 if dt != f32 else f64, s, d))
    l2, l3 = (L2, L3) if n == 1 else (L2_BWD, L3_BWD)
    for dt, odt in view_pairs:
        for d in (0, 1, -1):
            out += [Sample(op.name, (dt,) * n, odt, (5, 4), d, li, lo) for li, lo in l2]
        for d in (0, 2, -2):
            out += [Sample(op.name, (dt,) * n, odt, (3, 4, 5), d, li, lo) for li, lo in l3]
    return out + [Sample(op.name, *e) for e in extra]


def elementwise_samples(op: OpInfo, dtypes, extra=()) -> list:
    """Hard-sigmoid forward (out dtype == self dtype): every rank 0..8 and a long shape, and
    strided views of self and out (in place: of self)."""
    out = []
    for dt in dtypes:
        out += [Sample(op.name, (dt,), dt, s) for s in SHAPES.values()]
        out.append(Sample(op.name, (dt,), dt, (1000, 3)))
    for dt in dtypes:
        if op.inplace:
            out += [Sample(op.name, (dt,), dt, (5, 4), None, (li,)) for li in INPLACE_L2]
            out += [Sample(op.name, (dt,), dt, (3, 4, 5), None, (li,)) for li in INPLACE_L3]
        else:
            out += [Sample(op.name, (dt,), dt, (5, 4), None, li, lo) for li, lo in L2]
            out += [Sample(op.name, (dt,), dt, (3, 4, 5), None, li, lo) for li, lo in L3]
    return out + [Sample(op.name, *e) for e in extra]


def binary_samples(op: OpInfo, dtypes, view_triples, extra=()) -> list:
    """Hard-sigmoid backward: every (gradOutput, self) dtype pair with every float out (every
    rank for equal dtypes, ranks 1 and 3 for mixed ones), and strided views."""
    out = []
    for g in dtypes:
        for x in dtypes:
            for odt in FLOATS:
                ranks = SHAPES if g == x else {1: SHAPES[1], 3: SHAPES[3]}
                out += [Sample(op.name, (g, x), odt, s) for s in ranks.values()]
    for g, x, odt in view_triples:
        out += [Sample(op.name, (g, x), odt, (5, 4), None, li, lo) for li, lo in L2_BWD]
        out += [Sample(op.name, (g, x), odt, (3, 4, 5), None, li, lo) for li, lo in L3_BWD]
    return out + [Sample(op.name, *e) for e in extra]


def samples_of(fn, **kw) -> Callable:
    """A sample_inputs function: ``fn(op, **kw)``."""
    return lambda op: fn(op, **kw)


# ============================================================= numerics reference inputs ====
# Special values, each with its own assertions on top of the golden comparison.

ROWS = [
    ((1.0, -INF, 2.0, -INF, 0.5), "some -inf", ""),
    ((-INF,) * 5, "all -inf -> NaN", "nan"),
    ((1.0, INF, 2.0, 0.0, -1.0), "+inf -> NaN line", "nan"),
    ((1.0, 2.0, NAN, 0.0, -1.0), "NaN -> NaN line", "nan"),
    ((-INF, INF, 0.0, -INF, 1.0), "+inf and -inf", "nan"),
    ((-0.0, 0.0, -0.0, 0.0, -0.0), "signed zeros", "finite"),
    ((80.0, -80.0, 79.0, 0.0, 80.0), "+-80: exp would overflow float32", "finite"),
    ((1e4, -1e4, 9990.0, 1e4, -5.0), "+-1e4: max subtraction keeps it finite", "finite"),
    ((-1e4, -1e4 + 3, -1e4 + 1, -9999.5, -1e4), "all very negative", "finite"),
    ((1e-30, -1e-30, 0.0, 1e-38, 2e-38), "tiny", "finite"),
]
ROW_PAIRS = ((f32, f32), (f16, f16), (bf16, bf16), (f64, f64), (f32, f16), (f16, f32),
             (bf16, f64))


def _row_sample(op: str, dt, odt, row, transpose, note, expect) -> Sample:
    """``row`` as row 2 of a 4 x len(row) matrix of random values (reduced along dim -1), or
    the transposed matrix reduced along dim 0."""
    dim = 0 if transpose else -1
    text = ",".join(repr(float(v)) for v in row)
    label = (f"aclnn{op} in={dname(dt)} out={dname(odt)} dim={dim} line=[{text}] ({note})")

    def make(_op, rng):
        x = rng.uniform(-3, 3, size=(4, len(row)))
        x[2] = row
        x = x.astype(dt)
        return {"self": np.ascontiguousarray(x.T) if transpose else x}

    def check(got, arrays):
        line = got[:, 2] if transpose else got[2]
        others = np.delete(got, 2, axis=1 if transpose else 0)
        assert np.isfinite(others.astype(np.float64)).all(), "a special line leaked into others"
        if expect == "nan":
            assert np.isnan(line.astype(np.float64)).all(), f"expected a NaN line, got {line}"
        if expect == "finite":
            assert np.isfinite(line.astype(np.float64)).all(), f"overflow: {line}"

    shape = (len(row), 4) if transpose else (4, len(row))
    return Sample(op, (dt,), odt, shape, dim, label=label, make=make, check=check)


def special_rows(op: OpInfo) -> list:
    return [_row_sample(op.name, dt, odt, row, tp, note, expect)
            for dt, odt in ROW_PAIRS for row, note, expect in ROWS for tp in (False, True)]


def _point_sample(op: str, dt, odt, dim, where, at, value, check=None) -> Sample:
    """Random 4 x 5 inputs with ``value`` at ``at`` of gradOutput ("grad") or output."""
    label = (f"aclnn{op} in={dname(dt)} out={dname(odt)} shape=4x5 dim={dim} "
             f"{where}{list(at)}={value}")

    def make(o, rng):
        arrays = random_inputs(o, (dt, dt), (4, 5), rng)
        arrays["gradOutput" if where == "grad" else "output"][at] = value
        return arrays

    return Sample(op, (dt, dt), odt, (4, 5), dim, label=label, make=make,
                  check=None if check is None else check(dim, where, at, value, odt))


def _lsmb_check(dim, where, at, value, odt):
    def check(got, arrays):
        if where == "output" and value == -INF:
            # PyTorch/oneDNN: exp(-inf) = 0, so the gradient passes through unchanged
            expected = arrays["gradOutput"][at].astype(odt)
            assert got[at] == expected, f"out {got[at]} != grad {expected}"
    return check


def log_softmax_backward_specials(op: OpInfo) -> list:
    return [_point_sample(op.name, dt, odt, d, where, at, v, _lsmb_check)
            for dt, odt in ((f32, f32), (f16, f16), (bf16, bf16), (f16, f32), (f32, f64),
                            (bf16, f16))
            for d in (-1, 0)
            for where, at, v in (("output", (1, 2), -INF), ("output", (3, 0), -INF),
                                 ("output", (2, 4), NAN), ("output", (0, 1), INF),
                                 ("grad", (1, 3), NAN), ("grad", (2, 2), INF),
                                 ("grad", (0, 0), -INF), ("grad", (3, 3), -0.0),
                                 ("output", (2, 1), -0.0))]


def _sbw_line_check(dim, where, at, value, odt):
    def check(got, arrays):
        ref = golden.softmax_backward(arrays["gradOutput"], arrays["output"], dim)
        # the row (dim=-1) or column (dim=0) through the special value is all non-finite, the
        # rest is untouched by it
        line = np.zeros((4, 5), dtype=bool)
        if dim in (-1, 1):
            line[at[0], :] = True
        else:
            line[:, at[1]] = True
        assert np.isfinite(ref[~line]).all()
        if np.isnan(value):
            assert np.isnan(ref[line]).all()  # a NaN poisons its whole reduction line
            assert np.isnan(got[line]).all(), f"NaN did not spread over its line: {got}"
    return check


# float16: g*y reaches 6e4 (finite) but a float16 running sum would pass 65504; the result fits
_H_G, _H_Y = (3e4, 3e4, -3e4, -3e4, 1.0), (2.0, 2.0, 2.0, 2.0, 1.0)
# bfloat16/float32: near the top of the float32 range, every float32 intermediate still finite
_L_G, _L_Y = (1e37, 1e37, -1e37, 5e36), (3.0, 3.0, 3.0, 1.0)


def _big_sample(dt, odt, transpose, g_row, y_row, note) -> Sample:
    """Six rows of ``g_row``/``y_row`` in random orders (several summation orders)."""
    dim = 0 if transpose else -1
    label = (f"aclnnSoftmaxBackward in={dname(dt)} out={dname(odt)} dim={dim} "
             f"grad~{g_row} output~{y_row} ({note})")

    def make(_op, rng):
        perms = [rng.permutation(len(g_row)) for _ in range(6)]
        g = np.array([np.array(g_row)[p] for p in perms]).astype(dt)
        y = np.array([np.array(y_row)[p] for p in perms]).astype(dt)
        if transpose:
            g, y = np.ascontiguousarray(g.T), np.ascontiguousarray(y.T)
        return {"gradOutput": g, "output": y}

    def check(got, arrays):
        ref = golden.softmax_backward(arrays["gradOutput"], arrays["output"], dim)
        # CANN's pipeline: the result is stored in the input dtype, then cast to out's dtype
        expected = golden.round_to(golden.round_to(ref, dt), odt)
        assert np.isfinite(expected).all(), "case design: the result must fit the dtypes"
        assert np.isfinite(got.astype(np.float64)).all(), f"overflow: {got}"

    shape = (len(g_row), 6) if transpose else (6, len(g_row))
    return Sample("SoftmaxBackward", (dt, dt), odt, shape, dim, label=label, make=make,
                  check=check)


def softmax_backward_specials(op: OpInfo) -> list:
    out = [_point_sample(op.name, dt, odt, d, where, at, v, _sbw_line_check)
           for dt, odt in ((f32, f32), (f16, f16), (bf16, bf16), (f16, f32), (f32, f64))
           for d in (-1, 0)
           for where, at, v in (("grad", (1, 2), NAN), ("output", (2, 4), NAN),
                                ("grad", (3, 0), INF), ("grad", (0, 3), -INF),
                                ("output", (1, 1), INF), ("output", (2, 2), -INF))]
    hf, lf = "float16 accumulation would overflow", "near float32 max"
    out += [
        _big_sample(f16, f16, False, _H_G, _H_Y, hf),
        _big_sample(f16, f32, False, _H_G, _H_Y, hf),
        _big_sample(f16, f16, True, _H_G, _H_Y, hf),
        _big_sample(f16, f64, True, _H_G, _H_Y, hf),
        _big_sample(bf16, bf16, False, _L_G, _L_Y, lf),
        _big_sample(bf16, f32, True, _L_G, _L_Y, lf),
        _big_sample(f32, f32, False, _L_G, _L_Y, lf),
        _big_sample(f32, f64, True, _L_G, _L_Y, lf),
    ]
    return out


# hard-sigmoid: x around the float32 boundaries of alpha*x + beta (alpha = 1/6, beta = 0.5)
_F = np.float32
BOUNDARY_X = [
    _F(-3.0), _F(3.0),
    np.nextafter(_F(3.0), _F(0.0)), np.nextafter(_F(-3.0), _F(0.0)),
    np.nextafter(_F(3.0), _F(9.0)), np.nextafter(_F(-3.0), _F(-9.0)),
    _F(3.0 - 1e-4), _F(-3.0 + 1e-4), _F(3.0 + 1e-4), _F(-3.0 - 1e-4),
    _F(INF), _F(-INF), _F(NAN), _F(-0.0), _F(0.0), _F(1e-45), _F(8.0), _F(-8.0), _F(2.5),
]


def f32_linear(x) -> np.ndarray:
    """l = float32(x)*float32(1/6) + float32(0.5) as two float32 operations (PyTorch/oneDNN)."""
    x = np.asarray(x, dtype=np.float32)
    lin = x * np.float32(1.0 / 6.0)
    return lin + np.float32(0.5)


def _boundary_sample(op: str, in_dtypes, odt) -> Sample:
    ins = "+".join(dname(d) for d in in_dtypes)
    xs_text = ",".join(repr(float(x)) for x in BOUNDARY_X[:6])
    label = f"aclnn{op} in={ins} out={dname(odt)} x=[{xs_text},...]"
    backward = op == "HardsigmoidBackward"

    def make(_op, rng):
        xs = np.array(BOUNDARY_X, dtype=np.float32)
        if backward:
            grads = np.linspace(-2.0, 2.0, len(xs)).astype(np.float32) + np.float32(0.25)
            return {"gradOutput": grads.astype(in_dtypes[0]), "self": xs.astype(in_dtypes[1])}
        return {"self": xs.astype(in_dtypes[0])}

    def check(got, arrays):
        got = got.astype(np.float64)
        # the values as the kernel sees them (rounded to the input dtype, then float32)
        x_seen = arrays["self"].astype(np.float32)
        lin = f32_linear(x_seen)
        if backward:
            mask = (lin > 0) & (lin < 1)
            g_seen = arrays["gradOutput"].astype(np.float32)
            assert np.array_equal(got[~mask], np.zeros((~mask).sum())), \
                f"blocked elements not 0: x={x_seen[~mask]} got={got[~mask]}"
            expected_active = (g_seen[mask] * np.float32(1.0 / 6.0)).astype(odt)
            np.testing.assert_allclose(got[mask], expected_active.astype(np.float64), rtol=8e-3)
            if in_dtypes[1] == f32:  # the float32 boundary points themselves
                assert got[0] == 0 and got[1] == 0, "x = -3 and x = 3 must give 0"
                assert got[2] == 0, "x = nextafter(3, 0): float32 l rounds to 1.0 -> 0"
                assert got[3] != 0, "x = nextafter(-3, 0): float32 l > 0 -> grad/6"
        else:
            expected = np.where(lin <= 0, 0.0, np.where(lin >= 1, 1.0, lin.astype(np.float64)))
            assert np.array_equal(np.isnan(got), np.isnan(expected))
            assert got[0] == 0 and got[1] == 1 and got[10] == 1 and got[11] == 0
            assert got[13] == 0.5 and got[14] == 0.5, "hardsigmoid(+-0) = 0.5"
            ok = ~np.isnan(expected)
            np.testing.assert_allclose(got[ok], expected[ok], rtol=8e-3, atol=0)

    return Sample(op, tuple(in_dtypes), odt, (len(BOUNDARY_X),), label=label, make=make,
                  check=check)


INT_X = (2, 3, -5, 4, -3, 0, 5, -2, 1, -1, 6, 2147483647, -2147483648)
# computed in float32 and truncated toward zero: only x >= 3 reaches 1 (CANN's Hardsigmoid docs)
INT_EXPECTED = (0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0)


def _int_sample(op: str) -> Sample:
    def check(got, arrays):
        assert got.tolist() == list(INT_EXPECTED)

    return Sample(op, (i32,), i32, (len(INT_X),), label=f"aclnn{op}(self=INT32{list(INT_X)})",
                  make=lambda _op, rng: {"self": np.array(INT_X, dtype=np.int32)}, check=check)


def hardsigmoid_specials(op: OpInfo) -> list:
    return [_boundary_sample(op.name, (dt,), dt) for dt in (f32, f16, bf16)] + \
        [_int_sample(op.name)]


def _select_sample(grad, x, expected) -> Sample:
    """CANN's operator docs: grad*alpha if 0 < alpha*x + beta < 1, else 0 -- a blocked element is
    0 whatever its gradient; an active one carries NaN/inf through."""
    label = (f"aclnnHardsigmoidBackward(gradOutput={grad}, self={x}) FLOAT -> {expected}")

    def make(_op, rng):
        return {"gradOutput": np.array([grad, 1.0, 1.0], dtype=np.float32),
                "self": np.array([x, 0.0, 9.0], dtype=np.float32)}

    def check(got, arrays):
        v = float(got[0])
        if expected == "0":
            assert v == 0.0, v
        elif expected == "nan":
            assert np.isnan(v), v
        else:
            assert v == float(expected), v
        assert got[1] == np.float32(1.0) * np.float32(1.0 / 6.0) and got[2] == 0

    return Sample("HardsigmoidBackward", (f32, f32), f32, (3,), label=label, make=make,
                  check=check)


def hardsigmoid_backward_specials(op: OpInfo) -> list:
    out = [_boundary_sample(op.name, (g, x), odt)
           for g, x, odt in ((f32, f32, f32), (f16, f16, f16), (bf16, bf16, bf16),
                             (f32, f32, f64), (f16, bf16, f32), (f32, f32, f16))]
    out += [_select_sample(g, x, e) for g, x, e in (
        (NAN, 5.0, "0"), (NAN, -3.0, "0"), (INF, 4.0, "0"), (-INF, -INF, "0"),
        (NAN, 1.0, "nan"), (INF, 0.0, "inf"), (-INF, -2.0, "-inf"), (1.0, NAN, "0"),
        (NAN, NAN, "0"), (2.0, INF, "0"))]
    return out



# ============================================================================== examples ====
# CANN's examples (computed there from the formula, independently of this project); the
# bundled samples (`aclnn-py run <cli>`) print the first example's values with "%f".

_HS_X = (-4, -3, -2, 0, 1, 2, 4, 5)
_HS_OUT = (0, 0, 1 / 6, 0.5, 4 / 6, 5 / 6, 1, 1)
_Y421 = (1, 1, 1, 2, 2, 2, 3, 3)

EXAMPLES = {
    "Softmax": (Example({"self": tuple(range(8))}, (4, 2), 0,
                        (0.002144, 0.002144, 0.015842, 0.015842, 0.117059, 0.117059, 0.864955,
                         0.864955), atol=1e-6),),
    "SoftmaxBackward": (Example({"gradOutput": tuple(range(8)), "output": _Y421}, (4, 2), 0,
                                (-28, -37, -26, -70, -48, -66, -66, -93), exact=True,
                                note="every value exact in fp32"),),
    "LogSoftmax": (Example({"self": tuple(range(1, 10))}, (3, 3), 1,
                           (-2.407606, -1.407606, -0.407606) * 3, atol=2e-6),),
    # "fp32 last digit may differ on HW" (CANN's example): a relative tolerance
    "LogSoftmaxBackward": (Example({"gradOutput": tuple(range(8)), "output": _Y421}, (4, 2), 0,
                                   (-32.619385, -42.492512, -30.619385, -115.224892, -84.668671,
                                    -113.224892, -235.026443, -314.368591), rtol=1e-6),),
    "Hardsigmoid": (Example({"self": _HS_X}, (4, 2), None, _HS_OUT, (f32, f16, bf16),
                            rtol=4e-3, atol=1e-6),),
    # CANN's examples: the in-place example reads its result back from self's buffer
    "InplaceHardsigmoid": (Example({"self": _HS_X}, (4, 2), None, _HS_OUT, rtol=1e-6,
                                   atol=1e-7),
                           Example({"self": _HS_X}, (4, 2), None, _HS_OUT, (f16, bf16),
                                   rtol=4e-3, atol=1e-6)),
    "HardsigmoidBackward": (Example({"gradOutput": tuple(range(8)), "self": tuple(range(8))},
                                    (4, 2), None, (0, 1 / 6, 2 / 6, 0, 0, 0, 0, 0),
                                    (f32, f16, bf16), rtol=4e-3, atol=1e-6),),
}


# ============================================================================ functional ====
# aclnn_py.functional (docs/dtypes.md): the union of what CANN and oneDNN accept -- float64 for
# every op, any of the four float dtypes as out_dtype, alpha/beta for the hard-sigmoid ops.

PARAM, TYPE = "AclnnParamError", "TypeError"
_x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
_y = np.linspace(-3, -1, 6, dtype=np.float32).reshape(2, 3)
_x9 = np.linspace(-4, 4, 9, dtype=np.float32)
_ones9d = np.ones((1,) * 9, np.float32)


def fe(text, args, exc=PARAM, code=None, word=None, **kwargs) -> FnError:
    """An error call ``text`` = fn(*args, **kwargs); a param error is 161002 unless given."""
    if exc == PARAM and code is None:
        code = INVALID
    return FnError(text, lambda: (args, kwargs), exc, code, word)


SOFTMAX_FN = Functional(
    "softmax", ("x",), ("self",),
    zero_d=(({"x": 2.75}, 0, 1.0, False), ({"x": -100.0}, -1, 1.0, False)),
    errors=(
        fe("F.softmax(x[2,3], 2)", (_x, 2), word="dim"),
        fe("F.softmax(x[2,3], -3)", (_x, -3), word="dim"),
        fe("F.softmax(x0d, 1)", (np.ones((), f32), 1), word="dim"),
        fe("F.softmax(x 9-D, 0)", (_ones9d, 0)),
        fe("F.softmax(x int64, 0)", (np.ones((2, 3), np.int64), 0), word="self"),
        fe("F.softmax(x, 0, out_dtype=int32)", (_x, 0), word="out", out_dtype=np.int32),
        fe("F.softmax('abc', 0)", ("abc", 0), TYPE),
        fe("F.softmax(None, 0)", (None, 0), TYPE),
        fe("F.softmax({}, 0)", ({}, 0), TYPE),
        fe("F.softmax(x, 1.0)", (_x, 1.0), TYPE),
        fe("F.softmax(x, '1')", (_x, "1"), TYPE),
        fe("F.softmax(x, 0, out_dtype='not a dtype')", (_x, 0), TYPE, out_dtype="not a dtype"),
    ))

SOFTMAX_BACKWARD_FN = Functional(
    "softmax_backward", ("grad_output", "output"), ("gradOutput", "output"),
    # g*y - (g*y)*y = 0.28125, exact in all four dtypes
    zero_d=(({"grad_output": 1.5, "output": 0.25}, 0, 0.28125, True),
            ({"grad_output": 1.5, "output": 0.25}, -1, 0.28125, True)),
    errors=(
        fe("F.softmax_backward(g[2,3], y[2,4], 1)", (_x, np.zeros((2, 4), f32), 1),
           word="output"),
        fe("F.softmax_backward(g[2,3], y[3,2], 0)", (_x, _y.T.copy(), 0), word="output"),
        fe("F.softmax_backward(g[2,3], y[2,3], 2)", (_x, _y, 2), word="dim"),
        fe("F.softmax_backward(g[2,3], y[2,3], -3)", (_x, _y, -3), word="dim"),
        fe("F.softmax_backward(g0d, y0d, 1)", (np.ones((), f32), np.ones((), f32), 1),
           word="dim"),
        fe("F.softmax_backward(9-D, 0)", (_ones9d, _ones9d, 0)),
        fe("F.softmax_backward(g float32, y float16)", (_x, _y.astype(f16), 1), word="output"),
        fe("F.softmax_backward(g int64, y int64)",
           (np.ones((2, 3), np.int64), np.ones((2, 3), np.int64), 1), word="gradOutput"),
        fe("F.softmax_backward(g int32, y int32)",
           (np.ones((2, 3), np.int32), np.ones((2, 3), np.int32), 1), word="gradOutput"),
        fe("F.softmax_backward(g float32, y int64)", (_x, np.ones((2, 3), np.int64), 1),
           word="output"),
        fe("F.softmax_backward('abc', y, 1)", ("abc", _y, 1), TYPE),
        fe("F.softmax_backward(None, y, 1)", (None, _y, 1), TYPE),
        fe("F.softmax_backward(g, {}, 1)", (_x, {}, 1), TYPE),
        fe("F.softmax_backward(g, object(), 1)", (_x, object(), 1), TYPE),
        fe("F.softmax_backward(g, y, '1')", (_x, _y, "1"), TYPE),
        fe("F.softmax_backward(g, y, 1.0)", (_x, _y, 1.0), TYPE),
        fe("F.softmax_backward(g, y, None)", (_x, _y, None), TYPE),
        fe("F.softmax_backward(g, y, 1, out_dtype='not a dtype')", (_x, _y, 1), TYPE,
           out_dtype="not a dtype"),
    ))

LOG_SOFTMAX_FN = Functional(
    "log_softmax", ("x",), ("self",),
    zero_d=(({"x": 2.75}, 0, 0.0, False), ({"x": -100.0}, -1, 0.0, False)),
    errors=(
        fe("F.log_softmax(x[2,3], 2)", (_x, 2), word="dim"),
        fe("F.log_softmax(x[2,3], -3)", (_x, -3), word="dim"),
        fe("F.log_softmax(x int32, 2) (dim is checked first)", (np.ones((2, 3), np.int32), 2),
           word="dim"),
        fe("F.log_softmax(x, 0, out_dtype=int32)", (_x, 0), word="out", out_dtype=np.int32),
        fe("F.log_softmax(object(), 0)", (object(), 0), TYPE),
        fe("F.log_softmax(x, None)", (_x, None), TYPE),
    ))

LOG_SOFTMAX_BACKWARD_FN = Functional(
    "log_softmax_backward", ("grad_output", "output"), ("gradOutput", "output"),
    zero_d=(({"grad_output": 1.5, "output": 0.0}, 0, 0.0, False),  # 1.5 - 1.5*e^0
            ({"grad_output": 1.5, "output": -np.inf}, -1, 1.5, False)),
    errors=(
        fe("F.log_softmax_backward(g[2,3], y[2,3], 5)", (_x, _y, 5), word="dim"),
        fe("F.log_softmax_backward(g[2,3], y[2,4], 1)", (_x, np.zeros((2, 4), f32), 1),
           word="output"),
        fe("F.log_softmax_backward(g[2,3], y[2,4], 7) (shape before dim)",
           (_x, np.zeros((2, 4), f32), 7), word="output"),
        fe("F.log_softmax_backward(g float32, y float16, 1)", (_x, _y.astype(f16), 1)),
        fe("F.log_softmax_backward(g, 'y', 0)", (_x, "y", 0), TYPE),
    ))

HARDSIGMOID_FN = Functional(
    "hardsigmoid", ("x",), ("self",), alpha_beta=True, int32=True,
    zero_d=(({"x": 1.5}, None, 0.75, False), ({"x": -4.0}, None, 0.0, False)),
    errors=(
        fe("F.hardsigmoid(x int64)", (np.ones((2, 3), np.int64),), word="self"),
        fe("F.hardsigmoid(x 9-D)", (_ones9d,)),
        fe("F.hardsigmoid(x, out_dtype=int64)", (_x,), word="out", out_dtype=np.int64),
        # docs/dtypes.md: out_dtype is one of the four float dtypes (int32 keeps int32)
        fe("F.hardsigmoid(x[9], out_dtype=int32)", (_x9,), word="out_dtype", out_dtype=np.int32),
        fe("F.hardsigmoid(x[9], out_dtype=int8)", (_x9,), word="out_dtype", out_dtype=np.int8),
        fe("F.hardsigmoid(x[9], out_dtype=int64)", (_x9,), word="out_dtype", out_dtype=np.int64),
        fe("F.hardsigmoid(x, alpha='0.2')", (_x,), TYPE, alpha="0.2"),
        fe("F.hardsigmoid(x, beta=None)", (_x,), TYPE, beta=None),
        fe("F.hardsigmoid(x, alpha=[0.2])", (_x,), TYPE, alpha=[0.2]),
        fe("F.hardsigmoid(x, alpha=1j)", (_x,), TYPE, alpha=1j),
        fe("F.hardsigmoid(None)", (None,), TYPE),
        fe("F.hardsigmoid({'x': 1})", ({"x": 1},), TYPE),
        fe("F.hardsigmoid(x, out_dtype='nope')", (_x,), TYPE, out_dtype="nope"),
    ))

HARDSIGMOID_BACKWARD_FN = Functional(
    "hardsigmoid_backward", ("grad_output", "x"), ("gradOutput", "self"), alpha_beta=True,
    zero_d=(({"grad_output": 1.5, "x": 1.5}, None, 0.25, False),
            ({"grad_output": 1.5, "x": 3.0}, None, 0.0, False)),
    errors=(
        fe("F.hardsigmoid_backward(g[2,3], x[2,4])", (_x, np.zeros((2, 4), f32))),
        fe("F.hardsigmoid_backward(g, x, out_dtype=int32)", (_x, _y), word="out",
           out_dtype=np.int32),
        fe("F.hardsigmoid_backward(g int32, x)", (np.ones((2, 3), np.int32), _y),
           word="gradOutput"),
        fe("F.hardsigmoid_backward(g, x, alpha='a')", (_x, _y), TYPE, alpha="a"),
        fe("F.hardsigmoid_backward(g, x, beta=object())", (_x, _y), TYPE, beta=object()),
        fe("F.hardsigmoid_backward(None, x)", (None, _y), TYPE),
        fe("F.hardsigmoid_backward(g, object())", (_x, object()), TYPE),
    ))


# ============================================================================ CLI explain ====
# `aclnn-py explain <op> ...`: the plan's steps and workspace (CANN's pipeline and Align)

EXPLAIN = {
    "SoftmaxBackward": (
        ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32"), 0, 1, 0,
                    ("SoftmaxGrad",), note="kernel writes straight into out"),
        ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                     "float64"), 0, 2, align(4 * 2 * 4), ("Cast", "DOUBLE"),
                    ("SoftmaxGrad", "Cast"), note="FLOAT kernel output, then Cast"),
        ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32", "--strides",
                     "1,4"), 0, 3, 2 * align(4 * 2 * 4), ("Contiguous",),
                    ("Contiguous", "SoftmaxGrad"), note="contiguous copies of both inputs"),
        ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32", "--dim", "5"),
                    1, contains=("161002", "aclnnSoftmaxBackwardGetWorkspaceSize", "Dim 5")),
        ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float64"), 1,
                    contains=("161002", "DOUBLE"), note="CANN: no DOUBLE for the backward ops"),
    ),
    "Softmax": (
        ExplainCase(("softmax", "--shape", "4,2", "--dtype", "float32", "--dim", "0"), 0, 1, 0,
                    ("SoftmaxV2",)),
        ExplainCase(("softmax", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                     "float16"), 0, 2, align(4 * 2 * 4), order=("SoftmaxV2", "Cast"),
                    note="kernel in self's dtype, then Cast"),
        ExplainCase(("aclnnSoftmax", "--shape", "2x0", "--dtype", "float32"), 0, 0, 0,
                    note="CANN name and an empty tensor: nothing runs"),
    ),
    "LogSoftmax": (
        ExplainCase(("log_softmax", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                     "float16"), 0, 2, align(4 * 2 * 2), order=("Cast", "LogSoftmaxV2"),
                    note="self is cast to out's dtype first"),
        ExplainCase(("log_softmax", "--shape", "4,2", "--dtype", "float32", "--dim", "-3"), 1,
                    contains=("161002", "aclnnLogSoftmaxGetWorkspaceSize")),
    ),
    "LogSoftmaxBackward": (
        ExplainCase(("log_softmax_backward", "--shape", "3,5", "--dtype", "bfloat16",
                     "--out-dtype", "float32"), 0, 2, align(3 * 5 * 2), ("LogSoftmaxGrad",),
                    ("LogSoftmaxGrad", "Cast")),
    ),
    "Hardsigmoid": (
        ExplainCase(("hardsigmoid", "--shape", "4,2", "--dtype", "float32"), 0, 1, 0,
                    ("HardSigmoid",)),
        ExplainCase(("hardsigmoid", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                     "float16"), 1, contains=("161002", "aclnnHardsigmoidGetWorkspaceSize"),
                    note="out dtype must equal self's"),
        ExplainCase(("hardsigmoid", "--shape", "4,2", "--dtype", "float32", "--out-strides",
                     "1,4"), 0, 2, align(4 * 2 * 4), order=("HardSigmoid", "ViewCopy"),
                    note="strided out: kernel output, then ViewCopy"),
    ),
    "InplaceHardsigmoid": (
        ExplainCase(("inplace_hardsigmoid", "--shape", "4,2", "--dtype", "int32"), 0, 1, 0),
    ),
    "HardsigmoidBackward": (
        ExplainCase(("hardsigmoid_backward", "--shape", "3,5", "--dtype", "float16",
                     "--out-dtype", "float32"), 0, 2, align(3 * 5 * 2),
                    order=("HardSigmoidGrad", "Cast")),
        ExplainCase(("hardsigmoid_backward", "--shape", "3,5", "--dtype", "float32",
                     "--out-dtype", "int32"), 1, contains=("161002",),
                    note="CanCast(FLOAT -> INT32) fails"),
    ),
}


# ================================================================================ op_db ====

_DIM = Attr("dim", None, "int64 in [-n, n-1], n = max(rank, 1): a 0-d tensor counts as rank 1")
_HS_ATTRS = (Attr("alpha", 1 / 6, "fixed in aclnnHardsigmoid*; a keyword of the NumPy layer"),
             Attr("beta", 0.5, "fixed in aclnnHardsigmoid*; a keyword of the NumPy layer"))
_CAST_OUT = (F32, F16, F64)  # the result is cast to out's dtype (CANN UT: out DOUBLE)
_SOFTMAX_DTYPES = per_class(F32, F16, F64, BF16)
_BACKWARD_DTYPES = per_class(F32, F16, BF16)
_HS_DTYPES = per_class(F32, F16, I32, BF16)

OP_DB = [
    OpInfo(
        "Softmax",
        (Arg("self", "in"), Arg("dim", "dim"), Arg("out", "out")), (_DIM,),
        dtypes=_SOFTMAX_DTYPES, out_dtypes=(F32, F16, F64), no_kernel=(),
        dtype_arg="self", bf16_arg="self", empty_skips=("self",),
        golden=_g_softmax, backward=False, ranges={"self": (-5.0, 5.0)},
        contract_range=(-2.0, 2.0),
        status_inputs=tuple(SOFTMAX), workspace_inputs=_ws_of("Softmax"),
        sample_inputs=samples_of(
            reduction_samples, dtypes=FLOATS, shapes=SHAPES,
            view_pairs=((f32, f32), (f16, f16), (bf16, bf16), (f64, f64), (f16, f32),
                        (f32, bf16), (bf16, f64)),
            extra=(((f32,), f32, (), 0, (OFFSET,), OFFSET),
                   ((f32,), f32, (1, 6), 1, (T2,), STEP2),  # size-1 dims, odd strides
                   ((f16,), f32, V8, 3, (P8,), P8_STEP_OFF),
                   ((bf16,), bf16, V8, -1, (P8_STEP_OFF,), P8))),
        reference_inputs=special_rows, examples=EXAMPLES["Softmax"], functional=SOFTMAX_FN,
        cli="softmax", explain=EXPLAIN["Softmax"],
        doc="CANN aclnn API reference: aclnnSoftmax; ops-nn op_api softmax"),
    OpInfo(
        "SoftmaxBackward",
        (Arg("gradOutput", "in"), Arg("output", "in"), Arg("dim", "dim"), Arg("out", "out")),
        (_DIM,), dtypes=_BACKWARD_DTYPES, out_dtypes=_CAST_OUT, no_kernel=(EDGE,),
        dtype_arg="gradOutput", bf16_arg="gradOutput", empty_skips=("gradOutput", "output"),
        golden=_g_softmax_backward, backward=True,
        ranges={"gradOutput": (-2.0, 2.0), "output": (-1.0, 1.0)},  # y is not a softmax
        contract_range=(-2.0, 2.0),
        status_inputs=tuple(SOFTMAX_BACKWARD), workspace_inputs=_ws_of("SoftmaxBackward"),
        sample_inputs=samples_of(
            reduction_samples, dtypes=(f32, f16, bf16), shapes=SBW_SHAPES,
            long_axes=LONG_AXES + (((1, 1, 1000), 2),),
            view_pairs=((f32, f32), (f16, f16), (bf16, bf16), (f16, f32), (f32, f64),
                        (bf16, f16), (f32, bf16)),
            extra=(((f32, f32), f32, (), 0, (OFFSET, OFFSET), OFFSET),
                   ((f16, f16), f64, (), -1, (OFFSET, CONTIG), OFFSET),
                   ((f32, f32), f32, (1, 6), 1, (T2, STEP2), T2),  # size-1 dims, odd strides
                   ((f32, f32), f16, (6, 1), 0, (T2, T2), STEP2))),
        reference_inputs=softmax_backward_specials, examples=EXAMPLES["SoftmaxBackward"],
        functional=SOFTMAX_BACKWARD_FN, cli="softmax_backward",
        explain=EXPLAIN["SoftmaxBackward"],
        doc="CANN aclnn API reference: aclnnSoftmaxBackward; ops-nn op_api softmax_grad, "
            "unit test test_aclnn_softmax_backward.cpp"),
    OpInfo(
        "LogSoftmax",
        (Arg("self", "in"), Arg("dim", "dim"), Arg("out", "out")), (_DIM,),
        dtypes=_SOFTMAX_DTYPES, out_dtypes=(F32, F16, F64), no_kernel=(EDGE,),
        dtype_arg="self", bf16_arg="self", empty_skips=("self",),
        golden=_g_log_softmax, backward=False, ranges={"self": (-5.0, 5.0)},
        contract_range=(-2.0, 2.0),
        status_inputs=tuple(LOG_SOFTMAX), workspace_inputs=_ws_of("LogSoftmax"),
        sample_inputs=samples_of(
            reduction_samples, dtypes=FLOATS, shapes=SHAPES,
            view_pairs=((f32, f32), (f16, f16), (bf16, bf16), (f64, f64), (f32, f16),
                        (f16, f64), (bf16, f32)),
            extra=(((f16,), f64, (), -1, (OFFSET,), OFFSET),
                   ((f32,), f16, V8, 0, (P8_STEP_OFF,), P8),
                   ((f32,), f16, (6, 1), 0, (T2,), T2))),
        reference_inputs=special_rows, examples=EXAMPLES["LogSoftmax"],
        functional=LOG_SOFTMAX_FN, cli="log_softmax", explain=EXPLAIN["LogSoftmax"],
        doc="CANN aclnn API reference: aclnnLogSoftmax"),
    OpInfo(
        "LogSoftmaxBackward",
        (Arg("gradOutput", "in"), Arg("output", "in"), Arg("dim", "dim"), Arg("out", "out")),
        (_DIM,), dtypes=_BACKWARD_DTYPES, out_dtypes=_CAST_OUT, no_kernel=(EDGE,),
        dtype_arg="output", bf16_arg="gradOutput", empty_skips=("gradOutput", "output"),
        golden=_g_log_softmax_backward, backward=True,
        ranges={"gradOutput": (-2.0, 2.0), "output": (-4.0, 0.0)},  # log-probability-like
        contract_range=(-3.0, 1.0),
        status_inputs=tuple(LOG_SOFTMAX_BACKWARD),
        workspace_inputs=_ws_of("LogSoftmaxBackward"),
        sample_inputs=samples_of(
            reduction_samples, dtypes=(f32, f16, bf16), shapes=SHAPES,
            view_pairs=((f32, f32), (f16, f16), (bf16, bf16), (f16, f32), (f32, f64),
                        (bf16, f16)),
            extra=(((f32, f32), f32, (), 0, (OFFSET, CONTIG), OFFSET),
                   ((f32, f32), f32, V8, 4, (P8, P8_STEP_OFF), P8))),
        reference_inputs=log_softmax_backward_specials,
        examples=EXAMPLES["LogSoftmaxBackward"], functional=LOG_SOFTMAX_BACKWARD_FN,
        cli="log_softmax_backward", explain=EXPLAIN["LogSoftmaxBackward"],
        doc="CANN aclnn API reference: aclnnLogSoftmaxBackward"),
    OpInfo(
        "Hardsigmoid",
        (Arg("self", "in"), Arg("out", "out")), _HS_ATTRS,
        dtypes=_HS_DTYPES, out_dtypes=None, no_kernel=(INFERENCE, EDGE),
        dtype_arg="self", bf16_arg="self", empty_skips=("self",),
        golden=_g_hardsigmoid, backward=False, ranges={"self": (-4.5, 4.5)},
        contract_range=(-5.0, 5.0),
        status_inputs=tuple(HARDSIGMOID), workspace_inputs=_ws_of("Hardsigmoid"),
        sample_inputs=samples_of(
            elementwise_samples, dtypes=(f32, f16, bf16, i32),
            extra=(((bf16,), bf16, (), None, (OFFSET,), OFFSET),
                   ((i32,), i32, V8, None, (P8,), P8_STEP_OFF))),
        reference_inputs=hardsigmoid_specials, examples=EXAMPLES["Hardsigmoid"],
        functional=HARDSIGMOID_FN, cli="hardsigmoid", explain=EXPLAIN["Hardsigmoid"],
        doc="CANN aclnn API reference: aclnnHardsigmoid&aclnnInplaceHardsigmoid"),
    OpInfo(
        "InplaceHardsigmoid",
        (Arg("self", "inout"),), _HS_ATTRS,
        dtypes=_HS_DTYPES, out_dtypes=None, no_kernel=(INFERENCE, EDGE),
        dtype_arg="self", bf16_arg="self", empty_skips=("self",),
        golden=_g_hardsigmoid, backward=False, ranges={"self": (-4.5, 4.5)},
        contract_range=(-5.0, 5.0),
        status_inputs=tuple(INPLACE), workspace_inputs=_ws_of("InplaceHardsigmoid"),
        sample_inputs=samples_of(
            elementwise_samples, dtypes=(f32, f16, bf16, i32),
            extra=(((i32,), i32, (), None, (OFFSET,)),
                   ((f16,), f16, V8, None, (P8_STEP_OFF,)))),
        reference_inputs=hardsigmoid_specials, examples=EXAMPLES["InplaceHardsigmoid"],
        functional=None, cli="inplace_hardsigmoid", explain=EXPLAIN["InplaceHardsigmoid"],
        doc="CANN aclnn API reference: aclnnHardsigmoid&aclnnInplaceHardsigmoid"),
    OpInfo(
        "HardsigmoidBackward",
        (Arg("gradOutput", "in"), Arg("self", "in"), Arg("out", "out")), _HS_ATTRS,
        dtypes=_BACKWARD_DTYPES, out_dtypes=_CAST_OUT, no_kernel=(EDGE,),
        dtype_arg="gradOutput", bf16_arg="gradOutput",
        empty_skips=("gradOutput", "self", "out"),
        golden=_g_hardsigmoid_backward, backward=True,
        ranges={"gradOutput": (-2.0, 2.0), "self": (-4.5, 4.5)}, contract_range=(-5.0, 5.0),
        status_inputs=tuple(HARDSIGMOID_BACKWARD),
        workspace_inputs=_ws_of("HardsigmoidBackward"),
        sample_inputs=samples_of(
            binary_samples, dtypes=(f32, f16, bf16),
            view_triples=((f32, f32, f32), (f16, f16, f16), (bf16, bf16, bf16),
                          (f16, bf16, f32), (f32, f16, f64), (bf16, f32, f16)),
            extra=(((f16, bf16), f64, V8, None, (P8, P8_STEP_OFF), P8),)),
        reference_inputs=hardsigmoid_backward_specials,
        examples=EXAMPLES["HardsigmoidBackward"], functional=HARDSIGMOID_BACKWARD_FN,
        cli="hardsigmoid_backward", explain=EXPLAIN["HardsigmoidBackward"],
        doc="CANN aclnn API reference: aclnnHardsigmoidBackward"),
]
OPS = {op.name: op for op in OP_DB}
FUNCTIONAL = [op for op in OP_DB if op.functional is not None]
