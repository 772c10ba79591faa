/*
 * AddCustom's host program, in the style of CANN's AclNNInvocationNaive sample: two [8, 2048]
 * float16 inputs of 1.0 and 2.0, the custom operator's two phases, and "test pass" when every
 * output is 3.0. Build it against the toolkit and the package of `aclnn-py opgen`
 * (CMakeLists.txt beside it, or the g++ line of docs/custom_ops.md).
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnn_add_custom.h"

#define SUCCESS 0
#define FAILED 1

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

#define LOG_PRINT(message, ...)         \
    do {                                \
        printf(message, ##__VA_ARGS__); \
    } while (0)

static int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t size = 1;
    for (auto d : shape) {
        size *= d;
    }
    return size;
}

static int Init(int32_t deviceId, aclrtStream *stream)
{
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return FAILED);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return FAILED);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return FAILED);
    return SUCCESS;
}

static int CreateAclTensor(const std::vector<aclFloat16> &hostData, const std::vector<int64_t> &shape,
                           void **deviceAddr, aclTensor **tensor)
{
    auto size = GetShapeSize(shape) * sizeof(aclFloat16);
    auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return FAILED);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return FAILED);
    *tensor = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    return *tensor ? SUCCESS : FAILED;
}

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return FAILED);

    std::vector<int64_t> shape = {8, 2048};
    const int64_t n = GetShapeSize(shape);
    std::vector<aclFloat16> xHost(n, aclFloatToFloat16(1.0f));
    std::vector<aclFloat16> yHost(n, aclFloatToFloat16(2.0f));
    std::vector<aclFloat16> zHost(n, aclFloatToFloat16(0.0f));
    void *xDevice = nullptr, *yDevice = nullptr, *zDevice = nullptr;
    aclTensor *x = nullptr, *y = nullptr, *z = nullptr;
    ret = CreateAclTensor(xHost, shape, &xDevice, &x);
    CHECK_RET(ret == SUCCESS, return FAILED);
    ret = CreateAclTensor(yHost, shape, &yDevice, &y);
    CHECK_RET(ret == SUCCESS, return FAILED);
    ret = CreateAclTensor(zHost, shape, &zDevice, &z);
    CHECK_RET(ret == SUCCESS, return FAILED);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnAddCustomGetWorkspaceSize(x, y, z, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAddCustomGetWorkspaceSize failed. ERROR: %d\n", ret); return FAILED);
    void *workspace = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return FAILED);
    }
    ret = aclnnAddCustom(workspace, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAddCustom failed. ERROR: %d\n", ret); return FAILED);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return FAILED);

    std::vector<aclFloat16> result(n, 0);
    ret = aclrtMemcpy(result.data(), n * sizeof(aclFloat16), zDevice, n * sizeof(aclFloat16),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return FAILED);
    for (int64_t i = 0; i < 4; i++) {
        LOG_PRINT("result[%ld] is: %f\n", (long)i, aclFloat16ToFloat(result[i]));
    }
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        if (aclFloat16ToFloat(result[i]) != 3.0f) {
            wrong++;
        }
    }

    aclDestroyTensor(x);
    aclDestroyTensor(y);
    aclDestroyTensor(z);
    aclrtFree(xDevice);
    aclrtFree(yDevice);
    aclrtFree(zDevice);
    if (workspaceSize > 0) {
        aclrtFree(workspace);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    if (wrong) {
        LOG_PRINT("test failed: %ld of %ld outputs are not 3.0\n", (long)wrong, (long)n);
        return FAILED;
    }
    LOG_PRINT("test pass\n");
    return SUCCESS;
}
