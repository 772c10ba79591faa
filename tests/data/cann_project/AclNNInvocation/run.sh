#!/bin/bash
# Builds and runs the AddCustom host program as CANN's AclNNInvocation samples do: the toolkit
# is found through ASCEND_INSTALL_PATH (else ASCEND_HOME_PATH, else the default install), its
# bin/setenv.bash is sourced, and the CMake project reads DDK_PATH and NPU_HOST_LIB.
HERE=$(cd "$(dirname "${BASH_SOURCE:-$0}")" && pwd)

if [ -n "$ASCEND_INSTALL_PATH" ]; then
    TOOLKIT=$ASCEND_INSTALL_PATH
elif [ -n "$ASCEND_HOME_PATH" ]; then
    TOOLKIT=$ASCEND_HOME_PATH
elif [ -d "$HOME/Ascend/ascend-toolkit/latest" ]; then
    TOOLKIT=$HOME/Ascend/ascend-toolkit/latest
else
    TOOLKIT=/usr/local/Ascend/ascend-toolkit/latest
fi
source "$TOOLKIT/bin/setenv.bash"
export DDK_PATH=$TOOLKIT
export NPU_HOST_LIB=$TOOLKIT/$(arch)-$(uname -s | tr '[:upper:]' '[:lower:]')/lib64

run() {
    rm -rf "$HOME/ascend/log/"*
    rm -f "$HERE"/input/*.bin "$HERE"/output/*.bin

    cd "$HERE" || return 1
    python3 scripts/gen_data.py
    if [ $? -ne 0 ]; then
        echo "[ERROR] gen_data.py failed"
        return 1
    fi

    rm -rf build && mkdir -p build && cd build || return 1
    cmake ../src -DCMAKE_SKIP_RPATH=TRUE
    if [ $? -ne 0 ]; then
        echo "[ERROR] cmake failed"
        return 1
    fi
    make
    if [ $? -ne 0 ]; then
        echo "[ERROR] make failed"
        return 1
    fi

    # no RPATH in the program: the package's library comes from LD_LIBRARY_PATH
    export LD_LIBRARY_PATH=$TOOLKIT/opp/vendors/customize/op_api/lib:$LD_LIBRARY_PATH
    cd "$HERE/output" || return 1
    ./execute_add_op
    if [ $? -ne 0 ]; then
        echo "[ERROR] execute_add_op failed"
        return 1
    fi

    cd "$HERE" || return 1
    python3 scripts/verify_result.py output/output_z.bin output/golden.bin
    if [ $? -ne 0 ]; then
        echo "[ERROR] the result differs from the golden data"
        return 1
    fi
}

run
