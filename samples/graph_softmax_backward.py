"""oneDNN Graph API: SoftMax forward and SoftMaxBackward as a graph, partitioned and run.

Written in the style of oneDNN's Graph examples (build the graph, get the partitions, compile
each, execute on a stream, wait) with ``aclnn_py.graph`` (docs/graph.md). Prints each
partition, the results, and "Example passed on CPU." when they agree with the formulas. Run it
with ``aclnn-py run graph_softmax_backward``.
"""

import sys

import numpy as np

from aclnn_py import graph

data_type = graph.DataType
logical_tensor = graph.LogicalTensor
op = graph.Op
layout_type = graph.LayoutType


def main():
    # create the engine and the stream
    ekind = graph.EngineKind.cpu
    eng = graph.Engine(ekind, 0)
    strm = graph.Stream(eng)

    # logical tensors: src -> SoftMax -> dst; (diff_dst, dst) -> SoftMaxBackward -> diff_src
    dims = [4, 3]
    src_desc = logical_tensor(0, data_type.f32, dims, layout=layout_type.strided)
    dst_desc = logical_tensor(1, data_type.f32, dims, layout=layout_type.strided)
    diff_dst_desc = logical_tensor(2, data_type.f32, dims, layout=layout_type.strided)
    diff_src_desc = logical_tensor(3, data_type.f32, [-1, -1], layout=layout_type.strided)

    # ops: the axis of SoftMaxBackward is left at its default (1), the same as SoftMax's
    softmax = op(0, graph.OpKind.SoftMax, [src_desc], [dst_desc], "softmax")
    softmax.set_attr(graph.OpAttr.axis, 1)
    softmax_bwd = op(1, graph.OpKind.SoftMaxBackward, [diff_dst_desc, dst_desc],
                     [diff_src_desc], "softmax_bwd")

    # the graph
    g = graph.Graph(ekind)
    g.add_op(softmax)
    g.add_op(softmax_bwd)
    g.finalize()
    partitions = g.get_partitions(graph.PartitionPolicy.fusion)
    print(f"Number of returned partitions: {len(partitions)}")
    for i, p in enumerate(partitions):
        print(f"Partition[{i}]: ops {p.get_ops()}, supported: {p.is_supported()}")

    # data
    src = np.arange(12, dtype=np.float32).reshape(dims) / 4
    diff_dst = np.sin(np.arange(12, dtype=np.float32)).reshape(dims)
    buffers = {0: src, 2: diff_dst}

    # compile and execute each partition in order; a partition's outputs are later inputs
    for p in partitions:
        if not p.is_supported():
            print("cpu_softmax_backward: a partition is not supported")
            return 1
        inputs = p.get_input_ports()
        outputs = p.get_output_ports()
        cp = p.compile(inputs, outputs, eng)
        in_ts = [graph.Tensor(lt, eng, buffers[lt.get_id()]) for lt in inputs]
        out_ts = []
        for lt in outputs:
            compiled = cp.query_logical_tensor(lt.get_id())
            buffers[lt.get_id()] = np.empty(compiled.get_dims(), np.float32)
            out_ts.append(graph.Tensor(compiled, eng, buffers[lt.get_id()]))
        cp.execute(strm, in_ts, out_ts)
        strm.wait()   # the next partition reads this one's output

    dst, diff_src = buffers[1], buffers[3]
    for i, v in enumerate(diff_src.ravel()):
        print(f"diff_src[{i}] = {v:.6f}")

    # the formulas, in float64
    x = src.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    dy = diff_dst.astype(np.float64)
    ref = (dy - (dy * y).sum(axis=1, keepdims=True)) * y
    if not (np.allclose(dst, y, rtol=1e-5, atol=1e-7)
            and np.allclose(diff_src, ref, rtol=1e-5, atol=1e-7)):
        print("Example failed on CPU.")
        return 1
    print("Example passed on CPU.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
