/*
 * Handles: what users hold for streams and events.
 *
 * A handle is not a pointer. It names a slot of one table together with the slot's generation,
 * so a destroyed handle can never reach freed memory or alias a newer object: looking it up
 * fails (ACL_ERROR_RT_INVALID_HANDLE) as soon as destroy has begun. A successful lookup takes a
 * reference on the object, which stays alive until its last user releases it, so a call that is
 * still running when another thread destroys the handle finishes on live memory.
 *
 * Layout of a handle: 0xAC in bits 48..55 (so handles never look like small ints or heap
 * pointers), the kind in bits 44..47, the slot's generation in bits 20..43, the slot in 0..19.
 *
 * fork(): the child starts with an empty table (emu_handle_atfork_child, called by fork.c); the
 * parent's handles are simply not found there.
 */
#define _GNU_SOURCE
#include "aclnn_emu.h"
#include "emu_internal.h"

#include <pthread.h>
#include <stdlib.h>

#define SLOT_BITS 20
#define GEN_BITS 24
#define MAX_SLOTS (1u << SLOT_BITS)
#define TAG 0xACull

typedef struct {
    emu_ref *obj; /* NULL: free */
    uint32_t gen;
    int32_t kind;
} slot_t;

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static slot_t *slots;
static uint32_t nslots, cap;
static uint32_t *free_list;
static uint32_t nfree;
static int64_t live[4];

static uintptr_t encode(uint32_t idx, uint32_t gen, int kind)
{
    return (uintptr_t)((TAG << 48) | ((uint64_t)(kind & 0xF) << 44) |
                       ((uint64_t)(gen & ((1u << GEN_BITS) - 1)) << SLOT_BITS) | idx);
}

/* the slot of a live handle of this kind, or NULL; the caller holds table_mu */
static slot_t *lookup(uintptr_t h, int kind)
{
    uint64_t v = (uint64_t)h;
    if ((v >> 48) != TAG || (int)((v >> 44) & 0xF) != kind)
        return NULL;
    uint32_t idx = (uint32_t)(v & (MAX_SLOTS - 1));
    uint32_t gen = (uint32_t)((v >> SLOT_BITS) & ((1u << GEN_BITS) - 1));
    if (idx >= nslots)
        return NULL;
    slot_t *s = &slots[idx];
    if (!s->obj || s->kind != kind || (s->gen & ((1u << GEN_BITS) - 1)) != gen)
        return NULL;
    return s;
}

uintptr_t emu_handle_new(int kind, emu_ref *obj)
{
    uintptr_t h = 0;
    pthread_mutex_lock(&table_mu);
    uint32_t idx;
    if (nfree) {
        idx = free_list[--nfree];
    } else {
        if (nslots == MAX_SLOTS)
            goto out;
        if (nslots == cap) {
            uint32_t ncap = cap ? cap * 2 : 256;
            slot_t *grown = realloc(slots, (size_t)ncap * sizeof *grown);
            if (!grown)
                goto out;
            slots = grown;
            uint32_t *fl = realloc(free_list, (size_t)ncap * sizeof *fl);
            if (!fl)
                goto out;
            free_list = fl;
            cap = ncap;
        }
        idx = nslots++;
        slots[idx].gen = 1;
    }
    slots[idx].obj = obj;
    slots[idx].kind = kind;
    live[kind & 3]++;
    h = encode(idx, slots[idx].gen, kind);
out:
    pthread_mutex_unlock(&table_mu);
    return h;
}

emu_ref *emu_handle_acquire(uintptr_t handle, int kind)
{
    pthread_mutex_lock(&table_mu);
    slot_t *s = lookup(handle, kind);
    emu_ref *obj = s ? s->obj : NULL;
    if (obj)
        __atomic_add_fetch(&obj->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&table_mu);
    return obj;
}

emu_ref *emu_handle_close(uintptr_t handle, int kind)
{
    pthread_mutex_lock(&table_mu);
    slot_t *s = lookup(handle, kind);
    emu_ref *obj = NULL;
    if (s) {
        obj = s->obj;
        s->obj = NULL;
        s->gen++;
        free_list[nfree++] = (uint32_t)(s - slots);
        live[kind & 3]--;
    }
    pthread_mutex_unlock(&table_mu);
    return obj;
}

void emu_ref_retain(emu_ref *r) { __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED); }

void emu_ref_release(emu_ref *r)
{
    if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
        r->destroy(r);
}

int64_t emu_handle_count(int32_t kind)
{
    pthread_mutex_lock(&table_mu);
    int64_t n = live[kind & 3];
    pthread_mutex_unlock(&table_mu);
    return n;
}

/* ------------------------------------------------------------------------ fork ------------ */
/* fork.c calls these from its fork handlers, around the other modules' own. */

void emu_handle_atfork_prepare(void) { pthread_mutex_lock(&table_mu); }

void emu_handle_atfork_parent(void) { pthread_mutex_unlock(&table_mu); }

/* The child has only the forking thread: no stream worker survives. Every handle of the parent
 * is forgotten (its objects are leaked: their locks may be held by threads that do not exist
 * here), so it reads as invalid. */
void emu_handle_atfork_child(void)
{
    for (uint32_t i = 0; i < nslots; i++) {
        if (slots[i].obj) {
            slots[i].obj = NULL;
            slots[i].gen++;
            free_list[nfree++] = i;
        }
    }
    for (int k = 0; k < 4; k++)
        live[k] = 0;
    pthread_mutex_init(&table_mu, NULL);
}
