"""Plans: the steps an executor runs (Contiguous -> Cast -> kernel -> Cast -> ViewCopy) and their
workspace layout.

Phase 1 builds a Plan from already-validated arguments; phase 2 only binds addresses and turns the
steps into C task records. Buffers are named symbolically (an input, an output, or a slice of the
workspace) so a repeatable executor can be re-bound to new addresses.

Workspace sizing follows CANN's allocator rule (CANN nnopbase): each intermediate tensor takes
Align(bytes) = (bytes + 32 + 511) & ~511, laid out one after another. Nothing is allocated when
every tensor is contiguous and of the compute dtype: the kernel then writes straight into ``out``
(CANN's ViewCopy retargets the kernel output in that case).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import dtypes
from .tensor import aclTensor, contiguous_strides, extent, is_contiguous, numel


def ws_align(nbytes: int) -> int:
    """CANN's workspace alignment: add 32 bytes, round up to a multiple of 512."""
    return (nbytes + 32 + 511) & ~511


@dataclass(frozen=True)
class Buf:
    """A dense buffer: an input/output tensor's memory, or a slice of the workspace."""

    where: str  # "in", "out" or "ws"
    index: int  # input/output index, or workspace byte offset
    dtype: int
    shape: tuple
    strides: tuple  # element strides (dense for workspace buffers)
    offset: int = 0  # element offset (user tensors)
    label: str = ""  # the name users know: "gradOutput", "out", "workspace"

    @property
    def nbytes(self) -> int:
        return numel(self.shape) * dtypes.itemsize(self.dtype)

    def span(self) -> tuple[int, int]:
        """(first byte, byte count) relative to the bound base address."""
        size = dtypes.itemsize(self.dtype)
        if numel(self.shape) == 0:
            return 0, 0
        lo, hi = extent(self.shape, self.strides, self.offset)
        return lo * size, (hi - lo + 1) * size


@dataclass
class Step:
    kind: str  # "Contiguous", "Cast", "Kernel", "ViewCopy"
    name: str  # shown by `explain`: "Contiguous", "Cast", "SoftmaxGrad", ...
    srcs: tuple  # Bufs read
    dst: Buf  # Buf written
    kernel: int = 0  # EMU_K_* for kernels
    params: dict = field(default_factory=dict)  # outer/axis/inner/flag/alpha/beta/n

    def describe(self) -> str:
        def b(x: Buf) -> str:
            where = {"in": "", "out": "", "ws": f"ws+{x.index}:"}[x.where]
            return f"{where}{x.label}<{dtypes.name(x.dtype)}{list(x.shape)}>"

        args = ", ".join(b(s) for s in self.srcs)
        extra = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.name}({args}{', ' if extra and args else ''}{extra}) -> {b(self.dst)}"


class Plan:
    """Steps plus the workspace layout, built by one operator's phase 1."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.ws_size = 0
        self.layout: list[tuple[str, int, int]] = []  # (what, offset, aligned bytes)
        # softmax family: the accumulation mode recorded at phase 1 (ACLNN_EMU_ACCUMULATION or
        # functional's accumulation=), and the workspace slice the caller fills with the binary
        # post-ops' src1 before the launch (functional's post_ops=)
        self.accumulation: Optional[str] = None
        self.src1: Optional[Buf] = None

    def workspace(self, label: str, dtype: int, shape) -> Buf:
        shape = tuple(shape)
        buf = Buf("ws", self.ws_size, dtype, shape, contiguous_strides(shape), 0, label)
        size = ws_align(buf.nbytes)
        self.layout.append((label, self.ws_size, size))
        self.ws_size += size
        return buf

    def add(self, step: Step) -> Buf:
        self.steps.append(step)
        return step.dst


def user_buf(where: str, index: int, t: aclTensor, label: str) -> Buf:
    return Buf(where, index, t.data_type, t.view_dims, t.strides, t.offset, label)


def contiguous(plan: Plan, src: Buf) -> Buf:
    """l0op::Contiguous: the buffer itself when already dense, else a strided gather into the
    workspace."""
    if is_contiguous(src.shape, src.strides):
        return src
    dst = plan.workspace(f"contiguous({src.label})", src.dtype, src.shape)
    return plan.add(Step("Contiguous", "Contiguous", (src,), dst))


def cast(plan: Plan, src: Buf, dtype: int, into: Optional[Buf] = None) -> Buf:
    """l0op::Cast: the buffer itself when the dtype already matches."""
    if src.dtype == dtype:
        return src
    dst = into or plan.workspace(f"cast({src.label})->{dtypes.name(dtype)}", dtype, src.shape)
    return plan.add(Step("Cast", "Cast", (src,), dst, params={"to": dtypes.name(dtype)}))


def finish_into(plan: Plan, out: Buf, compute_dtype: int, emit) -> None:
    """Run the kernel (``emit(dst_buf)``) and deliver its result into ``out``: straight into a
    dense out of the compute dtype; else through Cast and/or ViewCopy via the workspace."""
    dense_out = is_contiguous(out.shape, out.strides)
    if out.dtype == compute_dtype and dense_out:
        emit(out)
        return
    result = plan.workspace("kernel output", compute_dtype, out.shape)
    emit(result)
    if out.dtype != compute_dtype:
        result = cast(plan, result, out.dtype, into=out if dense_out else None)
    if not dense_out:
        plan.add(Step("ViewCopy", "ViewCopy", (result,), out))
