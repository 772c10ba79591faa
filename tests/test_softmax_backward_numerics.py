"""aclnnSoftmaxBackward numerics against the independent float64 golden (tests/golden.py).

The expected value is CANN's formula out = g*y - sum(g*y, dim)*y evaluated in float64 on the
*input-dtype* values. CANN computes in the input dtype and casts to out's dtype, so results are
compared with the tolerance of the lower precision of input and out (golden.basis, PyTorch/oneDNN).
y is random and not a valid softmax, as in benchdnn: the formula must be applied as given.

Case ids read as a one-line reproduction, e.g. ``in=float16 out=float32 shape=3x4x5 dim=-2``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import golden
import ml_dtypes
import numpy as np
import pytest
from conftest import DTYPE_OF, read_view, strided_layout, view_byte_mask

from aclnn_py import acl, aclnn

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
IN_DTYPES = (F32, F16, BF16)
OUT_DTYPES = (F16, F32, BF16, F64)
SENTINEL = 0xA5

SHAPES = {
    0: (),
    1: (7,),
    2: (5, 6),
    3: (3, 4, 5),
    4: (2, 3, 4, 3),
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


# ------------------------------------------------------------------------------- helpers ----


def make_out(dev, values_like, out_dtype, perm=None, step=1, pad=0):
    """(ptr, tensor, geometry, total bytes): an out tensor (possibly a strided view into a
    bigger buffer) whose whole buffer is pre-filled with the SENTINEL byte."""
    zeros = np.zeros(np.shape(values_like), dtype=out_dtype)
    storage, shape, strides, offset = strided_layout(zeros, perm, step, pad, fill=0)
    total = storage.nbytes
    ptr = dev.malloc(max(total, 1))
    dev.fill(ptr, max(total, 1), SENTINEL)
    t = aclnn.aclCreateTensor(shape, DTYPE_OF[np.dtype(out_dtype)], strides, offset,
                              aclnn.ACL_FORMAT_ND, [storage.size], ptr)
    assert t is not None
    return ptr, t, (shape, strides, offset), total


def run(dev, stream, g_t, y_t, dim, out_t):
    ws, ex, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(g_t, y_t, dim, out_t)
    assert ret == 0, acl.get_recent_err_msg()
    wsp = dev.malloc(ws) if ws else 0
    assert aclnn.aclnnSoftmaxBackward(wsp, ws, ex, stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()


def fetch_out(dev, out_ptr, geometry, total, out_dtype):
    """(view values, outside-bytes-unchanged flag) read back from out's whole buffer."""
    raw = dev.download(out_ptr, (max(total, 1),), np.uint8)[:total]
    shape, strides, offset = geometry
    itemsize = np.dtype(out_dtype).itemsize
    got = read_view(raw.view(out_dtype), shape, strides, offset)
    outside = ~view_byte_mask(total, shape, strides, offset, itemsize)
    return got, bool((raw[outside] == SENTINEL).all())


def compute(dev, stream, g, y, dim, out_dtype, g_layout=None, y_layout=None, out_layout=None):
    """Run SoftmaxBackward on host arrays g, y (laid out as given) and return out's values."""
    g_layout = g_layout or {}
    y_layout = y_layout or {}
    out_layout = out_layout or {}
    _, g_t, _ = dev.strided(g, **g_layout)
    _, y_t, _ = dev.strided(y, **y_layout)
    out_ptr, out_t, geom, total = make_out(dev, g, out_dtype, **out_layout)
    run(dev, stream, g_t, y_t, dim, out_t)
    got, untouched = fetch_out(dev, out_ptr, geom, total, out_dtype)
    assert untouched, "a byte of out's buffer outside its view changed"
    return got


def random_inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    g = rng.uniform(-2.0, 2.0, size=shape).astype(dtype)
    y = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)  # deliberately not a softmax
    return np.asarray(g), np.asarray(y)


# ----------------------------------------------------------------- dtype x rank x dim grid ----


@dataclass(frozen=True)
class GridCase:
    in_dtype: np.dtype
    out_dtype: np.dtype
    shape: tuple
    dim: int

    @property
    def id(self) -> str:
        return (f"in={dname(self.in_dtype)} out={dname(self.out_dtype)} "
                f"shape={shape_str(self.shape)} dim={self.dim}")


def _dims(rank):
    n = max(rank, 1)
    return list(range(-n, n))


GRID = []
# every dim (negative too) of every rank 0..8, out dtype = input dtype
for _dt in IN_DTYPES:
    for _r, _s in SHAPES.items():
        GRID += [GridCase(_dt, _dt, _s, _d) for _d in _dims(_r)]
# every (input, out) dtype pair on every rank, first and last dim
for _dt in IN_DTYPES:
    for _odt in OUT_DTYPES:
        if _odt == _dt:
            continue
        for _r, _s in SHAPES.items():
            GRID += [GridCase(_dt, _odt, _s, _d) for _d in sorted({0, -1, max(_r, 1) - 1})]
# longer axes, where accumulating the sum in a 16-bit type would go visibly wrong
for _dt in IN_DTYPES:
    for _s, _d in (((2, 4097), -1), ((4097, 3), 0), ((3, 300, 5), 1), ((1, 1, 1000), 2)):
        GRID.append(GridCase(_dt, _dt, _s, _d))
        GRID.append(GridCase(_dt, F32 if _dt != F32 else F64, _s, _d))


@pytest.mark.parametrize("case", GRID, ids=lambda c: c.id)
def test_grid(case: GridCase, dev, stream):
    g, y = random_inputs(case.shape, case.in_dtype, seed_of(case.id))
    got = compute(dev, stream, g, y, case.dim, case.out_dtype)
    assert got.dtype == case.out_dtype
    ref = golden.softmax_backward(g, y, case.dim)
    golden.assert_close(got, ref, golden.basis(case.in_dtype, case.out_dtype), backward=True,
                        what=case.id)


def test_cann_example_exact(dev, stream):
    """CANN's official example (FLOAT {4,2}, dim 0); every value exact in fp32."""
    g = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = np.array([1, 1, 1, 2, 2, 2, 3, 3], dtype=np.float32).reshape(4, 2)
    got = compute(dev, stream, g, y, 0, F32)
    expected = np.array([-28, -37, -26, -70, -48, -66, -66, -93], dtype=np.float32)
    assert np.array_equal(got.ravel(), expected)


# ------------------------------------------------------------------- non-contiguous views ----

CONTIG = {}
T2 = {"perm": (1, 0)}  # 2-D transpose
STEP2 = {"step": 2}  # every other element of the innermost memory dim
OFFSET = {"pad": 5}  # view starts 5 elements into the buffer
T2_STEP_OFF = {"perm": (1, 0), "step": 2, "pad": 3}
P3 = {"perm": (2, 0, 1)}
P3_STEP_OFF = {"perm": (1, 2, 0), "step": 2, "pad": 7}
STEP3_OFF = {"step": 3, "pad": 1}


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
    in_dtype: np.dtype
    out_dtype: np.dtype
    shape: tuple
    dim: int
    g: dict
    y: dict
    out: dict

    @property
    def id(self) -> str:
        return (f"in={dname(self.in_dtype)} out={dname(self.out_dtype)} "
                f"shape={shape_str(self.shape)} dim={self.dim} grad={_lname(self.g)} "
                f"output={_lname(self.y)} out={_lname(self.out)}")


VIEW_CASES = []
for _dt, _odt in ((F32, F32), (F16, F16), (BF16, BF16), (F16, F32), (F32, F64), (BF16, F16),
                  (F32, BF16)):
    for _d in (0, 1, -1):
        VIEW_CASES += [
            ViewCase(_dt, _odt, (5, 4), _d, T2, T2, CONTIG),  # CANN UT layout
            ViewCase(_dt, _odt, (5, 4), _d, STEP2, CONTIG, CONTIG),
            ViewCase(_dt, _odt, (5, 4), _d, CONTIG, OFFSET, CONTIG),
            ViewCase(_dt, _odt, (5, 4), _d, T2_STEP_OFF, STEP2, CONTIG),
            ViewCase(_dt, _odt, (5, 4), _d, CONTIG, CONTIG, STEP2),
            ViewCase(_dt, _odt, (5, 4), _d, CONTIG, CONTIG, T2),
            ViewCase(_dt, _odt, (5, 4), _d, CONTIG, CONTIG, OFFSET),
            ViewCase(_dt, _odt, (5, 4), _d, T2, OFFSET, T2_STEP_OFF),
        ]
    for _d in (0, 2, -2):
        VIEW_CASES += [
            ViewCase(_dt, _odt, (3, 4, 5), _d, P3, P3_STEP_OFF, CONTIG),
            ViewCase(_dt, _odt, (3, 4, 5), _d, STEP3_OFF, P3, P3_STEP_OFF),
        ]
VIEW_CASES += [
    ViewCase(F32, F32, (), 0, OFFSET, OFFSET, OFFSET),
    ViewCase(F16, F64, (), -1, OFFSET, CONTIG, OFFSET),
    ViewCase(F32, F32, (1, 6), 1, T2, STEP2, T2),  # size-1 dims with odd strides
    ViewCase(F32, F16, (6, 1), 0, T2, T2, STEP2),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c.id)
def test_strided_views(case: ViewCase, dev, stream):
    """Inputs read only through their views (the storage around them holds NaN), out written
    only through its view (every other byte of its buffer keeps the sentinel)."""
    g, y = random_inputs(case.shape, case.in_dtype, seed_of(case.id))
    got = compute(dev, stream, g, y, case.dim, case.out_dtype, case.g, case.y, case.out)
    ref = golden.softmax_backward(g, y, case.dim)
    golden.assert_close(got, ref, golden.basis(case.in_dtype, case.out_dtype), backward=True,
                        what=case.id)


# ------------------------------------------------------------------------ NaN and infinity ----


@dataclass(frozen=True)
class SpecialCase:
    in_dtype: np.dtype
    out_dtype: np.dtype
    dim: int
    where: str  # "grad" or "output"
    at: tuple
    value: float

    @property
    def id(self) -> str:
        return (f"in={dname(self.in_dtype)} out={dname(self.out_dtype)} shape=4x5 "
                f"dim={self.dim} {self.where}{list(self.at)}={self.value}")


SPECIAL_CASES = [
    SpecialCase(dt, odt, d, where, at, v)
    for dt, odt in ((F32, F32), (F16, F16), (BF16, BF16), (F16, F32), (F32, F64))
    for d in (-1, 0)
    for where, at, v in (("grad", (1, 2), np.nan), ("output", (2, 4), np.nan),
                         ("grad", (3, 0), np.inf), ("grad", (0, 3), -np.inf),
                         ("output", (1, 1), np.inf), ("output", (2, 2), -np.inf))
]


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("case", SPECIAL_CASES, ids=lambda c: c.id)
def test_nan_and_inf(case: SpecialCase, dev, stream):
    g, y = random_inputs((4, 5), case.in_dtype, seed_of(case.id))
    (g if case.where == "grad" else y)[case.at] = case.value
    got = compute(dev, stream, g, y, case.dim, case.out_dtype)
    ref = golden.softmax_backward(g, y, case.dim)
    # the row (dim=-1) or column (dim=0) through the special value is all non-finite, the rest
    # is untouched by it
    line = np.zeros((4, 5), dtype=bool)
    if case.dim in (-1, 1):
        line[case.at[0], :] = True
    else:
        line[:, case.at[1]] = True
    assert np.isfinite(ref[~line]).all()
    if np.isnan(case.value):
        assert np.isnan(ref[line]).all()  # a NaN poisons its whole reduction line
        assert np.isnan(got[line]).all(), f"{case.id}: NaN did not spread over its line: {got}"
    golden.assert_close(got, ref, golden.basis(case.in_dtype, case.out_dtype), backward=True,
                        what=case.id)


# ---------------------------------------------------------------------- large magnitudes ----


@dataclass(frozen=True)
class BigCase:
    in_dtype: np.dtype
    out_dtype: np.dtype
    transpose: bool  # reduce along dim 0 of the transposed data instead of the last dim
    g_row: tuple
    y_row: tuple
    note: str

    @property
    def id(self) -> str:
        dim = 0 if self.transpose else -1
        return (f"in={dname(self.in_dtype)} out={dname(self.out_dtype)} dim={dim} "
                f"grad~{self.g_row} output~{self.y_row} ({self.note})")


# float16: g*y reaches 6e4 (finite) but a float16 running sum would pass 65504; the result fits
_H_G, _H_Y = (3e4, 3e4, -3e4, -3e4, 1.0), (2.0, 2.0, 2.0, 2.0, 1.0)
# bfloat16/float32: near the top of the float32 range, every float32 intermediate still finite
_L_G, _L_Y = (1e37, 1e37, -1e37, 5e36), (3.0, 3.0, 3.0, 1.0)
BIG_CASES = [
    BigCase(F16, F16, False, _H_G, _H_Y, "float16 accumulation would overflow"),
    BigCase(F16, F32, False, _H_G, _H_Y, "float16 accumulation would overflow"),
    BigCase(F16, F16, True, _H_G, _H_Y, "float16 accumulation would overflow"),
    BigCase(F16, F64, True, _H_G, _H_Y, "float16 accumulation would overflow"),
    BigCase(BF16, BF16, False, _L_G, _L_Y, "near float32 max"),
    BigCase(BF16, F32, True, _L_G, _L_Y, "near float32 max"),
    BigCase(F32, F32, False, _L_G, _L_Y, "near float32 max"),
    BigCase(F32, F64, True, _L_G, _L_Y, "near float32 max"),
]


@pytest.mark.parametrize("case", BIG_CASES, ids=lambda c: c.id)
def test_large_magnitudes(case: BigCase, dev, stream):
    rng = np.random.default_rng(seed_of(case.id))
    rows = 6
    perms = [rng.permutation(len(case.g_row)) for _ in range(rows)]  # several summation orders
    g = np.array([np.array(case.g_row)[p] for p in perms]).astype(case.in_dtype)
    y = np.array([np.array(case.y_row)[p] for p in perms]).astype(case.in_dtype)
    dim = -1
    if case.transpose:
        g, y, dim = np.ascontiguousarray(g.T), np.ascontiguousarray(y.T), 0
    got = compute(dev, stream, g, y, dim, case.out_dtype)
    ref = golden.softmax_backward(g, y, dim)
    # CANN's pipeline: the result is stored in the input dtype, then cast to out's dtype
    expected = golden.round_to(golden.round_to(ref, case.in_dtype), case.out_dtype)
    assert np.isfinite(expected).all(), "case design: the result must fit the dtypes"
    assert np.isfinite(got.astype(np.float64)).all(), f"{case.id}: overflow: {got}"
    golden.assert_close(got, ref, golden.basis(case.in_dtype, case.out_dtype), backward=True,
                        what=case.id)
