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


# ------------------------------------------------------------------------ ops, explain ----

DTYPE_NAMES = {"float32": "ACL_FLOAT", "float": "ACL_FLOAT", "float16": "ACL_FLOAT16",
               "half": "ACL_FLOAT16", "bfloat16": "ACL_BF16", "bf16": "ACL_BF16",
               "float64": "ACL_DOUBLE", "double": "ACL_DOUBLE", "int32": "ACL_INT32"}
MATRIX_DTYPES = ("float32", "float16", "bfloat16", "float64", "int32")  # the kernels' dtypes


def matrix_cell(op, profile, dtype: int) -> str:
    """One cell of `aclnn-py ops`, from the declaration: "-" when the dtype tables of the
    profile's SoC class refuse ``dtype`` for a tensor, "no kernel" when the profile's product
    line has no kernel for the op, else "yes"."""
    if not op.accepts(profile.soc_class, dtype):
        return "-"
    return "yes" if profile.supports(op.name) else "no kernel"


def _acl_dtype(name: str) -> int:
    from .dtypes import aclDataType

    key = name.strip().lower()
    if key not in DTYPE_NAMES:
        raise click.BadParameter(f"{name!r}: expected one of {', '.join(sorted(DTYPE_NAMES))}")
    return int(aclDataType[DTYPE_NAMES[key]])


def _op(name: str):
    from .ops import REGISTRY

    key = name.replace("_", "").lower()
    for op_name, op in REGISTRY.items():
        if key in (op_name.lower(), op_name[len("aclnn"):].lower()):
            return op
    raise click.BadParameter(f"{name!r}: known operators: {', '.join(REGISTRY)}")


def _ints(text, what: str):
    if text is None:
        return None
    try:
        return [int(v) for v in str(text).replace("x", ",").split(",") if v.strip() != ""]
    except ValueError:
        raise click.BadParameter(f"{what} {text!r}: expected integers separated by commas") \
            from None


def _fake_tensor(shape, dtype: int, strides=None, base: int = 0x1000):
    """A tensor that is only planned, never run (explain, ops): no device memory behind it."""
    from .dtypes import aclFormat
    from .tensor import aclTensor, contiguous_strides, extent

    strides = tuple(strides) if strides is not None else contiguous_strides(shape)
    if len(strides) != len(shape):
        raise click.BadParameter(f"--strides has {len(strides)} values for {len(shape)} dims")
    lo, hi = extent(shape, strides, 0)
    return aclTensor(tuple(shape), dtype, strides, -lo, int(aclFormat.ACL_FORMAT_ND),
                     (hi - lo + 1,), base)


def plan_call(op, shape, dtype: int, out_dtype=None, dim=None, strides=None,
              out_strides=None, soc=None):
    """Phase 1 on planned-only tensors: (workspace_size, executor, ret)."""
    from .ops import get_workspace_size

    out_dtype = dtype if out_dtype is None else out_dtype
    values = {}
    for name in op.tensors:
        is_out = name in op.outputs and name not in op.inputs
        values[name] = _fake_tensor(shape, out_dtype if is_out else dtype,
                                    out_strides if is_out else strides)
    if "dim" in op.params:
        values["dim"] = -1 if dim is None else dim
    args = tuple(values[p] for p in op.params)
    return get_workspace_size(op, args, soc=soc, check_memory=False)


@main.command()
@click.option("--soc", default=None, help="SoC profile (default: ACLNN_EMU_SOC or Ascend910B4).")
def ops(soc) -> None:
    """Operator x dtype support matrix of a SoC, from the operators' declarations."""
    from . import config
    from . import soc as soc_mod
    from .ops import REGISTRY

    try:
        profile = soc_mod.profile(soc) if soc else config.soc_profile()
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--soc") from None
    click.echo(f"{profile.name} ({profile.product})")
    header = f"{'operator':<28}" + "".join(f"{d:>10}" for d in MATRIX_DTYPES)
    click.echo(header)
    click.echo("-" * len(header))
    for op in REGISTRY.values():
        cells = [matrix_cell(op, profile, _acl_dtype(d)) for d in MATRIX_DTYPES]
        click.echo(f"{op.name:<28}" + "".join(f"{c:>10}" for c in cells))
    click.echo("\n(yes: phase 1 accepts self/gradOutput/output and out of that dtype.)")


@main.command()
@click.argument("op")
@click.option("--shape", required=True, help="View shape of every tensor, e.g. 4,2 or 4x2.")
@click.option("--dtype", "dtype", required=True, help="Input dtype: float32, float16, ...")
@click.option("--out-dtype", default=None, help="Output dtype (default: the input dtype).")
@click.option("--dim", type=int, default=None, help="Softmax axis (default -1).")
@click.option("--strides", default=None, help="Element strides of the inputs (non-contiguous).")
@click.option("--out-strides", default=None, help="Element strides of the output.")
def explain(op, shape, dtype, out_dtype, dim, strides, out_strides) -> None:
    """Show the executor's plan and workspace layout for OP, without running it.

    \b
    Example:
      aclnn-py explain softmax_backward --shape 4,2 --dtype float16 --out-dtype float32 \\
          --strides 1,4
    """
    from .status import take_recent

    opdef = _op(op)
    dims = _ints(shape, "--shape")
    ws, executor, ret = plan_call(opdef, dims, _acl_dtype(dtype),
                                  None if out_dtype is None else _acl_dtype(out_dtype), dim,
                                  _ints(strides, "--strides"), _ints(out_strides,
                                                                     "--out-strides"))
    if ret:
        click.echo(take_recent() or f"{opdef.name}GetWorkspaceSize returned {ret}")
        sys.exit(1)
    click.echo(f"{opdef.name}: {len(executor.plan.steps)} step(s), workspace {ws} bytes")
    for i, line in enumerate(executor.describe(), 1):
        click.echo(f"  {i}. {line}")
    if not executor.plan.steps:
        click.echo("  (empty tensors: nothing runs)")
    if executor.plan.layout:
        click.echo("workspace layout (Align(n) = (n + 32 + 511) & ~511):")
        for what, offset, size in executor.plan.layout:
            click.echo(f"  [{offset:>8}, {offset + size:>8})  {what}")


@main.command()
@click.argument("code", required=False, type=int)
def codes(code) -> None:
    """What a status CODE means and what triggers it (all codes without an argument)."""
    from .codes import MEANING, describe

    if code is not None:
        click.echo(describe(code))
        if code not in MEANING:
            sys.exit(1)
        return
    for c in MEANING:
        click.echo(describe(c))


@main.command()
@click.option("--op", "op_names", multiple=True,
              help="Operator(s) to time (default: a standard set of cases).")
@click.option("--shape", default=None, help="Shape for --op, e.g. 1024,4096.")
@click.option("--dim", type=int, default=-1, show_default=True, help="Softmax axis for --op.")
@click.option("--dtype", "dtype", default="float32", show_default=True,
              help="float32, float16, bfloat16 or float64.")
@click.option("--repeat", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Timed runs per case (after one warm-up); the table shows medians.")
def bench(op_names, shape, dim, dtype, repeat) -> None:
    """Time operators through the aclnn API against a NumPy baseline measured in the same run.

    \b
    Examples:
      aclnn-py bench
      aclnn-py bench --op softmax --shape 4096,4096 --dtype float16 --repeat 9
    """
    from . import acl
    from . import bench as bench_mod
    from .dtypes import to_numpy

    np_dtype = to_numpy(_acl_dtype(dtype))
    if op_names:
        dims = _ints(shape, "--shape") if shape else [1024, 4096]
        cases = []
        for name in op_names:
            opdef = _op(name)
            if opdef.name not in bench_mod.BASELINES:
                raise click.BadParameter(f"{opdef.name} has no benchmark", param_hint="--op")
            cases.append((opdef.name, tuple(dims), dim if "dim" in opdef.params else None))
    else:
        cases = bench_mod.DEFAULT_CASES
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    results = []
    try:
        with click.progressbar(length=len(cases) * repeat * 2, label="benchmarking",
                               file=sys.stderr) as bar:
            for op_name, dims, d in cases:
                results.append(bench_mod.run_case(op_name, dims, d, np_dtype, repeat, stream,
                                                  lambda: bar.update(1)))
    finally:
        acl.rt.destroy_stream(stream)
        acl.rt.reset_device(0)
    click.echo(bench_mod.format_table(results))


if __name__ == "__main__":  # pragma: no cover
    main()
