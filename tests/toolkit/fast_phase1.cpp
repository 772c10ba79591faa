// The toolkit's phase 1 in C (docs/c_api.md, "Fast paths"): a phase 1 Python answered once is
// answered in C the next times while nothing it depends on changed; every other phase 1 is the
// Python API's, with its code and message. Executors C made behave as Python-made ones for
// every later call. Lines "name code message" (or "name values...") for
// tests/test_toolkit_fast.py; "made_in_c name 0|1" tells whether an executor's handle is one
// C made (bit 43 of the toolkit's executor handles, docs/c_api.md).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_hardsigmoid.h"
#include "aclnnop/aclnn_hardsigmoid_backward.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"

static void Report(const char *name, int ret)
{
    const char *msg = aclGetRecentErrMsg();
    printf("%s %d %s\n", name, ret, ret && msg ? msg : "(none)");
    fflush(stdout);
}

static void MadeInC(const char *name, aclOpExecutor *ex)
{
    printf("made_in_c %s %d\n", name, ex ? (int)(((uintptr_t)ex >> 43) & 1) : -1);
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
    printf("%s =", name); // "=": a value line, not a code
    for (float x : v)
        printf(" %.9g", x);
    printf("\n");
}

static void *Upload(const float *host)
{
    void *dev = nullptr;
    aclrtMalloc(&dev, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dev, 32, host, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    return dev;
}

int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    float g[8], y[8], x[8], zeros[8] = {0};
    for (int i = 0; i < 8; i++) {
        g[i] = 0.5f * (float)i - 2.0f;
        y[i] = (float)(i + 1) / 36.0f;
        x[i] = (float)i - 3.5f; // -3.5 .. 3.5: both sides of hardsigmoid's [-3, 3]
    }
    void *dg = Upload(g), *dy = Upload(y), *dx = Upload(x), *dout = Upload(zeros);
    aclTensor *tg = Vector(dg), *ty = Vector(dy), *tx = Vector(dx), *to = Vector(dout);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;

    // every built-in operator: Python's phase 1, then C's, then C's result
#define TWICE(NAME, CALL, RUN)                                                            \
    do {                                                                                  \
        aclrtMemcpy(dout, 32, zeros, 32, ACL_MEMCPY_HOST_TO_DEVICE);                      \
        for (int k = 0; k < 2; k++) {                                                     \
            ex = nullptr;                                                                 \
            Report(NAME "_phase1", CALL);                                                 \
            MadeInC(k ? NAME "_2" : NAME "_1", ex);                                       \
            Report(NAME "_run", RUN(nullptr, ws, ex, nullptr));                          \
        }                                                                                 \
        Report(NAME "_sync", aclrtSynchronizeStream(nullptr));                            \
        Values(NAME, dout);                                                               \
    } while (0)
    TWICE("softmax_backward", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex),
          aclnnSoftmaxBackward);
    TWICE("softmax", aclnnSoftmaxGetWorkspaceSize(tx, 0, to, &ws, &ex), aclnnSoftmax);
    TWICE("log_softmax", aclnnLogSoftmaxGetWorkspaceSize(tx, -1, to, &ws, &ex), aclnnLogSoftmax);
    TWICE("log_softmax_backward",
          aclnnLogSoftmaxBackwardGetWorkspaceSize(tg, ty, 0, to, &ws, &ex),
          aclnnLogSoftmaxBackward);
    TWICE("hardsigmoid", aclnnHardsigmoidGetWorkspaceSize(tx, to, &ws, &ex), aclnnHardsigmoid);
    TWICE("hardsigmoid_backward", aclnnHardsigmoidBackwardGetWorkspaceSize(tg, tx, to, &ws, &ex),
          aclnnHardsigmoidBackward);
    // in place: twice on one buffer (x, then hardsigmoid(x), then hardsigmoid of that)
    void *dinp = Upload(x);
    aclTensor *tinp = Vector(dinp);
    for (int k = 0; k < 2; k++) {
        ex = nullptr;
        Report("inplace_phase1", aclnnInplaceHardsigmoidGetWorkspaceSize(tinp, &ws, &ex));
        MadeInC(k ? "inplace_2" : "inplace_1", ex);
        Report("inplace_run", aclnnInplaceHardsigmoid(nullptr, ws, ex, nullptr));
    }
    Report("inplace_sync", aclrtSynchronizeStream(nullptr));
    Values("inplace", dinp);

    // another dim, another operator on the same tensors: their own entries
    ex = nullptr;
    Report("dim_phase1", aclnnSoftmaxGetWorkspaceSize(tx, -1, to, &ws, &ex));
    MadeInC("dim", ex);
    Report("dim_run", aclnnSoftmax(nullptr, ws, ex, nullptr));

    // what C made, for every later call as a Python-made executor
    aclOpExecutor *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
    Report("entry", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &a));
    Report("rep_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &a));
    MadeInC("rep", a);
    Report("rep_repeatable", aclSetAclOpExecutorRepeatable(a));
    for (int i = 0; i < 3; i++) {
        aclrtMemcpy(dout, 32, zeros, 32, ACL_MEMCPY_HOST_TO_DEVICE);
        Report("rep_relaunch", aclnnSoftmaxBackward(nullptr, 0, a, nullptr));
        Report("rep_sync", aclrtSynchronizeStream(nullptr));
    }
    Values("rep_out", dout);
    Report("rep_destroy", aclDestroyAclOpExecutor(a));
    Report("rep_after_destroy", aclnnSoftmaxBackward(nullptr, 0, a, nullptr));
    Report("destroy_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &b));
    MadeInC("destroy", b);
    Report("destroy_unused", aclDestroyAclOpExecutor(b));
    Report("destroy_again", aclDestroyAclOpExecutor(b));
    Report("once_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &c));
    MadeInC("once", c);
    Report("once_run", aclnnSoftmaxBackward(nullptr, 0, c, nullptr));
    Report("once_again", aclnnSoftmaxBackward(nullptr, 0, c, nullptr));
    Report("once_repeatable_late", aclSetAclOpExecutorRepeatable(c));
    Report("once_destroy", aclDestroyAclOpExecutor(c));
    Report("wrong_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &d));
    MadeInC("wrong", d);
    Report("wrong_operator", aclnnSoftmax(nullptr, 0, d, nullptr));
    Report("wrong_again", aclnnSoftmaxBackward(nullptr, 0, d, nullptr));
    // phase 2 through Python (a launch-blocking variable C sees): the C-made executor runs
    aclOpExecutor *e = nullptr;
    Report("blocking_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &e));
    MadeInC("blocking", e);
    aclrtMemcpy(dout, 32, zeros, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    setenv("ACL_LAUNCH_BLOCKING", "1", 1);
    Report("blocking_run", aclnnSoftmaxBackward(nullptr, 0, e, nullptr));
    unsetenv("ACL_LAUNCH_BLOCKING");
    Report("blocking_again", aclnnSoftmaxBackward(nullptr, 0, e, nullptr));
    Report("blocking_sync", aclrtSynchronizeStream(nullptr));
    Values("blocking_out", dout);

    // what makes C miss: each phase 1 below is Python's, with its code and message
    Report("null_ws", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, nullptr, &ex));
    Report("null_ex", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, nullptr));
    Report("bad_dim", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, 1, to, &ws, &ex));
    // an environment value Python did not read (set after the start): C leaves it to Python
    setenv("ACLNN_EMU_ACCUMULATION", "relaxed", 1);
    ex = nullptr;
    Report("env_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex));
    MadeInC("env", ex);
    Report("env_run", aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
    unsetenv("ACLNN_EMU_ACCUMULATION");
    // a tensor moved: the new address (misaligned: refused), then back
    Report("raw_misaligned", aclSetRawTensorAddr(tg, (char *)dg + 2));
    Report("moved_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex));
    Report("raw_back", aclSetRawTensorAddr(tg, dg));
    ex = nullptr;
    Report("back_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex));
    MadeInC("back", ex);
    Report("back_run", aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
    ex = nullptr;
    Report("back_phase1b", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex));
    MadeInC("back_b", ex);
    Report("back_run_b", aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
    Report("back_sync", aclrtSynchronizeStream(nullptr));
    // an input freed: the free epoch moved
    void *dy2 = Upload(y);
    aclTensor *ty2 = Vector(dy2);
    Report("freed_entry", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty2, -1, to, &ws, &ex));
    Report("freed_entry_run", aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
    Report("freed_entry_sync", aclrtSynchronizeStream(nullptr));
    Report("freed_free", aclrtFree(dy2));
    Report("freed_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty2, -1, to, &ws, &ex));
    // a tensor destroyed
    void *dg3 = Upload(g);
    aclTensor *tg3 = Vector(dg3);
    Report("destroyed_entry", aclnnSoftmaxBackwardGetWorkspaceSize(tg3, ty, -1, to, &ws, &ex));
    Report("destroyed_entry_run", aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
    Report("destroyed_tensor", aclDestroyTensor(tg3));
    Report("destroyed_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg3, ty, -1, to, &ws, &ex));
    Report("destroyed_sync", aclrtSynchronizeStream(nullptr));

    // races: another thread destroys a tensor during a phase 1 + phase 2 loop (success until
    // then, then the Python API's message), and C-made executors as they are launched
    void *dg4 = Upload(g);
    aclTensor *tg4 = Vector(dg4);
    std::atomic<int> started(0);
    std::thread killer([&] {
        while (!started.load())
            std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        Report("race_destroy_tensor", aclDestroyTensor(tg4));
    });
    int ok = 0, last = 0;
    for (long i = 0; i < 2000000; i++) {
        aclOpExecutor *r = nullptr;
        last = aclnnSoftmaxBackwardGetWorkspaceSize(tg4, ty, -1, to, &ws, &r);
        if (i == 0)
            started.store(1);
        if (last != 0)
            break;
        int run = aclnnSoftmaxBackward(nullptr, ws, r, nullptr);
        if (run != 0) {
            Report("race_run_failed", run);
            break;
        }
        ok++;
        if (i % 64 == 63)
            aclrtSynchronizeStream(nullptr);
    }
    killer.join();
    printf("race_ok %d\n", ok);
    Report("race_last", last);
    Report("race_after", aclnnSoftmaxBackwardGetWorkspaceSize(tg4, ty, -1, to, &ws, &ex));
    Report("race_sync", aclrtSynchronizeStream(nullptr));

    std::atomic<aclOpExecutor *> slot(nullptr);
    std::atomic<int> done(0);
    int launched = 0, destroyed_first = 0, odd = 0, destroy_consumed = 0, destroy_ok = 0;
    std::thread destroyer([&] {
        while (!done.load()) {
            aclOpExecutor *p = slot.exchange(nullptr);
            if (!p) {
                std::this_thread::yield();
                continue;
            }
            int r = aclDestroyAclOpExecutor(p);
            const char *m = aclGetRecentErrMsg();
            if (r == 0)
                destroy_ok++;
            else if (r == 561000 && m && strstr(m, "consumed by aclnnSoftmaxBackward"))
                destroy_consumed++;
            else
                odd++;
        }
    });
    for (int i = 0; i < 3000; i++) {
        aclOpExecutor *p = nullptr;
        if (aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &p) != 0) {
            odd++;
            break;
        }
        slot.store(p);
        if (i % 2)
            std::this_thread::yield();
        int r = aclnnSoftmaxBackward(nullptr, ws, p, nullptr);
        const char *m = aclGetRecentErrMsg();
        if (r == 0)
            launched++;
        else if (r == 161001 && m && strstr(m, "destroyed by aclDestroyAclOpExecutor"))
            destroyed_first++;
        else
            odd++;
        while (slot.load() != nullptr)
            std::this_thread::yield();
    }
    done.store(1);
    destroyer.join();
    printf("exrace %d %d %d %d %d\n", launched, destroyed_first, destroy_ok, destroy_consumed,
           odd);
    Report("exrace_sync", aclrtSynchronizeStream(nullptr));

    // fork(): in the child, an executor C made is one the child knows, and one C consumed
    // stays consumed (as Python-made ones)
    aclOpExecutor *pend = nullptr, *gone = nullptr;
    Report("fork_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &pend));
    MadeInC("fork_pending", pend);
    Report("fork_phase1b", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &gone));
    Report("fork_run", aclnnSoftmaxBackward(nullptr, ws, gone, nullptr));
    Report("fork_sync", aclrtSynchronizeStream(nullptr));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        Report("child_destroy", aclDestroyAclOpExecutor(pend));
        Report("child_reuse", aclnnSoftmaxBackward(nullptr, 0, gone, nullptr));
        fflush(stdout);
        _exit(0);
    }
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    printf("child_exit %d\n", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    Report("parent_destroy", aclDestroyAclOpExecutor(pend));

    aclrtMemcpy(dout, 32, zeros, 32, ACL_MEMCPY_HOST_TO_DEVICE);
    ex = nullptr;
    Report("final_phase1", aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, to, &ws, &ex));
    MadeInC("final", ex);
    Report("final_run", aclnnSoftmaxBackward(nullptr, ws, ex, nullptr));
    Report("final_sync", aclrtSynchronizeStream(nullptr));
    Values("final_out", dout);
    aclDestroyTensor(tg);
    aclDestroyTensor(ty);
    aclDestroyTensor(tx);
    aclDestroyTensor(to);
    aclDestroyTensor(tinp);
    aclrtResetDevice(0);
    Report("finalize", aclFinalize());
    return 0;
}
