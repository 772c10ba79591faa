#!/usr/bin/env bash
# Run the runtime, stream, executor, fuzz, hardening, reliability, concurrency and thread pool
# tests (and, under ASan, the oneDNN-attribute and relaxed-kernel tests, which exercise
# softmax_ex.c and softmax_relaxed.c, and the custom-kernel hang tests, which exercise the host
# task paths of stream.c and fork) against a sanitizer build of the C core.
#
#   bash tools/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer (run by CI)
#   bash tools/sanitize.sh tsan   # ThreadSanitizer on the stream, reliability (races),
#                                 # concurrency, kernel thread pool and diagnostics (trace) tests
#
# A fresh virtual environment in a temporary directory gets the project installed from this
# clone (non-editable) with ACLNN_EMU_SANITIZE set, so aclnn_py/_build.py compiles csrc/ with
# the sanitizer. The Python interpreter is not instrumented, so pytest runs with the sanitizer
# runtime preloaded; reports (from pytest and from any subprocess a test starts, which inherits
# the environment) go to log files. Exit status: non-zero when pytest fails or when any
# sanitizer report was written; the reports are printed.
set -euo pipefail

usage() {
    echo "usage: bash tools/sanitize.sh asan|tsan" >&2
    exit 2
}
[ $# -eq 1 ] || usage
case "$1" in
    asan) sanitize=address; runtime_lib=libasan.so ;;
    tsan) sanitize=thread; runtime_lib=libtsan.so ;;
    *) usage ;;
esac

repo="$(cd "$(dirname "$0")/.." && pwd)"
CC="${CC:-gcc}"
runtime="$("$CC" -print-file-name="$runtime_lib")"
if [ ! -f "$runtime" ]; then
    echo "sanitize.sh: $CC has no $runtime_lib (install the compiler's sanitizer runtime)" >&2
    exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
logs="$work/logs"
rundir="$work/run"
mkdir -p "$logs" "$rundir"

python3 -m venv "$work/venv"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
python -m pip install --quiet --upgrade pip
(cd "$repo" && ACLNN_EMU_SANITIZE="$sanitize" python -m pip install --quiet ".[test]")

cd "$rundir"  # outside the source tree, so the installed package is the one imported
# (found without importing it: an instrumented core imports only with the runtime preloaded)
platlib="$(python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
core="$(echo "$platlib"/aclnn_py/_emu*.so)"
if [[ "$(ldd "$core")" != *"${runtime_lib%.so}"* ]]; then
    echo "sanitize.sh: $core is not linked against $runtime_lib: the build was not instrumented" >&2
    exit 1
fi

shopt -s nullglob
cd "$repo/tests"
select=()
if [ "$1" = asan ]; then
    tests=(test_runtime.py test_streams.py test_executor.py test_fuzz*.py test_api_hardening*.py
           test_reliability*.py test_concurrency*.py test_threads.py test_onednn.py
           test_relaxed_kernels.py test_custom_hangs.py)
else
    tests=(test_streams.py test_reliability*.py test_concurrency*.py test_threads.py
           test_diagnostics.py test_custom_hangs.py)
    # not the fork tests: TSan cannot follow a fork of a multi-threaded process whose child
    # starts threads ("starting new threads after multi-threaded fork is not supported")
    select=(-k "not fork")
fi
tests=("${tests[@]/#/$repo/tests/}")
shopt -u nullglob

# detect_leaks=0: CPython itself "leaks" at exit. verify_asan_link_order=0: the runtime is
# preloaded, not linked into python. allocator_may_return_null=1: a failing malloc returns NULL
# (which the core handles) as with the normal allocator instead of being reported.
# UBSan (gcc's libubsan beside the preloaded libasan) writes its own message to stderr whatever
# its log_path (which ends up setting ASan's), so: UBSan aborts (abort_on_error=1) and ASan
# reports that SIGABRT (handle_abort=1), with the stack through __ubsan_handle_<check>, to the
# log; pytest runs with --capture=sys so that UBSan's message itself reaches the console.
# Both runtimes get the same log_path.
asan_options="detect_leaks=0:verify_asan_link_order=0:allocator_may_return_null=1"
asan_options+=":handle_abort=1:log_path=$logs/asan"
ubsan_options="print_stacktrace=1:abort_on_error=1:log_path=$logs/asan"
# PYTHONMALLOC=malloc (ASan): Python objects, among them the buffers cffi allocates for the core
# to write into, come from malloc, so ASan sees their bounds too.
pymalloc=pymalloc
[ "$1" = asan ] && pymalloc=malloc
tsan_options="log_path=$logs/tsan:second_deadlock_stack=1"
tsan_options+=":suppressions=$repo/tools/tsan.supp"  # glibc internals only

echo "sanitize.sh: $1 run of ${#tests[@]} test files"
status=0
cd "$rundir"
start=$SECONDS
LD_PRELOAD="$runtime" ASAN_OPTIONS="$asan_options" UBSAN_OPTIONS="$ubsan_options" \
    TSAN_OPTIONS="$tsan_options" PYTHONMALLOC="$pymalloc" \
    pytest -q -p no:cacheprovider --capture=sys --rootdir "$repo" -c "$repo/pyproject.toml" \
    ${select[@]+"${select[@]}"} "${tests[@]}" \
    || status=$?
echo "sanitize.sh: pytest finished in $((SECONDS - start)) s with status $status"

# A log holding nothing but ASan's "failed to allocate" warnings is not a report: with
# allocator_may_return_null=1 ASan logs each malloc it refuses (aclrtMallocHost of 2**64-1 bytes,
# say) and returns NULL, which the core answers with an error code.
benign='^==[0-9]+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes$'
reports=()
for f in "$logs"/*; do
    [ -e "$f" ] || continue
    if grep -Eqv "$benign" "$f"; then
        reports+=("$f")
    fi
done
if [ ${#reports[@]} -gt 0 ]; then
    for f in "${reports[@]}"; do
        echo "======== sanitizer report: $(basename "$f")"
        cat "$f"
    done
    echo "sanitize.sh: FAILED: ${#reports[@]} sanitizer report file(s)" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "sanitize.sh: FAILED: pytest exited with status $status" >&2
    exit 1
fi
echo "sanitize.sh: $1 OK, no sanitizer reports"
