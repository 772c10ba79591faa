/*
 * Streams and events.
 *
 * A stream is one worker thread draining a FIFO of emu_task records. emu_stream_submit copies the
 * records in and returns; emu_stream_synchronize waits until every task enqueued before it has
 * finished and hands back the first fault seen since the previous synchronize. After a fault, the
 * stream skips its remaining compute and copy tasks until the fault is collected (their inputs
 * can no longer be trusted) but still completes event records, so no other stream waits forever.
 *
 * An event counts the records enqueued on it (record_seq) and completed (done_seq). A wait task
 * captures record_seq when it is enqueued and blocks its stream until done_seq reaches it, which
 * is how stream_wait_event orders two streams.
 *
 * Ownership (handle.c): users hold handles, not pointers. Every call takes a reference on the
 * stream or event it uses and drops it when it returns; a queued task holds a reference on the
 * event it names until it has run. Destroying a stream invalidates its handle at once (new calls
 * get 107017), lets the tasks already queued finish, stops the worker, and frees the stream
 * after its last user: a synchronize that was waiting returns normally. A task's device ranges
 * carry the id of the allocation they were checked against when the task was enqueued; the
 * worker checks that id again, under the allocation table's read lock, when the task runs.
 */
#define _GNU_SOURCE
#include "aclnn_emu.h"
#include "emu_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>

#define FAULT_KERNEL EMU_ACL_ERROR_RT_AICORE_EXCEPTION
#define FAULT_DMA EMU_ACL_ERROR_RT_SYS_DMA
#define INVALID_HANDLE EMU_ACL_ERROR_RT_INVALID_HANDLE
#define NO_STREAM_RESOURCE EMU_ACL_ERROR_RT_NO_STREAM_RESOURCE
#define SMALL_BATCH 8 /* tasks a submit copies on the stack */

typedef struct emu_event {
    emu_ref ref; /* first: the handle table's, each caller's, each queued task's */
    int64_t record_seq;
    int64_t done_seq;
    int valid; /* recorded and not reset since */
    double time_ms;
} emu_event;

static pthread_mutex_t event_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t event_cv = PTHREAD_COND_INITIALIZER;

typedef struct emu_stream {
    emu_ref ref; /* first */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    pthread_cond_t done_cv;
    emu_task *queue;
    int64_t cap, head, count;
    int64_t submitted, completed;
    int busy;    /* a thread (the worker or a synchronizing caller) is running a task */
    int spinning; /* the worker is polling for tasks: a submit need not wake it */
    int closing; /* destroy has begun: no new tasks */
    int stop;    /* the worker exits once the queue is empty */
    int fault;
    char fault_msg[EMU_MSG_LEN];
    int32_t device;
    uintptr_t handle; /* for trace records */
} emu_stream;

double emu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static __thread char last_msg[EMU_MSG_LEN]; /* this thread's last failing call */

/* The message of a call: into the caller's buffer, or kept for emu_last_msg when it passed none. */
static void set_msg(char *msg, int msglen, const char *text)
{
    if (msg && msglen > 0)
        snprintf(msg, (size_t)msglen, "%s", text);
    else
        snprintf(last_msg, sizeof last_msg, "%s", text);
}

int emu_last_msg(char *msg, int msglen)
{
    if (msg && msglen > 0)
        snprintf(msg, (size_t)msglen, "%s", last_msg);
    return (int)strlen(last_msg);
}

static int is_event_task(int32_t type)
{
    return type == EMU_TASK_EVENT_RECORD || type == EMU_TASK_EVENT_WAIT ||
           type == EMU_TASK_EVENT_RESET;
}

/* ------------------------------------------------------------------ task execution ------- */

/* The kernel table: one adapter per kernel id, reading the task's per-family parameters. */
typedef int (*kernel_fn)(const emu_task *t);

static int relaxed_16(const emu_task *t)
{
    return t->k.softmax.acc != EMU_ACC_STRICT && (t->dtype == ACLK_F16 || t->dtype == ACLK_BF16)
           && t->k.softmax.axis <= EMU_RELAXED_MAX_AXIS;
}

static int k_softmax_fwd(const emu_task *t)
{
    const emu_softmax_args *p = &t->k.softmax;
    if (relaxed_16(t))
        return aclk_softmax_fwd_relaxed(t->dtype, (const void *)t->a, (void *)t->c, p->outer,
                                        p->axis, p->inner, p->log);
    return aclk_softmax_fwd(t->dtype, (const void *)t->a, (void *)t->c, p->outer, p->axis,
                            p->inner, p->log);
}

static int k_softmax_bwd(const emu_task *t)
{
    const emu_softmax_args *p = &t->k.softmax;
    if (relaxed_16(t))
        return aclk_softmax_bwd_relaxed(t->dtype, (const void *)t->a, (const void *)t->b,
                                        (void *)t->c, p->outer, p->axis, p->inner, p->log);
    return aclk_softmax_bwd(t->dtype, (const void *)t->a, (const void *)t->b, (void *)t->c,
                            p->outer, p->axis, p->inner, p->log);
}

static int k_softmax_ex(const emu_task *t)
{
    return aclk_softmax_ex(&t->k.softmax_ex, t->dtype, (const void *)t->a, (const float *)t->b,
                           t->dtype2, (void *)t->c);
}

static int k_hardsigmoid_fwd(const emu_task *t)
{
    const emu_eltwise_args *p = &t->k.eltwise;
    return aclk_hardsigmoid_fwd(t->dtype, (const void *)t->a, (void *)t->c, p->n, p->alpha,
                                p->beta);
}

static int k_hardsigmoid_bwd(const emu_task *t)
{
    const emu_eltwise_args *p = &t->k.eltwise;
    return aclk_hardsigmoid_bwd(t->dtype, (const void *)t->a, (const void *)t->b, (void *)t->c,
                                p->n, p->alpha, p->beta);
}

static int k_cast(const emu_task *t)
{
    return aclk_cast(t->dtype, (const void *)t->a, t->dtype2, (void *)t->c, t->k.cast.n);
}

static int k_strided_copy(const emu_task *t)
{
    const emu_copy_args *p = &t->k.copy;
    if (p->ndim < 0 || p->ndim > EMU_MAX_DIMS)
        return -1;
    return aclk_strided_copy(p->elem_size, p->ndim, p->shape, (const void *)t->a,
                             p->src_strides, (void *)t->c, p->dst_strides);
}

static const kernel_fn kernel_table[EMU_K_COUNT] = {
    [EMU_K_SOFTMAX_FWD] = k_softmax_fwd,
    [EMU_K_SOFTMAX_BWD] = k_softmax_bwd,
    [EMU_K_HARDSIGMOID_FWD] = k_hardsigmoid_fwd,
    [EMU_K_HARDSIGMOID_BWD] = k_hardsigmoid_bwd,
    [EMU_K_CAST] = k_cast,
    [EMU_K_STRIDED_COPY] = k_strided_copy,
    [EMU_K_SOFTMAX_EX] = k_softmax_ex,
};

/* the host kernel function (emu_set_host_kernel); read by every host task */
static emu_host_fn host_kernel;

/* The stream whose host task this thread is running (a custom operator's kernel, which may call
 * back into the runtime), or NULL. Such a thread holds the allocation table's read lock and is
 * its stream's running task: every call that waits for a stream (synchronize, destroy, an event
 * synchronize, a blocking enqueue) refuses it at once (refuse_in_host), since its own stream
 * would wait for it, and another stream's worker may wait for the table lock behind a free that
 * waits for it. */
static __thread emu_stream *host_stream;
/* In the child of a fork() made by a host task: the forking thread was running a task of a stream
 * the child does not have, so it has nothing to go back to when the task returns; the child
 * ends there (run_host). Set by emu_stream_atfork_child. */
static __thread int forked_in_host;

uintptr_t emu_host_task_stream(void) { return host_stream ? host_stream->handle : 0; }

int emu_host_forked(void) { return forked_in_host; }

static int refuse_in_host(const char *call, char *msg, int msglen)
{
    char text[EMU_MSG_LEN];
    snprintf(text, sizeof text,
             "%s was called from a custom operator's kernel, which runs as a task of stream "
             "0x%" PRIxPTR ": a kernel cannot wait for a stream (its own stream waits for the "
             "kernel, and another stream may wait for the device memory the kernel holds); "
             "synchronize on the host instead (on the device, a kernel cannot call the runtime "
             "at all)",
             call, host_stream->handle);
    set_msg(msg, msglen, text);
    return EMU_ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}

void emu_set_host_kernel(emu_host_fn fn)
{
    __atomic_store_n(&host_kernel, fn, __ATOMIC_RELEASE);
}

static int run_host(emu_stream *s, const emu_task *t, char *msg, int msglen)
{
    emu_host_fn fn = __atomic_load_n(&host_kernel, __ATOMIC_ACQUIRE);
    msg[0] = '\0';
    if (!fn) {
        snprintf(msg, (size_t)msglen, "%s: %s: no host kernel function is set", t->op, t->step);
        return -1;
    }
    emu_stream *outer = host_stream;
    host_stream = s;
    int rc = fn(t->k.host.token, msg, msglen);
    host_stream = outer;
    if (forked_in_host) { /* the child of a fork() inside the kernel: it ends with the kernel */
        if (rc != 0 && msg[0])
            fprintf(stderr, "%s\n", msg);
        _exit(rc == 0 ? 0 : 1);
    }
    if (rc != 0 && msg[0] == '\0')
        snprintf(msg, (size_t)msglen, "%s: %s: the host kernel failed (%d)", t->op, t->step, rc);
    return rc;
}

static void skip_host(const emu_task *t)
{
    emu_host_fn fn = __atomic_load_n(&host_kernel, __ATOMIC_ACQUIRE);
    if (fn && t->type == EMU_TASK_KERNEL && t->kernel == EMU_K_HOST)
        fn(t->k.host.token, NULL, 0);
}

static int run_kernel(const emu_task *t)
{
    if (t->kernel <= 0 || t->kernel >= EMU_K_COUNT || !kernel_table[t->kernel])
        return -1;
    return kernel_table[t->kernel](t);
}

/* Runs a compute or copy task under the allocation table's read lock; 0 or a fault code. */
static int run_data_task(emu_stream *s, const emu_task *t, char *msg, int msglen)
{
    int code = t->type == EMU_TASK_KERNEL ? FAULT_KERNEL : FAULT_DMA;
    int rc = 0;
    emu_mem_read_lock();
    for (int i = 0; i < t->nranges && i < EMU_MAX_RANGES; i++) {
        const emu_range *r = &t->ranges[i];
        if (r->nbytes == 0)
            continue;
        if (!emu_mem_task_range_ok_locked(r->ptr, r->nbytes, r->alloc_id)) {
            snprintf(msg, (size_t)msglen,
                     "%s: %s: '%s' bytes [0x%" PRIxPTR ", 0x%" PRIxPTR ") %s; the task wrote "
                     "nothing",
                     t->op, t->step, r->name, r->ptr, r->ptr + (uintptr_t)r->nbytes,
                     r->alloc_id == 0
                         ? "were not inside a live device allocation when the task was enqueued"
                         : "belong to a device allocation that is no longer live: it was "
                           "freed before the stream reached the task (the address may have been "
                           "allocated again since)");
            rc = code;
            goto out;
        }
    }
    switch (t->type) {
    case EMU_TASK_KERNEL:
        if (t->kernel == EMU_K_HOST) {
            if (run_host(s, t, msg, msglen) != 0)
                rc = code;
        } else if (run_kernel(t) != 0) {
            snprintf(msg, (size_t)msglen,
                     "%s: %s: the kernel does not implement dtype %d -> %d", t->op, t->step,
                     t->dtype, t->dtype2);
            rc = code;
        }
        break;
    case EMU_TASK_MEMCPY:
        if (t->a != t->c)
            memmove((void *)t->c, (const void *)t->a, (size_t)t->n);
        break;
    case EMU_TASK_MEMSET:
        memset((void *)t->c, t->value & 0xff, (size_t)t->n);
        break;
    default:
        break;
    }
out:
    emu_mem_read_unlock();
    return rc;
}

/* Runs one task: 0, -1 when it was skipped (an earlier task of the stream faulted), or the
 * fault it raised. */
static int run_task(emu_stream *s, const emu_task *t)
{
    emu_event *ev = (emu_event *)t->event; /* resolved at submit; the task holds a reference */
    switch (t->type) {
    case EMU_TASK_EVENT_RECORD:
        pthread_mutex_lock(&event_mu);
        if (t->seq > ev->done_seq)
            ev->done_seq = t->seq;
        ev->valid = 1;
        ev->time_ms = emu_now_ms();
        pthread_cond_broadcast(&event_cv);
        pthread_mutex_unlock(&event_mu);
        emu_ref_release(&ev->ref);
        return 0;
    case EMU_TASK_EVENT_WAIT:
        pthread_mutex_lock(&event_mu);
        while (ev->done_seq < t->seq)
            pthread_cond_wait(&event_cv, &event_mu);
        pthread_mutex_unlock(&event_mu);
        emu_ref_release(&ev->ref);
        return 0;
    case EMU_TASK_EVENT_RESET:
        pthread_mutex_lock(&event_mu);
        if (ev->done_seq == ev->record_seq)
            ev->valid = 0;
        pthread_mutex_unlock(&event_mu);
        emu_ref_release(&ev->ref);
        return 0;
    case EMU_TASK_SLEEP:
        usleep((useconds_t)t->n);
        return 0;
    default:
        break;
    }
    pthread_mutex_lock(&s->mu);
    int faulted = s->fault != 0;
    pthread_mutex_unlock(&s->mu);
    if (faulted) {
        skip_host(t);
        return -1; /* skipped: an earlier task of this stream failed */
    }
    char msg[EMU_MSG_LEN];
    int rc = run_data_task(s, t, msg, sizeof msg);
    if (rc != 0) {
        pthread_mutex_lock(&s->mu);
        if (s->fault == 0) {
            s->fault = rc;
            snprintf(s->fault_msg, sizeof s->fault_msg, "%s", msg);
        }
        pthread_mutex_unlock(&s->mu);
    }
    return rc;
}

/* ------------------------------------------------------------------------ tracing ------- */

static int trace_on; /* emu_trace_enable; read with atomic loads by every enqueue and task */
static pthread_mutex_t trace_mu = PTHREAD_MUTEX_INITIALIZER;
static emu_trace_rec *trace_buf;
static int64_t trace_count, trace_cap, trace_dropped;
static int64_t trace_flows;

/* the kernel's thread id on Linux (what Python's threading.get_native_id reports); elsewhere a
   process-local number per thread */
int32_t emu_thread_id(void)
{
    static __thread int32_t tid;
    if (!tid) {
#if defined(__linux__)
        tid = (int32_t)syscall(SYS_gettid);
#else
        static int32_t next = 1 << 20;
        tid = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
#endif
    }
    return tid;
}

static void trace_add(const emu_stream *s, const emu_task *t, int status, int64_t start_ns,
                      int64_t end_ns)
{
    pthread_mutex_lock(&trace_mu);
    if (trace_count == trace_cap && trace_cap < EMU_TRACE_MAX) {
        int64_t cap = trace_cap ? trace_cap * 2 : 1024;
        emu_trace_rec *buf = realloc(trace_buf, (size_t)cap * sizeof *buf);
        if (buf) {
            trace_buf = buf;
            trace_cap = cap;
        }
    }
    if (trace_count == trace_cap) {
        trace_dropped++;
        pthread_mutex_unlock(&trace_mu);
        return;
    }
    emu_trace_rec *r = &trace_buf[trace_count++];
    memset(r, 0, sizeof *r);
    r->stream = s->handle;
    r->device = s->device;
    r->type = t->type;
    r->kernel = t->kernel;
    r->status = status;
    r->enq_tid = t->trace_tid;
    r->run_tid = emu_thread_id();
    r->flow = t->trace_flow;
    r->enq_ns = t->trace_ns;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    r->n = t->type == EMU_TASK_MEMCPY || t->type == EMU_TASK_MEMSET ? t->n : 0;
    if (is_event_task(t->type)) {
        r->event = t->event;
        r->seq = t->seq;
    }
    memcpy(r->op, t->op, sizeof r->op);
    r->op[sizeof r->op - 1] = '\0';
    memcpy(r->step, t->step, sizeof r->step);
    r->step[sizeof r->step - 1] = '\0';
    pthread_mutex_unlock(&trace_mu);
}

int64_t emu_trace_drain(emu_trace_rec *out, int64_t max)
{
    pthread_mutex_lock(&trace_mu);
    int64_t n = trace_count < max ? trace_count : max;
    if (n > 0) {
        memcpy(out, trace_buf, (size_t)n * sizeof *out);
        memmove(trace_buf, trace_buf + n, (size_t)(trace_count - n) * sizeof *trace_buf);
        trace_count -= n;
    }
    pthread_mutex_unlock(&trace_mu);
    return n;
}

int64_t emu_trace_dropped(void)
{
    pthread_mutex_lock(&trace_mu);
    int64_t n = trace_dropped;
    pthread_mutex_unlock(&trace_mu);
    return n;
}

/* The fields a thread polls without the stream's lock (count, completed, busy, stop,
 * spinning) are written with atomic stores under the lock and read with atomic loads outside. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/* Spin-then-park: a worker that runs out of tasks, or a caller that waits for one to finish,
 * polls for SPIN_NS before it sleeps on a condition variable. Waking a sleeping thread costs a
 * system call and a scheduler hand-off (tens of microseconds on a small machine); an aclnn
 * launch of a small tensor costs a few. A parked worker is woken by the submit; a polling one
 * is not (the submit sees `spinning`). */
#define SPIN_NS 50000

int64_t emu_now_ns(void) { return emu_mono_ns(); }

void emu_trace_enable(int on)
{
    pthread_mutex_lock(&trace_mu);
    if (on && !LOAD(trace_on))
        trace_dropped = 0;
    STORE(trace_on, on ? 1 : 0);
    pthread_mutex_unlock(&trace_mu);
}

/* Polls (without the lock) until done(s, arg) or SPIN_NS pass; whether done(s, arg). */
static int spin_until(emu_stream *s, int (*done)(emu_stream *, int64_t), int64_t arg)
{
    int64_t deadline = emu_mono_ns() + SPIN_NS;
    for (unsigned i = 0;;) {
        if (done(s, arg))
            return 1;
        if (emu_spin_step(&i, deadline))
            return done(s, arg);
    }
}

static int worker_has_work(emu_stream *s, int64_t unused)
{
    (void)unused;
    return (LOAD(s->count) > 0 && !LOAD(s->busy)) || LOAD(s->stop);
}

/* Pops the task at the head of the queue and runs it in the calling thread (the worker, or a
 * synchronizing caller when the worker is idle): s->mu is held on entry and on return, and
 * released while the task runs. busy keeps the two from running tasks of one stream at once, so
 * the FIFO order holds whichever thread runs a task. */
static void run_one_locked(emu_stream *s)
{
    emu_task task = s->queue[s->head];
    s->head = (s->head + 1) % s->cap;
    STORE(s->count, s->count - 1);
    STORE(s->busy, 1);
    pthread_mutex_unlock(&s->mu);
    if (__atomic_load_n(&trace_on, __ATOMIC_RELAXED)) {
        int64_t start = emu_mono_ns();
        int status = run_task(s, &task);
        trace_add(s, &task, status, start, emu_mono_ns());
    } else {
        run_task(s, &task);
    }
    pthread_mutex_lock(&s->mu);
    STORE(s->busy, 0);
    STORE(s->completed, s->completed + 1);
    pthread_cond_broadcast(&s->done_cv);
}

static void *worker_main(void *arg)
{
    emu_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->count > 0 && !s->busy) {
            run_one_locked(s);
            continue;
        }
        if (s->stop && s->count == 0)
            break; /* stopping, and nothing is left */
        STORE(s->spinning, 1);
        pthread_mutex_unlock(&s->mu);
        spin_until(s, worker_has_work, 0);
        pthread_mutex_lock(&s->mu);
        STORE(s->spinning, 0); /* from here on a submit wakes the worker */
        if ((s->count > 0 && !s->busy) || s->stop)
            continue;
        pthread_cond_wait(&s->work_cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ------------------------------------------------------------------------- streams ------- */

static void stream_free(emu_ref *r)
{
    emu_stream *s = (emu_stream *)r;
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s->queue);
    free(s);
}

uintptr_t emu_stream_create(int32_t device)
{
    emu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
    s->ref.refs = 1; /* the handle table's */
    s->ref.destroy = stream_free;
    s->device = device;
    s->cap = 64;
    s->queue = malloc((size_t)s->cap * sizeof *s->queue);
    if (!s->queue) {
        free(s);
        return 0;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work_cv, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    if (emu_thread_create(&s->thread, worker_main, s) != 0) {
        stream_free(&s->ref);
        return 0;
    }
    uintptr_t h;
    s->handle = h = emu_handle_new(EMU_KIND_STREAM, &s->ref);
    if (!h) {
        pthread_mutex_lock(&s->mu);
        STORE(s->stop, 1);
        pthread_cond_signal(&s->work_cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        stream_free(&s->ref);
    }
    return h;
}

static emu_stream *acquire_stream(uintptr_t stream)
{
    return (emu_stream *)emu_handle_acquire(stream, EMU_KIND_STREAM);
}

static int take_fault_locked(emu_stream *s, char *msg, int msglen)
{
    int rc = s->fault;
    set_msg(msg, msglen, rc ? s->fault_msg : "");
    s->fault = 0;
    s->fault_msg[0] = '\0';
    return rc;
}

/* Waits until every task enqueued before the call has run. Rather than hand each task to the
 * worker thread and sleep, the caller runs queued tasks itself while the worker is idle (a thread
 * hand-off costs tens of microseconds; a small task costs less). Tasks enqueued after the call
 * started are left to the worker. */
/* A synchronize may stop polling: its tasks are done, or the next one is free to run here. */
static int sync_may_proceed(emu_stream *s, int64_t target)
{
    return LOAD(s->completed) >= target || (LOAD(s->count) > 0 && !LOAD(s->busy));
}

static int sync_stream(emu_stream *s, char *msg, int msglen)
{
    pthread_mutex_lock(&s->mu);
    int64_t target = s->submitted;
    while (s->completed < target) {
        if (!s->busy && s->count > 0) {
            run_one_locked(s);
            continue;
        }
        /* another thread runs the stream's task: poll briefly for its end before sleeping */
        pthread_mutex_unlock(&s->mu);
        int ready = spin_until(s, sync_may_proceed, target);
        pthread_mutex_lock(&s->mu);
        if (!ready && s->completed < target && (s->busy || s->count == 0))
            pthread_cond_wait(&s->done_cv, &s->mu);
    }
    if (s->count > 0 && !s->busy && !s->spinning)
        pthread_cond_signal(&s->work_cv); /* tasks enqueued since: the worker's again */
    int rc = take_fault_locked(s, msg, msglen);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int emu_stream_synchronize(uintptr_t stream, char *msg, int msglen)
{
    if (host_stream)
        return refuse_in_host("aclrtSynchronizeStream", msg, msglen);
    emu_stream *s = acquire_stream(stream);
    if (!s) {
        set_msg(msg, msglen, "the stream is not live (destroyed, or never created here)");
        return INVALID_HANDLE;
    }
    int rc = sync_stream(s, msg, msglen);
    emu_ref_release(&s->ref);
    return rc;
}

int emu_stream_destroy(uintptr_t stream)
{
    if (host_stream)
        return refuse_in_host("aclrtDestroyStream", NULL, 0);
    emu_stream *s = (emu_stream *)emu_handle_close(stream, EMU_KIND_STREAM);
    if (!s)
        return INVALID_HANDLE;
    pthread_mutex_lock(&s->mu);
    s->closing = 1; /* submits that acquired the stream before the close are refused now */
    while (s->completed < s->submitted)
        pthread_cond_wait(&s->done_cv, &s->mu);
    STORE(s->stop, 1);
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    emu_ref_release(&s->ref); /* the table's; a synchronize still returning holds its own */
    return 0;
}

static int grow_locked(emu_stream *s, int64_t need)
{
    if (s->count + need <= s->cap)
        return 0;
    int64_t cap = s->cap;
    while (cap < s->count + need)
        cap *= 2;
    emu_task *q = malloc((size_t)cap * sizeof *q);
    if (!q)
        return -1;
    for (int64_t i = 0; i < s->count; i++)
        q[i] = s->queue[(s->head + i) % s->cap];
    free(s->queue);
    s->queue = q;
    s->cap = cap;
    s->head = 0;
    return 0;
}

static void release_task_events(emu_task *tasks, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (is_event_task(tasks[i].type) && tasks[i].event)
            emu_ref_release((emu_ref *)tasks[i].event);
}

/* Enqueues n task records (already copied by the caller into memory it owns): resolves event
 * handles to referenced events and device ranges to allocation ids, then appends the tasks to the
 * queue under the stream's lock, all or nothing. With check_ranges, a range that is not inside a
 * live allocation refuses the whole batch with EMU_LAUNCH_RANGE_NOT_LIVE. */
static int enqueue(emu_stream *s, emu_task *copy, int32_t n, int blocking, int check_ranges,
                   char *msg, int msglen)
{
    if (blocking && host_stream) /* refused before anything is enqueued or referenced */
        return refuse_in_host("a blocking launch", msg, msglen);
    /* events: handle -> referenced object, held by the task until it runs */
    for (int32_t i = 0; i < n; i++) {
        if (!is_event_task(copy[i].type))
            continue;
        emu_ref *ev = emu_handle_acquire(copy[i].event, EMU_KIND_EVENT);
        if (!ev) {
            release_task_events(copy, i);
            set_msg(msg, msglen, "the event is not live (destroyed, or never created here)");
            return INVALID_HANDLE;
        }
        copy[i].event = (uintptr_t)ev;
    }
    if (__atomic_load_n(&trace_on, __ATOMIC_RELAXED)) {
        int64_t now = emu_mono_ns();
        int32_t tid = emu_thread_id();
        for (int32_t i = 0; i < n; i++) {
            copy[i].trace_flow = __atomic_add_fetch(&trace_flows, 1, __ATOMIC_RELAXED);
            copy[i].trace_ns = now;
            copy[i].trace_tid = tid;
        }
    }
    /* device ranges: which allocation (and generation) each task touches */
    int not_live = 0;
    emu_mem_read_lock();
    for (int32_t i = 0; i < n; i++)
        for (int j = 0; j < copy[i].nranges && j < EMU_MAX_RANGES; j++) {
            emu_range *r = &copy[i].ranges[j];
            r->alloc_id = emu_mem_range_id_locked(r->ptr, r->nbytes);
            not_live |= r->nbytes != 0 && r->alloc_id == 0;
        }
    emu_mem_read_unlock();
    if (check_ranges && not_live) {
        release_task_events(copy, n);
        set_msg(msg, msglen, "a range of the launch is not inside a live device allocation");
        return EMU_LAUNCH_RANGE_NOT_LIVE;
    }
    pthread_mutex_lock(&s->mu);
    if (s->closing || grow_locked(s, n) != 0) {
        int closing = s->closing;
        pthread_mutex_unlock(&s->mu);
        release_task_events(copy, n);
        set_msg(msg, msglen, closing ? "the stream is being destroyed"
                                     : "out of host memory for the stream's task queue");
        return closing ? INVALID_HANDLE : NO_STREAM_RESOURCE;
    }
    for (int32_t i = 0; i < n; i++) {
        emu_task *t = &copy[i];
        if (is_event_task(t->type)) {
            emu_event *ev = (emu_event *)t->event;
            pthread_mutex_lock(&event_mu);
            t->seq = t->type == EMU_TASK_EVENT_RECORD ? ++ev->record_seq : ev->record_seq;
            pthread_mutex_unlock(&event_mu);
        }
        s->queue[(s->head + s->count) % s->cap] = *t;
        STORE(s->count, s->count + 1);
        s->submitted++;
    }
    int wake = !s->busy && !s->spinning;
    pthread_mutex_unlock(&s->mu);
    if (wake)
        pthread_cond_signal(&s->work_cv); /* after the unlock: the worker need not wait for it */
    return blocking ? sync_stream(s, msg, msglen) : 0;
}

/* The tasks of one call, copied: on the stack for a few, on the heap for more. */
typedef struct task_batch {
    emu_task small[SMALL_BATCH];
    emu_task *tasks;
} task_batch;

static emu_task *batch_copy(task_batch *b, const emu_task *tasks, int32_t n)
{
    b->tasks = n <= SMALL_BATCH ? b->small : malloc((size_t)n * sizeof *b->tasks);
    if (b->tasks)
        memcpy(b->tasks, tasks, (size_t)n * sizeof *b->tasks);
    return b->tasks;
}

static void batch_free(task_batch *b)
{
    if (b->tasks != b->small)
        free(b->tasks);
}

int emu_stream_submit(uintptr_t stream, const emu_task *tasks, int32_t n, int blocking,
                      char *msg, int msglen)
{
    set_msg(msg, msglen, "");
    if (n <= 0)
        return 0;
    emu_stream *s = acquire_stream(stream);
    if (!s) {
        set_msg(msg, msglen, "the stream is not live (destroyed, or never created here)");
        return INVALID_HANDLE;
    }
    task_batch b;
    int rc;
    if (!batch_copy(&b, tasks, n)) {
        set_msg(msg, msglen, "out of host memory for the stream's task queue");
        rc = NO_STREAM_RESOURCE;
    } else {
        rc = enqueue(s, b.tasks, n, blocking, 0, msg, msglen);
        batch_free(&b);
    }
    emu_ref_release(&s->ref);
    return rc;
}

static uintptr_t bind(uintptr_t value, int32_t base, const uintptr_t *bases, int32_t nbases)
{
    return base >= 0 && base < nbases ? bases[base] + value : value;
}

int emu_stream_launch(uintptr_t stream, const emu_task *templates, int32_t n,
                      const uintptr_t *bases, int32_t nbases, int blocking)
{
    if (n <= 0)
        return 0;
    emu_stream *s = acquire_stream(stream);
    if (!s) {
        set_msg(NULL, 0, "the stream is not live (destroyed, or never created here)");
        return INVALID_HANDLE;
    }
    task_batch b;
    int rc;
    if (!batch_copy(&b, templates, n)) {
        set_msg(NULL, 0, "out of host memory for the stream's task queue");
        rc = NO_STREAM_RESOURCE;
    } else {
        for (int32_t i = 0; i < n; i++) {
            emu_task *t = &b.tasks[i];
            t->a = bind(t->a, t->base[0], bases, nbases);
            t->b = bind(t->b, t->base[1], bases, nbases);
            t->c = bind(t->c, t->base[2], bases, nbases);
            for (int j = 0; j < t->nranges && j < EMU_MAX_RANGES; j++)
                t->ranges[j].ptr = bind(t->ranges[j].ptr, t->ranges[j].base, bases, nbases);
        }
        rc = enqueue(s, b.tasks, n, blocking, 1, NULL, 0);
        batch_free(&b);
    }
    emu_ref_release(&s->ref);
    return rc;
}

int emu_stream_pending(uintptr_t stream)
{
    emu_stream *s = acquire_stream(stream);
    if (!s)
        return -1;
    pthread_mutex_lock(&s->mu);
    int64_t pending = s->submitted - s->completed;
    pthread_mutex_unlock(&s->mu);
    emu_ref_release(&s->ref);
    return (int)pending;
}

int32_t emu_stream_device(uintptr_t stream)
{
    emu_stream *s = acquire_stream(stream);
    if (!s)
        return -1;
    int32_t device = s->device;
    emu_ref_release(&s->ref);
    return device;
}

static uint64_t ctx_epoch = 1;

uint64_t emu_ctx_epoch(void) { return __atomic_load_n(&ctx_epoch, __ATOMIC_ACQUIRE); }

void emu_ctx_epoch_bump(void) { __atomic_add_fetch(&ctx_epoch, 1, __ATOMIC_ACQ_REL); }

int64_t emu_stream_tasks_run(uintptr_t stream)
{
    emu_stream *s = acquire_stream(stream);
    if (!s)
        return -1;
    pthread_mutex_lock(&s->mu);
    int64_t done = s->completed;
    pthread_mutex_unlock(&s->mu);
    emu_ref_release(&s->ref);
    return done;
}

/* fork: event_mu is taken around fork so the child's copy is consistent; streams need nothing
 * (the child never touches the parent's streams: their handles are gone). */
void emu_stream_atfork_prepare(void)
{
    pthread_mutex_lock(&event_mu);
    pthread_mutex_lock(&trace_mu);
}

void emu_stream_atfork_parent(void)
{
    pthread_mutex_unlock(&trace_mu);
    pthread_mutex_unlock(&event_mu);
}

void emu_stream_atfork_child(void)
{
    if (host_stream) { /* forked by a host task: see run_host */
        forked_in_host = 1;
        host_stream = NULL; /* the child's own streams are its to wait for */
    }
    pthread_mutex_init(&event_mu, NULL);
    pthread_cond_init(&event_cv, NULL);
    pthread_mutex_init(&trace_mu, NULL); /* the parent's records are not the child's */
    trace_on = 0;
    trace_count = trace_dropped = 0;
    ctx_epoch++; /* the parent's contexts are not the child's */
}

/* -------------------------------------------------------------------------- events ------- */

static void event_free(emu_ref *r) { free(r); }

uintptr_t emu_event_create(void)
{
    emu_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return 0;
    ev->ref.refs = 1;
    ev->ref.destroy = event_free;
    uintptr_t h = emu_handle_new(EMU_KIND_EVENT, &ev->ref);
    if (!h)
        free(ev);
    return h;
}

int emu_event_destroy(uintptr_t event)
{
    emu_ref *ev = emu_handle_close(event, EMU_KIND_EVENT);
    if (!ev)
        return INVALID_HANDLE;
    emu_ref_release(ev); /* queued tasks and waiting callers keep it alive until they are done */
    return 0;
}

static emu_event *acquire_event(uintptr_t event)
{
    return (emu_event *)emu_handle_acquire(event, EMU_KIND_EVENT);
}

int emu_event_status(uintptr_t event)
{
    emu_event *ev = acquire_event(event);
    if (!ev)
        return -1;
    pthread_mutex_lock(&event_mu);
    int st = ev->done_seq < ev->record_seq ? 1 : (ev->valid ? 2 : 0);
    pthread_mutex_unlock(&event_mu);
    emu_ref_release(&ev->ref);
    return st;
}

int emu_event_synchronize(uintptr_t event)
{
    if (host_stream)
        return refuse_in_host("aclrtSynchronizeEvent", NULL, 0);
    emu_event *ev = acquire_event(event);
    if (!ev)
        return INVALID_HANDLE;
    pthread_mutex_lock(&event_mu);
    int64_t target = ev->record_seq;
    while (ev->done_seq < target)
        pthread_cond_wait(&event_cv, &event_mu);
    pthread_mutex_unlock(&event_mu);
    emu_ref_release(&ev->ref);
    return 0;
}

int emu_event_elapsed_ms(uintptr_t start, uintptr_t end, float *ms)
{
    *ms = 0.0f;
    emu_event *a = acquire_event(start);
    if (!a)
        return INVALID_HANDLE;
    emu_event *b = acquire_event(end);
    if (!b) {
        emu_ref_release(&a->ref);
        return INVALID_HANDLE;
    }
    int rc = 0;
    pthread_mutex_lock(&event_mu);
    if (a->record_seq == 0 || b->record_seq == 0)
        rc = EMU_ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID;
    else if (a->done_seq < a->record_seq || b->done_seq < b->record_seq || !a->valid ||
             !b->valid)
        rc = EMU_ACL_ERROR_RT_EVENT_NOT_COMPLETE;
    else
        *ms = (float)(b->time_ms - a->time_ms);
    pthread_mutex_unlock(&event_mu);
    emu_ref_release(&a->ref);
    emu_ref_release(&b->ref);
    return rc;
}
