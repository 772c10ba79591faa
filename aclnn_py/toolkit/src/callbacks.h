/*
 * The Python side of libascendcl.so: one line per function the embedded interpreter implements
 * (aclnn_py/toolkit/_bridge.py, with @ffi.def_extern). toolkit/build.py reads this file twice:
 * as the cffi cdef (each line prefixed with extern "Python") and, in ascendcl.cpp, as forward
 * declarations (each prefixed with static). Pointers travel as uintptr_t: handles and device
 * addresses are plain integers on the Python side, as in pyACL.
 */
int32_t py_ping(void);
int32_t py_at_exit(void);
int32_t py_aclInit(const char *configPath);
int32_t py_aclFinalize(void);
char *py_aclGetRecentErrMsg(void);
char *py_aclrtGetSocName(void);
int32_t py_aclrtSetDevice(int32_t deviceId);
int32_t py_aclrtResetDevice(int32_t deviceId);
int32_t py_aclrtGetDevice(int32_t *deviceId);
int32_t py_aclrtGetDeviceCount(uint32_t *count);
int32_t py_aclrtGetRunMode(int32_t *runMode);
int32_t py_aclrtSynchronizeDevice(void);
int32_t py_aclrtCreateContext(uintptr_t *context, int32_t deviceId);
int32_t py_aclrtDestroyContext(uintptr_t context);
int32_t py_aclrtSetCurrentContext(uintptr_t context);
int32_t py_aclrtGetCurrentContext(uintptr_t *context);
int32_t py_aclrtCreateStream(uintptr_t *stream);
int32_t py_aclrtDestroyStream(uintptr_t stream);
int32_t py_aclrtSynchronizeStream(uintptr_t stream);
int32_t py_sync_fault(uintptr_t stream, int32_t code);
int32_t py_aclrtCreateEvent(uintptr_t *event);
int32_t py_aclrtDestroyEvent(uintptr_t event);
int32_t py_aclrtRecordEvent(uintptr_t event, uintptr_t stream);
int32_t py_aclrtResetEvent(uintptr_t event, uintptr_t stream);
int32_t py_aclrtQueryEventStatus(uintptr_t event, int32_t *status);
int32_t py_aclrtSynchronizeEvent(uintptr_t event);
int32_t py_aclrtStreamWaitEvent(uintptr_t stream, uintptr_t event);
int32_t py_aclrtEventElapsedTime(float *ms, uintptr_t startEvent, uintptr_t endEvent);
int32_t py_aclrtMalloc(uintptr_t *devPtr, size_t size, int32_t policy);
int32_t py_aclrtFree(uintptr_t devPtr);
int32_t py_aclrtMallocHost(uintptr_t *hostPtr, size_t size);
int32_t py_aclrtFreeHost(uintptr_t hostPtr);
int32_t py_aclrtMemcpy(uintptr_t dst, size_t destMax, uintptr_t src, size_t count, int32_t kind);
int32_t py_aclrtMemcpyAsync(uintptr_t dst, size_t destMax, uintptr_t src, size_t count, int32_t kind, uintptr_t stream);
int32_t py_aclrtMemset(uintptr_t devPtr, size_t maxCount, int32_t value, size_t count);
int32_t py_aclrtMemsetAsync(uintptr_t devPtr, size_t maxCount, int32_t value, size_t count, uintptr_t stream);
int32_t py_aclrtGetMemInfo(int32_t attr, size_t *free, size_t *total);
int32_t py_aclnnInit(const char *configPath);
int32_t py_aclnnFinalize(void);
uintptr_t py_aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, int32_t dataType, const int64_t *stride, int64_t offset, int32_t format, const int64_t *storageDims, uint64_t storageDimsNum, uintptr_t tensorData);
uintptr_t py_aclCreateScalar(uintptr_t value, int32_t dataType);
uintptr_t py_aclCreateIntArray(const int64_t *value, uint64_t size);
int32_t py_aclDestroy(const char *api, uintptr_t handle);
int32_t py_aclGetDims(const char *api, uintptr_t tensor, int64_t **dims, uint64_t *num);
int32_t py_aclGetInt(const char *api, uintptr_t tensor, int64_t *value);
int32_t py_aclGetIntArraySize(uintptr_t array, uint64_t *size);
int32_t py_aclGetRawTensorAddr(uintptr_t tensor, uintptr_t *addr);
int32_t py_aclSetRawTensorAddr(uintptr_t tensor, uintptr_t addr);
int32_t py_aclExecutorCall(const char *api, uintptr_t executor);
int32_t py_aclSetTensorAddr(const char *api, uintptr_t executor, size_t index, uintptr_t tensor, uintptr_t addr);
int32_t py_phase1(const char *api, int32_t ntensors, const uintptr_t *tensors, int64_t dim, uint64_t *workspaceSize, uintptr_t *executor);
int32_t py_phase2(const char *api, uintptr_t workspace, uint64_t workspaceSize, uintptr_t executor, uintptr_t stream);
uintptr_t py_aclCreateTensorList(const uintptr_t *value, uint64_t size);
uintptr_t py_aclCreateFloatArray(const float *value, uint64_t size);
uintptr_t py_aclCreateBoolArray(const uint8_t *value, uint64_t size);
int32_t py_aclSetDynamicTensorAddr(uintptr_t executor, size_t irIndex, size_t relativeIndex, uintptr_t tensors, uintptr_t addr);
int32_t py_custom_phase1(const char *vendor, const char *op, int32_t nargs, const uintptr_t *args, uint64_t *workspaceSize, uintptr_t *executor);
int32_t py_acl_fail(const char *api, int32_t code, const char *what);
int32_t py_acl_call(const char *api, int32_t nargs, const int64_t *args, int64_t *out);
int64_t py_acl_dims(const char *api, int64_t handle, int64_t value, int32_t numDims, const int64_t *dims);
int32_t py_acl_ranges(const char *api, int64_t handle, uint64_t count, const int64_t *pairs);
int32_t py_acl_text(const char *api, int64_t handle, const char *text);
char *py_aclGetTensorDescName(uintptr_t desc);
