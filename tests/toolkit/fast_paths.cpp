// The toolkit's C paths (docs/c_api.md, "Fast paths"): phase 2 of an executor with a launch
// record and aclrtSynchronizeStream run without the interpreter; every refusal is still the
// Python API's code and message. An 8-element float32 aclnnSoftmaxBackward on the default
// stream. Lines "name code message" (or "name values...") for tests/test_toolkit_fast.py.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"

static void Report(const char *name, int ret)
{
    const char *msg = aclGetRecentErrMsg();
    printf("%s %d %s\n", name, ret, msg ? msg : "(none)");
    fflush(stdout);
}

static aclTensor *Vector(void *data)
{
    int64_t shape[1] = {8}, strides[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, data);
}

static void Values(const char *name, void *dev)
{
    float v[8];
    aclrtMemcpy(v, sizeof v, dev, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("%s", name);
    for (float x : v)
        printf(" %.7g", x);
    printf("\n");
}

int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    float g[8], y[8], zeros[8] = {0};
    for (int i = 0; i < 8; i++) {
        g[i] = 0.5f * (float)i - 2.0f;
        y[i] = (float)(i + 1) / 36.0f;
    }
    void *dg, *dy, *dout, *dout2, *dws;
    aclrtMalloc(&dg, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dy, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dout, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dout2, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dws, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dg, 32, g, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(dy, 32, y, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    aclTensor *tg = Vector(dg), *ty = Vector(dy), *to = Vector(dout);
    uint64_t ws = 0;
    aclOpExecutor *rep = nullptr, *once = nullptr;

    // a repeatable executor: three relaunches, then its output moved to another buffer
    Report("phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &rep));
    Report("repeatable", aclSetAclOpExecutorRepeatable(rep));
    for (int i = 0; i < 3; i++) {
        aclrtMemcpy(dout, 32, zeros, 32, ACL_MEMCPY_HOST_TO_DEVICE);
        Report("relaunch", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));
        Report("sync", aclrtSynchronizeStream(nullptr));
    }
    Values("out", dout);
    aclrtMemcpy(dout2, 32, zeros, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    Report("rebind", aclSetOutputTensorAddr(rep, 0, to, dout2));
    Report("relaunch_rebound", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));
    Report("sync_rebound", aclrtSynchronizeStream(nullptr));
    Values("out2", dout2);
    // the workspace checks, in C as in Python
    Report("ws_null", aclnnSoftmaxBackward(nullptr, 64, rep, nullptr));
    Report("ws_ok", aclnnSoftmaxBackward(dws, 64, rep, nullptr));
    Report("ws_misaligned", aclnnSoftmaxBackward((char *)dws + 4, 32, rep, nullptr));
    Report("ws_past_end", aclnnSoftmaxBackward(dws, 128, rep, nullptr));
    Report("wrong_operator", aclnnSoftmax(nullptr, 0, rep, nullptr));
    Report("sync_ws", aclrtSynchronizeStream(nullptr));

    // a single-use executor: consumed by its C launch
    Report("once_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &once));
    Report("once_run", aclnnSoftmaxBackward(nullptr, 0, once, nullptr));
    Report("once_again", aclnnSoftmaxBackward(nullptr, 0, once, nullptr));
    Report("once_destroy", aclDestroyAclOpExecutor(once));
    Report("once_phase1b", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &once));
    Report("once_run_b", aclnnSoftmaxBackward(nullptr, 0, once, nullptr));
    Report("once_repeatable_late", aclSetAclOpExecutorRepeatable(once));
    Report("sync_once", aclrtSynchronizeStream(nullptr));

    // another current context: stream 0 is its default stream; none: the Python API's codes
    aclrtContext ctx = nullptr;
    Report("create_context", aclrtCreateContext(&ctx, 0));
    Report("relaunch_ctx", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));
    Report("sync_ctx", aclrtSynchronizeStream(nullptr));
    Report("destroy_context", aclrtDestroyContext(ctx));
    Report("relaunch_no_ctx", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));
    Report("sync_no_ctx", aclrtSynchronizeStream(nullptr));
    Report("set_device_again", aclrtSetDevice(0));
    Report("relaunch_back", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));
    Report("sync_back", aclrtSynchronizeStream(nullptr));

    // an input freed after phase 1
    void *dg2;
    aclrtMalloc(&dg2, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dg2, 32, g, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    Report("rebind_input", aclSetInputTensorAddr(rep, 0, tg, dg2));
    Report("relaunch_input", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));
    Report("sync_input", aclrtSynchronizeStream(nullptr));
    Report("free_input", aclrtFree(dg2));
    Report("relaunch_freed", aclnnSoftmaxBackward(nullptr, 0, rep, nullptr));

    // destroyed by another thread while this one relaunches: 0 until then, then 161001
    Report("rebind_back", aclSetInputTensorAddr(rep, 0, tg, dg));
    std::atomic<int> started(0);
    std::thread killer([&] {
        while (!started.load())
            std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        Report("destroy_racing", aclDestroyAclOpExecutor(rep));
    });
    int ok = 0, last = 0;
    for (long i = 0; i < 20000000; i++) {
        last = aclnnSoftmaxBackward(nullptr, 0, rep, nullptr);
        if (i == 0)
            started.store(1);
        if (last != 0)
            break;
        ok++;
        if (i % 64 == 63)
            aclrtSynchronizeStream(nullptr);
    }
    killer.join();
    printf("race_ok %d\n", ok > 0);
    Report("race_last", last);
    Report("sync_race", aclrtSynchronizeStream(nullptr));
    Values("out_race", dout);

    aclDestroyTensor(tg);
    aclDestroyTensor(ty);
    aclDestroyTensor(to);
    aclrtResetDevice(0);
    Report("finalize", aclFinalize());
    return 0;
}
