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
 * is how stream_wait_event orders two streams. Events are reference counted by the tasks that
 * name them, so destroying an event with work still pending is safe.
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

typedef struct emu_event {
    int64_t record_seq;
    int64_t done_seq;
    int valid; /* recorded and not reset since */
    double time_ms;
    int refs;  /* the user's handle + one per task that names it */
} emu_event;

static pthread_mutex_t event_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t event_cv = PTHREAD_COND_INITIALIZER;

typedef struct emu_stream {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    pthread_cond_t done_cv;
    emu_task *queue;
    int64_t cap, head, count;
    int64_t submitted, completed;
    int stop;
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

static void event_release_locked(emu_event *ev)
{
    if (--ev->refs == 0)
        free(ev);
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
        if (emu_mem_check_range_locked(r->ptr, r->nbytes, NULL) != 0) {
            snprintf(msg, (size_t)msglen,
                     "%s: %s: '%s' bytes [0x%" PRIxPTR ", 0x%" PRIxPTR ") are no longer inside a "
                     "live device allocation when the task runs (was the memory freed before "
                     "the stream reached it?)",
                     t->op, t->step, r->name, r->ptr, r->ptr + (uintptr_t)r->nbytes);
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
    emu_event *ev = (emu_event *)t->event;
    switch (t->type) {
    case EMU_TASK_EVENT_RECORD:
        pthread_mutex_lock(&event_mu);
        if (t->seq > ev->done_seq)
            ev->done_seq = t->seq;
        ev->valid = 1;
        ev->time_ms = emu_now_ms();
        event_release_locked(ev);
        pthread_cond_broadcast(&event_cv);
        pthread_mutex_unlock(&event_mu);
        return;
    case EMU_TASK_EVENT_WAIT:
        pthread_mutex_lock(&event_mu);
        while (ev->done_seq < t->seq)
            pthread_cond_wait(&event_cv, &event_mu);
        event_release_locked(ev);
        pthread_mutex_unlock(&event_mu);
        return;
    case EMU_TASK_EVENT_RESET:
        pthread_mutex_lock(&event_mu);
        if (ev->done_seq == ev->record_seq)
            ev->valid = 0;
        event_release_locked(ev);
        pthread_mutex_unlock(&event_mu);
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

uintptr_t emu_stream_create(int32_t device)
{
    emu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
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
        free(s->queue);
        free(s);
        return 0;
    }
    return (uintptr_t)s;
}

static int take_fault_locked(emu_stream *s, char *msg, int msglen)
{
    int rc = s->fault;
    if (msg && msglen > 0)
        snprintf(msg, (size_t)msglen, "%s", rc ? s->fault_msg : "");
    s->fault = 0;
    s->fault_msg[0] = '\0';
    return rc;
}

int emu_stream_synchronize(uintptr_t stream, char *msg, int msglen)
{
    emu_stream *s = (emu_stream *)stream;
    pthread_mutex_lock(&s->mu);
    int64_t target = s->submitted;
    while (s->completed < target)
        pthread_cond_wait(&s->done_cv, &s->mu);
    int rc = take_fault_locked(s, msg, msglen);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int emu_stream_destroy(uintptr_t stream)
{
    emu_stream *s = (emu_stream *)stream;
    emu_stream_synchronize(stream, NULL, 0);
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s->queue);
    free(s);
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

int emu_stream_submit(uintptr_t stream, const emu_task *tasks, int32_t n, int blocking,
                      char *msg, int msglen)
{
    emu_stream *s = (emu_stream *)stream;
    if (msg && msglen > 0)
        msg[0] = '\0';
    if (n <= 0)
        return 0;
    pthread_mutex_lock(&s->mu);
    if (grow_locked(s, n) != 0) {
        pthread_mutex_unlock(&s->mu);
        if (msg && msglen > 0)
            snprintf(msg, (size_t)msglen, "out of host memory for the stream's task queue");
        return 207008; /* ACL_ERROR_RT_NO_STREAM_RESOURCE */
    }
    for (int32_t i = 0; i < n; i++) {
        emu_task t = tasks[i];
        emu_event *ev = (emu_event *)t.event;
        if (ev && (t.type == EMU_TASK_EVENT_RECORD || t.type == EMU_TASK_EVENT_WAIT ||
                   t.type == EMU_TASK_EVENT_RESET)) {
            pthread_mutex_lock(&event_mu);
            if (t.type == EMU_TASK_EVENT_RECORD)
                t.seq = ++ev->record_seq;
            else
                t.seq = ev->record_seq;
            ev->refs++;
            pthread_mutex_unlock(&event_mu);
        }
        s->queue[(s->head + s->count) % s->cap] = t;
        s->count++;
        s->submitted++;
    }
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    if (!blocking)
        return 0;
    return emu_stream_synchronize(stream, msg, msglen);
}

int emu_stream_pending(uintptr_t stream)
{
    emu_stream *s = (emu_stream *)stream;
    pthread_mutex_lock(&s->mu);
    int64_t pending = s->submitted - s->completed;
    pthread_mutex_unlock(&s->mu);
    return (int)pending;
}

int64_t emu_stream_tasks_run(uintptr_t stream)
{
    emu_stream *s = (emu_stream *)stream;
    pthread_mutex_lock(&s->mu);
    int64_t done = s->completed;
    pthread_mutex_unlock(&s->mu);
    return done;
}

/* -------------------------------------------------------------------------- events ------- */

uintptr_t emu_event_create(void)
{
    emu_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return 0;
    ev->refs = 1;
    return (uintptr_t)ev;
}

int emu_event_destroy(uintptr_t event)
{
    pthread_mutex_lock(&event_mu);
    event_release_locked((emu_event *)event);
    pthread_mutex_unlock(&event_mu);
    return 0;
}

int emu_event_status(uintptr_t event)
{
    emu_event *ev = (emu_event *)event;
    pthread_mutex_lock(&event_mu);
    int st = ev->done_seq < ev->record_seq ? 1 : (ev->valid ? 2 : 0);
    pthread_mutex_unlock(&event_mu);
    return st;
}

int emu_event_synchronize(uintptr_t event)
{
    emu_event *ev = (emu_event *)event;
    pthread_mutex_lock(&event_mu);
    int64_t target = ev->record_seq;
    while (ev->done_seq < target)
        pthread_cond_wait(&event_cv, &event_mu);
    pthread_mutex_unlock(&event_mu);
    return 0;
}

int emu_event_elapsed_ms(uintptr_t start, uintptr_t end, float *ms)
{
    emu_event *a = (emu_event *)start, *b = (emu_event *)end;
    int rc = 0;
    *ms = 0.0f;
    pthread_mutex_lock(&event_mu);
    if (a->record_seq == 0 || b->record_seq == 0)
        rc = 107006; /* ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID */
    else if (a->done_seq < a->record_seq || b->done_seq < b->record_seq || !a->valid ||
             !b->valid)
        rc = 507006; /* ACL_ERROR_RT_EVENT_NOT_COMPLETE */
    else
        *ms = (float)(b->time_ms - a->time_ms);
    pthread_mutex_unlock(&event_mu);
    return rc;
}
