/*
 * The AddCustom host program of the test project: reads input/input_x.bin and input_y.bin
 * (float16 [8, 2048]), runs aclnnAddCustom on a stream and writes output/output_z.bin, in the
 * manner of CANN's AclNNInvocation samples. Run from the output directory.
 */
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

#include "acl/acl.h"
#include "aclnn_add_custom.h"

#define CHECK(expr, what)                                                        \
    do {                                                                         \
        int status_ = (int)(expr);                                               \
        if (status_ != 0) {                                                      \
            std::fprintf(stderr, "[ERROR] %s failed: %d\n", what, status_);      \
            return 1;                                                            \
        }                                                                        \
    } while (0)

static const int64_t kShape[2] = {8, 2048};
static const int64_t kStrides[2] = {2048, 1};
static const size_t kCount = 8 * 2048;
static const size_t kBytes = kCount * sizeof(uint16_t);

static bool ReadFile(const char *path, std::vector<uint16_t> &data)
{
    std::ifstream in(path, std::ios::binary);
    data.resize(kCount);
    return in.read(reinterpret_cast<char *>(data.data()), kBytes) && in.gcount() == (long)kBytes;
}

static bool WriteFile(const char *path, const std::vector<uint16_t> &data)
{
    std::ofstream out(path, std::ios::binary);
    return (bool)out.write(reinterpret_cast<const char *>(data.data()), kBytes);
}

static aclTensor *DeviceTensor(void *addr)
{
    return aclCreateTensor(kShape, 2, ACL_FLOAT16, kStrides, 0, ACL_FORMAT_ND, kShape, 2, addr);
}

int main()
{
    std::vector<uint16_t> x, y, z(kCount);
    if (!ReadFile("../input/input_x.bin", x) || !ReadFile("../input/input_y.bin", y)) {
        std::fprintf(stderr, "[ERROR] cannot read the input files\n");
        return 1;
    }
    CHECK(aclInit(nullptr), "aclInit");
    CHECK(aclrtSetDevice(0), "aclrtSetDevice");
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream), "aclrtCreateStream");

    void *dev[3] = {nullptr, nullptr, nullptr};
    for (int i = 0; i < 3; i++)
        CHECK(aclrtMalloc(&dev[i], kBytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    CHECK(aclrtMemcpy(dev[0], kBytes, x.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE), "copy x");
    CHECK(aclrtMemcpy(dev[1], kBytes, y.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE), "copy y");
    aclTensor *tx = DeviceTensor(dev[0]), *ty = DeviceTensor(dev[1]), *tz = DeviceTensor(dev[2]);
    if (!tx || !ty || !tz) {
        std::fprintf(stderr, "[ERROR] aclCreateTensor failed\n");
        return 1;
    }

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddCustomGetWorkspaceSize(tx, ty, tz, &workspaceSize, &executor),
          "aclnnAddCustomGetWorkspaceSize");
    void *workspace = nullptr;
    if (workspaceSize > 0)
        CHECK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "workspace");
    CHECK(aclnnAddCustom(workspace, workspaceSize, executor, stream), "aclnnAddCustom");
    CHECK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    CHECK(aclrtMemcpy(z.data(), kBytes, dev[2], kBytes, ACL_MEMCPY_DEVICE_TO_HOST), "copy z");
    if (!WriteFile("output_z.bin", z)) {
        std::fprintf(stderr, "[ERROR] cannot write output_z.bin\n");
        return 1;
    }
    std::printf("[INFO] wrote output_z.bin\n");

    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclDestroyTensor(tz);
    if (workspace)
        aclrtFree(workspace);
    for (int i = 0; i < 3; i++)
        aclrtFree(dev[i]);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
