"""aclnnSoftmaxBackward: a line-by-line port of CANN's example program.

Source: hicann/ops-nn activation/softmax_grad/examples/test_aclnn_softmax_grad.cpp.
Same data, same calls in the same order, same printout (``result[i] is: %f``), same cleanup
order. Run it with ``aclnn-py run softmax_backward``.
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
    gradOutputShape = [4, 2]
    outputShape = [4, 2]
    outShape = [4, 2]
    gradOutputHostData = [0, 1, 2, 3, 4, 5, 6, 7]
    outputHostData = [1, 1, 1, 2, 2, 2, 3, 3]
    outHostData = [0, 0, 0, 0, 0, 0, 0, 0]
    # gradOutput aclTensor
    ret, gradOutputDeviceAddr, gradOutput = CreateAclTensor(
        gradOutputHostData, gradOutputShape, ACL_FLOAT
    )
    if ret != ACL_SUCCESS:
        return ret
    # output aclTensor
    ret, outputDeviceAddr, output = CreateAclTensor(outputHostData, outputShape, ACL_FLOAT)
    if ret != ACL_SUCCESS:
        return ret
    # out aclTensor
    ret, outDeviceAddr, out = CreateAclTensor(outHostData, outShape, ACL_FLOAT)
    if ret != ACL_SUCCESS:
        return ret

    # 3. the CANN operator API
    dim = 0
    # first phase of aclnnSoftmaxBackward
    workspaceSize, executor, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(
        gradOutput, output, dim, out
    )
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclnnSoftmaxBackwardGetWorkspaceSize failed. ERROR: %d\n", ret)
        return ret
    # device memory for the workspace the first phase asked for
    workspaceAddr = None
    if workspaceSize > 0:
        workspaceAddr, ret = acl.rt.malloc(workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST)
        if ret != ACL_SUCCESS:
            LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret)
            return ret
    # second phase of aclnnSoftmaxBackward
    ret = aclnn.aclnnSoftmaxBackward(workspaceAddr, workspaceSize, executor, stream)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclnnSoftmaxBackward failed. ERROR: %d\n", ret)
        return ret

    # 4. (fixed pattern) wait for the task to finish
    ret = acl.rt.synchronize_stream(stream)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret)
        return ret

    # 5. copy the result from device to host
    size = GetShapeSize(outShape)
    ret, resultData = CopyToHost(outDeviceAddr, size, ACL_FLOAT)
    if ret != ACL_SUCCESS:
        return ret
    for i in range(size):
        LOG_PRINT("result[%ld] is: %f\n", i, resultData[i])

    # 6. release the aclTensors
    aclnn.aclDestroyTensor(gradOutput)
    aclnn.aclDestroyTensor(output)
    aclnn.aclDestroyTensor(out)

    # 7. release device resources
    acl.rt.free(gradOutputDeviceAddr)
    acl.rt.free(outputDeviceAddr)
    acl.rt.free(outDeviceAddr)
    if workspaceSize > 0:
        acl.rt.free(workspaceAddr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(deviceId)
    acl.finalize()

    return 0


if __name__ == "__main__":
    sys.exit(main())
