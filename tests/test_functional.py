"""The exception helpers of aclnn_py (``check`` and the AclnnError hierarchy, docs/runtime.md)
and the functional layer's private streams.

The functional tests of the operators (softmax_backward among them) are driven by the operator
table: tests/test_ops_functional.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import acl
from aclnn_py import functional as F

# --------------------------------------------------------------------------- check() ----


@pytest.mark.parametrize("code,cls,builtin", [
    (161001, aclnn_py.AclnnNullPointerError, ValueError),
    (161002, aclnn_py.AclnnParamError, ValueError),
    (561103, aclnn_py.AclnnInternalError, RuntimeError),
    (561000, aclnn_py.AclnnInternalError, RuntimeError),
    (507015, aclnn_py.AclnnRuntimeError, RuntimeError),
    (207001, aclnn_py.AclnnRuntimeError, RuntimeError),
    (361001, aclnn_py.AclnnRuntimeError, RuntimeError),
], ids=lambda v: v if isinstance(v, int) else v.__name__)
def test_check_raises_the_family_subclass(code, cls, builtin):
    with pytest.raises(cls) as info:
        aclnn_py.check(code)
    err = info.value
    assert type(err) is not aclnn_py.AclnnError, "AclnnError is never raised directly"
    assert isinstance(err, aclnn_py.AclnnError) and isinstance(err, builtin)
    assert err.code == code


def test_check_success_returns_none():
    assert aclnn_py.check(0) is None


def test_check_attaches_the_recent_message():
    from aclnn_py import aclnn

    assert aclnn.aclDestroyAclOpExecutor(None) == 561103
    with pytest.raises(aclnn_py.AclnnInternalError) as info:
        aclnn_py.check(561103, api="aclDestroyAclOpExecutor")
    assert "aclDestroyAclOpExecutor" in str(info.value)
    assert info.value.message and "561103" in info.value.message
    assert acl.get_recent_err_msg() is None


def test_hierarchy():
    assert issubclass(aclnn_py.AclnnParamError, ValueError)
    assert issubclass(aclnn_py.AclnnNullPointerError, aclnn_py.AclnnError)
    assert issubclass(aclnn_py.AclnnRuntimeError, RuntimeError)
    assert issubclass(aclnn_py.AclnnInternalError, RuntimeError)
    for cls in (aclnn_py.AclnnParamError, aclnn_py.AclnnNullPointerError,
                aclnn_py.AclnnRuntimeError, aclnn_py.AclnnInternalError):
        assert issubclass(cls, aclnn_py.AclnnError)


def test_private_streams_of_finished_threads_are_released():
    """Each thread's functional calls run on a private stream, released when the thread ends."""
    import threading

    from aclnn_py import runtime

    before = len(runtime.S.streams)
    x = np.ones((2, 3), np.float32)
    results = []

    def work():
        results.append(F.softmax(x, 1))

    for _ in range(8):
        th = threading.Thread(target=work)
        th.start()
        th.join()
    assert len(results) == 8
    np.testing.assert_allclose(results[-1], np.full((2, 3), 1 / 3), rtol=1e-6)
    assert len(runtime.S.streams) <= before + 1


# ------------------------------------------------------------- a device list that is bad ----

_BAD_DEVICES = """
import numpy as np
import aclnn_py
from aclnn_py import acl
from aclnn_py import functional as F
for when in ("before acl.init", "after acl.init"):
    for x in (np.ones((2, 3), np.float32), np.ones((0, 3), np.float32)):
        try:
            F.softmax(x, 1)
        except aclnn_py.AclnnParamError as exc:
            print(when, exc.code, str(exc).replace("\\n", " "))
        else:
            print(when, "computed")
    if when == "before acl.init":
        print("init", acl.init())
"""


@pytest.mark.parametrize("var,value,says", [
    ("ASCEND_RT_VISIBLE_DEVICES", "garbage", "'garbage'"),
    ("ASCEND_RT_VISIBLE_DEVICES", "0,0", "0,0"),
    ("ACLNN_EMU_DEVICE_COUNT", "0", "ACLNN_EMU_DEVICE_COUNT"),
    ("ACLNN_EMU_DEVICE_COUNT", "65", "ACLNN_EMU_DEVICE_COUNT"),
])
def test_a_bad_device_list_raises(var, value, says):
    """docs/configuration.md: a bad value met by a call makes the functional layer raise the
    matching AclnnError; for the device list that is ACL_ERROR_INVALID_PARAM (100000, the code
    acl.init returns for it), before and after acl.init, also for an empty array (issue 22,
    item 7: the layer computed on device 0 regardless)."""
    import os
    import subprocess
    import sys
    import tempfile

    env = {k: v for k, v in os.environ.items()
           if k not in ("ASCEND_RT_VISIBLE_DEVICES", "ACLNN_EMU_DEVICE_COUNT")}
    env[var] = value
    proc = subprocess.run([sys.executable, "-c", _BAD_DEVICES], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tempfile.gettempdir())  # not the tree
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[2] == "init 100000", lines
    calls = lines[:2] + lines[3:]
    assert len(calls) == 4, lines
    for line in calls:
        assert " 100000 " in line and var in line and says in line, line
