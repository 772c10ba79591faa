// A C++ program over the toolkit's C API: the meta API's getters (arrays released with
// delete[], as CANN documents), scalars and int arrays, a repeatable executor re-bound with
// aclSetInputTensorAddr, and operators run from several threads at once, each with its own
// stream and its own recent-error messages. Lines "name values..." for tests/test_toolkit.py.
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_logsoftmax.h"

static aclTensor* Tensor2d(void* data, int64_t rows, int64_t cols)
{
    std::vector<int64_t> shape = {rows, cols};
    std::vector<int64_t> strides = {cols, 1};
    return aclCreateTensor(shape.data(), 2, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(), 2, data);
}

static void Getters(void* dev)
{
    std::vector<int64_t> view = {2, 3};
    std::vector<int64_t> strides = {1, 2};
    std::vector<int64_t> storage = {6};
    aclTensor* t = aclCreateTensor(view.data(), 2, ACL_FLOAT16, strides.data(), 0, ACL_FORMAT_NCHW,
                                   storage.data(), 1, dev);
    int64_t* dims = nullptr;
    uint64_t n = 0;
    int ret = aclGetViewShape(t, &dims, &n);
    printf("view_shape %d %llu %lld %lld\n", ret, (unsigned long long)n, (long long)dims[0], (long long)dims[1]);
    delete[] dims;
    ret = aclGetViewStrides(t, &dims, &n);
    printf("view_strides %d %llu %lld %lld\n", ret, (unsigned long long)n, (long long)dims[0], (long long)dims[1]);
    delete[] dims;
    ret = aclGetStorageShape(t, &dims, &n);
    printf("storage_shape %d %llu %lld\n", ret, (unsigned long long)n, (long long)dims[0]);
    delete[] dims;
    int64_t offset = -1;
    aclFormat format = ACL_FORMAT_UNDEFINED;
    aclDataType dtype = ACL_DT_UNDEFINED;
    void* addr = nullptr;
    ret = aclGetViewOffset(t, &offset);
    printf("view_offset %d %lld\n", ret, (long long)offset);
    ret = aclGetFormat(t, &format);
    printf("format %d %d\n", ret, (int)format);
    ret = aclGetDataType(t, &dtype);
    printf("data_type %d %d\n", ret, (int)dtype);
    ret = aclGetRawTensorAddr(t, &addr);
    printf("raw_addr %d %d\n", ret, addr == dev);
    ret = aclGetViewShape(t, nullptr, &n);
    printf("getter_null_out %d\n", ret);
    ret = aclGetViewShape(nullptr, &dims, &n);
    printf("getter_null_tensor %d\n", ret);
    aclDestroyTensor(t);
    ret = aclGetViewShape(t, &dims, &n);
    printf("getter_destroyed %d\n", ret);
    aclGetRecentErrMsg();

    float value = 2.5f;
    aclScalar* s = aclCreateScalar(&value, ACL_FLOAT);
    printf("scalar %d %d\n", s != nullptr, aclDestroyScalar(s));
    printf("scalar_null %d\n", aclCreateScalar(nullptr, ACL_FLOAT) == nullptr);
    std::vector<int64_t> values = {3, 1, 4};
    aclIntArray* a = aclCreateIntArray(values.data(), values.size());
    uint64_t size = 0;
    ret = aclGetIntArraySize(a, &size);
    printf("int_array %d %llu %d\n", ret, (unsigned long long)size, aclDestroyIntArray(a));
    aclGetRecentErrMsg();
}

// a repeatable LogSoftmax executor run on x, then re-bound to x2 and run again
static void Repeatable(aclrtStream stream, void* x, void* x2, void* y)
{
    aclTensor* self = Tensor2d(x, 3, 3);
    aclTensor* out = Tensor2d(y, 3, 3);
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    int ret = aclnnLogSoftmaxGetWorkspaceSize(self, 1, out, &ws, &executor);
    printf("repeatable %d %d\n", ret, aclSetAclOpExecutorRepeatable(executor));
    float result[9];
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            printf("rebind %d\n", aclSetInputTensorAddr(executor, 0, self, x2));
        ret = aclnnLogSoftmax(nullptr, ws, executor, stream);
        aclrtSynchronizeStream(stream);
        aclrtMemcpy(result, sizeof result, y, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST);
        printf("log_softmax_%d %d", round, ret);
        for (float v : result)
            printf(" %.6f", v);
        printf("\n");
    }
    printf("destroy_executor %d\n", aclDestroyAclOpExecutor(executor));
    ret = aclDestroyAclOpExecutor(executor);
    const char* msg = aclGetRecentErrMsg();
    printf("destroy_executor_again %d %s\n", ret, msg ? "message" : "(none)");
    aclDestroyTensor(self);
    aclDestroyTensor(out);
}

// one thread: its own stream and buffers, a softmax of 8 values starting at `first`, and, for
// odd threads, a bad dim whose message must stay in that thread
static void Worker(int id, int rounds, std::string* line)
{
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    float host[8], result[8];
    for (int i = 0; i < 8; i++)
        host[i] = float(id + i);
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    int failures = 0, messages = 0;
    for (int r = 0; r < rounds; r++) {
        aclTensor* self = Tensor2d(x, 4, 2);
        aclTensor* out = Tensor2d(y, 4, 2);
        uint64_t ws = 0;
        aclOpExecutor* executor = nullptr;
        int ret = aclnnSoftmaxGetWorkspaceSize(self, (id % 2 && r == 0) ? 5 : 0, out, &ws, &executor);
        if (ret != 0) {
            const char* msg = aclGetRecentErrMsg();
            messages += msg && strstr(msg, "Dim 5") ? 1 : 0;
            ret = aclnnSoftmaxGetWorkspaceSize(self, 0, out, &ws, &executor);
        } else if (aclGetRecentErrMsg() != nullptr) {
            messages += 100;  // another thread's message leaked into this one
        }
        if (ret == 0)
            ret = aclnnSoftmax(nullptr, ws, executor, stream);
        if (ret == 0)
            ret = aclrtSynchronizeStream(stream);
        failures += ret != 0;
        aclDestroyTensor(self);
        aclDestroyTensor(out);
    }
    aclrtMemcpy(result, sizeof result, y, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST);
    char buf[512];
    int n = snprintf(buf, sizeof buf, "thread %d %d %d", id, failures, messages);
    for (float v : result)
        n += snprintf(buf + n, sizeof buf - n, " %.6f", v);
    *line = buf;
    aclrtFree(x);
    aclrtFree(y);
    aclrtDestroyStream(stream);
}

int main(int argc, char** argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    void *x = nullptr, *x2 = nullptr, *y = nullptr;
    float a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b[9] = {0, 0, 0, 1, 1, 1, -1, 0, 1};
    aclrtMalloc(&x, sizeof a, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&x2, sizeof b, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof a, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof a, a, sizeof a, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(x2, sizeof b, b, sizeof b, ACL_MEMCPY_HOST_TO_DEVICE);

    Getters(x);
    Repeatable(stream, x, x2, y);

    std::vector<std::string> lines(threads);
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; i++)
        pool.emplace_back(Worker, i, 20, &lines[i]);
    for (auto& t : pool)
        t.join();
    for (auto& l : lines)
        printf("%s\n", l.c_str());

    aclrtFree(x);
    aclrtFree(x2);
    aclrtFree(y);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    printf("finalize %d\n", aclFinalize());
    return 0;
}
