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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAULT_KERNEL 507015 /* ACL_ERROR_RT_AICORE_EXCEPTION */
#define FAULT_DMA 507013    /* ACL_ERROR_RT_SYS_DMA */
#define INVALID_HANDLE 107017 /* ACL_ERROR_RT_INVALID_HANDLE */

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
    int closing; /* destroy has begun: no new tasks */
    int stop;    /* the worker exits once the queue is empty */
    int fault;
    char fault_msg[EMU_MSG_LEN];
    int32_t device;
} emu_stream;

double emu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void set_msg(char *msg, int msglen, const char *text)
{
    if (msg && msglen > 0)
        snprintf(msg, (size_t)msglen, "%s", text);
}

static int is_event_task(int32_t type)
{
    return type == EMU_TASK_EVENT_RECORD || type == EMU_TASK_EVENT_WAIT ||
           type == EMU_TASK_EVENT_RESET;
}

/* ------------------------------------------------------------------ task execution ------- */

static int run_kernel(const emu_task *t)
{
    switch (t->kernel) {
    case EMU_K_SOFTMAX_FWD:
        return aclk_softmax_fwd(t->dtype, (const void *)t->a, (void *)t->c, t->outer, t->axis,
                                t->inner, t->flag);
    case EMU_K_SOFTMAX_BWD:
        return aclk_softmax_bwd(t->dtype, (const void *)t->a, (const void *)t->b, (void *)t->c,
                                t->outer, t->axis, t->inner, t->flag);
    case EMU_K_HARDSIGMOID_FWD:
        return aclk_hardsigmoid_fwd(t->dtype, (const void *)t->a, (void *)t->c, t->n, t->alpha,
                                    t->beta);
    case EMU_K_HARDSIGMOID_BWD:
        return aclk_hardsigmoid_bwd(t->dtype, (const void *)t->a, (const void *)t->b,
                                    (void *)t->c, t->n, t->alpha, t->beta);
    case EMU_K_CAST:
        return aclk_cast(t->dtype, (const void *)t->a, t->dtype2, (void *)t->c, t->n);
    case EMU_K_STRIDED_COPY:
        return aclk_strided_copy(t->n, t->ndim, t->shape, (const void *)t->a, t->strides_a,
                                 (void *)t->c, t->strides_b);
    default:
        return -1;
    }
}

/* Runs a compute or copy task under the allocation table's read lock; 0 or a fault code. */
static int run_data_task(const emu_task *t, char *msg, int msglen)
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
        if (run_kernel(t) != 0) {
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

static void run_task(emu_stream *s, const emu_task *t)
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
        return;
    case EMU_TASK_EVENT_WAIT:
        pthread_mutex_lock(&event_mu);
        while (ev->done_seq < t->seq)
            pthread_cond_wait(&event_cv, &event_mu);
        pthread_mutex_unlock(&event_mu);
        emu_ref_release(&ev->ref);
        return;
    case EMU_TASK_EVENT_RESET:
        pthread_mutex_lock(&event_mu);
        if (ev->done_seq == ev->record_seq)
            ev->valid = 0;
        pthread_mutex_unlock(&event_mu);
        emu_ref_release(&ev->ref);
        return;
    case EMU_TASK_SLEEP:
        usleep((useconds_t)t->n);
        return;
    default:
        break;
    }
    pthread_mutex_lock(&s->mu);
    int faulted = s->fault != 0;
    pthread_mutex_unlock(&s->mu);
    if (faulted)
        return; /* skipped: an earlier task of this stream failed */
    char msg[EMU_MSG_LEN];
    int rc = run_data_task(t, msg, sizeof msg);
    if (rc != 0) {
        pthread_mutex_lock(&s->mu);
        if (s->fault == 0) {
            s->fault = rc;
            snprintf(s->fault_msg, sizeof s->fault_msg, "%s", msg);
        }
        pthread_mutex_unlock(&s->mu);
    }
}

static void *worker_main(void *arg)
{
    emu_stream *s = arg;
    emu_task task;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->count == 0 && !s->stop)
            pthread_cond_wait(&s->work_cv, &s->mu);
        if (s->count == 0)
            break;
        task = s->queue[s->head];
        s->head = (s->head + 1) % s->cap;
        s->count--;
        pthread_mutex_unlock(&s->mu);
        run_task(s, &task);
        pthread_mutex_lock(&s->mu);
        s->completed++;
        pthread_cond_broadcast(&s->done_cv);
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
    emu_runtime_init();
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
    if (pthread_create(&s->thread, NULL, worker_main, s) != 0) {
        stream_free(&s->ref);
        return 0;
    }
    uintptr_t h = emu_handle_new(EMU_KIND_STREAM, &s->ref);
    if (!h) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
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

static int sync_stream(emu_stream *s, char *msg, int msglen)
{
    pthread_mutex_lock(&s->mu);
    int64_t target = s->submitted;
    while (s->completed < target)
        pthread_cond_wait(&s->done_cv, &s->mu);
    int rc = take_fault_locked(s, msg, msglen);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int emu_stream_synchronize(uintptr_t stream, char *msg, int msglen)
{
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
    emu_stream *s = (emu_stream *)emu_handle_close(stream, EMU_KIND_STREAM);
    if (!s)
        return INVALID_HANDLE;
    pthread_mutex_lock(&s->mu);
    s->closing = 1; /* submits that acquired the stream before the close are refused now */
    while (s->completed < s->submitted)
        pthread_cond_wait(&s->done_cv, &s->mu);
    s->stop = 1;
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
    int rc = 0;
    emu_task *copy = malloc((size_t)n * sizeof *copy);
    if (!copy) {
        set_msg(msg, msglen, "out of host memory for the stream's task queue");
        rc = 207008; /* ACL_ERROR_RT_NO_STREAM_RESOURCE */
        goto out;
    }
    memcpy(copy, tasks, (size_t)n * sizeof *copy);
    /* events: handle -> referenced object, held by the task until it runs */
    for (int32_t i = 0; i < n; i++) {
        if (!is_event_task(copy[i].type))
            continue;
        emu_ref *ev = emu_handle_acquire(copy[i].event, EMU_KIND_EVENT);
        if (!ev) {
            release_task_events(copy, i);
            set_msg(msg, msglen, "the event is not live (destroyed, or never created here)");
            rc = INVALID_HANDLE;
            goto out;
        }
        copy[i].event = (uintptr_t)ev;
    }
    /* device ranges: which allocation (and generation) each task touches */
    emu_mem_read_lock();
    for (int32_t i = 0; i < n; i++)
        for (int j = 0; j < copy[i].nranges && j < EMU_MAX_RANGES; j++)
            copy[i].ranges[j].alloc_id =
                emu_mem_range_id_locked(copy[i].ranges[j].ptr, copy[i].ranges[j].nbytes);
    emu_mem_read_unlock();
    pthread_mutex_lock(&s->mu);
    if (s->closing || grow_locked(s, n) != 0) {
        int closing = s->closing;
        pthread_mutex_unlock(&s->mu);
        release_task_events(copy, n);
        set_msg(msg, msglen, closing ? "the stream is being destroyed"
                                     : "out of host memory for the stream's task queue");
        rc = closing ? INVALID_HANDLE : 207008;
        goto out;
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
        s->count++;
        s->submitted++;
    }
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    if (blocking)
        rc = sync_stream(s, msg, msglen);
out:
    free(copy);
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
void emu_stream_atfork_prepare(void) { pthread_mutex_lock(&event_mu); }

void emu_stream_atfork_parent(void) { pthread_mutex_unlock(&event_mu); }

void emu_stream_atfork_child(void)
{
    pthread_mutex_init(&event_mu, NULL);
    pthread_cond_init(&event_cv, NULL);
}

/* -------------------------------------------------------------------------- events ------- */

static void event_free(emu_ref *r) { free(r); }

uintptr_t emu_event_create(void)
{
    emu_runtime_init();
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
        rc = 107006; /* ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID */
    else if (a->done_seq < a->record_seq || b->done_seq < b->record_seq || !a->valid ||
             !b->valid)
        rc = 507006; /* ACL_ERROR_RT_EVENT_NOT_COMPLETE */
    else
        *ms = (float)(b->time_ms - a->time_ms);
    pthread_mutex_unlock(&event_mu);
    emu_ref_release(&a->ref);
    emu_ref_release(&b->ref);
    return rc;
}
