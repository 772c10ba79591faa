/*
 * The rest of acl_base.h and acl_rt.h, included by ascendcl.cpp: tensor descriptors, data
 * buffers, data type sizes, the *WithTimeout synchronizes, queries, peers, system parameters,
 * the last error, aclAppLog. Each forwards to aclnn_py.acl (one implementation, shared with
 * pyACL) through a few generic callbacks of toolkit/_bridge.py:
 *
 *   py_acl_call(api, n, args, out)    integer arguments in, up to 4 integer results out, a code
 *   py_acl_dims(api, h, a, n, dims)   a dims array (aclCreateTensorDesc, aclSetTensor*Shape)
 *   py_acl_ranges(api, h, n, pairs)   [min, max] pairs (aclSetTensorShapeRange / ValueRange)
 *   py_acl_text(api, h, text)         a string (aclSetTensorDescName, aclSetTensorDynamicInput)
 *
 * Every declared function this library does not define here or in ascendcl.cpp gets a stub
 * generated when the toolkit is built (toolkit/stubs.py, acl_stubs.inc): it answers
 * ACL_ERROR_API_NOT_SUPPORT (or its documented failure value) with a message.
 */
#include <stdarg.h>

/* A null out-parameter: CANN's ACL_ERROR_INVALID_PARAM, with a message. */
static aclError emb_null(const char *api, const char *what)
{
    return py_acl_fail(api, ACL_ERROR_INVALID_PARAM, what);
}

static aclError emb_call(const char *api, int32_t n, const int64_t *args, int64_t *out)
{
    if (!emb_ready())
        return ACL_ERROR_INTERNAL_ERROR;
    return py_acl_call(api, n, args, out);
}

#define I(x) ((int64_t)(x))
#define P(x) ((int64_t)(uintptr_t)(x))

/* a call whose C result is out[0] (a size, a handle, an enum) */
static int64_t emb_value(const char *api, int32_t n, const int64_t *args, int64_t fail)
{
    int64_t out[4] = {fail, 0, 0, 0};
    if (emb_call(api, n, args, out) != ACL_SUCCESS)
        return fail;
    return out[0];
}

/* ------------------------------------------------------------------------ data types -- */

size_t aclDataTypeSize(aclDataType dataType)
{
    int64_t a[1] = {I(dataType)};
    return (size_t)emb_value("aclDataTypeSize", 1, a, 0);
}

/* ----------------------------------------------------------------- tensor descriptors -- */

aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format)
{
    PTR_READY();
    return (aclTensorDesc *)(uintptr_t)py_acl_dims("aclCreateTensorDesc", I(dataType), I(format), numDims, dims);
}

void aclDestroyTensorDesc(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    emb_value("aclDestroyTensorDesc", 1, a, 0);
}

aclDataType aclGetTensorDescType(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    return (aclDataType)emb_value("aclGetTensorDescType", 1, a, ACL_DT_UNDEFINED);
}

aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    return (aclFormat)emb_value("aclGetTensorDescFormat", 1, a, ACL_FORMAT_UNDEFINED);
}

size_t aclGetTensorDescSize(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    return (size_t)emb_value("aclGetTensorDescSize", 1, a, 0);
}

size_t aclGetTensorDescElementCount(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    return (size_t)emb_value("aclGetTensorDescElementCount", 1, a, 0);
}

size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    return (size_t)emb_value("aclGetTensorDescNumDims", 1, a, 0);
}

int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index)
{
    int64_t a[2] = {P(desc), I(index)};
    return emb_value("aclGetTensorDescDim", 2, a, -1);
}

aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize)
{
    if (!emb_ready())
        return ACL_ERROR_INTERNAL_ERROR;
    if (!dimSize)
        return emb_null("aclGetTensorDescDimV2", "dimSize");
    int64_t a[2] = {P(desc), I(index)}, out[4] = {0};
    aclError ret = py_acl_call("aclGetTensorDescDimV2", 2, a, out);
    if (ret == ACL_SUCCESS)
        *dimSize = out[0];
    return ret;
}

aclError aclGetTensorDescDimRange(const aclTensorDesc *desc, size_t index, size_t dimRangeNum, int64_t *dimRange)
{
    if (!emb_ready())
        return ACL_ERROR_INTERNAL_ERROR;
    if (!dimRange)
        return emb_null("aclGetTensorDescDimRange", "dimRange");
    int64_t a[3] = {P(desc), I(index), I(dimRangeNum)}, out[4] = {0};
    aclError ret = py_acl_call("aclGetTensorDescDimRange", 3, a, out);
    if (ret == ACL_SUCCESS) {
        dimRange[0] = out[0];
        dimRange[1] = out[1];
    }
    return ret;
}

aclError aclSetTensorShapeRange(aclTensorDesc *desc, size_t dimsCount, int64_t dimsRange[][ACL_TENSOR_SHAPE_RANGE_NUM])
{
    ACL_READY();
    return py_acl_ranges("aclSetTensorShapeRange", P(desc), dimsCount, dimsRange ? &dimsRange[0][0] : NULL);
}

aclError aclSetTensorValueRange(aclTensorDesc *desc, size_t valueCount, int64_t valueRange[][ACL_TENSOR_VALUE_RANGE_NUM])
{
    ACL_READY();
    return py_acl_ranges("aclSetTensorValueRange", P(desc), valueCount, valueRange ? &valueRange[0][0] : NULL);
}

void aclSetTensorDescName(aclTensorDesc *desc, const char *name)
{
    if (emb_ready())
        py_acl_text("aclSetTensorDescName", P(desc), name);
}

const char *aclGetTensorDescName(aclTensorDesc *desc)
{
    PTR_READY();
    return py_aclGetTensorDescName(U(desc));
}

aclError aclSetTensorDynamicInput(aclTensorDesc *desc, const char *dynamicInputName)
{
    ACL_READY();
    return py_acl_text("aclSetTensorDynamicInput", P(desc), dynamicInputName);
}

static aclError emb_set(const char *api, int32_t n, const int64_t *args)
{
    int64_t out[4] = {0};
    return emb_call(api, n, args, out);
}

aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format)
{
    int64_t a[2] = {P(desc), I(format)};
    return emb_set("aclSetTensorFormat", 2, a);
}

aclError aclSetTensorStorageFormat(aclTensorDesc *desc, aclFormat format)
{
    int64_t a[2] = {P(desc), I(format)};
    return emb_set("aclSetTensorStorageFormat", 2, a);
}

aclError aclSetTensorOriginFormat(aclTensorDesc *desc, aclFormat format)
{
    int64_t a[2] = {P(desc), I(format)};
    return emb_set("aclSetTensorOriginFormat", 2, a);
}

aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    ACL_READY();
    return (aclError)py_acl_dims("aclSetTensorShape", P(desc), 0, numDims, dims);
}

aclError aclSetTensorStorageShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    ACL_READY();
    return (aclError)py_acl_dims("aclSetTensorStorageShape", P(desc), 0, numDims, dims);
}

aclError aclSetTensorOriginShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    ACL_READY();
    return (aclError)py_acl_dims("aclSetTensorOriginShape", P(desc), 0, numDims, dims);
}

aclError aclSetTensorConst(aclTensorDesc *desc, void *dataBuffer, size_t length)
{
    int64_t a[3] = {P(desc), P(dataBuffer), I(length)};
    return emb_set("aclSetTensorConst", 3, a);
}

aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType)
{
    int64_t a[2] = {P(desc), I(memType)};
    return emb_set("aclSetTensorPlaceMent", 2, a);
}

void *aclGetTensorDescAddress(const aclTensorDesc *desc)
{
    int64_t a[1] = {P(desc)};
    return (void *)(uintptr_t)emb_value("aclGetTensorDescAddress", 1, a, 0);
}

/* ---------------------------------------------------------------------- data buffers -- */

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    int64_t a[2] = {P(data), I(size)};
    return (aclDataBuffer *)(uintptr_t)emb_value("aclCreateDataBuffer", 2, a, 0);
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    int64_t a[1] = {P(dataBuffer)};
    return emb_set("aclDestroyDataBuffer", 1, a);
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
    int64_t a[3] = {P(dataBuffer), P(data), I(size)};
    return emb_set("aclUpdateDataBuffer", 3, a);
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    int64_t a[1] = {P(dataBuffer)};
    return (void *)(uintptr_t)emb_value("aclGetDataBufferAddr", 1, a, 0);
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
    int64_t a[1] = {P(dataBuffer)};
    return (uint32_t)emb_value("aclGetDataBufferSize", 1, a, 0);
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    int64_t a[1] = {P(dataBuffer)};
    return (size_t)emb_value("aclGetDataBufferSizeV2", 1, a, 0);
}

/* ------------------------------------------------------------------------- logging ----- */

/* aclAppLog: the application's log line on stderr when its level is at least
   ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 3 error; 3 when unset, CANN's default), as
   "[LEVEL] func(file:line) message". CANN writes it to its log files instead. */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)
{
    static const char *names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    const char *env = getenv("ASCEND_GLOBAL_LOG_LEVEL");
    int threshold = (env && env[0] >= '0' && env[0] <= '4' && !env[1]) ? env[0] - '0' : 3;
    if ((int)logLevel < threshold || (int)logLevel < 0 || (int)logLevel > 3 || !fmt)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[%s] %s(%s:%u) %s\n", names[logLevel], func ? func : "?", file ? file : "?",
            (unsigned)line, text);
}

/* ------------------------------------------------------------------------ runtime ------ */

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    int64_t a[2] = {P(stream), I(timeout)};
    return emb_set("aclrtSynchronizeStreamWithTimeout", 2, a);
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
    int64_t a[2] = {P(event), I(timeout)};
    return emb_set("aclrtSynchronizeEventWithTimeout", 2, a);
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
    int64_t a[1] = {I(timeout)};
    return emb_set("aclrtSynchronizeDeviceWithTimeout", 1, a);
}

/* aclError f(..., T *out): out[0] written on success; a null out gets 100000 */
#define EMB_OUT(api, T, outp, n, ...)                                                          \
    do {                                                                                       \
        if (!emb_ready())                                                                      \
            return ACL_ERROR_INTERNAL_ERROR;                                                   \
        if (!(outp))                                                                           \
            return emb_null(api, #outp);                                                       \
        int64_t a_[] = {0, __VA_ARGS__}, o_[4] = {0};                                          \
        aclError r_ = py_acl_call(api, n, a_ + 1, o_);                                         \
        if (r_ == ACL_SUCCESS)                                                                 \
            *(outp) = (T)o_[0];                                                                \
        return r_;                                                                             \
    } while (0)

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
    EMB_OUT("aclrtQueryEvent", aclrtEventStatus, status, 1, P(event));
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    EMB_OUT("aclrtStreamQuery", aclrtStreamStatus, status, 1, P(stream));
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    EMB_OUT("aclrtCreateEventWithFlag", aclrtEvent, event, 1, I(flag));
}

aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    EMB_OUT("aclrtCreateEventExWithFlag", aclrtEvent, event, 1, I(flag));
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
    EMB_OUT("aclrtCreateStreamWithConfig", aclrtStream, stream, 2, I(priority), I(flag));
}

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)
{
    EMB_OUT("aclrtDeviceCanAccessPeer", int32_t, canAccessPeer, 2, I(deviceId), I(peerDeviceId));
}

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)
{
    EMB_OUT("aclrtQueryDeviceStatus", aclrtDeviceStatus, deviceStatus, 1, I(deviceId));
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    int64_t a[2] = {I(peerDeviceId), I(flags)};
    return emb_set("aclrtDeviceEnablePeerAccess", 2, a);
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)
{
    int64_t a[1] = {I(peerDeviceId)};
    return emb_set("aclrtDeviceDisablePeerAccess", 1, a);
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    int64_t a[2] = {I(opt), value};
    return emb_set("aclrtSetSysParamOpt", 2, a);
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    int64_t a[2] = {I(opt), value};
    return emb_set("aclrtCtxSetSysParamOpt", 2, a);
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    EMB_OUT("aclrtGetSysParamOpt", int64_t, value, 1, I(opt));
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    EMB_OUT("aclrtCtxGetSysParamOpt", int64_t, value, 1, I(opt));
}

aclError aclrtGetLastError(aclrtLastErrLevel level)
{
    int64_t a[1] = {I(level)};
    return (aclError)emb_value("aclrtGetLastError", 1, a, ACL_ERROR_INTERNAL_ERROR);
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
    int64_t a[1] = {I(level)};
    return (aclError)emb_value("aclrtPeekAtLastError", 1, a, ACL_ERROR_INTERNAL_ERROR);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return aclrtMalloc(devPtr, size, policy);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return aclrtMalloc(devPtr, size, policy);
}

aclError aclrtMemFlush(void *devPtr, size_t size)
{
    int64_t a[2] = {P(devPtr), I(size)};
    return emb_set("aclrtMemFlush", 2, a);
}

aclError aclrtMemInvalidate(void *devPtr, size_t size)
{
    int64_t a[2] = {P(devPtr), I(size)};
    return emb_set("aclrtMemInvalidate", 2, a);
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    if (!emb_ready())
        return ACL_ERROR_INTERNAL_ERROR;
    if (!majorVersion || !minorVersion || !patchVersion)
        return emb_null("aclrtGetVersion", !majorVersion ? "majorVersion"
                                           : !minorVersion ? "minorVersion" : "patchVersion");
    int64_t out[4] = {0};
    aclError ret = py_acl_call("aclrtGetVersion", 0, NULL, out);
    if (ret == ACL_SUCCESS) {
        *majorVersion = (int32_t)out[0];
        *minorVersion = (int32_t)out[1];
        *patchVersion = (int32_t)out[2];
    }
    return ret;
}

#undef EMB_OUT
#undef I
#undef P

/* ------------------------------------------- everything else: ACL_ERROR_API_NOT_SUPPORT -- */

static void emb_not_supported(const char *api)
{
    if (emb_ready())
        py_acl_fail(api, ACL_ERROR_API_NOT_SUPPORT, NULL);
}

#include "acl_stubs.inc"
