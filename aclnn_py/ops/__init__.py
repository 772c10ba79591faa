"""Operators: one declaration each (``OpDef``), from which the rest is derived.

An ``OpDef`` holds the operator's arguments and their roles, the dtypes phase 1 accepts per SoC
class, the functional layer's dtypes and attributes, the empty-tensor rule, the checks in CANN's
order, the kernel, the product lines that have it, and its bench cases (aclnn_py/ops/decl.py
describes the parts). The SoC op sets, the functional wrappers, the ``aclnn-py ops`` matrix, the
bench cases and the docs' parameter and dtype tables are derived from these declarations
(aclnn_py/ops/generate.py; CONTRIBUTING.md "Adding an operator").

``get_workspace_size`` is the shared first phase: argument types, the op's own checks, then the
emulator's checks (destroyed handles, views inside live device memory, one device, kernel present
on the emulated SoC), then the plan. The second phase is ``executor.run`` for every op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

from .. import config, dtypes
from .. import runtime as rt
from .. import soc as _soc
from ..cint import c_int
from ..enums import MemRange
from ..executor import aclOpExecutor
from ..plan import Plan
from ..soc import SocProfile
from ..status import aclnnStatus as S
from ..status import record
from ..tensor import aclTensor
from . import _checks
from ._checks import Reject
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
MAX_VIEW_BYTES = 1 << 48


def _desc(t: aclTensor) -> str:
    return (f"{dtypes.name(t.data_type)}{list(t.view_dims)}, strides {list(t.strides)}, "
            f"offset {t.offset}")


def view_bytes(t: aclTensor, data: Optional[int] = None) -> tuple[int, int]:
    """[start, end) bytes of a non-empty view whose storage starts at ``data`` (default:
    the tensor's own address)."""
    start, end = t.byte_range()
    shift = (t.data if data is None else data) - t.data
    return start + shift, end + shift


def check_view_memory(name: str, t: aclTensor, data: Optional[int] = None) -> int:
    """Phase 1's memory checks of one non-empty tensor whose storage starts at ``data``
    (default: its own address; aclSetInput/OutputTensorAddr pass the new one): not null, inside
    the 64-bit address space, aligned to its element size, inside one live device allocation.
    Returns the allocation's device; raises Reject(161002) naming the tensor."""

    data = t.data if data is None else data
    desc = _desc(t)
    if data == 0:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} ({desc}) has a null device address.")
    start, end = view_bytes(t, data)
    if start < 0 or end > 1 << 64:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} ({desc}) at 0x{data:x} views bytes [{start:#x}, {end:#x}), "
                     "outside the 64-bit address space.")
    if start % t.itemsize:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} ({desc}) starts at 0x{start:x}, which is not aligned to "
                     f"its {t.itemsize}-byte elements (CANN requires aligned tensor data).")
    rc, device = rt.check_range(start, min(end - start, (1 << 64) - 1))
    if rc == MemRange.OK:
        return device
    if rc == MemRange.PAST_END:
        base, size, _ = rt.find(start)
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} ({desc}) views bytes [0x{start:x}, 0x{end:x}), which run "
                     f"{end - (base + size)} bytes past the end of its device allocation "
                     f"[0x{base:x}, 0x{base + size:x}) ({size} bytes).")
    if rc == MemRange.NOT_LIVE:  # in a device's address range, in no live allocation
        why = rt.not_live_text("its first byte", start, device)
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} ({desc}) views bytes [0x{start:x}, 0x{end:x}), which are not "
                     f"inside a live device allocation: {why}.")
    hint = " (it is not device memory)"
    if any(p <= start < p + n for p, n in list(rt.S.host_allocs.items())):
        hint = " (it is host memory from aclrtMallocHost)"
    raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                 f"Tensor {name} ({desc}) views bytes [0x{start:x}, 0x{end:x}), which "
                 f"are not inside a live device allocation{hint}.")


def _view_checks(api: str, call: Call, check_memory: bool) -> int:
    """Views with no negative dims, of a size a device can hold, inside the address space; with
    ``check_memory``, every view inside one live device allocation (check_view_memory) and all
    on one device. Returns the device."""
    device = None
    for name in call.op.tensors:
        t = call.values[name]
        if t is None:
            continue
        desc = _desc(t)
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
        dev = check_view_memory(name, t)
        if device is not None and dev != device:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} is on device {dev} but the tensors before it are on "
                         f"device {device}.")
        device = dev
    return 0 if device is None else device


# Views with more elements than this are not compared element by element: a strided (not dense)
# input/output pair larger than this whose byte ranges intersect is accepted unchecked.
MAX_OVERLAP_ELEMENTS = 1 << 20


def _same_view(a: aclTensor, a_data: int, b: aclTensor, b_data: int) -> bool:
    """Identical views: same first-element address, dtype, shape and strides (the strides of
    dims of size 1 never move an address, so they may differ)."""
    return (a.data_type == b.data_type and tuple(a.view_dims) == tuple(b.view_dims)
            and a_data + a.offset * a.itemsize == b_data + b.offset * b.itemsize
            and all(sa == sb for d, sa, sb in zip(a.view_dims, a.strides, b.strides) if d != 1))


def _element_starts(t: aclTensor, rel: int):
    """Byte offsets (from some base; ``rel`` is the storage's) of every element of a view."""
    import numpy as np

    isz = t.itemsize
    offs = np.array([rel + t.offset * isz], dtype=np.int64)
    for d, s in zip(t.view_dims, t.strides):
        if d == 1:  # adds nothing (and its stride may be anything)
            continue
        offs = (offs[:, None] + np.arange(d, dtype=np.int64) * (s * isz)).ravel()
    return offs


def _bytes_intersect(a: aclTensor, a_rel: int, b: aclTensor, b_rel: int) -> bool:
    """Exact test: does any byte of an element of ``a`` belong to an element of ``b``?"""
    import numpy as np

    sa = np.sort(_element_starts(a, a_rel))
    sb = _element_starts(b, b_rel)
    # the first element of a that ends after each b element starts; it overlaps that b element
    # when it starts before the b element ends (all elements of a have the same length)
    j = np.searchsorted(sa, sb - a.itemsize, side="right")
    ok = j < len(sa)
    return bool(np.any(sa[j[ok]] < sb[ok] + b.itemsize))


def check_overlap(inputs, outputs) -> None:
    """Reject(161002) when an input and an output share bytes but are not the same view.

    ``inputs``/``outputs``: (name, aclTensor, storage address) triples. Disjoint byte ranges, and
    identical views (in-place use, e.g. InplaceHardsigmoid's self), are fine. Two dense views
    whose ranges intersect overlap partially; other pairs are compared byte-exactly (interleaved
    views such as x[:, 0::2] and x[:, 1::2] do not overlap) when both have at most
    MAX_OVERLAP_ELEMENTS elements, and are accepted otherwise."""
    for in_name, a, a_data in inputs:
        if a is None or a.is_empty():
            continue
        a0, a1 = view_bytes(a, a_data)
        for out_name, b, b_data in outputs:
            if b is None or b.is_empty():
                continue
            b0, b1 = view_bytes(b, b_data)
            if a1 <= b0 or b1 <= a0 or _same_view(a, a_data, b, b_data):
                continue
            if not (a.is_contiguous() and b.is_contiguous()):
                if max(a.numel(), b.numel()) > MAX_OVERLAP_ELEMENTS:
                    continue
                base = min(a0, b0)
                if not _bytes_intersect(a, a_data - base, b, b_data - base):
                    continue
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {in_name} ({_desc(a)}, bytes [0x{a0:x}, 0x{a1:x})) and tensor "
                         f"{out_name} ({_desc(b)}, bytes [0x{b0:x}, 0x{b1:x})) partially "
                         f"overlap: they share bytes but are not the same view (same address, "
                         f"dtype, shape and strides), so the result would be undefined.")


def self_overlap(dims, strides) -> tuple[Optional[bool], Optional[tuple]]:
    """Whether two distinct indices of a view (element ``strides``) reach the same element:
    (True, witness), (False, None) or (None, None) when undecided.

    The witness is a pair of index tuples, or None when only counting proves the overlap. Sizes
    of 1 never overlap, nor does an empty view; a stride of 0 under a size above 1 does. Dims
    sorted by |stride| (a sign flip maps indices one to one, keeping offset differences): the
    largest whose stride exceeds the span of all smaller ones repeats a set of offsets at
    disjoint places, so it is peeled off while that holds; the rest (the core) overlaps iff the
    view does. A core of at most MAX_OVERLAP_ELEMENTS elements is enumerated exactly; a larger
    one overlaps when it has more elements than its span holds offsets (pigeonhole, strides
    divided by their gcd), and is undecided otherwise."""
    if any(d == 0 for d in dims):
        return False, None
    live = [(abs(s), k) for k, (d, s) in enumerate(zip(dims, strides)) if d != 1]
    zero = next((k for s, k in live if s == 0), None)
    if zero is not None:
        return True, _witness(dims, [(zero, 0)], [(zero, 1)])
    live.sort()
    ext = [0]
    for s, k in live:
        ext.append(ext[-1] + s * (dims[k] - 1))
    n = len(live)
    while n and live[n - 1][0] > ext[n - 1]:
        n -= 1
    if n == 0:
        return False, None
    core = [k for _, k in live[:n]]
    g = 0
    for _, k in live[:n]:
        g = math.gcd(g, abs(strides[k]))
    count = math.prod(dims[k] for k in core)
    if count > MAX_OVERLAP_ELEMENTS or ext[n] >= 1 << 62:  # (int64 offsets below)
        if count <= ext[n] // g + 1:
            return None, None
        for x in range(n - 1):  # a witness when two dims step alike (the common mistake)
            (sa, ka), (sb, kb) = live[x], live[x + 1]
            if sa == sb:
                if strides[ka] == strides[kb]:
                    return True, _witness(dims, [(ka, 1)], [(kb, 1)])
                return True, _witness(dims, [(ka, 1), (kb, 1)], [])
        return True, None
    import numpy as np

    offs = np.zeros(1, dtype=np.int64)
    for k in core:  # row-major over the core dims, in sorted order
        offs = (offs[:, None] + np.arange(dims[k], dtype=np.int64) * strides[k]).ravel()
    order = np.argsort(offs, kind="stable")
    same = np.flatnonzero(offs[order[1:]] == offs[order[:-1]])
    if not len(same):
        return False, None
    i, j = (np.unravel_index(int(order[same[0] + m]), [dims[k] for k in core]) for m in (0, 1))
    return True, _witness(dims, list(zip(core, map(int, i))), list(zip(core, map(int, j))))


def _witness(dims, a: list, b: list) -> tuple:
    """Two index tuples of a view: 0 everywhere but at the (dim, index) pairs given."""
    ia, ib = [0] * len(dims), [0] * len(dims)
    for k, v in a:
        ia[k] = v
    for k, v in b:
        ib[k] = v
    return tuple(ia), tuple(ib)


def check_self_overlap(outputs) -> None:
    """Reject(161002) when an output's view reaches one element by two indices (strides that
    make elements alias, e.g. [64, 4032] with strides [1, 1]): threads writing the aliases
    would race, so the bytes would depend on the thread count. ``outputs``: (name, aclTensor)
    pairs. Inputs may alias (broadcast-like views are read only)."""
    for name, t in outputs:
        if t is None or t.is_empty() or t.is_contiguous():
            continue
        hit, witness = self_overlap(tuple(t.view_dims), tuple(t.strides))
        if not hit:
            continue
        if witness is not None:
            how = (f"its elements {list(witness[0])} and {list(witness[1])} are the same "
                   "memory")
        else:
            how = (f"its {t.numel()} elements lie at fewer distinct offsets, so some share "
                   "memory")
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} ({_desc(t)}) overlaps itself: {how}. An output whose "
                     f"elements alias is not allowed: the result would be undefined.")


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
    key = (op.name, soc.name, extended, tuple(sorted(attrs.items())) if attrs else None, parts)
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


from . import hardsigmoid, softmax  # noqa: E402,F401  (register the operators)
