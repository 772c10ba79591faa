"""cffi builder for aclnn_py._emu, the compiled core (streams, device memory, kernels).

The cdef is the CDEF-BEGIN..CDEF-END part of csrc/include/aclnn_emu.h, the same header every C
source includes, so the two cannot drift. Run by setuptools through ``cffi_modules`` in setup.py,
which calls ``ffibuilder()``; importing this module has no side effects, so the tests that
compile C programs of their own (tests/test_kernels_c.py) take the compiler and flags from here.

The core is built for Linux / POSIX with gcc or clang. Floating-point contraction (a*b + c fused
into one rounding) is off everywhere: by -ffp-contract=off here (gcc's -std=c11 implies it, clang
contracts within a statement by default), and by a pragma at the top of the kernel files that
rely on it, so they keep it off whatever flags compile them.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
HEADER = CSRC / "include" / "aclnn_emu.h"


def read_cdef(header: Path = HEADER) -> str:
    text = header.read_text(encoding="utf-8")
    begin = text.index("/* CDEF-BEGIN */") + len("/* CDEF-BEGIN */")
    end = text.index("/* CDEF-END */")
    return text[begin:end]


# csrc/parts/NAME_N.c: part N of a big kernel file, which the build compiles in its place
# (csrc/kernels/parts.h)
PART_INCLUDE = re.compile(r'^#include "(\.\./kernels/[^"]+\.c)"', re.M)


def split_sources() -> dict[Path, list[Path]]:
    """The kernel files compiled in parts: file -> its part wrappers."""
    out: dict[Path, list[Path]] = {}
    for wrapper in sorted((CSRC / "parts").glob("*.c")):
        for inc in PART_INCLUDE.findall(wrapper.read_text(encoding="utf-8")):
            out.setdefault((wrapper.parent / inc).resolve(), []).append(wrapper)
    return out


def c_sources() -> list[str]:
    """Every C source of the core: the files of csrc/, a file split into parts replaced by its
    parts' wrappers. Paths relative to the project root (where setup.py runs), as setuptools
    wants them."""
    split = split_sources()
    return sorted(p.relative_to(ROOT).as_posix() for p in CSRC.rglob("*.c")
                  if p.resolve() not in split)


# ACLNN_EMU_SANITIZE selects an instrumented build of the core (tools/sanitize.sh uses it):
# unset or empty = the normal optimised build. The Python interpreter is not instrumented, so an
# instrumented core is imported with the sanitizer runtime preloaded (LD_PRELOAD).
SANITIZE_ENV = "ACLNN_EMU_SANITIZE"
# -fno-wrapv undoes the -fwrapv of CPython's CFLAGS, so that UBSan checks signed overflow.
SANITIZERS = {
    "address": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                "-fno-sanitize-recover=undefined", "-fno-wrapv"],
    "thread": ["-fsanitize=thread"],
}


def sanitizer() -> str:
    """The sanitizer ACLNN_EMU_SANITIZE asks for ("" = none); any other value is an error."""
    value = os.environ.get(SANITIZE_ENV, "").strip()
    if value and value not in SANITIZERS:
        raise RuntimeError(
            f"{SANITIZE_ENV}={value!r} is not supported: use 'address' (AddressSanitizer + "
            f"UndefinedBehaviorSanitizer), 'thread' (ThreadSanitizer), or leave it unset")
    return value


def compile_args(san: str | None = None) -> list[str]:
    """Flags for every C source of the core (after the interpreter's own CFLAGS, so they win).
    ``san``: a SANITIZERS key, "" for the optimised build, None for what the environment asks.
    Never -march: the kernels carry each ISA level's code in target attributes
    (csrc/kernels/vecmath.h's ACLK_LEVELS, cvt_x86.h) and pick one at load time (isa.c)."""
    common = ["-std=c11", "-ffp-contract=off", "-Wall", "-Wextra", "-fno-math-errno",
              "-pthread"]
    san = sanitizer() if san is None else san
    if san:
        return ["-O1", "-g", *common, *SANITIZERS[san]]
    return ["-O3", *common, *LEAN_FLAGS, *(GCC_LEAN_FLAGS if is_gcc() else [])]


# The optimised build's memory (docs/architecture.md, "A lean source build"). None changes
# what the code computes (test_isa pins the bits). -g0: no debug information (CPython's CFLAGS
# ask for -g; it cost 20-50 MB per compiler, and the library is 2.1 MB instead of 13; the
# sanitizer builds keep -g).
LEAN_FLAGS = ["-g0"]
# gcc: its garbage collector runs once its heap grew 20 % past 32 MB (the defaults on a machine
# with some GB of RAM: 100 % past 128 MB), and the register allocator treats each function as
# one region (-fira-region=one; "mixed", the default, also allocates per loop, which for these
# long vectorised functions cost ~60 MB; other registers, the same arithmetic, no speed change
# measured). softmax.c, the largest file, at -O3: 474 -> 185 MB.
GCC_LEAN_FLAGS = ["--param", "ggc-min-expand=20", "--param", "ggc-min-heapsize=32768",
                  "-fira-region=one"]


def is_gcc() -> bool:
    """Whether the core's compiler (c_compiler) is gcc: clang also calls itself gcc-compatible
    but does not take gcc's --param names."""
    return _is_gcc(tuple(c_compiler()))


@functools.cache
def _is_gcc(cc: tuple[str, ...]) -> bool:
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "clang" not in out and "Free Software Foundation" in out


def link_args(san: str | None = None) -> list[str]:
    san = sanitizer() if san is None else san
    return ["-pthread", "-lm", *(SANITIZERS[san][:1] if san else [])]


def c_compiler() -> list[str]:
    """The compiler command setuptools uses for the core: $CC, else the interpreter's CC."""
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


class BuildEnvironmentError(RuntimeError):
    """The machine lacks what compiling the core needs; the message says what to install."""


def check_build_environment() -> None:
    """Fail early, with what to install, when the C compiler or Python's headers are missing
    (instead of a compiler traceback in the middle of ``pip install``)."""
    cc = c_compiler()
    if not cc or shutil.which(cc[0]) is None:
        where = ("$CC" if os.environ.get("CC") else "the C compiler Python was built with")
        raise BuildEnvironmentError(
            f"aclnn-py compiles its C core at install time, but {where} ({' '.join(cc)!r}) was "
            "not found. Install a C compiler and retry: on Debian/Ubuntu "
            "'sudo apt-get install build-essential' (gcc), on Fedora/RHEL 'sudo dnf install "
            "gcc', on Alpine 'apk add build-base', on macOS 'xcode-select --install' (the Xcode "
            "Command Line Tools, clang); or set CC to a C compiler (e.g. CC=clang).")
    include = sysconfig.get_paths().get("include") or ""
    if include and not (Path(include) / "Python.h").is_file():
        raise BuildEnvironmentError(
            f"Python's C headers ({Path(include) / 'Python.h'}) are missing; they are needed to "
            f"build the core for Python {sys.version_info.major}.{sys.version_info.minor}. "
            "Install them and retry: on Debian/Ubuntu 'sudo apt-get install python3-dev', on "
            "Fedora/RHEL 'sudo dnf install python3-devel'.")


def build_stamp() -> str:
    """A file whose content is the current compiler, linker and flags, rewritten (so newer than
    any built core) when they change: setuptools rebuilds an extension only when a source or a
    ``depends`` file is newer than it, so without this a build after switching
    ACLNN_EMU_SANITIZE, $CC or $LDSHARED (tools/build_wheel.sh links with zig, or cross-compiles)
    would reuse the core, or the objects, built before the switch from build/."""
    stamp = ROOT / "build" / "aclnn_emu_flags.txt"
    linker = os.environ.get("LDSHARED") or sysconfig.get_config_var("LDSHARED") or ""
    flags = " | ".join([shlex.join(c_compiler()), linker,
                        " ".join(compile_args() + link_args())])
    try:
        if not stamp.is_file() or stamp.read_text(encoding="utf-8") != flags:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(flags, encoding="utf-8")
    except OSError:  # read-only tree: a missing stamp makes setuptools rebuild anyway
        pass
    return str(stamp)


def ffibuilder() -> FFI:
    """The FFI that setuptools builds (cffi accepts a function returning it).

    Raises:
        BuildEnvironmentError: no C compiler, or no Python headers (the message says what to
            install)."""
    check_build_environment()
    ffi = FFI()
    ffi.cdef(read_cdef())
    ffi.set_source(
        "aclnn_py._emu",
        '#include "aclnn_emu.h"',
        sources=c_sources(),
        include_dirs=[str(Path("csrc") / "include")],
        extra_compile_args=compile_args(),
        extra_link_args=link_args(),
        # headers and the files compiled in parts too: a change to one of them must rebuild
        # the core as well
        depends=[build_stamp(), *sorted(str(h) for h in CSRC.rglob("*.h")),
                 *sorted(str(p) for p in split_sources())],
    )
    return ffi


if __name__ == "__main__":
    ffibuilder().compile(verbose=True)
