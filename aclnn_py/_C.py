"""The only importer of the compiled core (aclnn_py._emu); everything else goes through here."""

from __future__ import annotations

try:
    from aclnn_py._emu import ffi, lib
except ImportError as exc:  # pragma: no cover - only when the package was not built
    raise ImportError(
        "aclnn_py's compiled core (aclnn_py._emu) is missing: install the package with "
        "'pip install .' (or 'pip install -e .') so that cffi compiles csrc/"
    ) from exc

MSG_LEN = lib.EMU_MSG_LEN


def new_msg():
    """A C buffer for a fault message."""
    return ffi.new("char[]", MSG_LEN)


def msg_text(buf) -> str:
    return ffi.string(buf).decode("utf-8", "replace")


__all__ = ["ffi", "lib", "new_msg", "msg_text", "MSG_LEN"]
