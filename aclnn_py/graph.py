"""oneDNN Graph's programming model (``dnnl::graph``) over the emulator (docs/graph.md).

Logical tensors, ops, a graph, partitions, compiled partitions and tensors with oneDNN Graph's
names. A SoftMax / LogSoftmax followed by a chain of binary and eltwise ops (and a final
TypeCast or Quantize) is one partition, run as ONE call of the functional layer's softmax with
post-ops and a dst scale (docs/onednn.md). Execution is asynchronous: each :class:`Stream` has
a worker thread that runs the enqueued partitions in order; :meth:`Stream.wait` is the
synchronization point.
"""

from __future__ import annotations

import enum
import math
import os
import queue
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

import ml_dtypes
import numpy as np

from . import functional as F
from . import runtime as rt
from .onednn import MAX_POST_OPS

__all__ = ["EngineKind", "DataType", "LayoutType", "Property", "Status", "PartitionPolicy",
           "OpKind", "OpAttr", "GraphError", "Engine", "Stream", "LogicalTensor", "Op", "Graph",
           "Partition", "CompiledPartition", "Tensor"]


class Status(enum.IntEnum):
    """oneDNN's ``dnnl_status_t`` values."""

    success = 0
    out_of_memory = 1
    invalid_arguments = 2
    unimplemented = 3
    last_impl_reached = 4
    runtime_error = 5
    not_required = 6
    invalid_graph = 7
    invalid_graph_op = 8
    invalid_shape = 9
    invalid_data_type = 10


class GraphError(RuntimeError):
    """oneDNN's ``dnnl::error`` for the Graph API: ``.status`` is a :class:`Status`."""

    def __init__(self, status: Status, message: str):
        super().__init__(f"{status.name}: {message}")
        self.status = status


def _fail(status: Status, message: str) -> None:
    raise GraphError(status, message)


class EngineKind(enum.IntEnum):
    any = 0
    cpu = 1
    gpu = 2


class DataType(enum.IntEnum):
    """``logical_tensor::data_type``, with ``dnnl_data_type_t``'s values (``f64`` is not one of
    oneDNN Graph's members: no operation here takes it)."""

    undef = 0
    f16 = 1
    bf16 = 2
    f32 = 3
    s32 = 4
    s8 = 5
    u8 = 6
    f64 = 7
    boolean = 8
    f8_e5m2 = 9
    f8_e4m3 = 10


class LayoutType(enum.IntEnum):
    undef = 0
    any = 1
    strided = 2
    opaque = 3


class Property(enum.IntEnum):
    undef = 0
    variable = 1
    constant = 2


class PartitionPolicy(enum.IntEnum):
    fusion = 1
    debug = 2


_NP = {DataType.f16: np.dtype(np.float16), DataType.bf16: np.dtype(ml_dtypes.bfloat16),
       DataType.f32: np.dtype(np.float32), DataType.s32: np.dtype(np.int32),
       DataType.s8: np.dtype(np.int8), DataType.u8: np.dtype(np.uint8),
       DataType.f64: np.dtype(np.float64), DataType.boolean: np.dtype(np.bool_),
       DataType.f8_e5m2: np.dtype(ml_dtypes.float8_e5m2),
       DataType.f8_e4m3: np.dtype(ml_dtypes.float8_e4m3fn)}

#: oneDNN Graph's ops (``op::kind``); the ones with a schema below are run here
OpKind = enum.Enum("OpKind", [
    "Abs", "AbsBackward", "Add", "AvgPool", "AvgPoolBackward", "BatchNormForwardTraining",
    "BatchNormInference", "BatchNormTrainingBackward", "BiasAdd", "BiasAddBackward", "Clamp",
    "ClampBackward", "Concat", "Convolution", "ConvolutionBackwardData",
    "ConvolutionBackwardWeights", "ConvTranspose", "ConvTransposeBackwardData",
    "ConvTransposeBackwardWeights", "Dequantize", "Divide", "DynamicDequantize",
    "DynamicQuantize", "Elu", "EluBackward", "End", "Exp", "GELU", "GELUBackward", "GroupNorm",
    "HardSigmoid", "HardSigmoidBackward", "HardSwish", "HardSwishBackward", "Interpolate",
    "InterpolateBackward", "LayerNorm", "LayerNormBackward", "LeakyReLU", "Log", "LogSoftmax",
    "LogSoftmaxBackward", "MatMul", "Maximum", "MaxPool", "MaxPoolBackward", "Minimum", "Mish",
    "MishBackward", "Multiply", "Pow", "PReLU", "PReLUBackward", "Quantize", "Reciprocal",
    "ReduceL1", "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
    "ReLU", "ReLUBackward", "Reorder", "Round", "Select", "Sigmoid", "SigmoidBackward",
    "SoftMax", "SoftMaxBackward", "SoftPlus", "SoftPlusBackward", "Sqrt", "SqrtBackward",
    "Square", "SquaredDifference", "StaticReshape", "StaticTranspose", "Subtract", "Tanh",
    "TanhBackward", "TypeCast", "Wildcard"], module=__name__)
OpKind.__doc__ = "``op::kind``: oneDNN Graph's operation kinds."

#: ``op::attr``: oneDNN Graph's attribute names
OpAttr = enum.Enum("OpAttr", [
    "alpha", "beta", "epsilon", "max", "min", "momentum", "scales", "axis", "begin_norm_axis",
    "groups", "axes", "dilations", "dst_shape", "kernel", "order", "output_padding", "pads_begin",
    "pads_end", "shape", "sizes", "src_shape", "strides", "weights_shape", "zps",
    "exclude_pad", "keep_dims", "keep_stats", "per_channel_broadcast", "special_zero",
    "transpose_a", "transpose_b", "use_affine", "use_dst", "auto_broadcast", "auto_pad",
    "coordinate_transformation_mode", "data_format", "mode", "qtype", "rounding_type",
    "weights_format"], module=__name__)
OpAttr.__doc__ = "``op::attr``: oneDNN Graph's attribute names."

_FLOATS = (DataType.f32, DataType.bf16, DataType.f16)
_REQUIRED = object()


@dataclass(frozen=True)
class _Schema:
    inputs: tuple            # port names, in index order
    outputs: tuple
    attrs: dict              # name -> (kind: "f32"|"s64"|"str"|"f32s"|"s64s", default|_REQUIRED)
    dtypes: tuple = _FLOATS  # the one dtype of all tensors ("T")
    same_dtype: bool = True
    pairs: Optional[dict] = None  # src dtype -> the dst dtypes allowed with it


_BINARY_ATTRS = {"auto_broadcast": ("str", "numpy")}
_SCHEMAS: dict = {
    "SoftMax": _Schema(("src",), ("dst",), {"axis": ("s64", 1), "mode": ("str", "none")},
                       same_dtype=False,
                       pairs={DataType.f32: _FLOATS, DataType.bf16: (DataType.f32, DataType.bf16),
                              DataType.f16: (DataType.f32, DataType.f16)}),
    "LogSoftmax": _Schema(("src",), ("dst",), {"axis": ("s64", -1)}),
    "SoftMaxBackward": _Schema(("diff_dst", "dst"), ("diff_src",), {"axis": ("s64", 1)}),
    "LogSoftmaxBackward": _Schema(("diff_dst", "dst"), ("diff_src",), {"axis": ("s64", -1)}),
    "HardSigmoid": _Schema(("src",), ("dst",),
                           {"alpha": ("f32", _REQUIRED), "beta": ("f32", _REQUIRED)}),
    "HardSigmoidBackward": _Schema(("src", "diff_dst"), ("diff_src",),
                                   {"alpha": ("f32", _REQUIRED), "beta": ("f32", _REQUIRED)}),
    **{k: _Schema(("src_0", "src_1"), ("dst",), _BINARY_ATTRS)
       for k in ("Add", "Subtract", "Multiply", "Divide", "Maximum", "Minimum")},
    **{k: _Schema(("src",), ("dst",), {})
       for k in ("ReLU", "Sigmoid", "Tanh", "Exp", "Log", "Abs", "Sqrt", "Square", "HardSwish",
                 "Mish")},
    "Clamp": _Schema(("src",), ("dst",), {"min": ("f32", _REQUIRED), "max": ("f32", _REQUIRED)}),
    "Elu": _Schema(("src",), ("dst",), {"alpha": ("f32", _REQUIRED)}),
    "GELU": _Schema(("src",), ("dst",), {"mode": ("str", "gelu_erf")}),
    "SoftPlus": _Schema(("src",), ("dst",), {"beta": ("f32", 1.0)}),
    "TypeCast": _Schema(("src",), ("dst",), {}, _FLOATS, same_dtype=False),
    "Quantize": _Schema(("src",), ("dst",),
                        {"qtype": ("str", "per_tensor"), "axis": ("s64", 1),
                         "scales": ("f32s", _REQUIRED), "zps": ("s64s", [0])},
                        (DataType.f32,), same_dtype=False),
}
_STR_CHOICES = {("SoftMax", "mode"): ("none", "inf_as_zero"),
                ("GELU", "mode"): ("gelu_erf", "gelu_tanh"),
                ("Quantize", "qtype"): ("per_tensor",),
                ("Add", "auto_broadcast"): ("numpy", "none")}
_BINARY_ALG = {"Add": "add", "Subtract": "sub", "Multiply": "mul", "Divide": "div",
               "Maximum": "max", "Minimum": "min"}
_ELTWISE = {"ReLU", "Sigmoid", "Tanh", "Exp", "Log", "Abs", "Sqrt", "Square", "HardSwish",
            "Mish", "Clamp", "Elu", "GELU", "SoftPlus"}


class Engine:
    """``dnnl::engine``: an emulated device of kind cpu."""

    def __init__(self, kind: EngineKind = EngineKind.cpu, index: int = 0):
        if EngineKind(kind) != EngineKind.cpu or int(index) != 0:
            _fail(Status.invalid_arguments, f"engine: only (cpu, 0) is emulated, got "
                                            f"({EngineKind(kind).name}, {index})")
        self.kind = EngineKind.cpu
        self.index = 0

    def get_kind(self) -> EngineKind:
        return self.kind


class Stream:
    """``dnnl::stream``: the partitions executed on it run in order on its worker thread;
    :meth:`wait` blocks until all have run and raises the first failure among them."""

    def __init__(self, engine: Engine):
        if not isinstance(engine, Engine):
            _fail(Status.invalid_arguments, "stream: engine must be a graph.Engine")
        self.engine = engine
        self._pid = os.getpid()
        self._queue: queue.Queue = queue.Queue()
        self._errors: list = []
        worker = threading.Thread(target=_stream_worker, args=(self._queue, self._errors),
                                  name="graph-stream", daemon=True)
        worker.start()
        # the worker ends when the stream is collected (after the work queued before)
        weakref.finalize(self, self._queue.put, None)

    def _check_process(self, what: str) -> None:
        # a forked child has no copy of the worker thread: waiting there would never return
        if os.getpid() != self._pid:
            _fail(Status.invalid_arguments, f"{what}: the stream was created in process "
                                            f"{self._pid}, its worker does not exist in this "
                                            f"(forked) process {os.getpid()}")

    def _enqueue(self, work: Callable[[], None]) -> None:
        self._check_process("execute")
        self._queue.put(work)

    def wait(self) -> None:
        self._check_process("stream.wait")
        self._queue.join()
        if self._errors:
            exc = self._errors.pop(0)
            self._errors.clear()
            if isinstance(exc, GraphError):
                raise exc
            raise GraphError(Status.runtime_error, f"stream: an execution failed: {exc}") from exc


def _stream_worker(work_queue: queue.Queue, errors: list) -> None:
    while True:
        work = work_queue.get()
        if work is None:
            return
        try:
            work()
        except BaseException as exc:  # reported at wait()
            errors.append(exc)
        finally:
            work_queue.task_done()


class LogicalTensor:
    """``logical_tensor(id, data_type, dims, layout_type)``; a dimension of -1 (or ``shape=None``:
    unknown rank) is unknown until compile."""

    def __init__(self, id: int, data_type: DataType, shape: Optional[Sequence[int]] = None,
                 strides: Optional[Sequence[int]] = None,
                 layout: LayoutType = LayoutType.strided,
                 property: Property = Property.undef):
        try:
            self._id = _int_arg(id)
            self._dt = DataType(data_type)
            self._dims = None if shape is None else tuple(_int_arg(d) for d in shape)
        except (TypeError, ValueError):
            _fail(Status.invalid_arguments, f"logical tensor {id!r}: id, data type "
                                            f"{data_type!r} and dims {shape!r} must be an int, a "
                                            f"graph.DataType and ints")
        if self._dims is not None and any(d < -1 for d in self._dims):
            _fail(Status.invalid_arguments, f"logical tensor {id}: dims {self._dims} "
                                            f"must be >= 0 or -1 (unknown)")
        self._layout = LayoutType(layout)
        if strides is not None:
            try:
                strides = tuple(_int_arg(s) for s in strides)
            except (TypeError, ValueError):
                _fail(Status.invalid_arguments, f"logical tensor {id}: strides {strides!r} must "
                                                f"be ints")
            if self._dims is None or len(strides) != len(self._dims):
                _fail(Status.invalid_arguments, f"logical tensor {id}: strides {strides} do not "
                                                f"match dims {self._dims}")
        elif self._layout == LayoutType.strided and self._dims is not None and self._known():
            strides = _contiguous(self._dims)
        self._strides = strides
        self._property = Property(property)

    def _known(self) -> bool:
        return self._dims is not None and all(d >= 0 for d in self._dims)

    def get_id(self) -> int:
        return self._id

    def get_data_type(self) -> DataType:
        return self._dt

    def get_dims(self) -> list:
        return [] if self._dims is None else list(self._dims)

    def get_layout_type(self) -> LayoutType:
        return self._layout

    def get_property_type(self) -> Property:
        return self._property

    def get_strides(self) -> list:
        return [] if self._strides is None else list(self._strides)

    def get_mem_size(self) -> int:
        if not self._known() or self._dt not in _NP:
            return 0
        assert self._dims is not None
        n = int(np.prod(self._dims, dtype=np.int64))
        if n == 0:
            return 0
        strides = self._strides or _contiguous(self._dims)
        span = 1 + sum((d - 1) * abs(s) for d, s in zip(self._dims, strides))
        return span * _NP[self._dt].itemsize

    def _same(self, other: LogicalTensor) -> bool:
        return (self._dt, self._dims, self._layout) == (other._dt, other._dims, other._layout)

    def __repr__(self) -> str:
        return (f"LogicalTensor(id={self._id}, {self._dt.name}, dims={self.get_dims()}, "
                f"{self._layout.name})")


def _int_arg(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(value)
    return int(value)


def _contiguous(dims: Sequence[int]) -> tuple:
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


class Op:
    """``op(id, kind, inputs, outputs, name)``; :meth:`set_attr` as ``op::set_attr``."""

    def __init__(self, id: int, kind: Any, inputs: Sequence[LogicalTensor] = (),
                 outputs: Sequence[LogicalTensor] = (), name: str = ""):
        try:
            self._id = _int_arg(id)
        except TypeError:
            _fail(Status.invalid_arguments, f"op: id must be an int, got {id!r}")
        if not isinstance(kind, OpKind):
            _fail(Status.invalid_arguments, f"op {id}: kind must be a graph.OpKind, got {kind!r}")
        self._kind = kind
        self._inputs = list(inputs)
        self._outputs = list(outputs)
        self._name = name or f"{kind.name}_{id}"
        self._attrs: dict = {}

    def add_input(self, lt: LogicalTensor) -> None:
        self._inputs.append(lt)

    def add_output(self, lt: LogicalTensor) -> None:
        self._outputs.append(lt)

    def set_attr(self, attr: Any, value: Any) -> Op:
        if not isinstance(attr, OpAttr):
            _fail(Status.invalid_arguments, f"op {self._name}: attribute must be a graph.OpAttr, "
                                            f"got {attr!r}")
        self._attrs[attr.name] = value
        return self

    def get_id(self) -> int:
        return self._id

    def get_kind(self) -> Any:
        return self._kind

    def get_name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"Op({self._id}, {self._kind.name}, {self._name!r})"


def _attr_value(op: Op, name: str, kind: str, value: Any) -> Any:
    where = f"op {op._name} ({op._kind.name}): attribute {name}"
    try:
        if kind == "f32":
            if isinstance(value, (bool, str)) or not math.isfinite(float(value)):
                raise TypeError
            return float(np.float32(value))
        if kind == "s64":
            if isinstance(value, bool) or int(value) != value:
                raise TypeError
            return int(value)
        if kind == "str":
            if not isinstance(value, str):
                raise TypeError
            key = ("Add", name) if name == "auto_broadcast" else (op._kind.name, name)
            choices = _STR_CHOICES.get(key)
            if choices and value not in choices:
                _fail(Status.invalid_graph_op, f"{where} is {value!r}; it must be one of "
                                               f"{', '.join(choices)}")
            return value
        values = list(value)
        if kind == "f32s":
            return [float(np.float32(v)) for v in values]
        return [int(v) for v in values]
    except (TypeError, ValueError, OverflowError):
        _fail(Status.invalid_graph_op, f"{where}: {value!r} is not of type {kind}")


class _Node:
    """A verified op: its kind name, ports and complete attributes (defaults filled in)."""

    def __init__(self, op: Op, supported: bool, attrs: dict):
        self.op = op
        self.id = op._id
        self.kind = op._kind.name
        self.inputs: list = list(op._inputs)
        self.outputs: list = list(op._outputs)
        self.supported = supported
        self.attrs = attrs


def _verify(op: Op) -> _Node:
    """The op's schema checks, as oneDNN's add_op runs them."""
    schema = _SCHEMAS.get(op._kind.name)
    if schema is None:
        return _Node(op, False, dict(op._attrs))
    who = f"op {op._name} ({op._kind.name})"
    if len(op._inputs) != len(schema.inputs):
        _fail(Status.invalid_graph_op, f"{who}: takes {len(schema.inputs)} input(s) "
                                       f"({', '.join(schema.inputs)}), got {len(op._inputs)}")
    if len(op._outputs) != len(schema.outputs):
        _fail(Status.invalid_graph_op, f"{who}: gives {len(schema.outputs)} output(s) "
                                       f"({', '.join(schema.outputs)}), got {len(op._outputs)}")
    attrs = {}
    for name in op._attrs:
        if name not in schema.attrs:
            _fail(Status.invalid_graph_op, f"{who}: attribute {name} is not one of its "
                                           f"attributes ({', '.join(schema.attrs) or 'none'})")
    for name, (kind, default) in schema.attrs.items():
        if name in op._attrs:
            attrs[name] = _attr_value(op, name, kind, op._attrs[name])
        elif default is _REQUIRED:
            _fail(Status.invalid_graph_op, f"{who}: the required attribute {name} is not set")
        else:
            attrs[name] = default
    ports = [(f"input {i} ({schema.inputs[i]})", lt) for i, lt in enumerate(op._inputs)] + \
        [(f"output {i} ({schema.outputs[i]})", lt) for i, lt in enumerate(op._outputs)]
    for port, lt in ports:
        if not isinstance(lt, LogicalTensor):
            _fail(Status.invalid_graph_op, f"{who}: {port} is not a graph.LogicalTensor")
    kind = op._kind.name
    if kind == "Quantize":
        src, dst = op._inputs[0], op._outputs[0]
        if src._dt not in schema.dtypes:
            _fail(Status.invalid_data_type, f"{who}: input 0 (src) is {src._dt.name}; it must "
                                            f"be f32")
        if dst._dt not in (DataType.s8, DataType.u8):
            _fail(Status.invalid_data_type, f"{who}: output 0 (dst) is {dst._dt.name}; it must "
                                            f"be s8 or u8")
        if len(attrs["scales"]) != 1 or len(attrs["zps"]) != 1:
            _fail(Status.invalid_graph_op, f"{who}: qtype per_tensor takes one scale and one "
                                           f"zero point, got {len(attrs['scales'])} and "
                                           f"{len(attrs['zps'])}")
        with np.errstate(all="ignore"):
            inv = np.float32(1) / np.float32(attrs["scales"][0])
        if attrs["scales"][0] == 0 or not np.isfinite(inv):
            _fail(Status.invalid_graph_op, f"{who}: scales[0] = {attrs['scales'][0]} must be a "
                                           f"number other than 0 with a finite float32 "
                                           f"reciprocal")
    else:
        for port, lt in ports:
            if lt._dt not in schema.dtypes:
                _fail(Status.invalid_data_type,
                      f"{who}: {port} is {lt._dt.name}; it must be one of "
                      f"{', '.join(d.name for d in schema.dtypes)}")
        if schema.pairs is not None:
            sdt, ddt = op._inputs[0]._dt, op._outputs[0]._dt
            if ddt not in schema.pairs[sdt]:
                _fail(Status.invalid_data_type,
                      f"{who}: output 0 ({schema.outputs[0]}) is {ddt.name} with input 0 "
                      f"({schema.inputs[0]}) {sdt.name}; with {sdt.name} it must be one of "
                      f"{', '.join(d.name for d in schema.pairs[sdt])}")
        if schema.same_dtype:
            first = ports[0][1]._dt
            for port, lt in ports[1:]:
                if lt._dt != first:
                    _fail(Status.invalid_data_type,
                          f"{who}: {port} is {lt._dt.name} but {ports[0][0]} is {first.name}: "
                          f"all tensors of {kind} have one data type")
    if kind in _BINARY_ALG and attrs["auto_broadcast"] not in ("numpy", "none"):
        _fail(Status.invalid_graph_op, f"{who}: auto_broadcast must be numpy or none")
    return _Node(op, True, attrs)


class Graph:
    """``dnnl::graph::graph(engine_kind)``: :meth:`add_op`, :meth:`finalize`,
    :meth:`get_partitions`."""

    def __init__(self, kind: EngineKind = EngineKind.cpu):
        if EngineKind(kind) != EngineKind.cpu:
            _fail(Status.invalid_arguments, "graph: only the cpu engine kind is emulated")
        self._nodes: list = []
        self._lts: dict = {}
        self._finalized = False

    def add_op(self, op: Op, allow_exists: bool = False) -> None:
        if self._finalized:
            _fail(Status.invalid_graph, "add_op: the graph is already finalized")
        if not isinstance(op, Op):
            _fail(Status.invalid_arguments, "add_op: op must be a graph.Op")
        if any(n.id == op._id for n in self._nodes):
            if allow_exists:
                return
            _fail(Status.invalid_graph, f"add_op: op id {op._id} is already in the graph")
        self._nodes.append(_verify(op))

    def finalize(self) -> None:
        if self._finalized:
            return
        lts: dict = {}
        producers: dict = {}
        for n in self._nodes:
            for lt in n.inputs + n.outputs:
                if not isinstance(lt, LogicalTensor):
                    _fail(Status.invalid_graph, f"op {n.op._name}: a port is not a "
                                                f"graph.LogicalTensor")
                seen = lts.setdefault(lt._id, lt)
                if not seen._same(lt):
                    _fail(Status.invalid_graph, f"op {n.op._name}: logical tensor id {lt._id} "
                                                f"is used for {seen!r} and {lt!r}")
            for lt in n.outputs:
                if lt._id in producers:
                    _fail(Status.invalid_graph, f"logical tensor {lt._id} is the output of "
                                                f"ops {producers[lt._id]} and {n.id}")
                producers[lt._id] = n.id
        self._lts = lts
        self._finalized = True

    def get_partitions(self, policy: PartitionPolicy = PartitionPolicy.fusion) -> list:
        if not self._finalized:
            _fail(Status.invalid_graph, "get_partitions: finalize() the graph first")
        consumers: dict = {}
        for n in self._nodes:
            for lt in n.inputs:
                consumers.setdefault(lt._id, []).append(n)
        produced = {lt._id for n in self._nodes for lt in n.outputs}
        taken: set = set()
        parts = []
        for n in self._nodes:
            if n.id in taken:
                continue
            chain = [n]
            if (policy == PartitionPolicy.fusion and n.supported
                    and n.kind in ("SoftMax", "LogSoftmax")):
                chain = _fusion_chain(n, consumers, produced, taken)
            taken.update(c.id for c in chain)
            parts.append(Partition(chain, self._lts, EngineKind.cpu))
        return parts


def _fusion_chain(head: _Node, consumers: dict, produced: set, taken: set) -> list:
    """The softmax and the ops after it oneDNN fuses into it: each the only consumer of the
    previous output; binary ops take the chain's value as src_0 (or either for the symmetric
    ones) and an other operand from outside that broadcasts; a TypeCast or Quantize ends it."""
    chain = [head]
    n_post = 0
    cur = head.outputs[0]
    while True:
        users = consumers.get(cur._id, [])
        if len(users) != 1:
            break
        nxt = users[0]
        if not nxt.supported or nxt.id in taken or any(c.id == nxt.id for c in chain):
            break
        if nxt.kind in _BINARY_ALG:
            ids = [lt._id for lt in nxt.inputs]
            if ids.count(cur._id) != 1:
                break
            if ids[1] == cur._id and nxt.kind in ("Subtract", "Divide"):
                break
            other = nxt.inputs[1 - ids.index(cur._id)]
            if other._id in produced or not _broadcasts(other, cur, nxt.attrs):
                break
            cost = 1
        elif nxt.kind in _ELTWISE:
            cost = 1
        elif nxt.kind in ("TypeCast", "Quantize"):
            cost = 1 if nxt.kind == "Quantize" and nxt.attrs["zps"][0] != 0 else 0
        else:
            break
        if n_post + cost > MAX_POST_OPS:
            break
        n_post += cost
        chain.append(nxt)
        cur = nxt.outputs[0]
        if nxt.kind in ("TypeCast", "Quantize"):
            break
    return chain


def _broadcasts(other: LogicalTensor, dst: LogicalTensor, attrs: dict) -> bool:
    """oneDNN's binary post-op rule: the same rank as dst, each dimension 1 or dst's (unknown
    shapes are checked at compile)."""
    if other._dims is None or dst._dims is None:
        return True
    if len(other._dims) != len(dst._dims):
        return False
    if attrs.get("auto_broadcast") == "none":
        return other._dims == dst._dims
    return all(o in (1, d, -1) or d == -1 for o, d in zip(other._dims, dst._dims))


class Partition:
    """``dnnl::graph::partition``: ops oneDNN runs as one kernel, or one op it cannot run."""

    def __init__(self, nodes: list, lts: dict, kind: EngineKind):
        self._nodes = nodes
        self._kind = kind
        inside = {lt._id for n in nodes for lt in n.outputs}
        ins: list = []
        for n in nodes:
            for lt in n.inputs:
                if lt._id not in inside and all(x._id != lt._id for x in ins):
                    ins.append(lt)
        consumed = {lt._id for n in nodes for lt in n.inputs}
        outs = [lt for n in nodes for lt in n.outputs if lt._id not in consumed]
        self._inputs = ins
        self._outputs = outs

    def is_supported(self) -> bool:
        return all(n.supported for n in self._nodes)

    def get_ops(self) -> list:
        return [n.id for n in self._nodes]

    def get_ops_num(self) -> int:
        return len(self._nodes)

    def get_input_ports(self) -> list:
        return list(self._inputs)

    def get_output_ports(self) -> list:
        return list(self._outputs)

    def get_engine_kind(self) -> EngineKind:
        return self._kind

    def compile(self, inputs: Sequence[LogicalTensor], outputs: Sequence[LogicalTensor],
                engine: Engine) -> CompiledPartition:
        if not self.is_supported():
            kinds = ", ".join(n.kind for n in self._nodes)
            _fail(Status.unimplemented, f"compile: the partition of {kinds} is not supported "
                                        f"by the emulator (is_supported() is False)")
        if not isinstance(engine, Engine):
            _fail(Status.invalid_arguments, "compile: engine must be a graph.Engine")
        given_in = _by_id("compile", "inputs", inputs, self._inputs)
        given_out = _by_id("compile", "outputs", outputs, self._outputs)
        shapes: dict = {}
        for lt in self._inputs:
            g = given_in[lt._id]
            if not g._known():
                _fail(Status.invalid_shape, f"compile: input logical tensor {g._id} has unknown "
                                            f"dims {g.get_dims()}")
            shapes[g._id] = g._dims
        for n in self._nodes:
            _infer(n, shapes, given_out)
        for prev, n in zip(self._nodes, self._nodes[1:]):
            if n.kind in _BINARY_ALG and shapes[n.outputs[0]._id] != shapes[prev.outputs[0]._id]:
                _fail(Status.invalid_shape,
                      f"compile: op {n.op._name} ({n.kind}) of the fused partition: its other "
                      f"operand must broadcast to {list(shapes[prev.outputs[0]._id])} (oneDNN's "
                      f"binary post-op rule), the result is "
                      f"{list(shapes[n.outputs[0]._id])}")
        out_lts = []
        for lt in self._outputs:
            g = given_out[lt._id]
            dims = shapes[lt._id]
            out_lts.append(LogicalTensor(g._id, g._dt, dims, None, LayoutType.strided))
        in_lts = [LogicalTensor(given_in[lt._id]._id, given_in[lt._id]._dt, shapes[lt._id],
                                None, LayoutType.strided) for lt in self._inputs]
        return CompiledPartition(self._nodes, in_lts, out_lts, shapes)


def _by_id(where: str, what: str, given: Sequence, ports: list) -> dict:
    out: dict = {}
    for lt in given:
        if not isinstance(lt, LogicalTensor):
            _fail(Status.invalid_arguments, f"{where}: {what} must be graph.LogicalTensor")
        out[lt._id] = lt
    want = {lt._id for lt in ports}
    if set(out) != want:
        _fail(Status.invalid_arguments, f"{where}: {what} have ids {sorted(out)}, the "
                                        f"partition's ports are {sorted(want)}")
    for lt in ports:
        if out[lt._id]._dt != lt._dt:
            _fail(Status.invalid_arguments, f"{where}: logical tensor {lt._id} is "
                                            f"{out[lt._id]._dt.name}, the graph had {lt._dt.name}")
    return out


def _infer(n: _Node, shapes: dict, given_out: dict) -> None:
    """The output shape of ``n`` from its inputs' (compile-time shape inference)."""
    who = f"op {n.op._name} ({n.kind})"
    dims = [shapes[lt._id] for lt in n.inputs]
    if n.kind in _BINARY_ALG:
        a, b = dims
        if n.attrs["auto_broadcast"] == "none" and a != b:
            _fail(Status.invalid_shape, f"{who}: auto_broadcast none needs equal shapes, got "
                                        f"{a} and {b}")
        try:
            out = tuple(np.broadcast_shapes(a, b))
        except ValueError:
            _fail(Status.invalid_shape, f"{who}: shapes {a} and {b} do not broadcast")
    else:
        out = dims[0]
        if n.kind in ("SoftMaxBackward", "LogSoftmaxBackward", "HardSigmoidBackward") \
                and dims[0] != dims[1]:
            _fail(Status.invalid_shape, f"{who}: input 0 has shape {dims[0]}, input 1 {dims[1]}: "
                                        f"they must be equal")
        if "axis" in n.attrs and n.kind != "Quantize":
            axis, rank = n.attrs["axis"], len(out)
            if not -rank <= axis < max(rank, 1):
                _fail(Status.invalid_shape, f"{who}: axis {axis} is outside [{-rank}, "
                                            f"{rank - 1}] for rank {rank}")
    lt = n.outputs[0]
    shapes[lt._id] = out
    g = given_out.get(lt._id, lt)
    if g._dims is not None and any(d != -1 for d in g._dims):
        if len(g._dims) != len(out) or any(d not in (-1, o) for d, o in zip(g._dims, out)):
            _fail(Status.invalid_shape, f"{who}: output 0 is given dims {list(g._dims)}, the "
                                        f"inputs give {list(out)}")


class Tensor:
    """``dnnl::graph::tensor(logical_tensor, engine, handle)``: ``data`` is a NumPy array of the
    logical tensor's shape and dtype (any strides), or a device address from ``acl.rt.malloc``
    holding the tensor contiguously (the compiled, strided layout)."""

    def __init__(self, lt: LogicalTensor, engine: Engine, data: Any):
        if not isinstance(lt, LogicalTensor):
            _fail(Status.invalid_arguments, "tensor: lt must be a graph.LogicalTensor")
        self._addr = 0
        if isinstance(data, (int, np.integer)) and not isinstance(data, (bool, np.bool_)):
            self._addr = int(data)
            if lt._known():
                _check_device(f"tensor {lt._id}", self._addr, lt.get_mem_size())
        elif not isinstance(data, np.ndarray):
            _fail(Status.invalid_arguments, f"tensor {lt._id}: data must be a NumPy array or a "
                                            f"device address, got {type(data).__name__}")
        elif lt._dt in _NP and data.dtype != _NP[lt._dt]:
            _fail(Status.invalid_arguments, f"tensor {lt._id}: data is {data.dtype}, the logical "
                                            f"tensor is {lt._dt.name}")
        elif lt._known() and tuple(data.shape) != lt._dims:
            _fail(Status.invalid_arguments, f"tensor {lt._id}: data has shape {data.shape}, the "
                                            f"logical tensor {lt.get_dims()}")
        self._lt = lt
        self._engine = engine
        self._data = data

    def get_logical_tensor(self) -> LogicalTensor:
        return self._lt

    def get_engine(self) -> Engine:
        return self._engine

    def get_data_handle(self) -> Any:
        return self._data


def _check_device(where: str, addr: int, nbytes: int) -> None:
    if addr <= 0 or rt.range_device(addr, max(nbytes, 1)) < 0:
        _fail(Status.invalid_arguments, f"{where}: address 0x{addr:x} with {nbytes} bytes is not "
                                        f"inside one live acl.rt.malloc allocation")


@dataclass(frozen=True)
class _DeviceData:
    addr: int
    shape: tuple
    dtype: np.dtype


class CompiledPartition:
    """``compiled_partition``: :meth:`execute` enqueues the partition's one functional call on
    the stream; :meth:`query_logical_tensor` gives the compiled (strided) logical tensors."""

    def __init__(self, nodes: list, ins: list, outs: list, shapes: dict):
        self._nodes = nodes
        self._ins = ins
        self._outs = outs
        self._shapes = shapes

    def get_inputs(self) -> list:
        return list(self._ins)

    def get_outputs(self) -> list:
        return list(self._outs)

    def query_logical_tensor(self, id: int) -> LogicalTensor:
        for lt in self._ins + self._outs:
            if lt._id == id:
                return lt
        _fail(Status.invalid_arguments, f"query_logical_tensor: {id} is not an input or output "
                                        f"of the compiled partition")
        raise AssertionError  # unreachable

    def execute(self, stream: Stream, inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> None:
        if not isinstance(stream, Stream):
            _fail(Status.invalid_arguments, "execute: stream must be a graph.Stream")
        src = self._arrays("inputs", inputs, self._ins)
        dst = self._arrays("outputs", outputs, self._outs)
        nodes = self._nodes
        stream._enqueue(lambda: _run_on_host(nodes, src, dst))

    @staticmethod
    def _arrays(what: str, tensors: Sequence, lts: list) -> dict:
        out: dict = {}
        for t in tensors:
            if not isinstance(t, Tensor):
                _fail(Status.invalid_arguments, f"execute: {what} must be graph.Tensor")
            out[t._lt._id] = t
        want = {lt._id: lt for lt in lts}
        for tid in out:
            if tid not in want:
                _fail(Status.invalid_arguments, f"execute: {what}: a tensor of logical tensor id "
                                                f"{tid} is not a port of the compiled partition "
                                                f"(ids {sorted(want)})")
        for tid, lt in want.items():
            if tid not in out:
                _fail(Status.invalid_arguments, f"execute: {what}: no tensor for logical tensor "
                                                f"id {tid}")
            t = out[tid]
            if t._addr:
                if t._lt._dims != lt._dims or t._lt._dt != lt._dt:
                    _fail(Status.invalid_arguments,
                          f"execute: {what}: tensor {tid} is {t._lt._dt.name}{t._lt.get_dims()}, "
                          f"the compiled logical tensor is {lt._dt.name}{lt.get_dims()}")
                _check_device(f"execute: {what}: tensor {tid}", t._addr, lt.get_mem_size())
                continue
            data = t._data
            if tuple(data.shape) != lt._dims or data.dtype != _NP[lt._dt]:
                _fail(Status.invalid_arguments,
                      f"execute: {what}: tensor {tid} is {data.dtype}{list(data.shape)}, the "
                      f"compiled logical tensor is {lt._dt.name}{lt.get_dims()}")
        return {tid: (_DeviceData(t._addr, want[tid]._dims, _NP[want[tid]._dt]) if t._addr
                      else t._data) for tid, t in out.items()}


_ELTWISE_POST = {"ReLU": ("relu", 0.0, 0.0), "Sigmoid": ("logistic", 0.0, 0.0),
                 "Tanh": ("tanh", 0.0, 0.0), "Exp": ("exp", 0.0, 0.0), "Log": ("log", 0.0, 0.0),
                 "Abs": ("abs", 0.0, 0.0), "Sqrt": ("sqrt", 0.0, 0.0),
                 "Square": ("square", 0.0, 0.0), "HardSwish": ("hardswish", 1 / 6, 0.5),
                 "Mish": ("mish", 0.0, 0.0)}


def _eltwise_post(n: _Node) -> Any:
    a = n.attrs
    if n.kind in _ELTWISE_POST:
        alg, alpha, beta = _ELTWISE_POST[n.kind]
        return F.Eltwise(alg, alpha, beta)
    if n.kind == "Clamp":
        return F.Eltwise("clip", a["min"], a["max"])
    if n.kind == "Elu":
        return F.Eltwise("elu", a["alpha"])
    if n.kind == "GELU":
        return F.Eltwise(a["mode"])
    assert n.kind == "SoftPlus"
    return F.Eltwise("soft_relu", a["beta"])


def _copy(dst: int, src: int, nbytes: int) -> None:
    if nbytes and rt.raw_memcpy(dst, src, nbytes):
        _fail(Status.runtime_error, "execute: a device tensor's allocation was freed before the "
                                    "partition ran")


def _run_on_host(nodes: list, src: dict, dst: dict) -> None:
    """Device tensors are copied into host arrays, the partition runs, outputs copied back."""
    host_src = {}
    for tid, d in src.items():
        if isinstance(d, _DeviceData):
            a = np.empty(d.shape, d.dtype)
            _copy(a.ctypes.data, d.addr, a.nbytes)
            d = a
        host_src[tid] = d
    host_dst = {tid: np.empty(d.shape, d.dtype) if isinstance(d, _DeviceData) else d
                for tid, d in dst.items()}
    _run(nodes, host_src, host_dst)
    for tid, d in dst.items():
        if isinstance(d, _DeviceData):
            _copy(d.addr, host_dst[tid].ctypes.data, host_dst[tid].nbytes)


def _run(nodes: list, src: dict, dst: dict) -> None:
    """Run a compiled partition: a softmax chain as ONE functional call, else its one op."""
    head = nodes[0]
    ins = [src[lt._id] for lt in head.inputs] if head.kind not in _BINARY_ALG else None
    out_lt = nodes[-1].outputs[0]
    out = dst[out_lt._id]
    a = head.attrs
    if head.kind in ("SoftMax", "LogSoftmax"):
        post: list = []
        dst_scale = 1.0
        cur = head.outputs[0]
        for n in nodes[1:]:
            if n.kind in _BINARY_ALG:
                ids = [lt._id for lt in n.inputs]
                other = n.inputs[1 - ids.index(cur._id)]
                post.append(F.Binary(_BINARY_ALG[n.kind], src[other._id]))
            elif n.kind == "Quantize":
                scale, zp = n.attrs["scales"][0], n.attrs["zps"][0]
                if zp:
                    post.append(F.Eltwise("linear", float(np.float32(1) / np.float32(scale)),
                                          float(zp)))
                else:
                    dst_scale = scale
            elif n.kind != "TypeCast":
                post.append(_eltwise_post(n))
            cur = n.outputs[0]
        x = ins[0]  # type: ignore[index]
        fn = F.softmax if head.kind == "SoftMax" else F.log_softmax
        extra: dict = {"inf_as_zero": True} if a.get("mode") == "inf_as_zero" else {}
        fn(x, a["axis"], out_dtype=out.dtype, dst_scale=dst_scale, post_ops=post, out=out,
           **extra)
        return
    if head.kind == "SoftMaxBackward":
        F.softmax_backward(ins[0], ins[1], a["axis"], out=out)  # type: ignore[index]
    elif head.kind == "LogSoftmaxBackward":
        F.log_softmax_backward(ins[0], ins[1], a["axis"], out=out)  # type: ignore[index]
    elif head.kind == "HardSigmoid":
        np.copyto(out, F.hardsigmoid(ins[0], alpha=a["alpha"], beta=a["beta"]))  # type: ignore
    elif head.kind == "HardSigmoidBackward":
        np.copyto(out, F.hardsigmoid_backward(ins[1], ins[0], alpha=a["alpha"],  # type: ignore
                                              beta=a["beta"]))
    else:
        np.copyto(out, _single(head, src, out), casting="unsafe")


def _single(n: _Node, src: dict, out: np.ndarray) -> np.ndarray:
    """One binary, eltwise, TypeCast or Quantize op on its own, computed in float32."""
    x = src[n.inputs[0]._id].astype(np.float32)
    if n.kind in _BINARY_ALG:
        y = src[n.inputs[1]._id].astype(np.float32)
        fns = {"Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply,
               "Divide": np.divide, "Maximum": np.maximum, "Minimum": np.minimum}
        with np.errstate(all="ignore"):
            return fns[n.kind](x, y)
    if n.kind == "TypeCast":
        return x
    if n.kind == "Quantize":
        scale, zp = n.attrs["scales"][0], n.attrs["zps"][0]
        info = np.iinfo(out.dtype)
        with np.errstate(all="ignore"):
            q = np.rint(x * (np.float32(1) / np.float32(scale))) + zp
        return np.clip(np.nan_to_num(q, nan=0.0), info.min, info.max)
    # an eltwise op alone: the softmax kernel's post-op formulas are not reachable without a
    # softmax, so the formulas are evaluated here
    a = n.attrs
    with np.errstate(all="ignore"):
        if n.kind == "ReLU":
            return np.where(x > 0, x, np.float32(0) * x)
        if n.kind == "Sigmoid":
            return 1 / (1 + np.exp(-x))
        if n.kind == "Tanh":
            return np.tanh(x)
        if n.kind == "Exp":
            return np.exp(x)
        if n.kind == "Log":
            return np.log(x)
        if n.kind == "Abs":
            return np.abs(x)
        if n.kind == "Sqrt":
            return np.sqrt(x)
        if n.kind == "Square":
            return x * x
        if n.kind == "HardSwish":
            return x * np.clip(x / 6 + np.float32(0.5), 0, 1)
        if n.kind == "Mish":
            return x * np.tanh(np.logaddexp(np.float32(0), x))
        if n.kind == "Clamp":
            return np.clip(x, np.float32(a["min"]), np.float32(a["max"]))
        if n.kind == "Elu":
            return np.where(x > 0, x, np.float32(a["alpha"]) * np.expm1(x))
        if n.kind == "GELU":
            if a["mode"] == "gelu_tanh":
                c = np.float32(math.sqrt(2 / math.pi))
                return 0.5 * x * (1 + np.tanh(c * (x + np.float32(0.044715) * x ** 3)))
            from math import erf
            return (0.5 * x * (1 + np.vectorize(erf)(x / np.float32(math.sqrt(2))))).astype(
                np.float32)
        assert n.kind == "SoftPlus"
        b = np.float32(a["beta"])
        return np.logaddexp(np.float32(0), b * x) / b
