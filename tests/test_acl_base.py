"""pyACL's tensor descriptors, data buffers and the runtime calls added with them
(docs/pyacl.md): ``acl.create_tensor_desc``, ``acl.create_data_buffer``,
``acl.rt.synchronize_event_with_timeout``, ... Expected values come from NumPy (sizes, counts)
and CANN's documented codes (acl_base.h, rt_error_codes.h); the toolkit's C functions call the
same implementation (tests/test_toolkit_acl.py).
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from aclnn_py import acl

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_INVALID_HANDLE = 107017
ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047
ACL_UNKNOWN_RANK = 0xFFFFFFFFFFFFFFFE

TYPES = {acl.ACL_FLOAT: np.float32, acl.ACL_FLOAT16: np.float16, acl.ACL_INT8: np.int8,
         acl.ACL_INT32: np.int32, acl.ACL_UINT8: np.uint8, acl.ACL_INT16: np.int16,
         acl.ACL_UINT16: np.uint16, acl.ACL_UINT32: np.uint32, acl.ACL_INT64: np.int64,
         acl.ACL_UINT64: np.uint64, acl.ACL_DOUBLE: np.float64, acl.ACL_BOOL: np.bool_,
         acl.ACL_COMPLEX64: np.complex64, acl.ACL_COMPLEX128: np.complex128}


def test_data_type_size():
    for t, np_type in TYPES.items():
        assert acl.data_type_size(t) == np.dtype(np_type).itemsize, t
    assert acl.data_type_size(acl.ACL_BF16) == 2
    # no whole-byte element size: a string, the sub-byte types, no aclDataType at all
    for t in (acl.ACL_STRING, acl.ACL_INT4, acl.ACL_UINT1, acl.ACL_FLOAT4_E2M1, 99, -1):
        assert acl.data_type_size(t) == 0, t


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (7,), (3, 0), (), (1, 1, 1, 1, 1, 1, 1, 9)])
@pytest.mark.parametrize("acl_type", [acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_INT64,
                                      acl.ACL_COMPLEX128, acl.ACL_BOOL])
def test_descriptor_matches_numpy(shape, acl_type):
    golden = np.zeros(shape, dtype=TYPES[acl_type])
    desc = acl.create_tensor_desc(acl_type, list(shape), acl.ACL_FORMAT_NCHW)
    assert desc
    assert acl.get_tensor_desc_type(desc) == acl_type
    assert acl.get_tensor_desc_format(desc) == acl.ACL_FORMAT_NCHW
    assert acl.get_tensor_desc_size(desc) == golden.nbytes
    assert acl.get_tensor_desc_element_count(desc) == golden.size
    assert acl.get_tensor_desc_num_dims(desc) == golden.ndim
    for i, d in enumerate(golden.shape):
        assert acl.get_tensor_desc_dim_v2(desc, i) == (d, 0)
        assert acl.get_tensor_desc_dim(desc, i) == d
        assert acl.get_tensor_desc_dim_range(desc, i, 2) == ([d, d], 0)
    assert acl.get_tensor_desc_dim_v2(desc, golden.ndim) == (0, ACL_ERROR_INVALID_PARAM)
    assert f"index {golden.ndim}" in acl.get_recent_err_msg()
    assert acl.get_tensor_desc_dim(desc, golden.ndim) == -1
    acl.destroy_tensor_desc(desc)


def test_sub_byte_and_unknown_shapes():
    desc = acl.create_tensor_desc(acl.ACL_INT4, [3, 5], acl.ACL_FORMAT_ND)
    assert acl.get_tensor_desc_size(desc) == 8  # 15 four-bit values in whole bytes
    dyn = acl.create_tensor_desc(acl.ACL_FLOAT, [-1, 4], acl.ACL_FORMAT_ND)
    assert acl.get_tensor_desc_element_count(dyn) == 0 and acl.get_tensor_desc_size(dyn) == 0
    unknown = acl.create_tensor_desc(acl.ACL_FLOAT, [-2], acl.ACL_FORMAT_ND)
    assert acl.get_tensor_desc_num_dims(unknown) == ACL_UNKNOWN_RANK
    assert acl.create_tensor_desc(acl.ACL_FLOAT, [2, -3], acl.ACL_FORMAT_ND) == 0
    assert "dims[1] is -3" in acl.get_recent_err_msg()
    assert acl.create_tensor_desc(acl.ACL_FLOAT, None, acl.ACL_FORMAT_ND) == 0
    with pytest.raises(TypeError):
        acl.create_tensor_desc(acl.ACL_FLOAT, [2.5], acl.ACL_FORMAT_ND)
    for d in (desc, dyn, unknown):
        acl.destroy_tensor_desc(d)


def test_setters():
    desc = acl.create_tensor_desc(acl.ACL_FLOAT, [2, 3], acl.ACL_FORMAT_ND)
    assert acl.set_tensor_shape_range(desc, [[1, 4], [3, -1]]) == 0
    assert acl.get_tensor_desc_dim_range(desc, 1, 2) == ([3, -1], 0)
    assert acl.get_tensor_desc_dim_range(desc, 1, 1) == ([], ACL_ERROR_INVALID_PARAM)
    assert acl.set_tensor_shape_range(desc, [[1, 4]]) == ACL_ERROR_INVALID_PARAM
    assert "dimsCount 1" in acl.get_recent_err_msg()
    assert acl.set_tensor_value_range(desc, [[0, 10]]) == 0
    assert acl.get_tensor_desc_name(desc) == ""
    acl.set_tensor_desc_name(desc, "x")
    assert acl.get_tensor_desc_name(desc) == "x"
    assert acl.set_tensor_format(desc, acl.ACL_FORMAT_NHWC) == 0
    assert acl.get_tensor_desc_format(desc) == acl.ACL_FORMAT_NHWC
    assert acl.set_tensor_shape(desc, [4, 5, 6]) == 0
    assert acl.get_tensor_desc_element_count(desc) == 120
    assert acl.get_tensor_desc_dim_range(desc, 2, 2) == ([6, 6], 0)  # the range went too
    for fn, arg in ((acl.set_tensor_storage_format, acl.ACL_FORMAT_NC1HWC0),
                    (acl.set_tensor_origin_format, acl.ACL_FORMAT_NCHW),
                    (acl.set_tensor_storage_shape, [4, 1, 5, 6, 16]),
                    (acl.set_tensor_origin_shape, [4, 5, 6]),
                    (acl.set_tensor_dynamic_input, "xs"),
                    (acl.set_tensor_place_ment, 1)):
        assert fn(desc, arg) == 0, fn.__name__
    assert acl.set_tensor_place_ment(desc, 3) == ACL_ERROR_INVALID_PARAM
    assert acl.get_tensor_desc_address(desc) == 0
    assert acl.set_tensor_const(desc, 0x1000, 16) == 0
    assert acl.get_tensor_desc_address(desc) == 0x1000
    assert acl.set_tensor_const(desc, 0, 16) == ACL_ERROR_INVALID_PARAM
    acl.destroy_tensor_desc(desc)


def test_destroyed_and_unknown_descriptors():
    desc = acl.create_tensor_desc(acl.ACL_FLOAT, [2], acl.ACL_FORMAT_ND)
    acl.destroy_tensor_desc(desc)
    acl.get_recent_err_msg()
    assert acl.destroy_tensor_desc(desc) is None  # a second destroy: a message, no crash
    assert "already destroyed" in acl.get_recent_err_msg()
    assert acl.get_tensor_desc_type(desc) == -1  # ACL_DT_UNDEFINED
    assert acl.get_tensor_desc_format(desc) == -1  # ACL_FORMAT_UNDEFINED
    assert acl.get_tensor_desc_size(desc) == 0
    assert acl.set_tensor_format(desc, 0) == ACL_ERROR_INVALID_PARAM
    for bad in (0, 12345):
        assert acl.get_tensor_desc_num_dims(bad) == 0
        assert acl.get_tensor_desc_dim_v2(bad, 0) == (0, ACL_ERROR_INVALID_PARAM)
    assert acl.destroy_tensor_desc(0) is None  # null: ignored, as in CANN
    with pytest.raises(TypeError):
        acl.get_tensor_desc_size("desc")


def test_data_buffers():
    data = np.arange(10, dtype=np.float32)
    addr = acl.util.numpy_to_ptr(data)
    buf = acl.create_data_buffer(addr, data.nbytes)
    assert buf and buf != addr
    assert acl.get_data_buffer_addr(buf) == addr
    assert acl.get_data_buffer_size_v2(buf) == data.nbytes == acl.get_data_buffer_size(buf)
    assert acl.update_data_buffer(buf, addr + 8, 12) == 0
    assert (acl.get_data_buffer_addr(buf), acl.get_data_buffer_size_v2(buf)) == (addr + 8, 12)
    assert acl.update_data_buffer(buf, 0, 4) == ACL_ERROR_INVALID_PARAM
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.destroy_data_buffer(buf) == ACL_ERROR_INVALID_PARAM
    assert "already destroyed" in acl.get_recent_err_msg()
    assert acl.get_data_buffer_addr(buf) == 0 and acl.get_data_buffer_size_v2(buf) == 0
    empty = acl.create_data_buffer(0, 0)  # CANN allows an empty buffer
    assert empty and acl.get_data_buffer_size_v2(empty) == 0
    assert acl.destroy_data_buffer(empty) == 0
    assert acl.create_data_buffer(0, 8) == 0
    assert acl.destroy_data_buffer(0) == ACL_ERROR_INVALID_PARAM
    big = acl.create_data_buffer(addr, 1 << 33)  # the deprecated getter's uint32_t
    assert acl.get_data_buffer_size(big) == 0 and acl.get_data_buffer_size_v2(big) == 1 << 33
    assert acl.destroy_data_buffer(big) == 0


def test_handles_from_threads():
    """Concurrent create / destroy from several threads: every handle distinct, no error."""
    seen: list[int] = []
    lock = threading.Lock()

    def work():
        mine = [acl.create_tensor_desc(acl.ACL_FLOAT, [i], acl.ACL_FORMAT_ND)
                for i in range(200)]
        assert all(acl.get_tensor_desc_dim(d, 0) == i for i, d in enumerate(mine))
        for d in mine:
            acl.destroy_tensor_desc(d)
        assert acl.get_recent_err_msg() is None
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 800


# ---------------------------------------------------------------------------- the runtime --


def test_timeouts_on_a_stream_blocked_by_a_waiting_event(device, sleep_on):
    a, _ = acl.rt.create_stream()
    b, _ = acl.rt.create_stream()
    ev, ret = acl.rt.create_event_ex_with_flag(1)  # ACL_EVENT_SYNC
    assert ret == 0
    sleep_on(b, 400_000)  # b is busy for 0.4 s
    assert acl.rt.record_event(ev, b) == 0
    assert acl.rt.stream_wait_event(a, ev) == 0  # a waits for it
    assert acl.rt.stream_query(a) == (1, 0)  # ACL_STREAM_STATUS_NOT_READY
    assert acl.rt.query_event(ev) == (1, 0)  # ACL_EVENT_STATUS_NOT_READY
    assert acl.rt.synchronize_stream_with_timeout(a, 20) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert acl.rt.synchronize_event_with_timeout(ev, 20) == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    assert "within 20 ms" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_device_with_timeout(20) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    for bad in (0, -2, 1 << 31):
        assert acl.rt.synchronize_event_with_timeout(ev, bad) == ACL_ERROR_INVALID_PARAM
        assert acl.rt.synchronize_device_with_timeout(bad) == ACL_ERROR_INVALID_PARAM
    assert acl.rt.synchronize_event_with_timeout(ev, 30_000) == 0
    assert acl.rt.synchronize_device_with_timeout(30_000) == 0
    assert acl.rt.stream_query(a) == (0, 0) and acl.rt.query_event(ev) == (0, 0)
    assert acl.rt.synchronize_event_with_timeout(ev, -1) == 0
    assert acl.rt.destroy_event(ev) == 0
    assert acl.rt.synchronize_event_with_timeout(ev, 5) == ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.query_event(ev)[1] == ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.destroy_stream(a) == 0 and acl.rt.destroy_stream(b) == 0
    assert acl.rt.stream_query(a)[1] == ACL_ERROR_RT_INVALID_HANDLE


def test_device_timeout_without_a_device():
    assert acl.rt.synchronize_device_with_timeout(10) == ACL_ERROR_RT_CONTEXT_NULL


def test_peers_and_system_parameters(device):
    count, _ = acl.rt.get_device_count()
    assert acl.rt.query_device_status(0) == (0, 0)  # ACL_RT_DEVICE_STATUS_NORMAL
    assert acl.rt.query_device_status(count) == (0, ACL_ERROR_RT_INVALID_DEVICEID)
    assert acl.rt.device_can_access_peer(0, 0) == (0, ACL_ERROR_INVALID_PARAM)
    assert acl.rt.device_can_access_peer(0, count) == (0, ACL_ERROR_RT_INVALID_DEVICEID)
    assert acl.rt.device_enable_peer_access(0, 0) == ACL_ERROR_INVALID_PARAM  # itself
    assert acl.rt.device_enable_peer_access(count, 0) == ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.device_disable_peer_access(count) == ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.get_sys_param_opt(2) == (0, ACL_ERROR_RT_SYSPARAMOPT_NOT_SET)
    assert acl.rt.set_sys_param_opt(2, 1) == 0
    assert acl.rt.get_sys_param_opt(2) == (1, 0)
    assert acl.rt.set_sys_param_opt(3, 1) == ACL_ERROR_INVALID_PARAM
    assert acl.rt.ctx_get_sys_param_opt(0) == (0, ACL_ERROR_RT_SYSPARAMOPT_NOT_SET)
    assert acl.rt.ctx_set_sys_param_opt(0, 7) == 0
    assert acl.rt.ctx_get_sys_param_opt(0) == (7, 0)


def test_last_error():
    acl.rt.get_last_error(0)
    assert acl.rt.peek_at_last_error(0) == 0
    assert acl.rt.get_device()[1] == ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.peek_at_last_error(0) == ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.get_last_error(0) == ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.get_last_error(0) == 0
    assert acl.rt.get_last_error(1) == ACL_ERROR_INVALID_PARAM  # only ACL_RT_THREAD_LEVEL


DESTROY_DURING_WAIT = r"""
import threading, time
from aclnn_py import acl
from aclnn_py.runtime.core import ffi, lib

def sleep_on(stream, microseconds):  # the C core's test task: keeps the stream busy
    tasks = ffi.new("emu_task[1]")
    tasks[0].type = lib.EMU_TASK_SLEEP
    tasks[0].n = microseconds
    assert lib.emu_stream_submit(stream, tasks, 1, 0, ffi.NULL, 0) == 0

assert acl.rt.set_device(0) == 0
b, _ = acl.rt.create_stream()
ev, _ = acl.rt.create_event()
sleep_on(b, 400_000)
assert acl.rt.record_event(ev, b) == 0
threading.Timer(0.05, acl.rt.destroy_event, (ev,)).start()
t0 = time.monotonic()
print("event", acl.rt.synchronize_event_with_timeout(ev, 60_000), time.monotonic() - t0 < 30)
sleep_on(b, 200_000)
threading.Timer(0.05, acl.rt.destroy_stream, (b,)).start()
t0 = time.monotonic()
print("stream", acl.rt.synchronize_stream_with_timeout(b, 60_000), time.monotonic() - t0 < 30)
s2, _ = acl.rt.create_stream()
sleep_on(s2, 200_000)
threading.Timer(0.05, acl.rt.destroy_stream, (s2,)).start()
print("device", acl.rt.synchronize_device_with_timeout(60_000))
"""


def test_a_handle_destroyed_during_a_timed_wait(tmp_path):
    """Another thread destroys the event or stream being waited for: the wait ends (107017 for
    the event and the stream, which are gone; the device's synchronize skips the stream), and
    nothing hangs (a subprocess with a timeout)."""
    proc = subprocess.run([sys.executable, "-c", DESTROY_DURING_WAIT], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == [f"event {ACL_ERROR_RT_INVALID_HANDLE} True",
                                           f"stream {ACL_ERROR_RT_INVALID_HANDLE} True",
                                           "device 0"]
