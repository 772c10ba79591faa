"""cffi builder for aclnn_py._emu, the compiled core (streams, device memory, kernels).

The cdef is the CDEF-BEGIN..CDEF-END part of csrc/include/aclnn_emu.h, the same header every C
source includes, so the two cannot drift. Run by setuptools through ``cffi_modules`` in setup.py.
"""

from __future__ import annotations

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


def compile_args() -> list[str]:
    if sys.platform == "win32":
        return ["/O2"]
    return ["-O3", "-std=c11", "-Wall", "-Wextra", "-fno-math-errno", "-ffp-contract=off",
            "-pthread"]


ffibuilder = FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(
    "aclnn_py._emu",
    '#include "aclnn_emu.h"',
    sources=c_sources(),
    include_dirs=[str(Path("csrc") / "include")],
    extra_compile_args=compile_args(),
    extra_link_args=[] if sys.platform == "win32" else ["-pthread", "-lm"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
