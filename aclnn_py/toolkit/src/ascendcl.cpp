/*
 * libascendcl.so: CANN's C API (acl.h and the ACL headers it includes, acl_op_compiler.h,
 * acl_meta.h, the aclnn operator headers) over the aclnn-py emulator. Every entry point forwards
 * to the Python runtime and operators (aclnn_py.acl, aclnn_py.aclnn) through cffi's embedding
 * mode, so codes, check order, aclGetRecentErrMsg texts, asynchrony and the memory checks are
 * those of the Python API.
 *
 * toolkit/build.py pastes this file after cffi's generated prologue (Python.h is included) and
 * after emb_config.h, which it writes on the user's machine: EMB_PROGRAM (the interpreter that
 * built the toolkit), EMB_PATH_CODE (Python code adding its environment to sys.path) and
 * EMB_LIBPYTHON (the shared libpython's file name).
 *
 * The interpreter is started on the first call, from whichever thread makes it; every call then
 * takes the GIL for its Python part (cffi does that), and the streams' work runs in the emulator's
 * C threads without it.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"

/* The Python callbacks (py_*) are declared static before this file by toolkit/build.py, from
   callbacks.h; cffi defines them after it. */

#define EMB_PING_OK 0x5aac1

/* ------------------------------------------------------------------ helpers for Python -- */

/* aclGetRecentErrMsg's text: a copy per thread, valid until the thread's next call, freed
   when the thread exits. */
static pthread_key_t emb_message_key;
static pthread_once_t emb_message_once = PTHREAD_ONCE_INIT;

static void emb_message_key_init(void)
{
    pthread_key_create(&emb_message_key, free);
}

static char *emb_keep_message(const char *text)
{
    pthread_once(&emb_message_once, emb_message_key_init);
    free(pthread_getspecific(emb_message_key));
    char *copy = text ? strdup(text) : NULL;
    pthread_setspecific(emb_message_key, copy);
    return copy;
}

/* aclrtGetSocName's text: kept for the life of the process (a handful of distinct names). */
static pthread_mutex_t emb_intern_lock = PTHREAD_MUTEX_INITIALIZER;
struct emb_interned {
    struct emb_interned *next;
    char *text;
};
static struct emb_interned *emb_interned_list;

static char *emb_intern(const char *text)
{
    char *found = NULL;
    pthread_mutex_lock(&emb_intern_lock);
    for (struct emb_interned *it = emb_interned_list; it; it = it->next) {
        if (strcmp(it->text, text) == 0) {
            found = it->text;
            break;
        }
    }
    if (!found) {
        struct emb_interned *it = (struct emb_interned *)malloc(sizeof *it);
        char *copy = strdup(text);
        if (it && copy) {
            it->text = copy;
            it->next = emb_interned_list;
            emb_interned_list = it;
            found = copy;
        } else {
            free(it);
            free(copy);
        }
    }
    pthread_mutex_unlock(&emb_intern_lock);
    return found;
}

/* The getters' arrays: new[] as in CANN, so that callers release them with delete[]. */
static int64_t *emb_new_dims(uint64_t n)
{
    return new (std::nothrow) int64_t[n ? n : 1];
}

/* ------------------------------------------------------------- starting the interpreter -- */

enum { EMB_NOT_STARTED, EMB_READY, EMB_FAILED };
static int emb_state = EMB_NOT_STARTED;
static pthread_once_t emb_once = PTHREAD_ONCE_INIT;
static int emb_started_python; /* this library initialised the interpreter */

/* fork() from C: the interpreter's own fork protocol (what os.fork() does), so the Python
   runtime drops the parent's handles in the child as it does for Python programs. A fork made
   by Python code already holds the GIL and does this itself. */
static __thread int emb_fork_owner;
static __thread PyGILState_STATE emb_fork_gil;

static void emb_fork_prepare(void)
{
    if (emb_state != EMB_READY || PyGILState_Check())
        return;
    emb_fork_gil = PyGILState_Ensure();
    PyOS_BeforeFork();
    emb_fork_owner = 1;
}

static void emb_fork_parent(void)
{
    if (!emb_fork_owner)
        return;
    emb_fork_owner = 0;
    PyOS_AfterFork_Parent();
    PyGILState_Release(emb_fork_gil);
}

static void emb_fork_child(void)
{
    if (!emb_fork_owner)
        return;
    emb_fork_owner = 0;
    PyOS_AfterFork_Child();
    PyEval_SaveThread(); /* this thread is the child's main thread: keep its state, drop the GIL */
}

/* exit() or a return from main: the interpreter this library started is never finalized, so
   Python's exit-time work (the trace file, the checkers' last reports: aclnn_py's atexit
   functions) runs here, the last C atexit handler registered, so before those registered earlier
   and before the libraries' destructors; a program that never calls aclFinalize (CANN's
   CHECK_RET(...; return) pattern) still gets its diagnostics. The bridge runs them once. */
static void emb_at_exit(void)
{
    if (emb_state == EMB_READY && Py_IsInitialized())
        py_at_exit(); /* cffi takes the GIL */
}

static void emb_start(void)
{
    /* libpython's symbols must be global for the extension modules Python imports (numpy, the
       emulator's core), also when this library was dlopen()ed with RTLD_LOCAL */
    dlopen(EMB_LIBPYTHON, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);

    if (!Py_IsInitialized()) {
        PyConfig config;
        PyConfig_InitPythonConfig(&config);
        config.install_signal_handlers = 0; /* the host program keeps its signals */
        config.parse_argv = 0;
        config.use_environment = 0; /* PYTHONHOME / PYTHONPATH of another Python do not apply */
        PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, EMB_PROGRAM);
        if (!PyStatus_Exception(status))
            status = Py_InitializeFromConfig(&config);
        PyConfig_Clear(&config);
        if (PyStatus_Exception(status)) {
            fprintf(stderr,
                    "aclnn-py: cannot start the Python interpreter %s (%s); rebuild the toolkit "
                    "with `aclnn-py toolkit --rebuild` from the environment aclnn-py is "
                    "installed in\n",
                    EMB_PROGRAM, status.err_msg ? status.err_msg : "unknown error");
            emb_state = EMB_FAILED;
            return;
        }
        emb_started_python = 1;
        if (PyRun_SimpleString(EMB_PATH_CODE) != 0) {
            fprintf(stderr, "aclnn-py: cannot set up sys.path for the embedded interpreter\n");
            PyEval_SaveThread();
            emb_state = EMB_FAILED;
            return;
        }
        PyEval_SaveThread();
    } else {
        PyGILState_STATE gil = PyGILState_Ensure();
        PyRun_SimpleString(EMB_PATH_CODE);
        PyGILState_Release(gil);
    }
    /* the first call of a Python callback runs cffi's start-up: the bridge's init code */
    if (py_ping() != EMB_PING_OK) {
        fprintf(stderr,
                "aclnn-py: the emulator did not start in the embedded interpreter %s (see the "
                "Python error above); every call returns an error. If the environment aclnn-py "
                "was installed in moved or changed, run `aclnn-py toolkit --rebuild` with the "
                "Python you use now and rebuild the program against the toolkit it prints "
                "(docs/c_api.md)\n",
                EMB_PROGRAM);
        emb_state = EMB_FAILED;
        return;
    }
    if (emb_started_python) {
        pthread_atfork(emb_fork_prepare, emb_fork_parent, emb_fork_child);
        atexit(emb_at_exit);
    }
    emb_state = EMB_READY;
}

static inline int emb_ready(void)
{
    pthread_once(&emb_once, emb_start);
    return emb_state == EMB_READY;
}

#define U(p) ((uintptr_t)(p))
#define ACL_READY()                                                                            \
    do {                                                                                       \
        if (!emb_ready())                                                                      \
            return ACL_ERROR_INTERNAL_ERROR;                                                   \
    } while (0)
#define NN_READY()                                                                             \
    do {                                                                                       \
        if (!emb_ready())                                                                      \
            return 561000; /* ACLNN_ERR_INNER */                                               \
    } while (0)
#define PTR_READY()                                                                            \
    do {                                                                                       \
        if (!emb_ready())                                                                      \
            return NULL;                                                                       \
    } while (0)

/* ------------------------------------------------------------------------- acl.h --------- */

aclError aclInit(const char *configPath) { ACL_READY(); return py_aclInit(configPath); }
aclError aclFinalize(void) { ACL_READY(); return py_aclFinalize(); }
const char *aclGetRecentErrMsg(void) { PTR_READY(); return py_aclGetRecentErrMsg(); }

/* ------------------------------------------------------------------------ acl_rt.h ------- */

aclError aclrtSetDevice(int32_t deviceId) { ACL_READY(); return py_aclrtSetDevice(deviceId); }
aclError aclrtResetDevice(int32_t deviceId) { ACL_READY(); return py_aclrtResetDevice(deviceId); }
aclError aclrtGetDevice(int32_t *deviceId) { ACL_READY(); return py_aclrtGetDevice(deviceId); }
aclError aclrtGetDeviceCount(uint32_t *count) { ACL_READY(); return py_aclrtGetDeviceCount(count); }
aclError aclrtSynchronizeDevice(void) { ACL_READY(); return py_aclrtSynchronizeDevice(); }
const char *aclrtGetSocName(void) { PTR_READY(); return py_aclrtGetSocName(); }

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    ACL_READY();
    int32_t mode = 0;
    aclError ret = py_aclrtGetRunMode(runMode ? &mode : NULL);
    if (ret == ACL_SUCCESS)
        *runMode = (aclrtRunMode)mode;
    return ret;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    ACL_READY();
    uintptr_t h = 0;
    aclError ret = py_aclrtCreateContext(context ? &h : NULL, deviceId);
    if (ret == ACL_SUCCESS)
        *context = (aclrtContext)h;
    return ret;
}

aclError aclrtDestroyContext(aclrtContext context) { ACL_READY(); return py_aclrtDestroyContext(U(context)); }
aclError aclrtSetCurrentContext(aclrtContext context) { ACL_READY(); return py_aclrtSetCurrentContext(U(context)); }

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    ACL_READY();
    uintptr_t h = 0;
    aclError ret = py_aclrtGetCurrentContext(context ? &h : NULL);
    if (ret == ACL_SUCCESS)
        *context = (aclrtContext)h;
    return ret;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    ACL_READY();
    uintptr_t h = 0;
    aclError ret = py_aclrtCreateStream(stream ? &h : NULL);
    if (ret == ACL_SUCCESS)
        *stream = (aclrtStream)h;
    return ret;
}

aclError aclrtDestroyStream(aclrtStream stream) { ACL_READY(); return py_aclrtDestroyStream(U(stream)); }
aclError aclrtSynchronizeStream(aclrtStream stream) { ACL_READY(); return py_aclrtSynchronizeStream(U(stream)); }

aclError aclrtCreateEvent(aclrtEvent *event)
{
    ACL_READY();
    uintptr_t h = 0;
    aclError ret = py_aclrtCreateEvent(event ? &h : NULL);
    if (ret == ACL_SUCCESS)
        *event = (aclrtEvent)h;
    return ret;
}

aclError aclrtDestroyEvent(aclrtEvent event) { ACL_READY(); return py_aclrtDestroyEvent(U(event)); }
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) { ACL_READY(); return py_aclrtRecordEvent(U(event), U(stream)); }
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) { ACL_READY(); return py_aclrtResetEvent(U(event), U(stream)); }
aclError aclrtSynchronizeEvent(aclrtEvent event) { ACL_READY(); return py_aclrtSynchronizeEvent(U(event)); }
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) { ACL_READY(); return py_aclrtStreamWaitEvent(U(stream), U(event)); }

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    ACL_READY();
    int32_t s = 0;
    aclError ret = py_aclrtQueryEventStatus(U(event), status ? &s : NULL);
    if (ret == ACL_SUCCESS)
        *status = (aclrtEventRecordedStatus)s;
    return ret;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    ACL_READY();
    return py_aclrtEventElapsedTime(ms, U(startEvent), U(endEvent));
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    ACL_READY();
    uintptr_t p = 0;
    aclError ret = py_aclrtMalloc(devPtr ? &p : NULL, size, (int32_t)policy);
    if (ret == ACL_SUCCESS)
        *devPtr = (void *)p;
    return ret;
}

aclError aclrtFree(void *devPtr) { ACL_READY(); return py_aclrtFree(U(devPtr)); }

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    ACL_READY();
    uintptr_t p = 0;
    aclError ret = py_aclrtMallocHost(hostPtr ? &p : NULL, size);
    if (ret == ACL_SUCCESS)
        *hostPtr = (void *)p;
    return ret;
}

aclError aclrtFreeHost(void *hostPtr) { ACL_READY(); return py_aclrtFreeHost(U(hostPtr)); }

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    ACL_READY();
    return py_aclrtMemcpy(U(dst), destMax, U(src), count, (int32_t)kind);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream)
{
    ACL_READY();
    return py_aclrtMemcpyAsync(U(dst), destMax, U(src), count, (int32_t)kind, U(stream));
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    ACL_READY();
    return py_aclrtMemset(U(devPtr), maxCount, value, count);
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream)
{
    ACL_READY();
    return py_aclrtMemsetAsync(U(devPtr), maxCount, value, count, U(stream));
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
    ACL_READY();
    return py_aclrtGetMemInfo((int32_t)attr, free, total);
}

/* ---------------------------------------------------------------------- acl_meta.h ------- */

aclnnStatus aclnnInit(const char *configPath) { NN_READY(); return py_aclnnInit(configPath); }
aclnnStatus aclnnFinalize(void) { NN_READY(); return py_aclnnFinalize(); }

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)
{
    PTR_READY();
    return (aclTensor *)py_aclCreateTensor(viewDims, viewDimsNum, (int32_t)dataType, stride, offset,
                                           (int32_t)format, storageDims, storageDimsNum, U(tensorData));
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    PTR_READY();
    return (aclScalar *)py_aclCreateScalar(U(value), (int32_t)dataType);
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    PTR_READY();
    return (aclIntArray *)py_aclCreateIntArray(value, size);
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) { NN_READY(); return py_aclDestroy("aclDestroyTensor", U(tensor)); }
aclnnStatus aclDestroyScalar(const aclScalar *scalar) { NN_READY(); return py_aclDestroy("aclDestroyScalar", U(scalar)); }
aclnnStatus aclDestroyIntArray(const aclIntArray *array) { NN_READY(); return py_aclDestroy("aclDestroyIntArray", U(array)); }

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    NN_READY();
    return py_aclGetDims("aclGetViewShape", U(tensor), viewDims, viewDimsNum);
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    NN_READY();
    return py_aclGetDims("aclGetStorageShape", U(tensor), storageDims, storageDimsNum);
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    NN_READY();
    return py_aclGetDims("aclGetViewStrides", U(tensor), stridesValue, stridesNum);
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    NN_READY();
    int64_t v = 0;
    aclnnStatus ret = py_aclGetInt("aclGetViewOffset", U(tensor), offset ? &v : NULL);
    if (ret == 0)
        *offset = v;
    return ret;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    NN_READY();
    int64_t v = 0;
    aclnnStatus ret = py_aclGetInt("aclGetFormat", U(tensor), format ? &v : NULL);
    if (ret == 0)
        *format = (aclFormat)v;
    return ret;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    NN_READY();
    int64_t v = 0;
    aclnnStatus ret = py_aclGetInt("aclGetDataType", U(tensor), dataType ? &v : NULL);
    if (ret == 0)
        *dataType = (aclDataType)v;
    return ret;
}

aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size)
{
    NN_READY();
    return py_aclGetIntArraySize(U(array), size);
}

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr)
{
    NN_READY();
    uintptr_t a = 0;
    aclnnStatus ret = py_aclGetRawTensorAddr(U(tensor), addr ? &a : NULL);
    if (ret == 0)
        *addr = (void *)a;
    return ret;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)
{
    NN_READY();
    return py_aclSetRawTensorAddr(U(tensor), U(addr));
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    NN_READY();
    return py_aclExecutorCall("aclSetAclOpExecutorRepeatable", U(executor));
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    NN_READY();
    return py_aclExecutorCall("aclDestroyAclOpExecutor", U(executor));
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    NN_READY();
    return py_aclSetTensorAddr("aclSetInputTensorAddr", U(executor), index, U(tensor), U(addr));
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    NN_READY();
    return py_aclSetTensorAddr("aclSetOutputTensorAddr", U(executor), index, U(tensor), U(addr));
}

/* ---------------------------------------------------------------------- operators -------- */

static aclnnStatus emb_phase1(const char *api, int32_t n, const uintptr_t *tensors, int64_t dim,
                              uint64_t *workspaceSize, aclOpExecutor **executor)
{
    NN_READY();
    uintptr_t h = 0;
    uint64_t ws = 0;
    aclnnStatus ret = py_phase1(api, n, tensors, dim, workspaceSize ? &ws : NULL, executor ? &h : NULL);
    if (ret == 0) {
        *workspaceSize = ws;
        *executor = (aclOpExecutor *)h;
    }
    return ret;
}

static aclnnStatus emb_phase2(const char *api, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream)
{
    NN_READY();
    return py_phase2(api, U(workspace), workspaceSize, U(executor), U(stream));
}

/* The operators' functions: generated from their declarations (aclnn_py/ops) by
   aclnn_py/toolkit/opgen.py's builtin_wrappers when the toolkit is built, with their headers. */
#include "builtin_ops.inc"

/* ------------------------------------------------------- float16 helpers (acl_base.h) -- */
/* Plain C, no Python: CANN's semantics as acl_base.h documents them (see there). */

float aclFloat16ToFloat(aclFloat16 value)
{
    const int sign = value >> 15, exp = (value >> 10) & 0x1f, man = value & 0x3ff;
    float mag = exp ? ldexpf((float)(1024 + man), exp - 25)  /* exp 31 too: 2^16 * 1.m */
                    : ldexpf((float)man, -24);               /* subnormal */
    return sign ? -mag : mag;
}

aclFloat16 aclFloatToFloat16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return 0x7bff; /* NaN -> 65504 */
    if (abs >= 0x477ff000u)
        return (aclFloat16)(sign | 0x7bff); /* rounds to 65520 or more, or inf: saturate */
    if (abs < 0x38800000u) { /* below 2^-14: a float16 subnormal (or zero), step 2^-24 */
        float mag;
        memcpy(&mag, &abs, sizeof mag);
        /* mag * 2^24 is exact in float (< 2^10); nearbyintf rounds half to even */
        return (aclFloat16)(sign | (uint16_t)nearbyintf(mag * 16777216.0f));
    }
    /* normal: drop 13 mantissa bits, round to nearest even (a carry into the exponent is the
       right result) */
    uint32_t h = ((abs >> 13) - (112u << 10));
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h += 1;
    return (aclFloat16)(sign | h);
}

/* -------------------------------------------- tensor lists, float and bool arrays -------- */

aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    PTR_READY();
    if (!value)
        return (aclTensorList *)py_aclCreateTensorList(NULL, size);
    if (size > (1u << 16))
        return (aclTensorList *)py_aclCreateTensorList((const uintptr_t *)value, size); /* refused there */
    uintptr_t *handles = (uintptr_t *)malloc(sizeof(uintptr_t) * (size ? size : 1));
    if (!handles)
        return NULL;
    for (uint64_t i = 0; i < size; i++)
        handles[i] = U(value[i]);
    aclTensorList *out = (aclTensorList *)py_aclCreateTensorList(handles, size);
    free(handles);
    return out;
}

aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)
{
    PTR_READY();
    return (aclFloatArray *)py_aclCreateFloatArray(value, size);
}

aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)
{
    PTR_READY();
    /* bool is one byte holding 0 or 1 in the C and C++ ABIs of every target the toolkit builds for */
    return (aclBoolArray *)py_aclCreateBoolArray((const uint8_t *)value, size);
}

aclnnStatus aclDestroyTensorList(const aclTensorList *array) { NN_READY(); return py_aclDestroy("aclDestroyTensorList", U(array)); }
aclnnStatus aclDestroyFloatArray(const aclFloatArray *array) { NN_READY(); return py_aclDestroy("aclDestroyFloatArray", U(array)); }
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array) { NN_READY(); return py_aclDestroy("aclDestroyBoolArray", U(array)); }

aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                    aclTensorList *tensors, void *addr)
{
    NN_READY();
    return py_aclSetDynamicTensorAddr(U(executor), irIndex, relativeIndex, U(tensors), U(addr));
}

/* ------------------------------------------------------- custom operators (opgen) -------- */
/* The generated libcust_opapi.so (aclnn_py/toolkit/opgen.py) forwards each operator's two
   phases here: its arguments as words in the generated order, its package directory (found from
   its own path) and the operator's name. Not part of CANN's API. */

extern "C" __attribute__((visibility("default"))) aclnnStatus
aclnnEmuCustomGetWorkspaceSize(const char *vendor, const char *op, int32_t nargs, const uintptr_t *args,
                               uint64_t *workspaceSize, aclOpExecutor **executor)
{
    NN_READY();
    uintptr_t h = 0;
    uint64_t ws = 0;
    aclnnStatus ret = py_custom_phase1(vendor, op, nargs, args, workspaceSize ? &ws : NULL, executor ? &h : NULL);
    if (ret == 0) {
        *workspaceSize = ws;
        *executor = (aclOpExecutor *)h;
    }
    return ret;
}

extern "C" __attribute__((visibility("default"))) aclnnStatus
aclnnEmuCustomRun(const char *api, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                  aclrtStream stream)
{
    return emb_phase2(api, workspace, workspaceSize, executor, stream);
}

/* ------------------------------------------- the rest of acl_base.h, acl_rt.h, stubs -------- */
/* Descriptors, data buffers, timeouts, queries (acl_extra.cpp), then a "not supported" stub for
   every other function the ACL headers declare (generated at build time: toolkit/stubs.py). */
#include "acl_extra.cpp"
