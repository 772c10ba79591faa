"""aclOpExecutor: a validated plan bound to tensor addresses, and the shared second phase.

Lifetime (CANN nnopbase): an executor is single-use unless
``aclSetAclOpExecutorRepeatable`` was called right after phase 1; phase 2 consumes a single-use
executor (also when phase 2 rejects its arguments, as CANN deletes it then). Where real CANN would
use freed memory (a consumed or destroyed executor passed again, a workspace smaller than phase 1
asked for, tensors freed between the phases) the emulator returns a code and a message instead.
"""

from __future__ import annotations

from typing import Optional

from . import dtypes
from . import runtime as rt
from ._C import ffi, lib
from .plan import Buf, Plan
from .status import aclnnStatus as S
from .status import record
from .tensor import aclTensor, numel

READY, CONSUMED, DESTROYED = "ready", "consumed", "destroyed"
WORKSPACE_ALIGN = 8  # the largest element the kernels load from the workspace


class aclOpExecutor:
    """What phase 1 returns: the plan, the tensors it reads and writes, and its lifetime state."""

    def __init__(self, op: str, plan: Plan, inputs, outputs, device: int):
        self.op = op  # "aclnnSoftmaxBackward"
        self.plan = plan
        self.inputs: list = list(inputs)  # [(label, aclTensor)]
        self.outputs: list = list(outputs)
        self.in_addrs = [t.data for _, t in self.inputs]
        self.out_addrs = [t.data for _, t in self.outputs]
        self.device = device
        self.repeatable = False
        self.state = READY
        self.consumed_by: Optional[str] = None

    @property
    def workspace_size(self) -> int:
        return self.plan.ws_size

    def __repr__(self) -> str:
        mode = "repeatable" if self.repeatable else "single-use"
        return (f"<aclOpExecutor {self.op} {self.state} {mode} steps={len(self.plan.steps)} "
                f"workspace={self.plan.ws_size}>")

    def describe(self) -> list[str]:
        return [s.describe() for s in self.plan.steps]


# ----------------------------------------------------------------------------- meta API ----


def _meta_lookup(api: str, executor) -> int:
    if executor is None:
        return record(api, S.ACLNN_ERR_INNER_NULLPTR, "executor is null")
    if not isinstance(executor, aclOpExecutor):
        raise TypeError(f"{api}: executor must be an aclOpExecutor, not {type(executor).__name__}")
    if executor.state != READY:
        how = executor.consumed_by or "aclDestroyAclOpExecutor"
        return record(api, S.ACLNN_ERR_INNER,
                      f"executor of {executor.op} is no longer valid: it was {executor.state} by "
                      f"{how} (on real hardware this pointer is freed memory)")
    return 0


def set_repeatable(executor) -> int:
    api = "aclSetAclOpExecutorRepeatable"
    ret = _meta_lookup(api, executor)
    if ret:
        return ret
    executor.repeatable = True
    return 0


def destroy(executor) -> int:
    api = "aclDestroyAclOpExecutor"
    ret = _meta_lookup(api, executor)
    if ret:
        return ret
    executor.state = DESTROYED
    executor.consumed_by = api
    return 0


def set_tensor_addr(api: str, executor, index, tensor, addr, output: bool) -> int:
    ret = _meta_lookup(api, executor)
    if ret:
        return ret
    if tensor is None:
        return record(api, S.ACLNN_ERR_INNER_NULLPTR, "tensor is null")
    if not isinstance(tensor, aclTensor):
        raise TypeError(f"{api}: tensor must be an aclTensor, not {type(tensor).__name__}")
    index = rt.require_int(api, "index", index)  # size_t
    addr = rt.require_int(api, "addr", addr, allow_none=True)  # void *: -64 wraps
    bound = executor.outputs if output else executor.inputs
    addrs = executor.out_addrs if output else executor.in_addrs
    kind = "output" if output else "input"
    if not executor.repeatable:
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"executor of {executor.op} is not repeatable: call "
                      "aclSetAclOpExecutorRepeatable right after phase 1 first")
    if not 0 <= index < len(bound):
        names = ", ".join(f"{i}={label}" for i, (label, _) in enumerate(bound))
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"{kind} index {index} is out of range for {executor.op} ({names})")
    label, _ = bound[index]
    if addrs[index] == 0:
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"{kind} {index} ({label}) had a null address at phase 1")
    bound_tensor = bound[index][1]
    ret = _check_rebind(api, executor, kind, index, label, bound_tensor, addr)
    if ret:
        return ret
    addrs[index] = addr
    # an in-place operator binds one tensor as both input and output: both follow it
    for pairs, others in ((executor.inputs, executor.in_addrs),
                          (executor.outputs, executor.out_addrs)):
        for i, (_, t) in enumerate(pairs):
            if t is bound_tensor:
                others[i] = addr
    tensor.data = addr
    return 0


def _check_rebind(api: str, ex: aclOpExecutor, kind: str, index: int, label: str,
                  bound_tensor: aclTensor, addr: int) -> int:
    """Phase 1's view checks for the tensor at its new address (null, alignment, live device
    memory, bounds), on the executor's device, and no partial overlap between an input and an
    output with the new address. 0, or a recorded 161002."""
    from .ops import check_overlap, check_view_memory
    from .ops._checks import Reject

    what = f"addr 0x{addr:x} for {kind} {index} ({label})"
    try:
        if not bound_tensor.is_empty():
            device = check_view_memory(label, bound_tensor, addr)
            if ex.device >= 0 and device != ex.device:
                raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                             f"Tensor {label} at the new address is on device {device}, but the "
                             f"executor's tensors are on device {ex.device}.")

        def bound(pairs, addrs):  # an in-place tensor moves as both input and output
            return [(n, t, addr if t is bound_tensor else a)
                    for (n, t), a in zip(pairs, addrs)]

        check_overlap(bound(ex.inputs, ex.in_addrs), bound(ex.outputs, ex.out_addrs))
    except Reject as rej:
        return record(api, rej.code, f"{what}: {rej.text}")
    return 0


# ---------------------------------------------------------------------------- phase 2 -----


def _base(ex: aclOpExecutor, buf: Buf, ws: int) -> int:
    if buf.where == "in":
        return ex.in_addrs[buf.index]
    if buf.where == "out":
        return ex.out_addrs[buf.index]
    return ws + buf.index


def _elem_addr(ex, buf: Buf, ws: int) -> int:
    return _base(ex, buf, ws) + buf.offset * dtypes.itemsize(buf.dtype)


def _add_range(t, ex, buf: Buf, ws: int) -> None:
    start, nbytes = buf.span()
    if nbytes == 0:
        return
    r = t.ranges[t.nranges]
    r.ptr = _base(ex, buf, ws) + start
    r.nbytes = nbytes
    r.name = (buf.label or buf.where).encode()[:31]
    t.nranges += 1


def _tasks(ex: aclOpExecutor, ws: int):
    steps = ex.plan.steps
    tasks = ffi.new("emu_task[]", len(steps))
    op = ex.op.encode()[:63]
    for t, step in zip(tasks, steps):
        t.type = lib.EMU_TASK_KERNEL
        t.op = op
        t.step = step.name.encode()[:31]
        dst = step.dst
        t.c = _elem_addr(ex, dst, ws)
        if step.srcs:
            t.a = _elem_addr(ex, step.srcs[0], ws)
        if len(step.srcs) > 1:
            t.b = _elem_addr(ex, step.srcs[1], ws)
        if step.kind in ("Contiguous", "ViewCopy"):
            src = step.srcs[0]
            t.kernel = lib.EMU_K_STRIDED_COPY
            t.n = dtypes.itemsize(src.dtype)
            t.ndim = len(dst.shape)
            for i, d in enumerate(dst.shape):
                t.shape[i] = d
                t.strides_a[i] = src.strides[i]
                t.strides_b[i] = dst.strides[i]
        elif step.kind == "Cast":
            t.kernel = lib.EMU_K_CAST
            t.dtype = step.srcs[0].dtype
            t.dtype2 = dst.dtype
            t.n = numel(dst.shape)
        else:
            t.kernel = step.kernel
            t.dtype = step.srcs[0].dtype
            t.dtype2 = dst.dtype
            p = step.params
            t.outer, t.axis, t.inner = p.get("outer", 0), p.get("axis", 0), p.get("inner", 0)
            t.flag = p.get("flag", 0)
            t.n = p.get("n", 0)
            t.alpha, t.beta = p.get("alpha", 0.0), p.get("beta", 0.0)
        for buf in (*step.srcs, dst):
            if t.nranges < lib.EMU_MAX_RANGES:
                _add_range(t, ex, buf, ws)
    return tasks


def run(api: str, workspace, workspace_size, executor, stream) -> int:
    """CommonOpExecutorRun: the whole second phase of every operator."""
    if executor is None:
        return record(api, S.ACLNN_ERR_PARAM_NULLPTR, "executor is null")
    if not isinstance(executor, aclOpExecutor):
        raise TypeError(f"{api}: executor must be an aclOpExecutor, not {type(executor).__name__}")
    ws = rt.require_int(api, "workspace", workspace, allow_none=True)  # void *
    ws_size = rt.require_int(api, "workspaceSize", workspace_size)  # uint64_t: -8 wraps
    ex = executor
    if ex.state != READY:
        how = ex.consumed_by or "aclDestroyAclOpExecutor"
        hint = ("" if ex.state == DESTROYED else
                "; executors are single-use unless aclSetAclOpExecutorRepeatable is called "
                "right after phase 1")
        return record(api, S.ACLNN_ERR_PARAM_NULLPTR,
                      f"executor of {ex.op} was already {ex.state} by {how} (on real hardware "
                      f"this is a use-after-free){hint}")
    ret = _check_launch(api, ex, ws, ws_size)
    if ret:
        if not ex.repeatable:
            _consume(ex, f"{api} (which rejected its arguments)")
        return ret
    with rt.S.lock:
        st, sret = rt.resolve_stream(api, stream)
    if sret:
        if not ex.repeatable:
            _consume(ex, f"{api} (which rejected its stream)")
        return record(api, S.ACLNN_ERR_RUNTIME_ERROR, f"stream {stream!r} cannot be used "
                      f"(runtime code {sret}; see the message above)")
    if ex.plan.steps and st.device != ex.device:
        if not ex.repeatable:
            _consume(ex, f"{api} (which rejected its stream)")
        return record(api, S.ACLNN_ERR_RUNTIME_ERROR,
                      f"stream 0x{st.handle:x} belongs to device {st.device} but the tensors "
                      f"are on device {ex.device}")
    code = 0
    if ex.plan.steps:
        tasks = _tasks(ex, ws)
        code = rt.submit(api, st, tasks, len(tasks))
        if code == rt.E.ACL_ERROR_RT_INVALID_HANDLE:  # the stream died during the call
            code = record(api, S.ACLNN_ERR_RUNTIME_ERROR,
                          f"stream 0x{st.handle:x} was destroyed by another thread during the "
                          "launch; nothing was enqueued")
    if not ex.repeatable:
        _consume(ex, api)
    return code


def _consume(ex: aclOpExecutor, how: str) -> None:
    ex.state = CONSUMED
    ex.consumed_by = how


def _check_launch(api: str, ex: aclOpExecutor, ws: int, ws_size: int) -> int:
    if ex.op != api:
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"executor was built by {ex.op}GetWorkspaceSize, not by "
                      f"{api}GetWorkspaceSize")
    need = ex.plan.ws_size
    if ws_size > 0 and ws == 0:
        return record(api, S.ACLNN_ERR_PARAM_NULLPTR,
                      f"workspace is null but workspaceSize is {ws_size}")
    if ws_size < need:
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"workspaceSize {ws_size} is smaller than the {need} bytes "
                      f"{ex.op}GetWorkspaceSize asked for")
    if ws_size > 0 and ws % WORKSPACE_ALIGN:
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"workspace 0x{ws:x} is not {WORKSPACE_ALIGN}-byte aligned (aclrtMalloc "
                      "returns 64-byte aligned memory)")
    if ws_size > 0:  # the allocation must hold what the caller says it holds
        ret = _range_ok(api, "workspace", ws, ws_size)
        if ret:
            return ret
    if not ex.plan.steps:
        return 0
    for (label, _), addr in list(zip(ex.inputs, ex.in_addrs)) + list(zip(ex.outputs,
                                                                        ex.out_addrs)):
        t = _tensor_of(ex, label)
        if t is None or t.is_empty():
            continue
        start, end = t.byte_range()
        start += addr - t.data
        end += addr - t.data
        ret = _range_ok(api, f"tensor {label}", start, end - start)
        if ret:
            return ret
    return 0


def _tensor_of(ex: aclOpExecutor, label: str):
    for name, t in ex.inputs + ex.outputs:
        if name == label:
            return t
    return None


def _range_ok(api: str, what: str, addr: int, nbytes: int) -> int:
    dev = ffi.new("int32_t *")
    rc = lib.emu_mem_check_range(addr, nbytes, dev)
    if rc == 0:
        return 0
    reason = ("runs past the end of its device allocation" if rc == 2 else
              "is not inside a live device allocation (freed after phase 1?)")
    return record(api, S.ACLNN_ERR_PARAM_INVALID,
                  f"{what} bytes [0x{addr:x}, 0x{addr + nbytes:x}) {reason}")
