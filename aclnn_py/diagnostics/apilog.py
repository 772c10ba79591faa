"""CANN-style API logging: ``ASCEND_GLOBAL_LOG_LEVEL`` and ``ASCEND_SLOG_PRINT_TO_STDOUT``.

Levels as CANN defines them: 0 debug, 1 info, 2 warning, 3 error, 4 null. At 0 every public API
call is logged at DEBUG with its arguments and return code, at 1 the same at INFO; a call that
fails (a non-zero return code, or a Python exception) is logged at ERROR at every level up to 3
with the message it recorded; 4 logs nothing. Records go to the ``aclnn_py.api`` logger (a child
of ``aclnn_py``), which the emulator gives no handler: the program's logging configuration
decides where they go. With ``ASCEND_SLOG_PRINT_TO_STDOUT=1`` the ``aclnn_py`` logger also
prints them to standard output (CANN's plog lines go to the screen then) at the chosen level.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Optional

from .. import status as _status

LOGGER = logging.getLogger("aclnn_py.api")
ROOT = logging.getLogger("aclnn_py")
_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}


class _Stdout(logging.StreamHandler):
    """A handler writing to whatever sys.stdout is when a record is emitted."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stdout
        super().emit(record)


_handler: Optional[_Stdout] = None
_FORMAT = "[%(levelname)s] ACLNN(%(process)d,%(processName)s):%(asctime)s %(name)s: %(message)s"


def _value(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, int):
        return hex(v) if v >= 1 << 32 else str(int(v))
    shape = getattr(v, "shape", None)
    if shape is not None and hasattr(v, "dtype"):  # a NumPy array
        return f"<ndarray {v.dtype} {list(shape)}>"
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def arguments(names: tuple, values: tuple) -> str:
    parts = [f"{n}={_value(v)}" for n, v in zip(names, values)]
    parts += [_value(v) for v in values[len(names):]]
    return ", ".join(parts)


def _result(result: Any) -> str:
    if isinstance(result, tuple):
        return "(" + ", ".join(_value(v) for v in result) + ")"
    return _value(result)


def last_message() -> Optional[str]:
    """The newest message this thread's failing calls recorded, left in place for
    acl.get_recent_err_msg."""
    msgs = getattr(_status._tls, "msgs", None)
    return msgs[-1] if msgs else None


class ApiLog:
    """Logs the calls the wrappers hand it."""

    def __init__(self, level: int) -> None:
        self.level = level
        self.ok_level = _LEVELS.get(level, 0) if level <= 1 else 0  # 0: successes not logged

    def call(self, api: str, names: tuple, values: tuple, result: Any, ret: Optional[int]) -> None:
        if ret:
            if self.level <= 3:
                msg = last_message()
                LOGGER.error("%s(%s) -> %s%s", api, arguments(names, values), _result(result),
                             f": {msg}" if msg else "")
            return
        if self.ok_level and LOGGER.isEnabledFor(self.ok_level):
            LOGGER.log(self.ok_level, "%s(%s) -> %s", api, arguments(names, values),
                       _result(result))

    def raised(self, api: str, names: tuple, values: tuple, exc: BaseException) -> None:
        if self.level <= 3:
            LOGGER.error("%s(%s) raised %s: %s", api, arguments(names, values),
                         type(exc).__name__, exc)


def configure(level: Optional[int], to_stdout: bool) -> Optional[ApiLog]:
    """The API log for a level (None or 4: none), and the stdout handler on or off."""
    global _handler
    if _handler is not None:
        ROOT.removeHandler(_handler)
        _handler = None
        ROOT.setLevel(logging.NOTSET)
    if level is None or level == 4:
        return None
    if to_stdout:
        _handler = _Stdout()
        _handler.setFormatter(logging.Formatter(_FORMAT))
        _handler.setLevel(_LEVELS[level])
        ROOT.addHandler(_handler)
        ROOT.setLevel(_LEVELS[level])
    return ApiLog(level)


__all__ = ["LOGGER", "ApiLog", "configure", "arguments", "last_message"]
