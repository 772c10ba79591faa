"""Diagnostics: the opt-in checkers, the timeline trace and CANN-style API logging.

- ``ACLNN_EMU_CHECK=race,init,leak`` (any subset): unordered accesses to device memory between
  streams or between a stream and the host (``race``), reads of device bytes never written since
  their allocation (``init``), runtime objects still alive at aclrtResetDevice / aclFinalize
  (``leak``);
- ``ACLNN_EMU_TRACE=FILE.json``: every public API call and every task the streams run, as a
  Chrome / Perfetto trace, written at aclFinalize and at exit;
- ``ASCEND_GLOBAL_LOG_LEVEL`` (0 debug .. 4 null) with ``ASCEND_SLOG_PRINT_TO_STDOUT``: every
  API call with its arguments and return code, through :mod:`logging` (logger ``aclnn_py``).

All three share one mechanism (:mod:`.wrap`): the public functions of ``acl``, ``acl.rt``,
``acl.util`` and ``aclnn`` are replaced by wrappers while one of them is on, and are the
original functions otherwise, so that they cost nothing when off. The configuration is read when
``aclnn_py`` is imported and again at each ``acl.init`` (its JSON file may set the keys too).
docs/diagnostics.md describes the reports, the trace and the costs.
"""

from __future__ import annotations

from .. import config
from ..acl import _api as _acl_api
from . import wrap


def refresh() -> None:
    """Read the configuration and install (or remove) the wrappers to match it. A bad value is
    left for acl.init to report: the feature it names stays as it was."""
    try:
        checks = config.checks()
    except config.ConfigError:
        checks = wrap.current().checks
    try:
        trace = config.trace_path()
    except config.ConfigError:  # pragma: no cover - trace_path accepts every string
        trace = wrap.current().trace
    try:
        level = config.log_level()
        stdout = config.log_to_stdout()
    except config.ConfigError:
        level, stdout = wrap.current().log_level, wrap.current().log_stdout
    wrap.configure(checks, trace, level, stdout)


def active() -> wrap.Features:
    """What is on now (checkers, trace file, log level)."""
    return wrap.current()


_acl_api.after_init(refresh)  # acl.init reads the configuration again

__all__ = ["refresh", "active"]
