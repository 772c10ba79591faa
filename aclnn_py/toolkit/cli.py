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

from .build import (
    ToolkitError,
    cache_error,
    cache_root,
    compiler,
    current_name,
    dir_problem,
    ensure_toolkit,
    run_tool,
)


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
    try:
        exe.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=exe.parent)
    except OSError as exc:
        raise cache_error(cache_root(), exc) from None
    os.close(fd)
    inc = toolkit / "include"
    cmd = [*compiler(), str(source), f"-I{inc}", f"-I{inc / 'aclnnop'}",
           f"-L{toolkit / 'lib64'}", "-lopapi", "-lascendcl", "-lnnopbase",
           f"-Wl,-rpath,{toolkit / 'lib64'}", "-o", tmp]
    try:
        proc = run_tool(cmd, f"compiling {source.name}")
    except ToolkitError:
        os.unlink(tmp)
        raise
    if proc.returncode:
        os.unlink(tmp)
        raise ToolkitError(f"compiling {source.name} failed:\n{proc.stdout}{proc.stderr}")
    os.replace(tmp, exe)  # atomic: a concurrent run sees the old file or the new one
    return exe


def custom_samples() -> dict[str, Path]:
    """The bundled custom operator samples (samples/custom/NAME: NAME.json, NAME.py with the
    kernel, main.cpp the host program)."""
    root = sample_dir().parent / "custom"
    return {p.name: p for p in sorted(root.glob("*")) if (p / "main.cpp").is_file()}


def _custom_package(name: str, toolkit: Path) -> tuple[Path, Path]:
    """(the vendor directory of sample ``name``'s package, its host program), built once per
    toolkit and sample files (aclnn-py opgen, then the host program's g++ line)."""
    from ..custom import CustomOpError
    from .opgen import generate

    src = custom_samples()[name]
    files = [src / f"{name}.json", src / f"{name}.py", src / "main.cpp"]
    h = hashlib.sha256(str(toolkit).encode())
    for f in files:
        h.update(f.read_bytes())
    out = cache_root() / "custom" / f"{name}-{h.hexdigest()[:16]}"
    vendor = out / "vendors" / "customize"
    exe = out / name
    if exe.exists():
        return vendor, exe
    try:
        generate([files[0]], files[1], out)
    except CustomOpError as exc:
        raise ToolkitError(str(exc)) from None
    except OSError as exc:
        raise cache_error(cache_root(), exc) from None
    inc = toolkit / "include"
    fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=out)
    os.close(fd)
    cmd = [*compiler(), str(files[2]), f"-I{inc}", f"-I{vendor / 'op_api' / 'include'}",
           f"-L{toolkit / 'lib64'}", f"-L{vendor / 'op_api' / 'lib'}", "-lascendcl",
           "-lcust_opapi", "-lacl_op_compiler", "-lnnopbase", "-o", tmp]
    try:
        proc = run_tool(cmd, f"compiling {files[2].name}")
    except ToolkitError:
        os.unlink(tmp)
        raise
    if proc.returncode:
        os.unlink(tmp)
        raise ToolkitError(f"compiling {files[2]} failed:\n{proc.stdout}{proc.stderr}")
    os.replace(tmp, exe)
    return vendor, exe


def run_cpp(name: str, args: tuple = ()) -> int:
    """Build (once) and run bundled C++ sample ``name``; its output goes to this process's
    stdout/stderr. Returns its exit code."""
    known = {**cpp_samples(), **custom_samples()}
    if name not in known:
        raise click.UsageError(f"{name!r} is not a bundled C++ sample. Samples: "
                               f"{', '.join(known) or 'none'}")
    try:
        toolkit = ensure_toolkit()
        if name in custom_samples():
            vendor, exe = _custom_package(name, toolkit)
            env = toolkit_env(toolkit)
            env["ASCEND_CUSTOM_OPP_PATH"] = str(vendor)
            env["LD_LIBRARY_PATH"] = f"{vendor / 'op_api' / 'lib'}:{env['LD_LIBRARY_PATH']}"
        else:
            exe = compile_sample(name, toolkit)
            env = toolkit_env(toolkit)
    except ToolkitError as exc:
        raise click.ClickException(str(exc)) from None
    sys.stdout.flush()
    return subprocess.run([str(exe), *args], env=env).returncode


@click.command()
@click.option("--rebuild", is_flag=True, help="Build it again even if it is up to date.")
@click.option("--prefix", "prefix", type=click.Path(file_okay=True, dir_okay=True),
              metavar="DIR",
              help="Lay the toolkit out at DIR as a CANN install, e.g. "
                   "~/Ascend/ascend-toolkit/latest (a new or empty directory, or one laid out "
                   "before, which is updated keeping opp/vendors).")
def toolkit(rebuild: bool, prefix) -> None:
    """Print the directory of a CANN-like toolkit install over the emulator.

    \b
    Laid out as CANN's (built on first use into a per-user cache, or at --prefix DIR):
      include/ (acl, aclnn, aclnnop)  lib64/libascendcl.so (+ libnnopbase.so, libopapi.so,
      libacl_op_compiler.so, ... as aliases)  runtime/{include,lib64} and
      <arch>-linux/{include,lib64}  opp/vendors/  python/site-packages/
      bin/setenv.bash and set_env.sh
    Compile CANN's C++ examples unchanged:

    \b
      source "$(aclnn-py toolkit)/set_env.sh"
      g++ softmax_backward.cpp -I$ASCEND_HOME_PATH/include \\
          -I$ASCEND_HOME_PATH/include/aclnnop -L$ASCEND_HOME_PATH/lib64 \\
          -lopapi -lascendcl -lnnopbase -o softmax_backward
      ./softmax_backward

    \b
    or run a CANN operator project's own run.sh (after 'aclnn-py opgen ... --install'):
      aclnn-py toolkit --prefix ~/Ascend/ascend-toolkit/latest
      ASCEND_INSTALL_PATH=~/Ascend/ascend-toolkit/latest bash run.sh

    \b
    setenv.bash also puts python/site-packages on PYTHONPATH, where acl.py makes
    'import acl' (pyACL) give the emulator's aclnn_py.acl, as CANN's does for pyACL.
    'aclnn-py cache clean' removes the toolkits nothing uses any more.

    See docs/c_api.md.
    """
    from .build import PrefixError, install_prefix

    try:
        if prefix is not None:
            path = install_prefix(prefix, rebuild=rebuild)
        else:
            path = ensure_toolkit(rebuild=rebuild)
    except PrefixError as exc:
        raise click.BadParameter(str(exc), param_hint="'--prefix'") from None
    except ToolkitError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(str(path))


def _size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size if path.exists() or path.is_symlink() else 0
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


def cache_entries() -> list[tuple[Path, str]]:
    """The cache's entries with what each is: ``current toolkit`` (the one this package and
    interpreter use), ``stale toolkit`` (another version, interpreter or set of files),
    ``compiled samples``, ``unfinished build`` (left by an interrupted build) or ``other``."""
    root = cache_root()
    if not root.is_dir():
        return []
    current = current_name()
    out = []
    for p in sorted(root.iterdir()):
        if p.name == current:
            kind = "current toolkit"
        elif p.name.startswith("toolkit-"):
            kind = "stale toolkit"
        elif p.name in ("samples", "custom"):  # C++ samples; custom operator samples
            kind = "compiled samples"
        elif p.name.startswith("ophost-driver-"):  # opgen's op_host reader (toolkit/ophost.py)
            kind = "compiled samples"
        elif p.name.startswith((".build-", ".old-")):
            kind = "unfinished build"
        elif p.name.startswith(".toolkit-") and p.name.endswith(".lock"):
            kind = "lock"
        else:
            kind = "other"
        out.append((p, kind))
    return out


def _remove(path: Path) -> None:
    """Remove a cache entry; a directory is renamed aside first, so that a concurrent reader sees
    the whole entry or none (a program already running from a removed toolkit keeps its mapped
    library)."""
    import shutil

    if path.is_dir() and not path.is_symlink():
        trash = Path(tempfile.mkdtemp(prefix=".old-clean-", dir=path.parent))
        try:
            os.rename(path, trash / path.name)
        except OSError:
            shutil.rmtree(trash, ignore_errors=True)
            raise
        shutil.rmtree(trash, ignore_errors=True)
    else:
        path.unlink()


@click.group(invoke_without_command=True)
@click.pass_context
def cache(ctx: click.Context) -> None:
    """Show aclnn-py's cache: toolkits and compiled C++ samples.

    \b
    The cache is $XDG_CACHE_HOME/aclnn-py (default ~/.cache/aclnn-py). Each package version,
    interpreter and set of package files builds a toolkit of its own there; 'aclnn-py cache
    clean' removes the ones nothing uses any more (docs/c_api.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    root = cache_root()
    click.echo(f"cache: {root}")
    entries = [e for e in cache_entries() if e[1] != "lock"]
    if not entries:
        click.echo("(empty)")
        return
    for path, kind in entries:
        click.echo(f"{_human(_size(path)):>10}  {kind:<17} {path.name}")


@cache.command()
@click.option("--all", "everything", is_flag=True,
              help="Remove the current toolkit as well (it is rebuilt on its next use).")
def clean(everything: bool) -> None:
    """Remove stale toolkits, compiled samples and unfinished builds (with --all: everything).

    The current toolkit stays unless --all is given. Compiled samples are rebuilt on their next
    'aclnn-py run NAME --lang cpp'. An unfinished build is removed only when no build holds its
    lock.
    """
    import fcntl

    freed = removed = 0
    for path, kind in cache_entries():
        if kind == "current toolkit" and not everything:
            continue
        if kind in ("other", "lock"):
            continue
        if kind == "unfinished build":
            key = path.name.split("-")[1] if path.name.startswith(".build-") else ""
            lock = path.parent / f".toolkit-{key}.lock"
            if key and lock.exists():
                with open(lock, "a") as fh:  # a build in progress holds it: leave its directory
                    try:
                        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        continue
                    try:
                        size = _size(path)
                        _remove(path)
                    finally:
                        fcntl.flock(fh, fcntl.LOCK_UN)
                freed += size
                removed += 1
                continue
        size = _size(path)
        try:
            _remove(path)
        except OSError as exc:
            raise click.ClickException(f"cannot remove {path}: {exc}") from None
        freed += size
        removed += 1
    click.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'}, {_human(freed)} freed "
               f"({cache_root()})")


@click.command()
@click.argument("definitions", nargs=-1, required=True, type=click.Path())
@click.option("--kernels", "kernels", required=True, type=click.Path(dir_okay=False),
              help="A Python module whose function <op_snake_case> (e.g. add_custom) is each "
                   "operator's NumPy kernel.")
@click.option("-o", "--output", "output", type=click.Path(file_okay=False),
              help="Where to write vendors/<vendor>/... (or give --install).")
@click.option("--install", "install", is_flag=True,
              help="Install the package as CANN's custom_opp_<os>_<arch>.run does: into "
                   "$ASCEND_HOME_PATH/opp/vendors/<vendor> (the toolkit of the sourced "
                   "setenv.bash, else the default toolkit), first in opp/vendors/config.ini.")
@click.option("--install-path", "install_path", type=click.Path(file_okay=False),
              metavar="DIR",
              help="With --install: install into DIR/vendors/<vendor> instead (source its "
                   "bin/set_env.bash to use it).")
@click.option("--vendor", default="customize", show_default=True,
              help="The vendor directory name, as CANN's custom operator packages have.")
@click.option("-I", "--include", "include_dirs", multiple=True, metavar="DIR",
              help="Also search DIR for the headers of op_host sources (repeatable, in order; "
                   "after the toolkit's headers, before the directories found by themselves: "
                   "the source's own, its ../op_kernel, the nearest src/common/inc).")
def opgen(definitions: tuple, kernels: str, output, install: bool, install_path,
          vendor: str, include_dirs: tuple) -> None:
    """Build a custom operator package from msOpGen DEFINITIONS and NumPy kernels.

    A definition is msOpGen's JSON, or an op_host C++ source (.cpp, .cc, .cxx: the file with
    the OpDef subclass and OP_ADD) or a directory of them, compiled with the toolkit's op_host
    headers to read the definitions; its headers are also searched for in -I DIRs, in the
    source's own directory, in a sibling ../op_kernel and in the nearest ancestor's
    src/common/inc (cann-ops), each when it exists.

    \b
    Writes, laid out as CANN's custom operator packages:
      VENDORS/VENDOR/op_api/include/aclnn_<op>.h   the generated two-phase API
      VENDORS/VENDOR/op_api/lib/libcust_opapi.so   its library
      VENDORS/VENDOR/bin/set_env.bash              ASCEND_CUSTOM_OPP_PATH, LD_LIBRARY_PATH
    where VENDORS is OUTPUT/vendors (-o OUTPUT), or with --install, as CANN's package
    installer: $ASCEND_HOME_PATH/opp/vendors (recorded in its config.ini), or
    DIR/vendors (--install-path DIR). Installing a vendor again replaces its operators.

    \b
    A CANN operator project's own run.sh and CMakeLists then build and run:
      aclnn-py toolkit --prefix ~/Ascend/ascend-toolkit/latest
      source ~/Ascend/ascend-toolkit/latest/bin/setenv.bash
      aclnn-py opgen add_custom.json --kernels add_custom.py --install
      cd AclNNInvocation && bash run.sh

    \b
    Or by hand, for a CANN host program such as AclNNInvocationNaive:
      export ASCEND_CUSTOM_OPP_PATH=OUTPUT/vendors/VENDOR
      source "$(aclnn-py toolkit)/set_env.sh"
      g++ main.cpp -I$ASCEND_HOME_PATH/include -I$ASCEND_CUSTOM_OPP_PATH/op_api/include \\
          -L$ASCEND_HOME_PATH/lib64 -L$ASCEND_CUSTOM_OPP_PATH/op_api/lib \\
          -lascendcl -lcust_opapi -lacl_op_compiler -lnnopbase -o main

    Prints the vendor directory. See docs/custom_ops.md.
    """
    from ..custom import CustomOpError
    from .opgen import check_vendor, generate
    from .opgen import install as install_package

    for path in (*definitions, kernels):
        if not (os.path.isfile(path) or (path != kernels and os.path.isdir(path))):
            raise click.BadParameter(f"{path!r}: no such file",
                                     param_hint="'--kernels'" if path == kernels
                                     else "'DEFINITIONS'")
    if install_path is not None and not install:
        raise click.UsageError("--install-path DIR is where --install puts the package: give "
                               "--install too")
    if install and output is not None:
        raise click.UsageError(f"-o {output!r} and --install are exclusive: -o writes the "
                               "package to a directory, --install installs it into a toolkit "
                               "(or --install-path)")
    if not install and output is None:
        raise click.UsageError("give -o DIR (write the package there) or --install")
    for d in include_dirs:
        if not os.path.isdir(d):
            raise click.BadParameter(f"{d!r}: no such directory", param_hint="'-I' / '--include'")
    try:
        check_vendor(vendor)
    except CustomOpError as exc:
        raise click.BadParameter(str(exc).replace(f"--vendor {vendor!r}: ", f"{vendor!r}: ", 1),
                                 param_hint="'--vendor'") from None
    if output is not None:
        _check_creatable(output, "'-o' / '--output'")
    if install_path is not None:
        _check_creatable(install_path, "'--install-path'")
    try:
        if install:
            root = install_package(list(definitions), kernels, vendor, install_path,
                                   include_dirs=include_dirs)
        else:
            root = generate(list(definitions), kernels, output, vendor,
                            include_dirs=include_dirs)
    except CustomOpError as exc:
        raise click.ClickException(str(exc)) from None
    except ToolkitError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        where = exc.filename or install_path or output
        raise click.ClickException(f"cannot write the package: {exc.strerror or exc} "
                                   f"({where})") from None
    click.echo(str(root))



def _check_creatable(path: str, hint: str) -> None:
    """BadParameter (exit 2) unless directory ``path`` exists writable or can be created by
    this user (checked before the build, so that the mistake is not found out after it)."""
    problem = dir_problem(Path(os.path.abspath(os.path.expanduser(path))))
    if problem:
        raise click.BadParameter(f"{path!r}: {problem}", param_hint=hint)
