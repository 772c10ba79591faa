"""The docs' code runs as shown: every ```python block of README.md and docs/**/*.md runs, and
every `$ aclnn-py ...` transcript prints what the page says.

- A ```python block runs on its own, in a subprocess whose cwd is a fresh temporary directory
  (outside the source tree), with a timeout, and must exit 0 (and not print "test failed").
  The HTML comment on the line before a block changes that, visibly on the page's source:
  ``<!-- doctest: skip REASON -->`` (a fragment, or code that needs a compiler, a toolkit or
  files of the reader's; SKIPS_AT_MOST caps how many) or ``<!-- doctest: continue -->`` (the
  block runs after the previous ```python block of the page, as its continuation).
- A fenced block with lines ``$ aclnn-py ARGS`` is a transcript: each command runs, with the
  emulator's defaults (no ACLNN_EMU_* or ACL_LAUNCH_BLOCKING from the caller's environment),
  and its stdout and stderr must equal the lines below it up to the next ``$`` line, after
  NORMALISE (only what truly varies from run to run or machine to machine).
- A ```bash line that runs ``aclnn-py bench|explain|run|codes|ops`` (after ``VAR=value``
  prefixes or ``... &&``) must exit 0: the commands the pages suggest work as written. Bench
  lines run with BENCH_SMALL appended (tiny shape, one timed call: their options are checked,
  not their timings), ``run --lang cpp`` lines are left to the toolkit's tests (a compiler).
  Other commands (pip, g++, cmake, toolkit, opgen) need a network, a compiler or the reader's
  files; tests/test_toolkit*.py and tests/test_custom_ops*.py run them on files of their own.
- The bench's header block in docs/performance.md has the lines a real run prints (machine
  values normalised by HEADER_NORMALISE).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
TIMEOUT = 120
SKIPS_AT_MOST = 16

FENCE = re.compile(r"^( *)```(\w*)[ \t]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*doctest:\s*(skip|continue)\b\s*(.*?)\s*-->")

# transcript normalisation, applied to both the page's text and the real output: timings,
# hexadecimal addresses and the test's temporary directory vary from run to run; trailing
# blanks and trailing empty lines are not visible on a page
NORMALISE = [
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s)\b"), "<time>"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "<address>"),
]

# the bench header: what depends on the machine and the installed packages
HEADER_NORMALISE = [
    (re.compile(r"bench on .*? \(\d+ cores available, last-level cache [^)]*\)"),
     "bench on <cpu> (<n> cores available, last-level cache <llc>)"),
    (re.compile(r"kernel ISA level: \w+"), "kernel ISA level: <isa>"),
    (re.compile(r"thread counts: [\d, ]+;"), "thread counts: <threads>;"),
    (re.compile(r"cold = \d+ MiB"), "cold = <n> MiB"),
    (re.compile(r"NumPy \S+;"), "NumPy <version>;"),
    (re.compile(r"PyTorch [^;]+;"), "PyTorch <version>;"),
    (re.compile(r"Python \S+$"), "Python <version>"),
]

BENCH_SMALL = ["--shape", "8,16", "--repeat", "1", "--threads", "1", "--cache", "hot",
               "--no-torch", "--no-numpy"]
CHECKED_COMMANDS = {"bench", "explain", "run", "codes", "ops"}


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    marker: tuple  # ("skip", reason) / ("continue", "") / ()

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO).as_posix()}:{self.line}"


def blocks() -> list:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            indent, lang, body = m.groups()
            line = text.count("\n", 0, m.start()) + 1
            before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            mk = MARKER.search(before)
            body = textwrap.dedent("\n".join(s[len(indent):] if s.startswith(indent) else s
                                             for s in body.split("\n")))
            found.append(Block(page, line, lang, body, (mk.group(1), mk.group(2)) if mk else ()))
    return found


BLOCKS = blocks()
PYTHON = [b for b in BLOCKS if b.lang == "python"]
TRANSCRIPTS = [b for b in BLOCKS if re.search(r"^\$ aclnn-py ", b.body, re.M)]


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ACLNN_EMU_") and k != "ACL_LAUNCH_BLOCKING"}
    env.pop("PYTHONPATH", None)
    return env


def cli() -> list:
    """The installed ``aclnn-py`` script beside this interpreter, else ``python -m aclnn_py``."""
    script = Path(sys.executable).parent / "aclnn-py"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "aclnn_py"]


def run(cmd: list, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env or clean_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)


# ------------------------------------------------------------------------------ python ----


def test_blocks_are_found():
    """The parser sees the pages' blocks (a broken fence regex would make every test vacuous)."""
    assert len(PYTHON) >= 20 and len(TRANSCRIPTS) >= 6
    assert any(b.page.name == "custom_ops.md" and "custom.load(DEFINITION" in b.body
               for b in PYTHON)


def test_skips_stay_few_and_say_why():
    skipped = [b for b in PYTHON if b.marker and b.marker[0] == "skip"]
    assert all(b.marker[1] for b in skipped), [b.id for b in skipped if not b.marker[1]]
    assert len(skipped) <= SKIPS_AT_MOST, [b.id for b in skipped]
    for b in PYTHON:
        if b.marker and b.marker[0] == "continue":
            assert any(p.page == b.page and p.line < b.line for p in PYTHON), b.id


def program(block: Block) -> str:
    """The block's code, after the blocks it continues."""
    chain = [block]
    while chain[0].marker and chain[0].marker[0] == "continue":
        chain.insert(0, max((p for p in PYTHON if p.page == block.page and p.line < chain[0].line),
                            key=lambda p: p.line))
    return "\n".join(b.body for b in chain)


@pytest.mark.parametrize("block", PYTHON, ids=[b.id for b in PYTHON])
def test_python_block_runs(block, tmp_path):
    if block.marker and block.marker[0] == "skip":
        pytest.skip(f"doctest: skip {block.marker[1]}")
    (tmp_path / "block.py").write_text(program(block), encoding="utf-8")
    proc = run([sys.executable, "block.py"], tmp_path)
    assert proc.returncode == 0, f"{block.id} exits {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert "test failed" not in proc.stdout, proc.stdout


# -------------------------------------------------------------------------- transcripts ----


def normalise(text: str) -> str:
    for pattern, repl in NORMALISE:
        text = pattern.sub(repl, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def commands(block: Block) -> list:
    """[(argv after aclnn-py, expected output)] of a transcript block."""
    out: list = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            words = shlex.split(line[2:])
            assert words[0] == "aclnn-py", f"{block.id}: only aclnn-py transcripts: {line}"
            out.append((words[1:], []))
        else:
            assert out, f"{block.id}: output before the first $ line"
            out[-1][1].append(line)
    return [(argv, "\n".join(lines)) for argv, lines in out]


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=[b.id for b in TRANSCRIPTS])
def test_transcript_is_the_real_output(block, tmp_path):
    for argv, expected in commands(block):
        proc = run([*cli(), *argv], tmp_path)
        got = normalise(proc.stdout + proc.stderr)
        assert got == normalise(expected), (
            f"{block.id}: $ aclnn-py {shlex.join(argv)} (exit {proc.returncode}) prints\n{got}")


# ------------------------------------------------------------------- suggested commands ----


def suggested() -> list:
    """(block id, env, argv) of every checked aclnn-py line in the pages' ```bash blocks."""
    found = []
    for b in BLOCKS:
        if b.lang not in ("bash", "sh", "console"):
            continue
        for line in b.body.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            for part in line.split("&&"):
                words = shlex.split(part)
                env = {}
                while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                    k, v = words.pop(0).split("=", 1)
                    env[k] = v
                if len(words) < 2 or words[0] != "aclnn-py" or words[1] not in CHECKED_COMMANDS:
                    continue
                if ">" in words:  # a shell redirection: the command is what comes before it
                    words = words[:words.index(">")]
                if words[1] == "run" and "--lang" in words:
                    continue
                if words[1] == "bench":
                    words = [*words, *BENCH_SMALL]
                found.append((f"{b.id}: {part.strip()}", env, words[1:]))
    return found


SUGGESTED = suggested()


def test_suggested_commands_are_found():
    assert sum(argv[0] == "bench" for _, _, argv in SUGGESTED) >= 5
    assert any(argv[0] == "run" for _, _, argv in SUGGESTED)


@pytest.mark.parametrize("case", SUGGESTED, ids=[c[0] for c in SUGGESTED])
def test_suggested_command_works(case, tmp_path):
    where, env, argv = case
    if "--plot" in argv and importlib.util.find_spec("matplotlib") is None:
        pytest.skip("--plot needs matplotlib (the plot extra), not installed here")
    proc = run([*cli(), *argv], tmp_path, {**clean_env(), **env})
    assert proc.returncode == 0, f"{where} exits {proc.returncode}:\n{proc.stderr[-2000:]}"


# ------------------------------------------------------------------------- bench header ----


def test_bench_header_is_what_the_bench_prints(tmp_path):
    page = next(b for b in BLOCKS if b.page.name == "performance.md"
                and re.match(r"aclnn-py \S+ bench on ", b.body))
    shown = page.body.strip().splitlines()
    assert len(shown) == 3
    proc = run([*cli(), "bench", "--op", "hardsigmoid", "--dtype", "float32", "--shape", "8,16",
                "--repeat", "1", "--threads", "1", "--no-torch"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.splitlines()[:3]

    def norm(line: str) -> str:
        for pattern, repl in HEADER_NORMALISE:
            line = pattern.sub(repl, line)
        return line

    assert [norm(s) for s in printed] == [norm(s) for s in shown]
