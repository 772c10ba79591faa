"""``aclnn-py toolkit`` and ``aclnn-py run NAME --lang cpp`` (registered by aclnn_py/cli.py)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import click

from .build import ToolkitError, cache_root, compiler, ensure_toolkit


def sample_dir() -> Path:
    """The bundled C++ ports of CANN's examples (samples/c, shipped as aclnn_py.samples/c)."""
    return Path(str(resources.files("aclnn_py.samples"))) / "c"


def cpp_samples() -> dict[str, Path]:
    return {p.stem: p for p in sorted(sample_dir().glob("*.cpp"))}


def toolkit_env(toolkit: Path, env=None) -> dict[str, str]:
    """``env`` (default: os.environ) with what set_env.sh exports."""
    env = dict(os.environ if env is None else env)
    env["ASCEND_TOOLKIT_HOME"] = env["ASCEND_HOME_PATH"] = str(toolkit)
    lib64 = str(toolkit / "lib64")
    env["LD_LIBRARY_PATH"] = lib64 + (":" + env["LD_LIBRARY_PATH"]
                                      if env.get("LD_LIBRARY_PATH") else "")
    return env


def compile_sample(name: str, toolkit: Path) -> Path:
    """The executable of bundled sample ``name``, compiled once per toolkit and source (the g++
    line of CANN's docs, plus an rpath so it runs from anywhere)."""
    source = cpp_samples()[name]
    key = hashlib.sha256(str(toolkit).encode() + b"\0" + source.read_bytes()).hexdigest()[:16]
    exe = cache_root() / "samples" / f"{name}-{key}"
    if exe.exists():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=exe.parent)
    os.close(fd)
    inc = toolkit / "include"
    cmd = [*compiler(), str(source), f"-I{inc}", f"-I{inc / 'aclnnop'}",
           f"-L{toolkit / 'lib64'}", "-lopapi", "-lascendcl", "-lnnopbase",
           f"-Wl,-rpath,{toolkit / 'lib64'}", "-o", tmp]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        os.unlink(tmp)
        raise ToolkitError(f"compiling {source.name} failed:\n{proc.stdout}{proc.stderr}")
    os.replace(tmp, exe)  # atomic: a concurrent run sees the old file or the new one
    return exe


def run_cpp(name: str, args: tuple = ()) -> int:
    """Build (once) and run bundled C++ sample ``name``; its output goes to this process's
    stdout/stderr. Returns its exit code."""
    if name not in cpp_samples():
        raise click.UsageError(f"{name!r} is not a bundled C++ sample. Samples: "
                               f"{', '.join(cpp_samples()) or 'none'}")
    try:
        toolkit = ensure_toolkit()
        exe = compile_sample(name, toolkit)
    except ToolkitError as exc:
        raise click.ClickException(str(exc)) from None
    sys.stdout.flush()
    return subprocess.run([str(exe), *args], env=toolkit_env(toolkit)).returncode


@click.command()
@click.option("--rebuild", is_flag=True, help="Build it again even if it is up to date.")
def toolkit(rebuild: bool) -> None:
    """Print the directory of a CANN-like toolkit install over the emulator.

    \b
    It holds CANN's headers (include/acl, include/aclnn, include/aclnnop), lib64/libascendcl.so
    (with libnnopbase.so, libopapi.so and libopapi_nn.so as aliases) and set_env.sh; built on
    first use into a per-user cache. Compile CANN's C++ examples unchanged:

    \b
      source "$(aclnn-py toolkit)/set_env.sh"
      g++ test_aclnn_softmax_grad.cpp -I$ASCEND_HOME_PATH/include \\
          -I$ASCEND_HOME_PATH/include/aclnnop -L$ASCEND_HOME_PATH/lib64 \\
          -lopapi -lascendcl -lnnopbase -o test_aclnn_softmax_grad
      ./test_aclnn_softmax_grad

    See docs/c_api.md.
    """
    try:
        path = ensure_toolkit(rebuild=rebuild)
    except ToolkitError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(str(path))
