"""The C/C++ toolkit: CANN's headers and libraries over the emulator (see docs/c_api.md).

``aclnn-py toolkit`` prints the directory of a CANN-like toolkit install (``include/``,
``lib64/libascendcl.so`` and its aliases, ``set_env.sh``), built on first use; CANN's C++ example
programs compile against it unchanged and run on the Python runtime and operators through an
embedded interpreter.
"""

from .build import ToolkitError, cache_root, ensure_toolkit

__all__ = ["ToolkitError", "cache_root", "ensure_toolkit"]
