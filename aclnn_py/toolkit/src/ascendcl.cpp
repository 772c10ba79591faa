/*
 * libascendcl.so: CANN's C API (acl.h and the ACL headers it includes, acl_op_compiler.h,
 * acl_meta.h, the aclnn operator headers) over the aclnn-py emulator. Every entry point forwards
 * to the Python runtime and operators (aclnn_py.acl, aclnn_py.aclnn) through cffi's embedding
 * mode, so codes, check order, aclGetRecentErrMsg texts, asynchrony and the memory checks are
 * those of the Python API; aclrtSynchronizeStream and both phases first try their C paths (see
 * "fast paths" below), which leave every refusal to Python.
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


/* ------------------------------------------------------------------------ fast paths ---- */
/* These calls run without the interpreter when they can (docs/c_api.md, "Fast paths"):
 * aclrtSynchronizeStream; phase 2 (aclnnXxx) of an executor with a launch record here (left by
 * phase 1 for a single-use executor, by a repeatable one's first phase 2 through Python): a copy
 * of the executor's C task templates and base addresses, its operator, its device and the
 * workspace size phase 1 asked for; and phase 1 of a built-in operator from a phase-1 entry
 * (further below). The C path makes phase 2's checks itself (the operator, the workspace: null,
 * size, alignment, live device memory; the stream: live, on the executor's device; the tensors:
 * the core's launch checks every range against the live allocations, all or nothing) and launches
 * through the core's C entry point. Whenever a check fails, or anything is unusual (a
 * diagnostic is on, ACL_LAUNCH_BLOCKING / ASCEND_LAUNCH_BLOCKING is set, the thread runs a
 * custom operator's kernel, no record, a stale default stream), nothing has happened yet and
 * the call goes to Python, which answers it as before, with its code and its message. */

typedef int (*emb_launch_fn)(uintptr_t, const void *, int32_t, const uintptr_t *, int32_t, int);
typedef int (*emb_sync_fn)(uintptr_t, char *, int);
typedef uintptr_t (*emb_host_stream_fn)(void);
typedef int64_t (*emb_range_fn)(uintptr_t, uint64_t);
typedef uint64_t (*emb_epoch_fn)(void);
typedef int32_t (*emb_stream_device_fn)(uintptr_t);

static emb_launch_fn core_launch;
static emb_sync_fn core_sync;
static emb_host_stream_fn core_host_task_stream;
static emb_range_fn core_range_device;
static emb_epoch_fn core_epoch;
static emb_stream_device_fn core_stream_device;
static size_t core_task_size;
static int emb_fast_on; /* set by Python: no diagnostic wrappers, no launch-blocking override */

#define EMB_MAX_BASES 32
#define EMB_WORKSPACE_ALIGN 8 /* aclnn_py/executor.py WORKSPACE_ALIGN */
#define EMB_BUCKETS 4096

struct emb_p1;

struct emb_rec {
    struct emb_rec *next;
    uintptr_t handle;
    char api[64];
    const void *templates; /* the executor's (the bridge keeps the executor while its record
                              lives: a record is dropped before the handle is retired) */
    int32_t ntasks, nbases, ws_slot, device;
    int repeatable; /* else the first C launch consumes the executor (and drops the record) */
    uint64_t ws_need;
    uintptr_t bases[EMB_MAX_BASES];
    struct emb_p1 *p1; /* a C-made executor's phase-1 entry (it holds the templates), else NULL */
    const char *op;    /* a C-made executor's operator (interned) */
    int materialized;  /* a C-made executor Python has made its object for */
};

static pthread_rwlock_t emb_rec_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct emb_rec *emb_recs[EMB_BUCKETS];
static int64_t emb_nrecs;
/* single-use executors C launched (so consumed): Python takes them (emb_consumed_take) and
   marks them consumed before it looks at any of them, or at the next phase 1 */
static uintptr_t *emb_consumed;
static int64_t emb_nconsumed, emb_consumed_cap;

/* this thread's current context's default stream, valid while the runtime's epoch stays */
static __thread uint64_t emb_tls_epoch;
static __thread uintptr_t emb_tls_stream;
static __thread int32_t emb_tls_device;

static void emb_p1_release_locked(struct emb_p1 *e);
static void emb_p1_forget_child(void);
static void emb_cmade_consumed_locked(uintptr_t handle, const char *op);

static inline size_t emb_bucket(uintptr_t h) { return (size_t)((h ^ (h >> 10) ^ (h >> 20)) % EMB_BUCKETS); }

static void emb_fast_setup(uintptr_t launch, uintptr_t sync, uintptr_t host_stream, uintptr_t range,
                           uintptr_t epoch, uintptr_t stream_device, size_t task_size)
{
    core_launch = (emb_launch_fn)launch;
    core_sync = (emb_sync_fn)sync;
    core_host_task_stream = (emb_host_stream_fn)host_stream;
    core_range_device = (emb_range_fn)range;
    core_epoch = (emb_epoch_fn)epoch;
    core_stream_device = (emb_stream_device_fn)stream_device;
    core_task_size = task_size;
}

static void emb_fast_enable(int on) { __atomic_store_n(&emb_fast_on, on, __ATOMIC_RELEASE); }

static void emb_note_default(uint64_t epoch, uintptr_t stream, int32_t device)
{
    emb_tls_epoch = epoch;
    emb_tls_stream = stream;
    emb_tls_device = device;
}

static struct emb_rec *emb_find_locked(uintptr_t handle)
{
    for (struct emb_rec *r = emb_recs[emb_bucket(handle)]; r; r = r->next)
        if (r->handle == handle)
            return r;
    return NULL;
}

static void emb_unlink_locked(uintptr_t handle)
{
    struct emb_rec **at = &emb_recs[emb_bucket(handle)];
    while (*at && (*at)->handle != handle)
        at = &(*at)->next;
    struct emb_rec *r = *at;
    if (r) {
        *at = r->next;
        if (r->p1)
            emb_p1_release_locked(r->p1);
        free(r);
        emb_nrecs--;
    }
}

/* 1 recorded, 0 not (too many bases, no memory, no core): phase 2 then stays in Python */
static int emb_record_set(uintptr_t handle, const char *api, const void *templates, int32_t ntasks,
                          const uintptr_t *bases, int32_t nbases, int32_t ws_slot, uint64_t ws_need,
                          int32_t device, int repeatable)
{
    if (!core_launch || ntasks <= 0 || nbases <= 0 || nbases > EMB_MAX_BASES || ws_slot < 0 ||
        ws_slot >= nbases || strlen(api) >= sizeof(((struct emb_rec *)0)->api))
        return 0;
    struct emb_rec *r = (struct emb_rec *)malloc(sizeof *r);
    if (!r)
        return 0;
    r->handle = handle;
    strcpy(r->api, api);
    r->templates = templates;
    r->ntasks = ntasks;
    r->nbases = nbases;
    r->ws_slot = ws_slot;
    r->ws_need = ws_need;
    r->device = device;
    r->repeatable = repeatable;
    memcpy(r->bases, bases, (size_t)nbases * sizeof *bases);
    r->p1 = NULL;
    r->op = NULL;
    r->materialized = 0;
    pthread_rwlock_wrlock(&emb_rec_lock);
    emb_unlink_locked(handle);
    size_t b = emb_bucket(handle);
    r->next = emb_recs[b];
    emb_recs[b] = r;
    emb_nrecs++;
    pthread_rwlock_unlock(&emb_rec_lock);
    return 1;
}

/* aclSetInputTensorAddr and the like moved a tensor: the record follows (Python checked it) */
static void emb_record_rebind(uintptr_t handle, const uintptr_t *bases, int32_t nbases)
{
    pthread_rwlock_wrlock(&emb_rec_lock);
    struct emb_rec *r = emb_find_locked(handle);
    if (r && nbases == r->nbases)
        memcpy(r->bases, bases, (size_t)nbases * sizeof *bases);
    else if (r)
        emb_unlink_locked(handle);
    pthread_rwlock_unlock(&emb_rec_lock);
}

/* no C launch starts from the record once this returns: 1, or 0 when there was none (a
   single-use executor C consumed meanwhile: emb_consumed_take has it) */
static int emb_record_drop(uintptr_t handle)
{
    pthread_rwlock_wrlock(&emb_rec_lock);
    int found = emb_find_locked(handle) != NULL;
    emb_unlink_locked(handle);
    pthread_rwlock_unlock(&emb_rec_lock);
    return found;
}

/* aclSetAclOpExecutorRepeatable: 1, or 0 when there is no record (as emb_record_drop) */
static int emb_record_repeatable(uintptr_t handle)
{
    pthread_rwlock_wrlock(&emb_rec_lock);
    struct emb_rec *r = emb_find_locked(handle);
    if (r)
        r->repeatable = 1;
    pthread_rwlock_unlock(&emb_rec_lock);
    return r != NULL;
}

/* moves up to cap elements (of size each) from the front of the queue q of *len into out, under
   emb_rec_lock; how many */
static int emb_queue_take(void *q, int64_t *len, void *out, int cap, size_t size)
{
    pthread_rwlock_wrlock(&emb_rec_lock);
    int n = *len < cap ? (int)*len : cap;
    memcpy(out, q, (size_t)n * size);
    memmove(q, (char *)q + (size_t)n * size, (size_t)(*len - n) * size);
    *len -= n;
    pthread_rwlock_unlock(&emb_rec_lock);
    return n;
}

/* moves up to cap handles of executors C consumed into out; how many */
static int emb_consumed_take(uintptr_t *out, int cap)
{
    return emb_queue_take(emb_consumed, &emb_nconsumed, out, cap, sizeof *out);
}

static int64_t emb_consumed_count(void) { return __atomic_load_n(&emb_nconsumed, __ATOMIC_ACQUIRE); }

static int64_t emb_record_count(void)
{
    pthread_rwlock_rdlock(&emb_rec_lock);
    int64_t n = emb_nrecs;
    pthread_rwlock_unlock(&emb_rec_lock);
    return n;
}

/* fork(): the table is kept still across the fork; the child's runtime starts afresh (its
   contexts, streams and memory are new), so the parent's records and this thread's default
   stream are dropped there */
static void emb_fast_atfork_prepare(void) { pthread_rwlock_wrlock(&emb_rec_lock); }

static void emb_fast_atfork_parent(void) { pthread_rwlock_unlock(&emb_rec_lock); }

static void emb_fast_atfork_child(void)
{
    pthread_rwlock_init(&emb_rec_lock, NULL);
    for (size_t i = 0; i < EMB_BUCKETS; i++) {
        while (emb_recs[i]) {
            struct emb_rec *r = emb_recs[i];
            emb_recs[i] = r->next;
                free(r);
        }
    }
    emb_nrecs = 0;
    emb_nconsumed = 0;
    emb_p1_forget_child();
    emb_tls_epoch = 0;
    emb_tls_stream = 0;
}

static inline int emb_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* the common conditions of every fast path: 1 when C may go on alone */
static inline int emb_fast_ok(void)
{
    return __atomic_load_n(&emb_fast_on, __ATOMIC_ACQUIRE) && core_launch &&
           !core_host_task_stream();
}

/* the live stream a call names, and its device: 0 (the current context's default stream, when
   this thread found it under the present epoch) or a live stream of the core */
static inline int emb_fast_stream(uintptr_t stream, uintptr_t *handle, int32_t *device)
{
    if (stream == 0) {
        if (!emb_tls_stream || emb_tls_epoch != core_epoch())
            return 0;
        *handle = emb_tls_stream;
        *device = emb_tls_device;
        return 1;
    }
    int32_t d = core_stream_device(stream);
    if (d < 0)
        return 0;
    *handle = stream;
    *device = d;
    return 1;
}

/* phase 2 of a recorded executor: 0 launched, -1 for Python to answer */
static int emb_fast_launch(const char *api, uintptr_t ws, uint64_t ws_size, uintptr_t executor,
                           uintptr_t stream)
{
    uintptr_t sh;
    int32_t device;
    if (!executor || !emb_fast_ok() || emb_nonempty("ACL_LAUNCH_BLOCKING") ||
        emb_nonempty("ASCEND_LAUNCH_BLOCKING") || !emb_fast_stream(stream, &sh, &device))
        return -1;
    int rc = -1;
    pthread_rwlock_wrlock(&emb_rec_lock); /* (a single-use record goes at its launch) */
    struct emb_rec *r = emb_find_locked(executor);
    if (r && !r->repeatable && (!r->p1 || r->materialized) &&
        emb_nconsumed == emb_consumed_cap) { /* room first */
        int64_t cap = emb_consumed_cap ? 2 * emb_consumed_cap : 64;
        uintptr_t *grown = (uintptr_t *)realloc(emb_consumed, (size_t)cap * sizeof *grown);
        if (grown) {
            emb_consumed = grown;
            emb_consumed_cap = cap;
        } else {
            r = NULL;
        }
    }
    if (r && r->device == device && strcmp(r->api, api) == 0) {
        int ws_ok = 1;
        if (ws_size || r->ws_need) /* executor.py _check_launch, in its order */
            ws_ok = !(ws_size > 0 && ws == 0) && ws_size >= r->ws_need &&
                    !(ws_size > 0 && ws % EMB_WORKSPACE_ALIGN) &&
                    !(ws_size > 0 && core_range_device(ws, ws_size) < 0);
        if (ws_ok) {
            uintptr_t bases[EMB_MAX_BASES];
            memcpy(bases, r->bases, (size_t)r->nbases * sizeof *bases);
            bases[r->ws_slot] = ws;
            if (core_launch(sh, r->templates, r->ntasks, bases, r->nbases, 0) == 0) {
                rc = 0; /* else nothing was enqueued: Python finds out why and says so */
                if (!r->repeatable) {
                    if (r->p1 && !r->materialized) {
                        emb_cmade_consumed_locked(executor, r->op);
                    } else {
                        __atomic_store_n(&emb_consumed[emb_nconsumed], executor,
                                         __ATOMIC_RELAXED);
                        __atomic_store_n(&emb_nconsumed, emb_nconsumed + 1, __ATOMIC_RELEASE);
                    }
                    emb_unlink_locked(executor);
                }
            }
        }
    }
    pthread_rwlock_unlock(&emb_rec_lock);
    return rc;
}

/* Phase 1 (aclnnXxxGetWorkspaceSize) of the built-in operators, in C. A phase 1 that Python
 * answered with a single-use executor C can launch leaves a *phase-1 entry* here: the call
 * (operator, tensor handles, dim), what Python saw (the tensors' addresses, the runtime's free
 * epoch read before its checks, the values of the environment variables phase 1 reads) and what
 * it made (the executor's templates, base addresses, workspace size, device). While nothing a
 * phase 1 depends on has changed since, the same call has the same answer, and C gives it: a
 * new executor handle with a launch record, as if Python had answered. What may change it makes
 * C miss: a free (the epoch), another environment value, and every call that destroys a tensor
 * or moves one (Python clears the table, emb_p1_clear, after the call: a C phase 1 meanwhile
 * is one that came first), a configuration change or a diagnostic (cleared; C's paths off).
 * An entry made from checks that a clear overtook is refused (emb_p1_gen).
 *
 * Python learns of a C-made executor only when a call it answers names one: it makes the
 * executor's object then (emb_cmade_peek / emb_cmade_mark; from the entry's tensors, plan and
 * templates, which it keeps by the entry's id until C says the entry is gone, emb_p1_dead_take).
 * A C-made executor C consumed before Python knew it is remembered in a ring (its handle and
 * operator: the last EMB_RING of them), for the Python API's answer to a reuse. C-made handles
 * are the executor table's with bit 43 set, above every serial Python hands out. */

#define EMB_P1_SLOTS 256
#define EMB_P1_MAXT 8
#define EMB_P1_NENV 2
#define EMB_CMADE_BIT ((uintptr_t)1 << 43)
#define EMB_RING 4096

typedef uint64_t (*emb_free_epoch_fn)(void);
static emb_free_epoch_fn core_free_epoch;
static uintptr_t emb_ex_base; /* the executor table's handle bits (tag and kind) */
static uint64_t emb_ex_serial;

static const char *const emb_p1_env_keys[EMB_P1_NENV] = {"ACLNN_EMU_SOC", "ACLNN_EMU_ACCUMULATION"};

struct emb_p1 {
    char api[64];   /* aclnnXxxGetWorkspaceSize */
    const char *op; /* aclnnXxx, interned */
    int32_t n;
    uintptr_t tensors[EMB_P1_MAXT];
    int64_t dim;
    uint64_t free_epoch;
    const void *templates;
    int32_t ntasks, nbases, ws_slot, device;
    uint64_t ws_size;
    uintptr_t bases[EMB_MAX_BASES];
    int64_t id;   /* Python's key for the entry's objects */
    int64_t refs; /* C-made executors' records that use it */
    int in_table;
    int env_check[EMB_P1_NENV]; /* 0: aclInit's file set the key (a change clears the table) */
    char *env[EMB_P1_NENV];     /* the value Python read, NULL for unset */
};

static struct emb_p1 *emb_p1s[EMB_P1_SLOTS];
static uint64_t emb_p1_gen = 1; /* moved by every clear */
static int64_t *emb_p1_dead;    /* ids of freed entries, for Python to forget */
static int64_t emb_ndead, emb_dead_cap;
static struct {
    uintptr_t handle;
    const char *op;
} emb_ring[EMB_RING];
static uint64_t emb_ring_n;

static void emb_p1_setup(uintptr_t free_epoch, uintptr_t ex_base)
{
    core_free_epoch = (emb_free_epoch_fn)free_epoch;
    emb_ex_base = ex_base;
}

static void emb_p1_free_locked(struct emb_p1 *e)
{
    if (emb_ndead == emb_dead_cap) {
        int64_t cap = emb_dead_cap ? 2 * emb_dead_cap : 64;
        int64_t *grown = (int64_t *)realloc(emb_p1_dead, (size_t)cap * sizeof *grown);
        if (grown) {
            emb_p1_dead = grown;
            emb_dead_cap = cap;
        }
    }
    if (emb_ndead < emb_dead_cap) /* else Python keeps the objects (a few KB) for good */
        emb_p1_dead[emb_ndead++] = e->id;
    for (int k = 0; k < EMB_P1_NENV; k++)
        free(e->env[k]);
    free(e);
}

static void emb_p1_release_locked(struct emb_p1 *e)
{
    if (--e->refs == 0 && !e->in_table)
        emb_p1_free_locked(e);
}

static void emb_cmade_consumed_locked(uintptr_t handle, const char *op)
{
    size_t i = (size_t)(emb_ring_n++ % EMB_RING);
    emb_ring[i].handle = handle;
    emb_ring[i].op = op;
}

/* fork(): the child keeps the ring (the executors C consumed stay consumed there); the C-made
   executors still unlaunched got their Python objects before the fork (emb_cmade_pending) */
static void emb_p1_forget_child(void)
{
    for (size_t i = 0; i < EMB_P1_SLOTS; i++)
        emb_p1s[i] = NULL; /* (leaked: the parent's records used them too) */
    emb_p1_gen++;
    emb_ndead = 0;
}

/* up to cap handles of C-made executors with a record Python has no object for; how many */
static int emb_cmade_pending(uintptr_t *out, int cap)
{
    int n = 0;
    pthread_rwlock_rdlock(&emb_rec_lock);
    for (size_t i = 0; i < EMB_BUCKETS && n < cap; i++)
        for (struct emb_rec *r = emb_recs[i]; r && n < cap; r = r->next)
            if (r->p1 && !r->materialized)
                out[n++] = r->handle;
    pthread_rwlock_unlock(&emb_rec_lock);
    return n;
}

static size_t emb_p1_slot(const char *api, int32_t n, const uintptr_t *tensors, int64_t dim)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = api; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    for (int32_t i = 0; i < n; i++)
        h = (h ^ tensors[i]) * 1099511628211ull;
    h = (h ^ (uint64_t)dim) * 1099511628211ull;
    return (size_t)((h ^ (h >> 29)) % EMB_P1_SLOTS);
}

/* the generation an entry made from checks that start now must still find */
static uint64_t emb_p1_generation(void) { return __atomic_load_n(&emb_p1_gen, __ATOMIC_ACQUIRE); }

/* every entry goes (a tensor was destroyed or moved, the configuration changed) */
static void emb_p1_clear(void)
{
    pthread_rwlock_wrlock(&emb_rec_lock);
    __atomic_add_fetch(&emb_p1_gen, 1, __ATOMIC_ACQ_REL);
    for (size_t i = 0; i < EMB_P1_SLOTS; i++) {
        struct emb_p1 *e = emb_p1s[i];
        if (!e)
            continue;
        emb_p1s[i] = NULL;
        e->in_table = 0;
        if (e->refs == 0)
            emb_p1_free_locked(e);
    }
    pthread_rwlock_unlock(&emb_rec_lock);
}

static char *emb_dup_or_null(const char *text) { return text ? strdup(text) : NULL; }

/* 1 entered, 0 refused (a clear since gen, bad sizes, no memory): C then misses */
static int emb_p1_set(const char *api, const char *op, int32_t n, const uintptr_t *tensors,
                      int64_t dim, uint64_t free_epoch, uint64_t gen, const void *templates,
                      int32_t ntasks, const uintptr_t *bases, int32_t nbases, int32_t ws_slot,
                      uint64_t ws_size, int32_t device, int64_t id, const int32_t *env_check,
                      const char *env0, const char *env1)
{
    if (!core_free_epoch || !emb_ex_base || n <= 0 || n > EMB_P1_MAXT || ntasks <= 0 ||
        nbases <= 0 || nbases > EMB_MAX_BASES || ws_slot < 0 || ws_slot >= nbases ||
        strlen(api) >= sizeof(((struct emb_p1 *)0)->api))
        return 0;
    const char *interned = emb_intern(op);
    struct emb_p1 *e = (struct emb_p1 *)calloc(1, sizeof *e);
    if (!e || !interned)
        return free(e), 0;
    strcpy(e->api, api);
    e->op = interned;
    e->n = n;
    memcpy(e->tensors, tensors, (size_t)n * sizeof *tensors);
    e->dim = dim;
    e->free_epoch = free_epoch;
    e->templates = templates;
    e->ntasks = ntasks;
    e->nbases = nbases;
    e->ws_slot = ws_slot;
    e->ws_size = ws_size;
    e->device = device;
    memcpy(e->bases, bases, (size_t)nbases * sizeof *bases);
    e->id = id;
    e->in_table = 1;
    const char *values[EMB_P1_NENV] = {env0, env1};
    for (int k = 0; k < EMB_P1_NENV; k++) {
        e->env_check[k] = env_check[k];
        e->env[k] = emb_dup_or_null(values[k]);
        if (values[k] && !e->env[k]) {
            for (int j = 0; j < k; j++)
                free(e->env[j]);
            free(e);
            return 0;
        }
    }
    size_t slot = emb_p1_slot(api, n, tensors, dim);
    int done = 0;
    pthread_rwlock_wrlock(&emb_rec_lock);
    if (gen == emb_p1_gen) {
        struct emb_p1 *old = emb_p1s[slot];
        if (old) {
            old->in_table = 0;
            if (old->refs == 0)
                emb_p1_free_locked(old);
        }
        emb_p1s[slot] = e;
        done = 1;
    }
    pthread_rwlock_unlock(&emb_rec_lock);
    if (!done) {
        for (int k = 0; k < EMB_P1_NENV; k++)
            free(e->env[k]);
        free(e);
    }
    return done;
}

/* moves up to cap ids of freed entries into out; how many */
static int emb_p1_dead_take(int64_t *out, int cap)
{
    return emb_queue_take(emb_p1_dead, &emb_ndead, out, cap, sizeof *out);
}

static int64_t emb_p1_count(void)
{
    int64_t n = 0;
    pthread_rwlock_rdlock(&emb_rec_lock);
    for (size_t i = 0; i < EMB_P1_SLOTS; i++)
        n += emb_p1s[i] != NULL;
    pthread_rwlock_unlock(&emb_rec_lock);
    return n;
}

/* A C-made executor Python has no object for: 1 its record is there (its entry's id, its
   bases, whether it is repeatable), 2 C consumed it (its operator), 0 unknown to C. */
static int emb_cmade_peek(uintptr_t handle, int64_t *id, uintptr_t *bases, int32_t *nbases,
                          const char **op)
{
    int state = 0;
    pthread_rwlock_rdlock(&emb_rec_lock);
    struct emb_rec *r = emb_find_locked(handle);
    if (r && r->p1) {
        *id = r->p1->id;
        *nbases = r->nbases;
        memcpy(bases, r->bases, (size_t)r->nbases * sizeof *bases);
        *op = r->op;
        state = 1;
    } else if (!r) {
        uint64_t first = emb_ring_n > EMB_RING ? emb_ring_n - EMB_RING : 0;
        for (uint64_t i = emb_ring_n; i > first; i--) {
            if (emb_ring[(i - 1) % EMB_RING].handle == handle) {
                *op = emb_ring[(i - 1) % EMB_RING].op;
                state = 2;
                break;
            }
        }
    }
    pthread_rwlock_unlock(&emb_rec_lock);
    return state;
}

/* Python has made the object of a C-made executor: from now on C's consumption of it goes to
   emb_consumed like a Python-made one's. 1, or 0 when C consumed it meanwhile. */
static int emb_cmade_mark(uintptr_t handle)
{
    pthread_rwlock_wrlock(&emb_rec_lock);
    struct emb_rec *r = emb_find_locked(handle);
    if (r)
        r->materialized = 1;
    pthread_rwlock_unlock(&emb_rec_lock);
    return r != NULL;
}

static int emb_p1_env_ok(const struct emb_p1 *e)
{
    for (int k = 0; k < EMB_P1_NENV; k++) {
        if (!e->env_check[k])
            continue;
        const char *v = getenv(emb_p1_env_keys[k]);
        if ((v == NULL) != (e->env[k] == NULL) || (v && strcmp(v, e->env[k]) != 0))
            return 0;
    }
    return 1;
}

/* phase 1 from an entry: 0 answered (the executor written), -1 for Python to answer */
static int emb_fast_phase1(const char *api, int32_t n, const uintptr_t *tensors, int64_t dim,
                           uint64_t *ws_out, aclOpExecutor **ex_out)
{
    if (!ws_out || !ex_out || n <= 0 || n > EMB_P1_MAXT || !core_free_epoch || !emb_fast_ok())
        return -1;
    size_t slot = emb_p1_slot(api, n, tensors, dim);
    struct emb_rec *r = (struct emb_rec *)malloc(sizeof *r);
    if (!r)
        return -1;
    uint64_t epoch = core_free_epoch();
    int rc = -1;
    pthread_rwlock_wrlock(&emb_rec_lock);
    struct emb_p1 *e = emb_p1s[slot];
    if (e && e->n == n && e->dim == dim && e->free_epoch == epoch &&
        memcmp(e->tensors, tensors, (size_t)n * sizeof *tensors) == 0 &&
        strcmp(e->api, api) == 0 && emb_p1_env_ok(e)) {
        uint64_t serial = ++emb_ex_serial;
        r->handle = emb_ex_base | EMB_CMADE_BIT | (uintptr_t)(serial << 4);
        strcpy(r->api, e->op);
        r->templates = e->templates;
        r->ntasks = e->ntasks;
        r->nbases = e->nbases;
        r->ws_slot = e->ws_slot;
        r->device = e->device;
        r->repeatable = 0;
        r->ws_need = e->ws_size;
        memcpy(r->bases, e->bases, (size_t)e->nbases * sizeof *r->bases);
        r->p1 = e;
        r->op = e->op;
        r->materialized = 0;
        e->refs++;
        size_t b = emb_bucket(r->handle);
        r->next = emb_recs[b];
        emb_recs[b] = r;
        emb_nrecs++;
        *ws_out = e->ws_size;
        *ex_out = (aclOpExecutor *)r->handle;
        r = NULL;
        rc = 0;
    }
    pthread_rwlock_unlock(&emb_rec_lock);
    free(r);
    return rc;
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
    pthread_atfork(emb_fast_atfork_prepare, emb_fast_atfork_parent, emb_fast_atfork_child);
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
aclError aclrtSynchronizeStream(aclrtStream stream)
{
    ACL_READY();
    uintptr_t h;
    int32_t device;
    if (emb_fast_ok() && emb_fast_stream(U(stream), &h, &device)) {
        int rc = core_sync(h, NULL, 0); /* a fault's message stays in the core for Python */
        if (rc == 0)
            return ACL_SUCCESS;
        if (rc != 107017 && rc != 207000) /* a task's fault: collected, Python records it */
            return py_sync_fault(U(stream), rc);
        /* the stream went meanwhile, or a kernel called: nothing happened, Python answers */
    }
    return py_aclrtSynchronizeStream(U(stream));
}

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
    if (emb_fast_phase1(api, n, tensors, dim, workspaceSize, executor) == 0)
        return 0;
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
    if (emb_fast_launch(api, U(workspace), workspaceSize, U(executor), U(stream)) == 0)
        return 0;
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
