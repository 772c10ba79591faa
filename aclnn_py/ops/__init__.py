"""Operators: one declarative entry each (name, arguments, checks in CANN's order, plan).

``get_workspace_size`` is the shared first phase: argument types, the op's own checks, then the
emulator's checks (destroyed handles, views inside live device memory, one device, kernel present
on the emulated SoC), then the plan. The second phase is ``executor.run`` for every op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .. import config, dtypes
from ..executor import aclOpExecutor
from ..plan import Plan
from ..soc import SocProfile
from ..status import aclnnStatus as S
from ..status import record
from ..tensor import aclTensor
from ._checks import Reject


@dataclass(frozen=True)
class OpDef:
    name: str  # CANN name of phase 2, e.g. "aclnnSoftmaxBackward"
    params: tuple  # CANN argument order of phase 1 (without workspaceSize/executor)
    inputs: tuple  # tensor arguments read, in aclSetInputTensorAddr index order
    outputs: tuple  # tensor arguments written, in aclSetOutputTensorAddr index order
    validate: Callable  # CANN's checks in CANN's order; raises Reject; True = empty no-op
    build: Callable  # (Call, Plan) -> None
    int_params: tuple = ("dim",)
    doc: str = ""
    attrs: dict = field(default_factory=dict)  # fixed by CANN; the functional layer may override

    @property
    def tensors(self) -> tuple:
        return tuple(p for p in self.params if p not in self.int_params)




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
    return op


def _typecheck(api: str, op: OpDef, args: tuple) -> dict:
    if len(args) != len(op.params):
        raise TypeError(f"{api}() takes {len(op.params)} arguments ({', '.join(op.params)}), "
                        f"got {len(args)}")
    values = {}
    for name, value in zip(op.params, args):
        if name in op.int_params:
            if isinstance(value, bool) or not hasattr(value, "__index__"):
                raise TypeError(f"{api}: '{name}' must be an int (int64_t), not "
                                f"{type(value).__name__}")
            value = value.__index__()
            if not -(1 << 63) <= value < (1 << 63):
                raise OverflowError(f"{api}: '{name}' {value} does not fit in int64_t")
        elif value is not None and not isinstance(value, aclTensor):
            raise TypeError(f"{api}: '{name}' must be an aclTensor or None, not "
                            f"{type(value).__name__}")
        values[name] = value
    return values


# a dense view larger than this is rejected: no device holds it, and plans of such views would
# ask for workspaces beyond uint64_t
MAX_VIEW_BYTES = 1 << 48


def _view_checks(api: str, call: Call, check_memory: bool) -> int:
    """Views with no negative dims, of a size a device can hold, inside the address space; with
    ``check_memory``, every view inside one live device allocation and all on one device.
    Returns the device."""
    from .. import runtime as rt
    from .._C import ffi, lib

    device = None
    dev = ffi.new("int32_t *")
    for name in call.op.tensors:
        t = call.values[name]
        if t is None:
            continue
        desc = (f"{dtypes.name(t.data_type)}{list(t.view_dims)}, strides {list(t.strides)}, "
                f"offset {t.offset}")
        if any(d < 0 for d in t.view_dims):
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) has a negative dim in its view shape.")
        if t.is_empty():
            continue
        if t.numel() * t.itemsize > MAX_VIEW_BYTES:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) has {t.numel()} elements, more than any "
                         f"device holds ({MAX_VIEW_BYTES} bytes).")
        start, end = t.byte_range()
        if start < 0 or end > 1 << 64:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) views bytes [{start:#x}, {end:#x}), outside "
                         "the 64-bit address space.")
        if not check_memory:
            continue
        if t.data == 0:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) has a null device address.")
        if start % t.itemsize:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) starts at 0x{start:x}, which is not aligned to "
                         f"its {t.itemsize}-byte elements (CANN requires aligned tensor data).")
        rc = lib.emu_mem_check_range(start, end - start, dev)
        if rc == 1:
            hint = (" (it is host memory from aclrtMallocHost)" if t.data in rt.S.host_allocs
                    else rt.freed_text(start))
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) views bytes [0x{start:x}, 0x{end:x}), which "
                         f"are not inside a live device allocation{hint}.")
        if rc == 2:
            base, size, _ = rt.find(start)
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} ({desc}) views bytes [0x{start:x}, 0x{end:x}), which run "
                         f"{end - (base + size)} bytes past the end of its device allocation "
                         f"[0x{base:x}, 0x{base + size:x}) ({size} bytes).")
        if device is not None and dev[0] != device:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} is on device {dev[0]} but the tensors before it are on "
                         f"device {device}.")
        device = dev[0]
    return 0 if device is None else device


def get_workspace_size(op: OpDef, args: tuple, extended: bool = False,
                       soc: Optional[SocProfile] = None, attrs: Optional[dict] = None,
                       check_memory: bool = True):
    """Phase 1 of any operator: (workspace_size, executor, ret).

    ``extended`` selects the functional layer's wider dtype lists, ``attrs`` overrides the op's
    fixed attributes (hard-sigmoid alpha/beta), and ``check_memory=False`` plans tensors that have
    no device memory (``aclnn-py explain``).
    """
    api = op.name + "GetWorkspaceSize"
    values = _typecheck(api, op, args)
    call = Call(op, values, soc or config.soc_profile(), extended, attrs)
    try:
        empty = op.validate(call)
        for name in op.tensors:
            t = values[name]
            if t is not None and t.destroyed:
                raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                             f"Tensor {name} was already destroyed by aclDestroyTensor.")
        inputs = [(n, values[n]) for n in op.inputs]
        outputs = [(n, values[n]) for n in op.outputs]
        if empty:
            return 0, aclOpExecutor(op.name, Plan(), inputs, outputs, -1), 0
        device = _view_checks(api, call, check_memory)
        if not call.soc.supports(op.name) and not extended:
            raise Reject(S.ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                         f"{op.name} has no kernel on {call.soc.name} ({call.soc.product}).")
        plan = Plan()
        op.build(call, plan)
    except Reject as rej:
        return 0, None, record(api, rej.code, rej.text)
    return plan.ws_size, aclOpExecutor(op.name, plan, inputs, outputs, device), 0


from . import hardsigmoid, softmax  # noqa: E402,F401  (register the operators)
