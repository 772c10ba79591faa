"""Many threads, each with its own streams and events, running operators at the same time.

Each of 8 threads sets device 0 in that thread, creates 4 streams and 4 events, and runs a small
pipeline a few times with cross-stream ordering by events only (record_event + stream_wait_event):

    s0: H2D x, H2D grad -> aclnnSoftmax(x) -> y                        -> record e0
    s1: wait e0 -> aclnnSoftmaxBackward(grad, y) -> gx                  -> record e1
    s2: wait e0 -> aclnnHardsigmoid(x) -> h                             -> record e2
    s3: wait e1, wait e2 -> D2H y, gx, h                                -> record e3
    host: synchronize e3 (or s3), then compare with the float64 golden (tests/golden.py) at the
    tolerances of tests/test_ops_numerics.py (golden.assert_close, basis float32; the backward
    op scaled by its largest reference magnitude).

Fresh device memory reads as NaN (the poison byte), so a stream that ran before the one it
waits for produces NaN and fails the comparison. The functional layer (one private stream per
thread) is exercised the same way.
"""

from __future__ import annotations

import threading

import golden
import numpy as np

from aclnn_py import acl, aclnn
from aclnn_py import functional as F

H2D, D2H = 1, 2
THREADS, STREAMS, ITERS = 8, 4, 3
F32 = golden.F32


def _p(a: np.ndarray) -> int:
    return acl.util.numpy_to_ptr(a)


def _ok(ret, what):
    assert ret == 0, f"{what} returned {ret}: {acl.get_recent_err_msg()}"


def _run_threads(target, n):
    errors = []

    def wrap(k):
        try:
            target(k)
        except BaseException as exc:  # reported by the main thread
            errors.append((k, exc))

    threads = [threading.Thread(target=wrap, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    if errors:
        k, exc = errors[0]
        raise AssertionError(f"thread {k} failed ({len(errors)} thread(s) in all): {exc!r}") \
            from exc


class _Pipeline:
    """One thread's device buffers and launches; frees everything at close()."""

    def __init__(self):
        self.ptrs = []

    def malloc(self, nbytes):
        p, ret = acl.rt.malloc(max(nbytes, 1), 0)
        _ok(ret, "aclrtMalloc")
        self.ptrs.append(p)
        return p

    @staticmethod
    def tensor(ptr, shape):
        shape = list(shape)
        return aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape,
                                     ptr)

    def launch(self, op, args, stream):
        ws_size, executor, ret = getattr(aclnn, f"aclnn{op}GetWorkspaceSize")(*args)
        _ok(ret, f"aclnn{op}GetWorkspaceSize")
        ws = self.malloc(ws_size) if ws_size else 0
        _ok(getattr(aclnn, f"aclnn{op}")(ws, ws_size, executor, stream), f"aclnn{op}")

    def close(self):
        for p in self.ptrs:
            _ok(acl.rt.free(p), "aclrtFree")
        self.ptrs.clear()


def _stream_worker(k):
    _ok(acl.rt.set_device(0), "aclrtSetDevice")
    streams, events = [], []
    for _ in range(STREAMS):
        s, ret = acl.rt.create_stream()
        _ok(ret, "aclrtCreateStream")
        streams.append(s)
        ev, ret = acl.rt.create_event()
        _ok(ret, "aclrtCreateEvent")
        events.append(ev)
    s0, s1, s2, s3 = streams
    e0, e1, e2, e3 = events
    rng = np.random.default_rng(1000 + k)
    try:
        for it in range(ITERS):
            shape = (int(rng.integers(2, 24)), int(rng.integers(2, 80)))
            dim = int(rng.integers(-2, 2))
            x = rng.uniform(-6, 6, shape).astype(np.float32)
            g = rng.standard_normal(shape).astype(np.float32)
            n = x.nbytes
            pl = _Pipeline()
            dx, dg, dy, dgx, dh = (pl.malloc(n) for _ in range(5))
            tx, tg, ty, tgx, th = (pl.tensor(p, shape) for p in (dx, dg, dy, dgx, dh))
            # s0: upload, softmax
            _ok(acl.rt.memcpy_async(dx, n, _p(x), n, H2D, s0), "aclrtMemcpyAsync H2D")
            _ok(acl.rt.memcpy_async(dg, n, _p(g), n, H2D, s0), "aclrtMemcpyAsync H2D")
            pl.launch("Softmax", (tx, dim, ty), s0)
            _ok(acl.rt.record_event(e0, s0), "aclrtRecordEvent")
            # s1: softmax backward of y; s2: hardsigmoid of x (both after s0)
            _ok(acl.rt.stream_wait_event(s1, e0), "aclrtStreamWaitEvent")
            pl.launch("SoftmaxBackward", (tg, ty, dim, tgx), s1)
            _ok(acl.rt.record_event(e1, s1), "aclrtRecordEvent")
            _ok(acl.rt.stream_wait_event(s2, e0), "aclrtStreamWaitEvent")
            pl.launch("Hardsigmoid", (tx, th), s2)
            _ok(acl.rt.record_event(e2, s2), "aclrtRecordEvent")
            # s3: download after s1 and s2
            y, gx, h = (np.full(shape, -7.0, dtype=np.float32) for _ in range(3))
            _ok(acl.rt.stream_wait_event(s3, e1), "aclrtStreamWaitEvent")
            _ok(acl.rt.stream_wait_event(s3, e2), "aclrtStreamWaitEvent")
            for host, dev in ((y, dy), (gx, dgx), (h, dh)):
                _ok(acl.rt.memcpy_async(_p(host), n, dev, n, D2H, s3), "aclrtMemcpyAsync D2H")
            _ok(acl.rt.record_event(e3, s3), "aclrtRecordEvent")
            if it % 2:
                _ok(acl.rt.synchronize_event(e3), "aclrtSynchronizeEvent")
                assert acl.rt.query_event_status(e3) == (1, 0)
            else:
                _ok(acl.rt.synchronize_stream(s3), "aclrtSynchronizeStream")
            what = f"thread {k} iteration {it} shape {shape} dim {dim}"
            golden.assert_close(y, golden.softmax(x, dim), F32, what=f"softmax, {what}")
            golden.assert_close(gx, golden.softmax_backward(g, y, dim), F32, backward=True,
                                what=f"softmax backward, {what}")
            golden.assert_close(h, golden.hardsigmoid(x), F32, what=f"hardsigmoid, {what}")
            for s in streams:
                _ok(acl.rt.synchronize_stream(s), "aclrtSynchronizeStream")
            pl.close()
    finally:
        for ev in events:
            acl.rt.destroy_event(ev)
        for s in streams:
            acl.rt.destroy_stream(s)
        acl.rt.reset_device(0)


def test_threads_streams_events_pipeline(device):
    """8 threads x 4 streams x 4 events, softmax / softmax backward / hardsigmoid ordered
    across streams by events only: every result matches the float64 golden."""
    _run_threads(_stream_worker, THREADS)
    # the threads released what they created; the device (held by the fixture) still works
    assert acl.rt.synchronize_device() == 0


def _functional_worker(k):
    rng = np.random.default_rng(2000 + k)
    for it in range(ITERS):
        shape = (int(rng.integers(1, 16)), int(rng.integers(1, 50)))
        dim = it % 2
        x = rng.uniform(-6, 6, shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        y = F.softmax(x, dim)
        golden.assert_close(y, golden.softmax(x, dim), F32, what=f"thread {k} softmax")
        golden.assert_close(F.softmax_backward(g, y, dim), golden.softmax_backward(g, y, dim),
                            F32, backward=True, what=f"thread {k} softmax_backward")
        golden.assert_close(F.hardsigmoid(x), golden.hardsigmoid(x), F32,
                            what=f"thread {k} hardsigmoid")


def test_functional_from_many_threads():
    """aclnn_py.functional from 8 threads at once (each thread has its own private stream):
    every result matches the float64 golden."""
    _run_threads(_functional_worker, THREADS)
