"""The ``aclnn-py`` tools (README.md): ``ops``, ``explain``, ``codes``, and
every command's ``--help``, through click's CliRunner on aclnn_py.cli.main.

Expected support matrices come from the operator table (tests/opinfo.py: the dtype lists and
product lists of CANN's operator docs -- BF16 only on Atlas A2/A3; Hardsigmoid absent on Atlas
inference; only Softmax on Atlas 200I/500 A2); the explain cases and their workspace sizes
(CANN's pipeline and Align(n) = (n + 32 + 511) & ~511, CANN nnopbase) from the table as well;
code names from docs/return_codes.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
from click.testing import CliRunner
from opinfo import MATRIX_NAME, OP_DB, ExplainCase, soc_class

from aclnn_py.cli import main

ROOT = Path(__file__).resolve().parent.parent
OPS = tuple(op.api for op in OP_DB)
MATRIX_DTYPES = ("float32", "float16", "bfloat16", "float64", "int32")
OPS_BY_API = {op.api: op for op in OP_DB}


def invoke(*args: str, env: Optional[dict] = None):
    return CliRunner().invoke(main, list(args), env=env)


# ------------------------------------------------------------------------------------ ops ----

def expected_cell(soc: str, op: str, dt: str) -> str:
    """From the operator table: '-' for a dtype outside the op's list on the SoC's class,
    'no kernel' where the class has no kernel, else 'yes'."""
    info = OPS_BY_API[op]
    if dt not in {MATRIX_NAME[d] for d in info.dtypes[soc_class(soc)]}:
        return "-"
    return "yes" if info.has_kernel(soc) else "no kernel"


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


EXPLAIN_CASES = [c for op in OP_DB for c in op.explain]


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
    for api in OPS:
        assert api in result.output, result.output


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

    assert set(MEANING) <= starts  # every CANN code is listed (tests/test_cli_env.py)


@pytest.mark.parametrize("arg,exit_code", [("12345", 2), ("999999", 2), ("abc", 2)],
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
