"""cffi builder for aclnn_py._emu, the compiled core (streams, device memory, kernels).

The cdef is the CDEF-BEGIN..CDEF-END part of csrc/include/aclnn_emu.h, the same header every C
source includes, so the two cannot drift. Run by setuptools through ``cffi_modules`` in setup.py.
"""

from __future__ import annotations

import os
import sys
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


def c_sources() -> list[str]:
    # setuptools wants paths relative to the project root (where setup.py runs)
    return sorted(p.relative_to(ROOT).as_posix() for p in CSRC.rglob("*.c"))


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
    if value and sys.platform == "win32":
        raise RuntimeError(f"{SANITIZE_ENV}={value!r}: sanitizer builds need gcc or clang")
    return value


def compile_args() -> list[str]:
    if sys.platform == "win32":
        return ["/O2"]
    common = ["-std=c11", "-Wall", "-Wextra", "-fno-math-errno", "-ffp-contract=off", "-pthread"]
    san = sanitizer()
    if san:
        return ["-O1", "-g", *common, *SANITIZERS[san]]
    return ["-O3", *common]


def link_args() -> list[str]:
    if sys.platform == "win32":
        return []
    san = sanitizer()
    return ["-pthread", "-lm", *(SANITIZERS[san][:1] if san else [])]


def build_stamp() -> str:
    """A file whose content is the current compile and link flags, rewritten (so newer than any
    built core) when they change: setuptools rebuilds an extension only when a source or a
    ``depends`` file is newer than it, so without this a build after switching
    ACLNN_EMU_SANITIZE would reuse the core built before the switch from build/."""
    stamp = ROOT / "build" / "aclnn_emu_flags.txt"
    flags = " ".join(compile_args() + link_args())
    try:
        if not stamp.is_file() or stamp.read_text(encoding="utf-8") != flags:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(flags, encoding="utf-8")
    except OSError:  # read-only tree: a missing stamp makes setuptools rebuild anyway
        pass
    return str(stamp)


ffibuilder = FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(
    "aclnn_py._emu",
    '#include "aclnn_emu.h"',
    sources=c_sources(),
    include_dirs=[str(Path("csrc") / "include")],
    extra_compile_args=compile_args(),
    extra_link_args=link_args(),
    # headers too: a header-only change must rebuild the core as well
    depends=[build_stamp(), *sorted(str(h) for h in CSRC.rglob("*.h"))],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
