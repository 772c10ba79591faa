/*
 * The AddCustom host program of the test project: reads input/input_x.bin and input_y.bin
 * (float16 [8, 2048]), runs aclnnAddCustom on a stream and writes output/output_z.bin, in the
 * manner of CANN's full AclNNInvocation samples: each tensor is described by an aclTensorDesc
 * (its size, element count, dims, dtype and format come from the description), its host copy
 * lives in aclrtMallocHost memory wrapped in an aclDataBuffer, the program includes
 * acl/acl_op_compiler.h, asks for the run mode and waits with aclrtSynchronizeStreamWithTimeout.
 * Run from the output directory.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "aclnn_add_custom.h"

#define CHECK(expr, what)                                                        \
    do {                                                                         \
        int status_ = (int)(expr);                                               \
        if (status_ != 0) {                                                      \
            std::fprintf(stderr, "[ERROR] %s failed: %d\n", what, status_);      \
            return 1;                                                            \
        }                                                                        \
    } while (0)

/* One tensor of the operator: its description, host buffer and device copy. */
struct Operand {
    aclTensorDesc *desc = nullptr;
    aclDataBuffer *host = nullptr;
    void *hostAddr = nullptr;
    void *devAddr = nullptr;
    aclTensor *tensor = nullptr;
};

static bool ReadFile(const char *path, void *data, size_t size)
{
    std::ifstream in(path, std::ios::binary);
    return in.read(static_cast<char *>(data), size) && (size_t)in.gcount() == size;
}

static bool WriteFile(const char *path, const void *data, size_t size)
{
    std::ofstream out(path, std::ios::binary);
    return (bool)out.write(static_cast<const char *>(data), size);
}

/* The description's own answers make the device tensor: dims, strides, dtype, format. */
static int MakeOperand(Operand &op, const int64_t *shape, int numDims)
{
    op.desc = aclCreateTensorDesc(ACL_FLOAT16, numDims, shape, ACL_FORMAT_ND);
    if (op.desc == nullptr)
        return 1;
    size_t size = aclGetTensorDescSize(op.desc);
    size_t count = aclGetTensorDescElementCount(op.desc);
    if (size != count * aclDataTypeSize(aclGetTensorDescType(op.desc)))
        return 2;
    if (aclrtMallocHost(&op.hostAddr, size) != ACL_SUCCESS)
        return 3;
    op.host = aclCreateDataBuffer(op.hostAddr, size);
    if (op.host == nullptr || aclGetDataBufferAddr(op.host) != op.hostAddr ||
        aclGetDataBufferSizeV2(op.host) != size)
        return 4;
    if (aclrtMalloc(&op.devAddr, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return 5;
    size_t n = aclGetTensorDescNumDims(op.desc);
    std::vector<int64_t> dims(n), strides(n);
    for (size_t i = 0; i < n; i++) {
        if (aclGetTensorDescDimV2(op.desc, i, &dims[i]) != ACL_SUCCESS)
            return 6;
    }
    int64_t stride = 1;
    for (size_t i = n; i-- > 0;) {
        strides[i] = stride;
        stride *= dims[i];
    }
    op.tensor = aclCreateTensor(dims.data(), n, aclGetTensorDescType(op.desc), strides.data(), 0,
                                aclGetTensorDescFormat(op.desc), dims.data(), n, op.devAddr);
    return op.tensor == nullptr ? 7 : 0;
}

static void FreeOperand(Operand &op)
{
    if (op.tensor)
        aclDestroyTensor(op.tensor);
    if (op.devAddr)
        aclrtFree(op.devAddr);
    if (op.host)
        aclDestroyDataBuffer(op.host);
    if (op.hostAddr)
        aclrtFreeHost(op.hostAddr);
    if (op.desc)
        aclDestroyTensorDesc(op.desc);
}

int main()
{
    const int64_t shape[2] = {8, 2048};
    CHECK(aclInit(nullptr), "aclInit");
    CHECK(aclrtSetDevice(0), "aclrtSetDevice");
    aclrtRunMode runMode;
    CHECK(aclrtGetRunMode(&runMode), "aclrtGetRunMode");
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream), "aclrtCreateStream");

    Operand x, y, z;
    CHECK(MakeOperand(x, shape, 2), "operand x");
    CHECK(MakeOperand(y, shape, 2), "operand y");
    CHECK(MakeOperand(z, shape, 2), "operand z");
    size_t size = aclGetDataBufferSizeV2(x.host);
    if (!ReadFile("../input/input_x.bin", aclGetDataBufferAddr(x.host), size) ||
        !ReadFile("../input/input_y.bin", aclGetDataBufferAddr(y.host), size)) {
        std::fprintf(stderr, "[ERROR] cannot read the input files\n");
        return 1;
    }
    aclrtMemcpyKind toDevice =
        runMode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_DEVICE;
    CHECK(aclrtMemcpy(x.devAddr, size, x.hostAddr, size, toDevice), "copy x");
    CHECK(aclrtMemcpy(y.devAddr, size, y.hostAddr, size, toDevice), "copy y");

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK(aclnnAddCustomGetWorkspaceSize(x.tensor, y.tensor, z.tensor, &workspaceSize, &executor),
          "aclnnAddCustomGetWorkspaceSize");
    void *workspace = nullptr;
    if (workspaceSize > 0)
        CHECK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "workspace");
    CHECK(aclnnAddCustom(workspace, workspaceSize, executor, stream), "aclnnAddCustom");
    CHECK(aclrtSynchronizeStreamWithTimeout(stream, 5000), "aclrtSynchronizeStreamWithTimeout");
    aclrtMemcpyKind toHost =
        runMode == ACL_HOST ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_DEVICE_TO_DEVICE;
    CHECK(aclrtMemcpy(z.hostAddr, size, z.devAddr, size, toHost), "copy z");
    if (!WriteFile("output_z.bin", z.hostAddr, size)) {
        std::fprintf(stderr, "[ERROR] cannot write output_z.bin\n");
        return 1;
    }
    std::printf("[INFO] wrote output_z.bin\n");

    if (workspace)
        aclrtFree(workspace);
    FreeOperand(x);
    FreeOperand(y);
    FreeOperand(z);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
