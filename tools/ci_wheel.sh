#!/usr/bin/env bash
# CI's wheel check (.ci/run): build the wheel, install it into a fresh venv, and, with a PATH
# that holds only that venv's bin directory (python, pip, aclnn-py, pytest; no C or C++
# compiler, checked), run the README's main job and the tests that need no compiler. The tests
# run from this tree's tests/ against the installed wheel (pytest puts tests/, not the tree's
# root, on sys.path; the tree's aclnn_py, which has no compiled core, would fail them all).
# test_kernels_c.py and test_isa.py run too: their parts that compile C programs skip (no
# compiler), the rest checks the wheel's core, test_isa its bits at every ISA level the CPU has.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel="$(bash tools/build_wheel.sh | tail -n 1)"
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
venv="$tmp/venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "$wheel" pytest hypothesis
nocc=(env -u CC -u CXX -u PYTHONPATH "PATH=$venv/bin" "VIRTUAL_ENV=$venv")
for tool in cc gcc c++ g++ clang; do
    if "${nocc[@]}" "$venv/bin/python" -c "import shutil, sys; sys.exit(shutil.which('$tool') is None)"
    then echo "ci_wheel.sh: $tool is on the compiler-free PATH" >&2; exit 1; fi
done
# -I: the current directory (this tree, whose aclnn_py has no compiled core) off sys.path
"${nocc[@]}" python -I -c 'import aclnn_py, sysconfig
where, site = aclnn_py.__file__, sysconfig.get_paths()["platlib"]
assert where.startswith(site), f"aclnn_py imported from {where}, not from {site}"
print(f"aclnn_py {aclnn_py.__version__} from {where}")'
# no directory of the build machine in the wheel's core (it needs none): not the building
# interpreter's prefix or lib directory (a run path), not this tree
build_dirs="$(python3 -c 'import sys, sysconfig
print("\n".join(d for d in {sys.base_prefix, sysconfig.get_config_var("LIBDIR") or ""} if d))')
$PWD"
"${nocc[@]}" python -I -c 'import aclnn_py._emu as m, pathlib, sys
data = pathlib.Path(m.__file__).read_bytes()
named = [d for d in sys.argv[1].splitlines() if d and d.encode() in data]
assert not named, f"{m.__file__} names directories of the build machine: {named}"' "$build_dirs"
"${nocc[@]}" aclnn-py run softmax_backward
"${nocc[@]}" pytest -q -p no:cacheprovider tests/test_functional.py tests/test_ops_numerics.py \
    tests/test_runtime.py tests/test_kernels_c.py tests/test_isa.py
# The oldest supported CPython (3.9, the wheel's abi3 floor; README "Install"): the same wheel in
# a venv of python3.9 (on PATH, else pyenv's newest 3.9.x), the main job and the tests that
# failed only on some Pythons. Skipped, and said so, on a machine without one.
old_py=""
if python3.9 -c '' 2>/dev/null; then old_py="$(command -v python3.9)"
elif command -v pyenv >/dev/null; then
    v="$(pyenv versions --bare 2>/dev/null | grep -E '^3\.9\.[0-9]+$' | sort -V | tail -n 1 || :)"
    if [ -n "$v" ]; then old_py="$(PYENV_VERSION="$v" pyenv which python3.9 || :)"; fi
fi
if [ -z "$old_py" ]; then
    echo "ci_wheel.sh: no python3.9 here: the wheel is not checked on the oldest Python"
else
    "$old_py" -m venv "$tmp/venv39"
    "$tmp/venv39/bin/python" -m pip install --quiet "$wheel" pytest
    old=(env -u CC -u CXX -u PYTHONPATH "PATH=$tmp/venv39/bin" "VIRTUAL_ENV=$tmp/venv39")
    "${old[@]}" python -c 'import sys; print("python", sys.version.split()[0])'
    "${old[@]}" aclnn-py run softmax_backward > /dev/null
    "${old[@]}" pytest -q -p no:cacheprovider tests/test_runtime.py \
        tests/test_diagnostics.py::test_fork_with_diagnostics_on \
        tests/test_reliability.py::test_destroy_event_while_synchronize_event_waits
fi
