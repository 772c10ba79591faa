"""aclOpExecutor: a validated plan bound to tensor addresses, and the shared second phase.

Lifetime (CANN nnopbase): an executor is single-use unless
``aclSetAclOpExecutorRepeatable`` was called right after phase 1; phase 2 consumes a single-use
executor (also when phase 2 rejects its arguments, as CANN deletes it then). Where real CANN would
use freed memory (a consumed or destroyed executor passed again, a workspace smaller than phase 1
asked for, tensors freed between the phases) the emulator returns a code and a message instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from . import config, dtypes
from . import runtime as rt
from .enums import Kernel, MemRange
from .plan import Buf, Plan
from .runtime import launch as rt_launch
from .runtime.launch import TaskSpec
from .status import aclnnStatus as S
from .status import record
from .tensor import aclTensor, numel
from .views import Reject, check_overlap, check_view_memory

READY, CONSUMED, DESTROYED = "ready", "consumed", "destroyed"
WORKSPACE_ALIGN = 8  # the largest element the kernels load from the workspace
_U64 = (1 << 64) - 1


class aclOpExecutor:
    """What phase 1 returns: the plan, its lowered C task templates, the tensors it reads and
    writes, the addresses they are bound to, and its lifetime state."""

    __slots__ = ("op", "plan", "inputs", "outputs", "in_addrs", "out_addrs", "device",
                 "repeatable", "state", "consumed_by", "templates", "ntasks", "bases",
                 "ws_slot", "host", "dynamic", "__weakref__")

    def __init__(self, op: str, plan: Plan, inputs: list, outputs: list, device: int,
                 templates=None):
        self.op = op  # "aclnnSoftmaxBackward"
        self.plan = plan
        self.inputs = inputs  # [(label, aclTensor)]: lists the executor owns from here on
        self.outputs = outputs
        self.in_addrs = [t.data for _, t in inputs]
        self.out_addrs = [t.data for _, t in outputs]
        self.device = device
        self.repeatable = False
        self.state = READY
        self.consumed_by: Optional[str] = None
        self.ntasks = n = len(plan.steps)
        if n and templates is None:
            templates = lower(plan, op, len(inputs), len(outputs))
        self.templates = templates
        # the base addresses the templates' offsets are relative to: inputs, outputs, workspace
        self.ws_slot = len(inputs) + len(outputs)
        self.bases = rt_launch.new_bases(self.in_addrs + self.out_addrs + [0])
        # a custom operator's launch (aclnn_py.custom): host(executor, stream handle, blocking)
        # enqueues its kernel instead of the templates; dynamic: {irIndex: (first, count)},
        # where a dynamic input's tensors sit among ``inputs``
        self.host: Optional[Callable] = None
        self.dynamic: dict = {}

    @property
    def accumulation(self) -> Optional[str]:
        """The accumulation mode phase 1 recorded (softmax family), else None."""
        return self.plan.accumulation

    def rebind(self) -> None:
        """Copy in_addrs / out_addrs into the C base array."""
        for i, a in enumerate(self.in_addrs + self.out_addrs):
            self.bases[i] = a

    @property
    def workspace_size(self) -> int:
        return self.plan.ws_size

    def __repr__(self) -> str:
        mode = "repeatable" if self.repeatable else "single-use"
        return (f"<aclOpExecutor {self.op} {self.state} {mode} steps={len(self.plan.steps)} "
                f"workspace={self.plan.ws_size}>")

    def describe(self) -> list[str]:
        return [s.describe() for s in self.plan.steps]


# ---------------------------------------------------------------------------- lowering -----


def lower(plan: Plan, op: str, n_inputs: int, n_outputs: int):
    """Phase 1's lowering: the plan's steps as C task templates whose addresses are offsets from
    base slots (inputs 0.., outputs n_inputs.., the workspace last). Phase 2 only hands them to
    the runtime's launch with the bound base addresses."""
    ws_slot = n_inputs + n_outputs

    def at(buf: Buf) -> tuple[int, int]:  # (slot, byte offset of the first element)
        size = dtypes.itemsize(buf.dtype)
        if buf.where == "ws":
            return ws_slot, buf.index + buf.offset * size
        return (buf.index if buf.where == "in" else n_inputs + buf.index), buf.offset * size

    specs = []
    for step in plan.steps:
        dst, srcs = step.dst, step.srcs
        kernel: int
        if step.kind in ("Contiguous", "ViewCopy"):
            kernel = Kernel.STRIDED_COPY
            params = {"elem_size": dtypes.itemsize(srcs[0].dtype), "shape": dst.shape,
                      "src_strides": srcs[0].strides, "dst_strides": dst.strides}
        elif step.kind == "Cast":
            kernel, params = Kernel.CAST, {"n": numel(dst.shape)}
        else:
            kernel, params = step.kernel, step.params
        ranges = []
        for buf in (*srcs, dst):
            start, nbytes = buf.span()
            if nbytes:
                slot, first = at(buf)
                ranges.append((slot, first - buf.offset * dtypes.itemsize(buf.dtype) + start,
                               nbytes, buf.label or buf.where))
        specs.append(TaskSpec(op, step.name, kernel, srcs[0].dtype if srcs else dst.dtype,
                              dst.dtype, at(dst), tuple(at(b) for b in srcs), params,
                              tuple(ranges)))
    return rt_launch.lower(specs)


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
    executor.rebind()
    tensor.data = addr
    return 0


def set_dynamic_tensor_addr(executor, ir_index, relative_index, tensors, addr) -> int:
    """aclSetDynamicTensorAddr: input ``relative_index`` of dynamic input ``ir_index``."""
    api = "aclSetDynamicTensorAddr"
    ret = _meta_lookup(api, executor)
    if ret:
        return ret
    from .tensor import aclTensorList

    if tensors is None:
        return record(api, S.ACLNN_ERR_INNER_NULLPTR, "tensors is null")
    if not isinstance(tensors, aclTensorList):
        raise TypeError(f"{api}: tensors must be an aclTensorList, not {type(tensors).__name__}")
    ir_index = rt.require_int(api, "irIndex", ir_index)  # size_t
    relative_index = rt.require_int(api, "relativeIndex", relative_index)
    span = executor.dynamic.get(ir_index)
    if span is None:
        which = ", ".join(str(i) for i in sorted(executor.dynamic)) or "none"
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"input {ir_index} of {executor.op} is not a dynamic input (its dynamic "
                      f"inputs: {which})")
    first, count = span
    if not 0 <= relative_index < count or relative_index >= len(tensors):
        return record(api, S.ACLNN_ERR_PARAM_INVALID,
                      f"relativeIndex {relative_index} is out of range for dynamic input "
                      f"{ir_index} of {executor.op}, which holds {count} tensors")
    return set_tensor_addr(api, executor, first + relative_index,
                           tensors.tensors[relative_index], addr, False)


def _check_rebind(api: str, ex: aclOpExecutor, kind: str, index: int, label: str,
                  bound_tensor: aclTensor, addr: int) -> int:
    """Phase 1's view checks for the tensor at its new address (null, alignment, live device
    memory, bounds), on the executor's device, and no partial overlap between an input and an
    output with the new address. 0, or a recorded 161002."""
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


_S = rt.S  # the runtime state (its registries are replaced after fork(): look them up)
_default_stream = rt.current_default_stream
_c_launch = rt_launch.launch
_launch_blocking = config.launch_blocking


def run(api: str, workspace, workspace_size, executor, stream) -> int:
    """CommonOpExecutorRun: the whole second phase of every operator. Checks the executor and
    the workspace, binds the workspace address and launches the templates phase 1 lowered."""
    ex = executor
    if type(ex) is not aclOpExecutor:
        if ex is None:
            return record(api, S.ACLNN_ERR_PARAM_NULLPTR, "executor is null")
        raise TypeError(f"{api}: executor must be an aclOpExecutor, not {type(ex).__name__}")
    ws = (workspace if type(workspace) is int and 0 <= workspace <= _U64 else  # void *
          rt.require_int(api, "workspace", workspace, allow_none=True))
    ws_size = (workspace_size if type(workspace_size) is int and 0 <= workspace_size <= _U64
               else rt.require_int(api, "workspaceSize", workspace_size))  # uint64_t
    if ex.state is not READY:
        how = ex.consumed_by or "aclDestroyAclOpExecutor"
        hint = ("" if ex.state == DESTROYED else
                "; executors are single-use unless aclSetAclOpExecutorRepeatable is called "
                "right after phase 1")
        return record(api, S.ACLNN_ERR_PARAM_NULLPTR,
                      f"executor of {ex.op} was already {ex.state} by {how} (on real hardware "
                      f"this is a use-after-free){hint}")
    if ex.op != api or ws_size or ex.plan.ws_size:
        ret = _check_launch(api, ex, ws, ws_size)
        if ret:
            return _refused(ex, api, "its arguments", ret)
    if type(stream) is int:  # an explicit stream, or 0: the current context's default one
        st = _S.streams.get(stream) if stream else _default_stream()
    else:
        st = _default_stream() if stream is None else None
    if st is None or st.device != ex.device or not ex.ntasks:
        st, code = _stream_slow(api, ex, stream)
        if st is None:  # refused, or nothing to run
            return code
    # bind the workspace, enqueue
    try:
        blocking = _launch_blocking()
    except config.ConfigError:  # changed since acl.init: the code and its message
        return config.checked(api, config.launch_blocking)[1]
    slot = ex.ws_slot
    ex.bases[slot] = ws
    if ex.host is None:
        code = _c_launch(st.handle, ex.templates, ex.ntasks, ex.bases, slot + 1,
                         1 if blocking else 0)
    else:
        code = ex.host(ex, st.handle, blocking)
    if code:
        code = _launch_result(api, st, code, blocking)
        if code == rt_launch.RANGE_NOT_LIVE:  # a tensor was freed: say which
            code = _check_tensors(api, ex) or record(
                api, S.ACLNN_ERR_PARAM_INVALID, "a tensor of the launch is not inside a live "
                "device allocation")
            return _refused(ex, api, "its arguments", code)
    if not ex.repeatable:
        _consume(ex, api)
    return code


def _launch_result(api: str, st, code: int, blocking: bool) -> int:
    """A launch that did not return 0: its code, recorded with its message (RANGE_NOT_LIVE is
    left to the caller, which finds the tensor)."""
    if code == rt.E.ACL_ERROR_RT_INVALID_HANDLE:  # the stream died during the call
        return record(api, S.ACLNN_ERR_RUNTIME_ERROR,
                      f"stream 0x{st.handle:x} was destroyed by another thread during the "
                      "launch; nothing was enqueued")
    if code != rt_launch.RANGE_NOT_LIVE:
        record(api, code, f"{'(ACL_LAUNCH_BLOCKING=1) ' if blocking else ''}{rt.last_c_msg()}")
    return code


def _stream_slow(api: str, ex: aclOpExecutor, stream) -> tuple:
    """Phase 2's stream when it is the default one, unknown, on another device, or there is
    nothing to run: the checks in their documented order (tensors, stream, device).
    (stream, 0) to launch on; (None, code) when refused or done (nothing to run)."""
    if ex.ntasks:
        ret = _check_tensors(api, ex)
        if ret:
            return None, _refused(ex, api, "its arguments", ret)
    with rt.S.lock:
        st, sret = rt.resolve_stream(api, stream)
    if sret:
        return None, _refused(ex, api, "its stream", record(
            api, S.ACLNN_ERR_RUNTIME_ERROR, f"stream {stream!r} cannot be used (runtime code "
            f"{sret}; see the message above)"))
    assert st is not None
    if not ex.ntasks:
        if not ex.repeatable:
            _consume(ex, api)
        return None, 0
    if st.device != ex.device:
        return None, _refused(ex, api, "its stream", record(
            api, S.ACLNN_ERR_RUNTIME_ERROR, f"stream 0x{st.handle:x} belongs to device "
            f"{st.device} but the tensors are on device {ex.device}"))
    return st, 0


def _refused(ex: aclOpExecutor, api: str, what: str, code: int) -> int:
    """Phase 2 rejected the call: a single-use executor is consumed all the same."""
    if not ex.repeatable:
        _consume(ex, f"{api} (which rejected {what})")
    return code


def _consume(ex: aclOpExecutor, how: str) -> None:
    ex.state = CONSUMED
    ex.consumed_by = how


def _check_launch(api: str, ex: aclOpExecutor, ws: int, ws_size: int) -> int:
    """The executor's operator and the workspace (null, size, alignment, live memory)."""
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
        return _range_ok(api, "workspace", ws, ws_size)
    return 0


def _check_tensors(api: str, ex: aclOpExecutor) -> int:
    """Every bound tensor's bytes inside one live device allocation: 0 or a recorded 161002."""
    for (label, t), addr in list(zip(ex.inputs, ex.in_addrs)) + list(zip(ex.outputs,
                                                                        ex.out_addrs)):
        if t is None or t.is_empty():
            continue
        ret = _range_ok(api, f"tensor {label}", addr + t.lo, t.hi - t.lo)
        if ret:
            return ret
    return 0


def _range_ok(api: str, what: str, addr: int, nbytes: int) -> int:
    rc = rt.range_device(addr, nbytes)
    if rc >= 0:
        return 0
    reason = ("runs past the end of its device allocation" if rc == -MemRange.PAST_END else
              "is not inside a live device allocation (freed after phase 1?)")
    return record(api, S.ACLNN_ERR_PARAM_INVALID,
                  f"{what} bytes [0x{addr:x}, 0x{addr + nbytes:x}) {reason}")
