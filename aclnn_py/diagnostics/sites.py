"""Where the program called the API: the innermost frame outside the aclnn_py package (the
checkers' reports and the API log name it)."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_site(depth: int = 1) -> Optional[tuple[str, int, str]]:
    """(file, line, function) of the innermost caller outside the aclnn_py package: where the
    program called the API."""
    f: Any = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    return f.f_code.co_filename, f.f_lineno, f.f_code.co_name


def site_text(site: Optional[tuple[str, int, str]]) -> str:
    if site is None:
        return "an unknown place"
    return f"{site[0]}:{site[1]} in {site[2]}"


__all__ = ["user_site", "site_text"]
