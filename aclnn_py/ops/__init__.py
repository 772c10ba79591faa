"""Operators: one declaration each (``OpDef``), from which the rest is derived.

An ``OpDef`` holds the operator's arguments and their roles, the dtypes phase 1 accepts per SoC
class, the functional layer's dtypes and attributes, the empty-tensor rule, the checks in CANN's
order, the kernel, the product lines that have it, and its bench cases (aclnn_py/ops/decl.py
describes the parts). The SoC op sets, the functional wrappers, the ``aclnn-py ops`` matrix, the
bench cases and the docs' parameter and dtype tables are derived from these declarations
(aclnn_py/ops/generate.py; CONTRIBUTING.md "Adding an operator").

``OpDef``, ``Call`` and the registry are in ``opdef.py``; the view checks phase 1 shares with
the executor in ``aclnn_py/views.py``. ``get_workspace_size`` is the shared first phase:
argument types, the op's own checks, then the emulator's checks (destroyed handles, views inside
live device memory, one device, kernel present on the emulated SoC), then the plan. The second
phase is ``executor.run`` for every op.
"""

from __future__ import annotations

import struct
from typing import Optional

from .. import config
from .. import runtime as rt
from .. import soc as _soc
from ..cint import c_int
from ..executor import aclOpExecutor
from ..plan import Plan
from ..soc import SocProfile
from ..status import aclnnStatus as S
from ..status import record
from ..tensor import aclTensor
from ..views import (  # noqa: F401  (re-exported: the view checks)
    MAX_OVERLAP_ELEMENTS,
    MAX_VIEW_BYTES,
    Reject,
    _desc,
    check_overlap,
    check_self_overlap,
    check_view_memory,
    check_views,
    self_overlap,
    view_bytes,
)
from . import _checks  # noqa: F401  (aclnn_py.ops._checks: the checks' vocabulary)
from .decl import (  # noqa: F401  (re-exported: the declarations' vocabulary)
    EMPTY_FIRST,
    EMPTY_LAST,
    INOUT,
    INPUT,
    INT,
    OUTPUT,
    Arg,
    Bench,
    BenchCase,
    FunctionalSpec,
    Kernel,
)
from .opdef import REGISTRY, Call, OpDef, _no_build, register  # noqa: F401


def _typecheck(api: str, op: OpDef, args: tuple) -> tuple[dict, tuple]:
    """The arguments by name, as C receives them (TypeError for what C could not compile), and
    their part of the plan cache's key (each tensor's descriptor, each int)."""
    params = op.params
    if len(args) != len(params):
        raise TypeError(f"{api}() takes {len(params)} arguments ({', '.join(params)}), "
                        f"got {len(args)}")
    values = {}
    parts: list = []
    ints = op.int_params
    for name, value in zip(params, args):
        if name in ints:  # int64_t: 2**63 wraps to -2**63, then the op's checks
            if type(value) is not int or not -(1 << 63) <= value < 1 << 63:
                value = c_int(api, name, value, "int64")
            parts.append(value)
        elif value is None:
            parts.append(None)
        elif isinstance(value, aclTensor):
            parts.append(value.key)
        else:
            raise TypeError(f"{api}: '{name}' must be an aclTensor or None, not "
                            f"{type(value).__name__}")
        values[name] = value
    return values, tuple(parts)


# a dense view larger than this is rejected: no device holds it, and plans of such views would
# ask for workspaces beyond uint64_t
def _view_checks(api: str, call: Call, check_memory: bool) -> int:
    """views.check_views over the operator's tensors in argument order; the device (0 when no
    view has bytes)."""
    device = check_views([(name, call.values[name]) for name in call.op.tensors], check_memory)
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
    values, parts = _typecheck(api, op, args)
    if soc is None:
        try:
            soc = config.soc_profile()
        except config.ConfigError:  # a bad ACLNN_EMU_SOC set after acl.init: a code
            return 0, None, config.checked(api, config.soc_profile, S.ACLNN_ERR_INNER)[1]
    if op.kernel is not None and op.kernel.family == "softmax" and not (
            attrs and "accumulation" in attrs):
        # ACLNN_EMU_ACCUMULATION, read at every phase 1 and recorded in the executor's plan; a
        # bad value is 561000 as for every variable (docs/configuration.md)
        mode, ret = config.checked(api, config.accumulation, S.ACLNN_ERR_INNER)
        if ret:
            return 0, None, ret
        if mode != "strict":
            attrs = {**(attrs or {}), "accumulation": mode}
    key = (op.name, soc.name, extended, _attrs_key(attrs) if attrs else None, parts)
    hit = _PLANS.get(key)
    if hit is not None:
        return _phase1_again(api, op, values, hit, check_memory)
    call = Call(op, values, soc, extended, attrs)
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
            _remember(key, [Plan(), None, None])
            return 0, aclOpExecutor(op.name, Plan(), inputs, outputs, -1), 0
        device = _view_checks(api, call, check_memory)
        check_self_overlap(outputs)
        if check_memory:
            check_overlap([(n, t, t.data) for n, t in inputs if t is not None],
                          [(n, t, t.data) for n, t in outputs if t is not None])
        if not call.soc.supports(op.name) and not extended:
            raise Reject(S.ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                         f"{op.name} has no kernel on {call.soc.name} ({call.soc.product}).")
        plan = Plan()
        op.build(call, plan)
    except Reject as rej:
        return 0, None, record(api, rej.code, rej.text)
    ex = aclOpExecutor(op.name, plan, inputs, outputs, device)
    _remember(key, [plan, ex.templates, None])
    return plan.ws_size, ex, 0


def _bits(value):
    """A float by its bits (0.0 and -0.0 are two plans: pow(d, -1) of a -0.0 scale is -inf; a
    NaN finds its own plan again), tuples element by element, anything else as is."""
    if isinstance(value, float):
        return ("f64", struct.unpack("<q", struct.pack("<d", value))[0])
    if isinstance(value, tuple):
        return tuple(_bits(v) for v in value)
    return value


def _attrs_key(attrs: dict) -> tuple:
    """The attributes' part of the plan cache's key, every float by its bits."""
    return tuple((name, _bits(v)) for name, v in sorted(attrs.items()))


# Phase 1's results by what they depend on: the operator, the SoC, the functional layer's
# options, every tensor's descriptor (aclTensor.key: dtype, shape, strides, offset, format,
# storage shape) and the int arguments. A call whose descriptors were validated and planned
# before skips the operator's checks and the planning (same inputs, same outcome: only
# successes are kept, so every error is still found by the checks in CANN's order) and runs
# only what depends on addresses and handle state: destroyed tensors, the views' device memory,
# one device, input/output overlap. The C task templates are shared by the executors of a plan.
# An entry is [plan, templates, verdict]; the verdict is what the address checks of the last
# call that passed them saw: (the tensors' addresses, the free epoch read before the checks, the
# device). The same addresses with no free since (runtime.free_epoch) pass again: every range
# that was live still is, and the device and the overlap depend on nothing else. (The verdict is
# one tuple, replaced whole: threads never see a mix of two calls.)
_PLANS: dict = {}
_PLANS_MAX = 1024


def _remember(key: tuple, entry: list) -> None:
    if len(_PLANS) >= _PLANS_MAX:
        try:  # the oldest (another thread may be evicting too)
            _PLANS.pop(next(iter(_PLANS)), None)
        except (RuntimeError, StopIteration):
            pass
    _PLANS[key] = entry


def _phase1_again(api: str, op: OpDef, values: dict, hit: list, check_memory: bool):
    """Phase 1 for descriptors validated and planned before: the checks that depend on
    addresses and handle state, with the results and order of the full path (destroyed tensors,
    then the views, then the overlap). Skipped when the plan's last verdict still holds."""
    plan, templates, verdict = hit
    inputs = [(n, values[n]) for n in op.inputs]
    outputs = [(n, values[n]) for n in op.outputs]
    tensors = [t for t in values.values() if type(t) is aclTensor]
    for name, t in values.items():
        if type(t) is aclTensor and t.destroyed:
            return 0, None, record(api, S.ACLNN_ERR_PARAM_INVALID,
                                   f"Tensor {name} was already destroyed by aclDestroyTensor.")
    if not plan.steps:  # validated as empty: nothing to check or run
        return 0, aclOpExecutor(op.name, plan, inputs, outputs, -1), 0
    addrs = tuple([t.data for t in tensors])
    epoch = rt.free_epoch()
    if check_memory and verdict is not None and verdict[0] == addrs and verdict[1] == epoch:
        device = verdict[2]
    else:
        device = _views_device(tensors) if check_memory else -1
        try:
            if device < 0:  # not the common case: the full checks say what is wrong
                device = _view_checks(api, Call(op, values, _soc.PROFILES[_soc.DEFAULT_SOC],
                                                False), check_memory)
            if check_memory and _ranges_meet(inputs, outputs):
                check_overlap([(n, t, t.data) for n, t in inputs if t is not None],
                              [(n, t, t.data) for n, t in outputs if t is not None])
        except Reject as rej:
            return 0, None, record(api, rej.code, rej.text)
        if check_memory:
            hit[2] = (addrs, epoch, device)
    return plan.ws_size, aclOpExecutor(op.name, plan, inputs, outputs, device, templates), 0


def _views_device(tensors: list) -> int:
    """The device of every non-empty view when each is non-null, aligned, inside the address
    space and inside one live allocation, all on one device; -1 for anything else."""
    device = -1
    for t in tensors:
        if t.empty:
            continue
        data = t.data
        start = data + t.lo
        if not data or start < 0 or data + t.hi > 1 << 64 or start % t.itemsize:
            return -1
        dev = rt.range_device(start, t.hi - t.lo)
        if dev < 0 or (device >= 0 and dev != device):
            return -1
        device = dev
    return device


def _ranges_meet(inputs, outputs) -> bool:
    """Whether the byte ranges of some input and some output intersect."""
    for _, a in inputs:
        if a is None or a.empty:
            continue
        for _, b in outputs:
            if b is None or b.empty:
                continue
            if a.data + a.lo < b.data + b.hi and b.data + b.lo < a.data + a.hi:
                return True
    return False


from . import hardsigmoid, softmax  # noqa: E402,F401  (they register the operators)
