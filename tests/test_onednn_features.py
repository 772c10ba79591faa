"""oneDNN features (issue 29, docs/onednn.md): binary src1 of every dtype benchdnn uses, every
eltwise algorithm oneDNN accepts as a post-op (the ``*_use_dst_for_bwd`` spellings included),
the caller's destination memory (``out=``, in-place) and dropout with oneDNN's Philox mask.

Expected values come from the float64 references of tests/test_onednn.py (oneDNN's documented
formulas in benchdnn's order) and, for dropout, from a scalar Philox4x32-10 written here from
the algorithm's definition and checked against Random123's published known-answer vectors;
never from the emulator.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from test_onednn import F32, F64, check, data, ref_eltwise, ref_forward

import aclnn_py
from aclnn_py import functional as F

BF16 = np.dtype(ml_dtypes.bfloat16)


def _param_error(match, fn, *args, **kw):
    with pytest.raises(aclnn_py.AclnnParamError, match=match) as info:
        fn(*args, **kw)
    assert info.value.code == 161002


# ------------------------------------------------------- item 3: binary src1 dtypes ----

@pytest.mark.parametrize("s1dt", [BF16, np.dtype(np.float16), np.dtype(np.int8),
                                  np.dtype(np.uint8), np.dtype(np.int32),
                                  np.dtype(ml_dtypes.float8_e4m3fn),
                                  np.dtype(ml_dtypes.float8_e5m2)], ids=str)
@pytest.mark.parametrize("dt", [F32, F64], ids=str)
def test_binary_src1_of_every_dtype_is_read_as_float32(s1dt, dt):
    """benchdnn's binary post-ops with src1 in bf16, f16, s8, u8, s32 (and f8): the values of
    src1, exactly representable in float32, per tensor, per channel and full."""
    shape = (3, 5, 7)
    x = data(shape, dt, 21)
    rng = np.random.default_rng(22)
    for s1_shape in [(1, 1, 1), (1, 5, 1), shape]:
        raw = rng.uniform(-3, 3, s1_shape)
        if np.dtype(s1dt).kind in "iu":
            raw = np.round(raw) + (3 if np.dtype(s1dt).kind == "u" else 0)
        s1 = raw.astype(s1dt)
        for alg in ("add", "mul", "max"):
            posts = [F.Binary(alg, s1)]
            got = F.softmax(x, 1, post_ops=posts)
            want = ref_forward(x, 1, post_ops=[F.Binary(alg, s1.astype(np.float64))])
            check(got, want, dt, f"{alg} src1 {s1dt} {s1_shape}")
    got = F.log_softmax(x, 2, post_ops=[F.Binary("sub", s1dt.type(2))])
    check(got, ref_forward(x, 2, True) - 2.0, dt, f"scalar src1 {s1dt}")


def test_binary_src1_not_a_real_number_is_refused():
    x = data((2, 3), F32)
    _param_error(r"post_ops\[0\]: src1 of dtype <U1 is not a real number type",
                 F.softmax, x, 1, post_ops=[F.Binary("add", np.array([["a", "b", "c"]]))])


# ------------------------------------------------- item 4: every eltwise algorithm ----

# oneDNN's dnnl_alg_kind_t eltwise list (dnnl_types.h) with parameters inside the domain
# is_eltwise_ok accepts; the *_use_dst_for_bwd kinds compute their base formula forward
BASE = {"relu_use_dst_for_bwd": "relu", "tanh_use_dst_for_bwd": "tanh",
        "elu_use_dst_for_bwd": "elu", "sqrt_use_dst_for_bwd": "sqrt",
        "logistic_use_dst_for_bwd": "logistic", "exp_use_dst_for_bwd": "exp",
        "clip_v2_use_dst_for_bwd": "clip_v2"}
DST_CASES = [("relu_use_dst_for_bwd", 0.25, 0.0), ("tanh_use_dst_for_bwd", 0.0, 0.0),
             ("elu_use_dst_for_bwd", 0.5, 0.0), ("sqrt_use_dst_for_bwd", 0.0, 0.0),
             ("logistic_use_dst_for_bwd", 0.0, 0.0), ("exp_use_dst_for_bwd", 0.0, 0.0),
             ("clip_v2_use_dst_for_bwd", 0.05, 0.3)]


@pytest.mark.parametrize("alg,alpha,beta", DST_CASES, ids=[c[0] for c in DST_CASES])
@pytest.mark.parametrize("spelling", ["{}", "eltwise_{}", "benchdnn"])
def test_use_dst_for_bwd_post_ops_compute_the_forward_formula(alg, alpha, beta, spelling):
    name = (alg.replace("_use_dst_for_bwd", "_dst") if spelling == "benchdnn"
            else spelling.format(alg))
    x = data((6, 40), F32, 23)
    spread = [F.Eltwise("linear", 30.0, -1.0)] if BASE[alg] != "sqrt" else []
    got = F.softmax(x, 1, post_ops=spread + [F.Eltwise(name, alpha, beta)])
    d = ref_forward(x, 1, post_ops=spread)
    want = ref_eltwise(BASE[alg], d, float(np.float32(alpha)), float(np.float32(beta)))
    check(got, want, F32, name)


def test_srelu_is_soft_relu():
    x = data((4, 9), F32, 24)
    posts = [F.Eltwise("linear", 20.0, -2.0), F.Eltwise("srelu", 1.5)]
    want = ref_eltwise("soft_relu", ref_forward(x, 1, post_ops=posts[:1]), 1.5, 0.0)
    check(F.softmax(x, 1, post_ops=posts), want, F32, "srelu")


def test_eltwise_parameter_rules_of_onednn():
    """is_eltwise_ok: clip / clip_v2 / clip_v2_use_dst_for_bwd need beta >= alpha;
    relu_use_dst_for_bwd and elu_use_dst_for_bwd need alpha >= 0."""
    x = data((2, 5), F32)
    for alg in ("clip", "clip_v2", "clip_v2_use_dst_for_bwd", "clip_v2_dst"):
        _param_error(rf"post_ops\[0\]: {alg} needs beta >= alpha.*alpha = 0.5, beta = 0.25",
                     F.softmax, x, 1, post_ops=[F.Eltwise(alg, 0.5, 0.25)])
    for alg in ("relu_use_dst_for_bwd", "elu_dst"):
        _param_error(rf"post_ops\[0\]: {alg} needs alpha >= 0.*-0.1",
                     F.softmax, x, 1, post_ops=[F.Eltwise(alg, -0.1)])
    # the plain relu and elu take a negative alpha (a leaky slope)
    got = F.softmax(x, 1, post_ops=[F.Eltwise("linear", 1.0, -0.5), F.Eltwise("relu", -0.1)])
    check(got, ref_forward(x, 1, post_ops=[F.Eltwise("linear", 1.0, -0.5),
                                           F.Eltwise("relu", -0.1)]), F32)
    _param_error(r"unknown algorithm 'bounded_relu'.*relu_use_dst_for_bwd",
                 F.softmax, x, 1, post_ops=[F.Eltwise("bounded_relu", 1.0)])



def test_eltwise_rules_apply_to_the_float32_values_after_the_range_check():
    """The parameter rules (is_eltwise_ok) and the float32 range / zero checks together:
    values beyond float32 are refused by the range check, naming the argument; the rules see
    the float32 values oneDNN stores (1 - 1e-12 is 1.0 there, -1e-46 is -0.0)."""
    x = data((2, 5), F32)
    _param_error(r"post_ops\[0\].beta = 1e\+300 does not fit float32",
                 F.softmax, x, 1, post_ops=[F.Eltwise("clip_v2_dst", 0.0, 1e300)])
    _param_error(r"post_ops\[0\].alpha = -1e\+300 does not fit float32",
                 F.softmax, x, 1, post_ops=[F.Eltwise("relu_use_dst_for_bwd", -1e300)])
    _param_error(r"post_ops\[0\]: soft_relu needs alpha != 0.*1e-46, which is 0 in float32",
                 F.log_softmax, x, 1, post_ops=[F.Eltwise("srelu", 1e-46)])
    # accepted in float32: beta == alpha there; alpha is -0.0 there, which is >= 0
    got = F.softmax(x, 1, post_ops=[F.Eltwise("clip", 1.0, 1.0 - 1e-12)])
    assert got.astype(np.float64).tolist() == [[1.0] * 5] * 2
    got = F.softmax(x, 1, post_ops=[F.Eltwise("relu_use_dst_for_bwd", -1e-46)])
    check(got, ref_forward(x, 1), F32)

# ------------------------------------------------------- item 6: out= and in place ----

def _dtag(shape, perm, dt):
    """An uninitialised array of ``shape`` laid out as benchdnn's --dtag: ``perm`` lists the
    dims from outermost to innermost in memory (acb: (0, 2, 1))."""
    return np.full(tuple(shape[p] for p in perm), 7, dt).transpose(np.argsort(perm))


@pytest.mark.parametrize("dt", [F32, BF16, np.dtype(np.int8)], ids=str)
def test_out_of_any_strides(dt):
    """benchdnn's --dtag=acb / acbd: the result written into the caller's array of permuted
    strides; also a negatively strided and a gapped out (the bytes between its elements are
    left alone)."""
    kw = {"src_scale": 64.0, "dst_scale": 0.5} if dt.kind == "i" else {}
    for shape, perm in [((3, 5, 7), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 1, 3)),
                        ((2, 3, 4, 5), (3, 2, 1, 0))]:
        x = data(shape, F32, 31)
        for dim in (1, -1):
            out = _dtag(shape, perm, dt)
            got = F.softmax(x, dim, out=out, **kw)
            assert got is out
            check(out, ref_forward(x, dim, False, kw.get("src_scale", 1.0),
                                   kw.get("dst_scale", 1.0)), dt, f"{shape} {perm} {dim}")
    x = data((4, 6), F32, 32)
    rev = np.zeros((4, 6), F32)[::-1, ::-1]
    F.log_softmax(x, 1, out=rev)
    check(rev, ref_forward(x, 1, True), F32, "negative strides")
    big = np.full((4, 12), -5.0, F32)
    F.softmax(x, 0, out=big[:, 1::2])
    check(big[:, 1::2], ref_forward(x, 0), F32, "gapped")
    assert (big[:, 0::2] == -5.0).all()


def test_out_gives_the_dtype_and_backward_takes_out():
    x = data((5, 8), F32, 33)
    out = np.empty((5, 8), np.uint8)
    F.softmax(x, 1, out=out, src_scale=255.0)
    check(out, ref_forward(x, 1, src_scale=255.0), np.uint8)
    y = ref_forward(x, 1).astype(np.float32)
    g = data((5, 8), F32, 34)
    out = np.empty((8, 5), F64).T
    F.softmax_backward(g, y, 1, out=out)
    g64, y64 = g.astype(F64), y.astype(F64)
    want = g64 * y64 - (g64 * y64).sum(1, keepdims=True) * y64
    check(out, want, F64, "softmax_backward out")
    out = np.empty((5, 8), F32)
    F.log_softmax_backward(g, np.log(y), 1, out=out)
    check(out, g64 - np.exp(np.log(y).astype(F64)) * g64.sum(1, keepdims=True), F32)


@pytest.mark.parametrize("dt", [F32, np.dtype(np.float16), BF16, F64], ids=str)
def test_in_place(dt):
    """--inplace=true: dst is the source's own memory (same dtype, same view), for rows, a
    middle axis, axis 0, a transposed source and with attributes; the backward operators in
    place of diff_dst."""
    for shape, dim in [((6, 300), 1), ((3, 40, 5), 1), ((50, 4), 0)]:
        x = data(shape, dt, 35)
        want = ref_forward(x, dim)
        got = F.softmax(x, dim, out=x)
        assert got is x
        check(x, want, dt, f"in place {shape} {dim}")
    x = data((9, 7), dt, 36).T
    want = ref_forward(x, 1, True, 2.0, 1.0, [F.Eltwise("linear", 0.5, 1.0)])
    F.log_softmax(x, 1, out=x, src_scale=2.0, post_ops=[F.Eltwise("linear", 0.5, 1.0)])
    check(x, want, dt, "in place transposed, attributes")
    y = ref_forward(data((4, 9), F32, 37), 1).astype(dt)
    g = data((4, 9), dt, 38)
    g64, y64 = g.astype(F64), y.astype(F64)
    want = g64 * y64 - (g64 * y64).sum(1, keepdims=True) * y64
    F.softmax_backward(g, y, 1, out=g)
    check(g, want, dt, "backward in place")


def test_in_place_int8():
    x = data((7, 33), np.int8, 39)
    want = ref_forward(x, 1, False, 64.0, 0.5)
    F.softmax(x, 1, out=x, src_scale=64.0, dst_scale=0.5)
    check(x, want, np.int8, "int8 in place")


def test_bad_out_names_out_and_the_rule():
    x = data((4, 6), F32, 40)
    _param_error(r"out has shape \(6, 4\); the result's shape is \(4, 6\)",
                 F.softmax, x, 1, out=np.empty((6, 4), F32))
    _param_error(r"out has dtype float32 but out_dtype is float16",
                 F.softmax, x, 1, out=np.empty((4, 6), F32), out_dtype=np.float16)
    ro = np.empty((4, 6), F32)
    ro.flags.writeable = False
    _param_error(r"out is read-only", F.softmax, x, 1, out=ro)
    sq = data((4, 4), F32, 42)
    _param_error(r"out overlaps input 'self' partially.*in place.*float32 \(4, 4\) strides "
                 r"\(4, 16\)", F.softmax, sq, 1, out=sq.T)
    wide = data((4, 7), F32, 41)
    _param_error(r"out overlaps input 'self' partially", F.log_softmax, wide[:, :6], 1,
                 out=wide[:, 1:])
    twice = np.lib.stride_tricks.as_strided(np.zeros(6, F32), (4, 6), (0, 4))
    _param_error(r"out \(shape \(4, 6\), strides \(0, 4\)\) reaches some element twice",
                 F.softmax, x, 1, out=twice)
    # in place needs the same dtype (oneDNN's rule): int8 data into float32 memory is no view
    y = ref_forward(x, 1).astype(F32)
    _param_error(r"out overlaps input 'output' partially", F.softmax_backward, x, y, 1, out=y)
    with pytest.raises(TypeError, match="out must be a numpy.ndarray"):
        F.softmax(x, 1, out=[0.0] * 24)
    # a failed check writes nothing
    keep = x.copy()
    with pytest.raises(aclnn_py.AclnnParamError):
        F.softmax(x, 1, out=x, post_ops=[F.Eltwise("nope")])
    assert np.array_equal(x, keep)


# --------------------------------------------------------------------- item 7: dropout ----

M32 = 0xFFFFFFFF


def philox_block(ctr, key):
    """Philox4x32-10 (Salmon et al., 2011) on one counter block, in Python integers: ten rounds
    of the two multiplications (0xD2511F53 on word 0, 0xCD9E8D57 on word 2), the key bumped by
    the Weyl constants (0x9E3779B9, 0xBB67AE85) between rounds."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
    return c0, c1, c2, c3


def onednn_random(idx: int, seed: int, offset: int) -> int:
    """oneDNN's dropout word for element ``idx`` (its math::philox4x32): with an offset, the
    block of counter (offset, idx with the two low bits cleared) as 32-bit halves, key the
    seed's halves, word idx % 4; with offset 0, the 32-bit form: idx and seed cut to 32 bits,
    then the 64-bit form with idx' = (x+3, x+2), offset' = (x+1, x), seed' = (seed, seed) as
    (high, low) halves, x = idx with its two low bits cleared."""
    if offset == 0:
        x, s = (idx & M32) & ~3, seed & M32
        return onednn_random(((x + 3) << 32) + x + 2, (s << 32) + s, ((x + 1) << 32) + x)
    idx, seed, offset = idx % 2 ** 64, seed % 2 ** 64, offset % 2 ** 64
    x = idx & ~3
    block = philox_block((offset & M32, offset >> 32, x & M32, x >> 32), (seed & M32, seed >> 32))
    return block[idx & 3]


def ref_mask(shape, p, seed, offset):
    """oneDNN's keep mask: r > double(UINT32_MAX) * p, p as float32, per dense (abx) index."""
    n = int(np.prod(shape))
    pf = float(np.float32(p))
    return np.array([onednn_random(i, seed, offset) > 4294967295.0 * pf for i in range(n)],
                    np.uint8).reshape(shape)


def test_philox_known_answers():
    """Random123's published known-answer vectors for Philox4x32-10, for the scalar reference,
    and the first through oneDNN's packing (counter 0 is idx 0..3 with seed 0, offset 0)."""
    from aclnn_py import onednn

    kats = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
            ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
            ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
             (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in kats:
        assert philox_block(ctr, key) == want
    got = onednn.philox4x32(np.arange(4), np.uint64(0), np.uint64(0))
    assert got.tolist() == list(kats[0][2])


def test_philox_vectorised_matches_the_scalar_reference():
    from aclnn_py import onednn

    rng = np.random.default_rng(43)
    idx = np.concatenate([np.arange(64), rng.integers(0, 2 ** 63, 64), [2 ** 32 - 1, 2 ** 32]])
    for seed, offset in [(0, 1), (12345678, 1238976), (-7, 2 ** 40 + 3), (2 ** 62, -1)]:
        got = onednn.philox4x32(idx.astype(np.uint64), np.uint64(seed % 2 ** 64),
                                np.uint64(offset % 2 ** 64))
        assert got.tolist() == [onednn_random(int(i), seed, offset) for i in idx]
    for seed in (0, 843921, -1, 2 ** 40 + 5):
        got = onednn.philox4x32_legacy(idx.astype(np.uint64), seed)
        assert got.tolist() == [onednn_random(int(i), seed, 0) for i in idx]


# benchdnn's harness_softmax_dropout: --attr-dropout=0.5:12345678, 0.75:12345678:undef,
# 0.25:843921:any:1238976, 0.75:111786:any:121716 on shapes_ci, sdt/ddt f32 and bf16
HARNESS = [(0.5, 12345678, 0, True), (0.75, 12345678, 0, False), (0.25, 843921, 1238976, True),
           (0.75, 111786, 121716, True)]


@pytest.mark.parametrize("p,seed,offset,with_mask", HARNESS, ids=[str(h[:3]) for h in HARNESS])
@pytest.mark.parametrize("sdt,ddt", [(F32, F32), (BF16, BF16), (F32, BF16), (BF16, F32)],
                         ids=str)
def test_dropout_mask_bit_for_bit_and_values(p, seed, offset, with_mask, sdt, ddt):
    for k, shape in enumerate([(16, 16), (255, 10), (1, 27, 2, 12)]):
        x = data(shape, sdt, 44 + k)
        mask = np.full(shape, 9, np.uint8) if with_mask else None
        got = F.softmax(x, 1, out_dtype=ddt, dropout=F.Dropout(p, seed, offset),
                        dropout_mask=mask)
        want_mask = ref_mask(shape, p, seed, offset)
        if with_mask:
            assert np.array_equal(mask, want_mask), f"{shape}: mask differs"
        inv_q = float(np.float32(1.0) / (np.float32(1.0) - np.float32(p)))
        want = np.where(want_mask == 1, ref_forward(x, 1) * inv_q, 0.0)
        check(got, want, ddt, f"{shape} p={p}")
        draws = want_mask.size / (4 if offset == 0 else 1)  # offset 0: one word per 4
        assert abs(want_mask.mean() - (1 - p)) < 4 * (p * (1 - p) / draws) ** 0.5


def test_dropout_order_and_edges():
    """Right after the src scale, before the post-ops (a dropped value goes through them as 0);
    p = 0 keeps everything (up to a word of 0), p = 1 drops everything; a dropped NaN is 0
    (oneDNN selects, it does not multiply); log_softmax too; the mask is the dense index's
    whatever dst's strides."""
    shape = (6, 20)
    x = data(shape, F32, 47)
    m = ref_mask(shape, 0.3, 99, 5)
    posts = [F.Eltwise("linear", 0.5, 2.0)]
    got = F.softmax(x, 1, src_scale=3.0, dst_scale=0.5, post_ops=posts,
                    dropout=F.Dropout(0.3, 99, 5))
    inv_q = float(np.float32(1) / (np.float32(1) - np.float32(0.3)))
    want = (0.5 * np.where(m == 1, ref_forward(x, 1, src_scale=3.0) * inv_q, 0.0) + 2.0) * 2.0
    check(got, want, F32, "order")
    mask = np.empty(shape, np.uint8)
    check(F.softmax(x, 1, dropout=F.Dropout(0.0, 1), dropout_mask=mask), ref_forward(x, 1), F32)
    assert mask.all()
    assert (F.softmax(x, 1, dropout=F.Dropout(1.0, 1), dropout_mask=mask) == 0).all()
    assert not mask.any()
    nan = np.full((1, 8), np.nan, F32)
    m8 = ref_mask((1, 8), 0.5, 3, 1)
    assert 0 < m8.sum() < 8
    got = F.softmax(nan, 1, dropout=F.Dropout(0.5, 3, 1))
    assert np.array_equal(np.isnan(got), m8 == 1) and (got[m8 == 0] == 0).all()
    got = F.log_softmax(x, 1, dropout=F.Dropout(0.5, 7, 11))
    m = ref_mask(shape, 0.5, 7, 11)
    check(got, np.where(m == 1, 2.0 * ref_forward(x, 1, True), 0.0), F32, "log_softmax")
    out = np.empty((20, 6), F32).T
    F.softmax(x, 1, dropout=F.Dropout(0.5, 7, 11), out=out, dropout_mask=mask)
    assert np.array_equal(mask, m)
    check(out, np.where(m == 1, 2.0 * ref_forward(x, 1), 0.0), F32, "strided out")


def test_bad_dropout_names_the_argument():
    x = data((3, 4), F32, 48)
    for p in (1.5, -0.1, float("nan")):
        _param_error(r"dropout.p must be a probability in \[0, 1\]", F.softmax, x, 1,
                     dropout=F.Dropout(p, 1))
    _param_error(r"dropout must be functional.Dropout\(p, seed, offset\), not tuple",
                 F.softmax, x, 1, dropout=(0.5, 1))
    _param_error(r"dropout.seed = 9223372036854775808 does not fit int64", F.softmax, x, 1,
                 dropout=F.Dropout(0.5, 2 ** 63))
    _param_error(r"dropout_mask has dtype bool; it must be uint8", F.softmax, x, 1,
                 dropout=F.Dropout(0.5, 1), dropout_mask=np.empty((3, 4), bool))
    _param_error(r"dropout_mask has shape \(4, 3\)", F.softmax, x, 1,
                 dropout=F.Dropout(0.5, 1), dropout_mask=np.empty((4, 3), np.uint8))
    _param_error(r"dropout_mask is given without dropout", F.softmax, x, 1,
                 dropout_mask=np.empty((3, 4), np.uint8))
    _param_error(r"8 post-ops and dropout given", F.softmax, x, 1,
                 post_ops=[F.Eltwise("abs")] * 8, dropout=F.Dropout(0.5, 1))
    with pytest.raises(TypeError, match="dropout.seed must be an int"):
        F.softmax(x, 1, dropout=F.Dropout(0.5, 1.0))


# ------------------------------------------------------------------------- item 5: f8 ----

E5M2, E4M3 = np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e4m3fn)


def ref_to_f8(v32: np.ndarray, dt: np.dtype) -> np.ndarray:
    """oneDNN's float -> f8 (its float8_e5m2_t / float8_e4m3_t): to binary16 first, rounded to
    nearest even (overflow -> inf), then to f8 rounded to nearest even from the binary16 value;
    e5m2 keeps inf; e4m3 (e4m3fn, no inf) gives NaN above 464 in magnitude (448 the largest
    value, (448, 464] rounding to it). The single roundings are ml_dtypes' casts."""
    with np.errstate(over="ignore", invalid="ignore"):
        h = np.asarray(v32, np.float32).astype(np.float16)
        if dt == E5M2:
            return h.astype(E5M2)
        big = ~(np.abs(h.astype(np.float32)) <= 464.0)
        return np.where(big, np.float32(np.nan), h.astype(E4M3).astype(np.float32)).astype(E4M3)


def _exact_values(v: np.ndarray, dt, sdt=F32):
    """dst = conversion of exactly the float32 values v: a softmax of two equal inputs is 0.5,
    times src_scale 2 is 1, times src1 = v is v."""
    v = np.asarray(v, np.float32).reshape(-1, 2)
    x = np.zeros(v.shape, sdt)
    return F.softmax(x, 1, out_dtype=dt, src_scale=2.0, post_ops=[F.Binary("mul", v)])


def _same_f8(got, want):
    g, w = got.view(np.uint8), want.view(np.uint8)
    gn, wn = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    assert np.array_equal(gn, wn)
    bad = (g != w) & ~gn
    assert not bad.any(), (got[bad][:5], want[bad][:5])


@pytest.mark.parametrize("dt", [E5M2, E4M3], ids=str)
@pytest.mark.parametrize("sdt", [F32, F64], ids=str)
def test_f8_destination_conversion_bit_for_bit(dt, sdt):
    """Every binary16 value, random float32 values over the f8 ranges, and the points just
    off the f8 and binary16 ties (where rounding twice differs from once)."""
    allh = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    rng = np.random.default_rng(51)
    rand = (rng.standard_normal(20000) * np.exp2(rng.integers(-20, 18, 20000))).astype(
        np.float32)
    f8vals = np.arange(256, dtype=np.uint8).view(dt).astype(np.float32)
    f8vals = np.sort(f8vals[np.isfinite(f8vals)])
    mids = ((f8vals[1:].astype(np.float64) + f8vals[:-1]) / 2).astype(np.float32)
    near = np.concatenate([mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                           mids * np.float32(1 + 2 ** -20), mids * np.float32(1 - 2 ** -20)])
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 464.0, 464.1, 465.0, 61439.0,
                        61440.0, 1e30], np.float32)
    v = np.concatenate([allh, rand, near, special])
    if v.size % 2:
        v = np.append(v, np.float32(1.0))
    got = _exact_values(v, dt, sdt).reshape(-1)
    assert got.dtype == dt
    _same_f8(got, ref_to_f8(v, dt))


def test_f8_rounds_through_binary16_as_onednn():
    """1.0625 + 2^-20 is above the e4m3 tie between 1 and 1.125: one rounding gives 1.125,
    oneDNN's two (binary16 first, where it becomes the tie 1.0625, then to even) give 1.0."""
    v = np.float32(1.0625 + 2 ** -20)
    assert float(np.float32(v).astype(E4M3)) == 1.125  # a single rounding
    assert float(_exact_values([v, v], E4M3)[0, 0]) == 1.0
    # e4m3 has no infinity: above 464 is NaN, (448, 464] is 448; e5m2 overflows to inf
    got = _exact_values([464.0, 465.0, -500.0, np.inf], E4M3).astype(np.float32).reshape(-1)
    assert got[0] == 448.0 and np.isnan(got[1:]).all()
    # 61439: binary16 rounds it to 61440, the tie between 57344 and 2^16, and even is inf (a
    # single rounding would give 57344)
    got = _exact_values([61439.0, 61440.0, -1e6, 57343.0], E5M2).astype(np.float32).reshape(-1)
    assert got.tolist() == [np.inf, np.inf, -np.inf, 57344.0]


def _assert_f8_close(got, ref, dt, what):
    """f8 outputs of a float64 reference: the f8 conversion of a float32 within a few ulp of
    it, i.e. at most one f8 step from ref_to_f8(ref) (the float32 compute may cross a tie)."""
    want = ref_to_f8(np.asarray(ref, np.float32), dt).astype(np.float64)
    g = got.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(want)), what
    ok = ~np.isnan(want)
    step = np.abs(want[ok]) * (2.0 ** -2 if dt == E5M2 else 2.0 ** -3) + 2.0 ** -16
    assert (np.abs(g[ok] - want[ok]) <= step).all(), what
    assert np.mean(g[ok] == want[ok]) > 0.99, what


@pytest.mark.parametrize("ddt", [E5M2, E4M3], ids=str)
@pytest.mark.parametrize("sdt", [F32, BF16, np.dtype(np.float16)], ids=str)
def test_benchdnn_f8_destinations(sdt, ddt):
    """test_softmax_ci's --ddt=f8_e5m2,f8_e4m3: softmax and logsoftmax, axes 0 and 1, with
    and without benchdnn's attributes."""
    for k, shape in enumerate([(16, 16), (255, 10), (2, 19, 17, 13)]):
        x = data(shape, sdt, 52 + k)
        for dim in (0, 1):
            for log in (False, True):
                fn = F.log_softmax if log else F.softmax
                got = fn(x, dim, out_dtype=ddt)
                assert got.dtype == ddt
                _assert_f8_close(got, ref_forward(x, dim, log), ddt, f"{shape} {dim} {log}")
        posts = [F.Eltwise("linear", 0.5, 2.0)]
        got = F.softmax(x, 1, out_dtype=ddt, src_scale=64, dst_scale=0.5, post_ops=posts)
        _assert_f8_close(got, ref_forward(x, 1, False, 64.0, 0.5, posts), ddt, "attributes")


@pytest.mark.parametrize("sdt", [E5M2, E4M3], ids=str)
@pytest.mark.parametrize("ddt", [F32, F64, BF16, E5M2, E4M3, np.dtype(np.int8)], ids=str)
def test_f8_sources(sdt, ddt):
    """f8 inputs enter as their exact values (NaN included), into every destination."""
    x = data((12, 30), F32, 55).astype(sdt)
    for dim in (0, 1):
        for log in (False, True):
            fn = F.log_softmax if log else F.softmax
            kw = {"src_scale": 64.0} if ddt.kind == "i" else {}
            got = fn(x, dim, out_dtype=ddt, **kw)
            ref = ref_forward(x.astype(np.float64), dim, log, kw.get("src_scale", 1.0))
            if ddt in (E5M2, E4M3):
                _assert_f8_close(got, ref, ddt, f"{sdt}->{ddt}")
            else:
                check(got, ref, ddt, f"{sdt}->{ddt} dim {dim} log {log}")
    assert F.softmax(x, 1).dtype == sdt  # the default out dtype is the source's
    nan = np.array([[np.nan, 1.0]], np.float32).astype(sdt)
    assert np.isnan(F.softmax(nan, 1, out_dtype=np.float32)).all()


def test_f8_backward_is_refused():
    g = data((3, 4), F32).astype(E4M3)
    with pytest.raises(aclnn_py.AclnnParamError):
        F.softmax_backward(g, g, 1)


@pytest.mark.parametrize("sdt", [E5M2, E4M3], ids=str)
def test_every_f8_source_value_enters_exactly(sdt):
    """All 256 codes: the float64 softmax of a row (v, 0) is (s, 1 - s) with
    log(s) - log(1 - s) = v, so v comes back from float64 outputs to ~1e-12 (NaN rows: NaN)."""
    codes = np.arange(256, dtype=np.uint8).view(sdt)
    v = codes.astype(np.float64)  # ml_dtypes' decoding of each code
    fin = np.isfinite(v) & (np.abs(v) < 600)
    x = np.zeros((256, 2), sdt)
    x[:, 0] = codes
    y = F.softmax(x, 1, out_dtype=np.float64)
    with np.errstate(divide="ignore"):
        back = np.log(y[:, 0]) - np.log(y[:, 1])
    assert np.allclose(back[fin], v[fin], rtol=1e-12, atol=1e-12)
    assert np.isnan(y[np.isnan(v)]).all()
