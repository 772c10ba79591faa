"""A custom operator's kernel never hangs the runtime (issue 28 item 6, docs/custom_ops.md "The
kernel", docs/reliability.md "Host kernels").

A kernel is a Python function a stream runs as a task, while it holds the device memory table
for reading. Before, a kernel that waited for a stream (its own: synchronize, destroy, a device
synchronize, an event recorded after it; another one, behind a free that waits for the kernel)
waited for ever, as did a host thread that reset the device (or destroyed the context, or
forked) while a kernel called the runtime, and the child of a fork() made inside a kernel never
exited. Now every waiting call from a kernel returns 207000 ACL_ERROR_RT_FEATURE_NOT_SUPPORT at
once (the code CANN gives a feature a caller cannot use there; the same code aclrtMalloc /
aclrtFree from a kernel already return), the host's resets and forks do not wait for anything a
kernel needs, and the child ends when the kernel returns.

Every scenario runs in a fresh interpreter with a watchdog (faulthandler dumps the stacks and
exits) and a hard timeout that kills its process group: a hang fails the test, not the run.
Values are checked against NumPy (x + y of what the test wrote) and the documented codes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import run_session_script

NOT_SUPPORTED = 207000  # ACL_ERROR_RT_FEATURE_NOT_SUPPORT (CANN's acl_rt.h / docs/return_codes.md)

_PRELUDE = """\
import faulthandler, os, sys, threading, time
faulthandler.enable()
faulthandler.dump_traceback_later({watchdog}, exit=True)
import numpy as np
from aclnn_py import acl, aclnn, custom

ADD = {{"op": "AddCustomH", "input_desc": [
    {{"name": "x", "param_type": "required", "type": ["float"]}},
    {{"name": "y", "param_type": "required", "type": ["float"]}}],
    "output_desc": [{{"name": "z", "param_type": "required", "type": ["float"]}}]}}
BODY = [lambda x, y: None]  # what the kernel does before it adds (a test sets BODY[0])


def kernel(x, y, z):
    BODY[0](x, y)
    np.add(x, y, out=z)


custom.load([ADD], {{"AddCustomH": kernel}})
NOT_SUPPORTED = 207000  # ACL_ERROR_RT_FEATURE_NOT_SUPPORT
assert acl.init() == 0


def upload(values):
    a = np.asarray(values, np.float32)
    p, ret = acl.rt.malloc(a.nbytes, 0)
    assert ret == 0, ret
    assert acl.rt.memcpy(p, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes, 1) == 0
    return p


def download(p, n):
    out = np.zeros(n, np.float32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, p, out.nbytes, 2) == 0
    return out


def launch(px, py, pz, n, stream):
    t = [aclnn.aclCreateTensor([n], 0, None, 0, 2, [n], p) for p in (px, py, pz)]
    ws, ex, ret = aclnn.aclnnAddCustomHGetWorkspaceSize(*t)
    assert ret == 0, ret
    return aclnn.aclnnAddCustomH(0, ws, ex, stream)
"""


def run_script(tmp_path: Path, body: str, *, timeout: float = 120, watchdog: float = 90,
               env: dict | None = None) -> str:
    """Run PRELUDE + body in a fresh interpreter (own session); assert that it exits 0 having
    printed PASSED; return its stdout."""
    script = _PRELUDE.format(watchdog=watchdog) + textwrap.dedent(body)
    return run_session_script(tmp_path, script, timeout=timeout, env=env)


# ------------------------------------------------- every waiting call, from a kernel ------

_WAITS = """
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
other, _ = acl.rt.create_stream()
ctx0, _ = acl.rt.get_context()
ctx, _ = acl.rt.create_context(0)
assert acl.rt.set_context(ctx0) == 0
after, _ = acl.rt.create_event()      # recorded on `stream` after the kernel
done, _ = acl.rt.create_event()
px, py, pz, scratch = upload([1, 2, 3, 4]), upload([10, 20, 30, 40]), upload([0] * 4), \\
    upload([0] * 4)
fill = upload([0] * 4)
host = np.zeros(4, np.float32)
got = {}


def calls(*_):
    # each call that waits for a stream, or destroys what one uses: 207000 at once
    for name, call in [
            ("aclrtSynchronizeStream", lambda: acl.rt.synchronize_stream(stream)),
            ("aclrtSynchronizeStream", lambda: acl.rt.synchronize_stream(other)),
            ("aclrtSynchronizeStream", lambda: acl.rt.synchronize_stream(0)),
            ("aclrtSynchronizeStreamWithTimeout",
             lambda: acl.rt.synchronize_stream_with_timeout(stream, -1)),
            ("aclrtSynchronizeStreamWithTimeout",
             lambda: acl.rt.synchronize_stream_with_timeout(other, 100)),
            ("aclrtSynchronizeDevice", acl.rt.synchronize_device),
            ("aclrtSynchronizeDeviceWithTimeout",
             lambda: acl.rt.synchronize_device_with_timeout(1000)),
            ("aclrtSynchronizeEvent", lambda: acl.rt.synchronize_event(after)),
            ("aclrtSynchronizeEventWithTimeout",
             lambda: acl.rt.synchronize_event_with_timeout(after, 1000)),
            ("aclrtDestroyStream", lambda: acl.rt.destroy_stream(stream)),
            ("aclrtDestroyStream", lambda: acl.rt.destroy_stream(other)),
            ("aclrtResetDevice", lambda: acl.rt.reset_device(0)),
            ("aclrtDestroyContext", lambda: acl.rt.destroy_context(ctx)),
            ("aclFinalize", acl.finalize)]:
        t0 = time.monotonic()
        ret = call()
        msg = acl.get_recent_err_msg() or ""
        got.setdefault(name, []).append((ret, time.monotonic() - t0, msg))
    # calls that do not wait still work: a synchronous copy and fill, an event query,
    # an enqueue on another stream (a blocking one, under ACL_LAUNCH_BLOCKING=1, would wait:
    # 207000 too), a wait task on the kernel's own stream for an event recorded after it
    got["memcpy"] = acl.rt.memcpy(acl.util.numpy_to_ptr(host), 16, px, 16, 2)
    got["memset"] = acl.rt.memset(fill, 16, 3, 16)
    got["query"] = acl.rt.query_event_status(done)[1]
    got["memset_async"] = acl.rt.memset_async(scratch, 16, 7, 16, other)
    got["memset_async_msg"] = acl.get_recent_err_msg() or ""
    got["wait"] = acl.rt.stream_wait_event(stream, after)


BODY[0] = calls
assert launch(px, py, pz, 4, stream) == 0
assert acl.rt.record_event(after, stream) == 0
assert acl.rt.record_event(done, stream) == 0
assert acl.rt.synchronize_stream(stream) == 0
assert acl.rt.synchronize_stream(other) == 0
blocking = os.environ.get("ACL_LAUNCH_BLOCKING") == "1"
for name, results in got.items():
    if isinstance(results, list):
        for ret, took, msg in results:
            assert ret == NOT_SUPPORTED, (name, ret, msg)
            assert took < 5, (name, took)
            assert name in msg and "custom operator's kernel" in msg, (name, msg)
assert got["memcpy"] == 0 and host.tolist() == [1, 2, 3, 4], (got["memcpy"], host)
assert got["memset"] == 0 and download(fill, 4).view(np.uint8).tolist() == [3] * 16, got
assert got["query"] == 0, got
if blocking:  # an enqueue that would wait for its stream
    assert got["memset_async"] == NOT_SUPPORTED and got["wait"] == NOT_SUPPORTED, got
    assert "ACL_LAUNCH_BLOCKING=1" in got["memset_async_msg"], got["memset_async_msg"]
    assert download(scratch, 4).tolist() == [0] * 4
else:
    assert got["memset_async"] == 0 and got["wait"] == 0, got
    assert download(scratch, 4).view(np.uint8).tolist() == [7] * 16
assert download(pz, 4).tolist() == [11, 22, 33, 44]
# nothing the kernel asked for happened: the streams, the context and the device are alive
assert acl.rt.destroy_stream(other) == 0 and acl.rt.destroy_stream(stream) == 0
assert acl.rt.destroy_context(ctx) == 0
assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
print("PASSED")
"""


@pytest.mark.parametrize("blocking", ["0", "1"])
def test_every_waiting_call_from_a_kernel_answers_at_once(tmp_path, blocking):
    """Synchronize (own stream, another, the default, with a timeout, the device, an event
    recorded after the kernel), destroy (own stream, another), reset the device, destroy a
    context, finalize: each returns 207000 from a kernel, in well under the watchdog, with a
    message naming the call and why, and changes nothing; copies, queries and enqueues that do
    not wait still work. Also with ACL_LAUNCH_BLOCKING=1, where phase 2 may run the kernel on
    the launching thread and a blocking enqueue from the kernel is refused too."""
    run_script(tmp_path, _WAITS,
               env={"ACL_LAUNCH_BLOCKING": blocking}, timeout=90, watchdog=60)


# --------------------------------- kernels that call the runtime, host frees and resets ------

_STRESS = """
ROUNDS = int(os.environ.get("ROUNDS", "40"))
errors = []
codes = {}
clock = threading.Lock()


def note(key, value):
    with clock:
        codes.setdefault(key, set()).add(int(value))


def body(x, y):
    # the kernel, on stream A of its launcher: enqueue on the launcher's stream B and
    # synchronize B (refused at once: B's worker may wait for the device memory table behind a
    # free that waits for this kernel), then calls that take the runtime's lock (a reset or a
    # context destroy on another thread used to hold it while it waited for the kernel's
    # stream), and a synchronous copy of its input (not of the scratch, which B may be writing)
    b, scratch, px = CURRENT[int(y[0])]  # y holds the launcher's number
    note("memset_async", acl.rt.memset_async(scratch, 64, 1, 64, b))
    note("sync_b", acl.rt.synchronize_stream(b))
    ev, ret = acl.rt.create_event()
    note("create_event", ret)
    if ret == 0:
        note("destroy_event", acl.rt.destroy_event(ev))
    out = np.zeros(4, np.float32)
    note("memcpy", acl.rt.memcpy(acl.util.numpy_to_ptr(out), 16, px, 16, 2))
    note("copied", int(np.array_equal(out, x)))


CURRENT = {}  # launcher number -> (its stream B, its scratch buffer, its x)
BODY[0] = body


def launcher(device, k, use_context):
    # rounds of: streams A and B (in a new context when use_context), a kernel on A, then the
    # context destroyed or the device reset at once while the kernel may still run
    try:
        for r in range(ROUNDS):
            assert acl.rt.set_device(device) == 0
            ctx = None
            if use_context:
                ctx, ret = acl.rt.create_context(device)
                assert ret == 0
            a, _ = acl.rt.create_stream()
            b, _ = acl.rt.create_stream()
            x, y, z = upload([r, 1, 2, 3]), upload([k, k, k, k]), upload([0] * 4)
            scratch = upload([0] * 16)
            CURRENT[k] = (b, scratch, x)  # read by its kernel, which ends before the next round
            assert launch(x, y, z, 4, a) == 0
            if r % 3 == 0:
                assert acl.rt.synchronize_stream(a) == 0
                assert download(z, 4).tolist() == [r + k, 1 + k, 2 + k, 3 + k]
            if use_context:
                assert acl.rt.destroy_context(ctx) == 0  # drains A and B, kernel included
                for p in (x, y, z, scratch):
                    assert acl.rt.free(p) == 0
            else:
                assert acl.rt.reset_device(device) == 0  # the last reset: drains, frees
    except BaseException:  # noqa: BLE001
        import traceback
        errors.append(traceback.format_exc())


def freer(device):
    # unrelated memory allocated and freed all the time: each free waits for running kernels
    try:
        assert acl.rt.set_device(device) == 0
        for _ in range(ROUNDS * 20):
            p, ret = acl.rt.malloc(4096, 0)
            assert ret == 0
            assert acl.rt.free(p) == 0
        assert acl.rt.reset_device(device) == 0
    except BaseException:  # noqa: BLE001
        import traceback
        errors.append(traceback.format_exc())


# device 2 has one user, so each of its resets is the last one (it drains the streams and
# frees the memory); frees on devices 0 and 1 wait for the kernels of every device
threads = [threading.Thread(target=launcher, args=(0, 1, True)),
           threading.Thread(target=launcher, args=(1, 3, True)),
           threading.Thread(target=launcher, args=(2, 2, False)),
           threading.Thread(target=freer, args=(0,)),
           threading.Thread(target=freer, args=(1,))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors[0]
assert codes["sync_b"] == {NOT_SUPPORTED}, codes  # also when B was destroyed meanwhile
assert codes["memset_async"] <= {0, 107017}, codes  # B may be destroyed meanwhile
assert codes["create_event"] == {0} and codes["destroy_event"] == {0}, codes
assert codes["memcpy"] == {0} and codes["copied"] == {1}, codes
print("PASSED", {k: sorted(v) for k, v in codes.items()})
"""


def test_kernels_calling_the_runtime_with_frees_and_resets_under_load(tmp_path):
    """Three threads launch kernels that enqueue on a second stream and synchronize it, create
    and destroy events and copy, and then at once destroy their context or reset the device
    (which waits for the kernel), while two more threads allocate and free memory in a loop:
    no combination hangs (before: the synchronize, the reset and the context destroy each could
    wait for ever), the kernels' results are x + y, and the codes are the documented ones."""
    out = run_script(tmp_path, _STRESS,
                     env={"ACLNN_EMU_DEVICE_COUNT": "3", "ROUNDS": "40"}, timeout=240,
                     watchdog=200)
    assert "PASSED" in out


# ------------------------------------------------------------------------------- fork ------

_FORK_DURING_KERNEL = """
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
started = threading.Event()


def slow(*_):
    started.set()
    time.sleep(0.3)  # the interpreter's lock is free meanwhile; the kernel needs it back
    sum(range(1000))


BODY[0] = slow
px, py, pz = upload([1, 2]), upload([3, 4]), upload([0, 0])
for _ in range(3):
    started.clear()
    assert launch(px, py, pz, 2, stream) == 0
    started.wait()
    pid = os.fork()  # the kernel holds the memory table: fork() must not wait for it
    if pid == 0:
        os._exit(0 if acl.init() == 0 else 3)
    assert os.waitpid(pid, 0)[1] == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert download(pz, 2).tolist() == [4, 6]
print("PASSED")
"""


def test_fork_on_the_host_while_a_kernel_runs(tmp_path):
    """os.fork() holds the interpreter's lock while the fork handlers run; the runtime's handler
    used to wait for running tasks (the memory table's write lock), and a running kernel needs
    the interpreter's lock to finish: a hang. Now the fork goes through and the kernel
    finishes."""
    run_script(tmp_path, _FORK_DURING_KERNEL, timeout=60, watchdog=40)


_FORK_IN_KERNEL = """
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
children = []
MODE = [""]


def forker(*_):
    pid = os.fork()
    if pid:
        children.append(pid)
        return
    # the child: the kernel's thread alone, in a fresh runtime; it prints (unflushed), may use
    # the runtime, and returns (or raises) instead of calling os._exit
    print(f"child {MODE[0]} says hello")
    if MODE[0] == "runtime":
        codes = [acl.init(), acl.rt.set_device(0)]
        p, ret = acl.rt.malloc(64, 0)
        s, ret2 = acl.rt.create_stream()
        codes += [ret, ret2, acl.rt.memset_async(p, 64, 5, 64, s),
                  acl.rt.synchronize_stream(s)]
        out = np.zeros(64, np.uint8)
        codes += [acl.rt.memcpy(acl.util.numpy_to_ptr(out), 64, p, 64, 2), acl.rt.free(p)]
        print("child codes", codes, int(out.sum()))
    if MODE[0] == "raise":
        raise ValueError("the child's kernel fails")
    if MODE[0] == "exit":
        sys.exit(7)  # as in any process: the status


BODY[0] = forker
px, py, pz = upload([1, 2]), upload([3, 4]), upload([0, 0])
statuses = {}
for mode in ("return", "runtime", "raise", "exit"):
    MODE[0] = mode
    assert launch(px, py, pz, 2, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0  # the parent's kernel returned normally
    assert download(pz, 2).tolist() == [4, 6]
    pid = children[-1]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            statuses[mode] = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.02)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError(f"the child of a fork inside the kernel ({mode}) did not exit")
assert statuses == {"return": 0, "runtime": 0, "raise": 1, "exit": 7}, statuses
print("PASSED")
"""


def test_a_process_forked_inside_a_kernel_exits_when_the_kernel_returns(tmp_path):
    """The child of a fork() made inside a kernel has only the kernel's thread and none of the
    parent's streams: when the kernel returns, the child ends (status 0; 1 when the kernel
    raised, with the fault's message on stderr; sys.exit's status) with its output flushed,
    instead of waiting for ever in a stream worker's loop. Inside, the child starts afresh:
    aclrtMalloc, a stream of its own and its synchronize work (the parent's kernel state does
    not follow it)."""
    proc_out = run_script(tmp_path, _FORK_IN_KERNEL, timeout=90, watchdog=60)
    assert "child return says hello" in proc_out
    assert "child raise says hello" in proc_out and "child exit says hello" in proc_out
    assert "child codes [0, 0, 0, 0, 0, 0, 0, 0] 320" in proc_out, proc_out
