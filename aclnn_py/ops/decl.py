"""The parts of an operator declaration (``OpDef`` in aclnn_py/ops/__init__.py).

One ``OpDef`` per operator holds everything the package knows about it as data: its arguments
and their roles, the dtypes phase 1 accepts per SoC class, the functional (NumPy) layer's dtypes
and attributes, the empty-tensor rule, the check order, the kernel, the product lines that have
it, and its benchmark cases. The SoC op sets (aclnn_py/soc.py), the functional wrappers
(aclnn_py/functional.py), the ``aclnn-py ops`` matrix, the bench cases and the docs' parameter
and dtype tables are derived from it (aclnn_py/ops/generate.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

# argument roles
INPUT = "input"  # a tensor read (const aclTensor*)
OUTPUT = "output"  # a tensor written (aclTensor*)
INOUT = "inout"  # a tensor read and written (aclTensor*, in-place ops)
INT = "int"  # an int64_t attribute

_CTYPES = {INPUT: "const aclTensor*", OUTPUT: "aclTensor*", INOUT: "aclTensor*", INT: "int64_t"}

# empty-tensor rules (CANN's order of the empty shortcut relative to the checks)
EMPTY_FIRST = "success-before-checks"  # right after the null check: success, nothing else checked
EMPTY_LAST = "validated-then-noop"  # every check runs first; then success with an empty plan


@dataclass(frozen=True)
class Arg:
    """One phase-1 argument, in CANN's order."""

    name: str  # CANN's name: "self", "gradOutput", "dim", "out"
    role: str  # INPUT, OUTPUT, INOUT or INT
    doc: str  # one-line description (docs tables, docstrings)
    ctype: str = ""  # the C type; default by role: const aclTensor*, aclTensor*, int64_t
    rank: str = ""  # the docs' rank cell when it needs a note (default "0–8")

    @property
    def c_type(self) -> str:
        return self.ctype or _CTYPES[self.role]

    @property
    def is_tensor(self) -> bool:
        return self.role != INT


@dataclass(frozen=True)
class Kernel:
    """The C kernel a plan's kernel step runs."""

    step: str  # the plan step's name, as CANN's kernel is called: "SoftmaxV2", "HardSigmoid"
    id: int  # its aclnn_py.enums.Kernel id (EMU_K_* in csrc/include/aclnn_emu.h)
    entry: str  # the C function that computes it (csrc/kernels): "aclk_softmax_fwd"
    family: str  # the parameter struct family: "softmax" (outer/axis/inner/flag) or "eltwise"
    flag: Optional[int] = None  # the softmax family's log flag (0 softmax, 1 log-softmax)


@dataclass(frozen=True)
class FunctionalSpec:
    """The operator's function in aclnn_py.functional (generated from this spec)."""

    name: str  # e.g. "softmax_backward"
    arrays: tuple  # (python name, op argument) of the array parameters, in order
    dtypes: dict  # op argument -> dtypes phase 1 accepts from this layer (the wider lists)
    doc: str  # the docstring
    attrs: tuple = ()  # op attributes that become keyword-only parameters (defaults: OpDef.attrs)
    out_dtype: str = "input"  # the default out_dtype: "input" (the first array's) or "promoted"
    # oneDNN's attributes that become keyword-only parameters after out_dtype (functional.OPTIONS:
    # "accumulation", "src_scale", "dst_scale", "post_ops", "inf_as_zero")
    options: tuple = ()


@dataclass(frozen=True)
class BenchCase:
    shape: tuple
    dim: Optional[int] = None  # for ops with a dim argument
    hot_only: bool = False  # timed with warm caches only (a small case; `bench --cache`)


@dataclass(frozen=True)
class Bench:
    """`aclnn-py bench`: the default cases and the NumPy baseline ``numpy(arrays, dim)``."""

    numpy: Callable[..., Any]  # (list of arrays, dim or None) -> the result
    cases: tuple = field(default_factory=tuple)  # BenchCase, ...
