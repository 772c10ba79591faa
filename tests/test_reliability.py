"""Reliability of the runtime under misuse that CANN leaves undefined and under races:

1. a stream destroyed (aclrtDestroyStream, aclrtResetDevice) by one thread while another thread
   is between looking the handle up and using it (synchronize, *_async, phase 2,
   aclrtSynchronizeDevice);
2. aclrtSynchronizeDevice while short-lived threads use ``aclnn_py.functional`` (each such thread's
   private stream is destroyed when the thread ends);
3. aclrtDestroyEvent while another thread is inside aclrtSynchronizeEvent on it;
4. aclrtMemset / aclrtMemcpy given the bytes just past a device allocation (they must be refused,
   not written as host memory);
5. a queued task whose device buffer is freed, and allocated again at the same size, before the
   stream reaches the task (the task must fault, not write into the new allocation);
6. os.fork() after streams exist (the child must not hang and must start afresh).

The expected codes are the contract of docs/runtime.md ("Device memory", "Streams", "Events")
and CANN's codes: 107017 ACL_ERROR_RT_INVALID_HANDLE for a handle that is not live, 107000
ACL_ERROR_RT_PARAM_INVALID for a device-range address outside every live allocation, 107016
ACL_ERROR_RT_INVALID_MEMORY_TYPE for a host-side argument that is device memory, 507013/507015
for tasks whose memory went away. Data is checked against what the test itself wrote and against
the float64 golden of tests/golden.py.

Every scenario runs in a subprocess (a use-after-free kills or hangs the interpreter) with a
watchdog, started with cwd=tmp_path so that it imports the installed package, not the source tree.
The races are made near-certain rather than left to the scheduler: the thread that must lose the
race runs under a profile hook that sleeps a little before each call into the C core that takes a
stream or event handle, i.e. after the Python layer has looked the handle up and before C uses it,
which is a legal interleaving (the GIL may switch threads there at any time). Scenario 3 is
ordered outright, with no timing: a custom operator's kernel holds the event's record back until
the test opens it, and the waiter is seen blocked in C (or held just before it) at the destroy.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from conftest import run_session_script

TESTS_DIR = Path(__file__).resolve().parent

# the codes any runtime / phase-2 call may return in these scenarios (docs/return_codes.md)
SPEC_CODES = {0, 100000, 107000, 107002, 107016, 107017, 161001, 161002, 361001, 507013,
              507015}

_PRELUDE = """\
import faulthandler, os, random, sys, threading, time
faulthandler.enable()
faulthandler.dump_traceback_later({watchdog}, exit=True)
sys.path.append({tests!r})  # for golden.py only (it does not import aclnn_py)
import numpy as np
from aclnn_py import acl, aclnn
H2H, H2D, D2H, D2D, DEFAULT = 0, 1, 2, 3, 4
SPEC_CODES = {codes!r}
DELAY = {delay!r}


def chaos(frame, event, arg):
    # profile hook: sleep before each call into the C core that takes a stream or event handle
    # (the Python layer has looked the handle up; C is about to use it)
    if event == "c_call":
        name = getattr(arg, "__name__", "")
        if name.startswith("emu_") and ("stream" in name or "event" in name):
            time.sleep(DELAY)


def ptr(a):
    return acl.util.numpy_to_ptr(a)


FAIL = []


def expect(what, got, want):
    # got must equal want (or one of a set/list of wants) and be of the same type: a code is
    # an int, never a bool or None
    wants = want if isinstance(want, (set, frozenset, list)) else [want]
    if not any(type(got) is type(w) and got == w for w in wants):
        FAIL.append(f"{{what}}: got {{got!r}}, expected {{want!r}}")


def finish():
    if FAIL:
        print("FAILED", len(FAIL), *FAIL[:12], sep="\\n", flush=True)
        os._exit(3)
    print("PASSED", flush=True)
    sys.stdout.flush()
"""


def run_scenario(tmp_path: Path, body: str, *, timeout: float = 90, watchdog: float = 30,
                 delay: float = 0.002, env: dict | None = None) -> str:
    """Run PRELUDE + body as a script in a fresh interpreter (cwd=tmp_path, own session) and
    assert that it exits 0 having printed PASSED; returns its stdout."""
    script = _PRELUDE.format(watchdog=watchdog, tests=str(TESTS_DIR), codes=SPEC_CODES,
                             delay=delay) + textwrap.dedent(body) + "\nfinish()\n"
    return run_session_script(tmp_path, script, timeout=timeout, env=env)


# ---------------------------------------------- 1. a handle destroyed while it is in use ----

# the code of the victim's call made after the killer's call has returned
_AFTER_KILL = {
    ("destroy_stream", "synchronize_stream"): 107017,  # the stream handle is not live
    ("destroy_stream", "memcpy_async"): 107017,
    ("destroy_stream", "memset_async"): 107017,
    ("destroy_stream", "softmax_phase2"): 361001,  # phase 2: runtime error on the stream
    ("destroy_stream", "synchronize_device"): 0,  # the device and its default stream remain
    ("reset_device", "synchronize_stream"): 107017,
    ("reset_device", "memcpy_async"): 107000,  # its buffers were freed by the reset
    ("reset_device", "memset_async"): 107000,
    ("reset_device", "softmax_phase2"): 161002,  # tensor memory not live at phase 2
    ("reset_device", "synchronize_device"): 107002,  # the thread's context was destroyed
    # stream 0: the current context's default stream (looked up without the lock)
    ("destroy_stream", "synchronize_default"): 0,  # another stream died, not this one
    ("destroy_stream", "softmax_phase2_default"): 0,
    ("reset_device", "synchronize_default"): 107002,  # the context is gone: no default stream
    ("reset_device", "softmax_phase2_default"): 161002,  # tensors first: their memory is freed
    ("destroy_context", "synchronize_default"): 107002,
    ("destroy_context", "softmax_phase2_default"): 361001,  # the stream cannot be used
    ("destroy_context", "synchronize_stream"): 107017,  # its explicit streams went with it
    ("destroy_context", "softmax_phase2"): 361001,
}

_HANDLE_RACE = """
import golden
KILLER, VICTIM, ITERS = {killer!r}, {victim!r}, {iters}
AFTER_KILL = {after}
shape = [32, 64]
x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
n = x.nbytes


def setup():
    assert acl.rt.set_device(0) == 0
    if KILLER == "destroy_context":  # a context of its own, current in this thread too
        ctx, ret = acl.rt.create_context(0)
        assert ret == 0 and acl.rt.set_context(ctx) == 0
    ctx, ret = acl.rt.get_context()
    assert ret == 0
    s, ret = acl.rt.create_stream()
    assert ret == 0
    d, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    o, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    assert acl.rt.memcpy(d, n, ptr(x), n, H2D) == 0
    xt = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, d)
    yt = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, o)
    ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 1, yt)
    assert ret == 0 and ws == 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    return ctx, s, d, o, ex


def call(s, d, o, ex):
    if VICTIM == "synchronize_stream":
        return acl.rt.synchronize_stream(s)
    if VICTIM == "memcpy_async":
        return acl.rt.memcpy_async(o, n, d, n, D2D, s)
    if VICTIM == "memset_async":
        return acl.rt.memset_async(o, n, 0, n, s)
    if VICTIM == "softmax_phase2":
        return aclnn.aclnnSoftmax(None, 0, ex, s)
    if VICTIM == "synchronize_default":
        return acl.rt.synchronize_stream(0)
    if VICTIM == "softmax_phase2_default":
        return aclnn.aclnnSoftmax(None, 0, ex, 0)
    return acl.rt.synchronize_device()


for it in range(ITERS):
    ctx, s, d, o, ex = setup()
    started, killed = threading.Event(), threading.Event()
    codes = []

    def victim():
        expect("aclrtSetCurrentContext", acl.rt.set_context(ctx), 0)
        sys.setprofile(chaos)
        started.set()
        while not killed.is_set():
            codes.append(call(s, d, o, ex))
        sys.setprofile(None)
        codes.append(("after", call(s, d, o, ex)))

    t = threading.Thread(target=victim)
    t.start()
    started.wait()
    time.sleep(random.uniform(0, 2 * DELAY))
    if KILLER == "destroy_stream":
        expect("aclrtDestroyStream", acl.rt.destroy_stream(s), 0)
    elif KILLER == "destroy_context":
        expect("aclrtDestroyContext", acl.rt.destroy_context(ctx), 0)
    else:
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
    killed.set()
    t.join()
    for c in codes[:-1]:
        expect(f"iteration {{it}}: {{VICTIM}} racing {{KILLER}}", c, SPEC_CODES)
    expect(f"iteration {{it}}: {{VICTIM}} after {{KILLER}}", codes[-1][1], AFTER_KILL)
    if VICTIM == "softmax_phase2_default" and KILLER == "destroy_stream":
        expect("synchronize_stream(0)", acl.rt.synchronize_stream(0), 0)
    if KILLER in ("destroy_stream", "destroy_context") and 0 in codes[:-1] and VICTIM in (
            "memcpy_async", "memset_async", "softmax_phase2", "softmax_phase2_default"):
        # work accepted on the stream ran before aclrtDestroyStream returned
        got = np.full_like(x, 5.0)
        expect("aclrtMemcpy D2H", acl.rt.memcpy(ptr(got), n, o, n, D2H), 0)
        if VICTIM.startswith("softmax_phase2"):
            try:
                golden.assert_close(got, golden.softmax(x, 1), golden.F32, what="softmax out")
            except AssertionError as exc:
                FAIL.append(f"iteration {{it}}: {{exc}}")
        else:
            want = x if VICTIM == "memcpy_async" else np.zeros_like(x)
            expect(f"iteration {{it}}: out holds what the accepted {{VICTIM}} wrote",
                   int(np.array_equal(got, want)), 1)
    # the runtime goes on working
    if KILLER in ("destroy_stream", "destroy_context"):
        if KILLER == "destroy_context":  # this thread's context went too: back to the device's
            expect("aclrtSetDevice", acl.rt.set_device(0), 0)
            expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
        expect("synchronize_stream(None) after the race", acl.rt.synchronize_stream(None), 0)
        expect("aclDestroyAclOpExecutor", aclnn.aclDestroyAclOpExecutor(ex), 0)
        expect("aclrtFree", acl.rt.free(d), 0)
        expect("aclrtFree", acl.rt.free(o), 0)
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
    else:
        expect("aclDestroyAclOpExecutor", aclnn.aclDestroyAclOpExecutor(ex), 0)
        expect("aclrtFree after aclrtResetDevice freed it", acl.rt.free(d), 207002)
    acl.get_recent_err_msg()
"""


@pytest.mark.parametrize("killer,victim", sorted(_AFTER_KILL))
def test_handle_destroyed_while_another_thread_uses_it(tmp_path, killer, victim):
    """Thread A destroys a stream (aclrtDestroyStream, aclrtResetDevice of its device, or
    aclrtDestroyContext of its context) while thread B keeps calling ``victim`` on it (the
    ``_default`` victims pass stream 0, the current context's default stream, which phase 2 and
    synchronize look up without the lock): every call of B returns a code of the contract, the
    call after the destruction the exact one, and the process neither hangs nor crashes."""
    body = _HANDLE_RACE.format(killer=killer, victim=victim, iters=60,
                               after=_AFTER_KILL[(killer, victim)])
    run_scenario(tmp_path, body)


# ------------------------- 2. synchronize_device while functional threads come and go ----

_FUNCTIONAL_THREADS = """
import golden
from aclnn_py import functional as F
ROUNDS, PER_ROUND = {rounds}, {per_round}
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.get_context()
assert ret == 0
stop = threading.Event()
sync_codes = []


def syncer():
    assert acl.rt.set_context(ctx) == 0
    sys.setprofile(chaos)
    while not stop.is_set():
        sync_codes.append(acl.rt.synchronize_device())
    sys.setprofile(None)


def worker(k, out):
    # a short-lived thread: its functional call creates the thread's private stream, which is
    # destroyed when the thread ends
    x = np.random.default_rng(k).uniform(-4, 4, (8, 33)).astype(np.float32)
    out[k] = (x, F.softmax(x, k % 2))


st = threading.Thread(target=syncer)
st.start()
results = {{}}
for r in range(ROUNDS):
    ts = [threading.Thread(target=worker, args=(r * PER_ROUND + i, results))
          for i in range(PER_ROUND)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
stop.set()
st.join()
expect("every functional call finished", len(results), ROUNDS * PER_ROUND)
for k, (x, got) in sorted(results.items()):
    try:
        golden.assert_close(got, golden.softmax(x, k % 2), golden.F32, what=f"softmax #{{k}}")
    except AssertionError as e:
        FAIL.append(str(e))
for c in sync_codes:
    # a private stream destroyed during the synchronize: 0 or "not live"; nothing faults
    expect("aclrtSynchronizeDevice", c, {{0, 107017}})
expect("synchronize_device calls made", min(len(sync_codes), 1), 1)
expect("aclrtSynchronizeDevice after the threads", acl.rt.synchronize_device(), 0)
expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
"""


def test_synchronize_device_while_functional_threads_exit(tmp_path):
    """aclrtSynchronizeDevice in a loop in one thread while short-lived threads run
    functional.softmax (each on its own private stream, destroyed at thread exit): every
    synchronize returns 0 or 107017, every softmax matches the float64 golden."""
    run_scenario(tmp_path, _FUNCTIONAL_THREADS.format(rounds=60, per_round=4))


# ---------------------------------- 3. destroy_event while synchronize_event waits on it ----

_EVENT_RACE = """
from aclnn_py import custom

ITERS, LATE_ITERS, N, WAIT = {iters}, {late_iters}, 4096, 20.0
# a custom operator whose kernel (run by the stream's worker) returns only when the test opens
# the gate: the event's record, queued behind it, is pending for as long as the test needs
GATE = {{"op": "GateCustom",
        "input_desc": [{{"name": "x", "param_type": "required", "type": ["float"]}}],
        "output_desc": [{{"name": "z", "param_type": "required", "type": ["float"]}}]}}
gate_open = threading.Event()


def gate_custom(x, z):
    if not gate_open.wait(WAIT):
        raise RuntimeError("the test never opened the gate")
    z[...] = x


custom.load([GATE], {{"GateCustom": gate_custom}})
assert acl.rt.set_device(0) == 0
s, ret = acl.rt.create_stream()
assert ret == 0
buf, ret = acl.rt.malloc(N, 0)
assert ret == 0
gx, ret = acl.rt.malloc(16, 0)
assert ret == 0
gz, ret = acl.rt.malloc(16, 0)
assert ret == 0


def close_gate_on(stream):
    gate_open.clear()
    tx, tz = (aclnn.aclCreateTensor([4], 0, None, 0, 2, [4], p) for p in (gx, gz))
    ws, ex, ret = aclnn.aclnnGateCustomGetWorkspaceSize(tx, tz)
    assert ret == 0, ret
    assert aclnn.aclnnGateCustom(0, ws, ex, stream) == 0


def in_c(t):
    # whether waiter thread t is blocked inside emu_event_synchronize: its Python stack ends in
    # synchronize_event (the probe has returned; nothing runs Python between a c_call profile
    # event and the call, and this thread holds the GIL) and the thread sleeps (with the record
    # gated, the event's condition variable is the only wait there)
    frame = sys._current_frames().get(t.ident)
    if frame is None or frame.f_code.co_name != "synchronize_event":
        return False
    try:
        with open(f"/proc/self/task/{{t.native_id}}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "S"
    except OSError:  # no /proc: the stack alone
        return True


for it in range(ITERS + LATE_ITERS):
    # first ITERS iterations: the waiter is waiting in C (aclrtSynchronizeEvent) for the record
    # when the event is destroyed: the synchronize completes, 0. Then LATE_ITERS iterations
    # where the waiter has looked the event up but enters C only after the destroy and the
    # record (which drops the last reference): the handle is not live, 107017.
    late = it >= ITERS
    ev, ret = acl.rt.create_event()
    assert ret == 0
    value = 1 + it % 250
    close_gate_on(s)
    expect("aclrtMemsetAsync", acl.rt.memset_async(buf, N, value, N, s), 0)
    expect("aclrtRecordEvent", acl.rt.record_event(ev, s), 0)
    res = {{}}
    calling, go = threading.Event(), threading.Event()

    def probe(frame, event, arg):
        # runs in the waiter just before it calls C with the event it looked up
        if event == "c_call" and getattr(arg, "__name__", "") == "emu_event_synchronize":
            calling.set()
            if late:
                go.wait(WAIT)

    def waiter():
        sys.setprofile(probe)
        res["ret"] = acl.rt.synchronize_event(ev)
        sys.setprofile(None)

    t = threading.Thread(target=waiter)
    t.start()
    expect("the waiter reached aclrtSynchronizeEvent's C call", calling.wait(WAIT), True)
    deadline = time.monotonic() + WAIT
    while not late and not in_c(t) and time.monotonic() < deadline:
        time.sleep(0.0005)
    if not late:
        expect(f"iteration {{it}}: the waiter is blocked in C", in_c(t), True)
    expect(f"iteration {{it}}: the record is pending at aclrtDestroyEvent",
           acl.rt.query_event_status(ev), (0, 0))
    expect("aclrtDestroyEvent", acl.rt.destroy_event(ev), 0)
    gate_open.set()
    if late:  # the record runs and drops the last reference before the waiter enters C
        expect("aclrtSynchronizeStream", acl.rt.synchronize_stream(s), 0)
        go.set()
    t.join(WAIT)
    expect(f"iteration {{it}}: the waiter returned", t.is_alive(), False)
    expect(f"iteration {{it}}: aclrtSynchronizeEvent in flight during aclrtDestroyEvent"
           f" ({{'entered C after' if late else 'waiting in C'}})", res.get("ret"),
           107017 if late else 0)
    expect("aclrtSynchronizeEvent on the destroyed event", acl.rt.synchronize_event(ev), 107017)
    expect("aclrtDestroyEvent twice", acl.rt.destroy_event(ev), 107017)
    expect("aclrtSynchronizeStream", acl.rt.synchronize_stream(s), 0)
    # the stream's work ran: the memset wrote value
    back = np.zeros(N, dtype=np.uint8)
    expect("aclrtMemcpy", acl.rt.memcpy(ptr(back), N, buf, N, D2H), 0)
    expect(f"iteration {{it}}: bytes the memset wrote", int((back == value).all()), 1)
    acl.get_recent_err_msg()
expect("aclrtDestroyStream", acl.rt.destroy_stream(s), 0)
for p in (buf, gx, gz):
    expect("aclrtFree", acl.rt.free(p), 0)
expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
"""


def test_destroy_event_while_synchronize_event_waits(tmp_path):
    """aclrtDestroyEvent while another thread is in aclrtSynchronizeEvent on it, waiting for a
    record that a gate holds back (a custom operator's kernel queued before it, which returns
    when the test says): 10 times with the waiter waiting in C (it returns 0: a waiting
    synchronize completes), 4 times with the waiter between the handle lookup and C, held there
    until the record has run and the last reference is gone (it returns 107017). The handle is
    then not live (107017), and the stream's work completes. Every step is ordered by the test,
    none by timing."""
    run_scenario(tmp_path, _EVENT_RACE.format(iters=10, late_iters=4))


# ---------------------------------------------- 4. the bytes just past a device allocation ----

# (call, expected code). ``past`` is the first byte after a live 4096-byte allocation: inside
# the device address range but in no live allocation. A device-side argument there is 107000;
# a host-side argument there (the copy kind says host) is device memory: 107016.
_PAST_END_CASES = {
    "memset": ("acl.rt.memset(past, COUNT, 0x5A, COUNT)", 107000),
    "memset_async": ("acl.rt.memset_async(past, COUNT, 0x5A, COUNT, None)", 107000),
    "default_dst": ("acl.rt.memcpy(past, COUNT, ptr(hsrc), COUNT, DEFAULT)", 107000),
    "default_src": ("acl.rt.memcpy(ptr(hdst), COUNT, past, COUNT, DEFAULT)", 107000),
    "h2h_dst": ("acl.rt.memcpy(past, COUNT, ptr(hsrc), COUNT, H2H)", 107016),
    "h2h_src": ("acl.rt.memcpy(ptr(hdst), COUNT, past, COUNT, H2H)", 107016),
    "d2h_host_dst": ("acl.rt.memcpy(past, COUNT, bufs[0], COUNT, D2H)", 107016),
    "h2d_host_src": ("acl.rt.memcpy(bufs[0], COUNT, past, COUNT, H2D)", 107016),
    "d2h_device_src": ("acl.rt.memcpy(ptr(hdst), COUNT, past, COUNT, D2H)", 107000),
    "h2d_device_dst": ("acl.rt.memcpy(past, COUNT, ptr(hsrc), COUNT, H2D)", 107000),
    "d2h_async_host_dst": ("acl.rt.memcpy_async(past, COUNT, bufs[0], COUNT, D2H, None)",
                           107016),
}

_PAST_END = """
N, COUNT, WANT = 4096, 256, {want}
assert acl.rt.set_device(0) == 0
bufs = []
for i in range(8):
    p, ret = acl.rt.malloc(N, 0)
    assert ret == 0
    pattern = np.full(N, 0x10 + i, dtype=np.uint8)
    assert acl.rt.memcpy(p, N, ptr(pattern), N, H2D) == 0
    bufs.append(p)
past = bufs[3] + N
hsrc = np.full(COUNT, 0x5A, dtype=np.uint8)
hdst = np.full(COUNT, 0x77, dtype=np.uint8)
acl.get_recent_err_msg()
ret = {call}
expect({call!r}, ret, WANT)
msg = acl.get_recent_err_msg() or ""
api = "aclrtMemset" if "memset" in {call!r} else "aclrtMemcpy"
expect("the message names the API and the code", int(api in msg and str(WANT) in msg), 1)
if WANT == 107000:  # "... not inside a live (device) allocation"
    expect("the message says the address is not in live device memory: " + msg,
           int("live" in msg), 1)
expect("aclrtSynchronizeStream(None)", acl.rt.synchronize_stream(None), 0)
# nothing was written: every allocation holds its pattern, the host buffers are unchanged
for i, p in enumerate(bufs):
    back = np.zeros(N, dtype=np.uint8)
    expect("aclrtMemcpy D2H", acl.rt.memcpy(ptr(back), N, p, N, D2H), 0)
    expect(f"allocation {{i}} unchanged", int((back == 0x10 + i).all()), 1)
expect("host source unchanged", int((hsrc == 0x5A).all()), 1)
expect("host destination unchanged", int((hdst == 0x77).all()), 1)
# the heap is intact
for _ in range(300):
    q, ret = acl.rt.malloc(N, 0)
    expect("aclrtMalloc", ret, 0)
    expect("aclrtFree", acl.rt.free(q), 0)
junk = [bytearray(N + 64 * k) for k in range(64)]
for p in bufs:
    expect("aclrtFree", acl.rt.free(p), 0)
expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
"""


@pytest.mark.parametrize("case", list(_PAST_END_CASES))
def test_bytes_past_an_allocation_are_not_host_memory(tmp_path, case):
    """The first byte after a 4096-byte allocation lies in the device address range: a memset or
    a copy side there is refused (107000 device side / 107016 host side, docs/runtime.md), and
    no byte of any allocation or host buffer changes. (In a subprocess: writing there as host
    memory corrupts the heap.)"""
    call, want = _PAST_END_CASES[case]
    run_scenario(tmp_path, _PAST_END.format(call=call, want=want))


# ------------------------------- 5. a queued task whose buffer is freed and allocated again ----

_REALLOC = """
from aclnn_py.runtime.core import ffi, lib
KIND, N, FILLER_FREES = {kind!r}, {n}, {filler_frees}


def hold(stream, microseconds):
    task = ffi.new("emu_task[1]")
    task[0].type = lib.EMU_TASK_SLEEP
    task[0].n = microseconds
    assert lib.emu_stream_submit(stream, task, 1, 0, ffi.NULL, 0) == 0

COUNT = 4096  # bytes the stale task writes at the start of the buffer
WANT = 507015 if KIND == "kernel" else 507013
assert acl.rt.set_device(0) == 0
s, ret = acl.rt.create_stream()
assert ret == 0
ev, ret = acl.rt.create_event()
assert ret == 0
xs = np.random.default_rng(3).standard_normal(COUNT // 4).astype(np.float32)
src, ret = acl.rt.malloc(COUNT, 0)
assert ret == 0
assert acl.rt.memcpy(src, COUNT, ptr(xs), COUNT, H2D) == 0
pattern = (np.arange(COUNT) % 251).astype(np.uint8)
same_address = 0

for attempt, hold_us in enumerate((1_000_000, 4_000_000, 12_000_000)):
    target, ret = acl.rt.malloc(N, 0)
    assert ret == 0
    fillers = []
    for _ in range(FILLER_FREES):
        q, ret = acl.rt.malloc(64 << 10, 0)
        assert ret == 0
        fillers.append(q)
    # keep the stream busy: the task below runs only after the C core's sleep task (a test hook;
    # it holds no lock, so the frees and mallocs below do not wait for it). A fixed hold, not
    # busy work: under a sanitizer the host side slows down more than the stream does.
    hold(s, hold_us)
    expect("aclrtRecordEvent", acl.rt.record_event(ev, s), 0)
    # the task that writes COUNT bytes at target
    if KIND == "memset":
        expect("aclrtMemsetAsync", acl.rt.memset_async(target, N, 0x33, COUNT, s), 0)
    elif KIND == "memcpy":
        expect("aclrtMemcpyAsync", acl.rt.memcpy_async(target, N, src, COUNT, D2D, s), 0)
    else:
        shape = [COUNT // 4]
        xt = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape,
                                   src)
        yt = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape,
                                   target)
        ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 0, yt)
        assert ret == 0 and ws == 0
        expect("aclnnSoftmax", aclnn.aclnnSoftmax(None, 0, ex, s), 0)
    # free it before the stream reaches the task, push it out of any quarantine, allocate the
    # same size again and fill it with our own bytes
    expect("aclrtFree", acl.rt.free(target), 0)
    for q in fillers:
        expect("aclrtFree (filler)", acl.rt.free(q), 0)
    held = []
    again, ret = acl.rt.malloc(N, 0)
    while again != target and len(held) < 3 and ret == 0:
        # an allocator that reuses addresses gives target back within a few allocations
        held.append(again)
        again, ret = acl.rt.malloc(N, 0)
    expect("aclrtMalloc (again)", ret, 0)
    for h in held:
        expect("aclrtFree", acl.rt.free(h), 0)
    same_address += again == target
    expect("aclrtMemcpy H2D", acl.rt.memcpy(again, COUNT, ptr(pattern), COUNT, H2D), 0)
    pending = acl.rt.query_event_status(ev) == (0, 0)
    code = acl.rt.synchronize_stream(s)
    if not pending:
        # the stream reached the task before the new allocation was made (a slow machine):
        # the scenario did not happen; retry, busier
        acl.get_recent_err_msg()
        expect("aclrtFree", acl.rt.free(again), 0)
        continue
    expect(f"aclrtSynchronizeStream after the {{KIND}} task's buffer was freed", code, WANT)
    msg = acl.get_recent_err_msg() or ""
    expect("the fault message names the task and says the memory is no longer live: " + msg,
           int(str(WANT) in msg and ("Memset" if KIND == "memset" else "Memcpy"
                                     if KIND == "memcpy" else "aclnnSoftmax") in msg
               and "live" in msg), 1)
    back = np.zeros(COUNT, dtype=np.uint8)
    expect("aclrtMemcpy D2H", acl.rt.memcpy(ptr(back), COUNT, again, COUNT, D2H), 0)
    expect("the new allocation holds what the test wrote (the stale task wrote nothing)",
           int((back == pattern).all()), 1)
    # the stream works again once the fault is collected
    expect("aclrtMemsetAsync", acl.rt.memset_async(again, N, 0x44, COUNT, s), 0)
    expect("aclrtSynchronizeStream", acl.rt.synchronize_stream(s), 0)
    expect("aclrtMemcpy D2H", acl.rt.memcpy(ptr(back), COUNT, again, COUNT, D2H), 0)
    expect("memset after the fault", int((back == 0x44).all()), 1)
    expect("aclrtFree", acl.rt.free(again), 0)
    break
else:
    FAIL.append("the stream never stayed busy long enough (test setup)")
print("same address reused:", same_address)
expect("aclrtDestroyEvent", acl.rt.destroy_event(ev), 0)
expect("aclrtDestroyStream", acl.rt.destroy_stream(s), 0)
expect("aclrtFree", acl.rt.free(src), 0)
expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
"""


@pytest.mark.parametrize("size", ["33MiB", "257MiB"])
@pytest.mark.parametrize("kind", ["memset", "memcpy", "kernel"])
def test_task_on_freed_and_reallocated_buffer_faults(tmp_path, kind, size):
    """A memset / D2D copy / aclnnSoftmax task (writing 4 KiB) queued behind a sleep task, whose
    output buffer is freed and allocated again at the same size before the stream reaches it:
    synchronize returns 507013 (copy, memset) or 507015 (kernel), and the new allocation keeps
    the bytes the test wrote into it. The sizes make a C library hand the same address back
    (both are mmap-sized): 33 MiB after 1100 other frees (beyond a quarantine of the last 1024
    frees), 257 MiB at once (beyond a 256 MiB quarantine budget). ACLNN_EMU_POISON=off keeps
    the memory actually touched small."""
    n = 33 << 20 if size == "33MiB" else 257 << 20
    body = _REALLOC.format(kind=kind, n=n, filler_frees=1100 if size == "33MiB" else 0)
    run_scenario(tmp_path, body, timeout=150, watchdog=90,
                 env={"ACLNN_EMU_MEM_LIMIT": "4G", "ACLNN_EMU_POISON": "off"})


# ------------------------------------------------------------------------------- 6. fork ----

_FORK = """
import signal
import golden
from aclnn_py import functional as F
SCENARIO, CHILD_TIMEOUT = {scenario!r}, {child_timeout}
N = 4096
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.get_context()
assert ret == 0
s, ret = acl.rt.create_stream()
assert ret == 0
ev, ret = acl.rt.create_event()
assert ret == 0
d, ret = acl.rt.malloc(N, 0)
assert ret == 0
# every kind of object has been used once: worker threads exist and have run tasks
assert acl.rt.memset_async(d, N, 1, N, s) == 0
assert acl.rt.record_event(ev, s) == 0
assert acl.rt.memset_async(d, N, 2, N, None) == 0
assert acl.rt.synchronize_stream(s) == 0
assert acl.rt.synchronize_stream(None) == 0
x0 = np.random.default_rng(0).standard_normal((4, 9)).astype(np.float32)
F.softmax(x0, 1)  # this thread's private functional stream exists too
BUSY = SCENARIO == "malloc_while_task_runs"
if BUSY:
    BIG = 64 << 20
    big, ret = acl.rt.malloc(BIG, 0)
    assert ret == 0
    first_done, ret = acl.rt.create_event()
    assert ret == 0


def make_busy():
    # two streams running 64 MiB memsets: tasks in progress at the fork (a fork takes long
    # enough that a worker may finish its task during it, hence several rounds)
    assert acl.rt.memset_async(big, BIG, 3, BIG, s) == 0
    assert acl.rt.record_event(first_done, s) == 0
    for _ in range(16):
        assert acl.rt.memset_async(big, BIG, 4, BIG, s) == 0
        assert acl.rt.memset_async(big, BIG, 5, BIG, None) == 0
    while acl.rt.query_event_status(first_done) != (1, 0):
        time.sleep(0.0002)
    time.sleep(0.002)


def child():
    if SCENARIO == "parent_handles":
        expect("aclrtSynchronizeStream(parent stream)", acl.rt.synchronize_stream(s), 107017)
        expect("aclrtDestroyStream(parent stream)", acl.rt.destroy_stream(s), 107017)
        expect("aclrtSynchronizeEvent(parent event)", acl.rt.synchronize_event(ev), 107017)
        expect("aclrtQueryEventStatus(parent event)", acl.rt.query_event_status(ev),
               (0, 107017))
        expect("aclrtDestroyEvent(parent event)", acl.rt.destroy_event(ev), 107017)
        expect("aclrtSetCurrentContext(parent context)", acl.rt.set_context(ctx), 107017)
        expect("aclrtSetDevice", acl.rt.set_device(0), 0)
        p, ret = acl.rt.malloc(N, 0)
        expect("aclrtMalloc", ret, 0)
        expect("aclrtMemsetAsync on the parent stream", acl.rt.memset_async(p, N, 5, N, s),
               107017)
        expect("aclrtMemcpyAsync on the parent stream",
               acl.rt.memcpy_async(p, N, p, N, D2D, s), 107017)
        expect("aclrtRecordEvent(parent event)", acl.rt.record_event(ev, None), 107017)
        expect("aclrtStreamWaitEvent(parent stream)", acl.rt.stream_wait_event(s, ev), 107017)
        expect("aclrtFree", acl.rt.free(p), 0)
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
    elif SCENARIO == "default_stream":
        # the child starts afresh: this thread has no current context, hence no default stream
        expect("aclrtSynchronizeStream(None) before aclrtSetDevice",
               acl.rt.synchronize_stream(None), 107002)
        expect("aclrtSetDevice", acl.rt.set_device(0), 0)
        p, ret = acl.rt.malloc(N, 0)
        expect("aclrtMalloc", ret, 0)
        expect("aclrtMemsetAsync(default stream)", acl.rt.memset_async(p, N, 0x21, N, None), 0)
        expect("aclrtSynchronizeStream(None)", acl.rt.synchronize_stream(None), 0)
        back = np.zeros(N, dtype=np.uint8)
        expect("aclrtMemcpy D2H", acl.rt.memcpy(ptr(back), N, p, N, D2H), 0)
        expect("bytes the memset wrote", int((back == 0x21).all()), 1)
        expect("aclrtSynchronizeDevice", acl.rt.synchronize_device(), 0)
        expect("aclrtFree", acl.rt.free(p), 0)
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
    elif SCENARIO == "parent_pointers":
        expect("aclrtSetDevice", acl.rt.set_device(0), 0)
        h = np.full(N, 9, dtype=np.uint8)
        expect("aclrtMemcpy D2H from a parent pointer", acl.rt.memcpy(ptr(h), N, d, N, D2H),
               107000)
        expect("aclrtMemcpy H2D to a parent pointer", acl.rt.memcpy(d, N, ptr(h), N, H2D),
               107000)
        expect("aclrtMemset of a parent pointer", acl.rt.memset(d, N, 0, N), 107000)
        expect("host buffer unchanged", int((h == 9).all()), 1)
        shape = [N // 4]
        xt = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, d)
        p, ret = acl.rt.malloc(N, 0)
        expect("aclrtMalloc", ret, 0)
        yt = aclnn.aclCreateTensor(shape, aclnn.ACL_FLOAT, None, 0, aclnn.ACL_FORMAT_ND, shape, p)
        ws, ex, ret = aclnn.aclnnSoftmaxGetWorkspaceSize(xt, 0, yt)
        expect("aclnnSoftmaxGetWorkspaceSize on a parent pointer", ret, 161002)
        expect("aclrtFree", acl.rt.free(p), 0)
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
    elif SCENARIO == "reset_device":
        t0 = time.monotonic()
        expect("aclrtResetDevice in the child (nothing set there yet)", acl.rt.reset_device(0), 0)
        expect("aclrtSetDevice", acl.rt.set_device(0), 0)
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
        expect("reset_device returns promptly", int(time.monotonic() - t0 < 5), 1)
    elif SCENARIO == "functional":
        x = np.random.default_rng(5).uniform(-3, 3, (6, 17)).astype(np.float32)
        golden.assert_close(F.softmax(x, 1), golden.softmax(x, 1), golden.F32, what="softmax")
        golden.assert_close(F.hardsigmoid(x), golden.hardsigmoid(x), golden.F32,
                            what="hardsigmoid")
        out = {{}}
        t = threading.Thread(target=lambda: out.update(y=F.softmax(x, 0)))
        t.start()
        t.join()
        golden.assert_close(out["y"], golden.softmax(x, 0), golden.F32, what="softmax thread")
    elif SCENARIO in ("malloc", "malloc_while_task_runs"):
        expect("aclrtSetDevice", acl.rt.set_device(0), 0)
        data = (np.arange(N) % 253).astype(np.uint8)
        ps = []
        for _ in range(4):
            p, ret = acl.rt.malloc(N, 0)
            expect("aclrtMalloc in the child", ret, 0)
            ps.append(p)
        for p in ps:
            back = np.zeros(N, dtype=np.uint8)
            expect("aclrtMemcpy H2D", acl.rt.memcpy(p, N, ptr(data), N, H2D), 0)
            expect("aclrtMemcpy D2H", acl.rt.memcpy(ptr(back), N, p, N, D2H), 0)
            expect("round trip", int((back == data).all()), 1)
            expect("aclrtFree", acl.rt.free(p), 0)
        expect("aclrtResetDevice", acl.rt.reset_device(0), 0)
    elif SCENARIO == "init":
        expect("aclInit in the child (the parent's aclInit does not carry over)", acl.init(), 0)
        expect("aclFinalize", acl.finalize(), 0)


def fork_and_check():
    global expect
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        parent_expect = expect

        def expect(what, got, want):  # the child reports each check at once (a hang shows where)
            n = len(FAIL)
            parent_expect(what, got, want)
            os.write(w, ((FAIL[-1] if len(FAIL) > n else "ok: " + what) + "\\n").encode()[:4000])

        try:
            child()
        except BaseException as exc:  # an assertion of golden.assert_close, or anything else
            FAIL.append(f"child raised {{exc!r}}")
            os.write(w, FAIL[-1].encode()[:4000])
        os._exit(3 if FAIL else 0)
    os.close(w)
    deadline = time.monotonic() + CHILD_TIMEOUT
    while True:
        wpid, status = os.waitpid(pid, os.WNOHANG)
        if wpid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = None
            break
        time.sleep(0.01)
    report = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        report += chunk
    print("child report:", report.decode(errors="replace"))
    if status is None:
        FAIL.append(f"{{SCENARIO}}: the child hung (killed after {{CHILD_TIMEOUT}} s); it had "
                    f"reported: {{report.decode(errors='replace')!r}}")
    else:
        expect(f"{{SCENARIO}}: the child's exit status (3: a check failed, <0: a signal); "
               f"report: {{report.decode(errors='replace')}}",
               os.waitstatus_to_exitcode(status), 0)


for _ in range(3 if BUSY else 1):
    if BUSY:
        make_busy()
    fork_and_check()
    if FAIL:
        break
# the parent is unaffected
if BUSY:
    expect("aclrtSynchronizeStream (parent)", acl.rt.synchronize_stream(s), 0)
    expect("aclrtSynchronizeStream (parent)", acl.rt.synchronize_stream(None), 0)
    expect("aclrtDestroyEvent (parent)", acl.rt.destroy_event(first_done), 0)
    expect("aclrtFree", acl.rt.free(big), 0)
expect("aclrtSynchronizeStream (parent)", acl.rt.synchronize_stream(s), 0)
expect("aclrtSynchronizeEvent (parent)", acl.rt.synchronize_event(ev), 0)
expect("aclrtDestroyEvent (parent)", acl.rt.destroy_event(ev), 0)
expect("aclrtDestroyStream (parent)", acl.rt.destroy_stream(s), 0)
expect("aclrtFree (parent)", acl.rt.free(d), 0)
expect("aclrtResetDevice (parent)", acl.rt.reset_device(0), 0)
expect("aclFinalize (parent)", acl.finalize(), 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("scenario", ["parent_handles", "default_stream", "parent_pointers",
                                      "reset_device", "functional", "malloc",
                                      "malloc_while_task_runs", "init"])
def test_fork_child_starts_afresh(tmp_path, scenario):
    """os.fork() after streams, events, device memory and the functional layer's stream exist:
    in the child no call hangs, the parent's handles are not live (107017), its device pointers
    are not device memory of the child (107000, 161002 at phase 1), and the runtime starts
    afresh (acl.init 0, set_device, malloc, the default stream and functional work)."""
    run_scenario(tmp_path, _FORK.format(scenario=scenario, child_timeout=20), watchdog=45)
