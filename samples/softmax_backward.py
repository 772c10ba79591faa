"""aclnnSoftmaxBackward: a line-by-line port of CANN's example program.

Source: hicann/ops-nn activation/softmax_grad/examples/test_aclnn_softmax_grad.cpp. Same data, same
calls in the same order, same printout (``result[i] is: %f``), same cleanup order. Run it with
``aclnn-py run softmax_backward`` or ``python samples/softmax_backward.py``.
"""

import struct
import sys

from aclnn_py import acl, aclnn
from aclnn_py.acl import (
    ACL_FLOAT,
    ACL_FORMAT_ND,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)


def LOG_PRINT(message, *args):
    print(message % args, end="")


def GetShapeSize(shape):
    shapeSize = 1
    for i in shape:
        shapeSize *= i
    return shapeSize


def Init(deviceId):
    # fixed pattern: resource initialisation
    ret = acl.init(None)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclInit failed. ERROR: %d\n", ret)
        return None, ret
    ret = acl.rt.set_device(deviceId)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret)
        acl.finalize()
        return None, ret
    stream, ret = acl.rt.create_stream()
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret)
        acl.rt.reset_device(deviceId)
        acl.finalize()
        return None, ret
    return stream, 0


def CreateAclTensor(hostData, shape, dataType):
    """Returns (ret, deviceAddr, tensor); hostData is a list of float32 values."""
    size = GetShapeSize(shape) * 4  # sizeof(float)
    # aclrtMalloc: device memory
    deviceAddr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret)
        return ret, None, None
    # aclrtMemcpy: host data to device memory
    hostBytes = struct.pack(f"{len(hostData)}f", *hostData)
    ret = acl.rt.memcpy(deviceAddr, size, acl.util.bytes_to_ptr(hostBytes), size,
                        ACL_MEMCPY_HOST_TO_DEVICE)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret)
        return ret, None, None

    # strides of a contiguous tensor
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]

    # aclCreateTensor
    tensor = aclnn.aclCreateTensor(shape, dataType, strides, 0, ACL_FORMAT_ND, shape, deviceAddr)
    return 0, deviceAddr, tensor


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
    ret, gradOutputDeviceAddr, gradOutput = CreateAclTensor(gradOutputHostData, gradOutputShape,
                                                            ACL_FLOAT)
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
    workspaceSize, executor, ret = aclnn.aclnnSoftmaxBackwardGetWorkspaceSize(gradOutput, output,
                                                                             dim, out)
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
    resultData = bytes(size * 4)  # std::vector<float> resultData(size, 0)
    ret = acl.rt.memcpy(acl.util.bytes_to_ptr(resultData), len(resultData), outDeviceAddr,
                        size * 4, ACL_MEMCPY_DEVICE_TO_HOST)
    if ret != ACL_SUCCESS:
        LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret)
        return ret
    result = struct.unpack(f"{size}f", resultData)
    for i in range(size):
        LOG_PRINT("result[%ld] is: %f\n", i, result[i])

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
