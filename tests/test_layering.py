"""The package's layers, read from its source (docs/architecture.md):

- only ``aclnn_py.runtime`` calls the compiled library: no other module imports
  ``aclnn_py._emu``, ``aclnn_py._C`` or ``ffi``/``lib`` from ``aclnn_py.runtime.core``;
- inside ``aclnn_py.runtime``, only ``core`` imports ``aclnn_py._emu``, and each module imports
  only the modules listed before it (core, state, streams, memory, devices, events);
- the device-memory range check (``emu_mem_check_range`` and its fast form
  ``emu_mem_range_device``) is called in one place, ``aclnn_py.runtime.memory``
  (``check_range``, ``range_device``).

The allow-lists name the modules that have not moved to the runtime's functions yet; each entry
must still be needed (a stale entry fails), so the lists only shrink.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import aclnn_py

PKG = Path(aclnn_py.__file__).resolve().parent

# modules outside aclnn_py/runtime/ that still reach the compiled library: remove an entry when
# the module switches to the runtime package's functions
ALLOWED_C_IMPORTERS: set = set()
# deprecated aliases of aclnn_py.runtime.core (none left)
SHIMS: set = set()

# modules outside aclnn_py/runtime/memory.py that still call the C range check themselves
ALLOWED_RANGE_CHECKERS: set = set()

RANGE_CHECKS = ("emu_mem_check_range", "emu_mem_range_device")
RUNTIME_ORDER = ["core", "state", "streams", "memory", "devices", "events", "host", "launch"]
C_MODULES = {"aclnn_py._emu", "aclnn_py._C", "aclnn_py.runtime.core"}


def _sources() -> dict[str, Path]:
    return {f"aclnn_py/{p.relative_to(PKG).as_posix()}": p for p in sorted(PKG.rglob("*.py"))}


def _module_name(rel: str) -> str:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _from_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a from-import names (``from .. import x`` in package ``a.b``: a)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(rel: str, path: Path) -> set[str]:
    """Every module (and ``module.name`` for from-imports) that the file imports, absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    package = _module_name(rel)
    if not rel.endswith("__init__.py"):
        package = package.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _reaches_c(rel: str, path: Path) -> bool:
    imports = _imports(rel, path)
    if imports & C_MODULES:
        return True
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    for node in ast.walk(tree):  # rt.core.lib / runtime.core.ffi
        if (isinstance(node, ast.Attribute) and node.attr in ("lib", "ffi")
                and isinstance(node.value, ast.Attribute) and node.value.attr == "core"):
            return True
    return False


def test_the_scan_sees_imports(tmp_path):
    """The scanner itself: it must find the runtime's own import of the compiled library and
    resolve relative imports."""
    srcs = _sources()
    assert "aclnn_py._emu.ffi" in _imports("aclnn_py/runtime/core.py",
                                           srcs["aclnn_py/runtime/core.py"])
    assert "aclnn_py.runtime.state.S" in _imports("aclnn_py/runtime/memory.py",
                                                  srcs["aclnn_py/runtime/memory.py"])
    fake = tmp_path / "fake.py"
    fake.write_text("from .runtime.core import lib\n", encoding="utf-8")
    assert _reaches_c("aclnn_py/fake.py", fake)


def test_only_the_runtime_calls_the_compiled_library():
    outside = {rel for rel, path in _sources().items()
               if not rel.startswith("aclnn_py/runtime/") and _reaches_c(rel, path)}
    unexpected = outside - ALLOWED_C_IMPORTERS - SHIMS
    assert not unexpected, (
        f"{sorted(unexpected)} import the compiled library (aclnn_py._C / _emu / "
        "runtime.core's lib and ffi): call aclnn_py.runtime's functions instead")


def test_allowed_c_importers_are_still_needed():
    for rel in sorted(ALLOWED_C_IMPORTERS | SHIMS):
        path = _sources().get(rel)
        assert path is not None and _reaches_c(rel, path), (
            f"{rel} no longer reaches the compiled library: remove it from the allow-list in "
            "tests/test_layering.py")


def test_only_runtime_core_imports_the_extension():
    importers = {rel for rel, path in _sources().items()
                 if {"aclnn_py._emu", "aclnn_py._emu.ffi", "aclnn_py._emu.lib"}
                 & _imports(rel, path)}
    assert importers == {"aclnn_py/runtime/core.py"}


@pytest.mark.parametrize("name", RUNTIME_ORDER)
def test_runtime_modules_import_only_earlier_layers(name):
    rel = f"aclnn_py/runtime/{name}.py"
    imports = _imports(rel, _sources()[rel])
    later = RUNTIME_ORDER[RUNTIME_ORDER.index(name):]
    used = {m.split(".")[2] for m in imports
            if m.startswith("aclnn_py.runtime.") and m.split(".")[2] in RUNTIME_ORDER}
    wrong = used & set(later) - {name}
    assert not wrong, f"runtime/{name}.py imports later layers {sorted(wrong)}"
    assert "aclnn_py.runtime" not in imports, f"runtime/{name}.py imports the package itself"


def test_one_device_range_check():
    callers = {rel for rel, path in _sources().items()
               if any(isinstance(node, ast.Attribute) and node.attr in RANGE_CHECKS
                      for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))}
    assert callers - ALLOWED_RANGE_CHECKERS == {"aclnn_py/runtime/memory.py"}, (
        "call aclnn_py.runtime.check_range / range_device instead of the C range check")
    stale = {rel for rel in ALLOWED_RANGE_CHECKERS if rel not in callers}
    assert not stale, f"{sorted(stale)} no longer call the C range check: remove them from " \
                      "ALLOWED_RANGE_CHECKERS"


# ------------------------------------------------------------ Python: no circles ------

# The package's layers, bottom first: a module imports (at its top or inside a function) only
# modules of its own layer or of layers below it. "" is the package itself (aclnn_py/__init__).
LAYERS = ["_emu", "_version", "status", "codes", "cint", "dtypes", "enums", "soc", "config",
          "runtime", "tensor", "plan", "views", "executor", "onednn", "ops", "acl", "aclnn",
          "diagnostics", "functional", "graph", "custom", "bench", "toolkit", "samples", "cli",
          "__main__", "_build", ""]


def _py_graph() -> dict[str, set[str]]:
    """Which package module imports which (each import resolved to the deepest module that
    exists: ``from .ops import check_overlap`` is an import of aclnn_py.ops)."""
    srcs = _sources()
    modules = {_module_name(rel) for rel in srcs} | {"aclnn_py._emu"}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for rel, path in srcs.items():
        name = _module_name(rel)
        package = name if rel.endswith("__init__.py") else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = _from_module(node, package)
                # from PKG import SUBMODULE imports the submodule; from MOD import NAME, MOD
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module
                           for a in node.names]
            else:
                continue
            for imported in targets:
                while imported not in modules and "." in imported:
                    imported = imported.rpartition(".")[0]
                if imported in modules and imported != name:
                    graph[name].add(imported)
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_python_modules_have_no_import_circles():
    """No module of the package imports, directly or through others, a module that imports it:
    phase 1 no longer walks between ops and the executor (the view checks live in
    aclnn_py/views.py below both), the SoC profiles do not import the operators (they declare
    themselves), acl.init does not import the diagnostics (they register a hook)."""
    graph = _py_graph()
    assert "aclnn_py.views" in graph["aclnn_py.executor"]  # the scan resolves imports
    assert _cycles(graph) == []


def test_each_layer_imports_only_the_layers_below_it():
    graph = _py_graph()
    unknown = sorted({_layer(m) for m in graph} - set(LAYERS))
    assert not unknown, f"add {unknown} to LAYERS in tests/test_layering.py"
    upward = [(m, d) for m, deps in sorted(graph.items()) for d in sorted(deps)
              if LAYERS.index(_layer(d)) > LAYERS.index(_layer(m))]
    assert upward == []


# ------------------------------------------------------------------- C: no circles ------

CSRC = Path(__file__).resolve().parent.parent / "csrc"
_C_DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)


def _c_graph() -> dict[str, set[str]]:
    """Which C source calls a function another C source defines (non-static definitions)."""
    texts = {p.relative_to(CSRC).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(CSRC.rglob("*.c"))}
    defined: dict[str, str] = {}
    for name, text in texts.items():
        for m in _C_DEF.finditer(text):
            defined.setdefault(m.group(1), name)
    graph: dict[str, set[str]] = {name: set() for name in texts}
    for name, text in texts.items():
        body = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
        for fn in set(re.findall(r"\b([a-z_]\w*)\s*\(", body)):
            owner = defined.get(fn)
            if owner is not None and owner != name:
                graph[name].add(owner)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.skipif(not CSRC.is_dir(), reason="needs the source tree's csrc/")
def test_c_sources_have_no_circles():
    """No two C sources call each other, directly or through others: handle.c (handles) is
    below stream.c (streams and events), and the fork handlers that reach all of them live in
    fork.c above them."""
    graph = _c_graph()
    assert "runtime/handle.c" in graph["runtime/stream.c"]  # the parser sees calls at all
    assert graph["runtime/handle.c"] <= set(), graph["runtime/handle.c"]
    assert _cycles(graph) == []
