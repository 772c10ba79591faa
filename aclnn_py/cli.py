"""The ``aclnn-py`` command line (click)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import runpy
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any, Optional

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
@click.pass_context
def main(ctx: click.Context) -> None:
    """aclnn-py: run Ascend CANN aclnn host code on a CPU.

    The emulator mirrors CANN's two-phase operator API (aclnn_py.aclnn), a pyACL-compatible
    runtime (aclnn_py.acl) and a NumPy layer (aclnn_py.functional).
    """
    if ctx.invoked_subcommand in QUIET_COMMANDS:
        _no_trace_here()


# commands that make no runtime calls: with ACLNN_EMU_TRACE set they write no (empty) trace over
# the one the user's program wrote
QUIET_COMMANDS = frozenset({"samples", "ops", "codes", "env", "toolkit", "cache", "opgen"})


@main.command()
def samples() -> None:
    """List the bundled sample programs (ports of CANN's official examples)."""
    for name, path in bundled_samples().items():
        click.echo(f"{name:<24} {_first_doc_line(path)}")


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--lang", type=click.Choice(["python", "cpp"]), default="python", show_default=True,
              help="cpp: build and run the sample's C++ port against the toolkit (docs/c_api.md).")
@click.option("--trace", "trace", metavar="FILE", default=None,
              help="Write a Chrome / Perfetto trace of the run to FILE (ACLNN_EMU_TRACE; "
                   "docs/diagnostics.md).")
def run(program: str, args: tuple, lang: str, trace: Optional[str]) -> None:
    """Run a bundled sample by NAME, or any Python PROGRAM (a path) under the emulator.

    \b
    Examples:
      aclnn-py run softmax_backward
      aclnn-py run softmax_backward --lang cpp
      aclnn-py run my_port.py -- --my-flag

    A program written for pyACL runs unmodified: while it runs, ``import acl`` gives the
    emulator's aclnn_py.acl, unless a real pyACL is importable (docs/pyacl.md).

    The exit code is the program's: a sample prints what CANN's example prints and exits 0, or
    prints the failing call and its code and exits 1. A program that exits with a status code
    (above 255, which no shell can carry) exits 1 after printing the code's name and the
    messages failed calls left (acl.get_recent_err_msg).
    """
    if trace:
        _check_trace_path(trace)
        os.environ["ACLNN_EMU_TRACE"] = trace
    if lang == "cpp":
        from .toolkit.cli import run_cpp

        # the C++ program writes the trace (ACLNN_EMU_TRACE is in its environment); this
        # process has nothing to add, and its empty trace written at exit would replace it
        _no_trace_here()
        sys.exit(run_cpp(program, args))
    if trace:
        from . import diagnostics

        diagnostics.refresh()
    found = bundled_samples()
    if program in found:
        path = found[program]
    else:
        path = Path(program)
        if not path.exists():
            raise click.BadParameter(
                f"{program!r} is neither a bundled sample nor an existing file. "
                f"Samples: {', '.join(found) or 'none'}", param_hint="'PROGRAM'")
        if path.suffix != ".py" or not path.is_file():
            raise click.BadParameter(
                f"{program!r} is not a Python file (*.py) nor a bundled sample. "
                f"Samples: {', '.join(found) or 'none'}", param_hint="'PROGRAM'")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))  # as `python FILE.py` does
    try:
        with pyacl_shim():
            runpy.run_path(str(path), run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except Exception as exc:  # as python prints it: the program's frames only, exit code 1
        _print_program_traceback(exc, path)
        code = 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    sys.exit(code)


def _check_trace_path(trace: str) -> None:
    """--trace FILE must be writable before the program runs (not found out at its exit)."""
    target = Path(trace)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise click.BadParameter(f"{trace!r} is a directory; give a file name",
                                 param_hint="'--trace'")
    if not parent.is_dir():
        raise click.BadParameter(f"{trace!r}: the directory {str(parent)!r} does not exist",
                                 param_hint="'--trace'")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists()
                                                     and not os.access(target, os.W_OK)):
        raise click.BadParameter(f"{trace!r}: not writable by this user",
                                 param_hint="'--trace'")


def _no_trace_here() -> None:
    """Stop this process from writing a trace file (ACLNN_EMU_TRACE stays in the environment for
    the programs it starts): the CLI's own commands make no calls worth tracing, and an empty
    trace written at exit would replace the one the user's program wrote."""
    from .diagnostics import wrap

    cur = wrap.current()
    tracer = wrap.active().tracer
    if tracer is not None:
        tracer.discard()
    if cur.trace:
        wrap.configure(cur.checks, None, cur.log_level, cur.log_stdout)


def _print_program_traceback(exc: BaseException, path: Path) -> None:
    """Print ``exc``'s traceback as ``python PROGRAM`` would: from the program's first frame
    (the frames of click, this CLI and runpy that ran it are left out)."""
    import traceback

    tb = exc.__traceback__
    target = os.path.realpath(path)
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    sys.stdout.flush()
    traceback.print_exception(type(exc), exc, tb if tb is not None else exc.__traceback__)
    sys.stderr.flush()


@contextlib.contextmanager
def pyacl_shim() -> Iterator[bool]:
    """While the block runs, ``import acl`` gives aclnn_py.acl, when no real pyACL (or other
    module named acl) is importable. Yields whether the shim is in place."""
    installed = False
    if "acl" not in sys.modules:
        try:
            real = importlib.util.find_spec("acl") is not None
        except (ImportError, ValueError):
            real = True  # something named acl is there; leave it to the program
        if not real:
            from . import acl as _acl

            sys.modules["acl"] = _acl
            installed = True
    try:
        yield installed
    finally:
        if installed and sys.modules.get("acl") is not None and \
                getattr(sys.modules["acl"], "__name__", "") == "aclnn_py.acl":
            del sys.modules["acl"]


def _exit_code(code: Any) -> int:
    """The process exit code for a program's SystemExit argument: 0-255 as is; a status code
    (negative or above 255) becomes 1, with its name and the pending error messages on stderr;
    anything else is printed and becomes 1, as Python does."""
    if code is None:
        return 0
    if isinstance(code, bool) or not isinstance(code, int):
        click.echo(str(code), err=True)
        return 1
    if 0 <= code <= 255:
        return code
    from .codes import CANN
    from .status import code_name, take_recent

    what = f" {code_name(code)}: {CANN[code]}" if code in CANN else ""
    click.echo(f"aclnn-py run: the program exited with status {code}{what}", err=True)
    pending = take_recent()
    if pending:
        click.echo(pending, err=True)
    return 1


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


def _acl_dtype(name: str, option: str = "--dtype") -> int:
    from .dtypes import aclDataType

    key = name.strip().lower()
    if key not in DTYPE_NAMES:
        raise click.BadParameter(f"{name!r} is not a dtype; expected one of "
                                 f"{', '.join(sorted(DTYPE_NAMES))}", param_hint=f"'{option}'")
    return int(aclDataType[DTYPE_NAMES[key]])


def _op(name: str):
    from .ops import REGISTRY

    key = name.replace("_", "").lower()
    for op_name, op in REGISTRY.items():
        if key in (op_name.lower(), op_name[len("aclnn"):].lower()):
            return op
    raise click.BadParameter(f"{name!r} is not an operator; known operators (with or without "
                             f"the aclnn prefix, any case, '_' ignored): {', '.join(REGISTRY)}",
                             param_hint="'OP'")


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _ints(text, what: str, minimum: int = INT64_MIN):
    """A comma- (or x-) separated list of int64 values, each at least ``minimum``; '' is the
    empty list (a 0-d shape). BadParameter (exit 2) names the option and the entry."""
    if text is None:
        return None
    text = str(text).strip()
    if text == "":
        return []
    values = []
    for i, part in enumerate(text.replace("x", ",").split(",")):
        try:
            v = int(part.strip())
        except ValueError:
            raise click.BadParameter(f"{text!r}: entry {i} ({part.strip()!r}) is not an "
                                     "integer; expected integers separated by commas",
                                     param_hint=f"'{what}'") from None
        if not minimum <= v <= INT64_MAX:
            rule = ("must not be negative" if minimum == 0 and v < 0 else
                    f"must fit int64_t [{minimum}, {INT64_MAX}]")
            raise click.BadParameter(f"{text!r}: entry {i} ({v}) {rule}",
                                     param_hint=f"'{what}'")
        values.append(v)
    return values


def _soc(name: Optional[str]):
    """--soc SOC, or the configured SoC (ACLNN_EMU_SOC); BadParameter for an unknown name."""
    from . import config
    from . import soc as soc_mod

    if name is None:
        try:
            return config.soc_profile()
        except ValueError as exc:  # ConfigError: the variable's own message names it
            raise click.UsageError(f"{exc} (set it to a known SoC, unset it or pass --soc)"
                                   ) from None
    if not name.strip():
        raise click.BadParameter(f"an empty SoC name; known SoCs: {', '.join(soc_mod.PROFILES)}"
                                 " (or leave --soc out for ACLNN_EMU_SOC or Ascend910B4)",
                                 param_hint="'--soc'")
    try:
        return soc_mod.profile(name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--soc'") from None


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=1))


def _fake_tensor(shape, dtype: int, strides=None, base: int = 0x1000):
    """A tensor that is only planned, never run (explain, ops): no device memory behind it."""
    from .dtypes import aclFormat
    from .tensor import aclTensor, contiguous_strides, extent

    strides = tuple(strides) if strides is not None else contiguous_strides(shape)
    if len(strides) != len(shape):
        raise click.BadParameter(f"{len(strides)} value(s) for a {len(shape)}-d --shape: give "
                                 "one stride per dim", param_hint="'--strides' / '--out-strides'")
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
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: soc, product, soc_class, dtypes, operators (docs/dtypes.md).")
def ops(soc, as_json) -> None:
    """Operator x dtype support matrix of a SoC, from the operators' declarations."""
    from .ops import REGISTRY

    profile = _soc(soc)
    if as_json:
        _echo_json({
            "soc": profile.name, "product": profile.product, "soc_class": profile.soc_class,
            "dtypes": list(MATRIX_DTYPES),
            "operators": {op.name: {d: matrix_cell(op, profile, _acl_dtype(d))
                                    for d in MATRIX_DTYPES} for op in REGISTRY.values()},
        })
        return
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
@click.option("--soc", default=None, help="SoC profile (default: ACLNN_EMU_SOC or Ascend910B4).")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: operator, soc, status, name, message, workspace_size, steps, "
                   "layout, accumulation (docs/two_phase_api.md).")
def explain(op, shape, dtype, out_dtype, dim, strides, out_strides, soc, as_json) -> None:
    """Show the executor's plan and workspace layout for OP, without running it.

    Exit 2 for arguments that are not valid text (an unknown operator or dtype, a dim or
    stride that is not an int64, a negative shape dim); exit 1 when phase 1 rejects the call,
    with CANN's message (e.g. 161002 for a dim out of range or an unsupported dtype).

    \b
    Example:
      aclnn-py explain softmax_backward --shape 4,2 --dtype float16 --out-dtype float32 \\
          --strides 1,4
    """
    from .ops.softmax import RELAXED_MAX_AXIS
    from .status import code_name, take_recent

    opdef = _op(op)
    dims = _ints(shape, "--shape", minimum=0)
    in_dt = _acl_dtype(dtype)
    out_dt = None if out_dtype is None else _acl_dtype(out_dtype, "--out-dtype")
    if dim is not None and not INT64_MIN <= dim <= INT64_MAX:
        raise click.BadParameter(f"{dim} does not fit int64_t", param_hint="'--dim'")
    if dim is not None and "dim" not in opdef.params:
        raise click.BadParameter(f"{opdef.name} has no dim argument", param_hint="'--dim'")
    in_strides, o_strides = _ints(strides, "--strides"), _ints(out_strides, "--out-strides")
    for name, given in (("--strides", in_strides), ("--out-strides", o_strides)):
        if given is not None and len(given) != len(dims):
            raise click.BadParameter(f"{len(given)} value(s) for a {len(dims)}-d --shape: "
                                     "give one stride per dim", param_hint=f"'{name}'")
    profile = _soc(soc)
    take_recent()  # only this call's messages below
    ws, executor, ret = plan_call(opdef, dims, in_dt, out_dt, dim, in_strides, o_strides,
                                  soc=profile)
    message = take_recent() if ret else None
    if as_json:
        _echo_json({
            "operator": opdef.name, "soc": profile.name, "status": ret,
            "name": code_name(ret), "message": message,
            "workspace_size": ws if not ret else None,
            "steps": executor.describe() if not ret else [],
            "layout": [{"what": w, "offset": o, "size": n}
                       for w, o, n in executor.plan.layout] if not ret else [],
            "accumulation": executor.accumulation if not ret else None,
        })
        if ret:
            sys.exit(1)
        return
    if ret:
        click.echo(message or f"{opdef.name}GetWorkspaceSize returned {ret}")
        sys.exit(1)
    click.echo(f"{opdef.name}: {len(executor.plan.steps)} step(s), workspace {ws} bytes")
    for i, line in enumerate(executor.describe(), 1):
        click.echo(f"  {i}. {line}")
    if not executor.plan.steps:
        click.echo("  (empty tensors: nothing runs)")
    if executor.accumulation is not None:
        used = any(s.params.get("accumulation") for s in executor.plan.steps)
        click.echo(f"accumulation: {executor.accumulation} (ACLNN_EMU_ACCUMULATION)" + (
            "" if executor.accumulation == "strict" or used else
            "; the kernel stays strict: relaxed applies to float16 / bfloat16 kernels whose "
            f"output is out's dtype, over an axis of at most {RELAXED_MAX_AXIS} elements"))
    if executor.plan.layout:
        click.echo("workspace layout (Align(n) = (n + 32 + 511) & ~511):")
        for what, offset, size in executor.plan.layout:
            click.echo(f"  [{offset:>8}, {offset + size:>8})  {what}")


def code_names() -> dict[str, int]:
    """CANN's C name of every status code (aclnnStatus, aclError: ACLNN_ERR_PARAM_INVALID,
    ACL_ERROR_RT_PARAM_INVALID, ...) -> its value."""
    from .status import aclError, aclnnStatus

    return {name: int(member) for enum_cls in (aclnnStatus, aclError)
            for name, member in enum_cls.__members__.items()}


class _StatusCode(click.ParamType):
    """A status code as the user has it: decimal (161002), hexadecimal (0x2753a), octal (0o...)
    or binary (0b...), as C and Python write integers, or CANN's C name
    (ACLNN_ERR_PARAM_INVALID, in any case)."""

    name = "code"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip()
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            pass
        names = code_names()
        if text.upper() in names:
            return names[text.upper()]
        import difflib

        close = difflib.get_close_matches(text.upper(), list(names), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        self.fail(f"{value!r} is neither an integer (decimal such as 161002, or hexadecimal "
                  "such as 0x2753a) nor a CANN status code name (such as "
                  f"ACLNN_ERR_PARAM_INVALID; 'aclnn-py codes' lists them all){hint}",
                  param, ctx)


@main.command()
@click.argument("code", required=False, type=_StatusCode())
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: code, name, family, meaning, returned_by_emulator, "
                   "emulator_meaning, triggers (docs/return_codes.md).")
def codes(code, as_json) -> None:
    """What a status CODE means in CANN, and whether and when the emulator returns it (every
    code of CANN's aclnnStatus and aclError tables without an argument).

    CODE is a number (161002, 0x2753a) or CANN's C name (ACLNN_ERR_PARAM_INVALID)."""
    from .codes import CANN, describe, info

    if code is not None:
        if code not in CANN:
            raise click.BadParameter(f"{code} ({code:#x}) is not a CANN status code "
                                     "(aclnnStatus or aclError); 'aclnn-py codes' lists them all",
                                     param_hint="'CODE'")
        if as_json:
            _echo_json(info(code))
        else:
            click.echo(describe(code))
        return
    if as_json:
        _echo_json([info(c) for c in sorted(CANN)])
        return
    for c in sorted(CANN):
        click.echo(describe(c))


# ------------------------------------------------------------------------------- env ----

def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def env_rows() -> list[dict[str, Any]]:
    """The rows of ``aclnn-py env``: key, label, sources (the variables read), value (for
    --json), text (for the table) and error (a bad configuration value, else None)."""
    from . import acl, config
    from . import runtime as rt

    def soc():
        p = config.soc_profile()
        return {"name": p.name, "product": p.product, "bf16": p.bf16}, \
            f"{p.name} ({p.product}; BF16 {'yes' if p.bf16 else 'no'})"

    def devices():
        total = config.physical_device_count()
        visible = config.visible_devices()
        ids = list(range(total)) if visible is None else list(visible)
        mapping = ", ".join(f"{i}->{d}" for i, d in enumerate(ids))
        text = (f"{len(ids)} (ids 0..{len(ids) - 1})" if visible is None else
                f"{len(ids)} visible of {total} (device -> physical: {mapping})")
        return {"count": len(ids), "physical": total, "visible": ids}, text

    def memory():
        n = config.mem_limit()
        return n, f"{n} bytes ({n / (1 << 30):.3g} GiB) per device"

    def used():
        count = config.device_count()
        if not (rt.S.initialized or rt.S.device_refs):
            return None, "not initialised in this process"
        per = [rt.memory_used(d) for d in range(count)]
        return per, ", ".join(f"device {d}: {u} bytes" for d, u in enumerate(per))

    def threads():
        configured, effective = config.num_threads(), rt.num_threads()
        text = f"{effective}" + ("" if configured == effective else
                                 f" (configured {configured}: applied at acl.init)")
        return {"configured": configured, "effective": effective}, text

    def isa():
        name = rt.isa_name()
        asked = os.environ.get("ACLNN_EMU_ISA", "").strip()
        return name, name + (f" (asked for {asked!r})" if asked and asked != name else "")

    def llc():
        machine, store = rt.llc_bytes(), rt.store_llc_bytes()
        raw = os.environ.get("ACLNN_EMU_LLC", "")
        text = f"{machine / (1 << 20):g} MiB"
        if raw.strip():
            ignored = (f"; the kernels ignore it and size their stores by the "
                       f"{machine / (1 << 20):g} MiB this CPU has")
            try:
                size = config.parse_llc(raw)
            except config.ConfigError as exc:
                raise config.ConfigError(f"{exc}{ignored}") from None
            if store != size:  # the C core's reading differs from config.parse_llc's
                raise config.ConfigError(f"ACLNN_EMU_LLC={raw!r} is {size} bytes, but the "
                                         f"kernels took {store}")
            text += f" (stores as for {store / (1 << 20):g} MiB: ACLNN_EMU_LLC)"
        return {"machine": machine, "stores": store}, text

    def poison():
        on, byte = config.poison()
        text = f"0x{byte:02x}" if on else "off"
        return text, text

    def checks():
        found = sorted(config.checks())
        return found, ", ".join(found) or "off"

    def accumulation():
        mode = config.accumulation()
        return mode, mode + (" (float16/bfloat16 softmax family: faster, bounded error)"
                             if mode != "strict" else "")

    def trace():
        path = config.trace_path()
        keep = config.trace_events()
        return path, (f"{path} (the newest {keep} API calls and {keep} tasks)" if path
                      else "off")

    def blocking():
        on = config.launch_blocking()
        return on, "1 (every task runs at launch)" if on else "0"

    def log_level():
        level = config.log_level()
        if level is None:
            return None, "off (API log off)"
        return level, f"{level} ({config.LOG_LEVELS[level]})" + (
            ", to stdout" if config.log_to_stdout() else "")

    def versions():
        major, minor, patch, _ = acl.get_version()
        v = {"aclnn-py": _version("aclnn-py"), "python": sys.version.split()[0],
             "numpy": _version("numpy"), "cffi": _version("cffi"),
             "ml_dtypes": _version("ml_dtypes"), "acl_api": f"{major}.{minor}.{patch}"}
        return v, ", ".join(f"{k} {x}" for k, x in v.items())

    table = [
        ("soc", "SoC", ("ACLNN_EMU_SOC",), soc),
        ("devices", "devices", ("ACLNN_EMU_DEVICE_COUNT", "ASCEND_RT_VISIBLE_DEVICES"), devices),
        ("memory_limit", "memory limit", ("ACLNN_EMU_MEM_LIMIT",), memory),
        ("memory_used", "memory used", (), used),
        ("threads", "kernel threads", ("ACLNN_EMU_NUM_THREADS",), threads),
        ("isa", "ISA level", ("ACLNN_EMU_ISA",), isa),
        ("llc", "last-level cache", ("ACLNN_EMU_LLC",), llc),
        ("poison", "poison byte", ("ACLNN_EMU_POISON",), poison),
        ("checks", "checkers", ("ACLNN_EMU_CHECK",), checks),
        ("accumulation", "accumulation", ("ACLNN_EMU_ACCUMULATION",), accumulation),
        ("trace", "trace file", ("ACLNN_EMU_TRACE", "ACLNN_EMU_TRACE_EVENTS"), trace),
        ("launch_blocking", "launch blocking", ("ACL_LAUNCH_BLOCKING", "ASCEND_LAUNCH_BLOCKING"),
         blocking),
        ("log_level", "log level", ("ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_SLOG_PRINT_TO_STDOUT"),
         log_level),
        ("versions", "versions", (), versions),
    ]
    rows = []
    for key, label, sources, get in table:
        row: dict[str, Any] = {"key": key, "label": label, "sources": list(sources),
                               "value": None, "text": "", "error": None}
        try:
            row["value"], row["text"] = get()
        except config.ConfigError as exc:
            row["error"] = str(exc)
            row["text"] = f"error: {exc}"
        rows.append(row)
    return rows


@main.command()
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {key: {value, sources, error}} (docs/configuration.md).")
def env(as_json) -> None:
    """The emulated machine and its configuration, as npu-smi info shows a real one: SoC,
    devices, memory, kernel threads, ISA level, checkers, trace, blocking mode, log level and
    versions. A bad configuration value is shown on its row, and the exit code is then 1."""
    rows = env_rows()
    if as_json:
        _echo_json({r["key"]: {"value": r["value"], "sources": r["sources"],
                               "error": r["error"]} for r in rows})
    else:
        width = max(len(r["label"]) for r in rows)
        for r in rows:
            src = f"  [{', '.join(r['sources'])}]" if r["sources"] else ""
            click.echo(f"{r['label']:<{width}}  {r['text']}{src}")
    if any(r["error"] for r in rows):
        sys.exit(1)


# ----------------------------------------------------------------------------- bench ----


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


def _product(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


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
              help="Dtype (repeatable; default: float32, float16 and bfloat16) of the strict "
                   "and relaxed rows.")
@click.option("--mode", "mode_names", multiple=True,
              type=click.Choice(["strict", "relaxed", "int8"]),
              help="Rows (repeatable; default: all three): strict; relaxed (float16/bfloat16 of "
                   "the softmax family, ACLNN_EMU_ACCUMULATION=relaxed); int8 (softmax and "
                   "log_softmax, int8 in and out, src_scale 64, dst_scale 0.5).")
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
def bench(op_names, dtype_names, mode_names, shape, dim, threads_text, cache, repeat, json_path,
          plot_path, no_torch, no_numpy) -> None:
    """Time operators through the aclnn API against a memory floor, NumPy and PyTorch, measured
    in the same run, with each output's max error against a float64 golden.

    Every operator x dtype x layout x mode x thread count, cold and hot (docs/performance.md).
    A case that fails (phase 1 refuses it, a launch faults) is reported after the table, the
    other rows kept, and the exit code is 1.

    \b
    Examples:
      aclnn-py bench
      aclnn-py bench --op softmax --dtype float16 --threads 2 --cache cold
      aclnn-py bench --op softmax --mode relaxed --mode int8 --threads 2
      aclnn-py bench --op softmax --shape 32,1024 --dim -1 --cache hot --repeat 50
      aclnn-py bench --json results.json --plot results.png
    """
    import json

    from . import bench as bench_mod
    from . import config

    ops = list(dict.fromkeys(_bench_op(n) for n in op_names)) or list(bench_mod.BASELINES)
    dts = list(dict.fromkeys(dtype_names)) or list(bench_mod.DEFAULT_DTYPES)
    modes = tuple(dict.fromkeys(mode_names)) or bench_mod.MODES
    dims = None
    if shape is not None:
        dims = _positive_ints(shape, "--shape", 1)
        if not 1 <= len(dims) <= 8:
            raise click.BadParameter(f"{shape!r}: 1 to 8 dims", param_hint="'--shape'")
        if any(v > INT64_MAX for v in dims) or _product(dims) * 8 > INT64_MAX:
            raise click.BadParameter(f"{shape!r}: more elements than a device can address",
                                     param_hint="'--shape'")
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
        if not os.access(parent, os.W_OK | os.X_OK) or Path(json_path).is_dir():
            raise click.BadParameter(f"{json_path!r}: cannot be written by this user (a "
                                     "directory, or in a read-only one); give a file you can "
                                     "write", param_hint="'--json'")
    if plot_path is not None:
        _require_matplotlib()
        if Path(plot_path).suffix.lower() not in (".png", ".svg", ".pdf"):
            raise click.BadParameter(f"{plot_path!r}: expected a .png, .svg or .pdf file",
                                     param_hint="'--plot'")
        if not Path(plot_path).resolve().parent.is_dir():
            raise click.BadParameter(f"{plot_path!r}: its directory does not exist",
                                     param_hint="'--plot'")
        if not os.access(Path(plot_path).resolve().parent, os.W_OK | os.X_OK):
            raise click.BadParameter(f"{plot_path!r}: its directory is not writable by this "
                                     "user; give a file you can write", param_hint="'--plot'")
    try:
        config.soc_profile()
    except config.ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    cases, skipped = bench_mod.plan_cases(ops, dts, None if dims is None else tuple(dims), dim,
                                          modes)
    planned = bool(cases)
    cases = [c for c in cases if not (c.hot_only and caches == ["cold"])]
    if not cases:
        if skipped:
            why = "; ".join(f"{bench_mod.short_name(o)} {d}: {r}" for o, d, r in skipped)
            raise click.BadParameter(f"nothing to run: {why}", param_hint="'--dtype'")
        if not planned:
            raise click.BadParameter(
                f"nothing to run in mode {', '.join(modes)}: the relaxed rows are float16 and "
                "bfloat16 of softmax, log_softmax, softmax_backward and log_softmax_backward; the "
                "int8 rows softmax and log_softmax", param_hint="'--mode'")
        raise click.BadParameter("cold: nothing to run (the declared small cases are hot only)",
                                 param_hint="'--cache'")

    torch = bench_mod.import_torch(not no_torch)
    out = sys.stderr if json_path == "-" else sys.stdout
    try:
        runner = bench_mod.Runner(threads, caches, repeat, use_numpy=not no_numpy, torch=torch)
    except bench_mod.BenchError as exc:
        raise click.ClickException(str(exc)) from None
    records: list = []
    failed: list = []  # (case, message): a case that could not run; the others go on
    try:
        total = sum(runner.rows(c) for c in cases)
        with click.progressbar(length=total, label="benchmarking", file=sys.stderr,
                               item_show_func=lambda s: s) as bar:
            for case in cases:
                done = [0]

                def tick(s, done=done):
                    done[0] += 1
                    bar.update(1, s)

                try:
                    records += runner.run(case, tick)
                except bench_mod.BenchError as exc:
                    failed.append((case, str(exc)))
                    bar.update(runner.rows(case) - done[0])
    except MemoryError:
        raise click.ClickException("out of memory: try a smaller --shape") from None
    finally:
        runner.close()
    bench_mod.mark_cpu(records)
    machine = bench_mod.machine_info(threads, torch, not no_numpy, caches)
    machine["repeat"] = repeat
    click.echo(bench_mod.format_table(records, machine), file=out)
    for o, d, r in skipped:
        click.echo(f"skipped {bench_mod.short_name(o)} {d}: {r}", file=out)
    for c, msg in failed:
        click.echo(f"failed {c.title}: {msg}", file=out)
    if torch is None and not no_torch:
        click.echo("PyTorch is not installed: its CPU wheel is "
                   "pip install torch --index-url https://download.pytorch.org/whl/cpu "
                   '(a plain "pip install torch" may take the multi-GB CUDA build)', file=out)
    if json_path is not None:
        text = json.dumps(bench_mod.to_json(records, machine, failed), indent=1)
        if json_path == "-":
            click.echo(text)
        else:
            Path(json_path).write_text(text + "\n", encoding="utf-8")
    if plot_path is not None and records:
        bench_mod.plot(records, plot_path, machine)
        click.echo(f"plot: {plot_path}", file=out)
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(cases)} cases failed (see above)")


def _register_toolkit() -> None:
    from .toolkit.cli import cache, opgen, toolkit

    main.add_command(toolkit)
    main.add_command(cache)
    main.add_command(opgen)


_register_toolkit()

if __name__ == "__main__":  # pragma: no cover
    main()
