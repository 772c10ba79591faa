"""Custom operators: CANN's operator definition plus a NumPy kernel become a two-phase aclnn
operator (docs/custom_ops.md).

CANN's flow is an operator definition (the JSON msOpGen reads), an Ascend C kernel and a build
that generates ``aclnn<Op>GetWorkspaceSize`` / ``aclnn<Op>``. Here the kernel is a Python
function over NumPy arrays::

    from aclnn_py import custom
    custom.load("add_custom.json", {"AddCustom": lambda x, y, z: np.add(x, y, out=z)})
    ws, ex, ret = aclnn.aclnnAddCustomGetWorkspaceSize(x, y, out)
    ret = aclnn.aclnnAddCustom(0, ws, ex, stream)        # returns at once

The generated functions check their arguments as CANN's generated code does (a null required
tensor 161001; a dtype / format combination the definition does not list 161002, naming the
tensor and the combinations), build executors that are single-use or repeatable like every
other, and enqueue the kernel on the stream: a stream's worker runs it, after the tasks before it
and before those after it, and a kernel that raises is the stream's fault (507015, with the
operator and the exception in the message) at the next synchronize.
"""

from __future__ import annotations

import inspect
import json
import keyword
import os
import re
import reprlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from . import dtypes
from . import runtime as rt
from .dtypes import aclDataType as DT
from .enums import aclFormat
from .executor import aclOpExecutor
from .plan import Plan
from .status import aclnnStatus as S
from .status import record
from .tensor import aclBoolArray, aclFloatArray, aclIntArray, aclTensor, aclTensorList
from .views import Reject, check_overlap, check_self_overlap, check_views

# -------------------------------------------------------------------- the vocabulary -----

# the type names of msOpGen's definitions (CANN's Ascend C operator development guide)
TYPE_NAMES: dict[str, int] = {
    "fp16": DT.ACL_FLOAT16, "float16": DT.ACL_FLOAT16, "half": DT.ACL_FLOAT16,
    "float": DT.ACL_FLOAT, "fp32": DT.ACL_FLOAT, "float32": DT.ACL_FLOAT,
    "bf16": DT.ACL_BF16, "bfloat16": DT.ACL_BF16,
    "double": DT.ACL_DOUBLE, "fp64": DT.ACL_DOUBLE, "float64": DT.ACL_DOUBLE,
    "int8": DT.ACL_INT8, "uint8": DT.ACL_UINT8, "int16": DT.ACL_INT16, "uint16": DT.ACL_UINT16,
    "int32": DT.ACL_INT32, "uint32": DT.ACL_UINT32, "int64": DT.ACL_INT64,
    "uint64": DT.ACL_UINT64, "bool": DT.ACL_BOOL,
    "complex64": DT.ACL_COMPLEX64, "complex128": DT.ACL_COMPLEX128,
}
FORMAT_NAMES: dict[str, int] = {f.name[len("ACL_FORMAT_"):]: int(f) for f in aclFormat
                                if f.name.startswith("ACL_FORMAT_") and f.value >= 0}
FORMAT_NAMES["FRACTAL_Z_3D"] = int(aclFormat.ACL_FRACTAL_Z_3D)
PARAM_TYPES = ("required", "optional", "dynamic")
ATTR_TYPES = ("int", "float", "bool", "str", "listInt", "listFloat", "listBool")
# the spellings msOpGen's own definition files use for the same types (CANN's samples:
# "string", "list_int" ...), read as the names above
ATTR_ALIASES = {"string": "str", "list_int": "listInt", "list_float": "listFloat",
                "list_bool": "listBool"}
POINTER_ATTRS = ("str", "listInt", "listFloat", "listBool")  # char * / acl*Array *
MAX_TENSORS = 64  # inputs (a dynamic input's tensors each) and outputs of one call
# characters of an operator, input, output or attribute name; an operator's header file name,
# aclnn_<op_snake>.h, is then at most 200 characters (snake_case adds at most one '_' per two
# characters), msOpGen's limit on the file names it writes
MAX_NAME = 128
MAX_PARAMS = 256  # inputs, outputs and attributes of one operator
MAX_DEPTH = 32  # levels of lists and objects in a definition (msOpGen's need 5)

# what a generated parameter name may not be: the keywords of C11 and C++20 (with C++'s
# alternative tokens and C's macros of <stdbool.h>), the names the generated prototypes use
# themselves (types, workspace, executor, stream) and the object-like macros of the C standard
# headers a host program includes (<stddef.h>, <stdio.h>, <errno.h>, <math.h>, <complex.h>,
# <stdnoreturn.h>). Generated names have no '_' (camelCase), so the macro families with one
# (ACL_*, INT64_MAX, ...) cannot be generated.
C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
_Imaginary _Noreturn _Static_assert _Thread_local
alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl
concept consteval constexpr constinit const_cast co_await co_return co_yield decltype delete
dynamic_cast explicit export false friend mutable namespace new noexcept not
not_eq nullptr operator or or_eq private protected public reinterpret_cast requires
static_assert static_cast template this thread_local throw true try typeid typename using
virtual wchar_t xor xor_eq
NULL EOF BUFSIZ errno EDOM ERANGE EILSEQ NAN INFINITY I complex imaginary noreturn
workspace workspaceSize executor stream
aclnnStatus aclTensor aclTensorList aclIntArray aclFloatArray aclBoolArray aclOpExecutor
aclrtStream int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t
uintptr_t size_t ptrdiff_t wchar_t max_align_t
""".split())


class CustomOpError(ValueError):
    """A definition or a kernel table that cannot become an operator; the message names the
    field."""


@dataclass(frozen=True)
class Param:
    """One entry of ``input_desc`` / ``output_desc``."""

    name: str
    param_type: str  # required / optional / dynamic
    types: tuple  # aclDataType per combination
    formats: tuple  # aclFormat per combination
    type_names: tuple  # as written


@dataclass(frozen=True)
class Attr:
    name: str
    param_type: str  # required / optional
    type: str  # ATTR_TYPES
    default: Any  # parsed default_value (None for a required attribute)


@dataclass(frozen=True)
class OpDesc:
    """One operator of a definition, validated."""

    op: str  # "AddCustom"
    inputs: tuple  # Param
    outputs: tuple  # Param
    attrs: tuple  # Attr
    snake: str  # "add_custom"

    @property
    def api(self) -> str:
        return f"aclnn{self.op}"

    def c_names(self) -> list[str]:
        """The generated C function's parameter names, in CANN's order (inputs, attributes,
        outputs), as CANN's generator names them (docs/custom_ops.md, "Parameter names")."""
        return [c for _, c in self.c_fields()]

    @property
    def refs(self) -> frozenset:
        """The names of the in-place ("ref") parameters: an input and an output of one name."""
        return frozenset(p.name for p in self.inputs) & frozenset(p.name for p in self.outputs)

    @property
    def c_outputs(self) -> tuple:
        """The outputs that are parameters of the generated function (not the ref ones, whose
        input is the parameter)."""
        refs = self.refs
        return tuple(p for p in self.outputs if p.name not in refs)

    def c_fields(self) -> list[tuple[str, str]]:
        """(the definition's field, the generated name) of each parameter, in order."""
        refs = self.refs
        out = [(f"input_desc[{i}].name",
                camel(p.name) + ("Optional" if p.param_type == "optional" else "")
                + ("Ref" if p.name in refs else ""))
               for i, p in enumerate(self.inputs)]
        out += [(f"attr[{i}].name",
                 camel(a.name) + ("Optional" if a.param_type == "optional"
                                  and a.type in POINTER_ATTRS else ""))
                for i, a in enumerate(self.attrs)]
        single = len(self.c_outputs) == 1
        out += [(f"output_desc[{i}].name",
                 ("out" if single else camel(p.name) + "Out")
                 + ("Optional" if p.param_type == "optional" else ""))
                for i, p in enumerate(self.outputs) if p.name not in refs]
        return out

    def combinations(self) -> list[tuple]:
        """Each supported combination: ((dtype, format) per input, then per output)."""
        params = self.inputs + self.outputs
        n = len(params[0].types) if params else 0
        return [tuple((p.types[i], p.formats[i]) for p in params) for i in range(n)]


def snake_case(op: str) -> str:
    """msOpGen's file name of an operator: AddCustom -> add_custom (CANN's generated
    aclnn_add_custom.h)."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", op)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def camel(name: str) -> str:
    """negative_slope -> negativeSlope (CANN's generated parameter names)."""
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


# ------------------------------------------------------------------ parsing definitions ---


def _fail(where: str, text: str) -> CustomOpError:
    return CustomOpError(f"{where}: {text}")


def _read(definition) -> list:
    if isinstance(definition, Path) or (isinstance(definition, str)
                                        and not definition.lstrip().startswith(("[", "{"))):
        path = Path(definition)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path, not UTF-8
            raise CustomOpError(f"cannot read the operator definition {_short(str(path))}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
        where = str(path)
    elif isinstance(definition, str):
        text, where = definition, "the definition"
    else:
        data = definition
        where = ""
        text = None
    if text is not None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CustomOpError(f"{where}: not valid JSON: {exc.msg} at line {exc.lineno} "
                                f"column {exc.colno}") from None
        except RecursionError:
            raise CustomOpError(f"{where}: nested too deeply to be an operator definition (a "
                                "definition is a list of flat objects)") from None
        except ValueError as exc:  # e.g. an integer of more digits than Python converts
            raise CustomOpError(f"{where}: not a usable JSON document: {exc}") from None
    if _depth(data) > MAX_DEPTH:
        raise CustomOpError(f"{where or 'the definition'}: nested more than {MAX_DEPTH} levels "
                            "deep (a definition is a list of flat objects)")
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list):
        raise CustomOpError(f"{where or 'the definition'}: expected a list of operators "
                            f"(msOpGen's format), got {type(data).__name__}")
    if not data:
        raise CustomOpError(f"{where or 'the definition'}: the list of operators is empty")
    return data


def _depth(data) -> int:
    """How deeply lists and objects nest in ``data`` (without recursion; stops counting past
    MAX_DEPTH)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        v, level = stack.pop()
        if isinstance(v, (list, tuple, Mapping)):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                stack.extend((x, level + 1) for x in (v.values() if isinstance(v, Mapping)
                                                      else v))
    return deepest


def _names_list(where: str, value, known: Mapping, what: str) -> tuple:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _fail(where, f"expected a non-empty list of {what} names, got {_short(value)}")
    out = []
    for i, v in enumerate(value):
        key = v.strip() if isinstance(v, str) else v
        if not isinstance(key, str) or (key not in known and key.lower() not in known
                                        and key.upper() not in known):
            raise _fail(f"{where}[{i}]", f"{_short(v)} is not a {what} msOpGen accepts; known: "
                        f"{', '.join(sorted(known))}")
        out.append(known.get(key, known.get(key.lower(), known.get(key.upper()))))
    return tuple(out)


def _ident(where: str, value, what: str) -> str:
    """A name of the definition: an ASCII identifier that is safe in generated C, C++ and
    Python (the rules of docs/custom_ops.md, "Names")."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise _fail(where, f"{what} must be an identifier (ASCII letters, digits, _, not "
                    f"starting with a digit), got {_short(value)}")
    if len(value) > MAX_NAME:
        raise _fail(where, f"{what} is {len(value)} characters long; at most {MAX_NAME}: "
                    f"{_short(value)}")
    if value.startswith("_") or value.endswith("_") or "__" in value:
        raise _fail(where, f"{what} {value!r} starts or ends with '_' or has '__': C reserves "
                    "'_X...' and '..__...' names, and CANN's generated camelCase name of it is "
                    "not documented")
    return value


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 80, 80


def _short(value) -> str:
    """repr() of a value of a definition, bounded (a value nested thousands deep or megabytes
    long is summarized, not recursed into or printed whole)."""
    try:
        return _REPR.repr(value)
    except (RecursionError, ValueError):  # ValueError: an int too long for str()
        return f"<{type(value).__name__}>"


def _param(where: str, d, output: bool) -> Param:
    if not isinstance(d, Mapping):
        raise _fail(where, f"expected an object, got {type(d).__name__}")
    name = _ident(f"{where}.name", d.get("name"), "name")
    ptype = d.get("param_type", "required")
    if ptype not in PARAM_TYPES:
        raise _fail(f"{where}.param_type",
                    f"{_short(ptype)} is not one of {', '.join(PARAM_TYPES)}")
    if "type" not in d:
        raise _fail(where, "'type' is missing")
    types = _names_list(f"{where}.type", d["type"], TYPE_NAMES, "type")
    type_names = tuple(d["type"] if isinstance(d["type"], list) else [d["type"]])
    if "format" in d:
        formats = _names_list(f"{where}.format", d["format"], FORMAT_NAMES, "format")
    else:  # msOpGen's default
        formats = (int(aclFormat.ACL_FORMAT_ND),) * len(types)
    if len(formats) == 1 and len(types) > 1:  # one format for every combination (msOpGen)
        formats = formats * len(types)
    if len(formats) != len(types):
        raise _fail(where, f"'format' has {len(formats)} entries but 'type' has {len(types)}: "
                    "the i-th entries of both form the i-th combination")
    return Param(name, ptype, types, formats, type_names)


_BOOLS = {"true": True, "false": False, "1": True, "0": False}


def _attr_value(where: str, atype: str, value):
    """An attribute value of the definition's ``default_value`` (a string in msOpGen's files,
    or already a JSON value)."""
    try:
        if isinstance(value, str) and atype.startswith("list"):
            text = value.strip()
            if text.startswith("{") and text.endswith("}"):  # msOpGen's "{1, 1}", "{}"
                text = f"[{text[1:-1]}]"
            value = json.loads(text if text.startswith("[") else f"[{text}]")
        if atype == "int":
            if isinstance(value, bool):
                raise ValueError
            v = int(value, 0) if isinstance(value, str) else _exact_int(value)
            if not -(1 << 63) <= v < 1 << 63:
                raise ValueError  # int64_t in the generated C
            return v
        if atype == "float":
            return float(value)
        if atype == "bool":
            if isinstance(value, str):
                return _BOOLS[value.strip().lower()]
            if isinstance(value, bool):
                return value
            raise ValueError
        if atype == "str":
            if not isinstance(value, str):
                raise ValueError
            return value
        if not isinstance(value, list):
            raise ValueError
        item = atype[4:].lower()
        return tuple(_attr_value(where, item, v) for v in value)
    except RecursionError:
        raise _fail(where, f"nested too deeply: a {atype} default is a flat list") from None
    except (ValueError, TypeError, KeyError, OverflowError):  # JSONDecodeError: a ValueError
        raise _fail(where, f"{_short(value)} is not a value of type {atype}") from None


def _exact_int(v) -> int:
    if isinstance(v, float) and not v.is_integer():
        raise ValueError
    return int(v)


def _attr(where: str, d) -> Attr:
    if not isinstance(d, Mapping):
        raise _fail(where, f"expected an object, got {type(d).__name__}")
    name = _ident(f"{where}.name", d.get("name"), "name")
    if keyword.iskeyword(name):
        raise _fail(f"{where}.name", f"name {name!r} is a Python keyword (the kernel takes the "
                    "attributes as keyword arguments)")
    ptype = d.get("param_type", "optional")
    if ptype not in ("required", "optional"):
        raise _fail(f"{where}.param_type", f"{_short(ptype)} is not one of required, optional")
    atype = d.get("type")
    if isinstance(atype, str):
        atype = ATTR_ALIASES.get(atype, atype)
    if atype not in ATTR_TYPES:
        raise _fail(f"{where}.type", f"{_short(atype)} is not one of "
                    f"{', '.join(ATTR_TYPES)} (or msOpGen's {', '.join(ATTR_ALIASES)})")
    default = None
    key = "default_value" if "default_value" in d else "value"  # "value": older samples' key
    if key in d:
        default = _attr_value(f"{where}.{key}", atype, d[key])
    elif ptype == "optional":
        raise _fail(where, "an optional attribute needs a 'default_value'")
    return Attr(name, ptype, atype, default)


def parse(definition) -> list[OpDesc]:
    """The operators of a definition (a path, a JSON string, or the parsed list), validated.
    Raises CustomOpError naming the field at fault."""
    ops = []
    seen: set[str] = set()
    for i, d in enumerate(_read(definition)):
        where = f"operator {i}"
        if not isinstance(d, Mapping):
            raise _fail(where, f"expected an object, got {type(d).__name__}")
        op = _ident(f"{where}.op", d.get("op"), "op")
        if not op[0].isupper():
            raise _fail(f"{where}.op", f"{op!r} must start with a capital letter (msOpGen "
                        "names operators in UpperCamelCase)")
        where = op
        if op in seen:
            raise _fail(where, "defined twice in this definition")
        seen.add(op)
        for key in ("input_desc", "output_desc", "attr"):
            if key in d and not isinstance(d[key], list):
                raise _fail(f"{where}.{key}", f"expected a list, got {type(d[key]).__name__}")
        inputs = tuple(_param(f"{where}.input_desc[{j}]", p, False)
                       for j, p in enumerate(d.get("input_desc", [])))
        if not d.get("output_desc"):
            raise _fail(f"{where}.output_desc", "an operator needs at least one output")
        outputs = tuple(_param(f"{where}.output_desc[{j}]", p, True)
                        for j, p in enumerate(d["output_desc"]))
        attrs = tuple(_attr(f"{where}.attr[{j}]", a) for j, a in enumerate(d.get("attr", [])))
        params = inputs + outputs
        n = len(params[0].types)
        for j, p in enumerate(params):
            if len(p.types) != n:
                kind = "input_desc" if j < len(inputs) else "output_desc"
                k = j if j < len(inputs) else j - len(inputs)
                raise _fail(f"{where}.{kind}[{k}].type",
                            f"{len(p.types)} entries, but {params[0].name!r} has {n}: msOpGen "
                            "requires type (and format) lists of one length, the i-th entries "
                            "forming the i-th supported combination")
        if len(params) + len(attrs) > MAX_PARAMS:
            raise _fail(where, f"{len(params) + len(attrs)} inputs, outputs and attributes; "
                        f"the emulator takes at most {MAX_PARAMS}")
        _check_names(where, inputs, outputs, attrs)
        desc = OpDesc(op, inputs, outputs, attrs, snake_case(op))
        _check_c_names(desc)
        ops.append(desc)
    _check_snake(ops)
    return ops


def _check_names(where: str, inputs, outputs, attrs) -> None:
    """The definition's own names: each used once, except an input and an output of one name:
    CANN's in-place ("ref") parameter, one tensor read and written, which must be a required
    input and a required output of the same types and formats."""
    fields: dict[str, str] = {}
    kinds = [("input_desc", inputs), ("output_desc", outputs), ("attr", attrs)]
    by_field = {}
    for kind, items in kinds:
        for j, p in enumerate(items):
            field = f"{kind}[{j}].name"
            by_field[field] = p
            first = fields.setdefault(p.name, field)
            if first == field:
                continue
            if first.startswith("input_desc") and kind == "output_desc":
                src = by_field[first]
                ref = f"in CANN's generator an in-place (ref) parameter, '{camel(p.name)}Ref'"
                if src.param_type != "required" or p.param_type != "required":
                    raise _fail(f"{where}.{field}", f"the output {p.name!r} has the name of "
                                f"{first[:-5]} ({ref}); the emulator takes a ref parameter "
                                "only as a required input and a required output, not "
                                f"{src.param_type} / {p.param_type}")
                if (src.types, src.formats) != (p.types, p.formats):
                    raise _fail(f"{where}.{field}", f"the output {p.name!r} has the name of "
                                f"{first[:-5]} ({ref}), but other types or formats: one tensor "
                                "is both, so the lists must be equal")
                fields[p.name] = field  # a third use is a duplicate
                continue
            raise _fail(f"{where}.{field}", f"the name {p.name!r} is used twice among inputs, "
                        f"outputs and attributes (also {first})")


def _check_c_names(d: OpDesc) -> None:
    """The generated parameter names: none reserved in C, C++ or the generated code, no two
    equal (``a_b`` and ``aB``, ``x`` optional and ``xOptional``, an input ``out`` and the
    single output ``out``)."""
    seen: dict[str, str] = {}
    for field, name in d.c_fields():
        if name in C_RESERVED:
            raise _fail(f"{d.op}.{field}", f"the generated parameter name {name!r} is a keyword "
                        "of C or C++, or a name the generated header or the C headers it "
                        "includes use themselves; rename it")
        other = seen.setdefault(name, field)
        if other != field:
            raise _fail(f"{d.op}.{field}", f"the generated parameter name {name!r} is also the "
                        f"name of {other} (CANN's generator names parameters in camelCase, "
                        "with Optional / Out suffixes); rename one of them")


def _check_snake(descs: Sequence[OpDesc], loaded: Optional[Mapping[str, OpDesc]] = None
                 ) -> None:
    """Operators whose header file names (aclnn_<snake>.h) are one file: refused, naming both
    (within ``descs``, and against the operators already ``loaded``)."""
    seen = {d.snake: (d.op, "an operator already loaded") for d in (loaded or {}).values()}
    for d in descs:
        name = f"aclnn_{d.snake}.h"
        other, origin = seen.setdefault(d.snake, (d.op, "another operator of the definition"))
        if other != d.op:
            raise _fail(f"{d.op}.op", f"{d.op!r} and {other!r} ({origin}) have one header file, "
                        f"{name}, and one snake_case name {d.snake!r}; rename one of them")


# --------------------------------------------------------------------------- registry ------

_lock = threading.RLock()
_REGISTRY: dict[str, CustomOp] = {}


class CustomOp:
    """A loaded operator: its definition, its kernel and its generated functions."""

    def __init__(self, desc: OpDesc, kernel: Callable):
        self.desc = desc
        self.kernel = kernel
        self.get_workspace_size = _make_phase1(self)
        self.launch = _make_phase2(self)

    @property
    def name(self) -> str:
        return self.desc.op

    def __repr__(self) -> str:
        return f"<CustomOp {self.desc.op} ({self.desc.api}GetWorkspaceSize / {self.desc.api})>"


def load(definition, kernels: Mapping[str, Callable]) -> list[CustomOp]:
    """Load custom operators: ``definition`` is a path to msOpGen's JSON, a JSON string or the
    parsed list; ``kernels`` maps each operator's name (``"AddCustom"``, or its snake_case
    file name ``"add_custom"``) to a Python callable.

    The kernel is called as ``kernel(*inputs, *outputs, **attrs)``: the inputs as read-only
    NumPy arrays over device memory (``None`` for an absent optional input, a list of arrays for
    a dynamic one), then the outputs (writable arrays; ``None`` for an absent optional output;
    an in-place parameter, an input and an output of one name, is one writable array at both
    places), then the attributes under their JSON names. It runs on the stream's worker when
    the stream reaches it.

    Adds ``aclnn<Op>GetWorkspaceSize`` and ``aclnn<Op>`` to ``aclnn_py.aclnn``. Returns the
    operators. Raises CustomOpError for a bad definition, a missing or non-callable kernel, or
    an operator that is already loaded (all or nothing: a failure loads none)."""
    descs = parse(definition)
    if not isinstance(kernels, Mapping):
        raise CustomOpError(f"kernels must map operator names to callables, not "
                            f"{type(kernels).__name__}")
    from . import aclnn as _aclnn

    ops = []
    for d in descs:
        fn = kernels.get(d.op, kernels.get(d.snake))
        if fn is None:
            keys = ", ".join(map(repr, kernels)) or "none"
            raise CustomOpError(f"{d.op}: no kernel: kernels has no entry {d.op!r} (or "
                                f"{d.snake!r}); its keys: {keys}")
        if not callable(fn):
            raise CustomOpError(f"{d.op}: the kernel is not callable: {fn!r}")
        ops.append(CustomOp(d, fn))
    with _lock:
        _check_snake(descs, {n: c.desc for n, c in _REGISTRY.items() if n not in
                             {d.op for d in descs}})
        for c in ops:
            api = c.desc.api
            if c.name in _REGISTRY:
                raise CustomOpError(f"{c.name}: already loaded (aclnn_py.custom.unload("
                                    f"{c.name!r}) first to replace it)")
            if hasattr(_aclnn, api) or hasattr(_aclnn, api + "GetWorkspaceSize"):
                raise CustomOpError(f"{c.name}: {api} is a built-in operator's name")
        for c in ops:
            _REGISTRY[c.name] = c
            setattr(_aclnn, c.desc.api + "GetWorkspaceSize", c.get_workspace_size)
            setattr(_aclnn, c.desc.api, c.launch)
    _install_host()
    from .diagnostics import wrap  # the checkers, the trace and the API log see them too

    wrap.adopt([n for c in ops for n in (c.desc.api + "GetWorkspaceSize", c.desc.api)])
    return ops


def unload(name: str) -> None:
    """Remove a loaded operator and its functions from ``aclnn_py.aclnn``. Launches already
    enqueued still run; an executor built before runs only through a reference to the old
    phase-2 function kept from before the unload (``aclnn``'s is gone, and the phase 2 of an
    operator loaded again refuses it: 161002). docs/custom_ops.md"""
    from . import aclnn as _aclnn

    with _lock:
        c = _REGISTRY.pop(name, None)
        if c is None:
            raise CustomOpError(f"{name}: not loaded; loaded: {', '.join(_REGISTRY) or 'none'}")
        from .diagnostics import wrap

        for attr in (c.desc.api + "GetWorkspaceSize", c.desc.api):
            if wrap.original(getattr(_aclnn, attr, None)) in (c.get_workspace_size, c.launch):
                delattr(_aclnn, attr)
        wrap.forget([c.desc.api + "GetWorkspaceSize", c.desc.api])


def loaded() -> dict[str, CustomOp]:
    """The loaded operators by name."""
    with _lock:
        return dict(_REGISTRY)


# ---------------------------------------------------------------------------- phase 1 ------


def _typename(v) -> str:
    return type(v).__name__


def _attr_arg(api: str, a: Attr, cname: str, value):
    """A generated function's attribute argument (``cname``) as C would take it: the value, or
    TypeError for what C could not compile. None is an absent optional attribute (its
    default)."""
    if value is None:
        return None
    if a.type == "int":
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"{api}: '{cname}' (int64_t) must be an int, not {_typename(value)}")
        return int(value)
    if a.type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{api}: '{cname}' (double) must be a float, not {_typename(value)}")
        return float(value)
    if a.type == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{api}: '{cname}' (bool) must be a bool, not {_typename(value)}")
        return value
    if a.type == "str":
        if isinstance(value, bytes):
            value = value.decode()
        if not isinstance(value, str):
            raise TypeError(f"{api}: '{cname}' (char *) must be a str, not {_typename(value)}")
        return value
    cls = {"listInt": aclIntArray, "listFloat": aclFloatArray, "listBool": aclBoolArray}[a.type]
    if not isinstance(value, cls):
        raise TypeError(f"{api}: '{cname}' must be an {cls.__name__}, not {_typename(value)}")
    return value


def _describe(dt: int, fmt: int) -> str:
    return f"{dtypes.name(dt)}/{aclFormat(fmt).name[len('ACL_FORMAT_'):]}" \
        if fmt in aclFormat._value2member_map_ else f"{dtypes.name(dt)}/{fmt}"


def _combos_text(labels: Sequence[str], combos: Sequence[tuple]) -> str:
    """The combinations under the generated function's parameter names."""
    return "; ".join("(" + ", ".join(f"{label}: {_describe(*c[i])}"
                                     for i, label in enumerate(labels)) + ")" for c in combos)


def _make_phase1(c: CustomOp) -> Callable:
    desc = c.desc
    api = desc.api + "GetWorkspaceSize"
    n_in, n_attr, n_out = len(desc.inputs), len(desc.attrs), len(desc.c_outputs)
    names = desc.c_names()

    def get_workspace_size(*args):
        if len(args) != n_in + n_attr + n_out:
            raise TypeError(f"{api}() takes {n_in + n_attr + n_out} arguments "
                            f"({', '.join(names)}), {len(args)} given")
        ins = args[:n_in]
        attr_vals = args[n_in:n_in + n_attr]
        outs = args[n_in + n_attr:]
        try:
            return _phase1(c, api, names, ins, attr_vals, outs)
        except Reject as rej:
            return 0, None, record(api, rej.code, rej.text)

    get_workspace_size.__name__ = get_workspace_size.__qualname__ = api
    # help() and inspect show the generated header's parameter names
    get_workspace_size.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    get_workspace_size.__doc__ = (
        f"{api}({', '.join(names)}) -> (workspace_size, executor, ret): phase 1 of the custom "
        f"operator {desc.op} (aclnn_py.custom; docs/custom_ops.md).")
    return get_workspace_size


def _phase1(c: CustomOp, api: str, names: list, ins, attr_vals, outs):
    desc = c.desc
    n_in = len(desc.inputs)
    # types first (what C could not compile), then CANN's null checks, in argument order
    for i, (p, v) in enumerate(zip(desc.inputs, ins)):
        cls = aclTensorList if p.param_type == "dynamic" else aclTensor
        if v is not None and not isinstance(v, cls):
            raise TypeError(f"{api}: '{names[i]}' must be an {cls.__name__} or None, not "
                            f"{_typename(v)}")
    for j, (p, v) in enumerate(zip(desc.c_outputs, outs)):
        cls = aclTensorList if p.param_type == "dynamic" else aclTensor
        if v is not None and not isinstance(v, cls):
            raise TypeError(f"{api}: '{names[n_in + len(desc.attrs) + j]}' must be an "
                            f"{cls.__name__} or None, not {_typename(v)}")
    attr_names = names[n_in:n_in + len(desc.attrs)]
    attrs = {a.name: _attr_arg(api, a, cname, v)
             for a, cname, v in zip(desc.attrs, attr_names, attr_vals)}
    for i, (p, v) in enumerate(zip(desc.inputs, ins)):
        if v is None and p.param_type != "optional":
            raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                          f"Expected a proper Tensor but got null for argument {names[i]}.")
    for a, cname in zip(desc.attrs, attr_names):
        if attrs[a.name] is None:
            if a.param_type == "required":
                raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                              f"Expected a value but got null for attribute {cname}.")
            attrs[a.name] = a.default
    given_names = names[n_in + len(desc.attrs):]
    for p, name, v in zip(desc.c_outputs, given_names, outs):
        if v is None and p.param_type != "optional":
            raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                          f"Expected a proper Tensor but got null for argument {name}.")
    # every output of the definition, in its order: a ref output is its input's tensor
    if desc.refs:
        where = {p.name: i for i, p in enumerate(desc.inputs)}
        given = iter(zip(given_names, outs))
        full = [(names[where[p.name]], ins[where[p.name]]) if p.name in desc.refs
                else next(given) for p in desc.outputs]
        out_names, outs = [n for n, _ in full], tuple(v for _, v in full)
    else:
        out_names = given_names
    # destroyed handles
    for name, v in zip(names[:n_in], ins):
        if v is not None and v.destroyed:
            what = "Tensor list" if isinstance(v, aclTensorList) else "Tensor"
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                          f"{what} {name} was already destroyed.")
    for name, v in zip(out_names, outs):
        if v is not None and v.destroyed:
            what = "Tensor list" if isinstance(v, aclTensorList) else "Tensor"
            raise Reject(S.ACLNN_ERR_PARAM_INVALID, f"{what} {name} was already destroyed.")
    for cname, v in zip(attr_names, attr_vals):
        if getattr(v, "destroyed", False):
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                          f"Attribute {cname} ({v!r}) was already destroyed.")
    # the dtype / format combination: narrowed tensor by tensor, in argument order
    combos = desc.combinations()
    alive = list(range(len(combos)))
    values = list(ins) + list(outs)
    labels = names[:n_in] + out_names
    for k, (v, label) in enumerate(zip(values, labels)):
        if v is None:
            continue
        members = list(v.tensors) if isinstance(v, aclTensorList) else [v]
        for m, t in enumerate(members):
            if t.destroyed:
                raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                              f"Tensor {label}[{m}] was already destroyed.")
            keep = [i for i in alive if combos[i][k] == (t.data_type, t.format)]
            if not keep:
                who = f"{label}[{m}]" if isinstance(v, aclTensorList) else label
                got = _describe(t.data_type, t.format)
                before = ("" if len(alive) == len(combos) else
                          " together with the tensors before it")
                raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                              f"Tensor {who} has dtype/format {got}, which {desc.op}'s "
                              f"definition does not list{before}; the supported combinations "
                              f"are {_combos_text(labels, combos)}.")
            alive = keep
    # views, device memory, one device, no output aliasing itself or overlapping an input
    flat_in: list = []
    dynamic: dict = {}
    for i, (v, label) in enumerate(zip(ins, names[:n_in])):
        if isinstance(v, aclTensorList):
            dynamic[i] = (len(flat_in), len(v.tensors))
            flat_in += [(f"{label}[{m}]", t) for m, t in enumerate(v.tensors)]
        elif v is not None:
            flat_in.append((label, v))
    # an absent optional output takes no output index (as an absent optional input takes no
    # input index): aclSetOutputTensorAddr counts the outputs given, a dynamic output's tensors
    # one by one
    flat_out: list = []
    for name, v in zip(out_names, outs):
        if isinstance(v, aclTensorList):
            flat_out += [(f"{name}[{m}]", t) for m, t in enumerate(v.tensors)]
        elif v is not None:
            flat_out.append((name, v))
    if len(flat_in) + len(flat_out) > MAX_TENSORS:
        raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                      f"{len(flat_in) + len(flat_out)} tensors in one call of {desc.op}; the "
                      f"emulator takes at most {MAX_TENSORS}.")
    device = check_views(flat_in + flat_out)
    check_self_overlap(flat_out)
    check_overlap([(n, t, t.data) for n, t in flat_in], [(n, t, t.data) for n, t in flat_out])
    # the kernel's keyword arguments: plain values, as phase 1 saw them (an array destroyed or
    # changed after phase 1 does not reach the kernel)
    kwargs = {k: (tuple(v.values) if isinstance(v, (aclIntArray, aclFloatArray, aclBoolArray))
                  else v) for k, v in attrs.items()}
    ex = aclOpExecutor(desc.api, Plan(), flat_in, flat_out, -1 if device is None else device)
    ex.dynamic = dynamic
    if device is not None:  # something to run
        ex.ntasks = 1
        where = {p.name: i for i, p in enumerate(desc.inputs)}
        ex.host = _Launcher(
            c, [(p, v) for p, v in zip(desc.inputs, ins)],
            [where[p.name] if p.name in desc.refs else
             ("list", len(v.tensors)) if isinstance(v, aclTensorList) else (v is not None)
             for p, v in zip(desc.outputs, outs)], kwargs)
    return 0, ex, 0


# ---------------------------------------------------------------------------- phase 2 ------


def _make_phase2(c: CustomOp) -> Callable:
    api = c.desc.api
    from .executor import run

    def launch(workspace, workspaceSize, executor, stream):
        host = getattr(executor, "host", None)
        if type(host) is _Launcher and host.op is not c:  # built before an unload + load
            return record(api, S.ACLNN_ERR_PARAM_INVALID,
                          f"the executor was built by {c.desc.op} before it was unloaded "
                          f"(aclnn_py.custom.unload); an operator loaded again does not run "
                          f"the executors of the one it replaced: call {api}GetWorkspaceSize "
                          "again")
        return run(api, workspace, workspaceSize, executor, stream)

    launch.__name__ = launch.__qualname__ = api
    launch.__doc__ = (f"{api}(workspace, workspaceSize, executor, stream) -> ret: phase 2 of the "
                      f"custom operator {c.desc.op}: enqueues its kernel on the stream.")
    return launch


@dataclass(frozen=True)
class _View:
    """A tensor of one launch: where it is and how to see it as an array."""

    label: str
    addr: int
    dtype: int
    shape: tuple
    strides: tuple  # elements
    offset: int  # elements
    lo: int  # bytes, relative to addr
    hi: int


class _Launcher:
    """An executor's host launch: snapshots the bound addresses and enqueues the kernel."""

    __slots__ = ("op", "groups", "present", "attrs")

    def __init__(self, op: CustomOp, groups: list, present: list, attrs: dict):
        self.op = op
        # per input of the definition: its param_type and tensor count (None: absent)
        self.groups = [(p.param_type, None if v is None else
                        (len(v.tensors) if isinstance(v, aclTensorList) else 1))
                       for p, v in groups]
        # per output of the definition: True (given), False (absent), ("list", n) (a dynamic
        # output of n tensors) or, for a ref output, its input's index (the kernel gets the
        # input's writable array at both places)
        self.present = present
        self.attrs = attrs

    def __call__(self, ex: aclOpExecutor, stream: int, blocking: bool) -> int:
        views = [_View(label, addr, t.data_type, tuple(t.view_dims), tuple(t.strides), t.offset,
                       t.lo, t.hi)
                 for (label, t), addr in zip(ex.inputs + ex.outputs, ex.in_addrs + ex.out_addrs)]
        job = _Job(self.op, self.groups, self.present, views[:len(ex.inputs)],
                   views[len(ex.inputs):], self.attrs)
        return _submit(stream, job, blocking)


class _Job:
    __slots__ = ("op", "groups", "present", "ins", "outs", "attrs")

    def __init__(self, op, groups, present, ins, outs, attrs):
        self.op, self.groups, self.present = op, groups, present
        self.ins, self.outs, self.attrs = ins, outs, attrs

    def arrays(self) -> tuple[list, list]:
        refs = {p for p in self.present if isinstance(p, int) and not isinstance(p, bool)}
        args: list = []
        k = 0
        for i, (_kind, count) in enumerate(self.groups):
            if count is None:
                args.append(None)
            elif _kind == "dynamic":
                args.append([_array(v, writable=False) for v in self.ins[k:k + count]])
                k += count
            else:
                args.append(_array(self.ins[k], writable=i in refs))
                k += 1
        outs: list = []
        views = iter(self.outs)
        for p in self.present:
            if p is False:
                outs.append(None)
            elif p is True:
                outs.append(_array(next(views), writable=True))
            elif isinstance(p, tuple):  # a dynamic output
                outs.append([_array(next(views), writable=True) for _ in range(p[1])])
            else:  # a ref output: its view is the input's
                next(views)
                outs.append(args[p])
        return args, outs

    def run(self) -> None:
        ins, outs = self.arrays()
        self.op.kernel(*ins, *outs, **self.attrs)


class KernelFault(Exception):
    """A tensor of a launch was freed before the stream reached the kernel."""


def _array(v: _View, writable: bool) -> np.ndarray:
    np_dtype = dtypes.to_numpy(v.dtype)
    if any(d == 0 for d in v.shape):
        a = np.empty(v.shape, np_dtype)
    else:
        nbytes = v.hi - v.lo
        if rt.range_device_locked(v.addr + v.lo, nbytes) < 0:
            raise KernelFault(f"'{v.label}' bytes [0x{v.addr + v.lo:x}, 0x{v.addr + v.hi:x}) are "
                              "not inside a live device allocation any more (freed before the "
                              "stream reached the kernel); the kernel did not run")
        buf = rt.host_buffer(v.addr + v.lo, nbytes)
        size = np_dtype.itemsize
        a = np.ndarray(v.shape, np_dtype, buffer=buf, offset=v.offset * size - v.lo,
                       strides=tuple(s * size for s in v.strides))
    a.flags.writeable = writable
    return a


# the jobs enqueued and not yet run, by token (the task's emu_host_args.token)
_jobs: dict[int, _Job] = {}
_next = [1]
_jobs_lock = threading.Lock()
_host_installed = [False]


def _install_host() -> None:
    with _jobs_lock:
        if not _host_installed[0]:
            rt.set_host_kernel(_run_job)
            _host_installed[0] = True


def _submit(stream: int, job: _Job, blocking: bool) -> int:
    with _jobs_lock:
        token = _next[0]
        _next[0] += 1
        _jobs[token] = job
    code, text = rt.submit_host(stream, token, job.op.desc.api, job.op.desc.op, blocking)
    if code and not blocking:
        with _jobs_lock:
            _jobs.pop(token, None)
    if code:
        return record(job.op.desc.api, code, text)
    return 0


def _run_job(token: int, msg: Optional[Any]) -> Optional[str]:
    """The stream's call (runtime.set_host_kernel): run the job (or drop it when ``msg`` is
    None: the task was skipped). Returns None, or the fault's message."""
    with _jobs_lock:
        job = _jobs.pop(token, None)
    if msg is None or job is None:
        return None if job is not None or msg is None else (
            f"host task {token} has no job (the process forked since it was enqueued?)")
    name = job.op.desc.op
    try:
        job.run()
    except KernelFault as exc:
        return f"{job.op.desc.api}: {name}: {exc}"
    except BaseException as exc:  # noqa: BLE001 - the kernel is the user's: report anything
        if isinstance(exc, SystemExit) and rt.host_forked():  # a child forked in the kernel
            rt.exit_forked_child(exc.code)
        kernel = getattr(job.op.kernel, "__qualname__", repr(job.op.kernel))
        return (f"{job.op.desc.api}: the kernel of {name} ({kernel}) raised "
                f"{type(exc).__name__}: {exc}")
    return None


def _kernel_source(path: Union[str, os.PathLike]):
    """Import a kernels module by path (``aclnn-py opgen --kernels``)."""
    import importlib.util

    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"aclnn_custom_kernels_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise CustomOpError(f"{path}: cannot import kernels from it: a kernels module is a "
                            "Python source file (*.py)")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # the module's own fault: no traceback of ours
        raise CustomOpError(_import_failure(path, exc)) from None
    return module


def _import_failure(path: Path, exc: BaseException) -> str:
    """Why importing kernels module ``path`` failed, as one message: where (the module's line
    that raised, or the syntax error's), what, and the fix."""
    import traceback

    if isinstance(exc, SyntaxError):  # IndentationError and TabError too
        where = f"{path}, line {exc.lineno}" if exc.lineno else str(path)
        return (f"{where}: {type(exc).__name__}: {exc.msg}: the kernels module does not "
                f"compile; fix it (python -m py_compile {path} shows the same error)")
    if isinstance(exc, SystemExit):
        what = f"SystemExit({exc.code!r})"
    else:
        what = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    target = os.path.realpath(path)
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__)
             if os.path.realpath(f.filename) == target]
    where = f"{path}, line {lines[-1]}" if lines else str(path)
    fix = ("install the missing module or fix the import"
           if isinstance(exc, ImportError) else "fix the module")
    return (f"{where}: importing the kernels module raised {what}; {fix} (python {path} "
            "shows the whole traceback)")


def kernels_from_module(module, descs: Sequence[OpDesc]) -> dict:
    """Each operator's kernel from ``module``: the function named after the op's snake_case
    name (``add_custom``), or its own name (``AddCustom``)."""
    out = {}
    for d in descs:
        fn = getattr(module, d.snake, None) or getattr(module, d.op, None)
        if fn is None:
            raise CustomOpError(f"{d.op}: no kernel: {getattr(module, '__file__', module)} "
                                f"defines no function {d.snake!r} (or {d.op!r})")
        out[d.op] = fn
    return out


__all__ = ["load", "unload", "loaded", "parse", "CustomOp", "CustomOpError", "OpDesc", "Param",
           "Attr", "snake_case", "camel", "kernels_from_module", "TYPE_NAMES", "FORMAT_NAMES"]

