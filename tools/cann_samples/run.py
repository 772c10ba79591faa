"""Run CANN's own host programs for custom operators, unmodified, against aclnn-py.

The programs are the AclNNInvocation / AclNNInvocationNaive samples of CANN's operator samples
(Ascend/samples: operator/ascendc/... and operator_contrib/...) and the examples of cann-ops
(src/<category>/<op>/examples/AclNNInvocationNaive), listed in samples.json beside this file
with each operator's definition (the sample's own msOpGen JSON or op_host C++ source) and our
NumPy kernel (kernels/<op>.py). For each sample it

1. copies the sample's directory, unmodified, to a scratch directory;
2. lays out a CANN toolkit install with ``aclnn-py toolkit --prefix SCRATCH/Ascend/ascend-
   toolkit/latest`` (once);
3. after sourcing that prefix's ``bin/setenv.bash``, installs the operator's package into it with
   ``aclnn-py opgen DEFINITION --kernels KERNELS --install``;
4. runs the sample's own ``bash run.sh`` in its directory with a clean environment: PATH (this
   Python's bin directory first, so ``python3`` has NumPy, and torch where a sample's scripts
   import it), HOME (a scratch directory: the scripts clear ``$HOME/ascend/log``), the cache
   directory, and only the variable the sample documents (ASCEND_INSTALL_PATH or
   ASCEND_HOME_DIR) set to the prefix;
5. passes when run.sh exits 0 and its output says "test pass" (the samples' own verification:
   verify_result.py, or the Naive programs' own comparison) and never "test failed" or
   "[ERROR] result error" (several run.sh exit 0 either way);
6. where samples.json gives ``cann_params``, compares the parameter names of the installed
   header's aclnn<Op>GetWorkspaceSize with CANN's.

Two samples.json fields adapt a checkout, never a sample's file: ``mkdirs`` creates empty
directories the sample's README lists (git keeps none), and ``package`` puts the operator package
where a FrameworkLaunchLite sample's CMake reads it (its project's build_out, not installed).

Then one package holding every operator (``opgen`` of all the definitions at once, the kernels
modules joined into one) is installed; every operator's ``aclnn<Op>GetWorkspaceSize`` and
``aclnn<Op>`` must be exported by its libcust_opapi.so (``nm -D``), and every sample is run
again against it. A table of the results is printed; the exit status is 0 when all pass.

This is not run in CI: it needs the public checkouts (``--samples``: a checkout of Ascend/
samples with its operator/ and operator_contrib/ directories; ``--cann-ops``: a checkout of
cann-ops), cmake, make and g++, and torch for the samples whose data scripts import it.
See docs/custom_ops.md, "CANN's own samples".

    python tools/cann_samples/run.py --samples ~/src/samples --cann-ops ~/src/cann-ops

``--def OP=FILE`` uses FILE as OP's definition instead of the sample's own (to try a sample
whose definition opgen does not read yet; the table marks it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATALOG = HERE / "samples.json"
PASS_MARKER = "test pass"
FAIL_MARKERS = ("test failed", "[ERROR] result error")
TAIL = 12


def load_catalog(path: Path = CATALOG) -> list[dict]:
    doc = json.loads(path.read_text())
    return list(doc["samples"])


def aclnn_py() -> list[str]:
    """The aclnn-py CLI of the Python running this script."""
    return [sys.executable, "-m", "aclnn_py"]


def clean_env(home: Path, extra: dict | None = None) -> dict:
    """A minimal environment: what a user's shell has, without any ASCEND_* or library path
    of the caller, plus ``extra``."""
    bindir = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", os.defpath)
    env = {
        "PATH": bindir + os.pathsep + path,
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME",
                                         str(Path.home() / ".cache")),
    }
    for keep in ("TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "TERM"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    env.update(extra or {})
    return env


def run(cmd: list[str], cwd: Path, env: dict, timeout: float, log: Path) -> tuple[int, str]:
    """Run cmd in its own process group; on timeout kill that group. Returns (rc, output);
    rc is -1 on a timeout. The output is also written to ``log``."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = -1
        out += f"\n[run.py] timed out after {timeout:.0f} s\n".encode()
    text = out.decode("utf-8", "replace")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"$ {' '.join(cmd)}   (in {cwd}, {time.monotonic() - start:.1f} s, rc {rc})\n"
                   + text)
    return rc, text


def tail(text: str, n: int = TAIL) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def verdict(rc: int, text: str) -> bool:
    lines = text.splitlines()
    return (rc == 0 and any(PASS_MARKER in ln for ln in lines)
            and not any(m in ln for ln in lines for m in FAIL_MARKERS))


class Harness:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.roots = {"samples": args.samples, "cann-ops": args.cann_ops}
        self.scratch = Path(args.scratch or tempfile.mkdtemp(prefix="cann-samples-")).resolve()
        self.prefix = self.scratch / "Ascend" / "ascend-toolkit" / "latest"
        self.home = self.scratch / "home"
        self.logs = self.scratch / "logs"
        self.work = self.scratch / "work"
        for d in (self.home, self.logs, self.work):
            d.mkdir(parents=True, exist_ok=True)
        self.overrides: dict[str, Path] = {}
        for item in args.defs or []:
            op, _, file = item.partition("=")
            if not op or not file:
                raise SystemExit(f"--def {item!r}: expected OP=FILE")
            self.overrides[op] = Path(file).resolve()

    # -- the toolkit -------------------------------------------------------------------------
    def make_prefix(self) -> tuple[bool, str]:
        rc, text = run([*aclnn_py(), "toolkit", "--prefix", str(self.prefix)], self.scratch,
                       clean_env(self.home), self.args.timeout, self.logs / "toolkit.log")
        ok = rc == 0 and (self.prefix / "bin" / "setenv.bash").is_file()
        return ok, text

    # -- packages ----------------------------------------------------------------------------
    def definition(self, s: dict) -> Path:
        if s["op"] in self.overrides:
            return self.overrides[s["op"]]
        return Path(self.roots[s["repo"]]) / s["definition"]

    def install(self, defs: list[Path], kernels: Path, log: Path,
                out: Path | None = None) -> tuple[bool, str]:
        """``opgen DEFS --kernels KERNELS --install`` after sourcing the prefix's setenv.bash
        (``-o OUT`` instead when given)."""
        q = " ".join(shlex.quote(str(d)) for d in defs)
        cli = " ".join(shlex.quote(c) for c in aclnn_py())
        where = f"-o {shlex.quote(str(out))}" if out is not None else "--install"
        script = (f"source {shlex.quote(str(self.prefix / 'bin' / 'setenv.bash'))} && "
                  f"{cli} opgen {q} --kernels {shlex.quote(str(kernels))} {where}")
        rc, text = run(["bash", "-c", script], self.scratch, clean_env(self.home),
                       self.args.timeout, log)
        return rc == 0, text

    def combined_kernels(self, samples: list[dict]) -> Path:
        """One kernels module holding every sample's kernels (a package copies one module)."""
        parts = ["from __future__ import annotations\n"]
        seen = set()
        for s in samples:
            if s["kernels"] in seen:
                continue
            seen.add(s["kernels"])
            src = (HERE / s["kernels"]).read_text()
            src = re.sub(r"^from __future__ import [^\n]*\n", "", src, flags=re.M)
            parts.append(f"\n# ---- {s['kernels']}\n{src}")
        out = self.scratch / "all_kernels.py"
        out.write_text("".join(parts))
        return out

    def symbols(self) -> set[str]:
        lib = self.prefix / "opp" / "vendors" / "customize" / "op_api" / "lib" / \
            "libcust_opapi.so"
        if not lib.is_file():
            return set()
        proc = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                              text=True)
        return {ln.split()[-1] for ln in proc.stdout.splitlines() if ln.strip()}

    def params(self, op: str, snake: str) -> list[str] | None:
        """The parameter names of aclnn<op>GetWorkspaceSize in the installed package's header
        aclnn_<snake>.h, before workspaceSize and executor (None: no such header/function)."""
        inc = self.prefix / "opp" / "vendors" / "customize" / "op_api" / "include"
        return header_params(inc / f"aclnn_{snake}.h", op)

    # -- samples -----------------------------------------------------------------------------
    def sample_dir(self, s: dict) -> Path:
        """Where the copy of a sample lives: work/<name>/<its own directory name>, so that a
        path relative to the sample (``package``) stays inside work/<name>."""
        return self.work / safe(s["name"]) / Path(s["path"]).name

    def copy(self, s: dict) -> Path:
        src = Path(self.roots[s["repo"]]) / s["path"]
        dst = self.sample_dir(s)
        if dst.parent.exists():
            shutil.rmtree(dst.parent)
        dst.parent.mkdir(parents=True)
        shutil.copytree(src, dst, symlinks=True)
        for sub in s.get("mkdirs", []):
            (dst / sub).mkdir(parents=True, exist_ok=True)
        return dst

    def build_out(self, s: dict, defs: list[Path], kernels: Path,
                  log: Path) -> tuple[bool, str]:
        """For a sample that reads its package from its project's build output (``package``,
        e.g. FrameworkLaunchLite's ../CustomOp/build_out): opgen -o a scratch directory, then
        its vendors/customize/ tree (op_api/ and the package's op_impl/) goes there."""
        tmp = self.scratch / "build_out" / safe(s["name"])
        if tmp.exists():
            shutil.rmtree(tmp)
        good, text = self.install(defs, kernels, log, out=tmp)
        if good:
            dst = (self.sample_dir(s) / s["package"]).resolve()
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(tmp / "vendors" / "customize", dst, symlinks=True)
        return good, text

    def run_sample(self, s: dict, tag: str, defs: list[Path] | None = None,
                   kernels: Path | None = None) -> tuple[bool, str]:
        d = self.copy(s)
        if s.get("package"):
            good, text = self.build_out(s, defs or [self.definition(s)],
                                        kernels or HERE / s["kernels"],
                                        self.logs / tag / (safe(s["name"]) + ".opgen.log"))
            if not good:
                return False, text
        env = clean_env(self.home, {s["variable"]: str(self.prefix)})
        rc, text = run(["bash", "run.sh"], d, env, self.args.timeout,
                       self.logs / tag / (safe(s["name"]) + ".log"))
        return verdict(rc, text), text

    def available(self, s: dict) -> str | None:
        root = self.roots.get(s["repo"])
        if not root:
            return f"no --{s['repo']} checkout given"
        if not (Path(root) / s["path"] / "run.sh").is_file():
            return f"{s['path']}/run.sh not in {root}"
        if s["op"] not in self.overrides and not (Path(root) / s["definition"]).is_file():
            return f"{s['definition']} not in {root}"
        return None


def header_params(header: Path, op: str) -> list[str] | None:
    if not header.is_file():
        return None
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", header.read_text(), flags=re.S)
    m = re.search(rf"\baclnn{re.escape(op)}GetWorkspaceSize\s*\(([^)]*)\)", text)
    if not m:
        return None
    names = [re.findall(r"[A-Za-z_]\w*", p)[-1] for p in m.group(1).split(",") if p.strip()]
    return [n for n in names if n not in ("workspaceSize", "executor")]


def snake_case(op: str) -> str:
    """CANN's file name of an operator: AddCustom -> add_custom."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def table(rows: list[list[str]], head: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=Path, help="a checkout of Ascend/samples")
    ap.add_argument("--cann-ops", type=Path, help="a checkout of cann-ops")
    ap.add_argument("--scratch", type=Path, help="work directory (default: a new temp dir)")
    ap.add_argument("--only", nargs="*", default=[],
                    help="run only samples whose name or operator contains one of these")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per command")
    ap.add_argument("--no-all", action="store_true",
                    help="skip the package of all operators and the second round")
    ap.add_argument("--def", dest="defs", action="append", metavar="OP=FILE",
                    help="use FILE as OP's definition instead of the sample's own")
    args = ap.parse_args(argv)
    if not args.samples and not args.cann_ops:
        ap.error("give --samples and/or --cann-ops")
    for name in ("samples", "cann_ops"):
        v = getattr(args, name)
        if v is not None:
            setattr(args, name, v.resolve())

    h = Harness(args)
    catalog = [s for s in load_catalog()
               if not args.only or any(o in s["name"] or o in s["op"] for o in args.only)]
    print(f"scratch: {h.scratch}")
    ok, text = h.make_prefix()
    if not ok:
        print("the toolkit prefix could not be made:\n" + tail(text))
        return 1

    rows = []
    results: dict[str, dict] = {}
    runnable = []
    refused: set[str] = set()
    names_ok = True
    for s in catalog:
        why = h.available(s)
        res = {"own": "skip", "all": "", "names": "", "note": why or ""}
        results[s["name"]] = res
        if why:
            continue
        runnable.append(s)
        kern = HERE / s["kernels"]
        good, text = h.install([h.definition(s)], kern,
                               h.logs / "opgen" / (safe(s["name"]) + ".log"))
        if not good:
            res["own"], res["note"] = "FAIL (opgen)", tail(text, 4)
            refused.add(s["name"])
        else:
            if s.get("cann_params"):
                got = h.params(s["op"], snake_case(s["op"]))
                res["names"] = "equal" if got == s["cann_params"] else "DIFFER"
                if got != s["cann_params"]:
                    names_ok = False
                    print(f"[names differ] {s['op']}: generated {got}, CANN's "
                          f"{s['cann_params']} ({s['cann_params_from']})")
            good, text = h.run_sample(s, "own")
            res["own"] = "pass" if good else "FAIL"
            res["note"] = "" if good else tail(text)
        print(f"[{res['own']}] {s['name']}", flush=True)
        if res["note"] and res["own"] != "pass":
            print("    " + res["note"].replace("\n", "\n    "), flush=True)

    all_ok = True
    if not args.no_all and runnable:
        # each operator's definition: its first sample's; one opgen refused is left out (it
        # would stop them all) and reported
        first: dict[str, dict] = {}
        for s in runnable:
            first.setdefault(s["op"], s)
        left_out = sorted(op for op, s in first.items() if s["name"] in refused)
        for op in left_out:
            del first[op]
        if left_out:
            all_ok = False
            print("left out of the package of all operators (opgen refused their definition): "
                  + ", ".join(left_out))
        defs = [h.definition(s) for s in first.values()]
        kern = h.combined_kernels(list(first.values()))
        good, text = h.install(defs, kern, h.logs / "opgen" / "all.log")
        if not good:
            all_ok = False
            print("the package of all operators failed:\n" + tail(text))
        else:
            syms = h.symbols()
            missing = [f"aclnn{op}{sfx}" for op in first for sfx in ("GetWorkspaceSize", "")
                       if f"aclnn{op}{sfx}" not in syms]
            print(f"package of {len(first)} operators: "
                  + ("every operator's symbols exported" if not missing
                     else "missing " + ", ".join(missing)))
            all_ok = all_ok and not missing
            for s in runnable:
                if s["op"] not in first:
                    continue
                good, text = h.run_sample(s, "all", defs, kern)
                res = results[s["name"]]
                res["all"] = "pass" if good else "FAIL"
                if not good and not res["note"]:
                    res["note"] = tail(text)
                print(f"[{res['all']}] {s['name']} (all operators)", flush=True)

    for s in catalog:
        res = results[s["name"]]
        note = res["note"].splitlines()[-1][:70] if res["note"] else ""
        src = "override" if s["op"] in h.overrides else Path(s["definition"]).suffix[1:]
        rows.append([s["name"], s["op"], src, res["own"], res["all"], res["names"], note])
    print()
    print(table(rows, ["sample", "operator", "def", "own pkg", "all pkg", "names", "note"]))
    own = [r for r in rows if r[3] != "skip"]
    passed = sum(r[3] == "pass" for r in own)
    print(f"\n{passed} of {len(own)} samples pass with their own package;"
          f" {len({s['op'] for s in runnable})} operators; logs in {h.logs}")
    everything = passed == len(own) and all_ok and names_ok and all(
        r[4] in ("pass", "") for r in own)
    return 0 if everything and own else 1


if __name__ == "__main__":
    sys.exit(main())
