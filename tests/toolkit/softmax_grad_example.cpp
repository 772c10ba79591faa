// aclnnSoftmaxBackward through the toolkit, written in the manner of CANN's example programs
// (our own code): the constructs those programs rely on, so that the toolkit's headers and
// libraries are held to them -- "acl/acl.h" plus an "aclnnop/..." header found through
// -I$ASCEND_HOME_PATH/include, aclInit(nullptr), scoped enumerators
// (aclDataType::ACL_FLOAT, aclFormat::ACL_FORMAT_ND), a printf macro with ##__VA_ARGS__, an
// int64_t printed with %ld, an executor pointer left uninitialised before phase 1.
// Inputs: the 4 x 2 case of CANN's aclnnSoftmaxBackward documentation, dim 0.
#include <cstdio>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_backward.h"

#define REPORT(fmt, ...) std::printf(fmt, ##__VA_ARGS__)

namespace {

struct DeviceTensor {
    void* addr = nullptr;
    aclTensor* tensor = nullptr;
};

int MakeTensor(const std::vector<float>& values, const std::vector<int64_t>& dims, DeviceTensor* t)
{
    const size_t bytes = values.size() * sizeof(float);
    int ret = aclrtMalloc(&t->addr, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (ret != ACL_SUCCESS) {
        REPORT("aclrtMalloc: %d\n", ret);
        return ret;
    }
    ret = aclrtMemcpy(t->addr, bytes, values.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    if (ret != ACL_SUCCESS) {
        REPORT("aclrtMemcpy: %d\n", ret);
        return ret;
    }
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size() - 1; i > 0; --i) {
        strides[i - 1] = strides[i] * dims[i];
    }
    t->tensor = aclCreateTensor(dims.data(), dims.size(), aclDataType::ACL_FLOAT, strides.data(),
                                0, aclFormat::ACL_FORMAT_ND, dims.data(), dims.size(), t->addr);
    return t->tensor == nullptr ? -1 : ACL_SUCCESS;
}

}  // namespace

int main()
{
    const int32_t device = 0;
    aclrtStream stream = nullptr;
    int ret = aclInit(nullptr);
    if (ret != ACL_SUCCESS || (ret = aclrtSetDevice(device)) != ACL_SUCCESS ||
        (ret = aclrtCreateStream(&stream)) != ACL_SUCCESS) {
        REPORT("initialisation failed: %d\n", ret);
        return 1;
    }

    const std::vector<int64_t> dims = {4, 2};
    DeviceTensor grad, y, out;
    if (MakeTensor({0, 1, 2, 3, 4, 5, 6, 7}, dims, &grad) != ACL_SUCCESS ||
        MakeTensor({1, 1, 1, 2, 2, 2, 3, 3}, dims, &y) != ACL_SUCCESS ||
        MakeTensor(std::vector<float>(8, 0.0f), dims, &out) != ACL_SUCCESS) {
        return 1;
    }

    uint64_t workspaceSize = 0;
    aclOpExecutor* executor;
    ret = aclnnSoftmaxBackwardGetWorkspaceSize(grad.tensor, y.tensor, 0, out.tensor,
                                               &workspaceSize, &executor);
    if (ret != ACL_SUCCESS) {
        REPORT("aclnnSoftmaxBackwardGetWorkspaceSize: %d\n", ret);
        return 1;
    }
    void* workspace = nullptr;
    if (workspaceSize > 0 &&
        (ret = aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST)) != ACL_SUCCESS) {
        REPORT("workspace: %d\n", ret);
        return 1;
    }
    if ((ret = aclnnSoftmaxBackward(workspace, workspaceSize, executor, stream)) != ACL_SUCCESS ||
        (ret = aclrtSynchronizeStream(stream)) != ACL_SUCCESS) {
        REPORT("run: %d\n", ret);
        return 1;
    }

    std::vector<float> host(8, 0.0f);
    ret = aclrtMemcpy(host.data(), host.size() * sizeof(float), out.addr, host.size() * sizeof(float),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    if (ret != ACL_SUCCESS) {
        REPORT("copy back: %d\n", ret);
        return 1;
    }
    for (int64_t i = 0; i < static_cast<int64_t>(host.size()); i++) {
        REPORT("result[%ld] is: %f\n", i, host[i]);
    }

    for (DeviceTensor* t : {&grad, &y, &out}) {
        aclDestroyTensor(t->tensor);
        aclrtFree(t->addr);
    }
    if (workspace != nullptr) {
        aclrtFree(workspace);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(device);
    aclFinalize();
    return 0;
}
