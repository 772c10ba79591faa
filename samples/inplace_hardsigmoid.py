"""aclnnInplaceHardsigmoid: a line-by-line port of CANN's example program.

Source: hicann/ops-nn activation/hard_sigmoid/examples/test_aclnn_inplace_hard_sigmoid.cpp.
Same data, same calls in the same order, same printout (``result[i] is: %f``), same cleanup
order. Run it with ``aclnn-py run inplace_hardsigmoid``.
"""

import sys

from aclnn_py.samples._common import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_SUCCESS,
    LOG_PRINT,
    CopyToHost,
    CreateAclTensor,
    GetShapeSize,
    Init,
)

from aclnn_py import acl, aclnn
from aclnn_py.acl import ACL_FLOAT


def main():
    # 1. (fixed pattern) device/stream initialisation
    deviceId = 0
    stream, ret = Init(deviceId)
    if ret != ACL_SUCCESS:
        LOG_PRINT("Init acl failed. ERROR: %d\n", ret)
        return ret

    # 2. inputs and outputs
    selfShape = [4, 2]
    selfHostData = [-4, -3, -2, 0, 1, 2, 4, 5]
    # self aclTensor
    ret, selfDeviceAddr, self = CreateAclTensor(selfHostData, selfShape, ACL_FLOAT)
    if ret != ACL_SUCCESS:
        return ret

    # 3. the CANN operator API
    # first phase of aclnnInplaceHardsigmoid
    inplaceWorkspaceSize, inplaceExecutor, ret = aclnn.aclnnInplaceHardsigmoidGetWorkspaceSize(self)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclnnInplaceHardsigmoidGetWorkspaceSize failed. ERROR: %d\n", ret)
        return ret
    # device memory for the workspace the first phase asked for
    inplaceWorkspaceAddr = None
    if inplaceWorkspaceSize > 0:
        inplaceWorkspaceAddr, ret = acl.rt.malloc(inplaceWorkspaceSize, ACL_MEM_MALLOC_HUGE_FIRST)
        if ret != ACL_SUCCESS:
            LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret)
            return ret
    # second phase of aclnnInplaceHardsigmoid
    ret = aclnn.aclnnInplaceHardsigmoid(
        inplaceWorkspaceAddr, inplaceWorkspaceSize, inplaceExecutor, stream
    )
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclnnInplaceHardsigmoid failed. ERROR: %d\n", ret)
        return ret

    # 4. (fixed pattern) wait for the task to finish
    ret = acl.rt.synchronize_stream(stream)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret)
        return ret

    # 5. copy the result from device to host
    size = GetShapeSize(selfShape)
    ret, resultData = CopyToHost(selfDeviceAddr, size, ACL_FLOAT)
    if ret != ACL_SUCCESS:
        return ret
    for i in range(size):
        LOG_PRINT("result[%ld] is: %f\n", i, resultData[i])

    # 6. release the aclTensors
    aclnn.aclDestroyTensor(self)

    # 7. release device resources
    acl.rt.free(selfDeviceAddr)
    if inplaceWorkspaceSize > 0:
        acl.rt.free(inplaceWorkspaceAddr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(deviceId)
    acl.finalize()

    return 0


if __name__ == "__main__":
    sys.exit(main())
