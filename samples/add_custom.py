"""AddCustom, a custom operator: CANN's operator definition plus a NumPy kernel, called through
its generated two-phase API as CANN's AclNNInvocationNaive sample calls it.

The definition (custom/add_custom/add_custom.json, msOpGen's format) and the kernel
(custom/add_custom/add_custom.py) become ``aclnn.aclnnAddCustomGetWorkspaceSize`` /
``aclnn.aclnnAddCustom``; two [8, 2048] float16 inputs of 1.0 and 2.0 give 3.0 everywhere, and
the program prints "test pass". Run it with ``aclnn-py run add_custom``; its C++ host program
with ``aclnn-py run add_custom --lang cpp`` (docs/custom_ops.md).
"""

import sys
from pathlib import Path

import numpy as np
from aclnn_py.samples._common import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_SUCCESS,
    LOG_PRINT,
    CopyToHost,
    CreateAclTensor,
    GetShapeSize,
    Init,
)

from aclnn_py import acl, aclnn, custom
from aclnn_py.acl import ACL_FLOAT16

HERE = Path(__file__).resolve().parent / "custom" / "add_custom"


def main():
    # 0. the custom operator: its definition and its kernel
    kernels = custom._kernel_source(HERE / "add_custom.py")
    if "AddCustom" not in custom.loaded():
        custom.load(HERE / "add_custom.json", {"AddCustom": kernels.add_custom})

    # 1. (fixed pattern) device/stream initialisation
    deviceId = 0
    stream, ret = Init(deviceId)
    if ret != ACL_SUCCESS:
        LOG_PRINT("Init acl failed. ERROR: %d\n", ret)
        return ret

    # 2. inputs and outputs
    shape = [8, 2048]
    n = GetShapeSize(shape)
    ret, xDeviceAddr, x = CreateAclTensor(np.full(n, 1.0), shape, ACL_FLOAT16)
    if ret != ACL_SUCCESS:
        return ret
    ret, yDeviceAddr, y = CreateAclTensor(np.full(n, 2.0), shape, ACL_FLOAT16)
    if ret != ACL_SUCCESS:
        return ret
    ret, zDeviceAddr, z = CreateAclTensor(np.zeros(n), shape, ACL_FLOAT16)
    if ret != ACL_SUCCESS:
        return ret

    # 3. the custom operator's two phases
    workspaceSize, executor, ret = aclnn.aclnnAddCustomGetWorkspaceSize(x, y, z)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclnnAddCustomGetWorkspaceSize failed. ERROR: %d\n", ret)
        return ret
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr, ret = acl.rt.malloc(workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST)
        if ret != ACL_SUCCESS:
            LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret)
            return ret
    ret = aclnn.aclnnAddCustom(workspaceAddr, workspaceSize, executor, stream)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclnnAddCustom failed. ERROR: %d\n", ret)
        return ret

    # 4. (fixed pattern) wait for the stream
    ret = acl.rt.synchronize_stream(stream)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret)
        return ret

    # 5. the result
    ret, result = CopyToHost(zDeviceAddr, n, ACL_FLOAT16)
    if ret != ACL_SUCCESS:
        return ret
    for i in range(4):
        LOG_PRINT("result[%d] is: %f\n", i, result[i])
    wrong = sum(1 for v in result if v != 3.0)

    # 6. release
    for t in (x, y, z):
        aclnn.aclDestroyTensor(t)
    for p in (xDeviceAddr, yDeviceAddr, zDeviceAddr):
        acl.rt.free(p)
    if workspaceSize > 0:
        acl.rt.free(workspaceAddr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(deviceId)
    acl.finalize()
    if wrong:
        LOG_PRINT("test failed: %d of %d outputs are not 3.0\n", wrong, n)
        return 1
    LOG_PRINT("test pass\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
