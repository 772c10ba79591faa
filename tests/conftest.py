"""Shared fixtures: a device and stream per test, and helpers that move NumPy data through the
public acl/aclnn API exactly as a user program would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aclnn_py import acl, aclnn

H2D = acl.ACL_MEMCPY_HOST_TO_DEVICE
D2H = acl.ACL_MEMCPY_DEVICE_TO_HOST


@pytest.fixture(autouse=True)
def _clean_error_messages():
    """Each test starts with an empty recent-error store."""
    acl.get_recent_err_msg()
    yield


@pytest.fixture
def stream():
    """Device 0 set in this thread, and an explicit stream on it."""
    assert acl.rt.set_device(0) == 0
    st, ret = acl.rt.create_stream()
    assert ret == 0
    yield st
    assert acl.rt.destroy_stream(st) == 0
    assert acl.rt.reset_device(0) == 0


class Dev:
    """Device buffers that a test creates; freed at teardown."""

    def __init__(self):
        self.ptrs: list[int] = []

    def malloc(self, nbytes: int) -> int:
        ptr, ret = acl.rt.malloc(max(int(nbytes), 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0, acl.get_recent_err_msg()
        self.ptrs.append(ptr)
        return ptr

    def upload(self, array: np.ndarray) -> int:
        """A device copy of a C-contiguous array's bytes."""
        a = np.ascontiguousarray(array)
        ptr = self.malloc(a.nbytes)
        if a.nbytes:
            assert acl.rt.memcpy(ptr, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes, H2D) == 0
        return ptr

    def tensor(self, array: np.ndarray, acl_dtype=None):
        """(ptr, tensor): a contiguous aclTensor over a device copy of ``array``."""
        acl_dtype = DTYPE_OF[np.dtype(array.dtype)] if acl_dtype is None else acl_dtype
        ptr = self.upload(array)
        shape = list(array.shape)
        t = aclnn.aclCreateTensor(shape, acl_dtype, None, 0, aclnn.ACL_FORMAT_ND, shape, ptr)
        return ptr, t

    def view(self, storage_array: np.ndarray, shape, strides, offset=0, acl_dtype=None):
        """(ptr, tensor): a strided view over a device copy of ``storage_array``."""
        acl_dtype = DTYPE_OF[np.dtype(storage_array.dtype)] if acl_dtype is None else acl_dtype
        ptr = self.upload(storage_array)
        t = aclnn.aclCreateTensor(list(shape), acl_dtype, list(strides), offset,
                                  aclnn.ACL_FORMAT_ND, [storage_array.size], ptr)
        return ptr, t

    def download(self, ptr: int, shape, dtype) -> np.ndarray:
        out = np.empty(shape, dtype=dtype)
        if out.nbytes:
            assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, ptr, out.nbytes,
                                 D2H) == 0
        return out

    def fill(self, ptr: int, nbytes: int, byte: int) -> None:
        """Set ``nbytes`` device bytes at ``ptr`` to ``byte`` (synchronous acl.rt.memset)."""
        assert acl.rt.memset(ptr, nbytes, byte, nbytes) == 0

    def strided(self, a, perm=None, step=1, pad=0, fill=np.nan, acl_dtype=None):
        """(ptr, tensor, (storage, shape, strides, offset)): a strided view that reads ``a``
        (see ``strided_layout``)."""
        storage, shape, strides, offset = strided_layout(a, perm, step, pad, fill)
        ptr, t = self.view(storage, shape, strides, offset, acl_dtype)
        return ptr, t, (storage, shape, strides, offset)

    def free_all(self):
        """Teardown: free what is still live (a `stream` fixture torn down first has already
        released the device's memory through reset_device), leaving no error messages."""
        for p in self.ptrs:
            if acl.rt.free(p) != 0:
                acl.get_recent_err_msg()
        self.ptrs.clear()


@pytest.fixture
def dev():
    d = Dev()
    yield d
    d.free_all()


try:
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    _BF16 = None

DTYPE_OF = {
    np.dtype(np.float32): aclnn.ACL_FLOAT,
    np.dtype(np.float16): aclnn.ACL_FLOAT16,
    np.dtype(np.float64): aclnn.ACL_DOUBLE,
    np.dtype(np.int32): aclnn.ACL_INT32,
    np.dtype(np.int64): aclnn.ACL_INT64,
    np.dtype(np.int8): aclnn.ACL_INT8,
    np.dtype(np.bool_): aclnn.ACL_BOOL,
    _BF16: aclnn.ACL_BF16,
}
NUMPY_OF = {v: k for k, v in DTYPE_OF.items()}


# ------------------------------------------------------------ runtime-test helpers ----------


@pytest.fixture
def device():
    """Device 0 set in this thread (no explicit stream); reset at teardown."""
    assert acl.rt.set_device(0) == 0
    yield 0
    assert acl.rt.reset_device(0) == 0


@pytest.fixture
def acl_uninitialized(monkeypatch):
    """acl.init not in effect at the start (whatever earlier tests did), finalized at the end,
    and no ACLNN_EMU_SOC in the environment, so the default SoC is known."""
    monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    acl.finalize()  # 0 if an earlier test left acl initialised, 100037 otherwise
    # and the devices an earlier test set without aclInit (aclrtSetDevice is counted and does
    # not need it; aclFinalize releases every device still set): a test that counts what
    # aclrtResetDevice releases must start with none set
    if acl.init() == 0:
        acl.finalize()
    acl.get_recent_err_msg()
    yield
    acl.finalize()
    acl.get_recent_err_msg()


@pytest.fixture
def sleep_on():
    """sleep_on(stream, microseconds): enqueue a task that keeps ``stream`` busy (test hook of
    the C core; not part of the public API)."""
    from aclnn_py.runtime.core import ffi, lib

    def _sleep(stream: int, microseconds: int) -> None:
        tasks = ffi.new("emu_task[1]")
        tasks[0].type = lib.EMU_TASK_SLEEP
        tasks[0].n = int(microseconds)
        assert lib.emu_stream_submit(stream, tasks, 1, 0, ffi.NULL, 0) == 0

    return _sleep


# ----------------------------------------------------------------------- added helpers ----
# (Additions only; nothing above changed.) Layout helpers shared by the SoftmaxBackward tests.


def _dense_strides(shape) -> list:
    strides, acc = [], 1
    for d in reversed(list(shape)):
        strides.append(acc)
        acc *= max(int(d), 1)
    return strides[::-1]


def strided_layout(a, perm=None, step=1, pad=0, fill=np.nan):
    """(storage, shape, strides, offset): a 1-D ``storage`` array and an element-strided view
    of it (``shape``, ``strides``, ``offset`` in elements) that reads exactly the values of ``a``.

    ``perm`` lists the logical dims in memory order (outermost first; None = row-major),
    ``step`` spaces the innermost memory dim, and ``pad`` storage elements precede the view.
    Storage elements the view does not read hold ``fill``. The layout is checked with NumPy's
    own ``as_strided`` before it is returned."""
    a = np.asarray(a)
    nd = a.ndim
    perm = tuple(range(nd)) if perm is None else tuple(perm)
    assert sorted(perm) == list(range(nd)), perm
    phys = a.transpose(perm)
    big = list(phys.shape)
    if nd:
        big[-1] *= step
    body_n = int(np.prod(big, dtype=np.int64))
    storage = np.full(pad + body_n, fill, dtype=a.dtype)
    if body_n:
        body = storage[pad:].reshape(big)
        if nd:
            body[..., ::step] = phys
        else:
            body[...] = phys
    pstr = _dense_strides(big)
    if nd:
        pstr[-1] *= step
    strides = [0] * nd
    for i, d in enumerate(perm):
        strides[d] = pstr[i]
    if a.size:
        check = np.lib.stride_tricks.as_strided(
            storage[pad:], shape=a.shape, strides=[s * a.itemsize for s in strides])
        assert np.array_equal(check.astype(np.float64), a.astype(np.float64), equal_nan=True)
    return storage, list(a.shape), strides, pad


def view_element_indices(shape, strides, offset) -> np.ndarray:
    """The storage element index of every element of a strided view (row-major order)."""
    if not len(shape):
        return np.array([offset], dtype=np.int64)
    idx = np.full(tuple(shape), offset, dtype=np.int64)
    for k, (d, s) in enumerate(zip(shape, strides)):
        ax = np.arange(d, dtype=np.int64) * s
        idx = idx + ax.reshape([-1 if j == k else 1 for j in range(len(shape))])
    return idx


def view_byte_mask(total_bytes, shape, strides, offset, itemsize) -> np.ndarray:
    """A boolean mask over ``total_bytes`` storage bytes: True where the view's elements lie."""
    mask = np.zeros(total_bytes, dtype=bool)
    for e in view_element_indices(shape, strides, offset).ravel():
        mask[e * itemsize:(e + 1) * itemsize] = True
    return mask


def read_view(storage, shape, strides, offset) -> np.ndarray:
    """The values a strided view reads from a host copy of its storage."""
    storage = np.asarray(storage)
    if not len(shape):
        return storage[offset].copy()
    return storage[view_element_indices(shape, strides, offset)]



def run_session_script(tmp_path: Path, script: str, *, timeout: float,
                       env: dict | None = None) -> str:
    """Run ``script`` as a file in a fresh interpreter (cwd ``tmp_path``, a session of its own,
    so that a hang kills it and any child it forked) and assert that it exits 0 having printed
    PASSED; returns its stdout. The scenario tests of test_reliability.py and
    test_custom_hangs.py run through it."""
    path = tmp_path / "scenario.py"
    path.write_text(script)
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.Popen([sys.executable, str(path)], cwd=str(tmp_path), env=full_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the script and any child it forked
        out, err = proc.communicate()
        pytest.fail(f"the scenario hung (killed after {timeout} s)\nstdout:\n{out[-3000:]}\n"
                    f"stderr:\n{err[-3000:]}")
    what = ("hung (watchdog fired)" if "Timeout (" in err else
            f"was killed by signal {-proc.returncode}" if proc.returncode < 0 else
            f"exited with {proc.returncode}")
    assert proc.returncode == 0 and "PASSED" in out, (
        f"the scenario {what}\nstdout:\n{out[-3000:]}\nstderr:\n{err[-3000:]}")
    return out
