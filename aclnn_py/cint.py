"""The one conversion of Python ints to C integer parameters.

Every int argument of the public API (pointers, sizes, dims, ids, enums) goes through
:func:`c_int` with the type of the C parameter it stands for, so that all calls agree:

* ``uint64`` (pointers, ``uintptr_t``, ``size_t``, ``uint64_t`` sizes such as workspaceSize) and
  ``int64`` (``int64_t`` dims, offsets, strides, shapes) accept any Python int in
  ``[-2**63, 2**64)`` and wrap it as C's conversion does: negative unsigned values modulo
  ``2**64`` (``-64`` is ``0xffff...ffc0``), signed values ``>= 2**63`` to negative (two's
  complement). The API's own checks then give a status code and a message.
* ``int32`` / ``uint32`` (deviceId, kind, policy, attr, memset value, dtype and format enums)
  accept the same range and return the value unchanged; the caller returns its status code when
  :func:`fits` says the value does not fit the 32-bit parameter.
* What C could not compile raises ``TypeError`` naming the API and the argument: ``bool``,
  ``float`` and NumPy floats, ``str``, objects without ``__index__``, ``None`` unless allowed, and
  ints outside ``[-2**63, 2**64)`` (no 64-bit parameter holds them).
"""

from __future__ import annotations

import operator

try:  # NumPy is a dependency, but keep this module importable on its own
    import numpy as _np

    _NP_REJECT: tuple = (_np.bool_, _np.floating, _np.complexfloating)
except ImportError:  # pragma: no cover
    _NP_REJECT = ()

_C_NAMES = {"uint64": "uint64_t", "int64": "int64_t", "int32": "int32_t", "uint32": "uint32_t"}
_RANGES = {
    "uint64": (0, 1 << 64),
    "int64": (-(1 << 63), 1 << 63),
    "int32": (-(1 << 31), 1 << 31),
    "uint32": (0, 1 << 32),
}
_LOW, _HIGH = -(1 << 63), 1 << 64
_MASK = (1 << 64) - 1


def c_int(api: str, name: str, value, ctype: str = "uint64", allow_none: bool = False) -> int:
    """``value`` as the C parameter ``name`` of ``api`` (of type ``ctype``) receives it.

    ``allow_none``: ``None`` is a null pointer / 0 (pointer parameters). Raises TypeError for
    what C could not compile (see the module docstring)."""
    if ctype not in _RANGES:
        raise ValueError(f"c_int: unknown ctype {ctype!r}")  # a bug in the caller, not the user
    if type(value) is int and _LOW <= value < _HIGH:  # the common case, no message built
        v = value
    else:
        v = _checked(api, name, value, ctype, allow_none)
        if value is None:
            return v
    if ctype == "uint64":
        return v & _MASK
    if ctype == "int64":
        return v - (1 << 64) if v >= 1 << 63 else v
    return v


def _checked(api: str, name: str, value, ctype: str, allow_none: bool) -> int:
    """``value`` as a Python int in ``[-2**63, 2**64)``, or TypeError naming the argument."""
    cname = _C_NAMES[ctype]
    where = f"{api}: argument '{name}'" if api else f"argument '{name}'"
    if value is None:
        if allow_none:
            return 0
        raise TypeError(f"{where} must be an int ({cname}), not None")
    if (isinstance(value, (bool, float, complex, str, bytes, bytearray) + _NP_REJECT)
            or not hasattr(value, "__index__")):
        raise TypeError(f"{where} must be an int ({cname}), not {type(value).__name__}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{where} must be an int ({cname}), not {type(value).__name__}") from None
    if not _LOW <= v < _HIGH:
        raise TypeError(f"{where} = {v} does not fit a 64-bit C parameter ({cname}): "
                        f"expected an int in [-2**63, 2**64)")
    return v


def fits(value: int, ctype: str) -> bool:
    """True if ``value`` (already converted by :func:`c_int`) fits the C type ``ctype``."""
    lo, hi = _RANGES[ctype]
    return lo <= value < hi


def c_name(ctype: str) -> str:
    """The C spelling of ``ctype``, for messages: 'int32' -> 'int32_t'."""
    return _C_NAMES[ctype]


__all__ = ["c_int", "fits", "c_name"]
