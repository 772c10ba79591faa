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

import json
import keyword
import os
import re
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
MAX_TENSORS = 64  # inputs (a dynamic input's tensors each) and outputs of one call


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
        outputs): camelCase, ``<name>Optional`` for an optional input, ``out`` for a single
        output."""
        names = [camel(p.name) + ("Optional" if p.param_type == "optional" else "")
                 for p in self.inputs]
        names += [camel(a.name) for a in self.attrs]
        if len(self.outputs) == 1:
            names.append("out")
        else:
            names += [camel(p.name) for p in self.outputs]
        return names

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
        except OSError as exc:
            raise CustomOpError(f"cannot read the operator definition {str(path)!r}: "
                                f"{exc.strerror or exc}") from None
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
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list):
        raise CustomOpError(f"{where or 'the definition'}: expected a list of operators "
                            f"(msOpGen's format), got {type(data).__name__}")
    if not data:
        raise CustomOpError(f"{where or 'the definition'}: the list of operators is empty")
    return data


def _names_list(where: str, value, known: Mapping, what: str) -> tuple:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _fail(where, f"expected a non-empty list of {what} names, got {value!r}")
    out = []
    for i, v in enumerate(value):
        key = v.strip() if isinstance(v, str) else v
        if not isinstance(key, str) or (key not in known and key.lower() not in known
                                        and key.upper() not in known):
            raise _fail(f"{where}[{i}]", f"{v!r} is not a {what} msOpGen accepts; known: "
                        f"{', '.join(sorted(known))}")
        out.append(known.get(key, known.get(key.lower(), known.get(key.upper()))))
    return tuple(out)


def _ident(where: str, value, what: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) \
            or keyword.iskeyword(value):
        raise _fail(where, f"{what} must be an identifier (letters, digits, _), got {value!r}")
    return value


def _param(where: str, d, output: bool) -> Param:
    if not isinstance(d, Mapping):
        raise _fail(where, f"expected an object, got {type(d).__name__}")
    name = _ident(f"{where}.name", d.get("name"), "name")
    ptype = d.get("param_type", "required")
    if ptype not in PARAM_TYPES:
        raise _fail(f"{where}.param_type", f"{ptype!r} is not one of {', '.join(PARAM_TYPES)}")
    if output and ptype != "required":
        raise _fail(f"{where}.param_type", f"{ptype!r} outputs are not supported by the "
                    "emulator (outputs are required tensors)")
    if "type" not in d:
        raise _fail(where, "'type' is missing")
    types = _names_list(f"{where}.type", d["type"], TYPE_NAMES, "type")
    type_names = tuple(d["type"] if isinstance(d["type"], list) else [d["type"]])
    if "format" in d:
        formats = _names_list(f"{where}.format", d["format"], FORMAT_NAMES, "format")
    else:  # msOpGen's default
        formats = (int(aclFormat.ACL_FORMAT_ND),) * len(types)
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
            value = json.loads(text if text.startswith("[") else f"[{text}]")
        if atype == "int":
            if isinstance(value, bool):
                raise ValueError
            return int(value, 0) if isinstance(value, str) else _exact_int(value)
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
    except (ValueError, TypeError, KeyError, json.JSONDecodeError):
        raise _fail(where, f"{value!r} is not a value of type {atype}") from None


def _exact_int(v) -> int:
    if isinstance(v, float) and not v.is_integer():
        raise ValueError
    return int(v)


def _attr(where: str, d) -> Attr:
    if not isinstance(d, Mapping):
        raise _fail(where, f"expected an object, got {type(d).__name__}")
    name = _ident(f"{where}.name", d.get("name"), "name")
    ptype = d.get("param_type", "optional")
    if ptype not in ("required", "optional"):
        raise _fail(f"{where}.param_type", f"{ptype!r} is not one of required, optional")
    atype = d.get("type")
    if atype not in ATTR_TYPES:
        raise _fail(f"{where}.type", f"{atype!r} is not one of {', '.join(ATTR_TYPES)}")
    default = None
    if "default_value" in d:
        default = _attr_value(f"{where}.default_value", atype, d["default_value"])
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
        names = [p.name for p in params] + [a.name for a in attrs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise _fail(where, f"the name {dup[0]!r} is used twice among inputs, outputs and "
                        "attributes")
        ops.append(OpDesc(op, inputs, outputs, attrs, snake_case(op)))
    return ops


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
    a dynamic one), then the outputs (writable arrays), then the attributes under their JSON
    names. It runs on the stream's worker when the stream reaches it.

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
    """Remove a loaded operator and its functions from ``aclnn_py.aclnn`` (executors already
    built keep working)."""
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


def _attr_arg(api: str, a: Attr, value):
    """A generated function's attribute argument as C would take it: the value, or TypeError
    for what C could not compile. None is an absent optional attribute (its default)."""
    cname = camel(a.name)
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
    n_in, n_attr, n_out = len(desc.inputs), len(desc.attrs), len(desc.outputs)
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
    for j, v in enumerate(outs):
        if v is not None and not isinstance(v, aclTensor):
            raise TypeError(f"{api}: '{names[n_in + len(desc.attrs) + j]}' must be an aclTensor "
                            f"or None, not {_typename(v)}")
    attrs = {a.name: _attr_arg(api, a, v) for a, v in zip(desc.attrs, attr_vals)}
    for i, (p, v) in enumerate(zip(desc.inputs, ins)):
        if v is None and p.param_type != "optional":
            raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                          f"Expected a proper Tensor but got null for argument {names[i]}.")
    for a in desc.attrs:
        if attrs[a.name] is None:
            if a.param_type == "required":
                raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                              f"Expected a value but got null for attribute {camel(a.name)}.")
            attrs[a.name] = a.default
    out_names = names[n_in + len(desc.attrs):]
    for name, v in zip(out_names, outs):
        if v is None:
            raise Reject(S.ACLNN_ERR_PARAM_NULLPTR,
                          f"Expected a proper Tensor but got null for argument {name}.")
    # destroyed handles
    for name, v in zip(names[:n_in], ins):
        if v is not None and v.destroyed:
            what = "Tensor list" if isinstance(v, aclTensorList) else "Tensor"
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                          f"{what} {name} was already destroyed.")
    for name, v in zip(out_names, outs):
        if v.destroyed:
            raise Reject(S.ACLNN_ERR_PARAM_INVALID, f"Tensor {name} was already destroyed.")
    for a, v in zip(desc.attrs, attr_vals):
        if getattr(v, "destroyed", False):
            raise Reject(S.ACLNN_ERR_PARAM_INVALID,
                          f"Attribute {camel(a.name)} ({v!r}) was already destroyed.")
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
    flat_out = list(zip(out_names, outs))
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
        ex.host = _Launcher(
            c, [(p, v) for p, v in zip(desc.inputs, ins)], kwargs)
    return 0, ex, 0


# ---------------------------------------------------------------------------- phase 2 ------


def _make_phase2(c: CustomOp) -> Callable:
    api = c.desc.api
    from .executor import run

    def launch(workspace, workspaceSize, executor, stream):
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

    __slots__ = ("op", "groups", "attrs")

    def __init__(self, op: CustomOp, groups: list, attrs: dict):
        self.op = op
        # per input of the definition: None (absent), "one" or "list" with its tensor count
        self.groups = [(p.param_type, None if v is None else
                        (len(v.tensors) if isinstance(v, aclTensorList) else 1))
                       for p, v in groups]
        self.attrs = attrs

    def __call__(self, ex: aclOpExecutor, stream: int, blocking: bool) -> int:
        views = [_View(label, addr, t.data_type, tuple(t.view_dims), tuple(t.strides), t.offset,
                       t.lo, t.hi)
                 for (label, t), addr in zip(ex.inputs + ex.outputs, ex.in_addrs + ex.out_addrs)]
        job = _Job(self.op, self.groups, views[:len(ex.inputs)], views[len(ex.inputs):],
                   self.attrs)
        return _submit(stream, job, blocking)


class _Job:
    __slots__ = ("op", "groups", "ins", "outs", "attrs")

    def __init__(self, op, groups, ins, outs, attrs):
        self.op, self.groups, self.ins, self.outs, self.attrs = op, groups, ins, outs, attrs

    def arrays(self) -> tuple[list, list]:
        flat_in = [_array(v, writable=False) for v in self.ins]
        args: list = []
        k = 0
        for _kind, count in self.groups:
            if count is None:
                args.append(None)
            elif _kind == "dynamic":
                args.append(flat_in[k:k + count])
                k += count
            else:
                args.append(flat_in[k])
                k += 1
        return args, [_array(v, writable=True) for v in self.outs]

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
        raise CustomOpError(f"{path}: cannot import kernels from it")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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

