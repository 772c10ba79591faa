"""The command line as a new user meets it, ``aclnn-py env``, ``aclnn-py run`` on unmodified pyACL
programs, the runtime calls ports need, and CANN's environment variables.

Expected values come from CANN's documentation, independently of the code under test: the status
codes of CANN's aclnnStatus table (op_errno.h) and aclError tables (acl_base_rt.h,
rt_error_codes.h), the acl_rt.h version macros (1.17.0) and event flags, pyACL's signatures
(``major, minor, patch, ret = acl.get_version()``, ``event, ret =
acl.rt.create_event_with_flag(flag)``, ``stream, ret = acl.rt.create_stream_with_config(priority,
flag)``, ``ret = acl.rt.synchronize_stream_with_timeout(stream, timeout)``), and CANN's
ASCEND_RT_VISIBLE_DEVICES / ASCEND_LAUNCH_BLOCKING documentation.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Optional

import numpy as np
import pytest
from click.testing import CliRunner

from aclnn_py import AclnnParamError, acl, config, functional
from aclnn_py.cli import main

ROOT = Path(__file__).resolve().parent.parent


def invoke(*args: str, env: Optional[dict] = None):
    return CliRunner().invoke(main, list(args), env=env)


def _cli(*args: str, env: Optional[dict] = None, cwd: Optional[str] = None):
    import os

    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "aclnn_py", *args], capture_output=True,
                          text=True, timeout=120, env=full, cwd=cwd or tempfile.gettempdir())


# --------------------------------------------------------------------- bad input: exit 2 ----

EXPLAIN = ("explain", "softmax", "--shape", "4,2", "--dtype", "float32")
BAD_INPUTS = {
    "unknown op": (("explain", "no_such_op", "--shape", "2", "--dtype", "float32"),
                   "no_such_op"),
    "bad dtype": (("explain", "softmax", "--shape", "2", "--dtype", "float8"), "float8"),
    "shape text": (("explain", "softmax", "--shape", "4,a", "--dtype", "float32"), "'a'"),
    "empty shape entry": (("explain", "softmax", "--shape", "4,,2", "--dtype", "float32"),
                          "entry 1"),
    "negative dim": (("explain", "softmax", "--shape", "-4,2", "--dtype", "float32"),
                     "must not be negative"),
    "huge dim": (("explain", "softmax", "--shape", str(1 << 64), "--dtype", "float32"),
                 "int64"),
    "dim text": ((*EXPLAIN, "--dim", "x"), "'x'"),
    "dim beyond int64": ((*EXPLAIN, "--dim", str(1 << 63)), "int64"),
    "dim on an op without one": (("explain", "hardsigmoid", "--shape", "4,2", "--dtype",
                                  "float32", "--dim", "0"), "no dim"),
    "strides too few": ((*EXPLAIN, "--strides", "1"), "--strides"),
    "out strides too many": ((*EXPLAIN, "--out-strides", "2,1,1"), "--out-strides"),
    "stride beyond int64": ((*EXPLAIN, "--strides", f"1,{1 << 64}"), "int64"),
    "out dtype junk": ((*EXPLAIN, "--out-dtype", "junk"), "junk"),
    "explain unknown soc": ((*EXPLAIN, "--soc", "Ascend999"), "Ascend999"),
    "ops unknown soc": (("ops", "--soc", "Ascend999"), "Ascend910B4"),
    "unknown code": (("codes", "12345"), "12345"),
    "negative code": (("codes", "--", "-161002"), "-161002"),
    "non-int code": (("codes", "abc"), "abc"),
    "unknown sample": (("run", "no_such_sample"), "softmax_backward"),
    "missing .py": (("run", "does/not/exist.py"), "exist.py"),
    "bench unknown op": (("bench", "--op", "nope"), "nope"),
    "bench negative shape": (("bench", "--shape", "-1"), "at least 1"),
    "bench huge shape": (("bench", "--op", "softmax", "--dtype", "float32", "--shape",
                          "99999999999,99999999999", "--threads", "1"), "--shape"),
    "env unknown option": (("env", "--nope"), "--nope"),
}


@pytest.mark.parametrize("args,needle", BAD_INPUTS.values(), ids=list(BAD_INPUTS))
def test_bad_input_is_a_usage_error(args, needle):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.output, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_run_a_file_that_is_not_python_is_a_usage_error(tmp_path):
    data = tmp_path / "notes.txt"
    data.write_text("hello")
    result = invoke("run", str(data))
    assert result.exit_code == 2 and "not a Python file" in result.output, result.output


def test_explain_phase1_rejection_is_cann_s_message_and_exit_1():
    """Valid text that phase 1 refuses: CANN's message, exit 1 (not a usage error)."""
    result = invoke(*EXPLAIN, "--dim", "2")
    assert result.exit_code == 1, result.output
    assert "161002" in result.output and "Traceback" not in result.output


def test_explain_soc_option():
    """Hardsigmoid has no kernel on the Atlas inference series (CANN's product table): 561003
    with --soc Ascend310P3, a plan with --soc Ascend910B4."""
    args = ("explain", "hardsigmoid", "--shape", "4,2", "--dtype", "float32")
    bad = invoke(*args, "--soc", "Ascend310P3")
    assert bad.exit_code == 1 and "561003" in bad.output, bad.output
    good = invoke(*args, "--soc", "Ascend910B4")
    assert good.exit_code == 0 and "1 step(s)" in good.output, good.output


# -------------------------------------------------------------------------------- --json ----


def test_ops_json():
    result = invoke("ops", "--json", "--soc", "Ascend910A")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"soc", "product", "soc_class", "dtypes", "operators"}
    assert data["soc"] == "Ascend910A"
    # CANN: no BF16 outside the Atlas A2/A3 class; aclnnSoftmax takes FLOAT
    assert data["operators"]["aclnnSoftmax"]["bfloat16"] == "-"
    assert data["operators"]["aclnnSoftmax"]["float32"] == "yes"
    assert set(data["operators"]["aclnnSoftmax"]) == set(data["dtypes"])


EXPLAIN_KEYS = {"operator", "soc", "status", "name", "message", "workspace_size", "steps",
                "layout", "accumulation"}


def test_explain_json_plan():
    # two float32 [4, 2] inputs made contiguous: 2 x Align(32) = 2 x 512 bytes (CANN nnopbase)
    result = invoke("explain", "softmax_backward", "--shape", "4,2", "--dtype", "float32",
                    "--strides", "1,4", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == EXPLAIN_KEYS
    assert data["status"] == 0 and data["message"] is None
    assert data["workspace_size"] == 1024
    assert len(data["steps"]) == 3
    assert all(set(e) == {"what", "offset", "size"} for e in data["layout"])


def test_explain_json_rejection():
    result = invoke(*EXPLAIN, "--dim", "5", "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert set(data) == EXPLAIN_KEYS
    assert data["status"] == 161002 and data["name"] == "ACLNN_ERR_PARAM_INVALID"
    assert "aclnnSoftmaxGetWorkspaceSize" in data["message"]


# --------------------------------------------------------------------------------- codes ----

# Every code of CANN's tables, listed from CANN's documentation (not from the code under test).
ACLNN_STATUS = [0, 161001, 161002, 361001, 561000, 561001, 561002, 561003,
                *range(561101, 561120)]
ACL_ERROR = [*range(100000, 100046), *range(148046, 148054), *range(200000, 200008), 300000,
             *range(500000, 500006), *range(107000, 107024), *range(207000, 207022),
             *range(507000, 507019), *range(507033, 507037), 507046, 507047, 507899, 507900,
             507901]
CODE_KEYS = {"code", "name", "family", "meaning", "returned_by_emulator", "emulator_meaning",
             "triggers"}


def test_codes_lists_every_cann_code():
    result = invoke("codes")
    assert result.exit_code == 0
    listed = {int(line.split()[0]) for line in result.output.splitlines()
              if line[:1].isdigit()}
    assert listed == set(ACLNN_STATUS) | set(ACL_ERROR)


@pytest.mark.parametrize("code,name,family", [
    (561002, "ACLNN_ERR_INNER_TILING_ERROR", "aclnnStatus"),
    (561107, "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND", "aclnnStatus"),
    (100001, "ACL_ERROR_UNINITIALIZE", "aclError"),
    (148052, "ACL_ERROR_UNSUPPORTED_JPEG", "aclError"),
    (207018, "ACL_ERROR_RT_DEVICE_OOM", "aclError"),
    (507046, "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", "aclError"),
    (507901, "ACL_ERROR_RT_SOCKET_CLOSE", "aclError"),
], ids=lambda v: str(v))
def test_codes_one_json(code, name, family):
    result = invoke("codes", str(code), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == CODE_KEYS
    assert (data["code"], data["name"], data["family"]) == (code, name, family)
    assert data["meaning"]


def test_codes_json_says_which_the_emulator_returns():
    data = {d["code"]: d for d in json.loads(invoke("codes", "--json").output)}
    assert set(data) == set(ACLNN_STATUS) | set(ACL_ERROR)
    # documented in docs/return_codes.md: returned, with triggers
    for code in (161001, 161002, 561003, 107001, 207001, 507015, 507046):
        assert data[code]["returned_by_emulator"] is True and data[code]["triggers"], code
    # features the emulator does not have (tiling, models, JSON op info): never returned
    for code in (561002, 100011, 561108):
        assert data[code]["returned_by_emulator"] is False and data[code]["triggers"] == []
    text = invoke("codes", "561002").output
    assert "never returned" in text


# ----------------------------------------------------------------------------------- env ----

ENV_KEYS = {"soc", "devices", "memory_limit", "memory_used", "threads", "isa", "llc", "poison",
            "checks", "accumulation", "trace", "launch_blocking", "log_level", "versions"}


def test_env_json_keys_and_visible_devices():
    result = invoke("env", "--json", env={"ACLNN_EMU_DEVICE_COUNT": "4",
                                          "ASCEND_RT_VISIBLE_DEVICES": "1,3",
                                          "ACLNN_EMU_SOC": "Ascend310P3",
                                          "ACLNN_EMU_MEM_LIMIT": "1G"})
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == ENV_KEYS
    assert all(set(v) == {"value", "sources", "error"} for v in data.values())
    assert data["devices"]["value"] == {"count": 2, "physical": 4, "visible": [1, 3]}
    assert data["soc"]["value"]["name"] == "Ascend310P3"
    assert data["memory_limit"]["value"] == 1 << 30
    versions = data["versions"]["value"]
    assert versions["acl_api"] == "1.17.0"  # ACL_MAJOR/MINOR/PATCH_VERSION of acl_rt.h
    assert versions["python"] == sys.version.split()[0]
    assert versions["numpy"] == np.__version__


def test_env_table_and_bad_values_per_row():
    result = invoke("env", env={"ACLNN_EMU_MEM_LIMIT": "lots", "ASCEND_RT_VISIBLE_DEVICES": "0"})
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = {line.split("  ")[0]: line for line in result.output.splitlines()}
    assert "error: ACLNN_EMU_MEM_LIMIT='lots'" in lines["memory limit"]
    assert "SoC" in lines and "versions" in lines and "ISA level" in lines
    assert "1 visible of 1" in lines["devices"]


@pytest.mark.parametrize("value, stores", [("32M", 32 << 20), ("32m", 32 << 20),
                                           ("1G", 1 << 30), ("65536", 64 << 10),
                                           ("64G", 64 << 30), (" 32M", 32 << 20),
                                           ("32MiB", 32 << 20), ("32 mib ", 32 << 20),
                                           ("\t48MB", 48 << 20), ("33554432B", 32 << 20),
                                           ("64k", 64 << 10), ("", None), ("  ", None),
                                           ("abc", None), ("12X", None), ("65535", None),
                                           ("65G", None), ("1T", None), ("-1M", None),
                                           ("32M M", None), ("3 2M", None),
                                           ("\uff13\uff12M", None), ("99999999999999999999", None),
                                           ("machine", "machine")])
def test_env_llc_override(value, stores):
    """ACLNN_EMU_LLC sets the cache size of the store policy only (read when the core loads, so
    in a new process), in the grammar of the emulator's other sizes (ACLNN_EMU_MEM_LIMIT's:
    spaces, K/M/G/T, an optional "iB") from 64K to 64G; a value that is not such a size is
    ignored by the kernels and is an error on aclnn-py env's row (exit 1). The row compares the
    kernels' reading with the Python one, so each case checks the C parser too."""
    base = json.loads(_cli("env", "--json").stdout)["llc"]["value"]
    assert base["machine"] == base["stores"] > 0
    if value == "machine":  # the CPU's own size, asked for: accepted, nothing changes
        value, stores = str(base["machine"]), base["machine"]
    proc = _cli("env", "--json", env={"ACLNN_EMU_LLC": value})
    data = json.loads(proc.stdout)["llc"]
    if stores is None:
        assert data["value"] in (None, base)
        if value.strip():
            assert proc.returncode == 1 and "ACLNN_EMU_LLC" in data["error"]
            assert repr(value) in data["error"]
        else:
            assert proc.returncode == 0 and data["error"] is None
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert data["value"] == {"machine": base["machine"], "stores": stores}


# ------------------------------------------------------------------- pyACL programs, run ----

PORT = """\
import sys
import acl

print("module", acl.__name__)
major, minor, patch, ret = acl.get_version()
print("version", major, minor, patch, ret)
ret = acl.init()
ret = acl.rt.set_device(0)
stream, ret = acl.rt.create_stream_with_config(0, 0x1)
dev, ret = acl.rt.malloc(64, 0)
ret = acl.rt.memset_async(dev, 64, 9, 64, stream)
print("sync", acl.rt.synchronize_stream_with_timeout(stream, -1))
out = bytes(64)
ret = acl.rt.memcpy(acl.util.bytes_to_ptr(out), 64, dev, 64, 2)
print("data", out[0], out[63])
acl.rt.free(dev)
acl.rt.destroy_stream(stream)
acl.rt.reset_device(0)
acl.finalize()
sys.exit(int(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def port_dir():
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "port.py").write_text(PORT)
        yield Path(d)


def test_run_gives_import_acl_the_emulator(port_dir):
    proc = _cli("run", str(port_dir / "port.py"), "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["module aclnn_py.acl", "version 1 17 0 0", "sync 0",
                                        "data 9 9"]


def test_run_status_code_exit_is_1_with_the_message(port_dir):
    proc = _cli("run", str(port_dir / "port.py"), "107001")
    assert proc.returncode == 1
    assert "107001 ACL_ERROR_RT_INVALID_DEVICEID" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_prefers_an_importable_acl(tmp_path):
    """A module named acl on the program's path wins, as it would under python."""
    (tmp_path / "acl.py").write_text("NAME = 'local'\n")
    (tmp_path / "prog.py").write_text("import acl\nprint(acl.NAME)\n")
    proc = _cli("run", str(tmp_path / "prog.py"))
    assert proc.returncode == 0 and proc.stdout.strip() == "local", proc.stdout + proc.stderr


def test_failing_sample_prints_cann_message_and_exits_1():
    """Hardsigmoid has no kernel on the Atlas inference series: 561003 at phase 1."""
    proc = _cli("run", "hardsigmoid", env={"ACLNN_EMU_SOC": "Ascend310P3"})
    assert proc.returncode == 1
    assert "aclnnHardsigmoidGetWorkspaceSize failed. ERROR: 561003" in proc.stdout
    assert "ACLNN_ERR_INNER_FIND_KERNEL_ERROR" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shim_is_removed_after_the_block():
    from aclnn_py.cli import pyacl_shim

    assert "acl" not in sys.modules
    with pyacl_shim() as installed:
        assert installed and sys.modules["acl"] is acl
    assert "acl" not in sys.modules


# ---------------------------------------------------------------------- runtime additions ----

ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE = 0x1, 0x8  # acl_rt.h


@pytest.fixture
def device():
    assert acl.rt.set_device(0) == 0
    yield
    acl.get_recent_err_msg()
    acl.rt.reset_device(0)


def test_get_version_is_the_header_version():
    assert acl.get_version() == (1, 17, 0, 0)


def test_event_with_flag(device):
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    ev, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    assert ret == 0 and ev
    assert acl.rt.record_event(ev, stream) == 0
    assert acl.rt.stream_wait_event(stream, ev) == 0
    assert acl.rt.synchronize_event(ev) == 0
    assert acl.rt.query_event_status(ev) == (1, 0)
    assert acl.rt.reset_event(ev, stream) == 0
    # CANN: an event without ACL_EVENT_SYNC is not supported by reset / stream wait
    timeline, ret = acl.rt.create_event_with_flag(ACL_EVENT_TIME_LINE)
    assert ret == 0
    assert acl.rt.record_event(timeline, stream) == 0
    assert acl.rt.stream_wait_event(stream, timeline) == 207000
    assert "ACL_EVENT_SYNC" in acl.get_recent_err_msg()
    assert acl.rt.reset_event(timeline, stream) == 207000
    for bad in (0x4, 0x80, 1 << 31, -1, 1 << 32):
        assert acl.rt.create_event_with_flag(bad) == (0, 100000), bad
        assert "flag" in acl.get_recent_err_msg()
    with pytest.raises(TypeError):
        acl.rt.create_event_with_flag(1.0)
    for e in (ev, timeline):
        assert acl.rt.destroy_event(e) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_stream_with_config(device):
    for priority, flag in ((0, 0x1), (7, 0x2), (8, 0x3), (0, 0x12345)):  # CANN: clamp / plain
        stream, ret = acl.rt.create_stream_with_config(priority, flag)
        assert ret == 0 and stream
        assert acl.rt.synchronize_stream(stream) == 0
        assert acl.rt.destroy_stream(stream) == 0
    for priority, flag in ((-1, 0), (0, 1 << 32)):
        assert acl.rt.create_stream_with_config(priority, flag) == (0, 100000)
        assert "uint32" in acl.get_recent_err_msg()
    assert acl.rt.reset_device(0) == 0
    assert acl.rt.create_stream_with_config(0, 0) == (0, 107002)  # no current context
    assert acl.rt.set_device(0) == 0


def test_synchronize_stream_with_timeout(device):
    stream, _ = acl.rt.create_stream()
    assert acl.rt.synchronize_stream_with_timeout(stream, -1) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 1000) == 0
    assert acl.rt.synchronize_stream_with_timeout(None, 1000) == 0  # the default stream
    for bad in (0, -2, 1 << 31):
        assert acl.rt.synchronize_stream_with_timeout(stream, bad) == 100000, bad
        assert "timeout" in acl.get_recent_err_msg()
    n = 64 << 20
    dev, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    for value in (1, 2, 3, 4, 5, 6, 7, 8):
        assert acl.rt.memset_async(dev, n, value, n, stream) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 1) == 507046  # 512 MiB in 1 ms
    assert "1 ms" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream_with_timeout(stream, -1) == 0
    out = bytes(16)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), 16, dev + n - 16, 16, 2) == 0
    assert out == bytes([8] * 16)  # the tasks ran to the end
    assert acl.rt.free(dev) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 5) == 107017


# ----------------------------------------------------------------- CANN's variable names ----


def test_ascend_launch_blocking(monkeypatch, device):
    """ASCEND_LAUNCH_BLOCKING=1: a task runs at launch, so the data is there before any
    synchronize."""
    monkeypatch.delenv("ACL_LAUNCH_BLOCKING", raising=False)
    monkeypatch.setenv("ASCEND_LAUNCH_BLOCKING", "1")
    assert config.launch_blocking() is True
    stream, _ = acl.rt.create_stream()
    dev, _ = acl.rt.malloc(1 << 20, 0)
    assert acl.rt.memset_async(dev, 1 << 20, 5, 1 << 20, stream) == 0
    out = bytes(8)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), 8, dev + (1 << 20) - 8, 8, 2) == 0
    assert out == bytes([5] * 8)
    monkeypatch.setenv("ACL_LAUNCH_BLOCKING", "0")  # disagrees: an error naming both
    assert acl.rt.memset_async(dev, 8, 1, 8, stream) == 100000
    msg = acl.get_recent_err_msg()
    assert "ACL_LAUNCH_BLOCKING" in msg and "ASCEND_LAUNCH_BLOCKING" in msg
    monkeypatch.setenv("ACL_LAUNCH_BLOCKING", "1")  # agrees
    assert acl.rt.memset_async(dev, 8, 1, 8, stream) == 0
    monkeypatch.setenv("ASCEND_LAUNCH_BLOCKING", "maybe")
    with pytest.raises(config.ConfigError, match="ASCEND_LAUNCH_BLOCKING"):
        config.launch_blocking()
    monkeypatch.delenv("ASCEND_LAUNCH_BLOCKING")
    assert acl.rt.free(dev) == 0 and acl.rt.destroy_stream(stream) == 0


@pytest.mark.parametrize("value,count", [("1,3", 2), ("2", 1), ("0,1,2,3", 4), ("", 4)])
def test_visible_devices_renumber(monkeypatch, value, count):
    """CANN: the listed devices are seen as 0..n-1; the count is the list's length."""
    monkeypatch.setenv("ACLNN_EMU_DEVICE_COUNT", "4")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", value)
    assert acl.rt.get_device_count() == (count, 0)
    assert acl.rt.set_device(count - 1) == 0
    assert acl.rt.reset_device(count - 1) == 0
    assert acl.rt.set_device(count) == 107001
    assert "out of range" in acl.get_recent_err_msg()


@pytest.mark.parametrize("value,needle", [
    ("4", "device 4 does not exist"), ("1,1", "repeated"), ("3,1", "out of order"),
    ("1, 2", "entry 1"), ("a", "entry 0"), ("-1", "entry 0"), ("1,", "entry 1"),
])
def test_visible_devices_refused(monkeypatch, value, needle):
    monkeypatch.setenv("ACLNN_EMU_DEVICE_COUNT", "4")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", value)
    assert acl.rt.get_device_count() == (0, 100000)
    msg = acl.get_recent_err_msg()
    assert "ASCEND_RT_VISIBLE_DEVICES" in msg and needle in msg, msg
    assert acl.rt.set_device(0) == 100000
    acl.get_recent_err_msg()


# ------------------------------------------------------------------ docs/dtypes.md claims ----


@pytest.mark.parametrize("name,args", [
    ("softmax", {"dim": -1}), ("log_softmax", {"dim": -1}), ("hardsigmoid", {}),
])
def test_functional_int32_out_only_for_int32_input(name, args):
    """CANN's aclnnHardsigmoid: out has self's dtype; CanCast refuses float -> integer."""
    x = np.ones((2, 3), np.float32)
    with pytest.raises(AclnnParamError) as info:
        getattr(functional, name)(x, out_dtype=np.int32, **args)
    assert info.value.code == 161002
    if name == "hardsigmoid":
        r = functional.hardsigmoid(np.array([-9, 0, 9], np.int32), out_dtype=np.int32)
        assert r.dtype == np.int32 and r.tolist() == [0, 0, 1]  # clip(x/6 + 1/2) truncated


# ------------------------------------------------------------------------- build message ----


def test_missing_compiler_names_what_to_install(monkeypatch):
    from aclnn_py import _build

    monkeypatch.setenv("CC", "no-such-compiler-here")
    with pytest.raises(_build.BuildEnvironmentError) as info:
        _build.check_build_environment()
    text = str(info.value)
    for needed in ("no-such-compiler-here", "build-essential", "xcode-select", "CC"):
        assert needed in text, text


def test_build_stamp_names_the_compiler_and_linker(monkeypatch, tmp_path):
    """setuptools rebuilds the core only when a ``depends`` file is newer than it: a switch of
    $CC or $LDSHARED (tools/build_wheel.sh links with zig, or cross-compiles) rewrites the stamp,
    so the objects and library of the other toolchain in build/ are not reused."""
    from aclnn_py import _build

    monkeypatch.setattr(_build, "ROOT", tmp_path)  # the stamp goes to ROOT/build/
    texts = []
    for cc, ld in [("cc-a", "cc-a -shared"), ("cc-b", "cc-a -shared"), ("cc-b", "ld-b -shared"),
                   ("cc-b", "ld-b -shared")]:
        monkeypatch.setenv("CC", cc)
        monkeypatch.setenv("LDSHARED", ld)
        stamp = Path(_build.build_stamp())
        assert stamp.parent == tmp_path / "build"
        texts.append(stamp.read_text(encoding="utf-8"))
    assert len(set(texts[:3])) == 3 and texts[3] == texts[2]
    assert texts[2].startswith("cc-b | ld-b -shared | "), texts[2]


def test_env_help_and_docs():
    assert invoke("env", "--help").exit_code == 0
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for key in ENV_KEYS | {"ASCEND_LAUNCH_BLOCKING", "ASCEND_RT_VISIBLE_DEVICES"}:
        assert f"`{key}`" in doc, key
    text = textwrap.dedent((ROOT / "docs" / "pyacl.md").read_text(encoding="utf-8"))
    for name in ("create_event_with_flag", "create_stream_with_config",
                 "synchronize_stream_with_timeout", "get_version", "acl.mdl", "acl.media"):
        assert name in text, name


def test_env_memory_used_when_initialised(device):
    """CANN's aclrtMalloc charges round_up(size, 32) + 32 bytes: 100 -> 160."""
    before = json.loads(invoke("env", "--json").output)["memory_used"]["value"]
    assert before is not None  # the runtime is initialised in this process
    dev, ret = acl.rt.malloc(100, 0)
    assert ret == 0
    after = json.loads(invoke("env", "--json").output)["memory_used"]["value"]
    assert after[0] - before[0] == 160
    assert acl.rt.free(dev) == 0
