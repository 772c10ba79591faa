/*
 * A C99 program over the toolkit's C API: each check prints one line "name value..." that
 * tests/test_toolkit.py compares with CANN's documented codes and NumPy goldens. Error lines
 * carry the code and aclGetRecentErrMsg()'s text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_hardsigmoid.h"

static void report(const char *name, int ret)
{
    const char *msg = aclGetRecentErrMsg();
    printf("%s %d %s\n", name, ret, msg ? msg : "(none)");
    fflush(stdout);
}

static aclTensor *tensor_2d(void *data, int64_t rows, int64_t cols)
{
    int64_t shape[2] = {rows, cols};
    int64_t strides[2] = {cols, 1};
    return aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, data);
}

/* softmax over dim 0 of a 4x2 float tensor in device memory; 0 or the failing code */
static int softmax_run(aclrtStream stream, void *x, void *y, int64_t dim)
{
    aclTensor *self = tensor_2d(x, 4, 2), *out = tensor_2d(y, 4, 2);
    uint64_t ws = 0;
    aclOpExecutor *executor = NULL;
    int ret = aclnnSoftmaxGetWorkspaceSize(self, dim, out, &ws, &executor);
    if (ret == 0)
        ret = aclnnSoftmax(NULL, ws, executor, stream);
    if (ret == 0)
        ret = aclrtSynchronizeStream(stream);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    return ret;
}

int main(void)
{
    const float host[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    float result[8];
    size_t bytes = sizeof host;
    aclrtStream stream = NULL;
    void *x = NULL, *y = NULL;

    printf("init %d\n", aclInit(NULL));
    printf("init_again %d\n", aclInit(NULL));
    aclGetRecentErrMsg();
    printf("set_device %d\n", aclrtSetDevice(0));
    uint32_t count = 0;
    int ret = aclrtGetDeviceCount(&count);
    printf("device_count %d %u\n", ret, count);
    int32_t device = -1;
    ret = aclrtGetDevice(&device);
    printf("get_device %d %d\n", ret, device);
    aclrtRunMode mode = ACL_DEVICE;
    ret = aclrtGetRunMode(&mode);
    printf("run_mode %d %d\n", ret, (int)mode);
    const char *soc = aclrtGetSocName();
    printf("soc_name %s\n", soc ? soc : "(null)");
    size_t free_mem = 0, total_mem = 0;
    ret = aclrtGetMemInfo(ACL_HBM_MEM, &free_mem, &total_mem);
    printf("mem_info %d %d\n", ret, total_mem > 0 && free_mem <= total_mem);
    printf("create_stream %d\n", aclrtCreateStream(&stream));

    /* memory: copies both ways, memset, async copy */
    printf("malloc %d\n", aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    printf("malloc_y %d\n", aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    printf("h2d %d\n", aclrtMemcpy(x, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    printf("memset %d\n", aclrtMemset(y, bytes, 0, bytes));
    printf("d2d_async %d\n", aclrtMemcpyAsync(y, bytes, x, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    printf("sync %d\n", aclrtSynchronizeStream(stream));
    memset(result, 0, sizeof result);
    printf("d2h %d\n", aclrtMemcpy(result, sizeof result, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    printf("copied");
    for (int i = 0; i < 8; i++)
        printf(" %g", result[i]);
    printf("\n");

    /* events on the stream */
    aclrtEvent start = NULL, end = NULL;
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    float ms = -1;
    ret = aclrtCreateEvent(&start);
    printf("event_start %d\n", ret);
    ret = aclrtCreateEvent(&end);
    printf("event_end %d\n", ret);
    ret = aclrtRecordEvent(start, stream);
    printf("record_start %d\n", ret);
    ret = aclrtRecordEvent(end, stream);
    printf("record_end %d\n", ret);
    printf("event_sync %d\n", aclrtSynchronizeEvent(end));
    ret = aclrtQueryEventStatus(end, &status);
    printf("event_status %d %d\n", ret, (int)status);
    ret = aclrtEventElapsedTime(&ms, start, end);
    printf("elapsed %d %d\n", ret, ms >= 0);
    ret = aclrtDestroyEvent(start);
    printf("destroy_start %d\n", ret);
    ret = aclrtDestroyEvent(end);
    printf("destroy_end %d\n", ret);

    /* the operator, then its error paths */
    printf("softmax %d\n", softmax_run(stream, x, y, 0));
    aclrtMemcpy(result, sizeof result, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("softmax_out");
    for (int i = 0; i < 8; i++)
        printf(" %.6f", result[i]);
    printf("\n");
    report("bad_dim", softmax_run(stream, x, y, 2));
    printf("cleared %s\n", aclGetRecentErrMsg() ? "no" : "yes");
    {
        uint64_t ws = 0;
        aclOpExecutor *executor = NULL;
        aclTensor *out = tensor_2d(y, 4, 2);
        report("null_self", aclnnSoftmaxGetWorkspaceSize(NULL, 0, out, &ws, &executor));
        report("null_ws_ptr", aclnnHardsigmoidGetWorkspaceSize(out, out, NULL, &executor));
        aclDestroyTensor(out);
        report("destroy_twice", aclDestroyTensor(out));
        report("unknown_tensor", aclDestroyTensor((aclTensor *)(uintptr_t)0x123450));
    }
    {   /* a single-use executor passed to phase 2 twice */
        aclTensor *self = tensor_2d(x, 4, 2), *out = tensor_2d(y, 4, 2);
        uint64_t ws = 0;
        aclOpExecutor *executor = NULL;
        aclnnSoftmaxGetWorkspaceSize(self, 0, out, &ws, &executor);
        printf("first_run %d\n", aclnnSoftmax(NULL, ws, executor, stream));
        report("second_run", aclnnSoftmax(NULL, ws, executor, stream));
        aclrtSynchronizeStream(stream);
        aclDestroyTensor(self);
        aclDestroyTensor(out);
    }
    {   /* a view that runs past the end of its allocation: 4x2 floats over a 16-byte buffer */
        void *small = NULL;
        aclrtMalloc(&small, 16, ACL_MEM_MALLOC_HUGE_FIRST);
        report("past_end", softmax_run(stream, small, y, 0));
        aclrtFree(small);
    }
    {
        void *none = NULL;
        report("malloc_zero", aclrtMalloc(&none, 0, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    report("malloc_null", aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    {   /* counts no array holds: refused as the caller's mistake, nothing read */
        int64_t *many = calloc(70000, sizeof *many), few[3] = {1, 2, 3};
        aclIntArray *a = aclCreateIntArray(many, 70000);
        report("int_array_70000", a == NULL);
        a = aclCreateIntArray(few, UINT64_MAX);
        report("int_array_2_64", a == NULL);
        report("tensor_dims_70000", aclCreateTensor(many, 70000, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND,
                                                    many, 70000, y) == NULL);
        a = aclCreateIntArray(few, 3);
        uint64_t size = 0;
        printf("int_array_3 %d %d\n", a != NULL, a ? aclGetIntArraySize(a, &size) : -1);
        printf("int_array_3_size %d\n", (int)size);
        aclDestroyIntArray(a);
        free(many);
    }
    report("count_gt_destmax", aclrtMemcpy(result, 4, x, bytes, ACL_MEMCPY_DEVICE_TO_HOST));

    /* a device pointer freed, then used by a copy and by an operator */
    void *gone = NULL;
    aclrtMalloc(&gone, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    printf("free %d\n", aclrtFree(gone));
    report("freed_memcpy", aclrtMemcpy(result, sizeof result, gone, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    report("freed_tensor", softmax_run(stream, gone, y, 0));
    report("double_free", aclrtFree(gone));

    /* fork(): the child starts afresh, as with the Python API */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        float child[8];
        void *mine = NULL;
        report("child_parent_ptr", aclrtMemcpy(child, sizeof child, x, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        aclrtStream s2 = NULL;
        int ok = aclrtSetDevice(0) == 0 && aclrtCreateStream(&s2) == 0 &&
                 aclrtMalloc(&mine, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == 0 &&
                 aclrtMemcpy(mine, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0;
        printf("child_softmax %d %d\n", ok, ok ? softmax_run(s2, mine, mine, 0) : -1);
        fflush(stdout);
        _exit(0);
    }
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    printf("child_exit %d\n", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    printf("parent_after_fork %d\n", softmax_run(stream, x, y, 0));

    printf("free_x %d\n", aclrtFree(x));
    printf("free_y %d\n", aclrtFree(y));
    printf("destroy_stream %d\n", aclrtDestroyStream(stream));
    printf("reset_device %d\n", aclrtResetDevice(0));
    printf("finalize %d\n", aclFinalize());
    return 0;
}
