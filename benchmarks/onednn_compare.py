"""aclnn_py.functional against the real oneDNN on benchdnn's softmax cases (not in CI).

Every case runs through oneDNN's softmax primitive (a small C++ driver, ``onednn_driver.cpp``
beside this file, compiled against the PyPI ``onednn-devel`` headers) and through
``aclnn_py.functional`` on the same input bytes. Both results are checked against a float64 port
of benchdnn's reference (``tests/benchdnn/softmax/ref_softmax.cpp``) with benchdnn's point-to-point
rule (``compare_p2p`` in ``tests/benchdnn/utils/compare.cpp`` with the thresholds of softmax's
``setup_cmp``). See docs/onednn.md, "Checking against the real oneDNN".

    python -m venv ONEDNN_VENV && ONEDNN_VENV/bin/pip install onednn onednn-devel
    python benchmarks/onednn_compare.py --onednn ONEDNN_VENV [--filter TEXT] [--limit N]
    python benchmarks/onednn_compare.py --generate ONEDNN/tests/benchdnn/inputs/softmax

The cases come from ``benchmarks/onednn_cases.json``, generated from benchdnn's input lists by
``--generate`` (every dtype pair, attribute string and axis of the lists, one shape each,
rotating through the list's shapes, scaled down to at most 16384 elements), plus the edge cases
built below.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
CASES = HERE / "onednn_cases.json"
MAX_ELEMS = 16384

NP = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
      "bf16": np.dtype(ml_dtypes.bfloat16), "f16": np.dtype(np.float16),
      "s8": np.dtype(np.int8), "u8": np.dtype(np.uint8), "s32": np.dtype(np.int32),
      "f8_e5m2": np.dtype(ml_dtypes.float8_e5m2), "f8_e4m3": np.dtype(ml_dtypes.float8_e4m3fn)}
INTEGRAL = {"s8", "u8", "s32"}
FLT_MAX = float(np.finfo(np.float32).max)
FLT_MIN = float(np.finfo(np.float32).tiny)
EPS_F32 = float(np.finfo(np.float32).eps)


def eps_dt(dt: str) -> float:
    """benchdnn's epsilon_dt: numeric_limits<T>::epsilon() (0 for integers)."""
    if dt in INTEGRAL:
        return 0.0
    return float(ml_dtypes.finfo(NP[dt]).eps)


def lowest_dt(dt: str) -> float:
    if dt in INTEGRAL:
        return float(np.iinfo(NP[dt]).min)
    return float(ml_dtypes.finfo(NP[dt]).min)


# ---------------------------------------------------------------------------------------------
# benchdnn input lists -> case list

KNOBS = {"dir": ["FWD_D"], "sdt": ["f32"], "ddt": ["f32"], "stag": ["abx"], "dtag": ["any"],
         "alg": ["SOFTMAX"], "axis": [1], "inplace": [False], "attr-acc-mode": ["strict"],
         "attr-scales": [""], "attr-post-ops": [""], "attr-dropout": [""]}
SKIP_BATCHES = ("option_set_fwks_key_gpu", "option_set_fwks_ext_gpu")  # GPU-only sets


def _tokens(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        out += line.split()
    return out


def parse_list(root: Path, name: str, state: dict | None, emit, origin: str) -> None:
    """benchdnn's batch-file semantics, as far as the softmax lists use them: ``--reset``,
    ``--knob=v1,v2``, ``--batch=FILE`` (a nested list or a shape file) and bare shapes."""
    state = dict(KNOBS) if state is None else state
    for tok in _tokens((root / name).read_text()):
        if tok == "--reset":
            state.clear()
            state.update(KNOBS)
        elif tok.startswith("--batch="):
            sub = tok.split("=", 1)[1]
            if sub in SKIP_BATCHES:
                continue
            parse_list(root, sub, state, emit, origin)
        elif tok.startswith("--"):
            key, _, val = tok[2:].partition("=")
            if key in KNOBS:
                vals = val.split(",") if key not in ("attr-scales", "attr-post-ops",
                                                      "attr-dropout") else val.split(",")
                if key == "axis":
                    vals = [int(v) for v in vals]
                if key == "inplace":
                    vals = [v == "true" for v in vals]
                state[key] = vals
        else:
            shape = tok.split("_n", 1)[0]
            if shape and shape[0].isdigit():
                emit(origin, dict(state), [int(d) for d in shape.split("x")])


def shrink(shape: list[int], axis: int) -> list[int]:
    shape = list(shape)
    while math.prod(shape) > MAX_ELEMS:
        others = [i for i in range(len(shape)) if i != axis and shape[i] > 1]
        i = max(others, key=lambda j: shape[j]) if others else axis
        if i == axis and shape[axis] <= MAX_ELEMS:
            break
        shape[i] = (shape[i] + 1) // 2
    return shape


def _parse_po(s: str) -> list:
    out = []
    for part in filter(None, s.split("+")):
        f = part.split(":")
        if f[0] in ("add", "sub", "mul", "div", "max", "min", "ge", "gt", "le", "lt", "eq",
                    "ne"):
            out.append({"kind": "binary", "alg": f[0], "dt": f[1] if len(f) > 1 else "f32",
                        "policy": f[2] if len(f) > 2 else "common"})
        else:
            out.append({"kind": "eltwise", "alg": f[0], "alpha": float(f[1]) if len(f) > 1 else 0.0,
                        "beta": float(f[2]) if len(f) > 2 else 0.0})
    return out


def _parse_scales(s: str) -> dict:
    out = {}
    for part in filter(None, s.split("+")):
        arg, _policy, val = part.split(":")[:3]
        out[arg] = float(val.rstrip("*"))
    return out


def generate(root: Path) -> list:
    lists = ["test_softmax_all", "test_softmax_ci", "harness_softmax_regression",
             "test_softmax_gpu"]
    groups: dict = {}

    def emit(origin, st, shape):
        for combo in itertools.product(*(st[k] for k in KNOBS)):
            d = dict(zip(KNOBS, combo))
            if d["axis"] >= len(shape):
                continue
            # one case per (direction, alg, dtype pair, axis, attributes, dst tag) group; the
            # shape, source tag, inplace flag and accumulation mode rotate through the values
            # the lists pair with it
            key = (d["dir"], d["alg"], d["sdt"], d["ddt"], d["axis"], d["attr-scales"],
                   d["attr-post-ops"], d["attr-dropout"], d["dtag"])
            g = groups.setdefault(key, {"origin": origin, "shapes": [], "inplace": [],
                                        "stag": [], "attr-acc-mode": []})
            for k, v in (("shapes", shape), ("inplace", d["inplace"]), ("stag", d["stag"]),
                         ("attr-acc-mode", d["attr-acc-mode"])):
                if v not in g[k]:
                    g[k].append(v)

    for name in lists:
        parse_list(root, name, None, emit, name)
    cases = []
    for n, (key, g) in enumerate(sorted(groups.items(), key=lambda kv: str(kv[0]))):
        dir_, alg, sdt, ddt, axis, scales, po, dropout, dtag = key
        shape = g["shapes"][n % len(g["shapes"])]
        cases.append({"source": g["origin"], "dir": dir_, "alg": alg, "sdt": sdt, "ddt": ddt,
                      "axis": axis, "stag": g["stag"][n % len(g["stag"])], "dtag": dtag,
                      "acc": g["attr-acc-mode"][n % len(g["attr-acc-mode"])],
                      "inplace": g["inplace"][n % len(g["inplace"])],
                      "shape": shrink(shape, axis), "list_shape": shape,
                      "scales": _parse_scales(scales), "post_ops": _parse_po(po),
                      "dropout": dropout, "fill": "benchdnn"})
    return cases


# ---------------------------------------------------------------------------------------------
# edge cases (the items 1-9 and the IEEE corners)

def edge_cases() -> list:
    base = {"source": "edge", "dir": "FWD_D", "alg": "SOFTMAX", "sdt": "f32", "ddt": "f32",
            "axis": 1, "stag": "abx", "dtag": "any", "acc": "strict", "inplace": False,
            "scales": {}, "post_ops": [], "dropout": "", "item": ""}
    out = []

    def add(**kw):
        c = dict(base)
        c.update(kw)
        c.setdefault("list_shape", c["shape"])
        out.append(c)

    fills = ["pos_inf", "neg_inf_some", "all_neg_inf", "nan_row", "nan_first", "huge",
             "flt_max", "tiny", "denormal", "const", "random"]
    for alg in ("SOFTMAX", "LOGSOFTMAX"):
        for dt in ("f32", "f64", "bf16", "f16"):
            for fill in fills:
                add(alg=alg, sdt=dt, ddt=dt, shape=[4, 9], fill=fill)
        for shape, axis, fill in (([0, 5], 1, "random"), ([3, 0], 1, "random"),
                                  ([6, 1], 1, "random"), ([1], 0, "random"),
                                  ([], 0, "random"), ([5, 1, 3], 1, "random")):
            add(alg=alg, shape=shape, axis=axis, fill=fill)
        # item 1: 16-bit source, wide destination; item 2: narrow log_softmax destination
        for s, d in (("bf16", "f32"), ("f16", "f32"), ("bf16", "f64"), ("f16", "f64")):
            add(alg=alg, sdt=s, ddt=d, shape=[8, 33], fill="random", item="1")
            add(alg=alg, dir="BWD_D", sdt=d, ddt=s, shape=[8, 33], fill="random", item="1")
        for d in ("bf16", "f16"):
            add(alg=alg, sdt="f32", ddt=d, shape=[16, 100], fill="random", item="2")
    # item 3: src1 of every dtype oneDNN takes
    for dt in ("bf16", "f16", "s8", "u8", "s32", "f32"):
        add(shape=[4, 6], fill="random", item="3",
            post_ops=[{"kind": "binary", "alg": "add", "dt": dt, "policy": "per_oc"}])
    # item 4: every eltwise post-op, *_use_dst_for_bwd included
    for alg, a, b in (("relu", 0.1, 0), ("tanh", 0, 0), ("elu", 0.5, 0), ("square", 0, 0),
                      ("abs", 0, 0), ("sqrt", 0, 0), ("linear", 2, -1), ("soft_relu", 1, 0),
                      ("logistic", 0, 0), ("exp", 0, 0), ("gelu_tanh", 0, 0), ("swish", 1, 0),
                      ("log", 0, 0), ("clip", 0.1, 0.4), ("clip_v2", 0.1, 0.4), ("pow", 2, 0.5),
                      ("gelu_erf", 0, 0), ("round", 0, 0), ("mish", 0, 0),
                      ("hardswish", 0.5, 0.5), ("hardsigmoid", 0.5, 0.5),
                      ("relu_use_dst_for_bwd", 0, 0), ("tanh_use_dst_for_bwd", 0, 0),
                      ("elu_use_dst_for_bwd", 1, 0), ("sqrt_use_dst_for_bwd", 0, 0),
                      ("logistic_use_dst_for_bwd", 0, 0), ("exp_use_dst_for_bwd", 0, 0),
                      ("clip_v2_use_dst_for_bwd", 0.1, 0.4)):
        add(shape=[4, 7], fill="random", item="4" if "use_dst" in alg else "",
            post_ops=[{"kind": "eltwise", "alg": alg, "alpha": a, "beta": b}])
    # item 5: f8 both ways
    for s, d in (("f32", "f8_e5m2"), ("f32", "f8_e4m3"), ("f8_e5m2", "f32"), ("f8_e4m3", "f16")):
        add(dir="FWD_I", sdt=s, ddt=d, shape=[4, 10], fill="random", item="5")
    # item 6: destination chosen by the caller
    add(shape=[2, 3, 5, 4], axis=3, stag="acbd", dtag="acbd", fill="random", item="6")
    add(shape=[4, 5, 6], axis=1, stag="abx", dtag="acb", fill="random", item="6")
    add(shape=[8, 16], inplace=True, fill="random", item="6")
    # item 8: the adversarial pass
    add(shape=[4, 8], fill="random", scales={"dst": 1e-46}, item="8")
    add(shape=[4, 8], fill="random", item="8",
        post_ops=[{"kind": "eltwise", "alg": "linear", "alpha": 1e-46, "beta": 0}])
    add(shape=[4, 8], fill="random", scales={"src": 0.0}, item="8",
        post_ops=[{"kind": "eltwise", "alg": "pow", "alpha": 1, "beta": -1}])
    add(shape=[4, 8], fill="random", scales={"src": -0.0}, item="8",
        post_ops=[{"kind": "eltwise", "alg": "pow", "alpha": 1, "beta": -1}])
    add(shape=[4, 8], fill="random", scales={"src": 1e300}, item="8")
    add(shape=[1 << 16, 2], axis=0, sdt="f16", ddt="f16", acc="relaxed", fill="random",
        item="8")
    # item 9: NaN through clip / clip_v2
    for alg in ("clip", "clip_v2"):
        add(shape=[4, 9], fill="nan_row", item="9",
            post_ops=[{"kind": "eltwise", "alg": alg, "alpha": 0.1, "beta": 0.4}])
    # int8 corners
    for s, d in (("s8", "s8"), ("u8", "u8"), ("s8", "f32"), ("f32", "u8")):
        add(dir="FWD_I", sdt=s, ddt=d, shape=[4, 16], fill="int_extremes",
            scales={"src": 64, "dst": 0.5} if d in INTEGRAL else {"src": 0.5})
    # backward corners
    for alg in ("SOFTMAX", "LOGSOFTMAX"):
        for fill in ("nan_row", "huge", "random"):
            add(dir="BWD_D", alg=alg, shape=[4, 9], fill=fill)
    return out


# ---------------------------------------------------------------------------------------------
# data

def _bench_fwd(shape, axis, sdt, ddt) -> np.ndarray:
    """benchdnn's forward fill, in its spirit: per slice 1-2 values of 90, 2-5 of 89, 5-8 of 88
    (sign alternating between outer blocks, except for u8), the rest the lowest value."""
    rng = np.random.default_rng(7)
    x = np.moveaxis(np.empty(shape, np.float64), axis, -1)
    lowest = max(lowest_dt(sdt), lowest_dt(ddt))
    n = shape[axis] if shape else 1
    flat = x.reshape(-1, n) if x.size else x.reshape(0, max(n, 1))
    small = NP[ddt].itemsize == 1
    for r in range(flat.shape[0]):
        sign = -1 if (r // 64) % 2 and sdt != "u8" else 1
        tops = [1, 1, int(rng.integers(0, 5))] if small else [
            int(rng.integers(1, 3)), int(rng.integers(2, 6)), int(rng.integers(5, 9))]
        row = np.full(n, lowest)
        vals = [88 * sign + 2] * tops[0] + [88 * sign + 1] * tops[1] + [88 * sign] * tops[2]
        vals = vals[:n]
        start = int(rng.integers(0, n - len(vals) + 1))
        row[start:start + len(vals)] = vals
        flat[r] = row
    return np.moveaxis(flat.reshape(x.shape), -1, axis) if shape else flat.reshape(())


def _bench_bwd(shape, seed: int, dst: bool, dt: str) -> np.ndarray:
    n = math.prod(shape)
    rng_ = 8 if (seed % 2 == 0 or dt == "f16") else 128
    sign = 1.0 if seed % 2 == 0 else -1.0
    gen = ((11 * np.arange(n)) + 37 + 19 * seed) % rng_
    coeff = sign / rng_ if dst else sign
    return (coeff * gen).astype(np.float64).reshape(shape)


def _edge_fill(fill: str, shape, axis, dt: str, rng) -> np.ndarray:
    x = rng.standard_normal(shape) * 3
    if not x.size or fill == "random":
        return x
    xm = np.moveaxis(x, axis, -1)
    big = float(ml_dtypes.finfo(NP[dt]).max) if dt not in INTEGRAL else 100.0
    if fill == "pos_inf":
        xm[0, 2] = np.inf
        xm[1, [1, 5]] = np.inf
    elif fill == "neg_inf_some":
        xm[:, ::2] = -np.inf
    elif fill == "all_neg_inf":
        xm[0] = -np.inf
        xm[2, 1:] = -np.inf
    elif fill == "nan_row":
        xm[1, 3] = np.nan
        xm[3, :] = np.nan
    elif fill == "nan_first":
        xm[:, 0] = np.nan
    elif fill == "huge":
        xm[...] = np.sign(xm) * big * rng.uniform(0.1, 1, xm.shape)
    elif fill == "flt_max":
        xm[0] = big
        xm[1] = -big
        xm[2, 0] = big
    elif fill == "tiny":
        xm *= 1e-30
    elif fill == "denormal":
        xm[...] = rng.integers(-3, 4, xm.shape) * float(ml_dtypes.finfo(NP[dt]).smallest_subnormal)
    elif fill == "const":
        xm[...] = 7.0
    elif fill == "int_extremes":
        lo, hi = (-128, 127) if dt == "s8" else (0, 255)
        xm[...] = rng.integers(lo, hi + 1, xm.shape)
        xm[0] = lo
        xm[1] = hi
    return x


def make_inputs(case: dict) -> dict:
    """The case's inputs as arrays of their dtypes (the bytes both sides read)."""
    shape, axis, fill = case["shape"], case["axis"], case["fill"]
    rng = np.random.default_rng(zlib.crc32(json.dumps(case, sort_keys=True).encode()))
    out = {}
    if case["dir"].startswith("FWD"):
        sdt = case["sdt"]
        if fill == "benchdnn":
            x = _bench_fwd(shape, axis, sdt, case["ddt"])
        else:
            x = _edge_fill(fill, shape, axis, sdt, rng)
            if sdt in INTEGRAL:
                info = np.iinfo(NP[sdt])
                x = np.clip(np.nan_to_num(x, nan=0), info.min, info.max).round()
        out["src"] = x.astype(NP[sdt]) if sdt not in INTEGRAL else x.astype(NP[sdt])
    else:
        ddt = case["ddt"]
        seed_dst = 1 if case["alg"] == "SOFTMAX" else 0
        if fill == "benchdnn":
            dst = _bench_bwd(shape, seed_dst, True, ddt)
            ddst = _bench_bwd(shape, 1 - seed_dst, False, ddt)
        else:
            dst = _edge_fill(fill, shape, axis, ddt, rng)
            if case["alg"] == "SOFTMAX":
                dst = np.abs(dst) / 10
            else:
                dst = -np.abs(dst)
            ddst = rng.standard_normal(shape)
        out["dst"] = dst.astype(NP[ddt])
        out["diff_dst"] = ddst.astype(NP[ddt])
    for i, po in enumerate(case["post_ops"]):
        if po["kind"] == "binary":
            out[f"src1_{i}"] = rng.integers(0, 17, src1_dims(case["shape"], po["policy"])
                                            ).astype(NP[po["dt"]])
    return out


def src1_dims(shape, policy: str) -> list:
    if policy == "per_tensor":
        return list(shape)
    if policy in ("per_oc", "per_dim_1"):
        return [1 if i != 1 else d for i, d in enumerate(shape)]
    return [1] * len(shape)


# ---------------------------------------------------------------------------------------------
# the reference: benchdnn's ref_softmax.cpp in float64

def _eltwise(alg: str, x: np.ndarray, a: float, b: float) -> np.ndarray:
    alg = alg.replace("_use_dst_for_bwd", "")
    with np.errstate(all="ignore"):
        if alg == "relu":
            return np.where(x > 0, x, a * x)
        if alg == "linear":
            return a * x + b
        if alg == "clip":  # oneDNN's math_utils: NaN gives alpha
            x = np.where(x > a, x, a)
            return np.where(x > b, b, x)
        if alg == "clip_v2":  # s > alpha ? s : alpha, then s < beta ? s : beta
            x = np.where(x > a, x, a)
            return np.where(x < b, x, b)
        if alg == "elu":
            return np.where(x > 0, x, a * np.expm1(x))
        if alg == "soft_relu":
            return np.logaddexp(0, a * x) / a
        if alg == "logistic":
            return 1 / (1 + np.exp(-x))
        if alg == "swish":
            return x / (1 + np.exp(-a * x))
        if alg == "gelu_tanh":
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        if alg == "gelu_erf":
            from math import erf
            return 0.5 * x * (1 + np.vectorize(erf, otypes=[float])(x / math.sqrt(2)))
        if alg == "hardsigmoid":
            return np.clip(a * x + b, 0, 1)
        if alg == "hardswish":
            return x * np.clip(a * x + b, 0, 1)
        if alg == "mish":
            return x * np.tanh(np.logaddexp(0, x))
        if alg == "pow":
            return a * np.power(x, b)
        if alg == "round":
            return np.round(x)
        if alg == "square":
            return x * x
        return {"tanh": np.tanh, "exp": np.exp, "log": np.log, "abs": np.abs,
                "sqrt": np.sqrt}[alg](x)


_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "max": lambda d, s: np.where(d > s, d, s), "min": lambda d, s: np.where(d < s, d, s),
           "ge": lambda d, s: (d >= s) * 1.0, "gt": lambda d, s: (d > s) * 1.0,
           "le": lambda d, s: (d <= s) * 1.0, "lt": lambda d, s: (d < s) * 1.0,
           "eq": lambda d, s: (d == s) * 1.0, "ne": lambda d, s: (d != s) * 1.0}


def reference(case: dict, inputs: dict, mask=None) -> np.ndarray:
    """benchdnn's reference; ``mask``: the dropout mask to apply (1 kept), the one our side
    drew (the mask's own bits are tested against an independent Philox in the test suite)."""
    axis = case["axis"]
    with np.errstate(all="ignore"):
        if case["dir"].startswith("FWD"):
            src = inputs["src"].astype(np.float64)
            if src.ndim == 0:
                src = src.reshape(1)
            s = np.moveaxis(src, axis, -1)
            # benchdnn's running max starts at -FLT_MAX; for float64 data, at -DBL_MAX (values
            # below -FLT_MAX would otherwise never become the max)
            lo = -float(np.finfo(np.float64).max) if case["sdt"] == "f64" else -FLT_MAX
            m = np.full(s.shape[:-1], lo)
            for k in range(s.shape[-1]):  # MAX2(max, s) = max > s ? max : s, in order
                m = np.where(m > s[..., k], m, s[..., k])
            d = s - m[..., None]
            if case["alg"] == "LOGSOFTMAX":
                d = d - np.log(np.exp(d).sum(-1))[..., None]
            else:
                e = np.exp(d)
                den = e.sum(-1)
                den = np.where(den != 0, 1 / den, 1.0)
                d = e * den[..., None]
            d = np.moveaxis(d, -1, axis)
            d = d * case["scales"].get("src", 1.0)
            if mask is not None:  # benchdnn: d = m ? d * inv_q : 0, inv_q = 1.f / (1.f - p)
                p = np.float32(_dropout_args(case["dropout"])[0])
                inv_q = float(np.float32(1) / (np.float32(1) - p)) if p != 1 else 0.0
                d = np.where(mask.reshape(d.shape) != 0, d * inv_q, 0.0)
            for i, po in enumerate(case["post_ops"]):
                if po["kind"] == "eltwise":
                    d = _eltwise(po["alg"], d, np.float32(po["alpha"]), np.float32(po["beta"]))
                else:
                    d = _BINARY[po["alg"]](d, inputs[f"src1_{i}"].astype(np.float64))
            d = d * (1 / np.float32(case["scales"].get("dst", 1.0)).astype(np.float64))
            return d.reshape(inputs["src"].shape)
        dst = inputs["dst"].astype(np.float64)
        dd = inputs["diff_dst"].astype(np.float64)
        if case["alg"] == "LOGSOFTMAX":
            part = dd.sum(axis, keepdims=True)
            return dd - np.exp(dst) * part
        part = (dd * dst).sum(axis, keepdims=True)
        return dst * (dd - part)


# ---------------------------------------------------------------------------------------------
# benchdnn's compare_p2p with softmax's setup_cmp

def _round_dt(dt: str, v: np.ndarray) -> np.ndarray:
    if dt in INTEGRAL:
        info = np.iinfo(NP[dt])
        return np.clip(np.rint(v), info.min, info.max)
    with np.errstate(all="ignore"):
        return v.astype(NP[dt]).astype(np.float32)


def check(case: dict, ref64: np.ndarray, got: np.ndarray) -> tuple[bool, int, float]:
    """(passed, failing points, max rel diff) by compare_p2p's rule. NaN / inf in the expected
    output match the same NaN / same-signed inf (benchdnn's compare_extreme_values)."""
    fwd = case["dir"].startswith("FWD")
    dt = case["ddt"] if fwd else case["sdt"]
    flt = dt in ("f32", "f64")
    relaxed16 = case["acc"] not in ("strict",) and dt in ("f16", "bf16")
    trh_f32 = (5 if case["alg"] == "LOGSOFTMAX" else 1) * (1 if fwd else 4) * \
        (10 if flt else 1) * eps_dt(dt)
    trh = trh_f32 if flt or relaxed16 else 0.0
    with np.errstate(all="ignore"):
        exp_f32 = ref64.astype(np.float32).astype(np.float64).ravel()
        exp = _round_dt(dt, exp_f32.astype(np.float32)).astype(np.float64).ravel()
        g = got.astype(np.float32).astype(np.float64).ravel()
        diff = np.abs(exp - g)
        rel = diff / np.where(np.abs(exp) > FLT_MIN, np.abs(exp), 1)
        ok = exp_f32 == g
        if dt in INTEGRAL:
            ok |= np.isnan(exp_f32)
        ok |= (np.abs(exp) <= 1e-5) & (diff < EPS_F32)
        ok |= np.where(np.abs(exp) > 1e-5, rel, diff) <= trh
        ok |= (np.isnan(exp) & np.isnan(g)) | (np.isinf(exp) & (exp == g))
        pos = case["post_ops"]
        elt = [p for p in pos if p["kind"] == "eltwise"]
        if elt:
            ok |= (diff <= max(eps_dt(dt), 2e-5)) | (rel <= max(eps_dt(dt), 8e-6))
            if any(p["alg"].startswith("exp") for p in elt):
                ok |= rel <= max(eps_dt(dt), 5e-6)
            else:
                ok |= (np.abs(exp) > 1e5) & (rel <= max(eps_dt(dt), 5e-6))
        if "dst" in case["scales"]:
            ok |= rel <= max(eps_dt(dt), 1e-5)
        if any(p["kind"] == "binary" and p["alg"] in ("add", "sub", "mul", "div") for p in pos):
            dtrh, rtrh = {"f16": (5e-3, 0.0), "f32": (4e-6, 1e-5)}.get(dt, (0.0, 0.0))
            ok |= (diff <= dtrh) | (rel <= rtrh)
        if dt in INTEGRAL:
            fl, ce = np.floor(exp_f32), np.ceil(exp_f32)
            half = np.abs(fl + 0.5 - exp_f32) < 9e-6
            ok |= half & (((exp == fl) & (g == ce)) | ((exp == ce) & (g == fl)))
        ok |= diff < EPS_F32  # softmax's driver check
    bad = int((~ok).sum())
    finite = np.isfinite(rel)
    return bad == 0, bad, float(rel[finite].max()) if finite.any() else 0.0


# ---------------------------------------------------------------------------------------------
# the two implementations

def run_onednn(cases: list, inputs: list, venv: Path, work: Path) -> list:
    """Results (array or refusal message) of oneDNN for every case, through one driver run."""
    exe = work / "onednn_driver"
    subprocess.run(["g++", "-O1", "-std=c++17", str(HERE / "onednn_driver.cpp"),
                    f"-I{venv / 'include'}", f"-L{venv / 'lib'}", "-ldnnl",
                    f"-Wl,-rpath,{venv / 'lib'}", "-o", str(exe)], check=True)
    lines = []
    for i, (c, arrs) in enumerate(zip(cases, inputs)):
        if c["dropout"]:
            continue
        toks = [f"id={i}", f"dir={c['dir']}", f"alg={c['alg']}", f"axis={c['axis']}",
                f"sdt={c['sdt']}", f"ddt={c['ddt']}", f"stag={c['stag']}",
                f"dtag={c['dtag']}", f"inplace={int(c['inplace'])}", f"acc={c['acc']}",
                "dims=" + "x".join(str(d) for d in (c["shape"] or [1]))]
        for k, name in (("src", "sscale"), ("dst", "dscale")):
            if k in c["scales"]:
                toks.append(f"{name}={c['scales'][k]!r}")
        names = ["src"] if c["dir"].startswith("FWD") else ["dst", "diff_dst"]
        for j, n in enumerate(names):
            p = work / f"{i}_{n}.bin"
            arrs[n].tofile(p)
            toks.append(f"in{j}={p}")
        for j, po in enumerate(c["post_ops"]):
            if po["kind"] == "eltwise":
                toks.append(f"po=elt:{po['alg']}:{po['alpha']!r}:{po['beta']!r}")
            else:
                p = work / f"{i}_src1_{j}.bin"
                arrs[f"src1_{j}"].tofile(p)
                dims = "x".join(str(d) for d in (src1_dims(c["shape"], po["policy"]) or [1]))
                toks.append(f"po=bin:{po['alg']}:{po['dt']}:{dims}:{p}")
        toks.append(f"out={work / f'{i}_out.bin'}")
        lines.append(" ".join(toks))
    env = dict(os.environ, OCL_ICD_FILENAMES=str(venv / "lib" / "libintelocl.so"),
               LD_LIBRARY_PATH=str(venv / "lib"))
    status: dict = {}
    while lines:  # a case that crashes the library is recorded, and the rest run on
        (work / "manifest.txt").write_text("\n".join(lines) + "\n")
        proc = subprocess.run([str(exe), str(work / "manifest.txt")], env=env,
                              capture_output=True, text=True, timeout=1800)
        for line in proc.stdout.splitlines():
            kind, cid, *msg = line.split(" ", 2)
            status[int(cid)] = (kind, " ".join(msg))
        done = sum(1 for ln in lines if int(ln.split()[0][3:]) in status)
        if proc.returncode == 0 or done >= len(lines):
            break
        crashed = int(lines[done].split()[0][3:])
        status[crashed] = ("refused", f"oneDNN crashed (exit status {proc.returncode})")
        lines = lines[done + 1:]
    results = []
    for i, c in enumerate(cases):
        if c["dropout"]:
            results.append("not driven: the driver does not set oneDNN's dropout attribute")
            continue
        kind, msg = status.get(i, ("refused", "driver: no result"))
        if kind != "ok":
            results.append(msg)
            continue
        dt = c["ddt"] if c["dir"].startswith("FWD") else c["sdt"]
        results.append(np.fromfile(work / f"{i}_out.bin", NP[dt]).reshape(c["shape"]))
    return results


def _layout(a: np.ndarray, tag: str) -> np.ndarray:
    """The same values in the memory order of a plain benchdnn tag (a strided view)."""
    n = a.ndim
    if n < 2 or tag in ("abx", "any") or tag.startswith("aBx"):
        return a
    order = [0] + list(range(2, n)) + [1] if tag == "axb" else [ord(ch) - 97 for ch in tag]
    return np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))


def run_ours(case: dict, arrs: dict):
    from aclnn_py import functional as F

    fwd = case["dir"].startswith("FWD")
    kw: dict = {"accumulation": case["acc"]}
    notes = []
    try:
        if fwd:
            x = _layout(arrs["src"], case["stag"])
            kw["out_dtype"] = NP[case["ddt"]]
            if case["scales"].get("src") is not None:
                kw["src_scale"] = case["scales"]["src"]
            if case["scales"].get("dst") is not None:
                kw["dst_scale"] = case["scales"]["dst"]
            pos = []
            for i, po in enumerate(case["post_ops"]):
                if po["kind"] == "eltwise":
                    pos.append(F.Eltwise(po["alg"], po["alpha"], po["beta"]))
                else:
                    pos.append(F.Binary(po["alg"], arrs[f"src1_{i}"]))
            if pos:
                kw["post_ops"] = pos
            if case["dropout"]:
                p, seed, offset = _dropout_args(case["dropout"])
                kw["dropout"] = F.Dropout(p, seed, offset)
                kw["dropout_mask"] = arrs["dropout_mask"] = np.zeros(x.shape, np.uint8)
            fn = F.log_softmax if case["alg"] == "LOGSOFTMAX" else F.softmax
            args = (x, case["axis"])
        else:
            fn = F.log_softmax_backward if case["alg"] == "LOGSOFTMAX" else F.softmax_backward
            args = (_layout(arrs["diff_dst"], case["stag"]), _layout(arrs["dst"], case["stag"]),
                    case["axis"])
            kw["out_dtype"] = NP[case["sdt"]]
        out_wanted = case["inplace"] or case["dtag"] not in ("any",)
        if out_wanted:
            dst = _out_array(case, args[0])
            try:
                res = fn(*args, out=dst, **kw)
                return np.asarray(res)
            except TypeError as e:
                if "out" not in str(e):
                    raise
                notes.append("no out= (item 6)")
        res = fn(*args, **kw)
        return (np.asarray(res), notes) if notes else np.asarray(res)
    except Exception as e:  # noqa: BLE001 - a refusal is a result here
        msg = str(e).splitlines()[0] if str(e) else ""
        return f"{type(e).__name__}: {msg.rsplit('): ', 1)[-1][:200]}"


def _dropout_args(text: str) -> tuple[float, int, int]:
    """benchdnn's --attr-dropout=P[:SEED[:TAG[:OFFSET[:USE_HOST]]]]: (p, seed, offset)."""
    parts = text.split(":")
    seed = int(parts[1]) if len(parts) > 1 and parts[1] else 0
    offset = int(parts[3]) if len(parts) > 3 and parts[3] else 0
    return float(parts[0]), seed, offset


def _out_array(case: dict, x: np.ndarray) -> np.ndarray:
    fwd = case["dir"].startswith("FWD")
    dt = NP[case["ddt"] if fwd else case["sdt"]]
    if case["inplace"] and x.dtype == dt:
        return x
    tag = case["dtag"] if case["dtag"] != "any" else case["stag"]
    return _layout(np.zeros(x.shape, dt), tag)


# ---------------------------------------------------------------------------------------------

def category(case: dict, ours_refused: bool) -> str:
    """Which of issue 29's items a difference falls under."""
    if case.get("item"):
        return case["item"]
    fwd = case["dir"].startswith("FWD")
    s, d = case["sdt"], case["ddt"]
    if case["dropout"]:
        return "7"
    if "f8" in s or "f8" in d:
        return "5"
    if any(p["kind"] == "binary" and p["dt"] not in ("f32", "f64") for p in case["post_ops"]):
        return "3"
    if any(p["kind"] == "eltwise" and "use_dst" in p["alg"] for p in case["post_ops"]):
        return "4"
    if ours_refused and (case["dtag"] != "any"):
        return "6"
    src16, wide = (s, d) if fwd else (d, s)
    if src16 in ("bf16", "f16") and wide != src16:
        return "1"  # computed in the 16-bit source's precision (bf16 <-> f16 included)
    if not fwd and s in ("bf16", "f16") and d != s:
        return "1"
    if fwd and case["alg"] == "LOGSOFTMAX" and d in ("bf16", "f16") and s in ("f32", "f64"):
        return "2"
    return "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onednn", type=Path, help="a venv with PyPI onednn + onednn-devel")
    ap.add_argument("--generate", type=Path, metavar="INPUTS_DIR",
                    help="regenerate onednn_cases.json from tests/benchdnn/inputs/softmax")
    ap.add_argument("--filter", default="", help="run only cases whose description has TEXT")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write per-case results here")
    ap.add_argument("--quiet", action="store_true", help="print only disagreements")
    a = ap.parse_args(argv)
    if a.generate:
        if not (a.generate / "test_softmax_ci").is_file():
            ap.error(f"--generate {a.generate}: no test_softmax_ci there (expected oneDNN's "
                     "tests/benchdnn/inputs/softmax)")
        cases = generate(a.generate)
        # one case a line
        CASES.write_text("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
        print(f"{len(cases)} cases written to {CASES}")
        return 0
    if not a.onednn:
        ap.error("--onednn VENV is required (a venv with `pip install onednn onednn-devel`)")
    header = a.onednn / "include" / "oneapi" / "dnnl" / "dnnl.hpp"
    if not header.is_file() or not (a.onednn / "lib" / "libdnnl.so").exists():
        ap.error(f"--onednn {a.onednn}: no include/oneapi/dnnl/dnnl.hpp and lib/libdnnl.so there "
                 "(a venv with `pip install onednn onednn-devel` is expected)")
    if shutil.which("g++") is None:
        ap.error("g++ is not on PATH: it is needed to build benchmarks/onednn_driver.cpp")
    cases = json.loads(CASES.read_text()) + edge_cases()
    for c in cases:
        c.setdefault("item", "")
    if a.filter:
        cases = [c for c in cases if a.filter in describe(c)]
    if a.limit:
        cases = cases[:a.limit]
    t0 = time.time()
    inputs = [make_inputs(c) for c in cases]
    with tempfile.TemporaryDirectory(prefix="onednn_compare_") as tmp:
        theirs = run_onednn(cases, inputs, a.onednn, Path(tmp))
    rows = []
    counts = dict.fromkeys(["cases", "both ran", "agree (both pass)", "we right, oneDNN wrong",
                            "oneDNN right, we wrong", "both wrong", "we refuse",
                            "oneDNN refuses", "we lack out= (item 6)"], 0)
    for c, arrs, th in zip(cases, inputs, theirs):
        counts["cases"] += 1
        mine = {k: v.copy() for k, v in arrs.items()}  # in place: ours overwrites its source
        ours = run_ours(c, mine)
        note = ""
        if isinstance(ours, tuple):
            ours, notes = ours
            note = "; ".join(notes)
            counts["we lack out= (item 6)"] += 1
        ref = reference(c, arrs, mine.get("dropout_mask"))
        o_ok = t_ok = None
        o_info = t_info = ""
        if isinstance(ours, np.ndarray):
            o_ok, bad, mr = check(c, ref, ours)
            o_info = f"{bad} off, rdiff {mr:.2g}"
        else:
            counts["we refuse"] += 1
            o_info = ours
        if isinstance(th, np.ndarray):
            t_ok, bad, mr = check(c, ref, th)
            t_info = f"{bad} off, rdiff {mr:.2g}"
        else:
            counts["oneDNN refuses"] += 1
            t_info = th
        verdict = ""
        if o_ok is not None and t_ok is not None:
            counts["both ran"] += 1
            verdict = {(True, True): "agree (both pass)", (True, False): "we right, oneDNN wrong",
                       (False, True): "oneDNN right, we wrong",
                       (False, False): "both wrong"}[(o_ok, t_ok)]
            counts[verdict] += 1
        elif o_ok is None:
            verdict = "we refuse"
        else:
            verdict = "oneDNN refuses"
        cat = category(c, o_ok is None) if verdict in (
            "oneDNN right, we wrong", "we refuse", "both wrong") else ""
        rows.append({"case": describe(c), "verdict": verdict, "item": cat, "ours": o_info,
                     "onednn": t_info, "note": note})
    for r in rows:
        if a.quiet and r["verdict"] == "agree (both pass)":
            continue
        item = f" [item {r['item']}]" if r["item"] else ""
        print(f"{r['verdict']:<24}{item:<11} {r['case']}\n{'':35} ours: {r['ours']} | "
              f"oneDNN: {r['onednn']}" + (f" | {r['note']}" if r["note"] else ""))
    print(f"\nsummary ({time.time() - t0:.0f} s):")
    for k, v in counts.items():
        print(f"  {k:<26}{v}")
    if a.json:
        a.json.write_text(json.dumps({"summary": counts, "rows": rows}, indent=1) + "\n")
    return 0


def describe(c: dict) -> str:
    attrs = []
    if c["scales"]:
        attrs.append("scales=" + "+".join(f"{k}:{v:g}" for k, v in c["scales"].items()))
    if c["post_ops"]:
        attrs.append("po=" + "+".join(
            f"{p['alg']}:{p['dt']}:{p['policy']}" if p["kind"] == "binary"
            else f"{p['alg']}:{p['alpha']:g}:{p['beta']:g}" for p in c["post_ops"]))
    if c["dropout"]:
        attrs.append(f"dropout={c['dropout']}")
    shape = "x".join(str(d) for d in c["shape"]) or "0-d"
    return (f"{c['source']}: {c['dir']} {c['alg']} {c['sdt']}->{c['ddt']} axis={c['axis']} "
            f"{shape} stag={c['stag']} dtag={c['dtag']} inplace={int(c['inplace'])} "
            f"acc={c['acc']} fill={c['fill']} {' '.join(attrs)}").rstrip()


if __name__ == "__main__":
    sys.exit(main())
