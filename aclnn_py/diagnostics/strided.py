"""The byte sets of strided tensor views, for the race checker (docs/diagnostics.md, race).

A view's bytes, relative to its lowest byte, form a *pattern* ``(run, dims)``: blocks of ``run``
contiguous bytes whose starts are ``sum(i_k * stride_k)`` for ``0 <= i_k < count_k``, with
``dims = ((count_k, stride_k), ...)``, strides in bytes, positive, largest first. A contiguous
view has no dims; :func:`pattern` returns None for it (the whole span), the common case, which
the checker handles without these functions. An access placed in an allocation is ``(start,
run, dims)``, ``start`` its lowest byte's offset.

:func:`meets` answers exactly whether two accesses share a byte inside a byte interval
``[s, e)`` of the allocation, within a work budget: a congruence test settles every periodic
interleaving (even and odd columns, left and right halves of rows, ...) at once; otherwise the
blocks of one access inside ``[s, e)`` are enumerated and looked up in the other. When the budget
runs out, the answer is "they meet": the checker may then report a race the exact sets would not
have (as it did for every strided view before), never miss one.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd
from typing import Optional

Pattern = tuple  # (run, dims)
Placed = tuple  # (start, run, dims)

BUDGET = 4096  # steps of the enumeration per question; beyond it, "they meet"


class _Exhausted(Exception):
    pass


def pattern(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> Optional[Pattern]:
    """The pattern of a non-empty view (element strides, may be negative or zero), or None when
    its bytes are one contiguous span."""
    dims = sorted((abs(st) * itemsize, n) for n, st in zip(shape, strides) if n > 1 and st)
    run = itemsize
    while dims and dims[0][0] <= run:  # the next dimension continues (or overlaps) the block
        st, n = dims.pop(0)
        run += (n - 1) * st
    merged: list[list[int]] = []
    for st, n in dims:  # ascending strides; a dimension nesting the previous one exactly folds
        if merged and merged[-1][0] * merged[-1][1] == st:
            merged[-1][1] *= n
        else:
            merged.append([st, n])
    if not merged:
        return None
    return run, tuple((n, st) for st, n in reversed(merged))


def extent(run: int, dims: tuple) -> int:
    """Bytes from a pattern's lowest to one past its highest byte."""
    return run + sum((n - 1) * st for n, st in dims)


def _blocks(start: int, run: int, dims: tuple, lo: int, hi: int, budget: list):
    """The starts of the blocks of a placed pattern that overlap [lo, hi)."""
    exts = [run] * (len(dims) + 1)
    for k in range(len(dims) - 1, -1, -1):
        n, st = dims[k]
        exts[k] = exts[k + 1] + (n - 1) * st

    def walk(off: int, k: int):
        if k == len(dims):
            yield off
            return
        n, st = dims[k]
        inner = exts[k + 1]
        first = max(0, (lo - inner - off) // st + 1)
        last = min(n - 1, -((off - hi) // st) - 1)  # ceil((hi - off) / st) - 1
        for i in range(first, last + 1):
            budget[0] -= 1
            if budget[0] < 0:
                raise _Exhausted
            yield from walk(off + i * st, k + 1)

    if start < hi and start + exts[0] > lo:
        yield from walk(start, 0)


def _hits(p: Placed, lo: int, hi: int, budget: list) -> bool:
    """Whether a placed pattern has a byte in [lo, hi)."""
    start, run, dims = p
    for _ in _blocks(start, run, dims, lo, hi, budget):
        return True
    return False


def _count(dims: tuple) -> int:
    c = 1
    for n, _ in dims:
        c *= n
    return c


def meets(a: Optional[Placed], b: Optional[Placed], s: int, e: int,
          budget: int = BUDGET) -> bool:
    """Whether accesses ``a`` and ``b`` (None: all of [s, e)) share a byte in [s, e)."""
    left = [budget]
    try:
        if a is None:
            return s < e if b is None else _hits(b, s, e, left)
        if b is None:
            return _hits(a, s, e, left)
        (p0, r1, d1), (q0, r2, d2) = a, b
        g = 0
        for _, st in (*d1, *d2):
            g = gcd(g, st)
        # block starts differ by (q0 - p0) + a multiple of g; blocks overlap iff the difference
        # lies in (-r2, r1)
        if g:
            r = (q0 - p0) % g
            if r >= r1 and r - g <= -r2:
                return False
        if _count(d1) > _count(d2):
            (p0, r1, d1), (q0, r2, d2) = b, a
        for off in _blocks(p0, r1, d1, s, e, left):
            if _hits((q0, r2, d2), max(off, s), min(off + r1, e), left):
                return True
        return False
    except _Exhausted:
        return True


def covers(a: Optional[Placed], b: Optional[Placed]) -> bool:
    """Whether every byte of ``b`` is one of ``a``'s (None: the whole interval). Only the sure
    cases: an answer of False may be wrong, which keeps an entry the checker could drop."""
    return a is None or a == b


__all__ = ["pattern", "extent", "meets", "covers", "BUDGET"]
