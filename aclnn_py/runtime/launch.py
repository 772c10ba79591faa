"""Executor launches: a plan's steps as C task templates (phase 1), and the one call that binds
them to addresses and enqueues them (phase 2).

A template is an ``emu_task`` whose addresses are offsets from numbered base slots (an
executor's inputs, outputs and workspace); ``emu_stream_launch`` adds the bound base addresses,
checks every range against the allocation table and enqueues, all in C. The kernel parameters go
in the kernel family's parameter struct (``emu_task.k``), which the C core's kernel table reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..enums import Accumulation, Kernel
from .core import ffi, lib

U64 = (1 << 64) - 1
RANGE_NOT_LIVE: int = lib.EMU_LAUNCH_RANGE_NOT_LIVE


@dataclass(frozen=True)
class TaskSpec:
    """One kernel task of a plan, in plain data. Addresses are (slot, byte offset) pairs; the
    offset may be negative (a view that starts before its storage pointer)."""

    op: str  # the operator, shown in fault messages
    step: str  # "Contiguous", "Cast", "SoftmaxGrad", ...
    kernel: int  # enums.Kernel
    dtype: int  # source / compute dtype
    dtype2: int  # destination dtype
    dst: tuple  # (slot, offset)
    srcs: tuple = ()  # up to two (slot, offset)
    params: dict = field(default_factory=dict)  # the kernel family's parameters
    ranges: tuple = ()  # (slot, offset, nbytes, name): the bytes the task touches


def lower(specs: Sequence[TaskSpec]) -> Any:
    """The C templates (``emu_task[]``) of a plan's tasks. They never change afterwards, so
    executors of one plan share them."""
    tasks = ffi.new("emu_task[]", len(specs))
    for t, spec in zip(tasks, specs):
        t.type = lib.EMU_TASK_KERNEL
        t.kernel = spec.kernel
        t.op = spec.op.encode()[:63]
        t.step = spec.step.encode()[:31]
        t.dtype, t.dtype2 = spec.dtype, spec.dtype2
        addrs = list(spec.srcs[:2]) + [None] * (2 - len(spec.srcs[:2])) + [spec.dst]
        t.base = [-1 if a is None else a[0] for a in addrs]
        t.a, t.b, t.c = (0 if a is None else a[1] & U64 for a in addrs)
        _params(t, spec.kernel, spec.params)
        for slot, offset, nbytes, name in spec.ranges[:lib.EMU_MAX_RANGES]:
            r = t.ranges[t.nranges]
            r.base, r.ptr, r.nbytes = slot, offset & U64, nbytes
            r.name = name.encode()[:31]
            t.nranges += 1
    return tasks


_ACC = {m.name.lower(): int(m) for m in Accumulation}


def _params(t, kernel: int, p: dict) -> None:
    if kernel == Kernel.STRIDED_COPY:
        k = t.k.copy
        k.elem_size, k.ndim = p["elem_size"], len(p["shape"])
        for i, (d, s_src, s_dst) in enumerate(zip(p["shape"], p["src_strides"],
                                                  p["dst_strides"])):
            k.shape[i], k.src_strides[i], k.dst_strides[i] = d, s_src, s_dst
    elif kernel == Kernel.CAST:
        t.k.cast.n = p["n"]
    elif kernel in (Kernel.SOFTMAX_FWD, Kernel.SOFTMAX_BWD):
        sm = t.k.softmax
        sm.outer, sm.axis, sm.inner, sm.log = p["outer"], p["axis"], p["inner"], p.get("flag", 0)
        sm.acc = _ACC[p.get("accumulation", "strict")]
    elif kernel == Kernel.SOFTMAX_EX:
        _softmax_ex_params(t.k.softmax_ex, p)
    else:  # the elementwise family
        el = t.k.eltwise
        el.n, el.alpha, el.beta = p["n"], p.get("alpha", 0.0), p.get("beta", 0.0)


def _softmax_ex_params(k, p: dict) -> None:
    """emu_softmax_ex_args from a SoftmaxEx step's parameters (ops/softmax.py)."""
    k.outer, k.axis, k.inner = p["outer"], p["axis"], p["inner"]
    k.ndim, k.dim = len(p["shape"]), p["dim"]
    for i, d in enumerate(p["shape"]):
        k.shape[i] = d
    k.log, k.inf_as_zero = p.get("flag", 0), int(p.get("inf_as_zero", False))
    k.acc = _ACC[p.get("accumulation", "strict")]
    k.src_scale, k.dst_scale = p.get("src_scale", 1.0), p.get("dst_scale", 1.0)
    posts = p.get("post_ops", ())
    k.n_post = len(posts)
    for slot, (alg, alpha, beta, src1, strides) in zip(k.post, posts):
        slot.alg, slot.alpha, slot.beta, slot.src1 = alg, alpha, beta, src1
        for i, s in enumerate(strides):
            slot.strides[i] = s


def new_bases(addrs: Sequence[int]) -> Any:
    """A C array of base addresses (``uintptr_t[]``) that a launch binds templates to; the
    caller updates its items in place."""
    return ffi.new(_BASES, addrs)


_BASES = ffi.typeof("uintptr_t[]")


# emu_stream_launch(stream, templates, n, bases, nbases, blocking): 0; RANGE_NOT_LIVE (nothing
# enqueued: a bound range is not inside one live device allocation); 107017 (the stream is
# gone); 207008; or, with blocking=1, the stream's fault. The message of a failure is
# core.last_c_msg(). The C function itself: a Python wrapper would cost as much as the launch.
launch: Callable[[int, Any, int, Any, int, int], int] = lib.emu_stream_launch


# The toolkit's C paths (aclnn_py/toolkit, docs/c_api.md "Fast paths") call these core
# functions directly, from C, without the interpreter.
C_ENTRY_POINTS = ("emu_stream_launch", "emu_stream_synchronize", "emu_host_task_stream",
                  "emu_mem_range_device", "emu_ctx_epoch", "emu_stream_device")


def c_entry_points() -> dict[str, int]:
    """The addresses of :data:`C_ENTRY_POINTS`, ``task_size`` (sizeof(emu_task)) and
    ``free_epoch`` (emu_mem_free_epoch, for the toolkit's phase 1 in C)."""
    out = {name: int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))
           for name in C_ENTRY_POINTS}
    out["task_size"] = ffi.sizeof("emu_task")
    out["free_epoch"] = int(ffi.cast("uintptr_t", ffi.addressof(lib, "emu_mem_free_epoch")))
    return out


# the runtime's context epoch: it moves after every change of the live or current contexts
# (devices.py), so a thread's default stream noted under one epoch is still the one while the
# epoch stays
ctx_epoch: Callable[[], int] = lib.emu_ctx_epoch
