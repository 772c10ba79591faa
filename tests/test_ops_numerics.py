"""Numerics of the seven operators through the aclnn API (phase 1, workspace, phase 2,
synchronize, D2H) against the independent float64 golden (tests/golden.py), driven by the
operator table (tests/opinfo.py): each operator's sample inputs (dtype x rank x dim grid, long
axes, strided views), reference inputs (special values) and CANN's examples.

What the golden models (CANN's ops-nn op_api, PyTorch/oneDNN semantics):
* Softmax computes in self's dtype and casts to out's; LogSoftmax first casts self to out's
  dtype and computes there (so the golden is taken of the input rounded to out's dtype);
  the backward ops compute in the input (promoted) dtype and cast to out's. SoftmaxBackward's
  y is random and not a valid softmax, as in benchdnn: the formula must be applied as given.
* Hard-sigmoid evaluates alpha*x + beta in float32 with alpha = float32(1/6), beta = 0.5 as two
  separately rounded operations; the backward mask is the open interval 0 < l < 1 of that
  float32 value, and blocked elements are 0 whatever the gradient (a select).
Tolerances: golden.assert_close with the lower precision of the input and out dtypes
(PyTorch/oneDNN); backward ops are scaled by the largest reference magnitude.

Inputs are read only through their views (the storage around them holds NaN / -7), and every
byte of out's buffer outside its view must come back unchanged.

Case ids read as one-line reproductions, e.g.
``aclnnLogSoftmax in=float32 out=float16 shape=3x7x5 dim=-2``.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pytest
from conftest import DTYPE_OF, read_view, strided_layout, view_byte_mask
from opinfo import (
    BOUNDARY_X,
    OP_DB,
    OPS,
    Example,
    OpInfo,
    Sample,
    dname,
    f32_linear,
    i32,
    random_inputs,
    seed_of,
)

from aclnn_py import acl, aclnn

SENTINEL = 0xA5


# ------------------------------------------------------------------------------- running ----


def make_out(dev, shape, out_dtype, layout):
    """(ptr, tensor, geometry, total bytes): an out view whose whole buffer holds SENTINEL."""
    zeros = np.zeros(shape, dtype=out_dtype)
    storage, vshape, strides, offset = strided_layout(zeros, fill=0, **layout)
    total = storage.nbytes
    ptr = dev.malloc(max(total, 1))
    dev.fill(ptr, max(total, 1), SENTINEL)
    t = aclnn.aclCreateTensor(vshape, DTYPE_OF[np.dtype(out_dtype)], strides, offset,
                              aclnn.ACL_FORMAT_ND, [storage.size], ptr)
    assert t is not None
    return ptr, t, (vshape, strides, offset), total, bytes(max(total, 1) * [SENTINEL])[:total]


def run(dev, stream, op: OpInfo, arrays: dict, dim: Optional[int], out_dtype,
        layouts: Optional[dict] = None, out_layout: Optional[dict] = None) -> np.ndarray:
    """Run one op on host arrays laid out as given; return out's view values (self's for the
    in-place op)."""
    layouts = layouts or {}
    tensors = {}
    inplace_geom = None
    for name in op.inputs:
        a = arrays[name]
        fill = -7 if a.dtype == i32 else np.nan
        ptr, t, geom = dev.strided(a, fill=fill, **layouts.get(name, {}))
        tensors[name] = t
        if op.inplace:
            inplace_geom = (ptr, geom)
    if op.inplace:
        ptr, (storage, vshape, strides, offset) = inplace_geom
        out_ptr, geom, total = ptr, (vshape, strides, offset), storage.nbytes
        before = storage.tobytes()
        out_dtype = storage.dtype
    else:
        out_ptr, tensors["out"], geom, total, before = make_out(
            dev, np.shape(arrays[op.inputs[0]]), out_dtype, out_layout or {})
    args = tuple(dim if p == "dim" else tensors[p] for p in op.params)
    ws, ex, ret = getattr(aclnn, op.api1)(*args)
    assert ret == 0, acl.get_recent_err_msg()
    wsp = dev.malloc(ws) if ws else 0
    assert getattr(aclnn, op.api)(wsp, ws, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    raw = dev.download(out_ptr, (max(total, 1),), np.uint8)[:total]
    vshape, strides, offset = geom
    out_dtype = np.dtype(out_dtype)
    got = read_view(raw.view(out_dtype), vshape, strides, offset)
    outside = ~view_byte_mask(total, vshape, strides, offset, out_dtype.itemsize)
    assert np.array_equal(raw[outside], np.frombuffer(before, np.uint8)[outside]), \
        "a byte of out's buffer outside its view changed"
    return got


def run_sample(op: OpInfo, sample: Sample, dev, stream) -> None:
    rng = np.random.default_rng(seed_of(sample.id))
    if sample.make is not None:
        arrays = sample.make(op, rng)
    else:
        arrays = random_inputs(op, sample.in_dtypes, sample.shape, rng)
    layouts = dict(zip(op.inputs, sample.layouts)) if sample.layouts else None
    got = run(dev, stream, op, arrays, sample.dim, sample.out_dtype, layouts, sample.out_layout)
    assert got.dtype == np.dtype(sample.out_dtype)
    if sample.check is not None:
        sample.check(got, arrays)
    op.assert_matches(got, arrays, sample.dim, sample.out_dtype, sample.id)


# ------------------------------------------------------------------------- sample inputs ----

SAMPLES = [(op, s) for op in OP_DB for s in op.samples()]


@pytest.mark.parametrize("op,sample", SAMPLES, ids=[s.id for _, s in SAMPLES])
def test_sample(op: OpInfo, sample: Sample, dev, stream):
    """Random values: the grid (every dim of every rank, every dtype pair, long axes) and
    strided views of the inputs and of out."""
    run_sample(op, sample, dev, stream)


# ---------------------------------------------------------------------- reference inputs ----

REFERENCES = [(op, s) for op in OP_DB for s in op.references()]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op,sample", REFERENCES, ids=[s.id for _, s in REFERENCES])
def test_reference(op: OpInfo, sample: Sample, dev, stream):
    """Special values (NaN/inf lines, signed zeros, extremes, hard-sigmoid boundaries, INT32
    truncation, the backward select), each with its own assertions and the golden."""
    run_sample(op, sample, dev, stream)


def test_sample_ids_are_unique():
    ids = [s.id for _, s in SAMPLES + REFERENCES]
    assert len(ids) == len(set(ids))


def test_boundary_points_mask_design():
    """The expected float32 masks at the boundary (independent of the code under test)."""
    with np.errstate(invalid="ignore"):
        lin = f32_linear(BOUNDARY_X)
        mask = (lin > 0) & (lin < 1)
    by_x = {repr(float(x)): bool(m) for x, m in zip(BOUNDARY_X, mask)}
    assert by_x["-3.0"] is False and by_x["3.0"] is False
    assert by_x[repr(float(np.nextafter(np.float32(3.0), np.float32(0.0))))] is False  # -> 1.0
    assert by_x[repr(float(np.nextafter(np.float32(-3.0), np.float32(0.0))))] is True
    assert by_x["nan"] is False and by_x["inf"] is False and by_x["-inf"] is False


# ------------------------------------------------------------------------------ examples ----

EXAMPLES = [(op, ex, dt) for op in OP_DB for ex in op.examples for dt in ex.dtypes]


@pytest.mark.parametrize("op,example,dtype", EXAMPLES,
                         ids=[f"{o.api} CANN example {dname(d)}" for o, _, d in EXAMPLES])
def test_cann_example(op: OpInfo, example: Example, dtype, dev, stream):
    """CANN's examples: the example inputs and printouts (the in-place example reads its result
    back from self's buffer)."""
    arrays = {k: np.array(v, dtype=dtype).reshape(example.shape)
              for k, v in example.inputs.items()}
    got = run(dev, stream, op, arrays, example.dim, dtype)
    if example.exact:
        assert np.array_equal(got.ravel(), np.array(example.expected, dtype=dtype))
    else:
        np.testing.assert_allclose(got.astype(np.float64).ravel(), example.expected,
                                   rtol=example.rtol, atol=example.atol)


def test_every_operator_has_numerics():
    assert {op.name for op, _ in SAMPLES} == set(OPS)
    assert {op.name for op, _ in REFERENCES} == set(OPS)
    assert {op.name for op, _, _ in EXAMPLES} == set(OPS)
