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


def _bench_op(name: str):
    """The operator --op names (aclnnSoftmax, Softmax, softmax, softmax_backward, ...)."""
    from . import bench as bench_mod
    from .ops import REGISTRY

    key = name.replace("_", "").replace("-", "").lower()
    for op_name in REGISTRY:
        if key in (op_name.lower(), op_name[len("aclnn"):].lower()):
            if op_name not in bench_mod.BASELINES:
                have = ", ".join(bench_mod.short_name(n) for n in bench_mod.BASELINES)
                raise click.BadParameter(f"{name!r}: {op_name} has no benchmark (operators with "
                                         f"one: {have})", param_hint="'--op'")
            return op_name
    raise click.BadParameter(f"{name!r}: not an operator; known: "
                             f"{', '.join(bench_mod.short_name(n) for n in REGISTRY)}",
                             param_hint="'--op'")


def _positive_ints(text: str, option: str, minimum: int) -> list:
    values = []
    for part in text.replace("x", ",").split(","):
        part = part.strip()
        try:
            v = int(part)
        except ValueError:
            raise click.BadParameter(f"{text!r}: expected integers separated by commas",
                                     param_hint=f"'{option}'") from None
        if v < minimum:
            raise click.BadParameter(f"{text!r}: every value must be at least {minimum}",
                                     param_hint=f"'{option}'")
        values.append(v)
    return values


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise click.BadParameter('needs matplotlib: pip install "aclnn-py[plot]"',
                                 param_hint="'--plot'") from None


@main.command()
@click.option("--op", "op_names", multiple=True, metavar="OP",
              help="Operator to time (repeatable; default: every operator with a benchmark).")
@click.option("--dtype", "dtype_names", multiple=True,
              type=click.Choice(["float32", "float16", "bfloat16", "float64"]),
              help="Dtype (repeatable; default: float32, float16 and bfloat16).")
@click.option("--shape", default=None, metavar="DIMS",
              help="One shape for every case instead of the declared layouts, e.g. 4096,4096.")
@click.option("--dim", type=int, default=None,
              help="Softmax axis with --shape (default -1; the elementwise operators ignore it).")
@click.option("--threads", "threads_text", default=None, metavar="N[,N...]",
              help="Kernel (and PyTorch) thread counts (default: 1 and the cores available).")
@click.option("--cache", type=click.Choice(["hot", "cold", "both"]), default="both",
              show_default=True,
              help="cold: caches evicted before each timed call; hot: warm from the warm-up.")
@click.option("--repeat", type=click.IntRange(min=1), default=5, show_default=True,
              help="Timed calls per contender and row (after one warm-up); medians are shown.")
@click.option("--json", "json_path", default=None, metavar="FILE",
              help="Write the records and a machine header as JSON (- for stdout).")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              help='Plot the ratios to the floor (needs matplotlib: pip install "aclnn-py[plot]").')
@click.option("--no-torch", is_flag=True, help="Do not time PyTorch even when it is installed.")
@click.option("--no-numpy", is_flag=True, help="Do not time the NumPy baseline.")
def bench(op_names, dtype_names, shape, dim, threads_text, cache, repeat, json_path, plot_path,
          no_torch, no_numpy) -> None:
    """Time operators through the aclnn API against a memory floor, NumPy and PyTorch, measured
    in the same run, with each output's max error against a float64 golden.

    Every operator x dtype x layout x thread count, cold and hot (docs/performance.md).

    \b
    Examples:
      aclnn-py bench
      aclnn-py bench --op softmax --dtype float16 --threads 2 --cache cold
      aclnn-py bench --op softmax --shape 32,1024 --dim -1 --cache hot --repeat 50
      aclnn-py bench --json results.json --plot results.png
    """
    import json

    from . import bench as bench_mod
    from . import config

    ops = list(dict.fromkeys(_bench_op(n) for n in op_names)) or list(bench_mod.BASELINES)
    dts = list(dict.fromkeys(dtype_names)) or list(bench_mod.DEFAULT_DTYPES)
    dims = None
    if shape is not None:
        dims = _positive_ints(shape, "--shape", 1)
        if not 1 <= len(dims) <= 8:
            raise click.BadParameter(f"{shape!r}: 1 to 8 dims", param_hint="'--shape'")
        d = -1 if dim is None else dim
        if not -len(dims) <= d < len(dims):
            raise click.BadParameter(f"{dim} is out of range for a {len(dims)}-d shape "
                                     f"([{-len(dims)}, {len(dims) - 1}])", param_hint="'--dim'")
        dim = d
    elif dim is not None:
        raise click.BadParameter("needs --shape (the declared layouts have their own axes)",
                                 param_hint="'--dim'")
    threads = (list(dict.fromkeys(_positive_ints(threads_text, "--threads", 1)))
               if threads_text is not None else bench_mod.default_threads())
    most = bench_mod.max_threads()
    if max(threads) > most:
        raise click.BadParameter(f"{threads_text!r}: at most {most} threads",
                                 param_hint="'--threads'")
    caches = ["cold", "hot"] if cache == "both" else [cache]
    if json_path not in (None, "-"):
        parent = Path(json_path).resolve().parent
        if not parent.is_dir():
            raise click.BadParameter(f"{json_path!r}: no directory {str(parent)!r}",
                                     param_hint="'--json'")
    if plot_path is not None:
        _require_matplotlib()
        if Path(plot_path).suffix.lower() not in (".png", ".svg", ".pdf"):
            raise click.BadParameter(f"{plot_path!r}: expected a .png, .svg or .pdf file",
                                     param_hint="'--plot'")
        if not Path(plot_path).resolve().parent.is_dir():
            raise click.BadParameter(f"{plot_path!r}: its directory does not exist",
                                     param_hint="'--plot'")
    try:
        config.soc_profile()
    except config.ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    cases, skipped = bench_mod.plan_cases(ops, dts, None if dims is None else tuple(dims), dim)
    cases = [c for c in cases if not (c.hot_only and caches == ["cold"])]
    if not cases:
        if skipped:
            why = "; ".join(f"{bench_mod.short_name(o)} {d}: {r}" for o, d, r in skipped)
            raise click.BadParameter(f"nothing to run: {why}", param_hint="'--dtype'")
        raise click.BadParameter("cold: nothing to run (the declared small cases are hot only)",
                                 param_hint="'--cache'")

    torch = bench_mod.import_torch(not no_torch)
    out = sys.stderr if json_path == "-" else sys.stdout
    try:
        runner = bench_mod.Runner(threads, caches, repeat, use_numpy=not no_numpy, torch=torch)
    except bench_mod.BenchError as exc:
        raise click.ClickException(str(exc)) from None
    records = []
    try:
        total = sum(runner.rows(c) for c in cases)
        with click.progressbar(length=total, label="benchmarking", file=sys.stderr,
                               item_show_func=lambda s: s) as bar:
            for case in cases:
                records += runner.run(case, lambda s: bar.update(1, s))
    except bench_mod.BenchError as exc:
        raise click.ClickException(str(exc)) from None
    except MemoryError:
        raise click.ClickException("out of memory: try a smaller --shape") from None
    finally:
        runner.close()
    machine = bench_mod.machine_info(threads, torch, not no_numpy)
    machine["repeat"] = repeat
    click.echo(bench_mod.format_table(records, machine), file=out)
    for o, d, r in skipped:
        click.echo(f"skipped {bench_mod.short_name(o)} {d}: {r}", file=out)
    if torch is None and not no_torch:
        click.echo('PyTorch is not installed: pip install "aclnn-py[torch]" (the CPU wheel: '
                   "pip install torch --index-url https://download.pytorch.org/whl/cpu)",
                   file=out)
    if json_path is not None:
        text = json.dumps(bench_mod.to_json(records, machine), indent=1)
        if json_path == "-":
            click.echo(text)
        else:
            Path(json_path).write_text(text + "\n", encoding="utf-8")
    if plot_path is not None:
        bench_mod.plot(records, plot_path, machine)
        click.echo(f"plot: {plot_path}", file=out)


if __name__ == "__main__":  # pragma: no cover
    main()
