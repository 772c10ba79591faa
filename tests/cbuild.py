"""aclnn_py/_build.py of this tree, loaded by path (importing it has no side effects): the
compiler and flags the core is built with, for the tests that compile C programs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_aclnn_build", ROOT / "aclnn_py" / "_build.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
