"""The helper functions every CANN aclnn example program defines, ported once.

CANN's C++ examples (hicann/ops-nn activation/*/examples/test_aclnn_*.cpp) each start with the same
CHECK_RET/LOG_PRINT macros and the GetShapeSize, Init and CreateAclTensor helpers; the samples
import these ports and keep their own main() line by line.
"""

import numpy as np

from aclnn_py import acl, aclnn
from aclnn_py.acl import (
    ACL_FORMAT_ND,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from aclnn_py.dtypes import to_numpy

__all__ = [
    "LOG_PRINT",
    "GetShapeSize",
    "Init",
    "CreateAclTensor",
    "CopyToHost",
    "ACL_SUCCESS",
    "ACL_MEM_MALLOC_HUGE_FIRST",
]


def LOG_PRINT(message, *args):
    print(message % args, end="")


def GetShapeSize(shape):
    shapeSize = 1
    for i in shape:
        shapeSize *= i
    return shapeSize


def Init(deviceId):
    """Returns (stream, ret)."""
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
    """Returns (ret, deviceAddr, tensor); hostData holds values of dataType (the template's T)."""
    host = np.asarray(hostData, dtype=to_numpy(dataType))
    size = GetShapeSize(shape) * host.itemsize
    # aclrtMalloc: device memory
    deviceAddr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    if ret != ACL_SUCCESS:
        LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret)
        return ret, None, None
    # aclrtMemcpy: host data to device memory
    hostBytes = host.tobytes()
    ret = acl.rt.memcpy(
        deviceAddr, size, acl.util.bytes_to_ptr(hostBytes), size, ACL_MEMCPY_HOST_TO_DEVICE
    )
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


def CopyToHost(deviceAddr, size, dataType):
    """Step 5 of every example: std::vector<T> resultData(size, 0); aclrtMemcpy(D2H).
    Returns (ret, resultData)."""
    dtype = to_numpy(dataType)
    resultData = bytes(size * dtype.itemsize)
    ret = acl.rt.memcpy(
        acl.util.bytes_to_ptr(resultData),
        len(resultData),
        deviceAddr,
        size * dtype.itemsize,
        ACL_MEMCPY_DEVICE_TO_HOST,
    )
    if ret != ACL_SUCCESS:
        LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret)
        return ret, None
    return 0, np.frombuffer(resultData, dtype=dtype).tolist()
