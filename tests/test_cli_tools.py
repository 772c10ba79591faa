"""The ``aclnn-py`` tools (README.md): ``ops``, ``explain``, ``codes``, and
every command's ``--help``, through click's CliRunner on aclnn_py.cli.main.

Expected support matrices come from the dtype lists and product lists of
CANN's ops-nn op_api (BF16 only on Atlas A2/A3; Hardsigmoid absent on Atlas
inference; only Softmax on Atlas 200I/500 A2); expected workspace sizes from §2.3's
Align(n) = (n + 32 + 511) & ~511; code names from §3.1-3.2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
from click.testing import CliRunner

from aclnn_py.cli import main

ROOT = Path(__file__).resolve().parent.parent
OPS = ("aclnnSoftmax", "aclnnSoftmaxBackward", "aclnnLogSoftmax", "aclnnLogSoftmaxBackward",
       "aclnnHardsigmoid", "aclnnInplaceHardsigmoid", "aclnnHardsigmoidBackward")
MATRIX_DTYPES = ("float32", "float16", "bfloat16", "float64", "int32")


def align(nbytes: int) -> int:
    return (nbytes + 32 + 511) & ~511


def invoke(*args: str, env: Optional[dict] = None):
    return CliRunner().invoke(main, list(args), env=env)


# ------------------------------------------------------------------------------------ ops ----

# CANN's operator docs: the dtype list of self/gradOutput/output on Atlas A2/A3
DTYPE_LIST = {
    "aclnnSoftmax": {"float32", "float16", "float64", "bfloat16"},
    "aclnnSoftmaxBackward": {"float32", "float16", "bfloat16"},
    "aclnnLogSoftmax": {"float32", "float16", "float64", "bfloat16"},
    "aclnnLogSoftmaxBackward": {"float32", "float16", "bfloat16"},
    "aclnnHardsigmoid": {"float32", "float16", "int32", "bfloat16"},
    "aclnnInplaceHardsigmoid": {"float32", "float16", "int32", "bfloat16"},
    "aclnnHardsigmoidBackward": {"float32", "float16", "bfloat16"},
}
BF16_SOCS = {"Ascend910B4", "Ascend910B1", "Ascend910_9392"}  # Atlas A2 / A3
NO_KERNEL = {
    "Ascend310P3": {"aclnnHardsigmoid", "aclnnInplaceHardsigmoid"},  # Atlas inference
    "Ascend310B1": set(OPS) - {"aclnnSoftmax"},  # Atlas 200I/500 A2
}


def expected_cell(soc: str, op: str, dt: str) -> str:
    if dt not in DTYPE_LIST[op] or (dt == "bfloat16" and soc not in BF16_SOCS):
        return "-"
    return "no kernel" if op in NO_KERNEL.get(soc, set()) else "yes"


def parse_matrix(output: str) -> dict:
    """{operator: {dtype: cell}} from the ``ops`` table (cells right-aligned under their
    dtype headers)."""
    lines = output.splitlines()
    header_i = next(i for i, line in enumerate(lines) if line.startswith("operator"))
    header = lines[header_i]
    ends = [header.index(dt) + len(dt) for dt in MATRIX_DTYPES]
    table = {}
    for line in lines[header_i + 1:]:
        name = line.split(" ", 1)[0]
        if name.startswith("aclnn"):
            starts = [len(name)] + ends[:-1]
            table[name] = {dt: line[a:b].strip()
                           for dt, a, b in zip(MATRIX_DTYPES, starts, ends)}
    return table


@dataclass(frozen=True)
class OpsCase:
    soc: Optional[str]  # --soc; None: the default (ACLNN_EMU_SOC unset)
    op: str

    @property
    def id(self) -> str:
        soc = self.soc or "Ascend910B4"
        cells = " ".join(f"{dt}={expected_cell(soc, self.op, dt)!r}" for dt in MATRIX_DTYPES)
        flag = f" --soc {self.soc}" if self.soc else ""
        return f"aclnn-py ops{flag}: {self.op} {cells}"


OPS_CASES = [OpsCase(soc, op) for soc in (None, "Ascend910B1", "Ascend910_9392", "Ascend910A",
                                         "Ascend310P3", "Ascend310B1") for op in OPS]


@pytest.mark.parametrize("case", OPS_CASES, ids=lambda c: c.id)
def test_ops_matrix_row(case: OpsCase, monkeypatch):
    monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    args = ["ops"] + (["--soc", case.soc] if case.soc else [])
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    table = parse_matrix(result.output)
    soc = case.soc or "Ascend910B4"
    assert soc in result.output.splitlines()[0], "the first line names the SoC"
    assert table[case.op] == {dt: expected_cell(soc, case.op, dt) for dt in MATRIX_DTYPES}


def test_ops_lists_all_seven_operators(monkeypatch):
    monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    result = invoke("ops")
    assert result.exit_code == 0
    assert set(parse_matrix(result.output)) == set(OPS)
    assert parse_matrix(result.output)["aclnnSoftmaxBackward"]["bfloat16"] == "yes"


def test_ops_follows_ACLNN_EMU_SOC(monkeypatch):
    monkeypatch.setenv("ACLNN_EMU_SOC", "Ascend910A")
    result = invoke("ops")
    assert result.exit_code == 0
    assert result.output.startswith("Ascend910A")
    assert all(row["bfloat16"] == "-" for row in parse_matrix(result.output).values())


def test_ops_soc_option_beats_the_environment(monkeypatch):
    monkeypatch.setenv("ACLNN_EMU_SOC", "Ascend910A")
    result = invoke("ops", "--soc", "Ascend910B4")
    assert result.exit_code == 0
    assert parse_matrix(result.output)["aclnnSoftmax"]["bfloat16"] == "yes"


def test_ops_unknown_soc_lists_the_known_ones():
    result = invoke("ops", "--soc", "Nope")
    assert result.exit_code != 0
    assert "Nope" in result.output
    for soc in ("Ascend910B4", "Ascend910A", "Ascend310P3", "Ascend910_9392"):
        assert soc in result.output, result.output


# -------------------------------------------------------------------------------- explain ----


@dataclass(frozen=True)
class ExplainCase:
    args: tuple
    exit_code: int
    steps: Optional[int] = None  # number of plan steps
    workspace: Optional[int] = None  # bytes, from CANN's pipeline and Align (CANN nnopbase)
    contains: tuple = ()  # substrings of the output
    order: tuple = ()  # step names that must appear in this order
    note: str = ""

    @property
    def id(self) -> str:
        s = f"aclnn-py explain {' '.join(self.args)} -> exit {self.exit_code}"
        if self.workspace is not None:
            s += f", workspace {self.workspace}"
        return s + (f" ({self.note})" if self.note else "")


EXPLAIN_CASES = [
    ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32"), 0, 1, 0,
                ("SoftmaxGrad",), note="kernel writes straight into out"),
    ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                 "float64"), 0, 2, align(4 * 2 * 4), ("Cast", "DOUBLE"),
                ("SoftmaxGrad", "Cast"), note="FLOAT kernel output, then Cast"),
    ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32", "--strides",
                 "1,4"), 0, 3, 2 * align(4 * 2 * 4), ("Contiguous",),
                ("Contiguous", "SoftmaxGrad"), note="contiguous copies of both inputs"),
    ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float32", "--dim", "5"), 1,
                contains=("161002", "aclnnSoftmaxBackwardGetWorkspaceSize", "Dim 5")),
    ExplainCase(("softmax_backward", "--shape", "4,2", "--dtype", "float64"), 1,
                contains=("161002", "DOUBLE"), note="CANN: no DOUBLE for the backward ops"),
    ExplainCase(("softmax", "--shape", "4,2", "--dtype", "float32", "--dim", "0"), 0, 1, 0,
                ("SoftmaxV2",)),
    ExplainCase(("softmax", "--shape", "4,2", "--dtype", "float32", "--out-dtype", "float16"),
                0, 2, align(4 * 2 * 4), order=("SoftmaxV2", "Cast"),
                note="kernel in self's dtype, then Cast"),
    ExplainCase(("aclnnSoftmax", "--shape", "2x0", "--dtype", "float32"), 0, 0, 0,
                note="CANN name and an empty tensor: nothing runs"),
    ExplainCase(("log_softmax", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                 "float16"), 0, 2, align(4 * 2 * 2), order=("Cast", "LogSoftmaxV2"),
                note="self is cast to out's dtype first"),
    ExplainCase(("log_softmax", "--shape", "4,2", "--dtype", "float32", "--dim", "-3"), 1,
                contains=("161002", "aclnnLogSoftmaxGetWorkspaceSize")),
    ExplainCase(("log_softmax_backward", "--shape", "3,5", "--dtype", "bfloat16",
                 "--out-dtype", "float32"), 0, 2, align(3 * 5 * 2), ("LogSoftmaxGrad",),
                ("LogSoftmaxGrad", "Cast")),
    ExplainCase(("hardsigmoid", "--shape", "4,2", "--dtype", "float32"), 0, 1, 0,
                ("HardSigmoid",)),
    ExplainCase(("hardsigmoid", "--shape", "4,2", "--dtype", "float32", "--out-dtype",
                 "float16"), 1, contains=("161002", "aclnnHardsigmoidGetWorkspaceSize"),
                note="out dtype must equal self's"),
    ExplainCase(("hardsigmoid", "--shape", "4,2", "--dtype", "float32", "--out-strides",
                 "1,4"), 0, 2, align(4 * 2 * 4), order=("HardSigmoid", "ViewCopy"),
                note="strided out: kernel output, then ViewCopy"),
    ExplainCase(("inplace_hardsigmoid", "--shape", "4,2", "--dtype", "int32"), 0, 1, 0),
    ExplainCase(("hardsigmoid_backward", "--shape", "3,5", "--dtype", "float16",
                 "--out-dtype", "float32"), 0, 2, align(3 * 5 * 2),
                order=("HardSigmoidGrad", "Cast")),
    ExplainCase(("hardsigmoid_backward", "--shape", "3,5", "--dtype", "float32",
                 "--out-dtype", "int32"), 1, contains=("161002",),
                note="CanCast(FLOAT -> INT32) fails"),
]


@pytest.mark.parametrize("case", EXPLAIN_CASES, ids=lambda c: c.id)
def test_explain(case: ExplainCase, monkeypatch):
    monkeypatch.delenv("ACLNN_EMU_SOC", raising=False)
    result = invoke("explain", *case.args)
    assert result.exit_code == case.exit_code, result.output
    out = result.output
    for text in case.contains:
        assert text in out, f"{text!r} not in: {out}"
    if case.exit_code:
        return
    m = re.search(r"(\d+) step\(s\), workspace (\d+) bytes", out)
    assert m, out
    assert int(m.group(1)) == case.steps, out
    assert int(m.group(2)) == case.workspace, out
    step_lines = [line for line in out.splitlines() if re.match(r"\s+\d+\. ", line)]
    assert len(step_lines) == case.steps, out
    positions = []
    for name in case.order:
        idx = [i for i, line in enumerate(step_lines) if re.match(rf"\s+\d+\. {name}\(", line)]
        assert idx, f"no {name} step: {out}"
        positions.append(idx[0])
    assert positions == sorted(positions), f"steps out of order {case.order}: {out}"


@pytest.mark.parametrize("args,exit_code", [
    (("no_such_op", "--shape", "2", "--dtype", "float32"), 2),
    (("softmax", "--shape", "2", "--dtype", "float8"), 2),
    (("softmax", "--shape", "2,a", "--dtype", "float32"), 2),
    (("softmax", "--dtype", "float32"), 2),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else f"exit {v}")
def test_explain_usage_errors(args, exit_code):
    result = invoke("explain", *args)
    assert result.exit_code == exit_code, result.output


def test_explain_unknown_op_lists_the_operators():
    result = invoke("explain", "nope", "--shape", "2", "--dtype", "float32")
    assert result.exit_code == 2
    assert "aclnnSoftmaxBackward" in result.output and "aclnnHardsigmoid" in result.output


# ---------------------------------------------------------------------------------- codes ----


@pytest.mark.parametrize("code,name", [
    (161001, "ACLNN_ERR_PARAM_NULLPTR"), (161002, "ACLNN_ERR_PARAM_INVALID"),
    (561003, "ACLNN_ERR_INNER_FIND_KERNEL_ERROR"), (561103, "ACLNN_ERR_INNER_NULLPTR"),
    (107000, "ACL_ERROR_RT_PARAM_INVALID"), (207001, "ACL_ERROR_RT_MEMORY_ALLOCATION"),
    (100002, "ACL_ERROR_REPEAT_INITIALIZE"), (507015, "ACL_ERROR_RT_AICORE_EXCEPTION"),
], ids=lambda v: str(v))
def test_codes_one(code, name):
    result = invoke("codes", str(code))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{code} {name}"), result.output


def test_codes_lists_every_code():
    result = invoke("codes")
    assert result.exit_code == 0
    starts = {int(m.group(1)) for m in re.finditer(r"^(\d+) [A-Z_]+", result.output, re.M)}
    assert {161001, 161002, 561103, 107000, 207001} <= starts
    from aclnn_py.codes import MEANING

    assert set(MEANING) == starts


@pytest.mark.parametrize("arg,exit_code", [("12345", 1), ("999999", 1), ("abc", 2)],
                         ids=lambda v: str(v))
def test_codes_unknown(arg, exit_code):
    result = invoke("codes", arg)
    assert result.exit_code == exit_code, result.output


def test_every_code_is_documented():
    """docs/return_codes.md is the long form of `aclnn-py codes`."""
    from aclnn_py.codes import MEANING

    text = (ROOT / "docs" / "return_codes.md").read_text(encoding="utf-8")
    missing = [c for c in MEANING if c and not re.search(rf"(?<!\d){c}(?!\d)", text)]
    assert not missing, f"codes missing from docs/return_codes.md: {missing}"


# ----------------------------------------------------------------------------------- help ----

COMMANDS = ("samples", "run", "ops", "explain", "codes", "bench")  # README.md


@pytest.mark.parametrize("args", [("--help",), ("-h",)] + [(c, "--help") for c in COMMANDS],
                         ids=lambda a: "aclnn-py " + " ".join(a))
def test_help(args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_main_help_lists_every_command():
    result = invoke("--help")
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\b", result.output, re.M), f"{command} not listed"
