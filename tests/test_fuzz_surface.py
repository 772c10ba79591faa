"""Hypothesis fuzzing of the whole public surface: every ``acl``, ``acl.rt``, ``acl.util`` and
``aclnn`` entry point, called with arguments a C caller could pass (any 64-bit integer, live,
destroyed and foreign handles and pointers) and arguments no C compiler would accept (bools,
floats, NumPy floats, strings, ints beyond 64 bits).

Properties (docs/reliability.md):
- no crash and no hang (the whole run is bounded; a crash ends pytest);
- a call whose arguments a C caller could pass returns a documented status code (and leaves a
  message naming the API when the code is not 0), never an exception;
- an argument no C compiler accepts raises TypeError naming the argument, nothing else;
- no byte outside what a call may write changes: sentinel device allocations and host buffers
  that no call is ever given keep their bytes.

What is deliberately not drawn: a garbage *host* pointer with a size past its buffer. The emulator
cannot check host memory, and in C such a call faults as well (docs/reliability.md, "what cannot
be checked"). Host pointers here always point into a live host buffer with room for the count,
unless the count is one a check rejects before any byte is touched.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aclnn_py import acl, aclnn

EXAMPLES = 6000  # each example is one call; see also tests/test_fuzz.py

# the codes docs/return_codes.md lists for the runtime and for the aclnn API
DOCUMENTED = {0, 100000, 100002, 100003, 100006, 100008, 100037, 107000, 107001, 107002,
              107006, 107016, 107017, 200000, 207000, 207001, 207002, 207007, 207008, 507006,
              507013, 507015, 161001, 161002, 361001, 561000, 561003, 561103}

U64 = 1 << 64
EDGE_INTS = [0, 1, 2, 7, 8, 63, 64, 4096, -1, -8, -64, (1 << 31) - 1, 1 << 31, -(1 << 31),
             (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, -(1 << 63), U64 - 1, U64 - 64]
NOT_C = [True, False, 1.0, float("nan"), np.float64(2.0), np.float32(1.0), "0", b"\x00",
         U64, -(1 << 63) - 1, 1 << 80, [1], object()]
HOST_SIZE = 1 << 16
DEV_SIZE = 4096
MEM_LIMIT = "64M"  # random sizes must not make the emulator commit gigabytes


class NotC:
    """Marks a drawn value that no C compiler would accept for the parameter."""

    def __init__(self, value):
        self.value = value


class World:
    """Live, destroyed and foreign objects to draw handles and pointers from."""

    def __init__(self):
        assert acl.rt.set_device(0) == 0
        self.host = [np.zeros(HOST_SIZE, np.uint8) for _ in range(2)]
        self.host_ptrs = [acl.util.numpy_to_ptr(a) for a in self.host]
        self.dev = [acl.rt.malloc(DEV_SIZE, 0)[0] for _ in range(3)]
        dead, _ = acl.rt.malloc(DEV_SIZE, 0)
        assert acl.rt.free(dead) == 0
        self.dead_dev = dead
        # sentinels: never handed to any call; must keep their bytes
        self.sentinel_dev, _ = acl.rt.malloc(DEV_SIZE, 0)
        assert acl.rt.memset(self.sentinel_dev, DEV_SIZE, 0x5C, DEV_SIZE) == 0
        self.sentinel_host = np.full(HOST_SIZE, 0xA7, np.uint8)
        self.streams = [acl.rt.create_stream()[0] for _ in range(2)]
        dead_s, _ = acl.rt.create_stream()
        assert acl.rt.destroy_stream(dead_s) == 0
        self.dead_stream = dead_s
        self.events = [acl.rt.create_event()[0] for _ in range(2)]
        dead_e, _ = acl.rt.create_event()
        assert acl.rt.destroy_event(dead_e) == 0
        self.dead_event = dead_e
        self.pinned, _ = acl.rt.malloc_host(HOST_SIZE)
        self.context, _ = acl.rt.create_context(0)
        assert acl.rt.set_device(0) == 0  # back to the default context
        shape = [4, 2]
        self.tensors = [aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0,
                                              aclnn.ACL_FORMAT_ND, shape, p) for p in self.dev]
        dead_t = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND,
                                       shape, self.dev[0])
        assert aclnn.aclDestroyTensor(dead_t) == 0
        self.dead_tensor = dead_t
        acl.get_recent_err_msg()

    def check_sentinels(self):
        out = np.empty(DEV_SIZE, np.uint8)
        assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), DEV_SIZE, self.sentinel_dev, DEV_SIZE,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert (out == 0x5C).all(), "a call wrote into a device allocation it was never given"
        assert (self.sentinel_host == 0xA7).all(), "a call wrote into a host buffer not given to it"

    def close(self):
        for s in self.streams:
            acl.rt.destroy_stream(s)
        for e in self.events:
            acl.rt.destroy_event(e)
        acl.rt.free_host(self.pinned)
        acl.rt.destroy_context(self.context)
        acl.rt.reset_device(0)
        acl.get_recent_err_msg()


@pytest.fixture(scope="module")
def world():
    mp = pytest.MonkeyPatch()
    mp.setenv("ACLNN_EMU_MEM_LIMIT", MEM_LIMIT)
    w = World()
    yield w
    w.close()
    mp.undo()


# ------------------------------------------------------------------------- strategies -------


def ints():
    return st.one_of(st.sampled_from(EDGE_INTS), st.integers(-(1 << 63), U64 - 1))


def maybe_not_c(strategy):
    """Mostly what C could pass, sometimes what it could not."""
    return st.one_of(strategy, strategy, strategy, st.sampled_from(NOT_C).map(NotC))


def handles(w: World, kind: str):
    live = {"stream": w.streams, "event": w.events, "context": [w.context]}[kind]
    dead = {"stream": [w.dead_stream], "event": [w.dead_event], "context": []}[kind]
    other = w.events if kind != "event" else w.streams  # a handle of the wrong kind
    return maybe_not_c(st.one_of(st.sampled_from(live + dead + other + [0, None]), ints()))


def dev_ptrs(w: World):
    """Device pointers: live (with an offset), freed, just past an allocation, null, random."""
    return maybe_not_c(st.one_of(
        st.tuples(st.sampled_from(w.dev), st.integers(0, DEV_SIZE + 64)).map(sum),
        st.sampled_from([w.dead_dev, w.dead_dev + 8, 0, None, w.pinned]),
        ints()))


def host_ptrs(w: World):
    """Host pointers into a live host buffer (offset leaves room for small counts)."""
    return st.tuples(st.sampled_from(w.host_ptrs + [w.pinned]),
                     st.integers(0, HOST_SIZE - DEV_SIZE - 64)).map(sum)


def any_ptrs(w: World):
    return st.one_of(dev_ptrs(w), host_ptrs(w))


def small_counts():
    return maybe_not_c(st.one_of(st.integers(0, DEV_SIZE + 128), st.sampled_from(EDGE_INTS)))


# ------------------------------------------------------------------------------ calls -------


def _memcpy_args(w, data, is_async):
    kind = data.draw(maybe_not_c(st.one_of(st.integers(-1, 8), ints())), label="kind")
    k = kind if isinstance(kind, int) else -1
    # host sides only ever get host buffers: the emulator cannot check host memory (see top)
    dst = data.draw(any_ptrs(w) if k in (1, 3, 4, 5) else host_ptrs(w)
                    if k in (0, 2) else any_ptrs(w), label="dst")
    src = data.draw(any_ptrs(w) if k in (2, 3, 4) else host_ptrs(w)
                    if k in (0, 1, 5) else any_ptrs(w), label="src")
    dst, src = _safe_host(w, dst), _safe_host(w, src)
    count = data.draw(small_counts(), label="count")
    if _is_host(w, dst) or _is_host(w, src):
        count = _fit_host(count)
    dest_max = data.draw(maybe_not_c(st.one_of(st.integers(0, DEV_SIZE + 128), ints())),
                         label="destMax")
    args = [dst, dest_max, src, count, kind]
    if is_async:
        args.append(data.draw(handles(w, "stream"), label="stream"))
    return args


def _is_host(w: World, p) -> bool:
    return isinstance(p, int) and p % U64 != 0 and not acl_is_device(p % U64)


def _safe_host(w: World, p):
    """A random int that is not device memory would be a garbage host pointer (a fault in C as
    here): replaced by a live host buffer."""
    if _is_host(w, p) and not any(b <= p < b + HOST_SIZE for b in w.host_ptrs + [w.pinned]):
        return w.host_ptrs[0]
    return p


def _fit_host(count):
    """A count that fits the room a host pointer leaves (see host_ptrs)."""
    if isinstance(count, int) and count % U64 > DEV_SIZE:
        return count % U64 % (DEV_SIZE + 1)
    return count


def draw_call(w: World, data):
    """(api name, function, args) for one random call."""
    rt, meta = acl.rt, aclnn
    name = data.draw(st.sampled_from(CALLS), label="api")
    if name in ("set_device", "reset_device", "create_context"):
        return name, getattr(rt, name), [data.draw(maybe_not_c(st.one_of(
            st.integers(-2, 3), ints())), label="deviceId")]
    if name in ("get_device", "get_device_count", "get_run_mode", "get_context",
                "synchronize_device", "create_event", "create_stream"):
        return name, getattr(rt, name), []
    if name in ("destroy_stream", "synchronize_stream"):
        return name, getattr(rt, name), [data.draw(handles(w, "stream"), label="stream")]
    if name in ("destroy_context", "set_context"):
        return name, getattr(rt, name), [data.draw(handles(w, "context"), label="context")]
    if name in ("query_event_status", "synchronize_event", "destroy_event"):
        return name, getattr(rt, name), [data.draw(handles(w, "event"), label="event")]
    if name in ("record_event", "reset_event"):
        return name, getattr(rt, name), [data.draw(handles(w, "event")),
                                         data.draw(handles(w, "stream"))]
    if name == "stream_wait_event":
        return name, rt.stream_wait_event, [data.draw(handles(w, "stream")),
                                            data.draw(handles(w, "event"))]
    if name == "event_elapsed_time":
        return name, rt.event_elapsed_time, [data.draw(handles(w, "event")),
                                             data.draw(handles(w, "event"))]
    if name == "malloc":
        return name, rt.malloc, [data.draw(maybe_not_c(ints()), label="size"),
                                 data.draw(maybe_not_c(ints()), label="policy")]
    if name == "malloc_host":
        return name, rt.malloc_host, [data.draw(maybe_not_c(st.one_of(
            st.integers(-8, 4096), st.sampled_from(EDGE_INTS))), label="size")]
    if name == "free":
        return name, rt.free, [data.draw(dev_ptrs(w), label="devPtr")]
    if name == "free_host":
        return name, rt.free_host, [data.draw(maybe_not_c(st.one_of(any_ptrs(w), ints())))]
    if name in ("memcpy", "memcpy_async"):
        return name, getattr(rt, name), _memcpy_args(w, data, name == "memcpy_async")
    if name in ("memset", "memset_async"):
        ptr = _safe_host(w, data.draw(st.one_of(dev_ptrs(w), host_ptrs(w)), label="devPtr"))
        count = data.draw(small_counts())
        if _is_host(w, ptr):
            count = _fit_host(count)
        args = [ptr, data.draw(maybe_not_c(st.one_of(st.integers(0, DEV_SIZE), ints()))),
                data.draw(maybe_not_c(ints()), label="value"), count]
        if name == "memset_async":
            args.append(data.draw(handles(w, "stream")))
        return name, getattr(rt, name), args
    if name == "get_mem_info":
        return name, rt.get_mem_info, [data.draw(maybe_not_c(st.one_of(st.integers(-1, 20),
                                                                       ints())))]
    if name == "ptr_to_bytes":
        ptr = _safe_host(w, data.draw(st.one_of(host_ptrs(w), dev_ptrs(w)), label="ptr"))
        ptr = 0 if ptr is None else ptr  # pyACL's helpers take ints only
        return name, acl.util.ptr_to_bytes, [ptr, data.draw(maybe_not_c(st.integers(-4, 64)))]
    if name == "aclCreateTensor":
        dims = data.draw(maybe_not_c(st.lists(maybe_not_c(ints()), max_size=3)))
        return name, meta.aclCreateTensor, [
            dims, data.draw(maybe_not_c(st.integers(-1, 41))),
            data.draw(st.one_of(st.none(), maybe_not_c(st.lists(maybe_not_c(ints()),
                                                                 max_size=3)))),
            data.draw(maybe_not_c(ints())), data.draw(maybe_not_c(st.integers(-1, 50))),
            data.draw(maybe_not_c(st.lists(maybe_not_c(ints()), max_size=3))),
            data.draw(any_ptrs(w))]
    if name == "aclCreateScalar":
        return name, meta.aclCreateScalar, [data.draw(st.one_of(
            st.floats(allow_nan=True), ints(), st.sampled_from([None, "x"]).map(NotC))),
            data.draw(maybe_not_c(st.integers(-1, 41)))]
    if name == "aclCreateIntArray":
        return name, meta.aclCreateIntArray, [data.draw(maybe_not_c(st.lists(
            maybe_not_c(ints()), max_size=4)))]
    if name.startswith("aclGet"):
        return name, getattr(meta, name), [data.draw(st.sampled_from(
            w.tensors + [w.dead_tensor, None]))]
    if name == "aclnnSoftmax":
        ts = st.sampled_from(w.tensors + [w.dead_tensor, None])
        return name, meta.aclnnSoftmaxGetWorkspaceSize, [
            data.draw(ts), data.draw(maybe_not_c(st.one_of(st.integers(-3, 3), ints()))),
            data.draw(ts)]
    if name == "phase2":
        ws_size, ex, ret = meta.aclnnSoftmaxGetWorkspaceSize(*_fresh_pair(w))
        assert ret == 0
        return name, meta.aclnnSoftmax, [
            data.draw(st.one_of(dev_ptrs(w), host_ptrs(w)), label="workspace"),
            data.draw(maybe_not_c(st.one_of(st.integers(0, 64), ints())), label="size"),
            data.draw(st.sampled_from([ex, None]), label="executor"),
            data.draw(handles(w, "stream"), label="stream")]
    if name in ("aclSetInputTensorAddr", "aclSetOutputTensorAddr"):
        x, dim, y = _fresh_pair(w)  # a successful rebinding moves its tensor: not the world's
        _, ex, ret = meta.aclnnSoftmaxGetWorkspaceSize(x, dim, y)
        assert ret == 0, acl.get_recent_err_msg()
        if data.draw(st.booleans()):
            assert meta.aclSetAclOpExecutorRepeatable(ex) == 0
        return name, getattr(meta, name), [
            ex, data.draw(maybe_not_c(st.one_of(st.integers(-1, 2), ints()))),
            data.draw(st.sampled_from([x, y, None])), data.draw(dev_ptrs(w))]
    raise AssertionError(name)


def _fresh_pair(w: World):
    """(self, dim, out) of a valid aclnnSoftmax call over the world's first two allocations."""
    shape = [4, 2]
    x, y = (aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, p)
            for p in w.dev[:2])
    return x, 1, y


def acl_is_device(ptr: int) -> bool:
    from aclnn_py import runtime

    return runtime.is_device(ptr % U64)


CALLS = ["set_device", "reset_device", "create_context", "get_device", "get_device_count",
         "get_run_mode", "get_context", "synchronize_device", "create_event", "create_stream",
         "destroy_stream", "synchronize_stream", "destroy_context", "set_context",
         "query_event_status", "synchronize_event", "destroy_event", "record_event",
         "reset_event", "stream_wait_event", "event_elapsed_time", "malloc", "malloc_host",
         "free", "free_host", "memcpy", "memcpy_async", "memset", "memset_async",
         "get_mem_info", "ptr_to_bytes", "aclCreateTensor", "aclCreateScalar",
         "aclCreateIntArray", "aclGetViewShape", "aclGetViewStrides", "aclGetViewOffset",
         "aclGetFormat", "aclGetDataType", "aclGetStorageShape", "aclnnSoftmax", "phase2",
         "aclSetInputTensorAddr", "aclSetOutputTensorAddr"]

# calls that create something the world must not keep (it would change what later draws mean)
_DESTRUCTIVE = {"reset_device", "destroy_stream", "destroy_context", "destroy_event", "free",
                "free_host", "set_context", "set_device", "create_context"}


def _undo(w: World, name: str, args, result) -> None:
    """Keep the world as it was: free what a call created, recreate what it destroyed."""
    ret = result[-1] if isinstance(result, tuple) else result
    if name == "malloc" and ret == 0:
        assert acl.rt.free(result[0]) == 0
    elif name == "malloc_host" and ret == 0:
        assert acl.rt.free_host(result[0]) == 0
    elif name == "create_stream" and ret == 0:
        assert acl.rt.destroy_stream(result[0]) == 0
    elif name == "create_event" and ret == 0:
        assert acl.rt.destroy_event(result[0]) == 0
    elif name == "create_context" and ret == 0:
        assert acl.rt.destroy_context(result[0]) == 0
    if name in _DESTRUCTIVE and ret == 0:
        _rebuild(w, name, args)
    acl.rt.set_device(0)
    acl.rt.synchronize_device()
    for s in w.streams:
        acl.rt.synchronize_stream(s)
    acl.get_recent_err_msg()


def _rebuild(w: World, name: str, args) -> None:
    target = args[0] if args else None
    if name == "destroy_stream" and target in w.streams:
        w.streams[w.streams.index(target)] = acl.rt.create_stream()[0]
    elif name == "destroy_event" and target in w.events:
        w.events[w.events.index(target)] = acl.rt.create_event()[0]
    elif name == "free_host" and target == w.pinned:
        w.pinned = acl.rt.malloc_host(HOST_SIZE)[0]
    elif name == "destroy_context" and target == w.context:
        w.context = acl.rt.create_context(0)[0]
    elif name == "free" and target in w.dev:
        i = w.dev.index(target)
        w.dev[i] = acl.rt.malloc(DEV_SIZE, 0)[0]
        shape = [4, 2]
        w.tensors[i] = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0,
                                             aclnn.ACL_FORMAT_ND, shape, w.dev[i])
    elif name == "reset_device":
        # the device's streams and memory are gone: start the world again
        w.__init__()


def _unwrap(args):
    bad = [a.value for a in _flatten(args) if isinstance(a, NotC)]
    return [_strip(a) for a in args], bool(bad)


def _flatten(x):
    if isinstance(x, NotC):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _flatten(v)


def _strip(x):
    if isinstance(x, NotC):
        return x.value
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_entry_point_answers_with_a_code_or_a_type_error(world, data):
    w = world
    name, fn, drawn = draw_call(w, data)
    args, has_bad = _unwrap(drawn)
    acl.get_recent_err_msg()
    try:
        result = fn(*args)
    except ValueError as exc:  # acl.util's documented refusals (pyACL raises for these too)
        assert name == "ptr_to_bytes", f"{name}{tuple(args)!r} raised ValueError: {exc}"
        assert "ptr_to_bytes" in str(exc)
        return
    except TypeError as exc:
        assert has_bad, f"{name}{tuple(args)!r} raised TypeError for C-compatible arguments: {exc}"
        text = str(exc)
        assert text, "a TypeError must say what is wrong"
        _undo(w, name, args, None)
        w.check_sentinels()
        return
    if name == "ptr_to_bytes":
        assert isinstance(result, bytes)
        _undo(w, name, args, None)
        return
    if name in ("aclCreateTensor", "aclCreateScalar", "aclCreateIntArray"):
        if result is None:
            msg = acl.get_recent_err_msg()
            assert msg and name in msg, f"{name} returned None without a message: {msg!r}"
        w.check_sentinels()
        return
    ret = result[-1] if isinstance(result, tuple) else result
    assert isinstance(ret, int), f"{name} returned {result!r}"
    assert int(ret) in DOCUMENTED, f"{name}{tuple(args)!r} returned undocumented {ret}"
    if ret != 0:
        msg = acl.get_recent_err_msg()
        assert msg and str(int(ret)) in msg, f"{name} -> {ret} left message {msg!r}"
    _undo(w, name, args, result)
    w.check_sentinels()
