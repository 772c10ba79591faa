/*
 * pool.c: the kernel thread pool shared by every stream, and the benchmark's memory floor.
 *
 * One pool per process, created on the first kernel that splits into more than one chunk while
 * the thread count n (aclk_set_num_threads) is above 1: n - 1 worker threads, the caller being
 * the n-th. aclk_parallel_for publishes a job (a record on the caller's stack) in a list, wakes
 * parked workers, and computes chunks itself; every participant claims the next chunk with an
 * atomic counter, so chunks are handed out dynamically, while chunk boundaries depend only on n
 * and grain (bit-identical results for every thread count).
 *
 * Compute slots. Several streams may run kernels at once, each stream's worker being a caller.
 * So that the process never computes chunks on more than n threads, a participant holds one of
 * n slots while it computes: a caller takes one before it starts (and waits, spinning then
 * parked, when all n are held), a pool worker joins a job only if a slot is free and no caller
 * is waiting for one (callers first: a waiting kernel gets a thread before a running one gets
 * a second). Every slot holder computes chunks and never waits for anything while it holds
 * the slot, so every kernel makes progress for any n and any number of streams. With n = 1 a
 * split kernel runs on its caller alone, in its slot (no pool thread is created). The
 * single-chunk case takes no slot: a kernel too small to split runs inline on its caller, at
 * the cost of a function call, even while bigger kernels hold every slot.
 *
 * Spin-then-park (as in stream.c): a worker that finds no job polls for SPIN_NS before it parks
 * on its condition variable, so back-to-back kernels find it awake; a caller wakes only the
 * parked workers its job can use. A caller whose chunks are all claimed gives its slot back,
 * then waits (spinning, then parked) for the workers still inside its job.
 *
 * Resizing: aclk_set_num_threads may run at any time, from any thread. A kernel in flight keeps
 * the workers it has (it cannot get more than it asked for at its start); the next kernels see
 * the new count; workers beyond it park until the count grows again (they are not joined).
 *
 * fork(): the child has none of the pool's threads. An atfork child handler forgets them (their
 * records are leaked: a lock in one may be held by a thread that does not exist there), resets
 * the jobs and slots, and renews the locks; the next split kernel in the child creates a new
 * pool. No pool lock is taken around fork: a kernel running in another thread may hold them at
 * the fork, and waiting for it there could deadlock; the child rebuilds every piece of pool
 * state instead of trusting the copy.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define POOL_NT 1
#else
#define POOL_NT 0
#endif

#include "aclk_pool.h"
#include "aclnn_emu.h"
#include "emu_internal.h"
#include "dtype.h" /* aclk_use_nt */

/* Shared fields read outside their lock are written and read through these (C11-style
 * atomics through the gcc/clang builtins, as stream.c does); SC where a Dekker-style handshake
 * (announce, then check the other side) needs a total order. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define LOAD_SC(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE_SC(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

#define SPIN_NS 50000 /* how long an idle participant polls before it parks */

typedef struct job {
    struct job *next_job, *prev_job; /* the list of open jobs (pool_mu) */
    aclk_range_fn fn;
    void *ctx;
    int64_t n, grain, nchunks;
    int64_t next;    /* atomic: the next chunk to claim */
    int refs;        /* workers inside (written under pool_mu, polled by the caller) */
    int joined;      /* workers that joined so far (pool_mu) */
    int max_workers; /* at most this many workers join (pool_mu) */
    int parked;      /* the caller sleeps on done_cv until refs == 0 (pool_mu) */
} job;

typedef struct worker {
    pthread_t thread;
    int idx; /* 0..: the worker takes part while idx < n - 1 */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int parked; /* atomic: asleep on cv (or about to be) */
    int wake;   /* mu */
} worker;

static int g_threads = 1; /* atomic: n, the threads that compute a kernel (caller included) */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;   /* the job list, job refs */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;     /* a job's last worker left */
static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER; /* creating workers */
static worker *g_workers[EMU_MAX_THREADS]; /* [0, g_nworkers) are live */
static int g_nworkers;                      /* atomic */
static job *g_jobs;                         /* pool_mu */
static int g_njobs;                         /* pool_mu */
static uint64_t g_epoch;   /* atomic: bumped when a job opens, or a slot frees while jobs are open */
static int g_nspinning;    /* atomic: workers polling for a job */

static int g_slots;        /* atomic: compute slots held */
static int g_slot_waiters; /* atomic: callers waiting for a slot */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_cv = PTHREAD_COND_INITIALIZER;

static __thread int tls_depth; /* > 0 inside a chunk (and always in a pool worker) */

/* Test hooks (emu_test_*): the threads computing chunks of split kernels, and their peak. */
static int g_track;  /* atomic */
static int g_active; /* atomic */
static int g_peak;   /* atomic */

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------------ helpers ------- */

static void track_enter(void)
{
    if (!__atomic_load_n(&g_track, __ATOMIC_RELAXED))
        return;
    int a = ADD(g_active, 1);
    int p = LOAD(g_peak);
    while (a > p && !__atomic_compare_exchange_n(&g_peak, &p, a, 0, __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST))
        ;
}

static void track_leave(void)
{
    if (__atomic_load_n(&g_track, __ATOMIC_RELAXED))
        ADD(g_active, -1);
}

/* Claims and runs chunks of j until none is left. */
static void run_chunks(job *j)
{
    for (;;) {
        int64_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (k >= j->nchunks)
            return;
        int64_t b = k * j->grain;
        int64_t e = j->n - b > j->grain ? b + j->grain : j->n;
        j->fn(j->ctx, b, e);
    }
}

/* ---------------------------------------------------------------------- compute slots ---- */

static int try_slot(void)
{
    int used = LOAD_SC(g_slots);
    while (used < LOAD_SC(g_threads))
        if (__atomic_compare_exchange_n(&g_slots, &used, used + 1, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return 1;
    return 0;
}

/* A caller's slot: waits (polls, then sleeps) while all n are held. */
static void take_slot(void)
{
    if (try_slot())
        return;
    ADD(g_slot_waiters, 1); /* from here on, workers leave free slots to the callers */
    int64_t deadline = emu_mono_ns() + SPIN_NS;
    unsigned i = 0;
    int got = 0;
    while (!(got = try_slot()) && !emu_spin_step(&i, deadline))
        ;
    if (!got) {
        pthread_mutex_lock(&slot_mu);
        while (!try_slot())
            pthread_cond_wait(&slot_cv, &slot_mu);
        pthread_mutex_unlock(&slot_mu);
    }
    ADD(g_slot_waiters, -1);
}

static void release_slot(void)
{
    ADD(g_slots, -1);
    /* a waiter announced itself before its last try: either it sees this release, or this
       load sees it (both are sequentially consistent) */
    if (LOAD_SC(g_slot_waiters) > 0) {
        pthread_mutex_lock(&slot_mu);
        pthread_cond_signal(&slot_cv);
        pthread_mutex_unlock(&slot_mu);
    }
}

/* ------------------------------------------------------------------------- workers ------ */

static void wake_worker(worker *w)
{
    pthread_mutex_lock(&w->mu);
    w->wake = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Wakes up to `want` parked workers among the first `eligible`. */
static void wake_parked(int want, int eligible)
{
    int nw = LOAD(g_nworkers);
    if (eligible > nw)
        eligible = nw;
    for (int i = 0; i < eligible && want > 0; i++) {
        worker *w = g_workers[i];
        if (LOAD_SC(w->parked)) {
            wake_worker(w);
            want--;
        }
    }
}

static int eligible(const worker *w) { return w->idx < LOAD(g_threads) - 1; }

/* Joins an open job that has chunks left and room for a worker, if a slot is free; computes
 * its chunks. 1 if the worker took part in a job. */
static int try_work(void)
{
    job *j = NULL;
    pthread_mutex_lock(&pool_mu);
    for (job *it = g_jobs; it; it = it->next_job) {
        if (__atomic_load_n(&it->next, __ATOMIC_RELAXED) >= it->nchunks ||
            it->joined >= it->max_workers)
            continue;
        if (LOAD_SC(g_slot_waiters) == 0 && try_slot()) {
            j = it;
            j->joined++;
            STORE(j->refs, j->refs + 1);
        }
        break; /* no free slot: no job can be joined */
    }
    pthread_mutex_unlock(&pool_mu);
    if (!j)
        return 0;
    track_enter();
    run_chunks(j);
    track_leave();
    release_slot();
    pthread_mutex_lock(&pool_mu);
    int wake = j->parked; /* read before the release: the job may be gone after it */
    STORE(j->refs, j->refs - 1);
    if (wake)
        pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&pool_mu);
    return 1;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    tls_depth = 1; /* a kernel chunk that calls aclk_parallel_for runs it inline */
    uint64_t seen = 0;
    int rescan = 1;
    for (;;) {
        if (eligible(w)) {
            uint64_t e = LOAD_SC(g_epoch);
            if (rescan || e != seen) {
                seen = e;
                rescan = try_work(); /* after a job, look again at once: another may be open */
                if (rescan)
                    continue;
            }
            /* poll for a new job for SPIN_NS */
            ADD(g_nspinning, 1);
            int64_t deadline = emu_mono_ns() + SPIN_NS;
            unsigned i = 0;
            int changed = 0;
            while (!(changed = LOAD_SC(g_epoch) != seen && eligible(w)) &&
                   !emu_spin_step(&i, deadline))
                ;
            ADD(g_nspinning, -1);
            if (changed)
                continue;
        }
        /* park: announce it, then look once more (a caller bumps the epoch, then looks for
           parked workers: one of the two sees the other) */
        pthread_mutex_lock(&w->mu);
        STORE_SC(w->parked, 1);
        if (!(eligible(w) && LOAD_SC(g_epoch) != seen))
            while (!w->wake)
                pthread_cond_wait(&w->cv, &w->mu);
        w->wake = 0;
        STORE_SC(w->parked, 0);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

static void atfork_child(void);

static void register_atfork(void) { pthread_atfork(NULL, NULL, atfork_child); }

/* Creates workers until there are `want` (fewer if the system refuses threads). */
static void grow_pool(int want)
{
    pthread_mutex_lock(&create_mu);
    for (int i = g_nworkers; i < want; i++) {
        worker *w = calloc(1, sizeof *w);
        if (!w)
            break;
        w->idx = i;
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        g_workers[i] = w;
        if (emu_thread_create(&w->thread, worker_main, w) != 0) {
            pthread_mutex_destroy(&w->mu);
            pthread_cond_destroy(&w->cv);
            free(w);
            g_workers[i] = NULL;
            break;
        }
        pthread_detach(w->thread);
        STORE(g_nworkers, i + 1);
    }
    pthread_mutex_unlock(&create_mu);
}

/* ---------------------------------------------------------------------------- fork ------ */

/* In the child: the parent's workers do not exist, and a thread that held a pool lock or a slot
 * may not either. Everything starts afresh; the worker records are leaked. */
static void atfork_child(void)
{
    for (int i = 0; i < EMU_MAX_THREADS; i++)
        g_workers[i] = NULL;
    g_nworkers = 0;
    g_jobs = NULL;
    g_njobs = 0;
    g_nspinning = 0;
    g_slots = 0;
    g_slot_waiters = 0;
    g_active = 0;
    pthread_mutex_init(&pool_mu, NULL);
    pthread_cond_init(&done_cv, NULL);
    pthread_mutex_init(&create_mu, NULL);
    pthread_mutex_init(&slot_mu, NULL);
    pthread_cond_init(&slot_cv, NULL);
}

/* ------------------------------------------------------------------------- the API ------ */

int aclk_num_threads(void) { return LOAD(g_threads); }

void aclk_set_num_threads(int n)
{
    n = n < 1 ? 1 : n > EMU_MAX_THREADS ? EMU_MAX_THREADS : n;
    int old = __atomic_exchange_n(&g_threads, n, __ATOMIC_SEQ_CST);
    if (n > old && LOAD_SC(g_slot_waiters) > 0) { /* more slots: every waiter may try again */
        pthread_mutex_lock(&slot_mu);
        pthread_cond_broadcast(&slot_cv);
        pthread_mutex_unlock(&slot_mu);
    }
}

static void run_inline(int64_t n, int64_t grain, aclk_range_fn fn, void *ctx)
{
    for (int64_t b = 0; b < n; b += grain)
        fn(ctx, b, n - b > grain ? b + grain : n);
}

void aclk_parallel_for(int64_t n, int64_t grain, aclk_range_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    if (n <= grain || tls_depth > 0) { /* one chunk, or nested in a chunk: no pool */
        run_inline(n, grain, fn, ctx);
        return;
    }
    int nt = LOAD(g_threads);
    pthread_once(&atfork_once, register_atfork);
    int64_t nchunks = (n - 1) / grain + 1;
    if (nt > 1 && LOAD(g_nworkers) < nt - 1)
        grow_pool(nt - 1);

    take_slot();
    tls_depth++;
    track_enter();
    if (nt == 1) { /* the caller alone, in its slot */
        run_inline(n, grain, fn, ctx);
        track_leave();
        tls_depth--;
        release_slot();
        return;
    }
    job j;
    memset(&j, 0, sizeof j);
    j.fn = fn;
    j.ctx = ctx;
    j.n = n;
    j.grain = grain;
    j.nchunks = nchunks;
    j.max_workers = nchunks - 1 < nt - 1 ? (int)(nchunks - 1) : nt - 1;

    pthread_mutex_lock(&pool_mu);
    j.next_job = g_jobs;
    if (g_jobs)
        g_jobs->prev_job = &j;
    g_jobs = &j;
    g_njobs++;
    pthread_mutex_unlock(&pool_mu);
    ADD(g_epoch, 1); /* then look for parked workers: see worker_main */
    int want = j.max_workers - LOAD_SC(g_nspinning);
    if (want > 0)
        wake_parked(want, nt - 1);

    run_chunks(&j);
    track_leave();
    tls_depth--;
    release_slot();

    /* every chunk is claimed: close the job, so no other worker joins it */
    pthread_mutex_lock(&pool_mu);
    if (j.prev_job)
        j.prev_job->next_job = j.next_job;
    else
        g_jobs = j.next_job;
    if (j.next_job)
        j.next_job->prev_job = j.prev_job;
    int others = --g_njobs;
    pthread_mutex_unlock(&pool_mu);
    if (others > 0) { /* the slot this caller gave back may let a worker help another job */
        ADD(g_epoch, 1);
        if (LOAD_SC(g_nspinning) == 0)
            wake_parked(1, nt - 1);
    }

    /* wait for the workers still computing chunks of this job */
    if (LOAD(j.refs) > 0) {
        int64_t deadline = emu_mono_ns() + SPIN_NS;
        unsigned i = 0;
        while (LOAD(j.refs) > 0 && !emu_spin_step(&i, deadline))
            ;
        if (LOAD(j.refs) > 0) {
            pthread_mutex_lock(&pool_mu);
            while (j.refs > 0) {
                j.parked = 1;
                pthread_cond_wait(&done_cv, &pool_mu);
            }
            pthread_mutex_unlock(&pool_mu);
        }
    }
}

/* ------------------------------------------------------------------ the memory floor ----- */

#define FLOOR_CHUNK ((int64_t)1 << 20)

/* Non-temporal stores exactly when the kernels use them (aclk_use_nt: an output above half the
 * last-level cache, at an ISA level that has such stores), so the floor is the same-footprint
 * operation under the kernels' own store policy. */
static int floor_nt(int64_t out_bytes) { return POOL_NT && aclk_use_nt(out_bytes); }

typedef struct {
    char *out;
    const char *a, *b;
    int nt;
} floor_ctx;

#if POOL_NT
static void copy_nt(char *d, const char *s, size_t n)
{
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i v0 = _mm_loadu_si128((const __m128i *)s);
        __m128i v1 = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i v3 = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, v0);
        _mm_stream_si128((__m128i *)(d + 16), v1);
        _mm_stream_si128((__m128i *)(d + 32), v2);
        _mm_stream_si128((__m128i *)(d + 48), v3);
    }
    for (; n >= 16; n -= 16, d += 16, s += 16)
        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    memcpy(d, s, n);
    _mm_sfence();
}
#endif

static void floor_copy_chunk(void *p, int64_t begin, int64_t end)
{
    const floor_ctx *c = p;
#if POOL_NT
    if (c->nt) {
        copy_nt(c->out + begin, c->a + begin, (size_t)(end - begin));
        return;
    }
#endif
    memcpy(c->out + begin, c->a + begin, (size_t)(end - begin));
}

void aclk_floor_copy(void *dst, const void *src, int64_t nbytes)
{
    if (nbytes <= 0)
        return;
    floor_ctx c = {(char *)dst, (const char *)src, NULL, floor_nt(nbytes)};
    aclk_parallel_for(nbytes, FLOOR_CHUNK, floor_copy_chunk, &c);
}

/* out[i] = a[i] + b[i] over n 32-bit words, any alignment. */
static void add_words(char *out, const char *a, const char *b, int64_t n, int nt)
{
    int64_t i = 0;
    if (((uintptr_t)out | (uintptr_t)a | (uintptr_t)b) % 4 == 0) {
        uint32_t *o = (uint32_t *)(void *)out;
        const uint32_t *x = (const uint32_t *)(const void *)a;
        const uint32_t *y = (const uint32_t *)(const void *)b;
#if POOL_NT
        if (nt) {
            for (; i < n && ((uintptr_t)(o + i) & 15) != 0; i++) /* the head, to 16 bytes */
                o[i] = x[i] + y[i];
            for (; i + 16 <= n; i += 16) {
                __m128i s0 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(x + i)),
                                           _mm_loadu_si128((const __m128i *)(y + i)));
                __m128i s1 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(x + i + 4)),
                                           _mm_loadu_si128((const __m128i *)(y + i + 4)));
                __m128i s2 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(x + i + 8)),
                                           _mm_loadu_si128((const __m128i *)(y + i + 8)));
                __m128i s3 = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(x + i + 12)),
                                           _mm_loadu_si128((const __m128i *)(y + i + 12)));
                _mm_stream_si128((__m128i *)(o + i), s0);
                _mm_stream_si128((__m128i *)(o + i + 4), s1);
                _mm_stream_si128((__m128i *)(o + i + 8), s2);
                _mm_stream_si128((__m128i *)(o + i + 12), s3);
            }
            for (; i < n; i++)
                o[i] = x[i] + y[i];
            _mm_sfence();
            return;
        }
#else
        (void)nt;
#endif
        for (; i < n; i++)
            o[i] = x[i] + y[i];
        return;
    }
    for (; i < n; i++) {
        uint32_t x, y;
        memcpy(&x, a + 4 * i, 4);
        memcpy(&y, b + 4 * i, 4);
        x += y;
        memcpy(out + 4 * i, &x, 4);
    }
}

static void floor_add_chunk(void *p, int64_t begin, int64_t end)
{
    const floor_ctx *c = p;
    /* begin is a multiple of FLOOR_CHUNK (of 4); end is one too, or nbytes */
    add_words(c->out + begin, c->a + begin, c->b + begin, (end - begin) / 4, c->nt);
}

void aclk_floor_add(const void *a, const void *b, void *out, int64_t nbytes)
{
    if (nbytes < 4)
        return;
    floor_ctx c = {(char *)out, (const char *)a, (const char *)b, floor_nt(nbytes)};
    aclk_parallel_for(nbytes, FLOOR_CHUNK, floor_add_chunk, &c);
}

/* ---------------------------------------------------------------- the compute probe ----- */

/* A chunk: PROBE_STEPS multiply-adds on each of PROBE_LANES floats, in lanes the compiler
   vectorises (independent chains, so the core's arithmetic throughput decides its time, not
   latency), then a store the compiler cannot drop. About 6 us on a 2020s x86 core. A run of
   the benchmark times it beside each row: with the machine's arithmetic speed steady it takes
   the same time in every row, and a row where it takes much longer ran while the machine
   computed slower (a virtual machine's cores sharing a physical one, say). */
#define PROBE_LANES 64
#define PROBE_STEPS 2048

static void probe_chunk(void *p, int64_t begin, int64_t end)
{
    int32_t *sink = p;
    for (int64_t c = begin; c < end; c++) {
        float v[PROBE_LANES];
        for (int j = 0; j < PROBE_LANES; j++)
            v[j] = (float)(j + c % 7);
        for (int s = 0; s < PROBE_STEPS; s++)
            for (int j = 0; j < PROBE_LANES; j++)
                v[j] = v[j] * 0.999f + 0.001f;
        float t = 0.0f;
        for (int j = 0; j < PROBE_LANES; j++)
            t += v[j];
        __atomic_store_n(sink, (int32_t)t, __ATOMIC_RELAXED);
    }
}

void aclk_probe(int64_t n)
{
    int32_t sink = 0;
    if (n > 0)
        aclk_parallel_for(n, 1, probe_chunk, &sink);
}

/* -------------------------------------------------------------------- test hooks -------- */

typedef struct {
    int64_t n, grain;
    unsigned char *seen;
    int bad; /* atomic */
} sum_ctx;

static void sum_chunk(void *p, int64_t begin, int64_t end)
{
    sum_ctx *c = p;
    int64_t want_end = c->n - begin > c->grain ? begin + c->grain : c->n;
    if (begin < 0 || begin % c->grain != 0 || end != want_end)
        __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
    for (int64_t i = begin; i < end && i < c->n && i >= 0; i++)
        __atomic_add_fetch(&c->seen[i], 1, __ATOMIC_RELAXED);
}

int emu_test_parallel_sum(int64_t n, int64_t grain)
{
    if (n < 0)
        return -1;
    sum_ctx c = {n, grain < 1 ? 1 : grain, calloc((size_t)n + 1, 1), 0};
    if (!c.seen)
        return -2;
    aclk_parallel_for(n, grain, sum_chunk, &c);
    int rc = __atomic_load_n(&c.bad, __ATOMIC_RELAXED) ? -1 : 0;
    for (int64_t i = 0; i < n && rc == 0; i++)
        if (__atomic_load_n(&c.seen[i], __ATOMIC_RELAXED) != 1)
            rc = -1;
    free(c.seen);
    return rc;
}

static void busy_wait_us(int64_t us)
{
    int64_t until = emu_mono_ns() + us * 1000;
    while (emu_mono_ns() < until)
        emu_cpu_relax();
}

static void busy_chunk(void *p, int64_t begin, int64_t end)
{
    int64_t us = *(const int64_t *)p;
    for (int64_t k = begin; k < end; k++)
        busy_wait_us(us);
}

void emu_test_parallel_busy(int64_t nchunks, int64_t chunk_us)
{
    aclk_parallel_for(nchunks, 1, busy_chunk, &chunk_us);
}

typedef struct {
    pthread_t caller;
    int64_t min; /* atomic; INT64_MAX until a worker ran a chunk */
} stack_ctx;

static void stack_chunk(void *p, int64_t begin, int64_t end)
{
    stack_ctx *c = p;
    (void)begin, (void)end;
    busy_wait_us(2000); /* long enough for the workers to take chunks */
#if defined(__GLIBC__)
    if (pthread_equal(pthread_self(), c->caller))
        return;
    pthread_attr_t a;
    size_t sz = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    pthread_attr_getstacksize(&a, &sz);
    pthread_attr_destroy(&a);
    int64_t cur = __atomic_load_n(&c->min, __ATOMIC_RELAXED);
    while ((int64_t)sz < cur &&
           !__atomic_compare_exchange_n(&c->min, &cur, (int64_t)sz, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
#endif
}

int64_t emu_test_pool_min_stack(int64_t nchunks)
{
#if defined(__GLIBC__)
    stack_ctx c = {pthread_self(), INT64_MAX};
    aclk_parallel_for(nchunks, 1, stack_chunk, &c);
    int64_t m = __atomic_load_n(&c.min, __ATOMIC_RELAXED);
    return m == INT64_MAX ? 0 : m;
#else
    (void)nchunks;
    return -1;
#endif
}

static void empty_chunk(void *p, int64_t begin, int64_t end)
{
    (void)p;
    (void)begin;
    (void)end;
}

double emu_test_parallel_overhead_us(int64_t nchunks, int64_t reps)
{
    if (reps < 1)
        reps = 1;
    int64_t t0 = emu_mono_ns();
    for (int64_t r = 0; r < reps; r++)
        aclk_parallel_for(nchunks, 1, empty_chunk, NULL);
    return (double)(emu_mono_ns() - t0) / 1e3 / (double)reps;
}

void emu_test_pool_track(int on)
{
    if (on) {
        STORE_SC(g_peak, 0);
        STORE_SC(g_active, 0);
    }
    STORE_SC(g_track, on ? 1 : 0);
}

int emu_test_pool_peak(void) { return LOAD_SC(g_peak); }

int emu_test_pool_workers(void) { return LOAD(g_nworkers); }

/* ------------------------------------------------------------------ thread scratch ---- */

typedef struct {
    void *p;
    size_t n;
} scratch_buf;

static pthread_key_t scratch_key;
static int scratch_key_ok;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *v)
{
    scratch_buf *b = (scratch_buf *)v;
    free(b->p);
    free(b);
}

static void scratch_init(void)
{
    scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

void *aclk_scratch(size_t bytes)
{
    pthread_once(&scratch_once, scratch_init);
    if (!scratch_key_ok)
        return NULL;
    scratch_buf *b = (scratch_buf *)pthread_getspecific(scratch_key);
    if (!b) {
        b = (scratch_buf *)calloc(1, sizeof *b);
        if (!b)
            return NULL;
        if (pthread_setspecific(scratch_key, b) != 0) {
            free(b);
            return NULL;
        }
    }
    if (b->n < bytes) {
        size_t n = (bytes + 63) & ~(size_t)63;
        void *p = NULL;
        if (posix_memalign(&p, 64, n) != 0)
            return NULL;
        free(b->p);
        b->p = p;
        b->n = n;
    }
    return b->p;
}
