"""Benchmarks: each operator through the aclnn API against a NumPy baseline, in the same run.

The emulator's time is phase 2 plus synchronize on a repeatable executor (the kernel and its plan
steps, without phase 1); the baseline is the same formula written with NumPy array operations.
Both are medians of ``repeat`` runs after one warm-up.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from . import acl, aclnn, dtypes


def _declared() -> list:
    """(operator, its OpDef.bench) of every operator that declares benchmark cases."""
    from .ops import REGISTRY

    return [(op.name, op.bench) for op in REGISTRY.values() if op.bench is not None]


#: operator -> its NumPy formula ``(arrays, dim) -> array`` (OpDef.bench.numpy)
BASELINES: dict[str, Callable] = {name: bench.numpy for name, bench in _declared()}

#: (operator, shape, dim) of a plain `aclnn-py bench` (OpDef.bench.cases, in registry order)
DEFAULT_CASES = [(name, c.shape, c.dim) for name, bench in _declared() for c in bench.cases]


@dataclass
class Result:
    op: str
    shape: tuple
    dim: Optional[int]
    dtype: str
    emu_ms: float
    numpy_ms: float
    nbytes: int  # bytes read and written by the kernel

    @property
    def speedup(self) -> float:
        return self.numpy_ms / self.emu_ms if self.emu_ms else float("inf")

    @property
    def gbps(self) -> float:
        return self.nbytes / (self.emu_ms * 1e6) if self.emu_ms else float("inf")


def _median_ms(fn, repeat: int, tick) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        tick()
    return statistics.median(times)


def run_case(op_name: str, shape, dim, np_dtype, repeat: int, stream, tick) -> Result:
    from .ops import REGISTRY

    op = REGISTRY[op_name]
    rng = np.random.default_rng(0)
    acl_dt = dtypes.from_numpy(np_dtype)
    assert acl_dt is not None, np_dtype
    n_inputs = len(op.inputs)
    host = [rng.uniform(-4, 4, shape).astype(np_dtype) for _ in range(n_inputs)]
    ptrs, tensors = [], {}
    try:
        names = [*op.inputs, *[o for o in op.outputs if o not in op.inputs]]
        for i, name in enumerate(names):
            a = host[i] if i < n_inputs else np.zeros(shape, np_dtype)
            ptr, ret = acl.rt.malloc(a.nbytes, 0)
            assert ret == 0, acl.get_recent_err_msg()
            ptrs.append(ptr)
            acl.rt.memcpy(ptr, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes,
                          acl.ACL_MEMCPY_HOST_TO_DEVICE)
            tensors[name] = aclnn.aclCreateTensor(list(shape), acl_dt, None, 0,
                                                  aclnn.ACL_FORMAT_ND, list(shape), ptr)
        args = [tensors[p] if p in tensors else dim for p in op.params]
        ws, executor, ret = getattr(aclnn, op_name + "GetWorkspaceSize")(*args)
        assert ret == 0, acl.get_recent_err_msg()
        assert aclnn.aclSetAclOpExecutorRepeatable(executor) == 0
        ws_ptr = 0
        if ws:
            ws_ptr, _ = acl.rt.malloc(ws, 0)
            ptrs.append(ws_ptr)
        launch = getattr(aclnn, op_name)

        def emulate():
            launch(ws_ptr, ws, executor, stream)
            acl.rt.synchronize_stream(stream)

        emu = _median_ms(emulate, repeat, tick)
        aclnn.aclDestroyAclOpExecutor(executor)
        base = _median_ms(lambda: BASELINES[op_name](host, dim), repeat, tick)
        nbytes = (len(names)) * int(np.prod(shape)) * np.dtype(np_dtype).itemsize
        return Result(op_name, tuple(shape), dim, np.dtype(np_dtype).name, emu, base, nbytes)
    finally:
        for p in ptrs:
            acl.rt.free(p)


def format_table(results: list[Result]) -> str:
    head = (f"{'operator':<26}{'shape':<16}{'dim':>4} {'dtype':<9}{'emulator ms':>12}"
            f"{'numpy ms':>10}{'speedup':>9}{'GB/s':>7}")
    lines = [head, "-" * len(head)]
    for r in results:
        shape = "x".join(str(d) for d in r.shape)
        dim = "-" if r.dim is None else str(r.dim)
        lines.append(f"{r.op:<26}{shape:<16}{dim:>4} {r.dtype:<9}{r.emu_ms:>12.2f}"
                     f"{r.numpy_ms:>10.2f}{r.speedup:>8.2f}x{r.gbps:>7.1f}")
    lines.append("medians of phase 2 + synchronize (emulator) and of the NumPy formula "
                 "(baseline); speedup = numpy / emulator")
    return "\n".join(lines)
