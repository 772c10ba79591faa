"""The toolkit's C paths (docs/c_api.md, "Fast paths"): aclrtSynchronizeStream and phase 2 of an
executor with a launch record run in C, without the interpreter; every refusal keeps the Python
API's code and message (docs/two_phase_api.md, docs/return_codes.md), and a diagnostic that
wraps the API sees every call."""

from __future__ import annotations

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
