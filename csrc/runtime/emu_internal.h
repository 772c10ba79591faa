/* Declarations shared by the runtime's C files; not part of the cffi interface. */
#ifndef EMU_INTERNAL_H
#define EMU_INTERNAL_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

/* ------------------------------------------------------ polling (pool.c, stream.c) ---- */
static inline void emu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int64_t emu_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One step of a poll: a pause, and every 64 steps a look at the clock (1 when the deadline has
 * passed) and a yield, so that a thread sharing this core (the one being waited for, or the
 * caller a woken worker preempted) runs. */
static inline int emu_spin_step(unsigned *i, int64_t deadline)
{
    emu_cpu_relax();
    if (++*i % 64 != 0)
        return 0;
    if (emu_mono_ns() > deadline)
        return 1;
    sched_yield();
    return 0;
}

/* ------------------------------------------------------ threads (pool.c, stream.c) ---- */
#include <pthread.h>

/* The stack the runtime's threads get at least: the kernels keep up to ~130 KB of scratch arrays
 * on the stack and a stream's worker runs host callbacks (Python), while some C libraries give a
 * new thread much less by default (musl: 128 KB). glibc's default (the stack rlimit, usually
 * 8 MB) is kept when it is larger. */
#define EMU_MIN_STACK ((size_t)8 << 20)

static inline int emu_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
    pthread_attr_t a;
    if (pthread_attr_init(&a) != 0)
        return pthread_create(t, NULL, fn, arg);
    size_t sz = 0;
    if (pthread_attr_getstacksize(&a, &sz) == 0 && sz < EMU_MIN_STACK)
        pthread_attr_setstacksize(&a, EMU_MIN_STACK);
    int rc = pthread_create(t, &a, fn, arg);
    pthread_attr_destroy(&a);
    return rc;
}

/* ------------------------------------------------------------------ memory.c ---- */
void emu_mem_read_lock(void);
void emu_mem_read_unlock(void);
/* emu_mem_check_range without taking the lock: the caller holds the read lock */
int emu_mem_check_range_locked(uintptr_t addr, uint64_t nbytes, int32_t *device);
/* the id (generation) of the live allocation holding all of [addr, addr + nbytes), or 0 */
uint64_t emu_mem_range_id_locked(uintptr_t addr, uint64_t nbytes);
/* 1 if [addr, addr + nbytes) still lies in the live allocation with this id */
int emu_mem_task_range_ok_locked(uintptr_t addr, uint64_t nbytes, uint64_t id);
void emu_mem_atfork_prepare(void);
void emu_mem_atfork_parent(void);
void emu_mem_atfork_child(void);

/* ------------------------------------------------------------------ handle.c ---- */
/* A reference-counted object behind a handle. The handle table holds one reference from
 * emu_handle_new until emu_handle_close; every call that uses the object holds another one
 * (emu_handle_acquire .. emu_ref_release); the last release calls destroy. */
typedef struct emu_ref {
    int refs;
    void (*destroy)(struct emu_ref *self);
} emu_ref;

#define EMU_KIND_STREAM 1
#define EMU_KIND_EVENT 2

uintptr_t emu_handle_new(int kind, emu_ref *obj);      /* 0 if the table is full */
emu_ref *emu_handle_acquire(uintptr_t handle, int kind); /* +1 reference, or NULL */
emu_ref *emu_handle_close(uintptr_t handle, int kind);
    /* invalidates the handle at once for new calls; returns the object with the table's
       reference, which the caller releases when done with it (NULL if not live) */
void emu_handle_atfork_prepare(void); /* fork.c's handlers call these */
void emu_handle_atfork_parent(void);
void emu_handle_atfork_child(void);
void emu_ref_retain(emu_ref *r);
void emu_ref_release(emu_ref *r);

/* ------------------------------------------------------------------ stream.c ---- */
void emu_stream_atfork_prepare(void);
void emu_stream_atfork_parent(void);
void emu_stream_atfork_child(void);

#endif
