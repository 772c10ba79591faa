"""Operator definitions from CANN op_host sources (``aclnn-py opgen op_host/add_custom.cpp``).

CANN projects keep an operator's definition in C++: msOpGen generates ``op_host/<op>.cpp``
(the tiling function, shape inference and an ``OpDef`` subclass registered by ``OP_ADD``, with
``op_host/<op>_tiling.h``); cann-ops keeps the definition alone in ``op_host/<op>_def.cpp``.
:func:`read` compiles such a source with the toolkit's op_host headers (``register/
op_def_registry.h``, ``register/tilingdata_base.h``, ``exe_graph/runtime/*``, ...) and a driver
of ours (``src/ophost_main.cpp``), runs it, and turns what each ``OP_ADD`` definition declared
into msOpGen's JSON, the input of :func:`aclnn_py.custom.parse`. The tiling and inference
functions are compiled, not run. Strings of the source reach Python hex-encoded and are
validated like a JSON definition's; nothing of the source is written into generated code except
through that validated definition. See docs/custom_ops.md, "From an op_host source".
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

from .. import custom
from ..custom import CustomOpError
from .build import HERE, ToolkitError, cache_root, compiler

SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".cp")
DRIVER = HERE / "src" / "ophost_main.cpp"
TILING_RUNNER = HERE / "src" / "ophost_tiling.cpp"
INCLUDE = HERE / "include"
COMPILE_TIMEOUT = 600.0  # seconds for g++
RUN_TIMEOUT = 60.0  # seconds for the definitions' constructors, and for one tiling
MAX_RECORD = 64 << 20  # bytes of the driver's JSON

# ge::DataType -> msOpGen's type name (custom.TYPE_NAMES); the others have none the emulator
# supports
GE_TYPES: dict[int, str] = {
    0: "float", 1: "fp16", 2: "int8", 3: "int32", 4: "uint8", 6: "int16", 7: "uint16",
    8: "uint32", 9: "int64", 10: "uint64", 11: "double", 12: "bool", 16: "complex64",
    17: "complex128", 27: "bf16",
}
GE_TYPE_NAMES = (
    "DT_FLOAT DT_FLOAT16 DT_INT8 DT_INT32 DT_UINT8 - DT_INT16 DT_UINT16 DT_UINT32 DT_INT64 "
    "DT_UINT64 DT_DOUBLE DT_BOOL DT_STRING DT_DUAL_SUB_INT8 DT_DUAL_SUB_UINT8 DT_COMPLEX64 "
    "DT_COMPLEX128 DT_QINT8 DT_QINT16 DT_QINT32 DT_QUINT8 DT_QUINT16 DT_RESOURCE DT_STRING_REF "
    "DT_DUAL DT_VARIANT DT_BF16 DT_UNDEFINED DT_INT4 DT_UINT1 DT_INT2 DT_UINT2 DT_COMPLEX32 "
    "DT_HIFLOAT8 DT_FLOAT8_E5M2 DT_FLOAT8_E4M3FN DT_FLOAT8_E8M0 DT_FLOAT6_E3M2 DT_FLOAT6_E2M3 "
    "DT_FLOAT4_E2M1 DT_FLOAT4_E1M2").split()
# ge::Format values 0.. (graph/types.h): "FORMAT_" + name
GE_FORMATS = (
    "NCHW NHWC ND NC1HWC0 FRACTAL_Z NC1C0HWPAD NHWC1C0 FSR_NCHW FRACTAL_DECONV C1HWNC0 "
    "FRACTAL_DECONV_TRANSPOSE FRACTAL_DECONV_SP_STRIDE_TRANS NC1HWC0_C04 FRACTAL_Z_C04 CHWN "
    "FRACTAL_DECONV_SP_STRIDE8_TRANS HWCN NC1KHKWHWC0 BN_WEIGHT FILTER_HWCK "
    "HASHTABLE_LOOKUP_LOOKUPS HASHTABLE_LOOKUP_KEYS HASHTABLE_LOOKUP_VALUE "
    "HASHTABLE_LOOKUP_OUTPUT HASHTABLE_LOOKUP_HITS C1HWNCoC0 MD NDHWC FRACTAL_ZZ FRACTAL_NZ "
    "NCDHW DHWCN NDC1HWC0 FRACTAL_Z_3D CN NC DHWNC FRACTAL_Z_3D_TRANSPOSE FRACTAL_ZN_LSTM "
    "FRACTAL_Z_G RESERVED ALL NULL ND_RNN_BIAS FRACTAL_ZN_RNN NYUV NYUV_A NCL").split()
PARAM_TYPES = {1: "optional", 2: "required", 3: "dynamic"}  # ops::Option
OPTION_NAMES = {0: "IGNORE", 1: "OPTIONAL", 2: "REQUIRED", 3: "DYNAMIC", 4: "VIRTUAL"}
ATTR_TYPES = ("bool", "float", "int", "str", "listBool", "listFloat", "listInt", "listListInt")
UNSET, EXPLICIT, LIST = 0, 1, 2  # how DataType / Format were given (detail::ListMode)
FOLLOW_ALL, FOLLOW_DTYPE, FOLLOW_FORMAT = 0, 1, 2  # ops::FollowType
SCALAR_KINDS = {1: "an aclScalar (.Scalar())", 2: "an aclScalarList (.ScalarList())"}
SOC = "ascend910b"  # the AICore config whose inputs and outputs the emulator takes

_ERROR = re.compile(r"^(?P<where>.+?):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$")

PathLike = Union[str, "os.PathLike[str]"]


def is_source(path: PathLike) -> bool:
    """Whether ``opgen`` reads ``path`` as op_host C++ (a directory or a C++ suffix) rather
    than msOpGen's JSON."""
    p = Path(path)
    return p.is_dir() or p.suffix.lower() in SUFFIXES


def sources(path: PathLike) -> list[Path]:
    """The files compiled for ``path``: the file itself, or, for a directory, its C++ files that
    contain ``OP_ADD`` and its ``*_tiling`` C++ files (compiled alongside)."""
    p = Path(path)
    if not p.is_dir():
        if not p.is_file():
            raise CustomOpError(f"cannot read the operator definition {str(p)!r}: no such file")
        return [p]
    found, tiling = [], []
    for f in sorted(p.iterdir()):
        if not f.is_file() or f.suffix.lower() not in SUFFIXES:
            continue
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CustomOpError(f"cannot read {str(f)!r}: {exc.strerror or exc}") from None
        if re.search(r"\bOP_ADD\s*\(", text):
            found.append(f)
        elif f.stem.endswith("_tiling"):
            tiling.append(f)
    if not found:
        raise CustomOpError(f"{str(p)!r}: no C++ file ({', '.join(SUFFIXES)}) in this directory "
                            "registers an operator with OP_ADD")
    return found + tiling


def definitions(path: PathLike, include_dirs: Sequence[PathLike] = ()) -> list[dict]:
    """The operators of one definition file: msOpGen's JSON as written, or (for a C++ source
    or a directory of them) what :func:`read` makes of it (``include_dirs`` as there)."""
    if is_source(path):
        return read(path, include_dirs)
    return [dict(op) if isinstance(op, dict) else op for op in custom._read(Path(path))]


def include_path(files: Sequence[Path], include_dirs: Sequence[PathLike] = ()) -> list[Path]:
    """The directories searched for the headers of ``files`` after the toolkit's own: the
    ``include_dirs`` given (``-I``, in order), then for each file (as CANN's project builds
    put them on op_host's compile line) its own directory, its sibling ``../op_kernel``
    (msOpGen projects) and the ``src/common/inc`` of its nearest ancestor that has one
    (cann-ops), each only when it exists. CustomOpError for a given directory that does not
    exist."""
    if isinstance(include_dirs, (str, os.PathLike)):  # one directory, not its characters
        include_dirs = [include_dirs]
    out: list[Path] = []
    for d in include_dirs:
        p = Path(d)
        if not p.is_dir():
            raise CustomOpError(f"-I {str(d)!r}: no such directory (an include directory for "
                                "the op_host source)")
        out.append(p.resolve())
    for f in files:
        here = f.resolve().parent
        out.append(here)
        kernel = here.parent / "op_kernel"
        if kernel.is_dir():
            out.append(kernel)
        for up in (here, *here.parents):
            common = up / "src" / "common" / "inc"
            if common.is_dir():
                out.append(common)
                break
    return list(dict.fromkeys(out))


def read(path: PathLike, include_dirs: Sequence[PathLike] = ()) -> list[dict]:
    """msOpGen's JSON (a list of operators) for every ``OP_ADD`` of an op_host source or
    directory, compiled with the headers of ``include_path`` (``include_dirs``: more include
    directories, as ``-I``). Raises CustomOpError naming the file and line of a C++ error
    (g++'s first), of a definition that cannot be an operator, or what went wrong running the
    definitions; ToolkitError without a C++ compiler."""
    files = sources(path)
    search = include_path(files, include_dirs)
    driver = _driver()
    tmp = Path(tempfile.mkdtemp(prefix="aclnn-py-ophost-"))
    try:
        exe = tmp / "ophost"
        cmd = [*compiler(), *FLAGS, *[f"-I{d}" for d in search],
               *[str(f.resolve()) for f in files], str(driver),
               # a function declared here and defined in another file of the project (a tiling
               # function in <op>_tiling.cpp) is not called: its reference may stay unresolved
               "-Wl,--unresolved-symbols=ignore-all", "-o", str(exe)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                  cwd=tmp, stdin=subprocess.DEVNULL, timeout=COMPILE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise CustomOpError(f"compiling {_names(files)} took more than "
                                f"{COMPILE_TIMEOUT:.0f} s") from None
        except OSError as exc:
            raise ToolkitError(f"cannot run the C++ compiler {cmd[0]!r}: {exc}") from None
        if proc.returncode:
            raise CustomOpError(_compile_error(files, proc.stderr + proc.stdout, search))
        out = tmp / "definitions.json"
        returncode, stderr = _run_program([str(exe), str(out)], tmp,
                                          f"{_names(files)}: constructing the OP_ADD definitions")
        if returncode:
            tail = stderr.strip().splitlines()[-1:] or [""]
            how = (f"was killed by signal {-returncode}" if returncode < 0
                   else f"failed (exit status {returncode})")
            raise CustomOpError(f"{_names(files)}: constructing the OP_ADD definitions {how}"
                                + (f": {tail[0]}" if tail[0] else ""))
        lost = CustomOpError(f"{_names(files)}: the definitions could not be read back (did "
                             "the source exit, or write to the driver's output, before it?)")
        if not out.is_file() or out.stat().st_size > MAX_RECORD:
            raise lost
        try:
            record = json.loads(out.read_text(encoding="ascii"))
            entries = list(record["ops"])
            where: dict[str, str] = {}  # name -> "file:line" of its OP_ADD
            for e in entries:
                name = _text(e["op"], "OP_ADD")
                here = f"{_text(e['file'], 'file')}:{e['line']}"
                if name in where:
                    raise CustomOpError(f"{here}: OP_ADD({name}): {name} is already registered "
                                        f"at {where[name]}")
                where[name] = here
        except CustomOpError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError):  # not the driver's record
            raise lost from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        ops = [_operator(op) for op in entries]
    except (KeyError, TypeError, AttributeError):
        raise lost from None
    if not ops:
        raise CustomOpError(f"{_names(files)}: no OP_ADD registered an operator (an OP_ADD "
                            "inside an #if that is false, or in a file not compiled?)")
    return ops


FLAGS = ("-std=c++17", "-w", f"-I{INCLUDE}")


def _kill_session(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _driver() -> Path:
    """The driver compiled once (an object file in the cache, named by the hash of the compiler
    line, the driver and the headers), or its source when the cache cannot be written."""
    cmd = [*compiler(), *FLAGS, "-c"]
    h = hashlib.sha256(repr(cmd).encode())
    for f in [DRIVER, *sorted(INCLUDE.rglob("*.h"))]:
        h.update(str(f.relative_to(HERE)).encode() + b"\0" + f.read_bytes())
    obj = cache_root() / f"ophost-driver-{h.hexdigest()[:16]}.o"
    if obj.is_file():
        return obj
    try:
        obj.parent.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(prefix=".ophost-driver-", suffix=".o", dir=obj.parent)
        os.close(fd)
        proc = subprocess.run([*cmd, str(DRIVER), "-o", part], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=COMPILE_TIMEOUT)
        if proc.returncode:
            os.unlink(part)
            return DRIVER
        os.replace(part, obj)  # atomic: a concurrent reader sees a whole file or none
        return obj
    except (OSError, subprocess.TimeoutExpired):
        return DRIVER


def _names(files: Sequence[Path]) -> str:
    return ", ".join(str(f) for f in files)


def _compile_error(files: Sequence[Path], output: str, search: Sequence[Path] = ()) -> str:
    """g++'s first error as "file:line: message" (a link error by its first line); a header
    not found names the directories searched besides the toolkit's."""
    lines = output.splitlines()
    for line in lines:
        m = _ERROR.match(line)
        if m:
            where = ""
            if "No such file or directory" in m["msg"]:
                where = (f"; searched the toolkit's headers and "
                         f"{', '.join(str(d) for d in search) or 'no other directory'}: add "
                         "the header's directory with -I DIR")
            return (f"{m['where']}:{m['line']}: {m['msg']} (compiling the op_host source "
                    f"{_names(files)} against the toolkit's headers{where})")
    for line in lines:
        if "error" in line or "undefined reference" in line or "multiple definition" in line:
            return f"linking {_names(files)} failed: {line.strip()}"
    last = lines[-1].strip() if lines else "no message"
    return f"compiling {_names(files)} failed: {last}"


# ------------------------------------------------------------ record -> msOpGen's JSON ----


def _text(value: Any, where: str) -> str:
    """A hex-encoded string of the record (UTF-8)."""
    try:
        return bytes.fromhex(value).decode("utf-8")
    except (TypeError, ValueError):
        raise CustomOpError(f"{where}: not valid UTF-8 text") from None


def _operator(rec: dict) -> dict:
    op = _text(rec["op"], "OP_ADD")
    loc = f"{_text(rec['file'], 'file')}:{rec['line']}"
    where = f"{loc}: {op}"
    inputs = [_raw_param(p, where) for p in rec["inputs"]]
    outputs = [_raw_param(p, where) for p in rec["outputs"]]
    configs = [(_text(c["soc"], where), [_raw_param(p, where) for p in c["inputs"]],
                [_raw_param(p, where) for p in c["outputs"]]) for c in rec["configs"]]
    # CANN merges an AICore config's inputs and outputs (by name) into the definition's for
    # that SoC; the emulator is an ascend910b, and takes the first config's when the definition
    # itself declares none
    chosen = next((c for c in configs if c[0] == SOC and (c[1] or c[2])), None)
    if chosen is None and not inputs and not outputs:
        chosen = next((c for c in configs if c[1] or c[2]), None)
    if chosen is not None:
        inputs, outputs = _merge(inputs, chosen[1]), _merge(outputs, chosen[2])
    for kind, group in (("input", inputs), ("output", outputs)):
        for p in group:
            if p["scalar"]:
                raise CustomOpError(
                    f"{where}: {kind} {p['name']!r} is declared "
                    f"{SCALAR_KINDS.get(p['scalar'], 'a scalar')}: the operator definitions "
                    "aclnn-py generates operators from (msOpGen's JSON) have tensor, tensor "
                    "list and attribute parameters but no aclScalar ones, so this operator "
                    "cannot be generated")
    params = _expand(inputs + outputs, where)
    d: dict[str, Any] = {"op": op, "language": "cpp",
                         "input_desc": params[:len(inputs)],
                         "output_desc": params[len(inputs):]}
    attrs = [_attr(a, where) for a in rec["attrs"]]
    if attrs:
        d["attr"] = attrs
    try:
        custom.parse([d])
    except CustomOpError as exc:
        raise CustomOpError(f"{loc}: {exc}") from None
    return d


def _raw_param(p: dict, where: str) -> dict:
    name = _text(p["name"], where)
    ptype = p["param_type"]
    if ptype not in PARAM_TYPES:
        raise CustomOpError(f"{where}: {name!r}: ParamType({OPTION_NAMES.get(ptype, ptype)}) "
                            f"is not one of REQUIRED, OPTIONAL, DYNAMIC")
    return {"name": name, "param_type": PARAM_TYPES[ptype], "types": list(p["types"]),
            "types_mode": p["types_mode"], "formats": list(p["formats"]),
            "formats_mode": p["formats_mode"], "follow": _text(p["follow"], where),
            "follow_type": p["follow_type"], "scalar": p.get("scalar", 0)}


def _merge(base: list, override: list) -> list:
    out = list(base)
    for p in override:
        for i, q in enumerate(out):
            if q["name"] == p["name"]:
                out[i] = p
                break
        else:
            out.append(p)
    return out


def _expand(params: list, where: str) -> list:
    """Each parameter's type and format lists, one entry per supported combination, as CANN
    builds them: DataType / Format lists are the combinations (all of one length);
    DataTypeList / FormatList entries combine with every other combination; an unset format
    is ND; Follow("x") takes x's types and formats."""
    by_name = {p["name"]: p for p in params}
    lengths: dict[int, str] = {}
    for p in params:
        for key in ("types", "formats"):
            if p[key + "_mode"] == EXPLICIT:
                lengths.setdefault(len(p[key]), f"{p['name']!r}.{key[:-1]}")
    if len(lengths) > 1:
        (a, wa), (b, wb) = list(lengths.items())[:2]
        raise CustomOpError(f"{where}: {wa} lists {a} combinations but {wb} lists {b}: the "
                            "DataType and Format lists of all inputs and outputs have one "
                            "length, the i-th entries forming the i-th combination (or use "
                            "DataTypeList / FormatList)")
    n = next(iter(lengths), 1)
    axes: list[tuple[str, str]] = [(p["name"], key) for p in params for key in ("types", "formats")
                                   if p[key + "_mode"] == LIST]
    for name, key in axes:
        if not by_name[name][key]:
            raise CustomOpError(f"{where}: {name!r}: an empty {key[:-1]} list")
    combos = list(itertools.product(range(n), *[range(len(by_name[nm][k])) for nm, k in axes]))

    def value(p: dict, key: str, combo: tuple, depth: int = 0):
        mode = p[key + "_mode"]
        if mode == EXPLICIT:
            return p[key][combo[0]]
        if mode == LIST:
            return p[key][combo[1 + axes.index((p["name"], key))]]
        follows = p["follow_type"] in (FOLLOW_ALL, FOLLOW_DTYPE if key == "types"
                                       else FOLLOW_FORMAT)
        if p["follow"] and follows:
            target = by_name.get(p["follow"])
            if target is None or depth > len(params):
                raise CustomOpError(f"{where}: {p['name']!r} follows {p['follow']!r}, which is "
                                    "not an input or output of this operator (or the follows "
                                    "form a cycle)")
            return value(target, key, combo, depth + 1)
        if key == "formats":
            return GE_FORMATS.index("ND")
        raise CustomOpError(f"{where}: {p['name']!r} declares no data type (DataType, "
                            "DataTypeList or Follow)")

    out = []
    for p in params:
        types = [_type_name(value(p, "types", c), where, p["name"]) for c in combos]
        formats = [_format_name(value(p, "formats", c), where, p["name"]) for c in combos]
        out.append({"name": p["name"], "param_type": p["param_type"], "format": formats,
                    "type": types})
    return out


def _type_name(v: int, where: str, name: str) -> str:
    if v in GE_TYPES:
        return GE_TYPES[v]
    ge = GE_TYPE_NAMES[v] if 0 <= v < len(GE_TYPE_NAMES) else f"ge::DataType({v})"
    raise CustomOpError(f"{where}: {name!r}: ge::{ge} is not a data type the emulator supports "
                        f"(supported: {', '.join('ge::' + GE_TYPE_NAMES[k] for k in GE_TYPES)})")


def _format_name(v: int, where: str, name: str) -> str:
    if 0 <= v < len(GE_FORMATS):
        return GE_FORMATS[v]
    raise CustomOpError(f"{where}: {name!r}: ge::Format({v}) is not a format of CANN's")


def _attr(a: dict, where: str) -> dict:
    name = _text(a["name"], where)
    kind = a["type"]
    if not 0 <= kind < len(ATTR_TYPES):
        raise CustomOpError(f"{where}: attribute {name!r}: unknown type {kind}")
    atype = ATTR_TYPES[kind]
    out: dict[str, Any] = {"name": name, "param_type": "required" if a["required"]
                           else "optional", "type": atype}
    if not a["required"]:  # CANN: an optional attribute's default is the value given
        value = a["value"]
        if atype == "str":
            value = _text(value, f"{where}: attribute {name!r}")
        out["default_value"] = value
    return out


# ------------------------------------------------------------ running the tiling ----------


class Tiling(NamedTuple):
    """What a tiling function set: the raw tiling data, the block dimension, the tiling key and
    the workspace sizes."""

    data: bytes
    block_dim: int
    tiling_key: int
    workspace: tuple


TensorSpec = tuple  # (ge::DataType value, ge::Format value, shape)


class TilingProgram:
    """The tiling functions of an op_host source (a file or a directory), linked with a runner
    of ours into a program of their own: :meth:`run` calls an operator's tiling function
    (``AICore().SetTiling``) with a ``gert::TilingContext`` of given tensors and attributes.
    A crash, an exception or a hang of the tiling function is a CustomOpError, not the
    caller's. Everything the tiling function calls must be defined in the files compiled (a
    directory: its OP_ADD and ``*_tiling`` files)."""

    def __init__(self, path: PathLike, include_dirs: Sequence[PathLike] = ()):
        self.files = sources(path)
        search = include_path(self.files, include_dirs)
        self._dir = Path(tempfile.mkdtemp(prefix="aclnn-py-tiling-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self._dir), True)
        self._exe = self._dir / "tiling"
        self._lock = threading.Lock()
        self._count = itertools.count()
        cmd = [*compiler(), *FLAGS, *[f"-I{d}" for d in search],
               *[str(f.resolve()) for f in self.files], str(TILING_RUNNER), "-o",
               str(self._exe)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                  cwd=self._dir, stdin=subprocess.DEVNULL,
                                  timeout=COMPILE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise CustomOpError(f"compiling {_names(self.files)} took more than "
                                f"{COMPILE_TIMEOUT:.0f} s") from None
        except OSError as exc:
            raise ToolkitError(f"cannot run the C++ compiler {cmd[0]!r}: {exc}") from None
        if proc.returncode:
            raise CustomOpError(_compile_error(self.files, proc.stderr + proc.stdout, search))

    def run(self, op: str, inputs: Sequence, outputs: Sequence[TensorSpec],
            attrs: Sequence[tuple[str, Any]]) -> Tiling:
        """``op``'s tiling for ``inputs`` (per input of the definition: a TensorSpec, None for
        an absent optional one, a list of them for a dynamic one), ``outputs`` (TensorSpecs) and
        ``attrs`` ((msOpGen type, value) in the definition's order). Raises CustomOpError when
        the tiling function fails (its status is not GRAPH_SUCCESS), throws, crashes or runs
        for more than RUN_TIMEOUT seconds."""
        lines = [f"op {op.encode().hex()}"]
        first = 0
        for spec in inputs:
            group = spec if isinstance(spec, list) else [spec]
            for t in group:
                lines.append("in -1" if t is None else "in " + _tensor_line(t))
            lines.append(f"ir {first} {len(group)}")
            first += len(group)
        lines += ["out " + _tensor_line(t) for t in outputs]
        lines += ["attr " + _attr_line(kind, value) for kind, value in attrs]
        with self._lock:
            n = next(self._count)
        request, answer = self._dir / f"request-{n}.txt", self._dir / f"answer-{n}.txt"
        request.write_text("\n".join(lines) + "\n", encoding="ascii")
        try:
            code, stderr = _run_program([str(self._exe), str(request), str(answer)], self._dir,
                                        f"{op}: the tiling function")
            text = answer.read_text(encoding="ascii") if answer.is_file() else ""
        finally:
            for f in (request, answer):
                f.unlink(missing_ok=True)
        if code or not text:
            tail = stderr.strip().splitlines()[-1:] or [""]
            how = (f"was killed by signal {-code}" if code < 0
                   else f"failed (exit status {code})")
            raise CustomOpError(f"{op}: the tiling function {how}"
                                + (f": {tail[0]}" if tail[0] else ""))
        if text.startswith("error "):
            raise CustomOpError(f"{op}: {text[6:].strip()}")
        fields = {key: rest for key, _, rest in (line.partition(" ")
                                                for line in text.splitlines())}
        status = int(fields["status"])
        if status != 0:
            raise CustomOpError(f"{op}: the tiling function returned {status:#x}, not "
                                "ge::GRAPH_SUCCESS")
        work = [int(w) for w in fields["workspace"].split()][1:]
        return Tiling(bytes.fromhex(fields["tiling"]), int(fields["block_dim"]),
                      int(fields["tiling_key"]), tuple(work))


def _tensor_line(t: TensorSpec) -> str:
    dtype, fmt, shape = t
    return " ".join(str(int(v)) for v in (dtype, fmt, len(shape), *shape))


def _attr_line(kind: str, value: Any) -> str:
    if kind == "int":
        return f"i {int(value)}"
    if kind == "float":
        return f"f {float(value)!r}"
    if kind == "bool":
        return f"b {int(bool(value))}"
    if kind == "str":
        return f"s {str(value).encode().hex()}"
    items = list(value)
    if kind == "listInt":
        return " ".join(["li", str(len(items)), *(str(int(v)) for v in items)])
    if kind == "listFloat":
        return " ".join(["lf", str(len(items)), *(repr(float(v)) for v in items)])
    if kind == "listBool":
        return " ".join(["lb", str(len(items)), *(str(int(bool(v))) for v in items)])
    raise CustomOpError(f"an attribute of type {kind!r} cannot be handed to a tiling function")


def _run_program(cmd: list, cwd: Path, what: str) -> tuple[int, str]:
    """Run ``cmd`` (code of the op_host source) in a session of its own, its output in files
    (a process it leaves behind holds no pipe of ours) and killed with the session when it
    exits; past RUN_TIMEOUT the session is killed (CustomOpError naming ``what``)."""
    log = cwd / f"stderr-{os.getpid()}-{threading.get_ident()}.txt"
    try:
        with open(os.devnull, "wb") as so, open(log, "wb") as se:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=so,
                                    stderr=se, start_new_session=True)
            try:
                code = proc.wait(timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                _kill_session(proc)
                raise CustomOpError(f"{what} took more than {RUN_TIMEOUT:.0f} s") from None
            _kill_session(proc)
        return code, log.read_text(encoding="utf-8", errors="replace")
    finally:
        log.unlink(missing_ok=True)


# what a kernel may ask for by naming a parameter
TILING_ARGS = ("tiling", "block_dim", "tiling_key", "workspace")


def tiled(path: PathLike, kernels: Mapping[str, Callable],
          include_dirs: Sequence[PathLike] = ()) -> dict[str, Callable]:
    """``kernels`` (as :func:`aclnn_py.custom.load` takes them) for the operators of the op_host
    source ``path``, each of which names a parameter ``tiling``, ``block_dim``, ``tiling_key``
    or ``workspace`` wrapped so that every launch first runs the operator's tiling function
    for the launch's tensors and attributes and hands the kernel what it set (``tiling`` as
    bytes). A tiling function that fails is the kernel's failure (the stream's fault). Kernels
    that name none of these are returned as they are. ``include_dirs`` as :func:`read`'s."""
    descs = custom.parse(read(path, include_dirs))
    out: dict[str, Callable] = dict(kernels)
    program: Optional[TilingProgram] = None
    for d in descs:
        key = d.op if d.op in kernels else d.snake
        fn = kernels.get(key)
        if fn is None or not callable(fn):
            continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        wants = [k for k in TILING_ARGS if k in params]
        if not wants:
            continue
        if program is None:
            program = TilingProgram(path, include_dirs)
        out[key] = _tiled_kernel(program, d, fn, wants)
    return out


def _tiled_kernel(program: TilingProgram, d: custom.OpDesc, fn: Callable,
                  wants: list) -> Callable:
    from .. import dtypes

    combos = d.combinations()

    def spec(a, param_index: int) -> TensorSpec:
        dt = dtypes.from_numpy(a.dtype)
        # the format of the first combination that lists this dtype for this parameter
        fmt = next((c[param_index][1] for c in combos if c[param_index][0] == dt),
                   GE_FORMATS.index("ND"))
        return (dt if dt is not None else GE_TYPE_NAMES.index("DT_UNDEFINED"), fmt,
                tuple(a.shape))

    def kernel(*args, **attrs):
        n = len(d.inputs)
        ins: list = []
        for i, (p, a) in enumerate(zip(d.inputs, args[:n])):
            if a is None:
                ins.append(None)
            elif p.param_type == "dynamic":
                ins.append([spec(x, i) for x in a])
            else:
                ins.append(spec(a, i))
        outs = [spec(a, n + j) for j, a in enumerate(args[n:])]
        values = [(a.type, attrs.get(a.name, a.default)) for a in d.attrs]
        t = program.run(d.op, ins, outs, values)
        given = {"tiling": t.data, "block_dim": t.block_dim, "tiling_key": t.tiling_key,
                 "workspace": t.workspace}
        return fn(*args, **attrs, **{k: given[k] for k in wants})

    kernel.__name__ = getattr(fn, "__name__", d.snake)
    kernel.__doc__ = getattr(fn, "__doc__", None)
    return kernel


__all__ = ["read", "definitions", "sources", "include_path", "is_source", "tiled", "Tiling",
           "TilingProgram", "GE_TYPES"]
