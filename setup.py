# setup.py exists to carry cffi_modules (cffi cannot be wired from pyproject.toml alone) and a
# build_ext that compiles the core's C sources in parallel. Everything else about the package
# lives in pyproject.toml.
from __future__ import annotations

import os
import re
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor

from setuptools import setup
from setuptools.command.build_ext import build_ext

# How many compilers run at once when neither `build_ext --parallel N` nor $MAX_JOBS says:
# one per CPU, at most this many. Each needs up to ~170 MB (docs/architecture.md, "A lean
# source build"), so a many-core machine does not start twenty.
DEFAULT_MAX_JOBS = 4


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on (containers)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def compile_jobs(parallel: int | None) -> int:
    """`build_ext --parallel N` (-j N) first, then $MAX_JOBS (the variable PyTorch's C++
    extensions and other builds honour), else min(CPUs, DEFAULT_MAX_JOBS)."""
    if parallel:
        return max(1, int(parallel))
    env = os.environ.get("MAX_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise SystemExit(f"MAX_JOBS={env!r} is not a number of compile jobs (e.g. "
                             f"MAX_JOBS=2)") from None
    return max(1, min(_cpus(), DEFAULT_MAX_JOBS))


# For the compilers: glibc's malloc hands freed memory back to the system at once (no trim
# threshold; blocks of 128 KB and more mapped on their own), so a compiler's peak is closer to
# its live data: softmax.c's parts 165 -> 138 MB each, no slower. Values already set win.
COMPILER_MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": "0", "MALLOC_MMAP_THRESHOLD_": "131072"}


class ParallelBuildExt(build_ext):
    """build_ext whose compiler compiles the objects of one extension on a thread pool, the
    largest sources first (so that the longest compiles do not start last). setuptools'
    own --parallel runs whole extensions in parallel; the core is one extension. cffi's
    cffi_modules subclasses this class (it wraps whatever build_ext the distribution has)."""

    def build_extension(self, ext):
        jobs = compile_jobs(self.parallel)
        compiler = self.compiler
        serial = compiler.compile

        def compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                    extra_preargs=None, extra_postargs=None, depends=None):
            if jobs == 1:
                return serial(sources, output_dir, macros, include_dirs, debug,
                              extra_preargs, extra_postargs, depends)
            # the same steps as distutils' CCompiler.compile, the _compile calls on a pool
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
            todo = sorted(build, key=lambda obj: -_size(build[obj][0]))

            def one(obj):
                src, ext = build[obj]
                compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for future in [pool.submit(one, obj) for obj in todo]:
                    future.result()  # the first failure is raised (after the others end)
            return objects

        compiler.compile = compile
        # no run path into the interpreter's own lib directory (some Pythons' LDSHARED carries
        # -Wl,-rpath,<their prefix>/lib): an extension module loads no libpython, and the wheel
        # must not name a directory of the machine that built it
        linker = compiler.linker_so
        compiler.linker_so = [a for a in linker if not a.startswith(("-Wl,-rpath", "-Wl,-R"))]
        saved = dict(os.environ)
        for key, value in COMPILER_MALLOC_ENV.items():
            os.environ.setdefault(key, value)
        try:
            super().build_extension(ext)
        finally:
            del compiler.compile  # back to the class's method
            compiler.linker_so = linker
            os.environ.clear()
            os.environ.update(saved)


def _size(path: str, seen: set[str] | None = None) -> int:
    """A source's size in bytes with the files it includes by a path relative to it (each
    once; a part wrapper of csrc/parts includes its kernel file, softmax_relaxed.c its body
    header): how long it compiles, roughly."""
    seen = set() if seen is None else seen
    path = os.path.normpath(path)
    if path in seen:
        return 0
    seen.add(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return 0
    here = os.path.dirname(path)
    return len(text) + sum(_size(os.path.join(here, inc), seen)
                           for inc in re.findall(r'^\s*#\s*include "([^"]+)"', text, re.M))


def limited_api() -> bool:
    """Whether cffi builds the core for CPython's stable ABI (the _emu.abi3.so it names it):
    it does on CPython unless the interpreter is a debug or free-threaded build (cffi's
    setuptools_ext and _cffi_include.h)."""
    return (sys.implementation.name == "cpython" and not hasattr(sys, "gettotalrefcount")
            and not sysconfig.get_config_var("Py_GIL_DISABLED"))


# A stable-ABI core runs on every CPython from the oldest the package supports
# (requires-python in pyproject.toml), so the wheel says so: cp39-abi3, one wheel for all.
OPTIONS = {"bdist_wheel": {"py_limited_api": "cp39"}} if limited_api() else {}

setup(cffi_modules=["aclnn_py/_build.py:ffibuilder"],
      cmdclass={"build_ext": ParallelBuildExt}, options=OPTIONS)
