"""The operator declarations (``OpDef`` in aclnn_py/ops) and what is derived from them.

- every generated region (the docs' parameter and dtype tables, the functional wrappers) is
  what the generator makes from the declarations today: a stale table fails here
  (regenerate with ``python -m aclnn_py.ops.generate --write``);
- the derived SoC op sets and ``aclnn-py ops`` cells agree with what phase 1 does, and the op
  sets with the product facts of CANN's operator docs;
- the functional layer keeps its public names and signatures (the values below are the
  hand-written functions' before they were generated);
- the bench cases and baselines come from the declarations, and each baseline formula computes
  the operator (compared with the functional layer's float64 result);
- each declared kernel is in the C core, and the plan's kernel step runs it;
- the empty-tensor rule sits where the declaration says.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import golden
import numpy as np
import pytest
from click.testing import CliRunner

from aclnn_py import bench, cli, dtypes, functional, soc
from aclnn_py.cli import MATRIX_DTYPES, matrix_cell, plan_call
from aclnn_py.dtypes import aclDataType as D
from aclnn_py.ops import REGISTRY, OpDef, _checks, generate
from aclnn_py.ops.decl import EMPTY_FIRST, EMPTY_LAST, INPUT, OUTPUT, Arg
from aclnn_py.status import take_recent

ROOT = Path(__file__).resolve().parent.parent
OPS = sorted(REGISTRY)

# ----------------------------------------------------------------------- generated text ----

REGIONS = [(path, key) for path, keys in generate.regions(ROOT).items() for key in keys]


@pytest.mark.parametrize("path,key", REGIONS,
                         ids=[f"{p.relative_to(ROOT)}: {k}" for p, k in REGIONS])
def test_generated_region_is_fresh(path: Path, key: str):
    text = path.read_text(encoding="utf-8")
    body = generate.regions(ROOT)[path][key]
    fresh = generate.replace(text, key, body, python=path.suffix == ".py")
    assert fresh == text, (f"{path.relative_to(ROOT)}: region {key!r} is stale; run "
                           f"`python -m aclnn_py.ops.generate --write`")


def test_a_stale_table_is_found():
    """The freshness check sees an edit inside a region (the generator does not just copy the
    file through)."""
    path = ROOT / "docs" / "ops" / "aclnnSoftmax.md"
    text = path.read_text(encoding="utf-8")
    edited = text.replace("| dim | in |", "| dim | out |", 1)
    assert edited != text
    body = generate.regions(ROOT)[path]["params aclnnSoftmax"]
    assert generate.replace(edited, "params aclnnSoftmax", body) == text


def test_missing_markers_are_an_error():
    with pytest.raises(KeyError):
        generate.replace("no markers here\n", "params aclnnSoftmax", "x")


def test_generator_cli_reports_fresh_tree(capsys):
    assert generate.main(["--root", str(ROOT)]) == 0, capsys.readouterr().out


def test_every_op_has_a_doc_page_and_a_sample():
    """CONTRIBUTING.md "Adding an operator": a docs/ops page, a sample, a golden function."""
    for op in REGISTRY.values():
        page = ROOT / "docs" / "ops" / f"{generate._page(op)}.md"
        assert f"BEGIN GENERATED: params {op.name} " in page.read_text(encoding="utf-8")
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", op.name[len("aclnn"):]).lower()
        assert (ROOT / "samples" / f"{snake}.py").is_file(), snake
        if op.functional is not None:
            assert callable(getattr(golden, op.functional.name, None)), op.functional.name


def test_contributing_lists_the_files_of_an_operator():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "## Adding an operator" in text
    for path in ("aclnn_py/ops/", "csrc/kernels/", "tests/golden.py", "tests/opinfo.py",
                 "samples/", "docs/ops/", "python -m aclnn_py.ops.generate --write"):
        assert path in text, path


# --------------------------------------------------------------------- SoC op sets ----

# CANN's operator docs (products each operator supports): Hardsigmoid is absent on Atlas
# inference (Ascend310P) and Atlas 200I/500 A2 (Ascend310B); the backward operators and
# LogSoftmax are absent on Atlas 200I/500 A2, which has only Softmax.
ALL = {"aclnnSoftmax", "aclnnSoftmaxBackward", "aclnnLogSoftmax", "aclnnLogSoftmaxBackward",
       "aclnnHardsigmoid", "aclnnInplaceHardsigmoid", "aclnnHardsigmoidBackward"}
PRODUCT_OPS = {
    "A2": ALL, "A3": ALL, "TRAINING": ALL,
    "INFERENCE": ALL - {"aclnnHardsigmoid", "aclnnInplaceHardsigmoid"},
    "EDGE": {"aclnnSoftmax"},
}


def test_registry_holds_the_seven_operators():
    assert set(REGISTRY) == ALL
    assert soc.all_ops() == ALL


@pytest.mark.parametrize("name", sorted(soc.PROFILES))
def test_soc_op_set(name: str):
    profile = soc.PROFILES[name]
    assert profile.ops == PRODUCT_OPS[profile.line]
    assert profile.ops == {op.name for op in REGISTRY.values() if profile.line in op.products}
    for op in ALL:
        assert profile.supports(op) == (op in PRODUCT_OPS[profile.line])
    assert not profile.supports("aclnnNoSuchOp")


def test_soc_classes():
    """BF16 (the Atlas A2/A3 class) exactly on Ascend910B* and Ascend910_93*."""
    for name, profile in soc.PROFILES.items():
        a2a3 = name.startswith("Ascend910B") or name.startswith("Ascend910_93")
        assert profile.bf16 == a2a3
        assert profile.soc_class == (soc.CLASS_A2A3 if a2a3 else soc.CLASS_BASE)


# ------------------------------------------------------------------------- ops matrix ----


def _phase1_cell(op: OpDef, profile, dtype: int) -> str:
    """The cell as phase 1 decides it: every tensor of ``dtype``, shape (2, 3), dim -1."""
    _, _, ret = plan_call(op, (2, 3), dtype, dim=-1, soc=profile)
    take_recent()
    return "yes" if ret == 0 else ("no kernel" if ret == 561003 else "-")


@pytest.mark.parametrize("name", sorted(soc.PROFILES))
def test_declared_matrix_is_what_phase1_does(name: str):
    """The declared dtype tables and op sets (the `ops` matrix) agree with the declared checks
    run by phase 1, for every SoC, operator and kernel dtype."""
    profile = soc.PROFILES[name]
    for op in REGISTRY.values():
        for dt_name in MATRIX_DTYPES:
            dt = int(D[cli.DTYPE_NAMES[dt_name]])
            assert matrix_cell(op, profile, dt) == _phase1_cell(op, profile, dt), \
                (op.name, dt_name)


def test_matrix_dtypes_are_the_kernel_dtypes():
    assert {int(D[cli.DTYPE_NAMES[d]]) for d in MATRIX_DTYPES} == set(dtypes.KERNEL_DTYPES)


def test_ops_command_prints_the_declared_matrix():
    result = CliRunner().invoke(cli.main, ["ops", "--soc", "Ascend910A"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:] for line in result.output.splitlines()
            if line.startswith("aclnn")}
    profile = soc.PROFILES["Ascend910A"]
    for op in REGISTRY.values():
        want = [matrix_cell(op, profile, int(D[cli.DTYPE_NAMES[d]])) for d in MATRIX_DTYPES]
        assert " ".join(rows[op.name]) == " ".join(want)


# ------------------------------------------------------------------------- functional ----

# the signatures of the hand-written functions this layer had before it was generated
_FWD = ("accumulation: 'str' = 'strict', src_scale: 'float' = 1.0, dst_scale: 'float' = 1.0, "
        "post_ops=()")
_DROP = "dropout=None, dropout_mask=None, out=None"  # issue 29: dropout, the caller's dst
SIGNATURES = {
    "softmax": f"(x, dim: 'int', *, out_dtype=None, {_FWD}, inf_as_zero: 'bool' = False, "
               f"{_DROP}) -> 'np.ndarray'",
    "log_softmax": f"(x, dim: 'int', *, out_dtype=None, {_FWD}, {_DROP}) -> 'np.ndarray'",
    "softmax_backward": "(grad_output, output, dim: 'int', *, out_dtype=None, "
                        "accumulation: 'str' = 'strict', out=None) -> 'np.ndarray'",
    "log_softmax_backward": "(grad_output, output, dim: 'int', *, out_dtype=None, "
                            "accumulation: 'str' = 'strict', out=None) -> 'np.ndarray'",
    "hardsigmoid": "(x, *, alpha: 'float' = 0.16666666666666666, beta: 'float' = 0.5, "
                   "out_dtype=None) -> 'np.ndarray'",
    "hardsigmoid_backward": "(grad_output, x, *, alpha: 'float' = 0.16666666666666666, "
                            "beta: 'float' = 0.5, out_dtype=None) -> 'np.ndarray'",
}
# the post-op types oneDNN's attributes take (aclnn_py.onednn), exported beside the functions
TYPES = ("Eltwise", "Binary", "Dropout")


def test_functional_names_and_signatures():
    assert sorted(functional.__all__) == sorted([*SIGNATURES, *TYPES])
    declared = {op.functional.name: op for op in REGISTRY.values() if op.functional}
    assert set(declared) == set(SIGNATURES)
    for name, sig in SIGNATURES.items():
        fn = getattr(functional, name)
        assert str(inspect.signature(fn)) == sig, name
        assert fn.__doc__ and inspect.cleandoc(fn.__doc__) == \
            inspect.cleandoc(declared[name].functional.doc)


def test_functional_declarations_name_real_arguments():
    for op in REGISTRY.values():
        spec = op.functional
        if spec is None:
            continue
        assert [arg for _, arg in spec.arrays] == list(op.inputs), op.name
        assert set(spec.attrs) <= set(op.attrs), op.name
        assert spec.out_dtype in ("input", "promoted")


def test_functional_bad_int_and_attr_messages():
    """The generated functions check their int and float parameters as the hand-written ones
    did (same exception, same message)."""
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"^aclnnSoftmax: dim must be an int, not float$"):
        functional.softmax(x, 1.0)
    with pytest.raises(TypeError, match=r"^aclnnHardsigmoid: beta must be a number, not str$"):
        functional.hardsigmoid(x, beta="0.5")
    with pytest.raises(TypeError, match=r"'grad_output' must be a numpy.ndarray, not object"):
        functional.hardsigmoid_backward(object(), x)


# ----------------------------------------------------------------------------- bench ----


def test_bench_cases_come_from_the_declarations():
    want = [(op.name, c.shape, c.dim) for op in REGISTRY.values() if op.bench
            for c in op.bench.cases]
    assert bench.DEFAULT_CASES == want
    assert set(bench.BASELINES) == {op.name for op in REGISTRY.values() if op.bench}
    # every operator with a function is benchmarked; the in-place form shares its kernel
    assert set(bench.BASELINES) == {op.name for op in REGISTRY.values() if op.functional}
    for name, shape, dim in bench.DEFAULT_CASES:
        op = REGISTRY[name]
        assert (dim is None) == (not op.int_params), name
        if dim is not None:
            assert -len(shape) <= dim < len(shape)


@pytest.mark.parametrize("name", sorted(bench.BASELINES))
def test_bench_baseline_computes_the_operator(name: str):
    op = REGISTRY[name]
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-4, 4, (3, 5)) for _ in op.inputs]
    if "Softmax" in name and "Backward" in name:  # a valid forward result as `output`
        fwd = functional.log_softmax if "Log" in name else functional.softmax
        arrays[1] = fwd(arrays[1], 1)
    dim = 1 if op.int_params else None
    want = getattr(functional, op.functional.name)(*arrays, *([dim] if dim is not None else []))
    got = op.bench.numpy(arrays, dim)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- kernels ----


@pytest.mark.parametrize("name", OPS)
def test_declared_kernel_is_in_the_core_and_runs(name: str):
    op = REGISTRY[name]
    k = op.kernel
    sources = "".join(p.read_text(encoding="utf-8")
                      for p in (ROOT / "csrc").rglob("*.[ch]"))
    assert re.search(rf"\b{k.entry}\s*\(", sources), f"{k.entry} is not in csrc/"
    assert re.search(rf"#define\s+EMU_K_{k.id.name}\s+{int(k.id)}\b", sources), k.id
    assert k.family in ("softmax", "eltwise")
    assert (k.flag is not None) == (k.family == "softmax")
    ws, executor, ret = plan_call(op, (2, 3), D.ACL_FLOAT, dim=-1,
                                  soc=soc.PROFILES[soc.DEFAULT_SOC])
    assert ret == 0, take_recent()
    kernels = [s for s in executor.plan.steps if s.kind == "Kernel"]
    assert [(s.name, s.kernel) for s in kernels] == [(k.step, int(k.id))]
    keys = {"outer", "axis", "inner", "flag"} if k.family == "softmax" else {"n", "alpha", "beta"}
    assert set(kernels[0].params) == keys
    if k.family == "softmax":
        assert kernels[0].params["flag"] == k.flag


# ----------------------------------------------------------------------- declarations ----


@pytest.mark.parametrize("name", OPS)
def test_empty_rule_position(name: str):
    """An empty tensor of a dtype no operator accepts: success when the empty shortcut comes
    before the checks (EMPTY_FIRST), the dtype error when every check runs first (EMPTY_LAST)."""
    op = REGISTRY[name]
    seq = op.sequence(False)
    empties = [i for i, c in enumerate(seq) if isinstance(c, _checks.Empty)]
    assert empties == [1 if op.empty == EMPTY_FIRST else len(seq) - 1]
    assert isinstance(seq[0], _checks.NotNull)
    _, _, ret = plan_call(op, (0, 3), D.ACL_INT8, dim=-1, soc=soc.PROFILES[soc.DEFAULT_SOC])
    take_recent()
    assert ret == (0 if op.empty == EMPTY_FIRST else 161002)
    assert op.empty in (EMPTY_FIRST, EMPTY_LAST)


def test_params_inputs_outputs_are_derived_from_args():
    for op in REGISTRY.values():
        assert op.params == tuple(a.name for a in op.args)
        assert set(op.int_params) == {a.name for a in op.args if not a.is_tensor}
        assert op.tensors == tuple(a.name for a in op.args if a.is_tensor)
        for a in op.args:
            assert a.doc, (op.name, a.name)
            assert a.c_type in ("const aclTensor*", "aclTensor*", "int64_t")
        assert set(op.dtypes) == set(soc.SOC_CLASSES)
    inplace = REGISTRY["aclnnInplaceHardsigmoid"]
    assert inplace.inputs == inplace.outputs == ("self",)


def test_a_declaration_naming_an_unknown_argument_is_refused():
    args = (Arg("self", INPUT, "input"), Arg("out", OUTPUT, "result"))
    with pytest.raises(ValueError, match="unknown argument 'x'"):
        OpDef(name="aclnnBad", args=args, checks=(_checks.NotNull("self", "x"),),
              dtypes={c: {} for c in soc.SOC_CLASSES})
    with pytest.raises(ValueError, match="unknown product lines"):
        OpDef(name="aclnnBad", args=args, products=frozenset({"MARS"}),
              dtypes={c: {} for c in soc.SOC_CLASSES})
