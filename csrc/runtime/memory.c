/*
 * Emulated device memory: an address space per device.
 *
 * The first allocation on a device reserves a large range of virtual addresses for it
 * (MAP_NORESERVE: no memory is committed until it is touched). Allocations are carved out of
 * that range in 64-byte units; a free gives back to the system every page that no live
 * allocation uses any more. So "is this device memory?" is a range test, never a guess: an address
 * inside a device's range but outside every live allocation (freed, never allocated, or the
 * padding after an allocation) is an error, not host memory, and no host allocation can ever
 * land there.
 *
 * Ranges are handed out next-fit from a cursor that only moves forward and wraps at the end of
 * the range, so a freed address is not handed out again until the whole range has been cycled
 * through (terabytes of allocations): a stale pointer keeps pointing at a hole. Independently of
 * that, every allocation has a unique id (its generation), and a queued task records the ids of
 * the allocations it touches when it is enqueued: if one of them was freed before the task runs,
 * the task faults and writes nothing, however many frees and allocations happened in between.
 *
 * The table of live allocations is guarded by a reader/writer lock. Lookups, checked copies and
 * every running stream task hold it for reading; alloc and free take it for writing, so a free
 * waits until the task that is using the memory has finished. A writer changes the table only
 * while it also holds edit_mu, which is all that fork() needs to take (see the fork section).
 */
#define _GNU_SOURCE
#include "aclnn_emu.h"
#include "emu_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALIGN_BYTES 64
/* Allocations of at least HUGE_MIN bytes are carved from the upper half of a device's range,
 * which is advised MADV_HUGEPAGE, at HUGE_ALIGN-aligned addresses: touching them (the poison
 * fill, then the user) takes one page fault per 2 MiB instead of one per 4 KiB, as NumPy's large
 * arrays do (it advises MADV_HUGEPAGE from 4 MiB). Smaller ones stay in the lower half, advised
 * MADV_NOHUGEPAGE, so that a small allocation never commits a huge page. */
#define HUGE_MIN (4ull << 20)
#define HUGE_ALIGN (2ull << 20)
#define FREED_RING 4096 /* freed allocations remembered for messages only */

typedef struct {
    uintptr_t base;
    uint64_t size;     /* bytes the user asked for: views must stay inside this */
    uint64_t reserved; /* bytes charged to the device: round_up(size, 32) (+ 32), as CANN does */
    uint64_t span;     /* address range it takes: round_up(reserved, 64) */
    uint64_t id;       /* unique, never reused: the allocation's generation */
    int32_t device;
} alloc_entry;

typedef struct {
    uint64_t off, len;
} free_block;

typedef struct {
    uintptr_t base; /* 0 until the first allocation on the device */
    uint64_t size;
    uint64_t cursor[2]; /* offsets where the next search starts: small and large allocations */
    free_block *blocks; /* sorted by offset, coalesced */
    int64_t nblocks, cap;
    uint64_t used; /* CANN-accounted bytes in use */
} device_space;

static alloc_entry *table;
static int64_t table_len, table_cap;
static alloc_entry freed_ring[FREED_RING];
static int64_t freed_next;
static uint64_t next_id = 1;
static device_space spaces[EMU_MAX_DEVICES];
static uint64_t page_size;
static pthread_rwlock_t table_lock;
/* Counts the frees (and the child's forgetting of the parent's allocations after fork): while it
 * has not moved, every range that was inside a live allocation still is. */
static uint64_t free_epoch;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
/* Held by a writer, inside the write lock, while it changes the table and the device spaces: the
 * fork prepare handler takes it (not the write lock, which would wait for running tasks). */
static pthread_mutex_t edit_mu = PTHREAD_MUTEX_INITIALIZER;

static void init_lock(void)
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
    /* a waiting free must not starve behind a busy stream */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(&table_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
}

static void table_init(void)
{
    init_lock();
    long ps = sysconf(_SC_PAGESIZE);
    page_size = ps > 0 ? (uint64_t)ps : 4096;
}

/* How many read locks this thread holds: a thread that holds one (a stream running a task, a
   host kernel calling back into the runtime) reads again without locking again, since a
   second rdlock would wait behind a queued writer (the lock prefers writers) that waits for the
   first: a deadlock. Such a thread cannot take the write lock at all (write_lock says so). */
static __thread int read_depth;

void emu_mem_read_lock(void)
{
    if (read_depth++ > 0)
        return;
    pthread_once(&table_once, table_init);
    pthread_rwlock_rdlock(&table_lock);
}

void emu_mem_read_unlock(void)
{
    if (--read_depth == 0)
        pthread_rwlock_unlock(&table_lock);
}

/* 0 and the write lock (and edit_mu) held; -1 (nothing held) when this thread holds the read
   lock: a host kernel (a custom operator's Python kernel, run by a stream under the read lock)
   that allocates or frees would wait for itself */
static int write_lock(void)
{
    if (read_depth > 0)
        return -1;
    pthread_once(&table_once, table_init);
    pthread_rwlock_wrlock(&table_lock);
    pthread_mutex_lock(&edit_mu);
    return 0;
}

static void write_unlock(void)
{
    pthread_mutex_unlock(&edit_mu);
    pthread_rwlock_unlock(&table_lock);
}

/* ------------------------------------------------------------------------ fork ------------ */

/* The prepare handler takes edit_mu only: the child then gets a table no writer was changing.
 * Taking the write lock instead would wait for the running tasks, and a custom operator's
 * kernel (Python) needs the interpreter's lock to finish, which os.fork() holds while the
 * handlers run: a fork during a kernel would hang. Readers change nothing; the child starts
 * with fresh locks and forgets every allocation anyway. */
void emu_mem_atfork_prepare(void) { pthread_mutex_lock(&edit_mu); }

void emu_mem_atfork_parent(void) { pthread_mutex_unlock(&edit_mu); }

/* In the child: the parent's allocations are not this process's device memory. Their pages are
 * discarded, the table starts empty, and the cursors stay where they are, so the parent's
 * addresses read as "not a live allocation" for a long time. */
void emu_mem_atfork_child(void)
{
    __atomic_add_fetch(&free_epoch, 1, __ATOMIC_RELEASE);
    for (int64_t i = 0; i < table_len; i++) {
        alloc_entry *e = &table[i];
        freed_ring[freed_next++ % FREED_RING] = *e;
    }
    table_len = 0;
    for (int d = 0; d < EMU_MAX_DEVICES; d++) {
        device_space *sp = &spaces[d];
        sp->used = 0;
        if (sp->base) { /* one free block: the whole range, its pages given back */
            madvise((void *)sp->base, (size_t)sp->size, MADV_DONTNEED);
            sp->nblocks = 1;
            sp->blocks[0] = (free_block){0, sp->size};
        }
    }
    /* fresh locks: another thread of the parent may have held the table lock at the fork, and
     * a forking host kernel held it for reading (its child holds nothing: see stream.c) */
    init_lock();
    pthread_mutex_init(&edit_mu, NULL);
    read_depth = 0;
}

/* ------------------------------------------------------------------ address space ---------- */

static int reserve_space(device_space *sp)
{
    /* EMU_DEVICE_VA_BYTES, or less where the system will not give that much address space */
    for (uint64_t size = EMU_DEVICE_VA_BYTES; size >= (1ull << 30); size /= 2) {
        void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            continue;
        sp->blocks = malloc(16 * sizeof *sp->blocks);
        if (!sp->blocks) {
            munmap(p, (size_t)size);
            return -1;
        }
        sp->cap = 16;
        sp->nblocks = 1;
        sp->blocks[0] = (free_block){0, size};
        sp->base = (uintptr_t)p;
        sp->size = size;
        sp->cursor[0] = 0;
        sp->cursor[1] = size / 2;
        /* hints: without transparent huge pages (EINVAL) large allocations use small pages;
         * small ones never get huge pages, whatever the system's default ("always") */
        madvise((void *)sp->base, (size_t)(size / 2), MADV_NOHUGEPAGE);
        madvise((void *)(sp->base + size / 2), (size_t)(size / 2), MADV_HUGEPAGE);
        return 0;
    }
    return -1;
}

/* Room for one more free block; -1 if out of host memory. */
static int blocks_room(device_space *sp)
{
    if (sp->nblocks < sp->cap)
        return 0;
    free_block *grown = realloc(sp->blocks, (size_t)sp->cap * 2 * sizeof *grown);
    if (!grown)
        return -1;
    sp->blocks = grown;
    sp->cap *= 2;
    return 0;
}

/* Takes len bytes (a multiple of 64) next-fit from the cursor of window w (0: the lower half of
 * the range, small allocations; 1: the upper half, large ones), at an address that is a multiple
 * of align; then anywhere in the range (a full window). The offset or -1. */
static int64_t space_take(device_space *sp, uint64_t len, int w, uint64_t align)
{
    for (int pass = 0; pass < 3; pass++) {
        uint64_t lo = pass == 2 ? 0 : w ? sp->size / 2 : 0;
        uint64_t hi = pass == 2 || w ? sp->size : sp->size / 2;
        uint64_t a = pass == 2 ? ALIGN_BYTES : align;
        for (int64_t i = 0; i < sp->nblocks; i++) {
            free_block *b = &sp->blocks[i];
            uint64_t start = b->off > lo ? b->off : lo;
            uint64_t end = b->off + b->len < hi ? b->off + b->len : hi;
            if (pass == 0) {
                if (end <= sp->cursor[w])
                    continue;
                if (start < sp->cursor[w])
                    start = sp->cursor[w];
            }
            start = (sp->base + start + a - 1) / a * a - sp->base;
            if (start >= end || end - start < len)
                continue;
            /* split b into [off, start) and [start + len, end) */
            end = b->off + b->len;
            uint64_t left = start - b->off, right = end - (start + len);
            if (left && right) {
                if (blocks_room(sp) != 0)
                    return -1;
                b = &sp->blocks[i];
                memmove(sp->blocks + i + 2, sp->blocks + i + 1,
                        (size_t)(sp->nblocks - i - 1) * sizeof *sp->blocks);
                sp->blocks[i] = (free_block){b->off, left};
                sp->blocks[i + 1] = (free_block){start + len, right};
                sp->nblocks++;
            } else if (left) {
                b->len = left;
            } else if (right) {
                b->off = start + len;
                b->len = right;
            } else {
                memmove(sp->blocks + i, sp->blocks + i + 1,
                        (size_t)(sp->nblocks - i - 1) * sizeof *sp->blocks);
                sp->nblocks--;
            }
            if (pass < 2)
                sp->cursor[w] = start + len;
            return (int64_t)start;
        }
    }
    return -1;
}

/* Gives [off, off + len) back, coalescing with its neighbours; -1 if out of host memory. */
static int space_give(device_space *sp, uint64_t off, uint64_t len)
{
    int64_t i = 0;
    while (i < sp->nblocks && sp->blocks[i].off < off)
        i++;
    int join_prev = i > 0 && sp->blocks[i - 1].off + sp->blocks[i - 1].len == off;
    int join_next = i < sp->nblocks && off + len == sp->blocks[i].off;
    if (join_prev && join_next) {
        sp->blocks[i - 1].len += len + sp->blocks[i].len;
        memmove(sp->blocks + i, sp->blocks + i + 1,
                (size_t)(sp->nblocks - i - 1) * sizeof *sp->blocks);
        sp->nblocks--;
    } else if (join_prev) {
        sp->blocks[i - 1].len += len;
    } else if (join_next) {
        sp->blocks[i].off = off;
        sp->blocks[i].len += len;
    } else {
        if (blocks_room(sp) != 0)
            return -1;
        memmove(sp->blocks + i + 1, sp->blocks + i,
                (size_t)(sp->nblocks - i) * sizeof *sp->blocks);
        sp->blocks[i] = (free_block){off, len};
        sp->nblocks++;
    }
    return 0;
}

/* the device whose range holds addr, or -1 */
static int32_t device_of(uintptr_t addr)
{
    for (int32_t d = 0; d < EMU_MAX_DEVICES; d++) {
        const device_space *sp = &spaces[d];
        if (sp->base && addr >= sp->base && addr - sp->base < sp->size)
            return d;
    }
    return -1;
}

/* index of the last live entry with base <= addr, or -1 */
static int64_t find_index(uintptr_t addr)
{
    int64_t lo = 0, hi = table_len - 1, found = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (table[mid].base <= addr) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

/* the live entry holding addr, or NULL */
static const alloc_entry *live_entry(uintptr_t addr)
{
    int64_t i = find_index(addr);
    if (i < 0 || addr - table[i].base >= table[i].size)
        return NULL;
    return &table[i];
}

int emu_mem_check_range_locked(uintptr_t addr, uint64_t nbytes, int32_t *device)
{
    const alloc_entry *e = live_entry(addr);
    if (!e) {
        int32_t d = device_of(addr);
        if (device)
            *device = d;
        return d < 0 ? EMU_MEM_HOST : EMU_MEM_NOT_LIVE;
    }
    if (device)
        *device = e->device;
    if (nbytes > e->base + e->size - addr)
        return EMU_MEM_PAST_END;
    return EMU_MEM_OK;
}

uint64_t emu_mem_range_id_locked(uintptr_t addr, uint64_t nbytes)
{
    const alloc_entry *e = live_entry(addr);
    if (!e || nbytes > e->base + e->size - addr)
        return 0;
    return e->id;
}

int emu_mem_task_range_ok_locked(uintptr_t addr, uint64_t nbytes, uint64_t id)
{
    return id != 0 && emu_mem_range_id_locked(addr, nbytes) == id;
}

/* ------------------------------------------------------------------------ public ---------- */

int emu_mem_alloc(int32_t device, uint64_t size, uint64_t limit, int poison, int poison_byte,
                  int pad, uintptr_t *out_ptr)
{
    *out_ptr = 0;
    if (device < 0 || device >= EMU_MAX_DEVICES || size == 0)
        return EMU_ACL_ERROR_INVALID_PARAM;
    uint64_t reserved = ((size + 31) / 32) * 32 + (pad ? 32 : 0);
    if (reserved < size || reserved > EMU_DEVICE_VA_BYTES)
        return EMU_ACL_ERROR_RT_MEMORY_ALLOCATION;
    uintptr_t base = 0;
    if (write_lock() != 0)
        return EMU_ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    int rc = EMU_ACL_ERROR_RT_MEMORY_ALLOCATION;
    device_space *sp = &spaces[device];
    uint64_t span = (reserved + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES;
    if (sp->used + reserved > limit || sp->used + reserved < reserved)
        goto out;
    if (!sp->base && reserve_space(sp) != 0)
        goto out;
    if (table_len == table_cap) {
        int64_t cap = table_cap ? table_cap * 2 : 256;
        alloc_entry *grown = realloc(table, (size_t)cap * sizeof *table);
        if (!grown)
            goto out;
        table = grown;
        table_cap = cap;
    }
    int large = span >= HUGE_MIN;
    int64_t off = space_take(sp, span, large, large ? HUGE_ALIGN : ALIGN_BYTES);
    if (off < 0)
        goto out;
    base = sp->base + (uint64_t)off;
    int64_t at = find_index(base) + 1;
    memmove(table + at + 1, table + at, (size_t)(table_len - at) * sizeof *table);
    table[at] = (alloc_entry){base, size, reserved, span, next_id++, device};
    table_len++;
    sp->used += reserved;
    rc = 0;
out:
    write_unlock();
    /* The poison, outside the lock (a 1 GiB fill must not stall every stream's tasks): nobody
     * else has the address yet, and queued tasks that name older allocations check ids. */
    if (rc == 0 && poison)
        memset((void *)base, poison_byte & 0xff, (size_t)reserved);
    if (rc == 0)
        *out_ptr = base;
    return rc;
}

int emu_mem_free(uintptr_t ptr)
{
    if (write_lock() != 0)
        return EMU_ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    int64_t i = find_index(ptr);
    if (i < 0 || table[i].base != ptr) {
        write_unlock();
        return EMU_ACL_ERROR_RT_MEMORY_FREE;
    }
    alloc_entry e = table[i];
    device_space *sp = &spaces[e.device];
    /* the pages of [base, base + span) that no live neighbour shares go back to the system */
    uintptr_t lo = i > 0 ? table[i - 1].base + table[i - 1].span : sp->base;
    uintptr_t hi = i + 1 < table_len ? table[i + 1].base : sp->base + sp->size;
    if (lo < e.base - e.base % page_size)
        lo = e.base - e.base % page_size;
    if (hi > e.base + e.span + page_size - 1)
        hi = e.base + e.span + page_size - 1;
    lo = (lo + page_size - 1) / page_size * page_size;
    hi = hi / page_size * page_size;
    if (hi > lo)
        madvise((void *)lo, (size_t)(hi - lo), MADV_DONTNEED);
    memmove(table + i, table + i + 1, (size_t)(table_len - i - 1) * sizeof *table);
    table_len--;
    sp->used -= e.reserved;
    space_give(sp, e.base - sp->base, e.span); /* on OOM the range is lost, nothing else */
    freed_ring[freed_next++ % FREED_RING] = e;
    __atomic_add_fetch(&free_epoch, 1, __ATOMIC_RELEASE);
    write_unlock();
    return 0;
}

uint64_t emu_mem_free_epoch(void) { return __atomic_load_n(&free_epoch, __ATOMIC_ACQUIRE); }

int emu_mem_find_freed(uintptr_t addr, uintptr_t *base, uint64_t *size)
{
    int found = 0;
    emu_mem_read_lock();
    if (!live_entry(addr)) {
        int64_t n = freed_next < FREED_RING ? freed_next : FREED_RING;
        for (int64_t k = 1; k <= n; k++) { /* newest first */
            const alloc_entry *e = &freed_ring[(freed_next - k) % FREED_RING];
            if (addr >= e->base && addr - e->base < e->reserved) {
                *base = e->base;
                *size = e->size;
                found = 1;
                break;
            }
        }
    }
    emu_mem_read_unlock();
    return found;
}

int emu_mem_find(uintptr_t addr, uintptr_t *base, uint64_t *size, int32_t *device)
{
    emu_mem_read_lock();
    const alloc_entry *e = live_entry(addr);
    if (e) {
        *base = e->base;
        *size = e->size;
        *device = e->device;
    }
    emu_mem_read_unlock();
    return e != NULL;
}

int emu_mem_find_before(uintptr_t addr, uintptr_t *base, uint64_t *size)
{
    emu_mem_read_lock();
    int64_t i = find_index(addr);
    int found = i >= 0 && device_of(addr) == table[i].device;
    if (found) {
        *base = table[i].base;
        *size = table[i].size;
    }
    emu_mem_read_unlock();
    return found;
}

int emu_mem_check_range(uintptr_t addr, uint64_t nbytes, int32_t *device)
{
    emu_mem_read_lock();
    int rc = emu_mem_check_range_locked(addr, nbytes, device);
    emu_mem_read_unlock();
    return rc;
}

int64_t emu_mem_range_device(uintptr_t addr, uint64_t nbytes)
{
    int32_t device = -1;
    int rc = emu_mem_check_range(addr, nbytes, &device);
    return rc == EMU_MEM_OK ? device : -rc;
}

int64_t emu_mem_range_device_locked(uintptr_t addr, uint64_t nbytes)
{
    int32_t device = -1;
    int rc = emu_mem_check_range_locked(addr, nbytes, &device);
    return rc == EMU_MEM_OK ? device : -rc;
}

int emu_mem_is_device(uintptr_t addr)
{
    emu_mem_read_lock();
    int d = device_of(addr);
    emu_mem_read_unlock();
    return d >= 0;
}

uint64_t emu_mem_used(int32_t device)
{
    if (device < 0 || device >= EMU_MAX_DEVICES)
        return 0;
    emu_mem_read_lock();
    uint64_t used = spaces[device].used;
    emu_mem_read_unlock();
    return used;
}

int64_t emu_mem_count(void)
{
    emu_mem_read_lock();
    int64_t n = table_len;
    emu_mem_read_unlock();
    return n;
}

/* 0 if every device-side byte of [addr, addr + n) is inside one live allocation, or if the
 * address is host memory; EMU_MEM_NOT_LIVE / EMU_MEM_PAST_END otherwise. */
static int side_ok_locked(uintptr_t addr, uint64_t n)
{
    int rc = emu_mem_check_range_locked(addr, n, NULL);
    return rc == EMU_MEM_HOST ? 0 : rc;
}

int emu_memcpy(uintptr_t dst, uintptr_t src, uint64_t n)
{
    emu_mem_read_lock();
    int rc = side_ok_locked(dst, n);
    if (rc == 0)
        rc = side_ok_locked(src, n);
    if (rc == 0 && dst != src && n)
        memmove((void *)dst, (const void *)src, (size_t)n);
    emu_mem_read_unlock();
    return rc;
}

int emu_memset(uintptr_t dst, int value, uint64_t n)
{
    emu_mem_read_lock();
    int rc = side_ok_locked(dst, n);
    if (rc == 0 && n)
        memset((void *)dst, value & 0xff, (size_t)n);
    emu_mem_read_unlock();
    return rc;
}

uintptr_t emu_host_alloc(uint64_t size)
{
    void *p = NULL;
    /* no 64-bit host has more than 2^48 bytes of user address space: do not even ask */
    if (size == 0 || size > (1ull << 48) || posix_memalign(&p, ALIGN_BYTES, (size_t)size) != 0)
        return 0;
    return (uintptr_t)p;
}

void emu_host_free(uintptr_t ptr) { free((void *)ptr); }
