#!/bin/bash
# Builds and runs the single-file AddCustom program as CANN's operator samples do: the toolkit
# is ASCEND_HOME_DIR (else the default install), whose bin/setenv.bash is sourced; CMake reads
# DDK_PATH and NPU_HOST_LIB, and the program finds the package's library through the RUNPATH
# that CMake records for link_directories().
if [ ! "$ASCEND_HOME_DIR" ]; then
    if [ -d "$HOME/Ascend/ascend-toolkit/latest" ]; then
        export ASCEND_HOME_DIR=$HOME/Ascend/ascend-toolkit/latest
    else
        export ASCEND_HOME_DIR=/usr/local/Ascend/ascend-toolkit/latest
    fi
fi
source "$ASCEND_HOME_DIR/bin/setenv.bash"
export DDK_PATH=$ASCEND_HOME_DIR
export NPU_HOST_LIB=$ASCEND_HOME_DIR/$(arch)-linux/lib64

set -e
cd "$(dirname "$0")"
rm -rf build
mkdir -p build
cmake -B build
cmake --build build -j
(
    cd build
    ./execute_add_op | tee result.txt
)
if [ "$(tail -n 1 build/result.txt)" != "test pass" ]; then
    echo "[ERROR] the program did not pass"
    exit 1
fi
