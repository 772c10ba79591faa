/*
 * A C99 program over acl_base.h and the rest of acl_rt.h (tests/test_toolkit_acl.py): tensor
 * descriptors, data buffers, data type sizes, the *WithTimeout synchronizes, queries and a
 * function the emulator does not implement. Each check prints one line "name value..."; the
 * test compares them with NumPy and CANN's documented codes. Message lines carry
 * aclGetRecentErrMsg()'s text.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"

static void message(const char *name)
{
    const char *msg = aclGetRecentErrMsg();
    printf("%s_msg %s\n", name, msg ? msg : "(none)");
}

/* one descriptor: its type, size, count, number of dims, the dims and the format */
static void describe(const char *name, aclDataType dtype, int n, const int64_t *dims)
{
    aclTensorDesc *desc = aclCreateTensorDesc(dtype, n, dims, ACL_FORMAT_NCHW);
    printf("%s %d %zu %zu %zu %d", name, (int)aclGetTensorDescType(desc), aclGetTensorDescSize(desc),
           aclGetTensorDescElementCount(desc), aclGetTensorDescNumDims(desc),
           (int)aclGetTensorDescFormat(desc));
    for (int i = 0; i < n; i++) {
        int64_t dim = -99;
        int ret = aclGetTensorDescDimV2(desc, (size_t)i, &dim);
        printf(" %lld/%d/%lld", (long long)dim, ret, (long long)aclGetTensorDescDim(desc, (size_t)i));
    }
    printf("\n");
    aclDestroyTensorDesc(desc);
}

static char block_for_bogus[4];

int main(void)
{
    printf("init %d\n", aclInit(NULL));
    /* data type sizes */
    const aclDataType types[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32, ACL_UINT8, ACL_INT16,
                                 ACL_UINT16, ACL_UINT32, ACL_INT64, ACL_UINT64, ACL_DOUBLE, ACL_BOOL,
                                 ACL_COMPLEX64, ACL_COMPLEX128, ACL_BF16};
    printf("sizes");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        printf(" %d:%zu", (int)types[i], aclDataTypeSize(types[i]));
    printf("\n");

    /* descriptors */
    const int64_t d4[4] = {2, 3, 4, 5}, d1[1] = {7}, empty[2] = {3, 0}, dyn[2] = {-1, 4};
    const int64_t unknown[1] = {-2};
    describe("f32_2345", ACL_FLOAT, 4, d4);
    describe("f16_7", ACL_FLOAT16, 1, d1);
    describe("i64_30", ACL_INT64, 2, empty);
    describe("c128_7", ACL_COMPLEX128, 1, d1);
    describe("f64_scalar", ACL_DOUBLE, 0, NULL);
    describe("f32_dyn", ACL_FLOAT, 2, dyn);
    describe("f32_unknown_rank", ACL_FLOAT, 1, unknown);

    aclTensorDesc *desc = aclCreateTensorDesc(ACL_FLOAT, 4, d4, ACL_FORMAT_ND);
    int64_t dim = 0;
    printf("dim_out_of_range %d\n", aclGetTensorDescDimV2(desc, 4, &dim));
    message("dim_out_of_range");
    printf("dim_null_out %d\n", aclGetTensorDescDimV2(desc, 0, NULL));
    message("dim_null_out");
    printf("dim_deprecated_out_of_range %lld\n", (long long)aclGetTensorDescDim(desc, 9));
    aclGetRecentErrMsg();

    int64_t range[2] = {0, 0};
    int ret = aclGetTensorDescDimRange(desc, 1, 2, range);
    printf("range_static %d %lld %lld\n", ret, (long long)range[0], (long long)range[1]);
    int64_t ranges[4][ACL_TENSOR_SHAPE_RANGE_NUM] = {{1, 2}, {3, 3}, {1, -1}, {5, 8}};
    printf("set_range %d\n", aclSetTensorShapeRange(desc, 4, ranges));
    ret = aclGetTensorDescDimRange(desc, 2, 2, range);
    printf("range_set %d %lld %lld\n", ret, (long long)range[0], (long long)range[1]);
    printf("set_range_wrong_count %d\n", aclSetTensorShapeRange(desc, 3, ranges));
    message("set_range_wrong_count");
    printf("range_short %d\n", aclGetTensorDescDimRange(desc, 0, 1, range));
    aclGetRecentErrMsg();

    printf("name_unset [%s]\n", aclGetTensorDescName(desc));
    aclSetTensorDescName(desc, "x_input");
    printf("name_set [%s]\n", aclGetTensorDescName(desc));
    ret = aclSetTensorFormat(desc, ACL_FORMAT_NHWC);
    printf("set_format %d %d\n", ret, (int)aclGetTensorDescFormat(desc));
    const int64_t reshaped[2] = {6, 20};
    ret = aclSetTensorShape(desc, 2, reshaped);
    printf("set_shape %d %zu %zu %zu\n", ret, aclGetTensorDescNumDims(desc), aclGetTensorDescElementCount(desc),
           aclGetTensorDescSize(desc));
    printf("set_shape_null %d\n", aclSetTensorShape(desc, 2, NULL));
    aclGetRecentErrMsg();
    printf("storage %d", aclSetTensorStorageFormat(desc, ACL_FORMAT_NC1HWC0));
    printf(" %d", aclSetTensorStorageShape(desc, 2, reshaped));
    printf(" %d", aclSetTensorOriginFormat(desc, ACL_FORMAT_NCHW));
    printf(" %d\n", aclSetTensorOriginShape(desc, 2, reshaped));
    static float constant[4] = {1, 2, 3, 4};
    ret = aclSetTensorConst(desc, constant, sizeof constant);
    printf("const %d %d\n", ret, aclGetTensorDescAddress(desc) == (void *)constant);
    printf("placement %d", aclSetTensorPlaceMent(desc, ACL_MEMTYPE_HOST));
    printf(" %d\n", aclSetTensorPlaceMent(desc, (aclMemType)7));
    aclGetRecentErrMsg();
    printf("dynamic_input %d\n", aclSetTensorDynamicInput(desc, "x"));
    aclDestroyTensorDesc(desc);
    aclDestroyTensorDesc(desc); /* a second destroy: a message, no crash */
    message("destroy_twice");
    printf("after_destroy %d", (int)aclGetTensorDescType(desc));
    printf(" %zu %zu\n", aclGetTensorDescSize(desc), aclGetTensorDescNumDims(desc));
    aclGetRecentErrMsg();
    aclDestroyTensorDesc(NULL); /* ignored, as in CANN */
    printf("null_desc %d", (int)aclGetTensorDescType(NULL));
    printf(" %d", (int)aclGetTensorDescFormat(NULL));
    printf(" %zu", aclGetTensorDescElementCount(NULL));
    printf(" %p\n", (void *)aclGetTensorDescName(NULL));
    aclGetRecentErrMsg();
    printf("create_null_dims %p\n", (void *)aclCreateTensorDesc(ACL_FLOAT, 2, NULL, ACL_FORMAT_ND));
    message("create_null_dims");
    printf("create_negative_num %p\n", (void *)aclCreateTensorDesc(ACL_FLOAT, -1, d4, ACL_FORMAT_ND));
    aclGetRecentErrMsg();

    /* a value that was never a handle, and null: failure values and codes, never a crash */
    aclTensorDesc *bogus = (aclTensorDesc *)(uintptr_t)0x1234;
    int64_t pairs[1][ACL_TENSOR_SHAPE_RANGE_NUM] = {{1, 2}};
    printf("bogus %d %zu %zu %d", (int)aclGetTensorDescType(bogus), aclGetTensorDescSize(bogus),
           aclGetTensorDescNumDims(bogus), aclGetTensorDescDimV2(bogus, 0, &dim));
    printf(" %d %d", aclGetTensorDescDimRange(bogus, 0, 2, range), aclSetTensorShapeRange(bogus, 1, pairs));
    printf(" %d %d", aclSetTensorShapeRange(NULL, 1, pairs), aclSetTensorValueRange(bogus, 1, NULL));
    printf(" %d %d", aclSetTensorFormat(NULL, ACL_FORMAT_ND), aclSetTensorShape(bogus, 1, d1));
    printf(" %d %p", aclSetTensorDynamicInput(bogus, NULL), aclGetTensorDescAddress(NULL));
    aclSetTensorDescName(bogus, "x");
    aclDestroyTensorDesc(bogus);
    printf(" %d %d\n", aclUpdateDataBuffer((aclDataBuffer *)(uintptr_t)0x99, block_for_bogus, 1),
           aclDestroyDataBuffer((aclDataBuffer *)(uintptr_t)0x99));
    message("bogus");

    /* data buffers */
    static char block[100];
    aclDataBuffer *buf = aclCreateDataBuffer(block, sizeof block);
    printf("buffer %d %zu %u\n", aclGetDataBufferAddr(buf) == (void *)block, aclGetDataBufferSizeV2(buf),
           aclGetDataBufferSize(buf));
    ret = aclUpdateDataBuffer(buf, block + 10, 50);
    printf("buffer_update %d %d %zu\n", ret, aclGetDataBufferAddr(buf) == (void *)(block + 10),
           aclGetDataBufferSizeV2(buf));
    printf("buffer_destroy %d\n", aclDestroyDataBuffer(buf));
    printf("buffer_destroy_again %d\n", aclDestroyDataBuffer(buf));
    message("buffer_destroy_again");
    printf("buffer_after %p %zu\n", aclGetDataBufferAddr(buf), aclGetDataBufferSizeV2(buf));
    aclGetRecentErrMsg();
    aclDataBuffer *empty_buf = aclCreateDataBuffer(NULL, 0);
    printf("buffer_empty %d %zu", empty_buf != NULL, aclGetDataBufferSizeV2(empty_buf));
    printf(" %d\n", aclDestroyDataBuffer(empty_buf));
    printf("buffer_null_data %p\n", (void *)aclCreateDataBuffer(NULL, 8));
    aclGetRecentErrMsg();
    printf("buffer_null %d", aclDestroyDataBuffer(NULL));
    printf(" %p %zu\n", aclGetDataBufferAddr(NULL), aclGetDataBufferSizeV2(NULL));
    aclGetRecentErrMsg();

    /* the runtime: version, queries, peers, system parameters */
    int32_t major = -1, minor = -1, patch = -1;
    ret = aclrtGetVersion(&major, &minor, &patch);
    printf("version %d %d %d %d %d\n", ret, major, minor, patch,
           major == ACL_MAJOR_VERSION && minor == ACL_MINOR_VERSION && patch == ACL_PATCH_VERSION);
    printf("set_device %d\n", aclrtSetDevice(0));
    uint32_t count = 0;
    ret = aclrtGetDeviceCount(&count);
    printf("device_count %d %u\n", ret, count);
    aclrtDeviceStatus dstatus = ACL_RT_DEVICE_STATUS_END;
    ret = aclrtQueryDeviceStatus(0, &dstatus);
    printf("device_status %d %d", ret, (int)dstatus);
    printf(" %d\n", aclrtQueryDeviceStatus(64, &dstatus));
    aclGetRecentErrMsg();
    int32_t can = -1;
    printf("peer_self %d\n", aclrtDeviceCanAccessPeer(&can, 0, 0));
    aclGetRecentErrMsg();
    int64_t value = -1;
    printf("sys_param_unset %d\n", aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
    aclGetRecentErrMsg();
    printf("sys_param %d", aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
    ret = aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value);
    printf(" %d %lld\n", ret, (long long)value);
    aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    aclrtGetDevice(NULL);
    aclGetRecentErrMsg();
    int peek = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
    int last = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    printf("last_error %d %d", peek, last);
    printf(" %d\n", aclrtGetLastError(ACL_RT_THREAD_LEVEL));

    /* timeouts: stream b is busy with 512 MiB of memsets; stream a waits for an event recorded
       after them, so a is blocked by the waiting event */
    aclrtStream a = NULL, b = NULL;
    aclrtEvent ev = NULL;
    aclrtCreateStream(&a);
    aclrtCreateStream(&b);
    printf("event_with_flag %d\n", aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
    size_t n = (size_t)64 << 20;
    void *dev = NULL;
    aclrtMalloc(&dev, n, ACL_MEM_MALLOC_HUGE_FIRST);
    for (int i = 1; i <= 8; i++)
        aclrtMemsetAsync(dev, n, i, n, b);
    aclrtRecordEvent(ev, b);
    aclrtStreamWaitEvent(a, ev);
    aclrtStreamStatus sstatus = ACL_STREAM_STATUS_RESERVED;
    ret = aclrtStreamQuery(a, &sstatus);
    printf("stream_query_busy %d %d\n", ret, (int)sstatus);
    aclrtEventStatus estatus = ACL_EVENT_STATUS_RESERVED;
    ret = aclrtQueryEvent(ev, &estatus);
    printf("query_event_busy %d %d\n", ret, (int)estatus);
    printf("sync_stream_timeout %d\n", aclrtSynchronizeStreamWithTimeout(a, 1));
    message("sync_stream_timeout");
    printf("sync_event_timeout %d\n", aclrtSynchronizeEventWithTimeout(ev, 1));
    message("sync_event_timeout");
    printf("sync_device_timeout %d\n", aclrtSynchronizeDeviceWithTimeout(1));
    message("sync_device_timeout");
    printf("sync_bad_timeout %d\n", aclrtSynchronizeStreamWithTimeout(a, 0));
    aclGetRecentErrMsg();
    printf("sync_event_forever %d\n", aclrtSynchronizeEventWithTimeout(ev, -1));
    printf("sync_stream_in_time %d\n", aclrtSynchronizeStreamWithTimeout(a, 60000));
    printf("sync_device_in_time %d\n", aclrtSynchronizeDeviceWithTimeout(60000));
    ret = aclrtStreamQuery(a, &sstatus);
    printf("stream_query_done %d %d\n", ret, (int)sstatus);
    ret = aclrtQueryEvent(ev, &estatus);
    printf("query_event_done %d %d\n", ret, (int)estatus);
    printf("query_null_out %d\n", aclrtStreamQuery(a, NULL));
    aclGetRecentErrMsg();
    unsigned char tail[16];
    aclrtMemcpy(tail, sizeof tail, (char *)dev + n - 16, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("memset_tail %d\n", tail[0]);
    printf("flush %d\n", aclrtMemFlush(dev, n));

    /* a function the emulator does not implement */
    printf("not_supported %d\n", aclrtSetOpWaitTimeout(10));
    message("not_supported");
    printf("not_supported_ptr %p\n", (void *)aclopCreateAttr());
    message("not_supported_ptr");
    printf("compile_not_supported %d\n", aclSetCompileopt(ACL_PRECISION_MODE, "allow_fp32_to_fp16"));
    aclGetRecentErrMsg();
    uint32_t model = 0;
    printf("model_not_supported %d", aclmdlLoadFromFile("model.om", &model));
    printf(" %p\n", (void *)aclmdlCreateDesc());
    aclGetRecentErrMsg();

    aclrtFree(dev);
    aclrtDestroyEvent(ev);
    aclrtDestroyStream(a);
    aclrtDestroyStream(b);
    aclrtResetDevice(0);
    printf("finalize %d\n", aclFinalize());
    return 0;
}
