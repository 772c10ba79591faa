"""The docs keep up with the code: every environment variable the package reads is in
docs/configuration.md, every page is in the docs index, and the commands the README and the C
page show name files that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "aclnn_py"
SOURCES = [p for p in [*PACKAGE.rglob("*.py"), *(REPO / "csrc").rglob("*.[ch]"),
                       *PACKAGE.rglob("*.cpp")] if "__pycache__" not in p.parts]
# a read of an environment variable: os.environ.get("X"), os.environ["X"], config's _raw("X"),
# getenv("X"), and every ACLNN_EMU_* name (config reads those through tables too)
READS = re.compile(r"""(?:environ\.get\(|environ\[|_raw\(|getenv\()\s*["']([A-Z][A-Z0-9_]*)["']""")
EMU = re.compile(r"\bACLNN_EMU_[A-Z0-9_]+\b")
NOT_VARIABLES = {"ACLNN_EMU_H"}  # the core header's include guard


def variables_read() -> set[str]:
    names: set[str] = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8", errors="replace")
        names.update(READS.findall(text))
        names.update(EMU.findall(text))
    return names - NOT_VARIABLES


def test_every_variable_read_is_documented():
    doc = (REPO / "docs" / "configuration.md").read_text()
    names = variables_read()
    assert {"ACLNN_EMU_SOC", "ACLNN_EMU_SANITIZE", "XDG_CACHE_HOME", "CXX"} <= names
    missing = sorted(n for n in names if f"`{n}`" not in doc)
    assert not missing, f"docs/configuration.md does not document {missing}"


def test_docs_index_links_every_page():
    index = (REPO / "docs" / "README.md").read_text()
    linked = {m for m in re.findall(r"\]\(([^)#]+\.md)", index)}
    pages = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert pages - {"README.md"} <= linked, sorted(pages - {"README.md"} - linked)
    assert all((REPO / "docs" / link).is_file() for link in linked if not link.startswith("../"))


def test_compile_lines_name_files_that_exist():
    """The g++ lines of the README and docs/c_api.md compile files of this repository."""
    checked = 0
    for doc in (REPO / "README.md", REPO / "docs" / "c_api.md"):
        text = doc.read_text().replace("\\\n", " ")
        for line in text.splitlines():
            if line.lstrip().startswith(("g++ ", "gcc ")):
                sources = [w for w in shlex.split(line) if w.endswith((".c", ".cpp"))]
                assert sources, line
                for src in sources:
                    assert (REPO / src).is_file(), f"{doc.name}: {src} does not exist"
                    checked += 1
    assert checked >= 2


def test_license_is_shipped():
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'license = "Apache-2.0"' in pyproject and 'license-files = ["LICENSE"]' in pyproject
    assert "LICENSE" in (REPO / "MANIFEST.in").read_text()
