"""oneDNN's softmax attributes: post-ops, scales, dropout, the accumulation mode
(docs/onednn.md).

The functional layer's ``softmax`` / ``log_softmax`` take oneDNN's forward attributes, with the
semantics of its softmax primitive as benchdnn's reference computes them: the softmax value of
each element times ``src_scale``, the post-ops in order, times ``1 / dst_scale``, then the
conversion to dst (int8 / uint8: round half to even, saturate). This module holds the post-op
types users build (:class:`Eltwise`, :class:`Binary`) and the validation that turns what the
caller gave into the plain, hashable description phase 1 plans from (its cache key) plus the
float32 data of the binary post-ops' src1, which travels in the executor's workspace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import ml_dtypes
import numpy as np

from .config import ACCUMULATION_MODES
from .enums import PostOpAlg
from .status import aclnnStatus as S
from .status import check, record

#: the most post-ops one call takes (the C kernel's table, EMU_MAX_POST_OPS)
MAX_POST_OPS = 8

#: oneDNN's eltwise algorithms the post-ops support, by oneDNN's short names
ELTWISE_ALGS = {
    "relu": PostOpAlg.RELU, "linear": PostOpAlg.LINEAR, "clip": PostOpAlg.CLIP,
    "clip_v2": PostOpAlg.CLIP_V2, "tanh": PostOpAlg.TANH, "logistic": PostOpAlg.LOGISTIC,
    "exp": PostOpAlg.EXP, "log": PostOpAlg.LOG, "abs": PostOpAlg.ABS,
    "square": PostOpAlg.SQUARE, "sqrt": PostOpAlg.SQRT, "swish": PostOpAlg.SWISH,
    "gelu_erf": PostOpAlg.GELU_ERF, "gelu_tanh": PostOpAlg.GELU_TANH, "elu": PostOpAlg.ELU,
    "hardsigmoid": PostOpAlg.HARDSIGMOID, "hardswish": PostOpAlg.HARDSWISH,
    "mish": PostOpAlg.MISH, "pow": PostOpAlg.POW, "round": PostOpAlg.ROUND,
    "soft_relu": PostOpAlg.SOFT_RELU,
}

#: oneDNN's ``*_use_dst_for_bwd`` algorithms (benchdnn's ``*_dst`` spellings) and benchdnn's
#: ``srelu``: as post-ops they compute the forward formula of the algorithm they name (the
#: "use dst" part concerns the eltwise primitive's backward only)
ELTWISE_ALIASES = {
    **{f"{n}_use_dst_for_bwd": ELTWISE_ALGS[n]
       for n in ("relu", "tanh", "elu", "sqrt", "logistic", "exp", "clip_v2")},
    **{f"{n}_dst": ELTWISE_ALGS[n]
       for n in ("relu", "tanh", "elu", "sqrt", "logistic", "exp", "clip_v2")},
    "srelu": PostOpAlg.SOFT_RELU,
}

#: oneDNN's binary algorithms (comparisons give 1.0 where true, 0.0 where false)
BINARY_ALGS = {
    "add": PostOpAlg.ADD, "sub": PostOpAlg.SUB, "mul": PostOpAlg.MUL, "div": PostOpAlg.DIV,
    "max": PostOpAlg.MAX, "min": PostOpAlg.MIN, "ge": PostOpAlg.GE, "gt": PostOpAlg.GT,
    "le": PostOpAlg.LE, "lt": PostOpAlg.LT, "eq": PostOpAlg.EQ, "ne": PostOpAlg.NE,
}



@dataclass(frozen=True)
class Eltwise:
    """An eltwise post-op: ``d = f(d; alpha, beta)`` with oneDNN's formula for ``alg``
    (``"relu"``, ``"linear"``, ``"clip"``, ... or oneDNN's ``"eltwise_relu"`` spelling).

    Example: ``Eltwise("linear", alpha=0.5, beta=2.0)`` is ``d = 0.5*d + 2``."""

    alg: str
    alpha: float = 0.0
    beta: float = 0.0


@dataclass(frozen=True, eq=False)
class Binary:
    """A binary post-op: ``d = op(d, src1)`` with ``src1`` broadcast to dst by oneDNN's rule
    (the same rank as dst, each dimension 1 or equal to dst's; a scalar is one value for every
    element). ``alg``: ``"add"``, ``"sub"``, ``"mul"``, ``"div"``, ``"max"``, ``"min"``, or a
    comparison ``"ge"``, ``"gt"``, ``"le"``, ``"lt"``, ``"eq"``, ``"ne"`` (1.0 / 0.0); oneDNN's
    ``"binary_add"`` spelling works too. src1 may be of any real dtype (float64, float32,
    float16, ``ml_dtypes.bfloat16`` / ``float8_e5m2`` / ``float8_e4m3fn``, int8, uint8, int32,
    ...) and is read as float32 (oneDNN computes post-ops in float32)."""

    alg: str
    src1: Any


def _fail(api: str, text: str) -> None:
    check(record(api, S.ACLNN_ERR_PARAM_INVALID, text), api)


def _alg(api: str, where: str, alg: Any, table: dict, prefix: str,
         aliases: Optional[dict] = None) -> tuple[PostOpAlg, str]:
    """(the algorithm, the name it was given by, without oneDNN's prefix)"""
    if not isinstance(alg, str):
        _fail(api, f"{where}: alg must be a string such as {next(iter(table))!r}, not "
                   f"{type(alg).__name__}")
    name = alg.strip().lower()
    if name.startswith(prefix):
        name = name[len(prefix):]
    if name in table:
        return table[name], name
    if aliases and name in aliases:
        return aliases[name], name
    more = f" (and {', '.join(aliases)})" if aliases else ""
    _fail(api, f"{where}: unknown algorithm {alg!r}; oneDNN's {prefix.rstrip('_')} post-ops "
               f"here are: {', '.join(table)}{more}")
    raise AssertionError  # _fail raises


#: dtypes NumPy does not call real numbers but oneDNN reads as src1 (kind "V" in NumPy)
_ML_FLOATS = tuple(np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e5m2,
                                          ml_dtypes.float8_e4m3fn))


def _eltwise_params_ok(api: str, where: str, alg: PostOpAlg, name: str, alpha: float,
                       beta: float) -> None:
    """oneDNN's rules for an eltwise post-op's parameters (its is_eltwise_ok, applied when the
    post-op is appended), checked on the float32 values oneDNN stores."""
    a, b = float(np.float32(alpha)), float(np.float32(beta))
    if alg in (PostOpAlg.CLIP, PostOpAlg.CLIP_V2) and not b >= a:
        _fail(api, f"{where}: {name} needs beta >= alpha (oneDNN's rule), got alpha = {alpha!r},"
                   f" beta = {beta!r}")
    if name in ("relu_use_dst_for_bwd", "relu_dst", "elu_use_dst_for_bwd", "elu_dst") \
            and not a >= 0.0:
        _fail(api, f"{where}: {name} needs alpha >= 0 (oneDNN's rule), got alpha = {alpha!r}")


def _number(api: str, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{api}: {where} must be a number, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:  # an int beyond float64 (10**400)
        _fail(api, f"{where} = {_short(value)} does not fit float32, the type oneDNN takes it "
                   f"in")
        raise  # unreachable: _fail raises


def _short(value: Any) -> str:
    """An int of hundreds of digits, shortened for a message."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"


def to_f32(api: str, where: str, v: float) -> float:
    """``v`` as the float32 the kernels use (oneDNN stores alphas, betas and scales as float):
    AclnnParamError for a finite value beyond float32's range (it would become inf)."""
    with np.errstate(over="ignore"):
        f = np.float32(v)
    if math.isfinite(v) and not np.isfinite(f):
        _fail(api, f"{where} = {v!r} does not fit float32, the type oneDNN takes it in "
                   f"(|value| <= 3.4028235e+38)")
    return float(f)


def broadcast_strides(src1_shape: tuple, dst_shape: tuple) -> tuple:
    """src1's element strides (contiguous src1) over dst's dimensions: 0 where src1 has 1."""
    if not src1_shape:
        return (0,) * len(dst_shape)
    strides, step = [], 1
    for d in reversed(src1_shape):
        strides.append(0 if d == 1 else step)
        step *= d
    return tuple(reversed(strides))


def post_ops(api: str, items: Any, dst_shape: tuple) -> tuple[tuple, Optional[np.ndarray]]:
    """Validate ``post_ops=``: (the plan's description, the binary src1s as one float32 array).

    The description is a tuple of (alg, alpha, beta, src1 shape or None) per post-op: plain
    data, part of phase 1's cache key. Raises AclnnParamError (161002) naming the post-op's
    position and the rule for an item that is not a post-op, an unknown algorithm or a src1
    that does not broadcast; TypeError for an alpha/beta that is not a number."""
    if items is None:
        return (), None
    if isinstance(items, (Eltwise, Binary)):
        items = (items,)
    if not isinstance(items, (list, tuple)):
        _fail(api, f"post_ops must be a list or tuple of functional.Eltwise / functional.Binary, "
                   f"not {type(items).__name__}")
    if len(items) > MAX_POST_OPS:
        _fail(api, f"post_ops: {len(items)} post-ops given; the emulator applies at most "
                   f"{MAX_POST_OPS} per call")
    desc: list = []
    datas: list = []
    for i, item in enumerate(items):
        where = f"post_ops[{i}]"
        if isinstance(item, Eltwise):
            alg, name = _alg(api, where, item.alg, ELTWISE_ALGS, "eltwise_", ELTWISE_ALIASES)
            alpha = _number(api, f"{where}.alpha", item.alpha)
            beta = _number(api, f"{where}.beta", item.beta)
            to_f32(api, f"{where}.alpha", alpha)
            to_f32(api, f"{where}.beta", beta)
            _eltwise_params_ok(api, where, alg, name, alpha, beta)
            if alg == PostOpAlg.SOFT_RELU and to_f32(api, f"{where}.alpha", alpha) == 0.0:
                # checked in float32, the kernel's alpha: 1e-46 is 0 there
                got = "0" if alpha == 0.0 else f"{alpha!r}, which is 0 in float32"
                _fail(api, f"{where}: soft_relu needs alpha != 0 (f(x) = log(1 + exp(alpha*x)) / "
                           f"alpha), got alpha = {got}")
            desc.append((int(alg), alpha, beta, None))
        elif isinstance(item, Binary):
            alg, _ = _alg(api, where, item.alg, BINARY_ALGS, "binary_")
            try:
                src1 = np.asarray(item.src1)
            except Exception as exc:  # an object NumPy cannot read
                _fail(api, f"{where}: src1 is not array-like ({exc})")
            if src1.dtype.kind not in "biuf" and src1.dtype not in _ML_FLOATS:
                _fail(api, f"{where}: src1 of dtype {src1.dtype} is not a real number type "
                           f"(oneDNN reads src1 of any real dtype as float32)")
            shape = tuple(src1.shape)
            if shape and len(shape) != len(dst_shape):
                _fail(api, f"{where}: src1 of shape {shape} does not broadcast to dst of shape "
                           f"{tuple(dst_shape)}: oneDNN's rule wants the same rank "
                           f"({len(dst_shape)}), each dimension 1 or equal to dst's (or a "
                           f"scalar)")
            for k, (a, b) in enumerate(zip(shape, dst_shape)):
                if a not in (1, b):
                    _fail(api, f"{where}: src1 of shape {shape} does not broadcast to dst of "
                               f"shape {tuple(dst_shape)}: dimension {k} is {a}, must be 1 or "
                               f"{b} (oneDNN's rule: each dimension 1 or equal to dst's)")
            desc.append((int(alg), 0.0, 0.0, shape))
            datas.append(np.ascontiguousarray(src1, dtype=np.float32).reshape(-1))
        else:
            _fail(api, f"{where}: {type(item).__name__} is not a post-op: use "
                       f"functional.Eltwise(alg, alpha, beta) or functional.Binary(alg, src1)")
    packed = np.concatenate(datas) if datas else None
    return tuple(desc), packed


def scale(api: str, name: str, value: Any, nonzero: bool) -> float:
    """A src_scale / dst_scale: a finite number (dst_scale also not 0), checked as the float32
    the kernels use (oneDNN's scales are float32): a dst_scale that is 0 in float32 (1e-46) or
    whose float32 reciprocal overflows (below 2^-128: benchdnn's reference multiplies by
    ``1.0f / dst_scale``, inf for such a denormal) is refused, naming the argument."""
    v = _number(api, name, value)
    if not math.isfinite(v) or (nonzero and v == 0.0):
        _fail(api, f"{name} must be a finite number{' other than 0' if nonzero else ''} "
                   f"(oneDNN's common scale), got {v!r}")
    f = to_f32(api, name, v)
    if nonzero and f == 0.0:
        _fail(api, f"{name} = {v!r} is 0 in float32, the type oneDNN's scales take: it must be "
                   f"a number other than 0 there")
    if nonzero:
        with np.errstate(over="ignore", divide="ignore"):
            inv = np.float32(1.0) / np.float32(f)
        if not np.isfinite(inv):
            _fail(api, f"{name} = {v!r}: its float32 reciprocal, the factor oneDNN's "
                       f"reference multiplies by, overflows (|{name}| must be above 2^-128, "
                       f"about 2.9e-39)")
    return v


def accumulation(api: str, value: Any) -> str:
    """``accumulation=``: one of oneDNN's modes, else AclnnParamError naming them."""
    if not isinstance(value, str) or value.strip().lower() not in ACCUMULATION_MODES:
        _fail(api, f"accumulation={value!r} is not an accumulation mode: use one of "
                   f"{', '.join(repr(m) for m in ACCUMULATION_MODES)} (oneDNN's)")
    return value.strip().lower()


# ---------------------------------------------------------------------------- dropout ----

@dataclass(frozen=True)
class Dropout:
    """oneDNN's dropout attribute: right after ``src_scale`` and before the post-ops, each value
    is kept (times ``1 / (1 - p)``) where Philox4x32-10's random word for its index exceeds
    ``p * (2^32 - 1)``, else 0. ``p`` in [0, 1] (rounded to float32, as oneDNN reads it); ``seed``
    an int64; ``offset`` an int64, 0 for oneDNN's original (32-bit) generator. The mask, 1 where
    kept, goes to ``dropout_mask=`` when given.

    Example: ``F.softmax(x, 1, dropout=F.Dropout(0.5, 12345678))``."""

    p: float
    seed: int = 0
    offset: int = 0


_M32 = np.uint64(0xFFFFFFFF)


def philox4x32(idx: Any, seed: Any, offset: Any) -> np.ndarray:
    """oneDNN's ``math::philox4x32(idx, seed, offset)`` (64-bit arguments) over arrays: the
    Philox4x32-10 block of counter (offset low, offset high, x low, x high), x = idx with its two
    low bits cleared, key (seed low, seed high); word ``idx & 3`` of the result (uint32)."""
    idx, seed, offset = (np.asarray(a, dtype=np.uint64) for a in (idx, seed, offset))
    x = idx & ~np.uint64(3)
    c0, c1, c2, c3 = offset & _M32, offset >> np.uint64(32), x & _M32, x >> np.uint64(32)
    k0, k1 = seed & _M32, seed >> np.uint64(32)
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    w0, w1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
    for r in range(10):
        if r:
            k0, k1 = (k0 + w0) & _M32, (k1 + w1) & _M32
        p0, p1 = m0 * c0, m1 * c2  # < 2^64: exact in uint64
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & _M32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _M32)
    words = np.stack(np.broadcast_arrays(c0, c1, c2, c3))
    pick = (idx & np.uint64(3)).astype(np.intp)
    return np.take_along_axis(words, pick[None], 0)[0].astype(np.uint32)


def philox4x32_legacy(idx: Any, seed: int) -> np.ndarray:
    """oneDNN's ``math::philox4x32(uint32_t idx, uint32_t seed)``, the generator of an offset
    of 0: the 64-bit one over idx_64 = (x+3, x+2), offset (x+1, x), seed (seed, seed) as
    (high, low) halves, x = idx with its two low bits cleared. The word it returns is always
    the third of x's block: oneDNN's code gives the four indices of a block one value."""
    i32 = np.asarray(idx, dtype=np.uint64) & _M32
    s = np.uint64(seed & 0xFFFFFFFF)
    x = i32 & ~np.uint64(3)
    idx64 = ((x + np.uint64(3)) << np.uint64(32)) + (x + np.uint64(2))
    off64 = ((x + np.uint64(1)) << np.uint64(32)) + x
    return philox4x32(idx64, (s << np.uint64(32)) + s, off64)


def _int64(api: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{api}: {name} must be an int, not {type(value).__name__}")
    v = value.__index__()
    if not -2 ** 63 <= v < 2 ** 63:
        _fail(api, f"{name} = {v} does not fit int64, the type oneDNN's dropout seed and offset "
                   f"take")
    return v


def dropout(api: str, value: Any, dst_shape: tuple) -> tuple[tuple, np.ndarray, np.ndarray]:
    """Validate ``dropout=`` and draw its mask: (the post-op description that applies it first,
    its float32 operand (1 / (1 - p) where kept, else 0), the uint8 mask in dst's shape)."""
    if not isinstance(value, Dropout):
        _fail(api, f"dropout must be functional.Dropout(p, seed, offset), not "
                   f"{type(value).__name__}")
    p = _number(api, "dropout.p", value.p)
    seed = _int64(api, "dropout.seed", value.seed)
    offset = _int64(api, "dropout.offset", value.offset)
    pf = np.float32(p) if math.isfinite(p) and abs(p) < 1e39 else np.float32(np.nan)
    if not 0.0 <= float(pf) <= 1.0:
        _fail(api, f"dropout.p must be a probability in [0, 1] (oneDNN's), got {p!r}")
    n = math.prod(dst_shape)
    idx = np.arange(n, dtype=np.uint64)
    if offset:
        r = philox4x32(idx, np.uint64(seed & (2 ** 64 - 1)), np.uint64(offset & (2 ** 64 - 1)))
    else:
        r = philox4x32_legacy(idx, seed)
    # oneDNN: m = r > double(UINT32_MAX) * p; inv_q = p != 1 ? 1.f / (1.f - p) : 0, in float32
    mask = r.astype(np.float64) > 4294967295.0 * float(pf)
    inv_q = np.float32(1.0) / (np.float32(1.0) - pf) if pf != 1.0 else np.float32(0.0)
    operand = np.where(mask, inv_q, np.float32(0.0)).astype(np.float32)
    desc = (int(PostOpAlg.DROPOUT), 0.0, 0.0, tuple(dst_shape))
    return desc, operand, mask.astype(np.uint8).reshape(dst_shape)
