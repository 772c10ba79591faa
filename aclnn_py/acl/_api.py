"""pyACL's top-level calls (``acl.init``, ``acl.finalize``, ...), re-exported by
``aclnn_py.acl``. See docs/runtime.md; the C names are CANN's (acl.h, CANN's AscendCL API
reference)."""

from __future__ import annotations

from typing import Optional

from .. import config as _config
from .. import runtime as _rt
from ..status import take_recent as _take_recent


def init(config_path: Optional[str] = None) -> int:
    """aclInit: initialises the runtime, once per process (not required by the emulator).

    ``config_path``: an optional JSON file; it may carry the emulator's keys
    (docs/configuration.md), other keys are CANN's and are ignored. Returns 0, or 100002
    ACL_ERROR_REPEAT_INITIALIZE (second call), 100003 ACL_ERROR_INVALID_FILE (file missing),
    100006 ACL_ERROR_PARSE_FILE (not JSON), 100008 ACL_ERROR_FILE_ATTR_INVALID (a bad emulator
    value in the file), 100000 ACL_ERROR_INVALID_PARAM (a bad value in the environment)."""
    ret = _rt.init(config_path)
    if ret == 0:  # the checkers, trace and API log follow the configuration read now
        for hook in list(_AFTER_INIT):
            hook()
    return ret


# what runs after a successful acl.init: aclnn_py.diagnostics registers its refresh here (it
# wraps this module's functions, so this module does not import it)
_AFTER_INIT: list = []


def after_init(hook) -> None:
    """Run ``hook()`` after every successful ``init`` (once per hook)."""
    if hook not in _AFTER_INIT:
        _AFTER_INIT.append(hook)


def finalize() -> int:
    """aclFinalize: releases every device as the last reset_device does and drops the JSON
    overrides. Returns 0, or 100037 ACL_ERROR_REPEAT_FINALIZE without init, or twice."""
    return _rt.finalize()


def get_recent_err_msg() -> Optional[str]:
    """aclGetRecentErrMsg: the messages failed calls left in this thread (newest first, one per
    line, at most 16), cleared on read; None when there are none (docs/runtime.md, "Error
    messages")."""
    return _take_recent()


# The acl API version the emulator implements: the ACL_MAJOR_VERSION, ACL_MINOR_VERSION and
# ACL_PATCH_VERSION macros of the acl_rt.h it follows.
VERSION = (1, 17, 0)


def get_version() -> tuple[int, int, int, int]:
    """aclrtGetVersion: ``(major, minor, patch, ret)``: the acl API version the emulator follows
    (that of CANN's acl_rt.h macros ACL_MAJOR_VERSION / ACL_MINOR_VERSION / ACL_PATCH_VERSION);
    ret is always 0."""
    return (*VERSION, 0)


def get_soc_name() -> Optional[str]:
    """aclrtGetSocName: the emulated SoC (ACLNN_EMU_SOC), e.g. 'Ascend910B4'; None (C's NULL,
    with a message) when ACLNN_EMU_SOC names no SoC (docs/configuration.md)."""
    profile, ret = _config.checked("aclrtGetSocName", _config.soc_profile)
    return None if ret else profile.name


__all__ = ["init", "finalize", "get_recent_err_msg", "get_soc_name", "get_version"]
