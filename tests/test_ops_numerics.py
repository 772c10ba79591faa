"""Numerics of aclnnSoftmax, aclnnLogSoftmax, aclnnLogSoftmaxBackward, aclnnHardsigmoid,
aclnnInplaceHardsigmoid and aclnnHardsigmoidBackward through the aclnn API (phase 1, workspace,
phase 2, synchronize, D2H), against the independent float64 golden (tests/golden.py).

What the golden models (CANN's ops-nn op_api, PyTorch/oneDNN semantics):
* Softmax computes in self's dtype and casts to out's; LogSoftmax first casts self to out's
  dtype and computes there (so the golden is taken of the input rounded to out's dtype);
  the backward ops compute in the input (promoted) dtype and cast to out's.
* Hard-sigmoid evaluates alpha*x + beta in float32 with alpha = float32(1/6), beta = 0.5 as two
  separately rounded operations; the backward mask is the open interval 0 < l < 1 of that
  float32 value, and blocked elements are 0 whatever the gradient (a select).
Tolerances: golden.assert_close with the lower precision of the input and out dtypes
(PyTorch/oneDNN); backward ops are scaled by the largest reference magnitude.

Case ids read as one-line reproductions, e.g.
``aclnnLogSoftmax in=float32 out=float16 shape=3x7x5 dim=-2``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Optional

import golden
import ml_dtypes
import numpy as np
import pytest
from conftest import DTYPE_OF, read_view, strided_layout, view_byte_mask

from aclnn_py import acl, aclnn

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I32 = np.dtype(np.int32)
FLOATS = (F32, F16, BF16, F64)
SENTINEL = 0xA5

SHAPES = {
    0: (),
    1: (13,),
    2: (7, 33),
    3: (3, 7, 5),
    4: (2, 3, 5, 3),
    5: (2, 3, 2, 3, 2),
    6: (2, 2, 3, 2, 2, 3),
    7: (2, 2, 2, 3, 2, 2, 2),
    8: (2, 2, 2, 2, 3, 2, 2, 2),
}


def dname(dt) -> str:
    return np.dtype(dt).name


def shape_str(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def seed_of(text: str) -> int:
    return zlib.crc32(text.encode())


# ------------------------------------------------------------------------------ operators ----


@dataclass(frozen=True)
class Op:
    name: str
    params: tuple  # CANN argument order
    inputs: tuple  # the tensor inputs, in argument order
    has_dim: bool
    backward: bool
    inplace: bool = False

    def phase1(self, *args):
        return getattr(aclnn, self.name + "GetWorkspaceSize")(*args)

    def phase2(self, *args):
        return getattr(aclnn, self.name)(*args)


OPS = {
    "Softmax": Op("aclnnSoftmax", ("self", "dim", "out"), ("self",), True, False),
    "LogSoftmax": Op("aclnnLogSoftmax", ("self", "dim", "out"), ("self",), True, False),
    "LogSoftmaxBackward": Op("aclnnLogSoftmaxBackward", ("gradOutput", "output", "dim", "out"),
                             ("gradOutput", "output"), True, True),
    "Hardsigmoid": Op("aclnnHardsigmoid", ("self", "out"), ("self",), False, False),
    "InplaceHardsigmoid": Op("aclnnInplaceHardsigmoid", ("self",), ("self",), False, False,
                             inplace=True),
    "HardsigmoidBackward": Op("aclnnHardsigmoidBackward", ("gradOutput", "self", "out"),
                              ("gradOutput", "self"), False, True),
}


def reference(opname: str, v: dict, dim, out_dtype) -> np.ndarray:
    """The golden for one op, from the logical input values."""
    if opname == "Softmax":
        return golden.softmax(v["self"], dim)
    if opname == "LogSoftmax":  # self is cast to out's dtype first (CANN docs)
        return golden.log_softmax(golden.round_to(v["self"], out_dtype), dim)
    if opname == "LogSoftmaxBackward":
        return golden.log_softmax_backward(v["gradOutput"], v["output"], dim)
    if opname in ("Hardsigmoid", "InplaceHardsigmoid"):
        if v["self"].dtype == I32:
            return golden.hardsigmoid_int32(v["self"])
        return golden.hardsigmoid(v["self"], compute=golden.compute_dtype(v["self"].dtype))
    if opname == "HardsigmoidBackward":
        g, x = v["gradOutput"], v["self"]
        return golden.hardsigmoid_backward(g, x, compute=golden.compute_dtype(g.dtype, x.dtype))
    raise AssertionError(opname)


def random_inputs(opname: str, dtypes: tuple, shape, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    op = OPS[opname]
    out = {}
    for name, dt in zip(op.inputs, dtypes):
        if np.dtype(dt) == I32:
            a = rng.integers(-6, 7, size=shape)
        elif opname == "LogSoftmaxBackward" and name == "output":
            a = rng.uniform(-4.0, 0.0, size=shape)  # log-probability-like, not normalised
        elif opname.startswith("Hard") or opname.startswith("Inplace"):
            a = rng.uniform(-4.5, 4.5, size=shape) if name == "self" else \
                rng.uniform(-2.0, 2.0, size=shape)
        elif name == "gradOutput":
            a = rng.uniform(-2.0, 2.0, size=shape)
        else:
            a = rng.uniform(-5.0, 5.0, size=shape)
        out[name] = np.asarray(a).astype(dt)
    return out


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


def run(dev, stream, opname: str, arrays: dict, dim: Optional[int], out_dtype,
        layouts: Optional[dict] = None, out_layout: Optional[dict] = None) -> np.ndarray:
    """Run one op on host arrays laid out as given; return out's view values. Inputs are read
    only through their views (the storage around them holds NaN / -7), and every byte of out's
    buffer outside its view must come back unchanged."""
    op = OPS[opname]
    layouts = layouts or {}
    tensors = {}
    inplace_geom = None
    for name in op.inputs:
        a = arrays[name]
        fill = -7 if a.dtype == I32 else np.nan
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
    ws, ex, ret = op.phase1(*args)
    assert ret == 0, acl.get_recent_err_msg()
    wsp = dev.malloc(ws) if ws else 0
    assert op.phase2(wsp, ws, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
    raw = dev.download(out_ptr, (max(total, 1),), np.uint8)[:total]
    vshape, strides, offset = geom
    out_dtype = np.dtype(out_dtype)
    got = read_view(raw.view(out_dtype), vshape, strides, offset)
    outside = ~view_byte_mask(total, vshape, strides, offset, out_dtype.itemsize)
    assert np.array_equal(raw[outside], np.frombuffer(before, np.uint8)[outside]), \
        "a byte of out's buffer outside its view changed"
    return got


def check(opname: str, got, arrays: dict, dim, out_dtype, what: str) -> None:
    op = OPS[opname]
    ref = reference(opname, arrays, dim, np.dtype(out_dtype))
    assert got.dtype == np.dtype(out_dtype)
    if np.dtype(out_dtype) == I32:
        assert np.array_equal(got, ref), f"{what}: got {got}, expected {ref}"
        return
    basis = golden.basis(*[a.dtype for a in arrays.values()], out_dtype)
    golden.assert_close(got, ref, basis, backward=op.backward, what=what)


# ----------------------------------------------------------------- dtype x rank x dim grid ----


@dataclass(frozen=True)
class GridCase:
    op: str
    in_dtypes: tuple
    out_dtype: np.dtype
    shape: tuple
    dim: Optional[int]

    @property
    def id(self) -> str:
        ins = "+".join(dname(d) for d in self.in_dtypes)
        s = f"{OPS[self.op].name} in={ins} out={dname(self.out_dtype)} " \
            f"shape={shape_str(self.shape)}"
        return s + (f" dim={self.dim}" if self.dim is not None else "")


def _all_dims(rank):
    n = max(rank, 1)
    return list(range(-n, n))


GRID = []
# softmax family: every dim (negative too) of every rank 0..8 with out = input dtype, then every
# (input, out) dtype pair on every rank along the first and the last dim
for _op, _ins in (("Softmax", FLOATS), ("LogSoftmax", FLOATS),
                  ("LogSoftmaxBackward", (F32, F16, BF16))):
    _n_in = len(OPS[_op].inputs)
    for _dt in _ins:
        for _r, _s in SHAPES.items():
            GRID += [GridCase(_op, (_dt,) * _n_in, _dt, _s, _d) for _d in _all_dims(_r)]
        for _odt in FLOATS:
            if _odt == _dt:
                continue
            for _r, _s in SHAPES.items():
                GRID += [GridCase(_op, (_dt,) * _n_in, _odt, _s, _d)
                         for _d in sorted({0, max(_r, 1) - 1, -1})]
    # long reduction axes (a 16-bit running sum would go visibly wrong)
    for _dt in _ins:
        for _s, _d in (((2, 4097), -1), ((4097, 3), 0), ((3, 300, 5), 1)):
            GRID.append(GridCase(_op, (_dt,) * _n_in, _dt, _s, _d))
            GRID.append(GridCase(_op, (_dt,) * _n_in, F32 if _dt != F32 else F64, _s, _d))
# hard-sigmoid forward: out dtype == self dtype (no auto-cast)
for _op in ("Hardsigmoid", "InplaceHardsigmoid"):
    for _dt in (F32, F16, BF16, I32):
        GRID += [GridCase(_op, (_dt,), _dt, _s, None) for _s in SHAPES.values()]
        GRID.append(GridCase(_op, (_dt,), _dt, (1000, 3), None))
# hard-sigmoid backward: every (gradOutput, self) dtype pair, every float out
for _g in (F32, F16, BF16):
    for _x in (F32, F16, BF16):
        for _odt in FLOATS:
            _ranks = SHAPES if _g == _x else {1: SHAPES[1], 3: SHAPES[3]}
            GRID += [GridCase("HardsigmoidBackward", (_g, _x), _odt, _s, None)
                     for _s in _ranks.values()]


@pytest.mark.parametrize("case", GRID, ids=lambda c: c.id)
def test_grid(case: GridCase, dev, stream):
    arrays = random_inputs(case.op, case.in_dtypes, case.shape, seed_of(case.id))
    got = run(dev, stream, case.op, arrays, case.dim, case.out_dtype)
    check(case.op, got, arrays, case.dim, case.out_dtype, case.id)


# ------------------------------------------------------------------ non-contiguous views ----

CONTIG: dict = {}
T2 = {"perm": (1, 0)}  # 2-D transpose
STEP2 = {"step": 2}  # every other element of the innermost memory dim
OFFSET = {"pad": 5}  # view starts 5 elements into the buffer
T2_STEP_OFF = {"perm": (1, 0), "step": 2, "pad": 3}
P3 = {"perm": (2, 0, 1)}
P3_STEP_OFF = {"perm": (1, 2, 0), "step": 2, "pad": 7}
STEP3_OFF = {"step": 3, "pad": 1}
S8 = (2, 1, 2, 3, 1, 2, 2, 3)
P8 = {"perm": (7, 6, 5, 4, 3, 2, 1, 0)}  # 8-D, fully reversed memory order
P8_STEP_OFF = {"perm": (1, 0, 3, 2, 5, 4, 7, 6), "step": 2, "pad": 3}


def _lname(layout) -> str:
    if not layout:
        return "contig"
    parts = []
    if "perm" in layout:
        parts.append("perm" + "".join(map(str, layout["perm"])))
    if layout.get("step", 1) != 1:
        parts.append(f"step{layout['step']}")
    if layout.get("pad"):
        parts.append(f"offset{layout['pad']}")
    return "+".join(parts)


@dataclass(frozen=True)
class ViewCase:
    op: str
    in_dtypes: tuple
    out_dtype: np.dtype
    shape: tuple
    dim: Optional[int]
    layouts: tuple  # one per input
    out: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        op = OPS[self.op]
        ins = " ".join(f"{n}={dname(d)}:{_lname(lay)}"
                       for n, d, lay in zip(op.inputs, self.in_dtypes, self.layouts))
        s = f"{op.name} shape={shape_str(self.shape)}"
        s += f" dim={self.dim}" if self.dim is not None else ""
        if op.inplace:
            return f"{s} {ins}"
        return f"{s} {ins} out={dname(self.out_dtype)}:{_lname(self.out)}"


_L2 = [((T2,), CONTIG), ((STEP2,), CONTIG), ((OFFSET,), CONTIG), ((T2_STEP_OFF,), CONTIG),
       ((CONTIG,), STEP2), ((CONTIG,), T2), ((CONTIG,), OFFSET), ((T2,), T2_STEP_OFF)]
_L3 = [((P3,), CONTIG), ((P3_STEP_OFF,), STEP3_OFF), ((STEP3_OFF,), P3_STEP_OFF)]
_L2_BWD = [((T2, T2), CONTIG), ((STEP2, CONTIG), CONTIG), ((CONTIG, OFFSET), CONTIG),
           ((T2_STEP_OFF, STEP2), CONTIG), ((CONTIG, CONTIG), STEP2), ((CONTIG, CONTIG), T2),
           ((T2, OFFSET), T2_STEP_OFF)]
_L3_BWD = [((P3, P3_STEP_OFF), CONTIG), ((STEP3_OFF, P3), P3_STEP_OFF)]

VIEW_CASES = []
for _op, _pairs in (("Softmax", ((F32, F32), (F16, F16), (BF16, BF16), (F64, F64), (F16, F32),
                                 (F32, BF16), (BF16, F64))),
                    ("LogSoftmax", ((F32, F32), (F16, F16), (BF16, BF16), (F64, F64),
                                    (F32, F16), (F16, F64), (BF16, F32)))):
    for _dt, _odt in _pairs:
        for _d in (0, 1, -1):
            VIEW_CASES += [ViewCase(_op, (_dt,), _odt, (5, 4), _d, li, lo) for li, lo in _L2]
        for _d in (0, 2, -2):
            VIEW_CASES += [ViewCase(_op, (_dt,), _odt, (3, 4, 5), _d, li, lo) for li, lo in _L3]
for _dt, _odt in ((F32, F32), (F16, F16), (BF16, BF16), (F16, F32), (F32, F64), (BF16, F16)):
    for _d in (0, 1, -1):
        VIEW_CASES += [ViewCase("LogSoftmaxBackward", (_dt, _dt), _odt, (5, 4), _d, li, lo)
                       for li, lo in _L2_BWD]
    for _d in (0, 2, -2):
        VIEW_CASES += [ViewCase("LogSoftmaxBackward", (_dt, _dt), _odt, (3, 4, 5), _d, li, lo)
                       for li, lo in _L3_BWD]
for _dt in (F32, F16, BF16, I32):
    VIEW_CASES += [ViewCase("Hardsigmoid", (_dt,), _dt, (5, 4), None, li, lo) for li, lo in _L2]
    VIEW_CASES += [ViewCase("Hardsigmoid", (_dt,), _dt, (3, 4, 5), None, li, lo)
                   for li, lo in _L3]
    VIEW_CASES += [ViewCase("InplaceHardsigmoid", (_dt,), _dt, (5, 4), None, (li,))
                   for li in (T2, STEP2, OFFSET, T2_STEP_OFF)]
    VIEW_CASES += [ViewCase("InplaceHardsigmoid", (_dt,), _dt, (3, 4, 5), None, (li,))
                   for li in (P3, P3_STEP_OFF, STEP3_OFF)]
for _g, _x, _odt in ((F32, F32, F32), (F16, F16, F16), (BF16, BF16, BF16), (F16, BF16, F32),
                     (F32, F16, F64), (BF16, F32, F16)):
    VIEW_CASES += [ViewCase("HardsigmoidBackward", (_g, _x), _odt, (5, 4), None, li, lo)
                   for li, lo in _L2_BWD]
    VIEW_CASES += [ViewCase("HardsigmoidBackward", (_g, _x), _odt, (3, 4, 5), None, li, lo)
                   for li, lo in _L3_BWD]
VIEW_CASES += [
    ViewCase("Softmax", (F32,), F32, (), 0, (OFFSET,), OFFSET),
    ViewCase("LogSoftmax", (F16,), F64, (), -1, (OFFSET,), OFFSET),
    ViewCase("LogSoftmaxBackward", (F32, F32), F32, (), 0, (OFFSET, CONTIG), OFFSET),
    ViewCase("Hardsigmoid", (BF16,), BF16, (), None, (OFFSET,), OFFSET),
    ViewCase("InplaceHardsigmoid", (I32,), I32, (), None, (OFFSET,)),
    ViewCase("Softmax", (F32,), F32, (1, 6), 1, (T2,), STEP2),  # size-1 dims, odd strides
    ViewCase("Softmax", (F16,), F32, S8, 3, (P8,), P8_STEP_OFF),
    ViewCase("Softmax", (BF16,), BF16, S8, -1, (P8_STEP_OFF,), P8),
    ViewCase("LogSoftmax", (F32,), F16, S8, 0, (P8_STEP_OFF,), P8),
    ViewCase("LogSoftmaxBackward", (F32, F32), F32, S8, 4, (P8, P8_STEP_OFF), P8),
    ViewCase("Hardsigmoid", (I32,), I32, S8, None, (P8,), P8_STEP_OFF),
    ViewCase("InplaceHardsigmoid", (F16,), F16, S8, None, (P8_STEP_OFF,)),
    ViewCase("HardsigmoidBackward", (F16, BF16), F64, S8, None, (P8, P8_STEP_OFF), P8),
    ViewCase("LogSoftmax", (F32,), F16, (6, 1), 0, (T2,), T2),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c.id)
def test_strided_views(case: ViewCase, dev, stream):
    op = OPS[case.op]
    arrays = random_inputs(case.op, case.in_dtypes, case.shape, seed_of(case.id))
    layouts = dict(zip(op.inputs, case.layouts))
    got = run(dev, stream, case.op, arrays, case.dim, case.out_dtype, layouts, case.out)
    check(case.op, got, arrays, case.dim, case.out_dtype, case.id)


# ------------------------------------------------------- softmax / log-softmax special rows ----

INF, NAN = np.inf, np.nan


@dataclass(frozen=True)
class RowCase:
    op: str
    in_dtype: np.dtype
    out_dtype: np.dtype
    row: tuple  # placed as row 2 of a 4 x len(row) matrix of random values
    transpose: bool  # reduce along dim 0 of the transposed matrix
    note: str
    expect: str = ""  # "nan": the whole special line is NaN; "finite": no NaN/inf anywhere

    @property
    def id(self) -> str:
        dim = 0 if self.transpose else -1
        row = ",".join(repr(float(v)) for v in self.row)
        return (f"{OPS[self.op].name} in={dname(self.in_dtype)} out={dname(self.out_dtype)} "
                f"dim={dim} line=[{row}] ({self.note})")


ROWS = [
    ((1.0, -INF, 2.0, -INF, 0.5), "some -inf", ""),
    ((-INF,) * 5, "all -inf -> NaN", "nan"),
    ((1.0, INF, 2.0, 0.0, -1.0), "+inf -> NaN line", "nan"),
    ((1.0, 2.0, NAN, 0.0, -1.0), "NaN -> NaN line", "nan"),
    ((-INF, INF, 0.0, -INF, 1.0), "+inf and -inf", "nan"),
    ((-0.0, 0.0, -0.0, 0.0, -0.0), "signed zeros", "finite"),
    ((80.0, -80.0, 79.0, 0.0, 80.0), "+-80: exp would overflow float32", "finite"),
    ((1e4, -1e4, 9990.0, 1e4, -5.0), "+-1e4: max subtraction keeps it finite", "finite"),
    ((-1e4, -1e4 + 3, -1e4 + 1, -9999.5, -1e4), "all very negative", "finite"),
    ((1e-30, -1e-30, 0.0, 1e-38, 2e-38), "tiny", "finite"),
]
ROW_CASES = [
    RowCase(op, dt, odt, row, tp, note, expect)
    for op in ("Softmax", "LogSoftmax")
    for dt, odt in ((F32, F32), (F16, F16), (BF16, BF16), (F64, F64), (F32, F16), (F16, F32),
                    (BF16, F64))
    for row, note, expect in ROWS
    for tp in (False, True)
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", ROW_CASES, ids=lambda c: c.id)
def test_special_rows(case: RowCase, dev, stream):
    rng = np.random.default_rng(seed_of(case.id))
    x = rng.uniform(-3, 3, size=(4, len(case.row)))
    x[2] = case.row
    x = x.astype(case.in_dtype)
    dim = -1
    if case.transpose:
        x, dim = np.ascontiguousarray(x.T), 0
    arrays = {"self": x}
    got = run(dev, stream, case.op, arrays, dim, case.out_dtype)
    line = got[:, 2] if case.transpose else got[2]
    others = np.delete(got, 2, axis=1 if case.transpose else 0)
    assert np.isfinite(others.astype(np.float64)).all(), "a special line leaked into others"
    if case.expect == "nan":
        assert np.isnan(line.astype(np.float64)).all(), f"expected a NaN line, got {line}"
    if case.expect == "finite":
        assert np.isfinite(line.astype(np.float64)).all(), f"overflow: {line}"
    check(case.op, got, arrays, dim, case.out_dtype, case.id)


# ------------------------------------------------------------ log-softmax backward specials ----


@dataclass(frozen=True)
class LsmbCase:
    in_dtype: np.dtype
    out_dtype: np.dtype
    where: str  # "grad" or "output"
    at: tuple  # in a 4 x 5 matrix
    value: float
    dim: int

    @property
    def id(self) -> str:
        return (f"aclnnLogSoftmaxBackward in={dname(self.in_dtype)} "
                f"out={dname(self.out_dtype)} shape=4x5 dim={self.dim} "
                f"{self.where}{list(self.at)}={self.value}")


LSMB_CASES = [
    LsmbCase(dt, odt, where, at, v, d)
    for dt, odt in ((F32, F32), (F16, F16), (BF16, BF16), (F16, F32), (F32, F64), (BF16, F16))
    for d in (-1, 0)
    for where, at, v in (("output", (1, 2), -INF), ("output", (3, 0), -INF),
                         ("output", (2, 4), NAN), ("output", (0, 1), INF),
                         ("grad", (1, 3), NAN), ("grad", (2, 2), INF), ("grad", (0, 0), -INF),
                         ("grad", (3, 3), -0.0), ("output", (2, 1), -0.0))
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", LSMB_CASES, ids=lambda c: c.id)
def test_log_softmax_backward_specials(case: LsmbCase, dev, stream):
    arrays = random_inputs("LogSoftmaxBackward", (case.in_dtype,) * 2, (4, 5),
                           seed_of(case.id))
    arrays["gradOutput" if case.where == "grad" else "output"][case.at] = case.value
    got = run(dev, stream, "LogSoftmaxBackward", arrays, case.dim, case.out_dtype)
    if case.where == "output" and case.value == -INF:
        # PyTorch/oneDNN: exp(-inf) = 0, so the gradient passes through unchanged
        expected = arrays["gradOutput"][case.at].astype(case.out_dtype)
        assert got[case.at] == expected, f"out {got[case.at]} != grad {expected}"
    check("LogSoftmaxBackward", got, arrays, case.dim, case.out_dtype, case.id)


# ------------------------------------------------------------- hard-sigmoid boundary points ----

_F = np.float32
BOUNDARY_X = [
    _F(-3.0), _F(3.0),
    np.nextafter(_F(3.0), _F(0.0)), np.nextafter(_F(-3.0), _F(0.0)),
    np.nextafter(_F(3.0), _F(9.0)), np.nextafter(_F(-3.0), _F(-9.0)),
    _F(3.0 - 1e-4), _F(-3.0 + 1e-4), _F(3.0 + 1e-4), _F(-3.0 - 1e-4),
    _F(INF), _F(-INF), _F(NAN), _F(-0.0), _F(0.0), _F(1e-45), _F(8.0), _F(-8.0), _F(2.5),
]


def f32_linear(x) -> np.ndarray:
    """l = float32(x)*float32(1/6) + float32(0.5) as two float32 operations (PyTorch/oneDNN)."""
    x = np.asarray(x, dtype=np.float32)
    lin = x * np.float32(1.0 / 6.0)
    return lin + np.float32(0.5)


def test_boundary_points_mask_design():
    """The expected float32 masks at the boundary (independent of the code under test)."""
    with np.errstate(invalid="ignore"):
        lin = f32_linear(BOUNDARY_X)
        mask = (lin > 0) & (lin < 1)
    by_x = {repr(float(x)): bool(m) for x, m in zip(BOUNDARY_X, mask)}
    assert by_x["-3.0"] is False and by_x["3.0"] is False
    assert by_x[repr(float(np.nextafter(_F(3.0), _F(0.0))))] is False  # rounds to 1.0
    assert by_x[repr(float(np.nextafter(_F(-3.0), _F(0.0))))] is True
    assert by_x["nan"] is False and by_x["inf"] is False and by_x["-inf"] is False


@dataclass(frozen=True)
class BoundaryCase:
    op: str
    in_dtypes: tuple
    out_dtype: np.dtype

    @property
    def id(self) -> str:
        ins = "+".join(dname(d) for d in self.in_dtypes)
        xs = ",".join(repr(float(x)) for x in BOUNDARY_X[:6])
        return f"{OPS[self.op].name} in={ins} out={dname(self.out_dtype)} x=[{xs},...]"


BOUNDARY_CASES = [BoundaryCase(op, (dt,), dt) for op in ("Hardsigmoid", "InplaceHardsigmoid")
                  for dt in (F32, F16, BF16)]
BOUNDARY_CASES += [BoundaryCase("HardsigmoidBackward", (g, x), odt)
                   for g, x, odt in ((F32, F32, F32), (F16, F16, F16), (BF16, BF16, BF16),
                                     (F32, F32, F64), (F16, BF16, F32), (F32, F32, F16))]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", BOUNDARY_CASES, ids=lambda c: c.id)
def test_hardsigmoid_boundary_points(case: BoundaryCase, dev, stream):
    xs = np.array(BOUNDARY_X, dtype=np.float32)
    grads = np.linspace(-2.0, 2.0, len(xs)).astype(np.float32) + np.float32(0.25)
    if case.op == "HardsigmoidBackward":
        arrays = {"gradOutput": grads.astype(case.in_dtypes[0]),
                  "self": xs.astype(case.in_dtypes[1])}
    else:
        arrays = {"self": xs.astype(case.in_dtypes[0])}
    got = run(dev, stream, case.op, arrays, None, case.out_dtype).astype(np.float64)
    # the values as the kernel sees them (rounded to the input dtype, then float32)
    x_seen = arrays["self"].astype(np.float32)
    lin = f32_linear(x_seen)
    if case.op == "HardsigmoidBackward":
        mask = (lin > 0) & (lin < 1)
        g_seen = arrays["gradOutput"].astype(np.float32)
        assert np.array_equal(got[~mask], np.zeros((~mask).sum())), \
            f"blocked elements not 0: x={x_seen[~mask]} got={got[~mask]}"
        expected_active = (g_seen[mask] * np.float32(1.0 / 6.0)).astype(case.out_dtype)
        np.testing.assert_allclose(got[mask], expected_active.astype(np.float64), rtol=8e-3)
        if case.in_dtypes[1] == F32:  # the float32 boundary points themselves
            assert got[0] == 0 and got[1] == 0, "x = -3 and x = 3 must give 0"
            assert got[2] == 0, "x = nextafter(3, 0): float32 l rounds to 1.0 -> 0"
            assert got[3] != 0, "x = nextafter(-3, 0): float32 l > 0 -> grad/6"
    else:
        expected = np.where(lin <= 0, 0.0, np.where(lin >= 1, 1.0, lin.astype(np.float64)))
        assert np.array_equal(np.isnan(got), np.isnan(expected))
        assert got[0] == 0 and got[1] == 1 and got[10] == 1 and got[11] == 0
        assert got[13] == 0.5 and got[14] == 0.5, "hardsigmoid(+-0) = 0.5"
        ok = ~np.isnan(expected)
        np.testing.assert_allclose(got[ok], expected[ok], rtol=8e-3, atol=0)
    check(case.op, got.astype(case.out_dtype), arrays, None, case.out_dtype, case.id)


@dataclass(frozen=True)
class GradSpecialCase:
    grad: float
    x: float
    expected: str  # "0", "nan", "inf", "-inf"

    @property
    def id(self) -> str:
        return (f"aclnnHardsigmoidBackward(gradOutput={self.grad}, self={self.x}) FLOAT "
                f"-> {self.expected}")


GRAD_SPECIALS = [
    GradSpecialCase(NAN, 5.0, "0"), GradSpecialCase(NAN, -3.0, "0"),
    GradSpecialCase(INF, 4.0, "0"), GradSpecialCase(-INF, -INF, "0"),
    GradSpecialCase(NAN, 1.0, "nan"), GradSpecialCase(INF, 0.0, "inf"),
    GradSpecialCase(-INF, -2.0, "-inf"), GradSpecialCase(1.0, NAN, "0"),
    GradSpecialCase(NAN, NAN, "0"), GradSpecialCase(2.0, INF, "0"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", GRAD_SPECIALS, ids=lambda c: c.id)
def test_hardsigmoid_backward_is_a_select(case: GradSpecialCase, dev, stream):
    """CANN's operator docs: grad*alpha if 0 < alpha*x + beta < 1, else 0 -- a blocked element is
    0 whatever its gradient; an active one carries NaN/inf through."""
    g = np.array([case.grad, 1.0, 1.0], dtype=np.float32)
    x = np.array([case.x, 0.0, 9.0], dtype=np.float32)
    got = run(dev, stream, "HardsigmoidBackward", {"gradOutput": g, "self": x}, None, F32)
    v = float(got[0])
    if case.expected == "0":
        assert v == 0.0, v
    elif case.expected == "nan":
        assert np.isnan(v), v
    else:
        assert v == float(case.expected), v
    assert got[1] == np.float32(1.0) * np.float32(1.0 / 6.0) and got[2] == 0


@dataclass(frozen=True)
class IntCase:
    op: str
    x: tuple

    @property
    def id(self) -> str:
        return f"{OPS[self.op].name}(self=INT32{list(self.x)})"


INT_X = (2, 3, -5, 4, -3, 0, 5, -2, 1, -1, 6, 2147483647, -2147483648)
# computed in float32 and truncated toward zero: only x >= 3 reaches 1 (CANN's Hardsigmoid docs)
INT_EXPECTED = (0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0)
INT_CASES = [IntCase("Hardsigmoid", INT_X), IntCase("InplaceHardsigmoid", INT_X)]


@pytest.mark.parametrize("case", INT_CASES, ids=lambda c: c.id)
def test_int32_hardsigmoid_truncates(case: IntCase, dev, stream):
    x = np.array(case.x, dtype=np.int32)
    got = run(dev, stream, case.op, {"self": x}, None, I32)
    assert got.tolist() == list(INT_EXPECTED)
    check(case.op, got, {"self": x}, None, I32, case.id)


@pytest.mark.parametrize("dt", (F32, F16, BF16), ids=dname)
def test_cann_hardsigmoid_examples(dt, dev, stream):
    """CANN's examples: the forward and backward example inputs and printouts."""
    x = np.array([-4, -3, -2, 0, 1, 2, 4, 5], dtype=dt).reshape(4, 2)
    got = run(dev, stream, "Hardsigmoid", {"self": x}, None, dt).astype(np.float64)
    np.testing.assert_allclose(got.ravel(), [0, 0, 1 / 6, 0.5, 4 / 6, 5 / 6, 1, 1],
                               rtol=4e-3, atol=1e-6)
    g = np.arange(8, dtype=dt).reshape(4, 2)
    x = np.arange(8, dtype=dt).reshape(4, 2)
    got = run(dev, stream, "HardsigmoidBackward", {"gradOutput": g, "self": x}, None, dt)
    np.testing.assert_allclose(got.astype(np.float64).ravel(),
                               [0, 1 / 6, 2 / 6, 0, 0, 0, 0, 0], rtol=4e-3, atol=1e-6)


def test_cann_softmax_family_examples(dev, stream):
    """CANN's examples: the Softmax, LogSoftmax and LogSoftmaxBackward example printouts."""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = run(dev, stream, "Softmax", {"self": x}, 0, F32)
    np.testing.assert_allclose(got.ravel(), [0.002144, 0.002144, 0.015842, 0.015842,
                                             0.117059, 0.117059, 0.864955, 0.864955],
                               atol=1e-6)
    x = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    got = run(dev, stream, "LogSoftmax", {"self": x}, 1, F32)
    np.testing.assert_allclose(got.ravel(), [-2.407606, -1.407606, -0.407606] * 3, atol=2e-6)
    g = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = np.array([1, 1, 1, 2, 2, 2, 3, 3], dtype=np.float32).reshape(4, 2)
    got = run(dev, stream, "LogSoftmaxBackward", {"gradOutput": g, "output": y}, 0, F32)
    np.testing.assert_allclose(got.ravel(), [-32.619385, -42.492512, -30.619385, -115.224892,
                                             -84.668671, -113.224892, -235.026443,
                                             -314.368591], rtol=1e-6)
