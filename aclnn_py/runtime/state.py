"""The runtime's state: its objects, the one lock, handle lookups, and the reset after fork().

Streams, events and the allocation table live in the C core; this module keeps the handle
registries that let every call tell a live handle from a stale one (and say why), the
per-thread current context, and the bookkeeping of acl.init / aclnnInit.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import config
from ..cint import c_int
from ..status import aclError as E
from ..status import record

# --------------------------------------------------------------------------- objects -------


@dataclass(eq=False)
class Stream:
    handle: int  # the C stream's address: what users hold
    device: int
    context: Context
    is_default: bool = False
    private: bool = False  # the functional layer's own: not part of any device synchronize


@dataclass(eq=False)
class Context:
    handle: int
    device: int
    default_stream: Optional[Stream] = None
    streams: list = field(default_factory=list)  # explicit streams created in this context
    is_default: bool = False  # the implicit context of aclrtSetDevice


@dataclass(eq=False)
class Event:
    handle: int
    flag: Optional[int] = None  # aclrtCreateEventWithFlag's flag; None: aclrtCreateEvent


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.initialized = False  # acl.init called (and not finalized)
        self.aclnn_initialized = False
        self.device_refs: dict[int, int] = {}  # device -> set_device count
        self.default_ctx: dict[int, Context] = {}
        self.contexts: dict[int, Context] = {}
        self.streams: dict[int, Stream] = {}
        self.events: dict[int, Event] = {}
        self.host_allocs: dict[int, int] = {}  # malloc_host pointer -> size
        self.user_allocs: dict[int, int] = {}  # aclrtMalloc pointer -> device
        self.freed: dict[int, str] = {}  # recently freed device bases -> how, for messages
        self.tls = threading.local()  # .ctx: this thread's current context
        self.internal = threading.local()  # .holder: the functional layer's stream (streams.py)
        self.ctx_ids = itertools.count(1)
        # after fork(): the parent's handles and device allocations, invalid here, kept only
        # to name them in messages
        self.parent_handles: set[int] = set()
        self.parent_allocs: dict[int, int] = {}  # base -> device


S = _State()


# ------------------------------------------------------------------------ arguments ------


def ptr(value) -> Optional[int]:
    """Normalise a pointer argument: None/0 -> 0, an int -> itself, else None (a type error)."""
    try:  # a handle is a pointer: uintptr_t, negative values wrap (see aclnn_py.cint)
        return c_int("", "handle", value, "uint64", allow_none=True)
    except TypeError:
        return None


def require_int(api: str, name: str, value, allow_none: bool = False,
                ctype: str = "uint64") -> int:
    """``cint.c_int`` (the one int conversion) with the runtime's argument order: a Python
    argument as the C parameter of type ``ctype`` sees it. 64-bit types wrap, 32-bit ones come
    back unchanged for the caller's range check; TypeError for what C could not compile. The
    default, uint64, suits pointers and sizes."""
    return c_int(api, name, value, ctype, allow_none)


# ------------------------------------------------------------------------- lookups -------


def current() -> Optional[Context]:
    """This thread's current context, if it is still live."""
    ctx = getattr(S.tls, "ctx", None)
    if ctx is not None and ctx.handle in S.contexts:
        return ctx
    return None


def current_default_stream() -> Optional[Stream]:
    """The default stream of this thread's current context while that context is live, or None;
    without the lock (dict and attribute reads, atomic under the GIL). A context destroyed by
    another thread right after is no different from a stream destroyed during a call: the C
    core's handle lookup answers 107017 and the caller says so. The launch and synchronize
    paths' shortcut for stream 0 / None (a miss takes the locked path, with its messages)."""
    ctx = getattr(S.tls, "ctx", None)
    if ctx is None or ctx.handle not in S.contexts:
        return None
    return ctx.default_stream


def current_device(api: str) -> tuple[int, int]:
    """(device of this thread's current context, 0), or (-1, recorded 107002)."""
    ctx = current()
    if ctx is None:
        return -1, record(api, E.ACL_ERROR_RT_CONTEXT_NULL,
                          "no device is set in this thread: call aclrtSetDevice first")
    return ctx.device, 0


def lookup(api: str, what: str, handle, registry: dict) -> tuple[Any, int]:
    """(object, 0) for a live handle in registry; (None, code) for null or stale handles;
    TypeError for what C could not compile."""
    h = ptr(handle)
    if h is None:
        raise TypeError(f"{api}: {what} must be an int handle, not {type(handle).__name__}")
    if h == 0:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM, f"{what} is null")
    obj = registry.get(h)
    if obj is None:
        if h in S.parent_handles:
            return None, record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                                f"{what} 0x{h:x} was created by the parent process before "
                                "fork(): runtime objects do not cross fork(); create a new one "
                                "in this process")
        return None, record(api, E.ACL_ERROR_RT_INVALID_HANDLE,
                            f"{what} 0x{h:x} is not a live {what} (destroyed, or never created)")
    return obj, 0


# ---------------------------------------------------------------------------------- fork ----


def _after_fork_in_child() -> None:
    """fork(), as CUDA users know it: the child has none of the parent's threads, so none of its
    streams, events, contexts or device memory (the C core dropped them in its own fork handler,
    which has already run). The runtime starts afresh: not initialised, no device set, and the
    parent's handles answer ACL_ERROR_RT_INVALID_HANDLE with a message that says why. The locks
    are new: one held by another thread of the parent at the fork would never be released. The
    functional layer's per-thread stream was the parent's: S.internal starts empty too."""
    parent_handles = set(S.streams) | set(S.events) | set(S.contexts) | S.parent_handles
    parent_allocs = {**S.parent_allocs, **S.user_allocs}
    S.__init__()  # type: ignore[misc]
    S.parent_handles = parent_handles
    S.parent_allocs = parent_allocs
    config.clear_overrides()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
