"""``OpDef``, one operator's declaration, the registry of the declared operators and ``Call``,
the arguments of one phase-1 call (aclnn_py/ops/decl.py describes the declaration's parts). The
operator modules (softmax.py, hardsigmoid.py) register here; aclnn_py/ops/__init__.py runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .. import soc as _soc
from ..soc import SocProfile
from ..tensor import aclTensor
from . import _checks
from .decl import (
    EMPTY_FIRST,
    EMPTY_LAST,
    INOUT,
    INPUT,
    INT,
    OUTPUT,
    Arg,
    Bench,
    FunctionalSpec,
    Kernel,
)


def _no_build(call, plan) -> None:
    raise NotImplementedError(f"{call.op.name} declares no plan")


@dataclass(frozen=True)
class OpDef:
    """One operator, declared once (see aclnn_py/ops/decl.py for the parts).

    Declare ``args`` (and not ``params``/``inputs``/``outputs``/``int_params``, which are derived
    from them); ``validate`` defaults to interpreting ``checks`` with the ``empty`` rule.
    """

    name: str  # CANN name of phase 2, e.g. "aclnnSoftmaxBackward"
    params: tuple = ()  # CANN argument order of phase 1 (without workspaceSize/executor)
    inputs: tuple = ()  # tensor arguments read, in aclSetInputTensorAddr index order
    outputs: tuple = ()  # tensor arguments written, in aclSetOutputTensorAddr index order
    validate: Callable = _checks.run  # CANN's checks in CANN's order; raises Reject; True = empty
    build: Callable = _no_build  # (Call, Plan) -> None
    int_params: tuple = ("dim",)
    doc: str = ""  # the formula, one line
    attrs: dict = field(default_factory=dict)  # fixed by CANN; the functional layer may override
    # --- the declaration proper ---
    args: tuple = ()  # Arg, ... in CANN's phase-1 order
    dtypes: dict = field(default_factory=dict)  # {soc class: {tensor arg: (aclDataType, ...)}}
    functional: Optional[FunctionalSpec] = None
    empty: str = EMPTY_FIRST  # EMPTY_FIRST or EMPTY_LAST
    empty_if: tuple = ()  # the op is a no-op when any of these tensors is empty
    checks: tuple = ()  # _checks.Check specs in CANN's order (the null check first)
    kernel: Optional[Kernel] = None
    products: frozenset = _soc.ALL_LINES  # product lines (soc.LINES keys) with a kernel
    bench: Optional[Bench] = None
    workspace_doc: str = ""  # when phase 2 needs no workspace (docs)
    # the C toolkit's header (aclnnop/<c_header>, CANN's file name) and whether CANN's phase 2
    # declares its stream const; the header and the C wrappers are generated from the args
    # (aclnn_py/toolkit/opgen.py)
    c_header: str = ""
    c_const_stream: bool = False

    def __post_init__(self) -> None:
        if self.args:
            derived = {
                "params": tuple(a.name for a in self.args),
                "inputs": tuple(a.name for a in self.args if a.role in (INPUT, INOUT)),
                "outputs": tuple(a.name for a in self.args if a.role in (OUTPUT, INOUT)),
                "int_params": tuple(a.name for a in self.args if a.role == INT),
            }
            for key, value in derived.items():
                if key != "int_params" and getattr(self, key) not in ((), value):
                    raise ValueError(f"{self.name}: {key} {getattr(self, key)} disagrees with "
                                     f"args {value}")
                object.__setattr__(self, key, value)
        object.__setattr__(self, "_tensors",
                           tuple(p for p in self.params if p not in self.int_params))
        seq = list(self.checks)
        if self.empty_if:
            if self.empty not in (EMPTY_FIRST, EMPTY_LAST):
                raise ValueError(f"{self.name}: unknown empty rule {self.empty!r}")
            at = 1 if self.empty == EMPTY_FIRST else len(seq)  # after the null check, or last
            seq.insert(at, _checks.Empty(*self.empty_if))
        object.__setattr__(self, "_sequence", {
            ext: tuple(c for c in seq
                       if c.only != (_checks.ACLNN if ext else _checks.FUNCTIONAL))
            for ext in (False, True)})
        self._check_declaration()

    def _check_declaration(self) -> None:
        """Names used by the checks and tables are arguments; tables cover both SoC classes."""
        known = set(self.params)
        for check in self.checks:
            extra = [getattr(check, "dst", None), getattr(check, "dim", None)]
            for n in (*check.names, *[e for e in extra if e]):
                if n not in known:
                    raise ValueError(f"{self.name}: {check!r} names unknown argument {n!r}")
        if self.dtypes and set(self.dtypes) != set(_soc.SOC_CLASSES):
            raise ValueError(f"{self.name}: dtypes needs the classes {_soc.SOC_CLASSES}")
        for table in (*self.dtypes.values(), *([self.functional.dtypes] if self.functional
                                               else [])):
            for n in table:
                if n not in self.tensors:
                    raise ValueError(f"{self.name}: dtype table names unknown tensor {n!r}")
        if not self.products <= _soc.ALL_LINES:
            raise ValueError(f"{self.name}: unknown product lines "
                             f"{sorted(self.products - _soc.ALL_LINES)}")

    @property
    def tensors(self) -> tuple:
        return self._tensors  # type: ignore[attr-defined]

    def sequence(self, extended: bool) -> tuple:
        """The checks phase 1 runs, in order, with the empty shortcut in place."""
        return self._sequence[extended]  # type: ignore[attr-defined]

    def allowed(self, name: str, soc_class: str, extended: bool = False) -> tuple:
        """The dtype list of tensor ``name``: the functional layer's, or the SoC class's."""
        if extended:
            if self.functional is None:
                raise KeyError(f"{self.name} has no functional declaration")
            return self.functional.dtypes[name]
        return self.dtypes[soc_class][name]

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    @property
    def kernel_id(self) -> int:
        """The kernel's EMU_K_* id in the compiled core (0: no kernel)."""
        return int(self.kernel.id) if self.kernel else 0

    def accepts(self, soc_class: str, dtype: int) -> bool:
        """Phase 1 (aclnn layer) accepts every tensor of ``dtype``, on a SoC of ``soc_class``:
        every tensor the dtype table lists takes it (the others are cast targets or must
        match an input)."""
        return all(dtype in allowed for allowed in self.dtypes[soc_class].values())


class Call:
    """The arguments of one phase-1 call and what it runs against."""

    def __init__(self, op: OpDef, values: dict, soc: SocProfile, extended: bool,
                 attrs: Optional[dict] = None):
        self.op = op
        self.values = values
        self.soc = soc
        self.extended = extended  # the functional layer's wider dtype lists
        self.attrs = {**op.attrs, **(attrs or {})}

    def t(self, name: str) -> aclTensor:
        return self.values[name]

    def __getitem__(self, name: str):
        return self.values[name]


REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    REGISTRY[op.name] = op
    _soc.declare(op.name, op.products)  # the SoC profiles' operator sets
    return op


__all__ = ["OpDef", "Call", "REGISTRY", "register"]
