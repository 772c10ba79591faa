/*
 * The single-file AddCustom program of the test project: z = x + y on float32 [4, 1000]
 * tensors whose values it makes itself (x[i] = i * 0.25, y[i] = 1000 - i), checked on the
 * host against the same sums computed in double; prints "test pass" when every value matches.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnn_add_custom.h"

#define CHECK(expr, what)                                                        \
    do {                                                                         \
        int status_ = (int)(expr);                                               \
        if (status_ != 0) {                                                      \
            std::printf("[ERROR] %s failed: %d\n", what, status_);               \
            return 1;                                                            \
        }                                                                        \
    } while (0)

int main()
{
    const int64_t shape[2] = {4, 1000}, strides[2] = {1000, 1};
    const size_t count = 4000, bytes = count * sizeof(float);
    std::vector<float> x(count), y(count), z(count, -1.0f);
    for (size_t i = 0; i < count; i++) {
        x[i] = (float)i * 0.25f;
        y[i] = 1000.0f - (float)i;
    }
    CHECK(aclInit(nullptr), "aclInit");
    CHECK(aclrtSetDevice(0), "aclrtSetDevice");
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream), "aclrtCreateStream");
    void *dx = nullptr, *dy = nullptr, *dz = nullptr;
    CHECK(aclrtMalloc(&dx, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc x");
    CHECK(aclrtMalloc(&dy, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc y");
    CHECK(aclrtMalloc(&dz, bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc z");
    CHECK(aclrtMemcpy(dx, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), "copy x");
    CHECK(aclrtMemcpy(dy, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), "copy y");
    aclTensor *tx = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, dx);
    aclTensor *ty = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, dy);
    aclTensor *tz = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, dz);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddCustomGetWorkspaceSize(tx, ty, tz, &workspaceSize, &executor),
          "aclnnAddCustomGetWorkspaceSize");
    void *workspace = nullptr;
    if (workspaceSize > 0)
        CHECK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "workspace");
    CHECK(aclnnAddCustom(workspace, workspaceSize, executor, stream), "aclnnAddCustom");
    CHECK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    CHECK(aclrtMemcpy(z.data(), bytes, dz, bytes, ACL_MEMCPY_DEVICE_TO_HOST), "copy z");

    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        double expected = (double)x[i] + (double)y[i];
        if (std::fabs((double)z[i] - expected) > 1e-6 * std::fabs(expected)) {
            if (bad++ < 5)
                std::printf("[ERROR] z[%zu] = %f, expected %f\n", i, z[i], expected);
        }
    }
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclDestroyTensor(tz);
    aclrtFree(dx);
    aclrtFree(dy);
    aclrtFree(dz);
    if (workspace)
        aclrtFree(workspace);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    if (bad) {
        std::printf("[ERROR] %zu of %zu values differ\n", bad, count);
        return 1;
    }
    std::printf("test pass\n");
    return 0;
}
