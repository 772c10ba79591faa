"""The ``aclnn-py`` command line (click)."""

from __future__ import annotations

import runpy
import sys
from importlib import resources
from pathlib import Path

import click


def _sample_dir() -> Path:
    return Path(str(resources.files("aclnn_py.samples")))


def bundled_samples() -> dict[str, Path]:
    """name -> path of every bundled sample program."""
    return {p.stem: p for p in sorted(_sample_dir().glob("*.py")) if not p.name.startswith("_")}


def _first_doc_line(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip().strip('"').strip()
        if line:
            return line
    return ""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="aclnn-py")
def main() -> None:
    """aclnn-py: run Ascend CANN aclnn host code on a CPU.

    The emulator mirrors CANN's two-phase operator API (aclnn_py.aclnn), a pyACL-compatible
    runtime (aclnn_py.acl) and a NumPy layer (aclnn_py.functional).
    """


@main.command()
def samples() -> None:
    """List the bundled sample programs (ports of CANN's official examples)."""
    for name, path in bundled_samples().items():
        click.echo(f"{name:<24} {_first_doc_line(path)}")


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(program: str, args: tuple) -> None:
    """Run a bundled sample by NAME, or any Python PROGRAM (a path) under the emulator.

    \b
    Examples:
      aclnn-py run softmax_backward
      aclnn-py run my_port.py -- --my-flag

    The exit code is the program's: a sample prints what CANN's example prints and exits 0, or
    prints the failing call and its code and exits non-zero.
    """
    found = bundled_samples()
    if program in found:
        path = found[program]
    else:
        path = Path(program)
        if path.suffix != ".py" or not path.is_file():
            raise click.UsageError(
                f"{program!r} is neither a bundled sample nor a Python file. "
                f"Samples: {', '.join(found) or 'none'}"
            )
    saved = sys.argv[:]
    sys.argv = [str(path), *args]
    try:
        runpy.run_path(str(path), run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            click.echo(str(exc.code), err=True)
    finally:
        sys.argv = saved
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
