"""Parameter checks mirroring CANN's OP_CHECK_* macros, with one message template each.

Each check raises :class:`Reject` with the code CANN returns (161001 for nulls, 161002 for the
rest) and a sentence naming the argument, the rule and the values.
"""

from __future__ import annotations

from .. import dtypes
from ..status import aclnnStatus as S

MAX_DIMS = 8


class Reject(Exception):
    def __init__(self, code: int, text: str):
        super().__init__(text)
        self.code = int(code)
        self.text = text


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
