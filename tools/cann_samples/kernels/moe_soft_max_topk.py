"""MoeSoftMaxTopk (CANN's operator_contrib MoeSoftMaxTopkCustomSample; cann-ops
math/moe_soft_max_topk): softmax over the last axis of x [rows, experts], then its k largest
values per row in descending order (y, float32) and their column indices (indices, int32); k is
the int attribute (the outputs' last dimension)."""

import numpy as np


def moe_soft_max_topk(x, y, indices, k=4):
    v = x.astype(np.float64)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    k = int(y.shape[-1])
    # stable sort of -p: equal probabilities keep the lower index first
    order = np.argsort(-p, axis=-1, kind="stable")[..., :k]
    np.copyto(y, np.take_along_axis(p, order, axis=-1), casting="unsafe")
    np.copyto(indices, order, casting="unsafe")
