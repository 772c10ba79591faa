"""The one wrapping mechanism of the diagnostics: the public API functions, replaced by wrappers
while a checker, the trace or the API log is on, and restored when all are off.

The namespaces are ``aclnn_py.acl`` (its functions), ``acl.rt``, ``acl.util`` and
``aclnn_py.aclnn`` (the meta API and every operator's two phases). A wrapper calls the original
function and hands the call to the checkers (before and after it), the trace (its start and end
times) and the log (its arguments and return code). Code that imported a function by name
(``from aclnn_py.acl.rt import memcpy``) before the wrappers were installed keeps the original.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .sites import site_text, user_site  # noqa: F401  (re-exported: apilog, checks, trace)


@dataclass(frozen=True)
class Features:
    """What the diagnostics do now."""

    checks: frozenset = frozenset()
    trace: Optional[str] = None
    log_level: Optional[int] = None  # ASCEND_GLOBAL_LOG_LEVEL; None or 4: no API log
    log_stdout: bool = False

    @property
    def on(self) -> bool:
        return bool(self.checks) or self.trace is not None or self.log_level not in (None, 4)


# ----------------------------------------------------------------------- C names of the API --

_ACL_NAMES = {
    "init": "aclInit", "finalize": "aclFinalize", "get_recent_err_msg": "aclGetRecentErrMsg",
    "get_soc_name": "aclrtGetSocName", "get_version": "aclrtGetVersion",
}
_RT_NAMES = {"set_context": "aclrtSetCurrentContext", "get_context": "aclrtGetCurrentContext"}
# functions of the status-returning namespaces whose result is a value, not a status code: the
# tensor descriptors' and data buffers' getters and creators (acl_base.h), and the last error
_VALUES = frozenset({
    "data_type_size", "create_tensor_desc", "destroy_tensor_desc", "get_tensor_desc_type",
    "get_tensor_desc_format", "get_tensor_desc_size", "get_tensor_desc_element_count",
    "get_tensor_desc_num_dims", "get_tensor_desc_dim", "set_tensor_desc_name",
    "get_tensor_desc_name", "get_tensor_desc_address", "create_data_buffer",
    "get_data_buffer_addr", "get_data_buffer_size", "get_data_buffer_size_v2",
    "get_last_error", "peek_at_last_error"})


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _rt_name(name: str) -> str:
    return _RT_NAMES.get(name) or "aclrt" + _camel(name)


def _acl_name(name: str) -> str:
    return _ACL_NAMES.get(name) or "acl" + _camel(name)  # create_tensor_desc: aclCreateTensorDesc


def _namespaces() -> list[tuple[Any, list[str], Callable[[str], str], bool]]:
    """(module, public function names, C name of a function, whether the functions return a
    status code) of each wrapped namespace."""
    from .. import acl, aclnn
    from ..acl import rt, util

    def functions(mod, names) -> list[str]:
        return [n for n in names if not n.startswith("_") and inspect.isfunction(getattr(mod, n,
                                                                                           None))]

    util_names = [n for n, v in vars(util).items()
                  if inspect.isfunction(v) and v.__module__ == util.__name__]
    return [
        (acl, functions(acl, acl.__all__), _acl_name, True),
        (rt, functions(rt, rt.__all__), _rt_name, True),
        (util, functions(util, util_names), lambda n: f"acl.util.{n}", False),
        (aclnn, functions(aclnn, aclnn.__all__ + sorted(_adopted)), lambda n: n, True),
    ]


# the functions aclnn_py.custom has added to aclnn_py.aclnn (adopt) and not removed (forget)
_adopted: set[str] = set()


def adopted_operators() -> list[str]:
    """The adopted operators' phase-2 names (``aclnnAddCustom``), which a new checker hooks."""
    return sorted(n for n in _adopted if not n.endswith("GetWorkspaceSize"))


# ------------------------------------------------------------------------------- wrapping ----


def _binder(fn) -> tuple[Callable[[tuple, dict], tuple], tuple]:
    """A fast binding of a call's arguments to the function's positional parameters (defaults
    filled in), and the parameter names."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - every wrapped function is Python
        return (lambda args, kwargs: args), ()
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = tuple(p.name for p in params)
    defaults = tuple(None if p.default is p.empty else p.default for p in params)
    n = len(names)

    def bind(args: tuple, kwargs: dict) -> tuple:
        if not kwargs and len(args) >= n:
            return args
        out = list(args[:n])
        for i in range(len(out), n):
            out.append(kwargs.get(names[i], defaults[i]))
        return tuple(out)

    return bind, names


def ret_of(result) -> Optional[int]:
    """The status code of a call's result: an int, or the last item of a tuple; None for calls
    that return something else (aclCreateTensor, the util helpers)."""
    if isinstance(result, int) and not isinstance(result, bool):
        return int(result)
    if isinstance(result, tuple) and result and isinstance(result[-1], int) \
            and not isinstance(result[-1], bool):
        return int(result[-1])
    return None


class _Active:
    """The features' objects the wrappers use: replaced whole by configure()."""

    def __init__(self, features: Features, checker=None, tracer=None, logger=None) -> None:
        self.features = features
        self.checker = checker
        self.tracer = tracer
        self.log = logger

    def call(self, api: str, fn, bind, names, status: bool, args: tuple, kwargs: dict):
        checker, tracer, log = self.checker, self.tracer, self.log
        vals = None
        state = None
        if checker is not None and api in checker.pre_hooks:
            vals = bind(args, kwargs)
            state = checker.pre(api, vals)
        t0 = time.monotonic_ns()
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            t1 = time.monotonic_ns()
            if log is not None:
                log.raised(api, names, bind(args, kwargs), exc)
            if tracer is not None:
                tracer.api_call(api, t0, t1, names, args, None, type(exc).__name__)
            raise
        t1 = time.monotonic_ns()
        if checker is not None and api in checker.post_hooks:
            if vals is None:
                vals = bind(args, kwargs)
            result = checker.post(api, vals, result, state)
        if log is not None or tracer is not None:
            ret = ret_of(result) if status else None
            if log is not None:
                log.call(api, names, bind(args, kwargs) if vals is None else vals, result, ret)
            if tracer is not None:
                tracer.api_call(api, t0, t1, names, args, ret)
        return result


_lock = threading.RLock()
_ACTIVE = _Active(Features())
_originals: dict[tuple[Any, str], Any] = {}  # (module, name) -> the original function
# called after the wrappers are installed or removed (the toolkit's C paths bypass the API
# functions, so they stand aside while the wrappers are in)
on_change: list[Callable[[], None]] = []


def current() -> Features:
    return _ACTIVE.features


def active() -> _Active:
    return _ACTIVE


def _make(api: str, fn, status: bool):
    bind, names = _binder(fn)

    @functools.wraps(fn)
    def api_call(*args, **kwargs):
        return _ACTIVE.call(api, fn, bind, names, status, args, kwargs)

    api_call.__aclnn_py_original__ = fn  # type: ignore[attr-defined]
    return api_call


def _install() -> None:
    if _originals:
        return
    for mod, names, cname, status in _namespaces():
        for name in names:
            fn = getattr(mod, name)
            _originals[(mod, name)] = fn
            setattr(mod, name, _make(cname(name), fn, status and name not in _VALUES))


def _uninstall() -> None:
    for (mod, name), fn in _originals.items():
        setattr(mod, name, fn)
    _originals.clear()


def installed() -> bool:
    return bool(_originals)


def adopt(names: list[str]) -> None:
    """Functions that ``aclnn_py.custom.load`` has just added to ``aclnn_py.aclnn`` (a custom
    operator's two phases): wrapped like the others while the wrappers are installed, and seen
    by the checkers (a kernel's task reads its inputs and writes its outputs)."""
    from .. import aclnn

    with _lock:
        _adopted.update(names)
        if not installed():
            return
        for name in names:
            fn = getattr(aclnn, name, None)
            if fn is None or hasattr(fn, "__aclnn_py_original__"):
                continue
            _originals[(aclnn, name)] = fn
            setattr(aclnn, name, _make(name, fn, True))
        if _ACTIVE.checker is not None:
            _ACTIVE.checker.add_operators(names)


def forget(names: list[str]) -> None:
    """Functions ``aclnn_py.custom.unload`` removes: not restored when the wrappers go."""
    from .. import aclnn

    with _lock:
        _adopted.difference_update(names)
        for name in names:
            _originals.pop((aclnn, name), None)


def original(fn):
    """The function a wrapper wraps (``fn`` itself when it is not a wrapper)."""
    return getattr(fn, "__aclnn_py_original__", fn)


def configure(checks: frozenset, trace: Optional[str], log_level: Optional[int],
              log_stdout: bool) -> None:
    """Make the diagnostics do what the arguments say (see Features)."""
    global _ACTIVE
    from . import apilog
    from . import checks as checks_mod
    from . import trace as trace_mod

    features = Features(frozenset(checks), trace, log_level, bool(log_stdout))
    with _lock:
        old = _ACTIVE
        if features == old.features:
            return
        checker = old.checker
        if features.checks != old.features.checks:
            if checker is not None:
                checker.close()
            checker = (checks_mod.Checker(features.checks, tuple(adopted_operators()))
                       if features.checks else None)
        tracer = old.tracer
        if features.trace != old.features.trace:
            if tracer is not None:
                tracer.close()
            tracer = trace_mod.Tracer(features.trace) if features.trace else None
        logger = apilog.configure(features.log_level, features.log_stdout)
        _ACTIVE = _Active(features, checker, tracer, logger)
        if features.on:
            _install()
        else:
            _uninstall()
        for fn in on_change:
            fn()


__all__ = ["Features", "configure", "current", "active", "installed", "user_site", "site_text",
           "ret_of", "adopt", "forget", "original", "adopted_operators"]


def _after_fork_in_child() -> None:
    """fork(): the child has none of the parent's streams, events or device memory (the runtime
    starts afresh there), so the checkers start afresh too."""
    checker = _ACTIVE.checker
    if checker is not None:
        checker.restart()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
