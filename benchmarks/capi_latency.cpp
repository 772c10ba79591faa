// The C API's launch latency (benchmarks/capi_latency.py builds and runs this): an 8-element
// float32 aclnnSoftmaxBackward on the default stream (nullptr), from C++ through the toolkit's
// libascendcl.so.
//
//   capi_latency REPS ROUNDS
//
// prints, per round, "full <us> <cpu us>" (phase 1 + phase 2 + aclrtSynchronizeStream, a
// single-use executor each time) and "relaunch <us> <cpu us>" (aclnnSoftmaxBackward on a
// repeatable executor + aclrtSynchronizeStream) and "fresh <us> <cpu us>" (the full path on
// tensors created for the call and destroyed after it: aclCreateTensor x 3, phase 1, phase 2,
// synchronize, aclDestroyTensor x 3, so phase 1 never finds an entry and runs in Python): the
// mean over REPS iterations of the elapsed time and of the calling thread's CPU time, then
// "check <max abs error>" against a double-precision golden of the last result. Exit status 1
// on any failing call.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_backward.h"

#define CHECK(expr)                                                                         \
    do {                                                                                    \
        long long _r = (long long)(expr);                                                   \
        if (_r != 0) {                                                                      \
            const char *_m = aclGetRecentErrMsg();                                          \
            fprintf(stderr, "%s failed: %lld %s\n", #expr, _r, _m ? _m : "");               \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

static double now_us()
{
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

static double cpu_us()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 2000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    const int64_t n = 8;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    float g[8], y[8], out[8];
    for (int i = 0; i < n; i++) {
        g[i] = 0.25f * (float)i - 1.0f;
        y[i] = (float)(i + 1) / 36.0f;
    }
    void *dg = nullptr, *dy = nullptr, *dout = nullptr;
    CHECK(aclrtMalloc(&dg, sizeof g, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dy, sizeof y, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dout, sizeof out, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dg, sizeof g, g, sizeof g, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(dy, sizeof y, y, sizeof y, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t shape[1] = {n}, strides[1] = {1};
    aclTensor *tg = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dg);
    aclTensor *ty = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dy);
    aclTensor *to = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1,
                                    dout);
    if (!tg || !ty || !to) {
        fprintf(stderr, "aclCreateTensor failed\n");
        return 1;
    }
    uint64_t ws = 0;
    aclOpExecutor *rep = nullptr;
    CHECK(aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &rep));
    CHECK(aclSetAclOpExecutorRepeatable(rep));
    for (int round = -1; round < rounds; round++) { // round -1: warm-up, not printed
        double t0 = now_us(), c0 = cpu_us();
        for (int i = 0; i < reps; i++) {
            aclOpExecutor *ex = nullptr;
            CHECK(aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex));
            CHECK(aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
            CHECK(aclrtSynchronizeStream(nullptr));
        }
        double t1 = now_us(), c1 = cpu_us();
        for (int i = 0; i < reps; i++) {
            CHECK(aclnnSoftmaxBackward(nullptr, ws, rep, nullptr));
            CHECK(aclrtSynchronizeStream(nullptr));
        }
        double t2 = now_us(), c2 = cpu_us();
        const int fresh_reps = reps / 4 > 0 ? reps / 4 : 1;
        for (int i = 0; i < fresh_reps; i++) {
            aclTensor *fg = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape,
                                            1, dg);
            aclTensor *fy = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape,
                                            1, dy);
            aclTensor *fo = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape,
                                            1, dout);
            if (!fg || !fy || !fo) {
                fprintf(stderr, "aclCreateTensor failed\n");
                return 1;
            }
            aclOpExecutor *ex = nullptr;
            CHECK(aclnnSoftmaxBackwardGetWorkspaceSize(fg, fy, -1, fo, &ws, &ex));
            CHECK(aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
            CHECK(aclrtSynchronizeStream(nullptr));
            CHECK(aclDestroyTensor(fg));
            CHECK(aclDestroyTensor(fy));
            CHECK(aclDestroyTensor(fo));
        }
        double t3 = now_us(), c3 = cpu_us();
        if (round >= 0)
            printf("full %.4f %.4f\nrelaunch %.4f %.4f\nfresh %.4f %.4f\n", (t1 - t0) / reps,
                   (c1 - c0) / reps, (t2 - t1) / reps, (c2 - c1) / reps, (t3 - t2) / fresh_reps,
                   (c3 - c2) / fresh_reps);
    }
    CHECK(aclrtMemcpy(out, sizeof out, dout, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    double dot = 0.0, err = 0.0;
    for (int i = 0; i < n; i++)
        dot += (double)g[i] * (double)y[i];
    for (int i = 0; i < n; i++)
        err = fmax(err, fabs((double)out[i] - ((double)g[i] - dot) * (double)y[i]));
    printf("check %.3g\n", err);
    CHECK(aclDestroyAclOpExecutor(rep));
    CHECK(aclDestroyTensor(tg));
    CHECK(aclDestroyTensor(ty));
    CHECK(aclDestroyTensor(to));
    CHECK(aclrtFree(dg));
    CHECK(aclrtFree(dy));
    CHECK(aclrtFree(dout));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return err < 1e-6 ? 0 : 1;
}
