"""aclnn_py.graph: oneDNN Graph's programming model (docs/graph.md).

References are NumPy float64 formulas written from oneDNN's operation pages (SoftMax,
SoftMaxBackward, LogSoftmaxBackward, HardSigmoidBackward, Quantize, the eltwise ops), not from
the code under test; the facts checked (defaults, required attributes, input order, dtype
tables, statuses) are the pages'."""

from __future__ import annotations

import math
import tempfile

import ml_dtypes
import numpy as np
import pytest

from aclnn_py import functional as F
from aclnn_py import graph as g

f32, f16, bf16 = g.DataType.f32, g.DataType.f16, g.DataType.bf16
ENG = g.Engine(g.EngineKind.cpu, 0)
NP = {f32: np.float32, f16: np.float16, bf16: ml_dtypes.bfloat16}


def lt(i, shape, dt=f32):
    return g.LogicalTensor(i, dt, shape)


def softmax_partition(x, y):
    """The one partition of a graph holding a single SoftMax from ``x`` to ``y``."""
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [y]))
    graph.finalize()
    (part,) = graph.get_partitions()
    return part


def softmax64(x, axis):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def run_single(op_kind, ins, outs, attrs, arrays, out_dtype=np.float32):
    """Build a one-op graph, take its one partition, compile and execute it."""
    graph = g.Graph(g.EngineKind.cpu)
    op = g.Op(0, op_kind, ins, outs, "op")
    for k, v in attrs.items():
        op.set_attr(k, v)
    graph.add_op(op)
    graph.finalize()
    (part,) = graph.get_partitions()
    assert part.is_supported()
    cp = part.compile(part.get_input_ports(), part.get_output_ports(), ENG)
    out_lt = cp.query_logical_tensor(outs[0].get_id())
    out = np.zeros(out_lt.get_dims(), out_dtype)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(t, ENG, a) for t, a in zip(ins, arrays)],
               [g.Tensor(out_lt, ENG, out)])
    stream.wait()
    return out


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ the seed operations --

def test_softmax_backward_axis_defaults_to_1_and_inputs_are_diff_dst_then_dst():
    r = rng(1)
    y = softmax64(r.normal(size=(2, 3, 4)), 1).astype(np.float32)
    dy = r.normal(size=(2, 3, 4)).astype(np.float32)
    out = run_single(g.OpKind.SoftMaxBackward, [lt(0, [2, 3, 4]), lt(1, [2, 3, 4])],
                     [lt(2, [2, 3, 4])], {}, [dy, y])
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    ref = (dy64 - (dy64 * y64).sum(axis=1, keepdims=True)) * y64   # along axis 1
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    wrong = (dy64 - (dy64 * y64).sum(axis=-1, keepdims=True)) * y64
    assert np.abs(out - wrong).max() > 1e-3


def test_log_softmax_backward_axis_defaults_to_minus_1():
    r = rng(2)
    x = r.normal(size=(3, 2, 5))
    ls = (x - np.log(np.exp(x).sum(axis=-1, keepdims=True))).astype(np.float32)
    dy = r.normal(size=x.shape).astype(np.float32)
    out = run_single(g.OpKind.LogSoftmaxBackward, [lt(0, [3, 2, 5]), lt(1, [3, 2, 5])],
                     [lt(2, [3, 2, 5])], {}, [dy, ls])
    dy64 = dy.astype(np.float64)
    ref = dy64 - np.exp(ls.astype(np.float64)) * dy64.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_log_softmax_backward_explicit_axis():
    r = rng(3)
    x = r.normal(size=(4, 3))
    ls = (x - np.log(np.exp(x).sum(axis=0, keepdims=True))).astype(np.float32)
    dy = r.normal(size=x.shape).astype(np.float32)
    out = run_single(g.OpKind.LogSoftmaxBackward, [lt(0, [4, 3]), lt(1, [4, 3])],
                     [lt(2, [4, 3])], {g.OpAttr.axis: 0}, [dy, ls])
    dy64 = dy.astype(np.float64)
    ref = dy64 - np.exp(ls.astype(np.float64)) * dy64.sum(axis=0, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt", [f32, bf16, f16])
def test_hardsigmoid_backward_inputs_are_src_then_diff_dst(dt):
    src = np.array([[-4.0, -1.0, 0.0, 0.5], [1.0, 2.0, 3.5, 10.0]]).astype(NP[dt])
    dd = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]).astype(NP[dt])
    alpha, beta = 0.25, 0.5
    out = run_single(g.OpKind.HardSigmoidBackward, [lt(0, [2, 4], dt), lt(1, [2, 4], dt)],
                     [lt(2, [2, 4], dt)], {g.OpAttr.alpha: alpha, g.OpAttr.beta: beta},
                     [src, dd], NP[dt])
    s64, d64 = src.astype(np.float64), dd.astype(np.float64)
    v = alpha * s64 + beta
    ref = np.where((v > 0) & (v < 1), d64 * alpha, 0.0)
    np.testing.assert_array_equal(out.astype(np.float64), ref)   # exact: products of 2^-2


@pytest.mark.parametrize("missing", ["alpha", "beta"])
@pytest.mark.parametrize("kind", [g.OpKind.HardSigmoidBackward, g.OpKind.HardSigmoid])
def test_hardsigmoid_alpha_and_beta_are_required(kind, missing):
    n_in = 2 if kind == g.OpKind.HardSigmoidBackward else 1
    op = g.Op(0, kind, [lt(i, [2]) for i in range(n_in)], [lt(9, [2])])
    op.set_attr(g.OpAttr.alpha if missing == "beta" else g.OpAttr.beta, 0.5)
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_graph_op
    assert missing in str(e.value) and "required" in str(e.value)


def test_wrong_input_count_is_invalid_graph_op():
    op = g.Op(0, g.OpKind.SoftMaxBackward, [lt(0, [2])], [lt(1, [2])], "smb")
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_graph_op
    assert "smb" in str(e.value) and "diff_dst, dst" in str(e.value)


@pytest.mark.parametrize("kind", [g.OpKind.SoftMaxBackward, g.OpKind.LogSoftmaxBackward,
                                  g.OpKind.HardSigmoidBackward])
def test_mixed_dtypes_are_invalid_data_type(kind):
    op = g.Op(0, kind, [lt(0, [2], f32), lt(1, [2], bf16)], [lt(2, [2], f32)])
    if kind == g.OpKind.HardSigmoidBackward:
        op.set_attr(g.OpAttr.alpha, 0.2).set_attr(g.OpAttr.beta, 0.5)
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_data_type
    assert "input 1" in str(e.value)


@pytest.mark.parametrize("dt", [g.DataType.s8, g.DataType.f64, g.DataType.s32])
def test_dtypes_outside_the_table_are_invalid_data_type(dt):
    op = g.Op(0, g.OpKind.SoftMaxBackward, [lt(0, [2], dt), lt(1, [2], dt)], [lt(2, [2], dt)])
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_data_type


def test_softmax_dst_table():
    g.Graph().add_op(g.Op(0, g.OpKind.SoftMax, [lt(0, [2], f32)], [lt(1, [2], f16)]))
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(g.Op(0, g.OpKind.SoftMax, [lt(0, [2], f16)], [lt(1, [2], bf16)]))
    assert e.value.status == g.Status.invalid_data_type


def test_softmax_axis_default_1_and_mode_inf_as_zero():
    x = np.array([[[0.0, -np.inf], [1.0, -np.inf]], [[2.0, -np.inf], [0.5, -np.inf]]],
                 np.float32)
    x[:, :, 1] = -np.inf
    out = run_single(g.OpKind.SoftMax, [lt(0, [2, 2, 2])], [lt(1, [2, 2, 2])],
                     {g.OpAttr.mode: "inf_as_zero"}, [x])
    ref = softmax64(x[:, :, :1], 1)
    np.testing.assert_allclose(out[:, :, 0], ref[:, :, 0], rtol=1e-6)
    assert (out[:, :, 1] == 0).all()      # an all -inf slice along axis 1 gives 0, not NaN


def test_bad_attribute_value_and_unknown_attribute():
    op = g.Op(0, g.OpKind.SoftMax, [lt(0, [2])], [lt(1, [2])]).set_attr(g.OpAttr.mode, "x")
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_graph_op and "inf_as_zero" in str(e.value)
    op = g.Op(0, g.OpKind.SoftMax, [lt(0, [2])], [lt(1, [2])]).set_attr(g.OpAttr.alpha, 1.0)
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_graph_op and "alpha" in str(e.value)


# --------------------------------------------------------------------------------- fusion --

def test_softmax_multiply_add_broadcast_relu_is_one_partition_and_one_call(monkeypatch):
    calls = []
    real = F.softmax
    monkeypatch.setattr(F, "softmax", lambda *a, **k: calls.append(k) or real(*a, **k))
    x, s, m, mo, b, ao, r = (lt(0, [3, 6]), lt(1, [3, 6]), lt(2, [1, 6]), lt(3, [3, 6]),
                             lt(4, [3, 1]), lt(5, [3, 6]), lt(6, [-1, -1]))
    graph = g.Graph(g.EngineKind.cpu)
    graph.add_op(g.Op(10, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(11, g.OpKind.Multiply, [s, m], [mo]))
    graph.add_op(g.Op(12, g.OpKind.Add, [mo, b], [ao]))
    graph.add_op(g.Op(13, g.OpKind.ReLU, [ao], [r]))
    graph.finalize()
    (part,) = graph.get_partitions(g.PartitionPolicy.fusion)
    assert part.is_supported() and part.get_ops() == [10, 11, 12, 13]
    assert [t.get_id() for t in part.get_input_ports()] == [0, 2, 4]
    assert [t.get_id() for t in part.get_output_ports()] == [6]
    cp = part.compile(part.get_input_ports(), part.get_output_ports(), ENG)
    assert cp.query_logical_tensor(6).get_dims() == [3, 6]
    rr = rng(5)
    X = rr.normal(size=(3, 6)).astype(np.float32)
    M = rr.uniform(0.5, 2, size=(1, 6)).astype(np.float32)
    B = np.float32([[-0.2], [0.0], [0.1]])
    out = np.empty((3, 6), np.float32)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X), g.Tensor(m, ENG, M), g.Tensor(b, ENG, B)],
               [g.Tensor(cp.query_logical_tensor(6), ENG, out)])
    stream.wait()
    ref = np.maximum(softmax64(X, 1) * M + B, 0.0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)
    assert (out == 0).any() and (out > 0).any()
    assert len(calls) == 1 and len(calls[0]["post_ops"]) == 3


def test_debug_policy_gives_one_op_per_partition():
    x, s, r = lt(0, [2, 3]), lt(1, [2, 3]), lt(2, [2, 3])
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.ReLU, [s], [r]))
    graph.finalize()
    assert [p.get_ops() for p in graph.get_partitions(g.PartitionPolicy.debug)] == [[0], [1]]


def test_softmax_quantize_s8_rounds_half_to_even_and_saturates():
    x, s, q = lt(0, [3, 256]), lt(1, [3, 256]), lt(2, [3, 256], g.DataType.s8)
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.Quantize, [s], [q]).set_attr(g.OpAttr.scales, [1 / 128]))
    graph.finalize()
    (part,) = graph.get_partitions()
    assert part.get_ops() == [0, 1]
    cp = part.compile([x], [q], ENG)
    X = np.zeros((3, 256), np.float32)       # row 0: every value 1/256 -> 0.5 -> 0 (to even)
    X[1, 0] = 100.0                          # row 1: 1.0 -> 128 -> saturates to 127
    X[2] = rng(7).normal(size=256) * 3       # row 2: general values
    out = np.empty((3, 256), np.int8)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X)], [g.Tensor(q, ENG, out)])
    stream.wait()
    ref = np.clip(np.round(softmax64(X, 1) * 128), -128, 127)   # np.round: half to even
    assert (out[0] == 0).all()
    assert out[1, 0] == 127 and (out[1, 1:] == 0).all()
    assert np.abs(out[2].astype(np.int64) - ref[2]).max() <= 1
    assert (out[2] == ref[2]).mean() > 0.99


@pytest.mark.parametrize("k, expected", [(1, 2), (2, 2), (3, 4), (-1, 0), (300, 127),
                                         (-300, -128)])
def test_softmax_add_quantize_half_to_even_cases(k, expected):
    """softmax 1/256 plus k/128 is (2k+1)/256 exactly: times 128 it is k + 0.5."""
    x, s, c, a, q = (lt(0, [1, 256]), lt(1, [1, 256]), lt(2, [1, 1]), lt(3, [1, 256]),
                     lt(4, [1, 256], g.DataType.s8))
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.Add, [s, c], [a]))
    graph.add_op(g.Op(2, g.OpKind.Quantize, [a], [q]).set_attr(g.OpAttr.scales, [1 / 128]))
    graph.finalize()
    (part,) = graph.get_partitions()
    cp = part.compile(part.get_input_ports(), part.get_output_ports(), ENG)
    out = np.empty((1, 256), np.int8)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, np.zeros((1, 256), np.float32)),
                        g.Tensor(c, ENG, np.float32([[k / 128]]))], [g.Tensor(q, ENG, out)])
    stream.wait()
    assert (out == expected).all()


def test_quantize_u8_with_zero_point():
    x, s, q = lt(0, [2, 4]), lt(1, [2, 4]), lt(2, [2, 4], g.DataType.u8)
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.Quantize, [s], [q]).set_attr(g.OpAttr.scales, [1 / 64])
                 .set_attr(g.OpAttr.zps, [10]))
    graph.finalize()
    (part,) = graph.get_partitions()
    cp = part.compile([x], [q], ENG)
    X = np.float32([[0, 1, 2, 3], [5, -5, 0, 0]])
    out = np.empty((2, 4), np.uint8)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X)], [g.Tensor(q, ENG, out)])
    stream.wait()
    ref = np.clip(np.round(softmax64(X, 1) * 64 + 10), 0, 255)
    assert np.abs(out.astype(np.int64) - ref).max() <= 1


def test_log_softmax_chain_of_eltwise_and_binary_ops():
    shape = [2, 5]
    names = [(g.OpKind.Subtract, None), (g.OpKind.Exp, {}), (g.OpKind.Clamp,
             {g.OpAttr.min: 0.1, g.OpAttr.max: 0.6}), (g.OpKind.Square, {}),
             (g.OpKind.Maximum, None), (g.OpKind.Sqrt, {})]
    graph = g.Graph()
    x = lt(0, shape)
    cur = lt(1, shape)
    graph.add_op(g.Op(0, g.OpKind.LogSoftmax, [x], [cur]))
    others = {}
    nid = 100
    for i, (kind, attrs) in enumerate(names, start=1):
        nxt = lt(10 + i, shape)
        if attrs is None:
            other = lt(nid, [1, 5] if kind == g.OpKind.Subtract else [2, 1])
            others[nid] = other
            nid += 1
            op = g.Op(i, kind, [cur, other], [nxt])
        else:
            op = g.Op(i, kind, [cur], [nxt])
            for k, v in attrs.items():
                op.set_attr(k, v)
        graph.add_op(op)
        cur = nxt
    graph.finalize()
    (part,) = graph.get_partitions()
    assert len(part.get_ops()) == 7
    cp = part.compile(part.get_input_ports(), part.get_output_ports(), ENG)
    rr = rng(9)
    X = rr.normal(size=shape).astype(np.float32)
    S = rr.normal(size=(1, 5)).astype(np.float32) * 0.3
    Mx = np.float32([[0.2], [0.05]])
    out = np.empty(shape, np.float32)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X), g.Tensor(others[100], ENG, S),
                        g.Tensor(others[101], ENG, Mx)], [g.Tensor(cur, ENG, out)])
    stream.wait()
    ls = np.log(softmax64(X, -1))              # LogSoftmax's axis defaults to -1
    ref = np.sqrt(np.maximum(np.clip(np.exp(ls - S), 0.1, 0.6) ** 2, Mx))
    np.testing.assert_allclose(out, ref, rtol=2e-6)


def test_softmax_as_second_operand_of_subtract_is_not_fused():
    x, s, o, d = lt(0, [2, 3]), lt(1, [2, 3]), lt(2, [2, 3]), lt(3, [2, 3])
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.Subtract, [o, s], [d]))
    graph.finalize()
    assert [p.get_ops() for p in graph.get_partitions()] == [[0], [1]]


@pytest.mark.parametrize("kind, attrs, formula", [
    (g.OpKind.Elu, {g.OpAttr.alpha: 0.5}, lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (g.OpKind.GELU, {}, lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (g.OpKind.SoftPlus, {}, lambda x: np.log1p(np.exp(x))),
    (g.OpKind.HardSwish, {}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    (g.OpKind.Sigmoid, {}, lambda x: 1 / (1 + np.exp(-x))),
    (g.OpKind.Mish, {}, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
])
def test_eltwise_op_alone_and_fused(kind, attrs, formula):
    X = np.linspace(-4, 4, 12).reshape(2, 6).astype(np.float32)
    alone = run_single(kind, [lt(0, [2, 6])], [lt(1, [2, 6])], attrs, [X])
    np.testing.assert_allclose(alone, formula(X.astype(np.float64)), rtol=1e-5, atol=1e-6)
    graph = g.Graph()
    x, s, y = lt(0, [2, 6]), lt(1, [2, 6]), lt(2, [2, 6])
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    op = g.Op(1, kind, [s], [y])
    for k, v in attrs.items():
        op.set_attr(k, v)
    graph.add_op(op)
    graph.finalize()
    (part,) = graph.get_partitions()
    cp = part.compile([x], [y], ENG)
    out = np.empty((2, 6), np.float32)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X)], [g.Tensor(y, ENG, out)])
    stream.wait()
    np.testing.assert_allclose(out, formula(softmax64(X, 1)), rtol=1e-5, atol=1e-6)


def test_typecast_ends_the_chain_into_bf16():
    x, s, c = lt(0, [2, 8]), lt(1, [2, 8]), lt(2, [2, 8], bf16)
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.TypeCast, [s], [c]))
    graph.finalize()
    (part,) = graph.get_partitions()
    assert part.get_ops() == [0, 1]
    cp = part.compile([x], [c], ENG)
    X = rng(11).normal(size=(2, 8)).astype(np.float32)
    out = np.empty((2, 8), ml_dtypes.bfloat16)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X)], [g.Tensor(c, ENG, out)])
    stream.wait()
    np.testing.assert_allclose(out.astype(np.float64), softmax64(X, 1), rtol=2 ** -8)


# ----------------------------------------------------------- unsupported ops, statuses --

def test_matmul_is_an_unsupported_partition_and_compiling_it_is_unimplemented():
    a, b, c, d = lt(0, [2, 3]), lt(1, [3, 4]), lt(2, [2, 4]), lt(3, [2, 4])
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.MatMul, [a, b], [c]))
    graph.add_op(g.Op(1, g.OpKind.SoftMax, [c], [d]))
    graph.finalize()
    parts = graph.get_partitions()
    assert [(p.get_ops(), p.is_supported()) for p in parts] == [([0], False), ([1], True)]
    with pytest.raises(g.GraphError) as e:
        parts[0].compile([a, b], [c], ENG)
    assert e.value.status == g.Status.unimplemented and "MatMul" in str(e.value)


def test_unknown_input_shape_at_compile_is_invalid_shape():
    x, y = lt(0, [-1, 4]), lt(1, [-1, 4])
    part = softmax_partition(x, y)
    with pytest.raises(g.GraphError) as e:
        part.compile([x], [y], ENG)
    assert e.value.status == g.Status.invalid_shape
    cp = part.compile([lt(0, [3, 4])], [y], ENG)      # the shape given at compile
    assert cp.query_logical_tensor(1).get_dims() == [3, 4]


def test_execute_checks_tensor_ids_and_shapes():
    x, y = lt(0, [2, 3]), lt(1, [2, 3])
    part = softmax_partition(x, y)
    cp = part.compile([x], [y], ENG)
    stream = g.Stream(ENG)
    out = g.Tensor(y, ENG, np.empty((2, 3), np.float32))
    with pytest.raises(g.GraphError) as e:
        cp.execute(stream, [g.Tensor(lt(7, [2, 3]), ENG, np.zeros((2, 3), np.float32))], [out])
    assert e.value.status == g.Status.invalid_arguments and "7" in str(e.value)
    with pytest.raises(g.GraphError) as e:
        cp.execute(stream, [g.Tensor(lt(0, [3, 2]), ENG, np.zeros((3, 2), np.float32))], [out])
    assert e.value.status == g.Status.invalid_arguments and "[3, 2]" in str(e.value)
    with pytest.raises(g.GraphError) as e:
        g.Tensor(x, ENG, np.zeros((2, 3), np.float16))
    assert e.value.status == g.Status.invalid_arguments


def test_tensor_data_may_have_other_strides():
    X = np.asfortranarray(rng(4).normal(size=(3, 5)).astype(np.float32))
    out = np.empty((5, 3), np.float32).T
    x, y = lt(0, [3, 5]), lt(1, [3, 5])
    part = softmax_partition(x, y)
    cp = part.compile([x], [y], ENG)
    stream = g.Stream(ENG)
    cp.execute(stream, [g.Tensor(x, ENG, X)], [g.Tensor(y, ENG, out)])
    stream.wait()
    np.testing.assert_allclose(out, softmax64(X, 1), rtol=1e-6)


def test_several_partitions_of_one_graph_run_independently():
    graph = g.Graph()
    a, sa, b, hb = lt(0, [2, 4]), lt(1, [2, 4]), lt(2, [2, 4]), lt(3, [2, 4])
    mm_o = lt(5, [2, 2])
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [a], [sa]))
    graph.add_op(g.Op(1, g.OpKind.HardSigmoid, [b], [hb]).set_attr(g.OpAttr.alpha, 0.2)
                 .set_attr(g.OpAttr.beta, 0.5))
    graph.add_op(g.Op(2, g.OpKind.MatMul, [a, lt(4, [4, 2])], [mm_o]))
    graph.finalize()
    parts = graph.get_partitions()
    assert [p.is_supported() for p in parts] == [True, True, False]
    A = rng(1).normal(size=(2, 4)).astype(np.float32)
    B = rng(2).normal(size=(2, 4)).astype(np.float32) * 4
    outs = {1: np.empty((2, 4), np.float32), 3: np.empty((2, 4), np.float32)}
    stream = g.Stream(ENG)
    # compile and execute in reverse order: each stands alone
    for part, (src, arr) in zip(parts[1::-1], [(b, B), (a, A)]):
        cp = part.compile(part.get_input_ports(), part.get_output_ports(), ENG)
        (o,) = part.get_output_ports()
        cp.execute(stream, [g.Tensor(src, ENG, arr)], [g.Tensor(o, ENG, outs[o.get_id()])])
    stream.wait()
    np.testing.assert_allclose(outs[1], softmax64(A, 1), rtol=1e-6)
    np.testing.assert_allclose(outs[3], np.clip(0.2 * B.astype(np.float64) + 0.5, 0, 1),
                               rtol=1e-6)


def test_graph_rules():
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [lt(0, [2])], [lt(1, [2])]))
    with pytest.raises(g.GraphError) as e:
        graph.add_op(g.Op(0, g.OpKind.ReLU, [lt(1, [2])], [lt(2, [2])]))
    assert e.value.status == g.Status.invalid_graph
    with pytest.raises(g.GraphError) as e:
        graph.get_partitions()
    assert e.value.status == g.Status.invalid_graph
    graph.add_op(g.Op(1, g.OpKind.ReLU, [lt(1, [3])], [lt(2, [3])]))   # id 1 reused, other dims
    with pytest.raises(g.GraphError) as e:
        graph.finalize()
    assert e.value.status == g.Status.invalid_graph


def test_logical_tensor_queries():
    t = g.LogicalTensor(3, g.DataType.bf16, [2, 3, 4])
    assert (t.get_id(), t.get_data_type(), t.get_dims()) == (3, g.DataType.bf16, [2, 3, 4])
    assert t.get_layout_type() == g.LayoutType.strided and t.get_strides() == [12, 4, 1]
    assert t.get_mem_size() == 2 * 3 * 4 * 2
    assert g.LogicalTensor(4, f32, [-1, 3]).get_mem_size() == 0
    assert g.LogicalTensor(5, f32, [2, 3], strides=[1, 2]).get_strides() == [1, 2]


def test_sample_runs_with_the_cli():
    """samples/graph_softmax_backward.py through ``aclnn-py run``; the sample checks its
    results against the float64 formulas and says so."""
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-m", "aclnn_py", "run", "graph_softmax_backward"],
                          capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parent))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Number of returned partitions: 2"
    assert lines[-1] == "Example passed on CPU."
    assert sum(line.startswith("diff_src[") for line in lines) == 12


def test_device_addresses_from_acl_rt_malloc(stream, dev):
    from aclnn_py import acl

    X = rng(12).normal(size=(3, 4)).astype(np.float32)
    src_ptr = dev.upload(X)
    dst_ptr = dev.malloc(X.nbytes)
    x, y = lt(0, [3, 4]), lt(1, [3, 4])
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [y]).set_attr(g.OpAttr.axis, 0))
    graph.finalize()
    (part,) = graph.get_partitions()
    cp = part.compile([x], [y], ENG)
    strm = g.Stream(ENG)
    cp.execute(strm, [g.Tensor(x, ENG, src_ptr)], [g.Tensor(y, ENG, dst_ptr)])
    strm.wait()
    np.testing.assert_allclose(dev.download(dst_ptr, (3, 4), np.float32), softmax64(X, 0),
                               rtol=1e-6)
    small = dev.malloc(8)
    with pytest.raises(g.GraphError) as e:
        g.Tensor(x, ENG, small)              # 48 bytes do not fit in an 8-byte allocation
    assert e.value.status == g.Status.invalid_arguments and "acl.rt.malloc" in str(e.value)
    assert acl.rt.free(small) == 0
    dev.ptrs.remove(small)
    with pytest.raises(g.GraphError) as e:
        g.Tensor(lt(2, [2]), ENG, small)     # freed
    assert e.value.status == g.Status.invalid_arguments


def test_failure_during_execution_is_raised_by_wait():
    x, y = lt(0, [2, 3]), lt(1, [2, 3])
    part = softmax_partition(x, y)
    cp = part.compile([x], [y], ENG)
    strm = g.Stream(ENG)
    bad_out = np.zeros((2, 3), np.float32)
    X = np.zeros((2, 3), np.float32)
    # the output aliases the input through a partial overlap the functional layer refuses
    shared = np.zeros(7, np.float32)
    Xo = shared[:6].reshape(2, 3)
    Yo = shared[1:7].reshape(2, 3)
    cp.execute(strm, [g.Tensor(x, ENG, Xo)], [g.Tensor(y, ENG, Yo)])
    with pytest.raises(g.GraphError) as e:
        strm.wait()
    assert e.value.status == g.Status.runtime_error
    cp.execute(strm, [g.Tensor(x, ENG, X)], [g.Tensor(y, ENG, bad_out)])
    strm.wait()                               # the stream goes on after a failure
    np.testing.assert_allclose(bad_out, np.full((2, 3), 1 / 3), rtol=1e-6)


def test_stream_worker_ends_with_its_stream():
    import gc
    import threading

    # this stream's own worker (other tests' streams may be collected meanwhile)
    before = {t for t in threading.enumerate() if t.name == "graph-stream"}
    strm = g.Stream(ENG)
    (worker,) = [t for t in threading.enumerate() if t.name == "graph-stream"
                 and t not in before]
    assert worker.is_alive()
    del strm
    gc.collect()
    worker.join(5)
    assert not worker.is_alive()


def test_fused_binary_operand_that_widens_the_result_is_invalid_shape():
    """Dims unknown in the graph: fused; at compile the other operand turns out wider than the
    softmax output, which a binary post-op cannot do."""
    x, s, o, d = lt(0, [-1, -1]), lt(1, [-1, -1]), lt(2, [-1, -1]), lt(3, [-1, -1])
    graph = g.Graph()
    graph.add_op(g.Op(0, g.OpKind.SoftMax, [x], [s]))
    graph.add_op(g.Op(1, g.OpKind.Add, [s, o], [d], "add"))
    graph.finalize()
    (part,) = graph.get_partitions()
    assert part.get_ops() == [0, 1]
    with pytest.raises(g.GraphError) as e:
        part.compile([lt(0, [1, 4]), lt(2, [3, 4])], [d], ENG)
    assert e.value.status == g.Status.invalid_shape and "add" in str(e.value)
    cp = part.compile([lt(0, [3, 4]), lt(2, [3, 1])], [d], ENG)
    assert cp.query_logical_tensor(3).get_dims() == [3, 4]


ALONE = [
    (g.OpKind.ReLU, {}, lambda x: np.maximum(x, 0)),
    (g.OpKind.Tanh, {}, np.tanh),
    (g.OpKind.Exp, {}, np.exp),
    (g.OpKind.Log, {}, np.log),
    (g.OpKind.Abs, {}, np.abs),
    (g.OpKind.Sqrt, {}, np.sqrt),
    (g.OpKind.Square, {}, np.square),
    (g.OpKind.Clamp, {g.OpAttr.min: -1.0, g.OpAttr.max: 2.0}, lambda x: np.clip(x, -1, 2)),
    (g.OpKind.GELU, {g.OpAttr.mode: "gelu_tanh"},
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (g.OpKind.SoftPlus, {g.OpAttr.beta: 2.0}, lambda x: np.log1p(np.exp(2 * x)) / 2),
]


@pytest.mark.parametrize("kind, attrs, formula", ALONE, ids=[a[0].name for a in ALONE])
def test_each_eltwise_op_alone(kind, attrs, formula):
    X = np.linspace(-3, 3, 10).reshape(2, 5).astype(np.float32)
    if kind in (g.OpKind.Log, g.OpKind.Sqrt):
        X = np.abs(X) + np.float32(0.5)         # their domain
    ref = formula(X.astype(np.float64))
    out = run_single(kind, [lt(0, [2, 5])], [lt(1, [2, 5])], attrs, [X])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind, fn", [(g.OpKind.Add, np.add), (g.OpKind.Subtract, np.subtract),
                                      (g.OpKind.Multiply, np.multiply),
                                      (g.OpKind.Divide, np.divide),
                                      (g.OpKind.Maximum, np.maximum),
                                      (g.OpKind.Minimum, np.minimum)])
def test_each_binary_op_alone_broadcasts(kind, fn):
    A = rng(20).normal(size=(3, 4)).astype(np.float32)
    B = rng(21).uniform(0.5, 2, size=(1, 4)).astype(np.float32)
    out = run_single(kind, [lt(0, [3, 4]), lt(1, [1, 4])], [lt(2, [3, 4])], {}, [A, B])
    np.testing.assert_allclose(out, fn(A.astype(np.float64), B.astype(np.float64)), rtol=1e-6)


def test_quantize_and_typecast_alone():
    X = np.float32([[-1.0, 0.5 / 64, 1.5 / 64, 2.5 / 64, 3.0, -3.0]])
    out = run_single(g.OpKind.Quantize, [lt(0, [1, 6])], [lt(1, [1, 6], g.DataType.s8)],
                     {g.OpAttr.scales: [1 / 64]}, [X], np.int8)
    assert out.tolist() == [[-64, 0, 2, 2, 127, -128]]      # half to even, saturated
    Y = np.float32([[1 + 2 ** -8, 1 + 3 * 2 ** -8]])        # halfway between bf16 neighbours
    out = run_single(g.OpKind.TypeCast, [lt(0, [1, 2])], [lt(1, [1, 2], bf16)], {}, [Y],
                     ml_dtypes.bfloat16)
    assert out.astype(np.float64).tolist() == [[1.0, 1 + 2 ** -6]]


@pytest.mark.parametrize("dt, tol", [(f16, 2 ** -10), (bf16, 2 ** -7)])
def test_softmax_backward_half_dtypes(dt, tol):
    r = rng(30)
    y = softmax64(r.normal(size=(4, 6)), 1).astype(NP[dt])
    dy = r.normal(size=(4, 6)).astype(NP[dt])
    out = run_single(g.OpKind.SoftMaxBackward, [lt(0, [4, 6], dt), lt(1, [4, 6], dt)],
                     [lt(2, [4, 6], dt)], {}, [dy, y], NP[dt])
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    ref = (dy64 - (dy64 * y64).sum(axis=1, keepdims=True)) * y64
    # within a few units of the dtype's rounding of the largest term of each slice
    scale = np.abs(dy64 * y64).max(axis=1, keepdims=True) + np.abs(ref)
    assert (np.abs(out.astype(np.float64) - ref) <= 4 * tol * scale).all()


@pytest.mark.parametrize("make", [
    lambda: g.LogicalTensor("a", f32, [2]),
    lambda: g.LogicalTensor(0, 99, [2]),
    lambda: g.LogicalTensor(0, f32, [2.5]),
    lambda: g.LogicalTensor(0, f32, [-2]),
    lambda: g.LogicalTensor(0, f32, [2, 3], strides=[1]),
    lambda: g.Op(1.5, g.OpKind.SoftMax),
    lambda: g.Op(1, "SoftMax"),
    lambda: g.Op(1, g.OpKind.SoftMax).set_attr("axis", 1),
])
def test_bad_constructor_arguments_are_invalid_arguments(make):
    with pytest.raises(g.GraphError) as e:
        make()
    assert e.value.status == g.Status.invalid_arguments


def test_quantize_scale_without_a_float32_reciprocal_is_invalid_graph_op():
    op = g.Op(0, g.OpKind.Quantize, [lt(0, [2])], [lt(1, [2], g.DataType.s8)])
    op.set_attr(g.OpAttr.scales, [1e-39])
    with pytest.raises(g.GraphError) as e:
        g.Graph().add_op(op)
    assert e.value.status == g.Status.invalid_graph_op and "scales" in str(e.value)


def test_a_stream_in_a_forked_child_is_refused_not_hung():
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "from aclnn_py import graph as g\n"
        "s = g.Stream(g.Engine(g.EngineKind.cpu, 0))\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        s.wait()\n"
        "        os._exit(1)\n"
        "    except g.GraphError as e:\n"
        "        os._exit(7 if e.status == g.Status.invalid_arguments else 2)\n"
        "_, st = os.waitpid(pid, 0)\n"
        "sys.exit(os.WEXITSTATUS(st))\n")
    # not from the source tree: `-c` puts the working directory first on sys.path, and the
    # tree's aclnn_py has no compiled core where the package is installed non-editable (CI)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=tempfile.gettempdir())
    assert proc.returncode == 7, proc.stdout + proc.stderr
