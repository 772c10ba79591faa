"""The compiled core, wrapped in one place: the only importer of ``aclnn_py._emu``.

The C core (csrc/, built by cffi from ``csrc/include/aclnn_emu.h``) holds the allocation table,
the streams with their worker threads, the events and the kernels. The other modules of
``aclnn_py.runtime`` call it through ``lib`` and ``ffi`` from here; the rest of the package calls
the runtime's functions. ``ffi`` and ``lib`` are importable from here for the modules that still
build C task records themselves (tests/test_layering.py lists them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    from aclnn_py._emu import ffi, lib
except ImportError as exc:  # pragma: no cover - only when the package was not built
    _here = Path(__file__).resolve().parent.parent
    _hint = ""
    if (_here.parent / "csrc").is_dir():
        _hint = (
            f" Python imported aclnn_py from the source tree {_here}, which holds no compiled "
            "core: install it editable ('pip install -e .'), or run the tests with 'pytest' "
            "rather than 'python -m pytest' (which puts the source tree first on sys.path)."
        )
    raise ImportError(
        "aclnn_py's compiled core (aclnn_py._emu) is missing: install the package with "
        "'pip install .' so that cffi compiles csrc/." + _hint
    ) from exc

MSG_LEN: int = lib.EMU_MSG_LEN


def new_msg() -> Any:
    """A C buffer for a fault message."""
    return ffi.new("char[]", MSG_LEN)


def msg_text(buf) -> str:
    """The text of a C message buffer (``new_msg``)."""
    return ffi.string(buf).decode("utf-8", "replace")


def last_c_msg() -> str:
    """The message the C core kept for this thread's last failing stream call that was given no
    message buffer (``emu_last_msg``)."""
    buf = new_msg()
    lib.emu_last_msg(buf, MSG_LEN)
    return msg_text(buf)


def new_tasks(n: int) -> Any:
    """``n`` zeroed C task records (``emu_task[n]``)."""
    return ffi.new("emu_task[]", n)


__all__ = ["ffi", "lib", "new_msg", "msg_text", "last_c_msg", "new_tasks", "MSG_LEN"]
