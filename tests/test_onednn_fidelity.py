"""oneDNN fidelity (issue 29, docs/onednn.md): binary src1 of every dtype benchdnn uses, every
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
