"""The toolkit's C paths (docs/c_api.md, "Fast paths"): aclrtSynchronizeStream, phase 2 of an
executor with a launch record and a repeated phase 1 of a built-in operator run in C, without the
interpreter; every refusal keeps the Python API's code and message (docs/two_phase_api.md,
docs/return_codes.md), and a diagnostic that wraps the API sees every call."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from test_toolkit import HERE, bare_env, compile_program, run_program

from aclnn_py.toolkit import ensure_toolkit

ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER = 561000
ACLNN_ERR_RUNTIME_ERROR = 361001
ACL_ERROR_RT_CONTEXT_NULL = 107002


def golden() -> np.ndarray:
    """softmax backward over the one axis: (g - sum(g * y)) * y, in float64."""
    g = 0.5 * np.arange(8, dtype=np.float64) - 2.0
    y = np.arange(1, 9, dtype=np.float64) / 36.0
    return (g - (g * y).sum()) * y


needs_shared = pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                                  reason="this Python has no shared libpython")


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory) -> Path:
    return ensure_toolkit(root=tmp_path_factory.mktemp("xdg") / "aclnn-py")


@pytest.fixture(scope="module")
def program(toolkit, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fast")
    return compile_program(toolkit, HERE / "fast_paths.cpp", tmp / "fast_paths", True,
                           "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pthread"), tmp


def run(program, toolkit, **env) -> tuple[dict, dict, str]:
    exe, tmp = program
    out = run_program(exe, {**bare_env(toolkit, tmp), **env}, tmp)
    code, text = {}, {}
    for line in out.splitlines():
        if line.startswith("[") or " " not in line:
            continue
        name, rest = line.split(" ", 1)
        head, _, tail = rest.partition(" ")
        if head.lstrip("-").isdigit():
            code[name], text[name] = int(head), tail
        else:
            text[name] = rest
    return code, text, out


@needs_shared
def test_codes_and_messages_of_the_c_paths(program, toolkit):
    code, text, _ = run(program, toolkit)
    want = golden()
    for name in ("out", "out2", "out_race"):
        got = np.array([float(v) for v in text[name].split()])
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, err_msg=name)
    for name in ("phase1", "repeatable", "relaunch", "sync", "rebind", "relaunch_rebound",
                 "sync_rebound", "ws_ok", "sync_ws", "once_phase1", "once_run", "once_phase1b",
                 "once_run_b", "sync_once", "create_context", "relaunch_ctx", "sync_ctx",
                 "destroy_context", "set_device_again", "relaunch_back", "sync_back",
                 "rebind_input", "relaunch_input", "sync_input", "free_input", "rebind_back",
                 "destroy_racing", "sync_race", "finalize"):
        assert code[name] == 0, (name, text[name])
    # the workspace: docs/two_phase_api.md's checks, in their order
    assert code["ws_null"] == ACLNN_ERR_PARAM_NULLPTR
    assert "workspace is null but workspaceSize is 64" in text["ws_null"]
    assert code["ws_misaligned"] == ACLNN_ERR_PARAM_INVALID
    assert "is not 8-byte aligned" in text["ws_misaligned"]
    assert code["ws_past_end"] == ACLNN_ERR_PARAM_INVALID
    assert "runs past the end of its device allocation" in text["ws_past_end"]
    assert code["wrong_operator"] == ACLNN_ERR_PARAM_INVALID
    assert "built by aclnnSoftmaxBackwardGetWorkspaceSize" in text["wrong_operator"]
    # a single-use executor C launched is consumed, for every later call
    assert code["once_again"] == ACLNN_ERR_PARAM_NULLPTR
    assert "already consumed by aclnnSoftmaxBackward" in text["once_again"]
    for name in ("once_destroy", "once_repeatable_late"):
        assert code[name] == ACLNN_ERR_INNER, name
        assert "consumed by aclnnSoftmaxBackward" in text[name], name
    # no current context: stream 0 is nobody's default stream any more
    assert code["relaunch_no_ctx"] == ACLNN_ERR_RUNTIME_ERROR
    assert "runtime code 107002" in text["relaunch_no_ctx"]
    assert code["sync_no_ctx"] == ACL_ERROR_RT_CONTEXT_NULL
    assert "no current context" in text["sync_no_ctx"]
    # an input freed after it was bound
    assert code["relaunch_freed"] == ACLNN_ERR_PARAM_INVALID
    assert "gradOutput" in text["relaunch_freed"]
    assert "not inside a live device allocation" in text["relaunch_freed"]
    # destroyed by another thread during a relaunch loop: launches until then, then 161001
    assert code["race_ok"] == 1
    assert code["race_last"] == ACLNN_ERR_PARAM_NULLPTR
    assert "destroyed by aclDestroyAclOpExecutor" in text["race_last"]


@needs_shared
def test_a_diagnostic_sees_every_call(program, toolkit):
    """With the API log on (a diagnostic wrapper), C leaves the calls to Python: each phase 2
    and each synchronize of the program is logged."""
    code, _, out = run(program, toolkit, ASCEND_GLOBAL_LOG_LEVEL="0",
                       ASCEND_SLOG_PRINT_TO_STDOUT="1")
    assert code["finalize"] == 0 and code["race_last"] == ACLNN_ERR_PARAM_NULLPTR
    lines = out.splitlines()
    phase2 = [ln for ln in lines if "aclnn_py.api: aclnnSoftmaxBackward(" in ln]
    sync = [ln for ln in lines if "aclnn_py.api: aclrtSynchronizeStream(" in ln]
    assert len(phase2) >= 17 and len(sync) >= 11, (len(phase2), len(sync))


# ------------------------------------------------------------------- phase 1 in C ----------

def _goldens() -> dict:
    """float64 goldens of tests/toolkit/fast_phase1.cpp's operators over its inputs."""
    g = 0.5 * np.arange(8, dtype=np.float64) - 2.0
    y = np.arange(1, 9, dtype=np.float64) / 36.0
    x = np.arange(8, dtype=np.float64) - 3.5
    e = np.exp(x - x.max())
    softmax = e / e.sum()
    hs = np.clip(x / 6.0 + 0.5, 0.0, 1.0)
    return {
        "softmax_backward": (g - (g * y).sum()) * y,
        "softmax": softmax,
        "log_softmax": np.log(softmax),
        "log_softmax_backward": g - np.exp(y) * g.sum(),
        "hardsigmoid": hs,
        "hardsigmoid_backward": np.where((x > -3.0) & (x < 3.0), g / 6.0, 0.0),
        "inplace": np.clip(hs / 6.0 + 0.5, 0.0, 1.0),  # twice in place
    }


@pytest.fixture(scope="module")
def phase1_program(toolkit, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fast_phase1")
    return compile_program(toolkit, HERE / "fast_phase1.cpp", tmp / "fast_phase1", True,
                           "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pthread"), tmp


def _normalised(out: str) -> list[str]:
    """The program's lines without what differs between runs: addresses, the PID, which path
    made an executor, and how far the race loops got."""
    lines = []
    for line in out.splitlines():
        if line.startswith(("made_in_c ", "race_ok ", "exrace ")):
            continue
        line = re.sub(r"0x[0-9a-f]+", "ADDR", line)
        lines.append(re.sub(r"PID: \d+", "PID", line))
    return lines


@needs_shared
def test_phase1_in_c(phase1_program, toolkit):
    """The second phase 1 of each built-in operator is C's (a C-made handle), its result is the
    float64 golden's, and every executor C made answers every later call as a Python-made one:
    relaunched, destroyed, reused, rejected by another operator, launched through Python."""
    code, text, out = run(phase1_program, toolkit)
    made = {name: int(v) for name, v in
            (line.split()[1:] for line in out.splitlines() if line.startswith("made_in_c "))}
    for name, want in _goldens().items():
        got = np.array([float(v) for v in text[name].split()[1:]])
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-7, err_msg=name)
        assert made[name + "_1" if name != "inplace" else "inplace_1"] == 0, name
        assert made[name + "_2" if name != "inplace" else "inplace_2"] == 1, name
    for name in ("rep_out", "blocking_out", "final_out"):
        got = np.array([float(v) for v in text[name].split()[1:]])
        np.testing.assert_allclose(got, _goldens()["softmax_backward"], rtol=2e-6, atol=2e-7,
                                   err_msg=name)
    for name in ("rep", "destroy", "once", "wrong", "blocking", "back_b", "fork_pending",
                 "final"):
        assert made[name] == 1, name
    # what makes C miss: a dim, an environment value or an address C had no entry for
    for name in ("dim", "env", "back"):
        assert made[name] == 0, name
    for name in ("rep_repeatable", "rep_relaunch", "rep_destroy", "destroy_unused", "once_run",
                 "blocking_run", "env_run", "back_run_b", "freed_entry_sync",
                 "destroyed_sync", "race_sync", "exrace_sync", "fork_run", "child_destroy",
                 "child_exit", "parent_destroy", "final_sync", "finalize"):
        assert code[name] == 0, (name, text[name])
    assert code["rep_after_destroy"] == ACLNN_ERR_PARAM_NULLPTR
    assert "already destroyed by aclDestroyAclOpExecutor" in text["rep_after_destroy"]
    assert code["destroy_again"] == ACLNN_ERR_INNER
    assert code["once_again"] == ACLNN_ERR_PARAM_NULLPTR
    assert "already consumed by aclnnSoftmaxBackward" in text["once_again"]
    for name in ("once_repeatable_late", "once_destroy"):
        assert code[name] == ACLNN_ERR_INNER and "consumed by aclnnSoftmaxBackward" in text[name]
    assert code["wrong_operator"] == ACLNN_ERR_PARAM_INVALID
    assert "built by aclnnSoftmaxBackwardGetWorkspaceSize" in text["wrong_operator"]
    assert "consumed by aclnnSoftmax (which rejected" in text["wrong_again"]
    assert code["blocking_again"] == ACLNN_ERR_PARAM_NULLPTR
    assert code["child_reuse"] == ACLNN_ERR_PARAM_NULLPTR  # consumed before the fork
    assert "already consumed by aclnnSoftmaxBackward" in text["child_reuse"]
    # Python's answers where C has none
    assert code["null_ws"] == ACLNN_ERR_PARAM_NULLPTR and "workspaceSize is null" in text["null_ws"]
    assert code["null_ex"] == ACLNN_ERR_PARAM_NULLPTR and "executor is null" in text["null_ex"]
    assert code["bad_dim"] == ACLNN_ERR_PARAM_INVALID and "Dim 1 is out of range" in text["bad_dim"]
    assert code["moved_phase1"] == ACLNN_ERR_PARAM_INVALID
    assert "not aligned to its 4-byte elements" in text["moved_phase1"]
    assert code["freed_phase1"] == ACLNN_ERR_PARAM_INVALID
    assert "freed by aclrtFree" in text["freed_phase1"]
    for name in ("destroyed_phase1", "race_last", "race_after"):
        assert code[name] == ACLNN_ERR_PARAM_INVALID, name
        assert "Tensor gradOutput was already destroyed by aclDestroyTensor" in text[name], name
    # the races: launches until the tensor went; every executor launched or destroyed first
    assert code["race_ok"] > 0
    launched = code["exrace"]  # "exrace launched destroyed_first destroy_ok destroy_consumed odd"
    destroyed_first, destroy_ok, destroy_consumed, odd = map(int, text["exrace"].split())
    assert odd == 0 and launched + destroyed_first == 3000
    assert destroy_ok == destroyed_first and destroy_consumed == launched


@needs_shared
def test_phase1_in_c_answers_as_python(phase1_program, toolkit):
    """The same program with a diagnostic on (the error log: every call goes to Python) prints
    the same codes, messages and values, line by line."""
    _, _, fast = run(phase1_program, toolkit)
    _, _, slow = run(phase1_program, toolkit, ASCEND_GLOBAL_LOG_LEVEL="3")
    assert " 1" not in "".join(ln for ln in slow.splitlines() if ln.startswith("made_in_c "))
    assert _normalised(fast) == _normalised(slow)
