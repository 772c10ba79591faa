"""The views' memory checks that phase 1 and the executors' re-binding share: a view inside one
live device allocation, aligned and addressable (``check_view_memory``), no output that shares
bytes with an input without being the same view (``check_overlap``), no output whose elements
alias one another (``check_self_overlap``), and ``Reject``, the exception that carries a check's
status code and message. Below ``executor`` and ``ops``, which both use them
(docs/two_phase_api.md, docs/reliability.md).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from . import dtypes
from . import runtime as rt
from .enums import MemRange
from .status import aclnnStatus as S
from .tensor import aclTensor


class Reject(Exception):
    """A failed check: ``code`` (CANN's status code) and ``text`` (the message)."""

    def __init__(self, code: int, text: str):
        super().__init__(text)
        self.code = int(code)
        self.text = text


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

    isz = t.itemsize
    offs = np.array([rel + t.offset * isz], dtype=np.int64)
    for d, s in zip(t.view_dims, t.strides):
        if d == 1:  # adds nothing (and its stride may be anything)
            continue
        offs = (offs[:, None] + np.arange(d, dtype=np.int64) * (s * isz)).ravel()
    return offs


def _bytes_intersect(a: aclTensor, a_rel: int, b: aclTensor, b_rel: int) -> bool:
    """Exact test: does any byte of an element of ``a`` belong to an element of ``b``?"""

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


def check_views(tensors, check_memory: bool = True) -> Optional[int]:
    """Phase 1's view checks of ``tensors`` ((name, aclTensor or None) pairs, in argument
    order): no negative dim, a size a device can hold, inside the 64-bit address space; with
    ``check_memory``, each non-empty view inside one live device allocation
    (``check_view_memory``) and all on one device. Returns that device (None when no view has
    bytes); raises Reject(161002) naming the tensor."""
    device = None
    for name, t in tensors:
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
    return device


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


__all__ = ["Reject", "MAX_VIEW_BYTES", "MAX_OVERLAP_ELEMENTS", "view_bytes", "check_view_memory",
           "check_views",
           "check_overlap", "self_overlap", "check_self_overlap"]
