"""Building the toolkit: a directory laid out as a CANN toolkit install, over the emulator.

``ensure_toolkit()`` returns the directory, building it on first use into a per-user cache
(``$XDG_CACHE_HOME/aclnn-py`` or ``~/.cache/aclnn-py``), keyed by the package's version, a hash of
the package's files and the interpreter; a stale key means a new directory. Builds run in a
temporary directory under a file lock and are renamed into place, so concurrent first uses build
once and never see a half-built toolkit. ``install_prefix(DIR)`` lays the same tree out at DIR
(``aclnn-py toolkit --prefix``), e.g. ``~/Ascend/ascend-toolkit/latest``. Layout (CANN's
names)::

    include/acl/acl.h, acl_base.h, acl_base_rt.h, acl_rt.h, acl_op.h, acl_op_compiler.h,
        acl_mdl.h, error_codes/rt_error_codes.h
    include/aclnn/acl_meta.h, aclnn_base.h
    include/aclnnop/aclnn_softmax.h, ... (the seven operators; generated from their
        declarations, aclnn_py/toolkit/opgen.py), aclnn_util.h
    include/aclnnop/level2/aclnn_*.h   the same headers where third-party CANN code looks
    lib64/libascendcl.so          the one real library (cffi embedding mode, C++)
    lib64/libnnopbase.so, libopapi.so, libopapi_nn.so, libopapi_math.so,
        libacl_op_compiler.so     symlinks to it
    lib64/stub/lib*.so            symlinks too (CANN's link-only stubs)
    runtime/include, runtime/lib64, <arch>-linux/include, <arch>-linux/lib64,
        <arch>-linux/devlib       relative symlinks to include/ and lib64/, where the build
                                  files of CANN's samples look (DDK_PATH, NPU_HOST_LIB)
    opp/vendors/                  custom operator packages (aclnn-py opgen --install) and
                                  config.ini (their load order), as CANN's opp
    python/site-packages/acl.py   pyACL: ``import acl`` gives aclnn_py.acl
    set_env.sh, bin/setenv.bash   export ASCEND_TOOLKIT_HOME, ASCEND_HOME_PATH, ASCEND_OPP_PATH,
                                  ASCEND_AICPU_PATH, LD_LIBRARY_PATH and PYTHONPATH
                                  (python/site-packages), as CANN's do

The library embeds the interpreter that built the toolkit: it needs a shared libpython.
See docs/c_api.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
LIBRARY = "libascendcl.so"
# libacl_op_compiler.so: on the link line of CANN's operator samples (AclNNInvocation)
ALIASES = ("libnnopbase.so", "libopapi.so", "libopapi_nn.so", "libopapi_math.so",
           "libacl_op_compiler.so")
SHIM = Path("python") / "site-packages"  # on PYTHONPATH after set_env.sh, as in CANN
MODULE = "_aclnn_toolkit"  # the embedded cffi module's name
_HASHED = {".py", ".h", ".cpp", ".c", ".so"}


class ToolkitError(RuntimeError):
    """The toolkit cannot be built here (no shared libpython, no C++ compiler, ...)."""


def version() -> str:
    try:
        from importlib.metadata import version as _v

        return _v("aclnn-py")
    except Exception:  # running from a source tree that was never installed
        return "0"


def cache_root() -> Path:
    """Where toolkits and compiled samples are kept: ``$XDG_CACHE_HOME/aclnn-py`` or
    ``~/.cache/aclnn-py``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aclnn-py"


def toolkit_key() -> str:
    """A hash of everything the library depends on: the package's files (sources, headers, the
    compiled core) and the interpreter (its path, prefix and version)."""
    h = hashlib.sha256()
    for item in (version(), sys.executable, sys.prefix, sys.version):
        h.update(item.encode() + b"\0")
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in _HASHED and "__pycache__" not in path.parts and path.is_file():
            h.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- checks ------


def libpython() -> tuple[str, str, str]:
    """(library directory, link name, file name) of the interpreter's shared libpython, or
    ToolkitError when it has none."""
    cfg = sysconfig.get_config_var
    name = cfg("INSTSONAME") or cfg("LDLIBRARY") or ""
    libdir = cfg("LIBDIR") or ""
    if not cfg("Py_ENABLE_SHARED") or ".so" not in name:
        raise ToolkitError(
            f"this Python ({sys.executable}, {sys.version.split()[0]}) has no shared libpython "
            f"(Py_ENABLE_SHARED={cfg('Py_ENABLE_SHARED')}, LDLIBRARY={cfg('LDLIBRARY')}): the "
            "toolkit's libascendcl.so embeds the interpreter and needs one. Use a Python built "
            "with --enable-shared (distribution packages, conda, pyenv with "
            "PYTHON_CONFIGURE_OPTS=--enable-shared) and install aclnn-py there.")
    if not (Path(libdir) / name).exists():
        raise ToolkitError(f"the shared libpython {name} is not in LIBDIR ({libdir}): the "
                           "interpreter's installation is incomplete")
    link = f"python{sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return libdir, link, name


def compiler() -> list[str]:
    """The C++ compiler: $CXX, else c++, g++ or clang++ on PATH; ToolkitError without one."""
    env = os.environ.get("CXX")
    if env and env.strip():
        try:
            cmd = shlex.split(env)
        except ValueError as exc:
            raise ToolkitError(f"CXX={env!r} does not parse as a command ({exc}); set CXX to "
                               "a C++ compiler, or unset it to use c++, g++ or clang++") from None
        if not shutil.which(cmd[0]):
            what = ("does not exist or is not executable" if os.sep in cmd[0] else
                    "is not found on PATH")
            raise ToolkitError(f"CXX={env!r}: the C++ compiler {cmd[0]!r} {what}; set CXX "
                               "to an installed C++ compiler (e.g. g++ or clang++), or unset "
                               "it to use c++, g++ or clang++ from PATH")
        return cmd
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return [found]
    raise ToolkitError("no C++ compiler found (set CXX, or install g++ or clang++)")


# ------------------------------------------------------------------------------ build ------


def _c_string(text: str) -> str:
    """``text`` as a C string literal (UTF-8, octal escapes for everything unusual)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in "\\\"":
            out.append("\\" + ch)
        elif 32 <= byte < 127 and ch != "?":  # "?" escaped: no trigraphs
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _search_path() -> list[str]:
    """Directories the embedded interpreter appends to sys.path as site dirs (so .pth files
    work), in case its own path configuration missed them: the environment's site-packages, the
    user site, and the directory cffi's backend was imported from."""
    import importlib.util
    import site

    dirs: list[str] = []
    with contextlib.suppress(Exception):
        dirs += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        with contextlib.suppress(Exception):
            dirs.append(site.getusersitepackages())
    spec = importlib.util.find_spec("_cffi_backend")
    if spec is not None and spec.origin:
        dirs.append(str(Path(spec.origin).resolve().parent))
    seen: list[str] = []
    for d in dirs:
        if d not in seen and os.path.isdir(d):
            seen.append(d)
    return seen


def _config_header(libname: str) -> str:
    code = ("import site, sys\n"
            f"for _p in {_search_path()!r}:\n"
            "    if _p not in sys.path:\n"
            "        site.addsitedir(_p)\n")
    return ("/* written by aclnn_py/toolkit/build.py for this machine */\n"
            f"#define EMB_PROGRAM {_c_string(sys.executable)}\n"
            f"#define EMB_LIBPYTHON {_c_string(libname)}\n"
            f"#define EMB_PATH_CODE {_c_string(code)}\n")


def _callback_prototypes() -> list[str]:
    text = (HERE / "src" / "callbacks.h").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [line.strip() for line in text.splitlines() if line.strip()]


_HELPERS = """
char *emb_keep_message(const char *text);
char *emb_intern(const char *text);
int64_t *emb_new_dims(uint64_t n);
void emb_fast_setup(uintptr_t launch, uintptr_t sync, uintptr_t host_stream, uintptr_t range,
                    uintptr_t epoch, uintptr_t stream_device, size_t task_size);
void emb_fast_enable(int on);
void emb_note_default(uint64_t epoch, uintptr_t stream, int32_t device);
int emb_record_set(uintptr_t handle, const char *api, const void *templates, int32_t ntasks,
                   const uintptr_t *bases, int32_t nbases, int32_t ws_slot, uint64_t ws_need,
                   int32_t device, int repeatable);
void emb_record_rebind(uintptr_t handle, const uintptr_t *bases, int32_t nbases);
int emb_record_drop(uintptr_t handle);
int emb_record_repeatable(uintptr_t handle);
int emb_consumed_take(uintptr_t *out, int cap);
int64_t emb_consumed_count(void);
int64_t emb_record_count(void);
void emb_p1_setup(uintptr_t free_epoch, uintptr_t ex_base);
uint64_t emb_p1_generation(void);
void emb_p1_clear(void);
int emb_p1_set(const char *api, const char *op, int32_t n, const uintptr_t *tensors, int64_t dim,
               uint64_t free_epoch, uint64_t gen, const void *templates, int32_t ntasks,
               const uintptr_t *bases, int32_t nbases, int32_t ws_slot, uint64_t ws_size,
               int32_t device, int64_t id, const int32_t *env_check, const char *env0,
               const char *env1);
int emb_p1_dead_take(int64_t *out, int cap);
int64_t emb_p1_count(void);
int emb_cmade_peek(uintptr_t handle, int64_t *id, uintptr_t *bases, int32_t *nbases,
                   const char **op);
int emb_cmade_mark(uintptr_t handle);
int emb_cmade_pending(uintptr_t *out, int cap);
"""

def _init_code(package: Path = PACKAGE, executable: str = sys.executable) -> str:
    """The embedded interpreter's first Python: import exactly the aclnn_py that built the
    toolkit (by file location, so no other copy on sys.path can shadow it, and without putting
    its directory ahead of the standard library), then attach the callbacks. When that fails
    (the venv or the package moved or was removed since the build, a dependency is gone), one
    message on stderr names the cause and ``aclnn-py toolkit --rebuild`` before cffi's own
    report."""
    return (
        "import importlib.util, os, sys\n"
        "try:\n"
        "    if 'aclnn_py' not in sys.modules:\n"
        f"        _init = {str(package / '__init__.py')!r}\n"
        "        if not os.path.isfile(_init):\n"
        "            raise ImportError('the aclnn_py package this toolkit was built from is no '\n"
        "                              'longer at ' + os.path.dirname(_init))\n"
        "        _spec = importlib.util.spec_from_file_location('aclnn_py', _init, "
        f"submodule_search_locations=[{str(package)!r}])\n"
        "        _mod = importlib.util.module_from_spec(_spec)\n"
        "        sys.modules['aclnn_py'] = _mod\n"
        "        _spec.loader.exec_module(_mod)\n"
        f"    from {MODULE} import ffi, lib\n"
        "    from aclnn_py.toolkit import _bridge\n"
        "    _bridge.install(ffi, lib)\n"
        "except Exception as _exc:\n"
        "    sys.modules.pop('aclnn_py', None)\n"
        "    sys.stderr.write('aclnn-py toolkit: the emulator cannot start in this process: '\n"
        "                     + type(_exc).__name__ + ': ' + str(_exc) + '\\n'\n"
        "                     'It was built for the Python at ' + "
        f"{executable!r}\n"
        "                     + ('' if os.path.exists("
        f"{executable!r}) else ' (no longer there)')\n"
        "                     + '; if that environment moved or changed, run '\n"
        "                     '\"aclnn-py toolkit --rebuild\" with the Python you use now, '\n"
        "                     'source the set_env.sh of the directory it prints and rebuild '\n"
        "                     'the program (docs/c_api.md).\\n')\n"
        "    sys.stderr.flush()\n"
        "    raise\n")


def _emit_source(src: Path) -> Path:
    """The library's C++ source: cffi's embedding prologue, then ascendcl.cpp."""
    import cffi

    protos = _callback_prototypes()
    ffi = cffi.FFI()
    ffi.embedding_api("")  # embedding mode; the exported functions are ascendcl.cpp's own
    ffi.cdef("\n".join(f'extern "Python" {p}' for p in protos) + _HELPERS)
    ffi.embedding_init_code(_init_code())
    preamble = ('#include "emb_config.h"\n' + "\n".join(f"static {p}" for p in protos)
                + '\n#include "ascendcl.cpp"\n')
    ffi.set_source(MODULE, preamble, source_extension=".cpp")
    out = src / f"{MODULE}.cpp"
    with contextlib.redirect_stdout(io.StringIO()):  # cffi announces the file it writes
        ffi.emit_c_code(str(out))
    return out


def _run(cmd: list[str], what: str) -> None:
    proc = run_tool(cmd, what)
    if proc.returncode:
        raise ToolkitError(f"{what} failed ({shlex.join(cmd)}):\n{proc.stdout}{proc.stderr}")


def run_tool(cmd: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run(cmd, capture_output=True, text=True, **kwargs); ToolkitError naming
    ``what`` and the program when it cannot be started (removed, not executable)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    except OSError as exc:
        raise ToolkitError(f"{what}: cannot run {cmd[0]!r} ({exc.strerror or exc}); set CXX to "
                           "an installed C++ compiler, or unset it to use c++, g++ or clang++"
                           ) from None


def arch() -> str:
    """The machine's name as CANN's directories spell it (``x86_64-linux``, ``aarch64-linux``)."""
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def _env_script(final: Path, up: str) -> str:
    """CANN's set_env.sh / bin/setenv.bash for the toolkit at ``final``. In bash the toolkit is
    the directory the sourced file is in (``up`` is the way from there to the toolkit), so that
    a moved or copied toolkit still sets its own paths; other shells use ``final``."""
    home = shlex.quote(str(final))
    return (
        "# aclnn-py toolkit (a CPU emulator of CANN's aclnn API): source this file as CANN's,\n"
        "# e.g.  source \"$(aclnn-py toolkit)/set_env.sh\"  or  source <prefix>/bin/setenv.bash\n"
        f"_aclnn_py_home={home}\n"
        "if [ -n \"${BASH_SOURCE:-}\" ]; then\n"
        "  case \"$BASH_SOURCE\" in */*) _aclnn_py_here=\"${BASH_SOURCE%/*}\" ;; "
        "*) _aclnn_py_here=. ;; esac\n"
        f"  _aclnn_py_here=$(CDPATH= cd -- \"$_aclnn_py_here{up}\" 2>/dev/null && pwd) ||"
        " _aclnn_py_here=\n"
        "  if [ -n \"$_aclnn_py_here\" ] && [ -f \"$_aclnn_py_here/aclnn-py.info\" ]; then\n"
        "    _aclnn_py_home=\"$_aclnn_py_here\"\n"
        "  fi\n"
        "fi\n"
        "export ASCEND_TOOLKIT_HOME=\"$_aclnn_py_home\"\n"
        "export ASCEND_HOME_PATH=\"${ASCEND_TOOLKIT_HOME}\"\n"
        "export ASCEND_OPP_PATH=\"${ASCEND_TOOLKIT_HOME}/opp\"\n"
        "export ASCEND_AICPU_PATH=\"${ASCEND_TOOLKIT_HOME}\"\n"
        "export LD_LIBRARY_PATH=\"${ASCEND_HOME_PATH}/lib64"
        "${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}\"\n"
        f"export PYTHONPATH=\"${{ASCEND_HOME_PATH}}/{SHIM.as_posix()}"
        "${PYTHONPATH:+:${PYTHONPATH}}\"\n"
        "# custom operator packages (aclnn-py opgen) named by ASCEND_CUSTOM_OPP_PATH: their\n"
        "# op_api/lib, so that programs linked with -lcust_opapi find it\n"
        "_aclnn_py_ifs=\"$IFS\"; IFS=:\n"
        "for _aclnn_py_v in ${ASCEND_CUSTOM_OPP_PATH:-}; do\n"
        "  if [ -d \"$_aclnn_py_v/op_api/lib\" ]; then\n"
        "    LD_LIBRARY_PATH=\"$_aclnn_py_v/op_api/lib:$LD_LIBRARY_PATH\"\n"
        "  fi\n"
        "done\n"
        "IFS=\"$_aclnn_py_ifs\"; unset _aclnn_py_ifs _aclnn_py_v _aclnn_py_home _aclnn_py_here\n"
        "export LD_LIBRARY_PATH\n")


def write_env_scripts(root: Path, final: Path) -> None:
    """``set_env.sh`` (where aclnn-py always had it) and ``bin/setenv.bash`` (where CANN's
    samples' run.sh sources it) of the toolkit laid out in ``root``, to be at ``final``."""
    (root / "set_env.sh").write_text(_env_script(final, ""))
    (root / "bin").mkdir(exist_ok=True)
    (root / "bin" / "setenv.bash").write_text(_env_script(final, "/.."))


def _write_layout(root: Path) -> None:
    """The directories of a CANN install that the samples' build files read, as relative
    symlinks to include/ and lib64/ (so that a moved toolkit keeps working), lib64/stub, and
    an empty opp/vendors for custom operator packages."""
    stub = root / "lib64" / "stub"
    stub.mkdir()
    for name in (LIBRARY, *ALIASES):
        os.symlink(f"../{LIBRARY}", stub / name)
    for sub, links in (("runtime", ("include", "lib64")),
                       (f"{arch()}-linux", ("include", "lib64", "devlib"))):
        (root / sub).mkdir()
        for name in links:
            os.symlink("../lib64" if name == "devlib" else f"../{name}", root / sub / name)
    (root / "opp" / "vendors").mkdir(parents=True)


def _shim_source(package: Path = PACKAGE) -> str:
    """python/site-packages/acl.py: pyACL's module name over the emulator's aclnn_py.acl (CANN's
    set_env.sh puts pyACL's directory on PYTHONPATH the same way). Its submodules are aliased
    too, so ``import acl.rt`` finds the same module rather than a second copy."""
    return (
        '"""pyACL over the aclnn-py emulator (written by aclnn-py toolkit): ``import acl`` gives\n'
        'aclnn_py.acl. See docs/pyacl.md."""\n'
        "import sys\n\n"
        "try:\n"
        "    import aclnn_py.acl as _acl\n"
        "except ImportError as _exc:  # another interpreter than the toolkit's\n"
        "    raise ImportError(\n"
        "        'import acl: this is the aclnn-py emulator\\'s pyACL, and aclnn_py is not '\n"
        "        'importable by ' + sys.executable + ' (' + str(_exc) + '). Run the program '\n"
        f"        'with the Python that has aclnn-py installed, e.g. ' + {sys.executable!r} "
        "+ '.') from None\n"
        "for _name, _mod in list(sys.modules.items()):\n"
        "    if _name.startswith('aclnn_py.acl.'):\n"
        "        sys.modules['acl.' + _name[len('aclnn_py.acl.'):]] = _mod\n"
        "sys.modules[__name__] = _acl\n")


def _write_level2(include: Path) -> None:
    """include/aclnnop/level2/aclnn_*.h: CANN installs the operator headers there as well, and
    third-party code includes them as "aclnnop/level2/aclnn_softmax.h"."""
    level2 = include / "aclnnop" / "level2"
    level2.mkdir()
    for header in sorted((include / "aclnnop").glob("aclnn_*.h")):
        (level2 / header.name).write_text(
            f"/* {header.name} under aclnnop/level2, where CANN installs it too */\n"
            f'#include "../{header.name}"\n')


def build_into(root: Path, final: Path) -> None:
    """Lay the toolkit out in ``root`` (to be renamed ``final``)."""
    cxx = compiler()
    libdir, link, libname = libpython()
    shutil.copytree(HERE / "include", root / "include")
    from ..ops import REGISTRY
    from . import stubs
    from .cgen import builtin_headers, builtin_wrappers

    ops = list(REGISTRY.values())
    for name, text in builtin_headers(ops).items():  # generated from the declarations
        (root / "include" / "aclnnop" / name).write_text(text)
    _write_level2(root / "include")
    shim = root / SHIM
    shim.mkdir(parents=True)
    (shim / "acl.py").write_text(_shim_source())
    src = root / "build"
    src.mkdir()
    for name in stubs.SOURCES:
        shutil.copy(HERE / "src" / name, src)
    (src / "acl_stubs.inc").write_text(stubs.stubs_source(root / "include", HERE / "src"))
    (src / "builtin_ops.inc").write_text(builtin_wrappers(ops))
    (src / "emb_config.h").write_text(_config_header(libname))
    source = _emit_source(src)
    lib64 = root / "lib64"
    lib64.mkdir()
    paths = sysconfig.get_paths()
    includes = {paths["include"], paths.get("platinclude", paths["include"])}
    if not (Path(paths["include"]) / "Python.h").exists():
        raise ToolkitError(f"Python.h is not in {paths['include']}: install the interpreter's "
                           "development headers (e.g. the python3-dev package)")
    cmd = [*cxx, "-shared", "-fPIC", "-O1", "-fvisibility=hidden", "-std=c++11", "-w",
           *[f"-I{d}" for d in sorted(includes)], f"-I{src}", f"-I{root / 'include'}",
           str(source), "-o", str(lib64 / LIBRARY), f"-Wl,-soname,{LIBRARY}",
           f"-L{libdir}", f"-l{link}", f"-Wl,-rpath,$ORIGIN:{libdir}", "-lpthread", "-ldl"]
    _run(cmd, "compiling libascendcl.so")
    for alias in ALIASES:
        os.symlink(LIBRARY, lib64 / alias)
    shutil.rmtree(src)
    _write_layout(root)
    write_env_scripts(root, final)
    (root / "aclnn-py.info").write_text(
        f"aclnn-py {version()}\npython {sys.executable} ({sys.version.split()[0]})\n"
        f"libpython {libdir}/{libname}\n")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl

    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def current_name() -> str:
    """The cache directory name of the toolkit for this package and interpreter."""
    return f"toolkit-{version()}-{toolkit_key()}"


def ensure_toolkit(rebuild: bool = False, root: Optional[Path] = None) -> Path:
    """The toolkit directory for this package and interpreter, built if missing or stale (or
    when ``rebuild``). Raises ToolkitError when it cannot be built here."""
    if not sys.platform.startswith("linux"):
        raise ToolkitError(f"the toolkit is built for Linux only (this is {sys.platform})")
    root = cache_root() if root is None else root
    key = toolkit_key()
    final = root / f"toolkit-{version()}-{key}"  # current_name()
    done = final / "aclnn-py.info"
    if done.exists() and not rebuild:
        return final
    try:
        _build_locked(root, key, final, done, rebuild)
    except OSError as exc:
        raise cache_error(root, exc) from None
    return final


def cache_error(root: Path, exc: OSError) -> ToolkitError:
    """ToolkitError for a cache (``root``) that cannot be written: the path, the reason, and
    where the cache is configured."""
    where = exc.filename or root
    return ToolkitError(f"cannot write to the cache {root} ({exc.strerror or exc}: {where}); "
                        "set XDG_CACHE_HOME to a writable directory (the cache is "
                        "$XDG_CACHE_HOME/aclnn-py, by default ~/.cache/aclnn-py)")


def _build_locked(root: Path, key: str, final: Path, done: Path, rebuild: bool) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f".toolkit-{key}.lock"):
        if done.exists() and not rebuild:
            return  # built by another process while this one waited
        tmp = Path(tempfile.mkdtemp(prefix=f".build-{key}-", dir=root))
        try:
            build_into(tmp, final)
            tmp.chmod(0o755)  # mkdtemp's 0700 would hide the toolkit from other users
            if final.exists():  # --rebuild, or a directory left by an interrupted rename
                _keep_vendors(final, tmp)
                trash = Path(tempfile.mkdtemp(prefix=f".old-{key}-", dir=root))
                os.rename(final, trash / "toolkit")
                os.rename(tmp, final)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _keep_vendors(old: Path, new: Path) -> None:
    """Move the custom operator packages installed in toolkit ``old`` (opp/vendors) into
    ``new``, which replaces it."""
    vendors = old / "opp" / "vendors"
    if vendors.is_dir() and not vendors.is_symlink():
        target = new / "opp" / "vendors"
        if target.is_dir():
            target.rmdir()  # the new toolkit's is empty
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(vendors, target)


# ----------------------------------------------------------------------------- --prefix ----

INFO = "aclnn-py.info"
_OWN = ".aclnn-py"  # the prefix of the lock file and of the temporary directories in a prefix


class PrefixError(ToolkitError):
    """``--prefix`` names a directory that cannot hold a toolkit: not a directory, not empty
    and not a toolkit, or not writable."""


def is_toolkit(path: Path) -> bool:
    """Whether ``path`` is a toolkit laid out by aclnn-py (its aclnn-py.info says so)."""
    try:
        with open(path / INFO, encoding="utf-8", errors="replace") as fh:
            return fh.read(9) == "aclnn-py "
    except OSError:
        return False


def _check_prefix(prefix: Path) -> None:
    if not (prefix.exists() or prefix.is_symlink()):
        return
    if not prefix.is_dir():
        raise PrefixError(f"{prefix} exists and is not a directory")
    if is_toolkit(prefix):
        return
    try:
        others = sorted(p.name for p in prefix.iterdir() if not p.name.startswith(_OWN))
    except OSError as exc:
        raise PrefixError(f"{prefix} cannot be read ({exc.strerror})") from None
    if others:
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        raise PrefixError(
            f"{prefix} is not empty ({shown}) and is not a toolkit laid out by aclnn-py (it "
            f"has no {INFO}); give a new or empty directory, or one that 'aclnn-py toolkit "
            "--prefix' laid out before")


def dir_problem(path: Path) -> Optional[str]:
    """Why directory ``path`` cannot be written or created by this user (its nearest existing
    ancestor is a file, or not writable), with the fix; None when it can."""
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            return "the directory is not writable by this user; give one you can write to"
        return None
    if path.exists():
        return "it exists and is not a directory; give a directory"
    parent = path.parent
    while not (parent.exists() or parent.is_symlink()) and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return (f"it cannot be created: {str(parent)!r} is not a directory; give a path "
                "under a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        return (f"it cannot be created: {str(parent)!r} is not writable by this user; give a "
                "directory you can write to")
    return None


def _copy_entry(src: Path, dest: Path) -> None:
    if src.is_symlink():
        os.symlink(os.readlink(src), dest)
    elif src.is_dir():
        shutil.copytree(src, dest, symlinks=True)
    else:
        shutil.copy2(src, dest)


def install_prefix(prefix: os.PathLike | str, rebuild: bool = False) -> Path:
    """Lay the toolkit out at ``prefix`` (``aclnn-py toolkit --prefix``): a copy of the cached
    toolkit (built first if needed), with set_env.sh and bin/setenv.bash for ``prefix``. An
    existing toolkit there is updated entry by entry, keeping opp/ (its installed custom
    operator packages and config.ini). PrefixError for a directory that is not empty and not
    a toolkit, or one that cannot be written."""
    prefix = Path(os.path.abspath(os.path.expanduser(str(prefix))))  # keeps a `latest` symlink
    _check_prefix(prefix)
    problem = dir_problem(prefix)  # before the build, not found out after it
    if problem:
        raise PrefixError(f"{prefix}: {problem}")
    source = ensure_toolkit(rebuild=rebuild)
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PrefixError(f"{prefix} cannot be created ({exc.strerror})") from None
    if not os.access(prefix, os.W_OK | os.X_OK):
        raise PrefixError(f"{prefix} is not writable by this user")
    try:
        with _locked(prefix / f"{_OWN}.lock"):
            _check_prefix(prefix)  # another process may have written there meanwhile
            for left in prefix.glob(f"{_OWN}-*"):  # left by an interrupted update
                shutil.rmtree(left, ignore_errors=True)
            stage = Path(tempfile.mkdtemp(prefix=f"{_OWN}-new-", dir=prefix))
            trash = Path(tempfile.mkdtemp(prefix=f"{_OWN}-old-", dir=prefix))
            try:
                for entry in sorted(source.iterdir()):
                    if entry.name in ("opp", "bin", "set_env.sh", INFO):
                        continue
                    _copy_entry(entry, stage / entry.name)
                write_env_scripts(stage, prefix)
                (stage / INFO).write_text((source / INFO).read_text()
                                          + f"laid out from {source}\n")
                # entry by entry, the info file last: a prefix without it is not finished
                for entry in sorted(stage.iterdir(), key=lambda p: (p.name == INFO, p.name)):
                    dest = prefix / entry.name
                    if dest.exists() or dest.is_symlink():
                        os.rename(dest, trash / entry.name)
                    os.rename(entry, dest)
                (prefix / "opp" / "vendors").mkdir(parents=True, exist_ok=True)
            finally:
                shutil.rmtree(stage, ignore_errors=True)
                shutil.rmtree(trash, ignore_errors=True)
    except PrefixError:
        raise
    except OSError as exc:
        raise PrefixError(f"{prefix}: {exc.strerror or exc} "
                          f"({exc.filename or prefix})") from None
    return prefix
