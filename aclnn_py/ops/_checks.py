"""Parameter checks mirroring CANN's OP_CHECK_* macros, with one message template each.

Each check raises :class:`Reject` with the code CANN returns (161001 for nulls, 161002 for the
rest) and a sentence naming the argument, the rule and the values.
"""

from __future__ import annotations

from typing import Optional

from .. import dtypes
from ..soc import CLASS_A2A3, CLASS_BASE
from ..status import aclnnStatus as S
from ..views import Reject  # noqa: F401  (re-exported: the checks raise it)

MAX_DIMS = 8




def _names(dts) -> str:
    return "[" + ", ".join(dtypes.name(d) for d in dts) + "]"


def not_null(call, *names: str) -> None:
    for name in names:
        if call.values[name] is None:
            raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                         f"Expected a proper Tensor but got null for argument {name}.")


def dtype_in(call, name: str, allowed) -> None:
    dt = call.t(name).data_type
    if dt not in allowed:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} not implemented for {dtypes.name(dt)}, should be in dtype "
                     f"support list {_names(allowed)}.")


def bf16_on_soc(call, *names: str) -> None:
    """BF16 only on SoCs in [Ascend910B, Ascend910E] (Atlas A2/A3)."""
    if call.extended or call.soc.bf16:
        return
    for name in names:
        if call.t(name).data_type == dtypes.aclDataType.ACL_BF16:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                         f"Tensor {name} dtype BFLOAT16 is not supported on {call.soc.name} "
                         f"({call.soc.product}): BF16 needs an Atlas A2/A3-class SoC.")


def same_dtype(call, a: str, b: str) -> None:
    da, db = call.t(a).data_type, call.t(b).data_type
    if da != db:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {a} dtype {dtypes.name(da)} should be the same as tensor {b} dtype "
                     f"{dtypes.name(db)}.")


def can_cast(call, src_dtype: int, what: str, dst: str) -> None:
    dd = call.t(dst).data_type
    if not dtypes.can_cast(src_dtype, dd):
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"{what} dtype {dtypes.name(src_dtype)} can not cast to tensor {dst} dtype "
                     f"{dtypes.name(dd)}.")


def normalize_dim(call, name: str, dim: int) -> int:
    """dim in [-n, n-1] with n = max(rank, 1) (a 0-d tensor counts as rank 1)."""
    rank = call.t(name).ndim
    n = max(rank, 1)
    if not -n <= dim <= n - 1:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Dim {dim} is out of range for tensor {name} of rank {rank}: expected a "
                     f"value in [{-n}, {n - 1}].")
    return dim % n


def max_rank(call, name: str, limit: int = MAX_DIMS) -> None:
    rank = call.t(name).ndim
    if rank > limit:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {name} has {rank} dims, more than the {limit} supported.")


def same_shape(call, a: str, b: str) -> None:
    sa, sb = call.t(a).view_dims, call.t(b).view_dims
    if sa != sb:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Shape of tensor {a} {list(sa)} should be the same as shape of tensor {b} "
                     f"{list(sb)}.")


def same_format(call, a: str, b: str) -> None:
    fa, fb = call.t(a).format, call.t(b).format
    if fa != fb:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                     f"Tensor {a} format {_fmt(fa)} should be the same as tensor {b} format "
                     f"{_fmt(fb)}.")


def _fmt(value: int) -> str:
    try:
        return dtypes.aclFormat(value).name.replace("ACL_FORMAT_", "")
    except ValueError:
        return str(value)


def kernel_cast(src_dtype: int, dst_dtype: int, step: str = "Cast") -> None:
    """The emulator's casts implement FLOAT, FLOAT16, BFLOAT16, DOUBLE and INT32 (l0op::Cast
    returning nullptr -> 561103 on real CANN)."""
    if src_dtype == dst_dtype:
        return
    if src_dtype not in dtypes.KERNEL_DTYPES or dst_dtype not in dtypes.KERNEL_DTYPES:
        raise Reject(S.ACLNN_ERR_INNER_NULLPTR,
                     f"{step} {dtypes.name(src_dtype)} -> {dtypes.name(dst_dtype)} is not "
                     f"available: the emulator casts between "
                     f"{_names(sorted(dtypes.KERNEL_DTYPES))}.")


# ------------------------------------------------------------------- declarative checks ----
# An operator declares its checks as a tuple of the specs below, in CANN's order
# (OpDef.checks); ``run`` interprets them. Each spec calls one of the functions above, so
# messages and codes are those functions'.

ACLNN = "aclnn"  # a check only the aclnn layer runs
FUNCTIONAL = "functional"  # a check only the functional layer (Call.extended) runs


class Check:
    """One check of an operator's phase 1. ``only``: ACLNN, FUNCTIONAL or None (both)."""

    names: tuple = ()
    only: Optional[str] = None

    def __call__(self, call) -> Optional[bool]:  # True: the empty shortcut (success)
        raise NotImplementedError

    def _key(self) -> tuple:
        return (type(self).__name__, self.names, self.only,
                *(getattr(self, k) for k in getattr(self, "_extra", ())))

    def __eq__(self, other) -> bool:
        return isinstance(other, Check) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        args = [repr(n) for n in self.names]
        args += [f"{k}={getattr(self, k)!r}" for k in getattr(self, "_extra", ())]
        if self.only:
            args.append(f"only={self.only!r}")
        return f"{type(self).__name__}({', '.join(args)})"


class NotNull(Check):
    """161001 for the first null tensor among ``names`` (in that order)."""

    def __init__(self, *names: str, only: Optional[str] = None):
        self.names, self.only = names, only

    def __call__(self, call) -> None:
        values = call.values
        for name in self.names:
            if values[name] is None:
                not_null(call, *self.names)


class Empty(Check):
    """The empty shortcut: success (an empty plan) when any of ``names`` is empty. OpDef places
    it after the null check or after every check, by its ``empty`` rule."""

    def __init__(self, *names: str, only: Optional[str] = None):
        self.names, self.only = names, only

    def __call__(self, call) -> bool:
        values = call.values
        for name in self.names:
            if values[name].empty:
                return True
        return False


class DtypeIn(Check):
    """``name``'s dtype in the declared list: OpDef.dtypes[SoC class][name] (``listed``: the list
    of that SoC class on every SoC, when CANN refuses BF16 by a separate SoC check), or
    OpDef.functional.dtypes[name] in the functional layer."""

    _extra = ("listed",)

    def __init__(self, name: str, listed: Optional[str] = None, only: Optional[str] = None):
        self.names, self.listed, self.only = (name,), listed, only
        self.name = name

    def allowed(self, call) -> tuple:
        op = call.op
        if call.extended:
            return op.functional.dtypes[self.name]
        soc_class = self.listed or (CLASS_A2A3 if call.soc.bf16 else CLASS_BASE)
        return op.dtypes[soc_class][self.name]

    def __call__(self, call) -> None:
        allowed = self.allowed(call)
        if call.values[self.name].data_type not in allowed:
            dtype_in(call, self.name, allowed)


class Bf16OnSoc(Check):
    """161002 for a BFLOAT16 tensor among ``names`` on a SoC outside the Atlas A2/A3 class."""

    def __init__(self, *names: str, only: Optional[str] = None):
        self.names, self.only = names, only

    def __call__(self, call) -> None:
        if not (call.extended or call.soc.bf16):
            bf16_on_soc(call, *self.names)


class SameDtype(Check):
    def __init__(self, a: str, b: str, only: Optional[str] = None):
        self.names, self.only = (a, b), only

    def __call__(self, call) -> None:
        a, b = self.names
        values = call.values
        if values[a].data_type != values[b].data_type:
            same_dtype(call, a, b)


class CanCast(Check):
    """CanCast(src dtype -> dst's dtype); with two ``srcs`` the source is their promoted dtype.
    ``what`` starts the message ("Promoted", "Tensor out")."""

    _extra = ("dst", "what")

    def __init__(self, srcs: tuple, dst: str, what: str, only: Optional[str] = None):
        self.names, self.dst, self.what, self.only = tuple(srcs), dst, what, only

    def __call__(self, call) -> None:
        values = call.values
        src = values[self.names[0]].data_type
        for name in self.names[1:]:
            src = dtypes.promote(src, values[name].data_type)
        can_cast(call, src, self.what, self.dst)


class Dim(Check):
    """The int argument ``dim`` in [-n, n-1] for tensor ``name`` (a 0-d tensor counts as n=1)."""

    _extra = ("dim",)

    def __init__(self, name: str, dim: str = "dim", only: Optional[str] = None):
        self.names, self.dim, self.only = (name,), dim, only

    def __call__(self, call) -> None:
        normalize_dim(call, self.names[0], call.values[self.dim])


class MaxRank(Check):
    def __init__(self, name: str, only: Optional[str] = None):
        self.names, self.only = (name,), only

    def __call__(self, call) -> None:
        if len(call.values[self.names[0]].view_dims) > MAX_DIMS:
            max_rank(call, self.names[0])


class SameShape(Check):
    def __init__(self, a: str, b: str, only: Optional[str] = None):
        self.names, self.only = (a, b), only

    def __call__(self, call) -> None:
        a, b = self.names
        values = call.values
        if values[a].view_dims != values[b].view_dims:
            same_shape(call, a, b)


class SameFormat(Check):
    def __init__(self, a: str, b: str, only: Optional[str] = None):
        self.names, self.only = (a, b), only

    def __call__(self, call) -> None:
        a, b = self.names
        values = call.values
        if values[a].format != values[b].format:
            same_format(call, a, b)


def run(call) -> bool:
    """An operator's checks in its declared order (``OpDef.validate`` by default). Raises
    Reject at the first failure; True when the empty shortcut applies."""
    for check in call.op._sequence[call.extended]:
        if check(call):
            return True
    return False
