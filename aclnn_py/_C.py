"""The only importer of the compiled core (aclnn_py._emu); everything else goes through here."""

from __future__ import annotations

from pathlib import Path

try:
    from aclnn_py._emu import ffi, lib
except ImportError as exc:  # pragma: no cover - only when the package was not built
    _here = Path(__file__).resolve().parent
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

MSG_LEN = lib.EMU_MSG_LEN


def new_msg():
    """A C buffer for a fault message."""
    return ffi.new("char[]", MSG_LEN)


def msg_text(buf) -> str:
    return ffi.string(buf).decode("utf-8", "replace")


__all__ = ["ffi", "lib", "new_msg", "msg_text", "MSG_LEN"]
